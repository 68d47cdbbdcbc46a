// The iterations of a T.Pipelined loop in which the selects of its T.Parallel nests are decided:
// attention's mask `T.if_then_else(k * 128 + j < S, s, -inf)` keeps s for every (i, j) of every
// key tile below floordiv(S, 128), and the causal mask for every tile below the block's diagonal.
// The Hopper lowering runs those iterations without the selects (each one a compare and a select
// per element of the tile) and the rest as written.
//
// A select qualifies when its condition is a conjunction of comparisons (<, <=, >, >=; a min on
// the larger side or a max on the smaller one counts as two) each linear in the loop variable,
// with a positive coefficient, and in the variables of the enclosing T.Parallel nest, the rest
// being loop-invariant (no variable bound in the loop, no buffer load, no call). For each
// comparison E = c * k + sum(c_v * v) + r < 0 (or <= 0) the largest sum over the nest's ranges [0,
// extent) is a constant M, so the comparison holds for every element exactly when c * k <= -r - M
// (- 1 when strict), that is for k < floordiv(-r - M (- 1), c) + 1. The bound of the split is the
// least of these. The reasoning is over the integers, as the analyzer's elsewhere: an index
// expression that wraps around is outside it.
#ifndef TESSEL_TRANSFORM_TILE_LOOP_SPLIT_H_
#define TESSEL_TRANSFORM_TILE_LOOP_SPLIT_H_

#include <tessel/ir/stmt.h>

#include <optional>
#include <unordered_set>
#include <vector>

namespace tessel {
namespace transform {
namespace tile_lowering {

struct TileLoopSplit {
  // Iterations k < before (of the loop's variable) may leave the selects out; `before` may be
  // below the loop's start or past its end.
  ir::PrimExpr before;
  std::unordered_set<const ir::CallNode*> selects;  // the if_then_else calls decided there
  std::vector<const ir::StmtNode*> where;           // the statements holding them, in order
};

// The split of `loop`'s body, or nullopt when no select of its T.Parallel nests qualifies.
std::optional<TileLoopSplit> PlanTileLoopSplit(const ir::ForNode* loop);

// `s` with each select of `split` replaced by its first operand.
ir::Stmt DropDecidedSelects(const ir::Stmt& s, const TileLoopSplit& split);

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_TILE_LOOP_SPLIT_H_
