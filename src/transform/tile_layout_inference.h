// Internal to src/transform: layout inference for the T.Kernels of tile programs on GPUs, and the
// plan each lowering follows. The contract is in include/tessel/transform/lower_tile_ops.h.
//
// A plan says, for one T.Kernel, how it is lowered and where each tile lives:
// - "warp-specialized" (CUDA sm_90a): the kernel's T.Pipelined loop of TMA copies and wgmma
//   gemms runs on a producer warpgroup (TMA into a ring of stages guarded by mbarriers) and the
//   kernel's own threads as consumers; the shared tiles the loop copies into get the swizzle their
//   wgmma reads (32, 64 or 128 bytes: the width of a row), gemm accumulators the wgmma accumulator
//   layout over the warpgroups, and the layout flows to the fragments a T.Parallel or a T.copy
//   ties to them (same shape, same indices); any other fragment is replicated in every consumer;
// - "SIMT" otherwise, with the first reason the kernel could not take the path above: the layouts
//   of src/transform/lower_tile_ops_gpu.cc (fragments spread round-robin, or replicated when a
//   reduction writes them); on sm_80 and later, the fragments of the shape of T.gemm accumulators
//   that mma.sync can compute get its accumulator layout (src/transform/tile_mma.h).
// Where two uses would need two layouts for one tile, the plan falls back to SIMT and its reason
// names both uses with their lines. The InferTileLayouts pass writes each plan on its T.Kernel
// loop ("tessel.tile_plan", "tessel.tile_layouts"), which TESSEL_DUMP_IR shows.
#ifndef TESSEL_SRC_TRANSFORM_TILE_LAYOUT_INFERENCE_H_
#define TESSEL_SRC_TRANSFORM_TILE_LAYOUT_INFERENCE_H_

#include <tessel/ir/builtin_tile.h>
#include <tessel/ir/stmt.h>
#include <tvm/ffi/container/map.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "transform/tile_loop_split.h"

namespace tessel {
namespace transform {
namespace tile_lowering {

enum class TileLayoutKind {
  kSpread,      // SIMT: round-robin over the threads
  kReplicated,  // every (consumer) thread holds the whole tile
  kWgmma,       // the wgmma m64nN accumulator, warpgroup w holding rows 64w .. 64w + 63
  kWgmmaRows,   // one value per row of a wgmma accumulator, held by the row's four threads
  kMma,         // SIMT on sm_80+: the mma.sync accumulator over a grid of warps (tile_mma.h)
  kSwizzled,    // a shared tile, stored with `swizzle_bytes` swizzle
  kPlain,       // a shared tile, row-major
};

struct TileLayoutChoice {
  ir::Buffer buffer;
  TileLayoutKind kind = TileLayoutKind::kSpread;
  int64_t swizzle_bytes = 0;  // kSwizzled
  int64_t n = 0;              // kWgmma: the accumulator's columns
  std::string grid;           // kMma: the warp grid (MmaGrid::Text)
  std::string why;            // the use that decided it ("C of T.gemm at line 12")
  std::string Text() const;
};

// A T.copy of a global box into a whole shared tile, done by TMA: the tile's rows are split into
// `blocks` column blocks of `block_cols` elements (rows of 32, 64 or 128 bytes, the swizzle's
// width), each one TMA box and stored one after the other. Leading tensor dimensions beyond the
// tile's two have extent 1 (Q[b, h, i:i + 128, :]).
struct TmaCopy {
  const ir::CallNode* call = nullptr;
  ir::TileRegion src;
  ir::Buffer dst;
  int64_t rows = 0, block_cols = 0, blocks = 1;
};

// A T.copy of a wgmma accumulator fragment into a tensor, done through a swizzled shared staging
// tile and TMA stores (64 x 64 boxes).
struct TmaStore {
  const ir::CallNode* call = nullptr;
  ir::Buffer frag;
  ir::TileRegion dst;
};

// A T.gemm run as wgmma: A an (m x k) K-major shared tile or a 16-bit fragment in the wgmma
// accumulator layout (m64nK: it is then read from registers), B an (n x k) K-major shared tile
// (transpose_B) or a (k x n) N-major one, C a float32 fragment.
struct WgmmaGemm {
  const ir::CallNode* call = nullptr;
  ir::Buffer a, b, c;
  int64_t m = 0, n = 0, k = 0;
  bool clear = false;
  bool a_regs = false;  // A is a fragment
  bool b_mn = false;    // B is (k x n), N contiguous
};

struct TileKernelPlan {
  bool warp_specialized = false;
  std::string why_not;  // SIMT: why not warp-specialized
  int64_t threads = 0;  // the T.Kernel's threads (the consumers when warp-specialized)
  std::vector<TileLayoutChoice> layouts;
  // Warp-specialized:
  const ir::ForNode* pipelined = nullptr;
  int64_t stages = 0;
  // The loop holds more than copies and gemms (or a gemm reads registers or copies precede the
  // loop): the consumers run its statements in order, each gemm to completion, and release the
  // stage at the end of the iteration; one tile per block unless the function asks for a
  // persistent walk (Persistent::kOn).
  bool fused = false;
  // Fused, when the loop ends in a second T.gemm whose fragments (A from registers, C) neither
  // the statements up to the first T.gemm nor that gemm touch: it is issued one iteration late,
  // right after the next iteration's first gemm, and runs while the consumers run the statements
  // after that one up to `late_wait` (the first that touches its fragments; nullptr: up to the
  // late gemm itself), which wait for it. Attention: O += P V beside the next tile's softmax.
  const ir::StmtNode* late_gemm = nullptr;  // its statement
  const ir::StmtNode* late_wait = nullptr;
  // Fused: the iterations in which the T.Parallel selects are decided (tile_loop_split.h).
  std::optional<TileLoopSplit> split;
  std::vector<TmaCopy> copies;
  std::vector<TmaCopy> preloads;  // before the loop: loaded once per block
  std::vector<WgmmaGemm> gemms;
  std::vector<TmaStore> stores;  // at most one

  const TileLayoutChoice* Find(const ir::Buffer& b) const;
};

// The fragments (among `fragments`, the T.Kernel's) that the SIMT lowering holds whole in every
// thread: the destinations of reductions; a fragment a T.Parallel nest reads or writes other than
// as its own element (a row statistic rescale[i] in a (128, 64) nest); every fragment of a nest
// that writes a replicated one (such a nest runs whole on every thread); and the source of a copy
// into a replicated fragment.
std::unordered_set<const ir::VarNode*> ReplicatedFragments(
    const ir::Stmt& body, const std::vector<ir::Buffer>& fragments);

// The plan of T.Kernel loop `kernel` for a GPU of `arch` ("sm_90a" allows warp specialization;
// "" or any other arch gives SIMT).
TileKernelPlan PlanTileKernel(const ir::ForNode* kernel, const std::string& arch);

// The plan as annotations: "tessel.tile_plan" (text) and "tessel.tile_layouts" (buffer name to
// layout text).
tvm::ffi::Map<tvm::ffi::String, tvm::ffi::Any> DescribePlan(const TileKernelPlan& plan);

// The logical (row, column) of register `local` of consumer thread `thread` in the wgmma
// accumulator distributed over warpgroups (warpgroup thread / 128 holds rows 64w .. 64w + 63); the
// same for every column count N.
ir::Array<ir::PrimExpr> WgmmaElement(const ir::PrimExpr& thread, const ir::PrimExpr& local);

// The row of register `local` (0 or 1) of `thread` in a kWgmmaRows fragment: the row its wgmma
// registers 4j + 2 local + c hold.
ir::PrimExpr WgmmaRow(const ir::PrimExpr& thread, const ir::PrimExpr& local);

// Whether a warp-specialized kernel walks its tiles from one block per SM (the function's
// "tessel.persistent" attribute). By default only a plain pipelined kernel (copies and gemms, at
// most two grid dimensions, the same trip count for every tile) is persistent; kOn also makes a
// fused one persistent (attention: the next tile's Q and K/V load while the consumers finish
// this one), with three grid dimensions and trip counts that vary by tile (causal); kOff never.
enum class Persistent { kDefault, kOn, kOff };

// The warp-specialized lowering of `kernel` by `plan` (src/transform/lower_tile_ops_hopper.cc).
ir::Stmt LowerTileKernelHopper(const ir::ForNode* kernel, const TileKernelPlan& plan,
                               const std::string& function,
                               Persistent persistent = Persistent::kDefault);

// The host condition under which the TMA copies of `plan` can describe their tensors: every
// dimension positive and every stride but the innermost a multiple of 16 bytes.
ir::PrimExpr TmaDescribable(const TileKernelPlan& plan);

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_SRC_TRANSFORM_TILE_LAYOUT_INFERENCE_H_
