// What the primitive files of src/schedule share: errors that render the function, the lookup of
// an RV in the current module, loop paths, statement replacement and trace recording.
#ifndef TESSEL_SRC_SCHEDULE_SCHEDULE_IMPL_H_
#define TESSEL_SRC_SCHEDULE_SCHEDULE_IMPL_H_

#include <tessel/arith/analyzer.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/substitute.h>
#include <tessel/schedule/schedule.h>

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessel {
namespace schedule {

// Throws a ScheduleError: "<primitive>: <message>", then the function `func` printed with the
// lines that contain `mark` (a loop header or a block name) underlined. `mark` may be empty.
[[noreturn]] void ScheduleError(const std::string& primitive, const std::string& message,
                                const ir::PrimFunc& func, const std::string& mark);

// The text that marks a loop / block in the printed function ("for i in", "block(\"C\")").
std::string LoopMark(const ir::Var& loop_var);
std::string BlockMark(const std::string& block);

// A loop found in a function: the node, and the loops above it (outermost first).
struct LoopSite {
  const ir::ForNode* loop = nullptr;
  std::vector<const ir::ForNode*> above;
};
// A block found in a function: its realize, and the loops above it up to the enclosing block.
struct BlockSite {
  const ir::BlockRealizeNode* realize = nullptr;
  std::vector<const ir::ForNode*> loops;
};

class Impl {
 public:
  Impl(ScheduleNode* sch, std::string primitive) : sch_(sch), primitive_(std::move(primitive)) {}

  const std::string& primitive() const { return primitive_; }
  ScheduleNode* sch() { return sch_; }

  // The entry of `rv`, which must be of `kind`; ScheduleError when it is not, or was removed.
  const ScheduleNode::Entry& Entry(const RV& rv, int64_t kind);
  ir::PrimFunc Func(const ScheduleNode::Entry& e) const;
  LoopSite FindLoop(const RV& loop);
  BlockSite FindBlock(const RV& block);

  [[noreturn]] void Fail(const std::string& message, const ir::PrimFunc& func,
                         const std::string& mark) {
    ScheduleError(primitive_, message, func, mark);
  }

  // Replaces the statement `target` of the function of `e` by `replacement`, in the module.
  void Replace(const ScheduleNode::Entry& e, const ir::Stmt& target, const ir::Stmt& replacement);

  // A new RV of `kind` for the loop `loop_var` or the block `block` of function `func`.
  RV NewLoop(const std::string& func, const ir::Var& loop_var);
  RV NewBlock(const std::string& func, const std::string& block);
  RV NewValue(int64_t value);
  // Marks the loop RV entries of `loop_vars` as removed by this primitive.
  void Remove(const std::vector<const ir::VarNode*>& loop_vars);

  // Records this primitive in the trace.
  void Record(std::vector<Any> inputs, std::vector<RV> outputs);

 private:
  ScheduleNode* sch_;
  std::string primitive_;
};

// An analyzer that knows the ranges of `loops`.
void BindLoops(arith::Analyzer* analyzer, const std::vector<const ir::ForNode*>& loops);

using ir::VarSubstituter;

// `root` with the statement `target` replaced by `replacement` (`root` itself when absent).
ir::Stmt ReplaceIn(const ir::Stmt& root, const ir::Stmt& target, const ir::Stmt& replacement);

// Whether `e` uses any of `vars`.
bool UsesAny(const ir::PrimExpr& e, const std::vector<const ir::VarNode*>& vars);

// The realizes of the blocks under `stmt` that are not nested in another block.
std::vector<const ir::BlockRealizeNode*> ChildRealizes(const ir::Stmt& stmt);

// ---- scopes, accesses and regions (block_scope.cc) ----

// The buffers a block reads and writes, numbered as transform::BlockBuffers does (declared
// regions, else loads and stores in order of first access; a block with an init does not count
// the buffers it stores among its reads, as TVM's region detection).
struct BlockBuffers {
  std::vector<ir::Buffer> reads, writes;
};
BlockBuffers AccessedBuffers(const ir::BlockNode* block);

// A block realize of a scope and the loops between the scope and it, outermost first.
struct ScopedRealize {
  const ir::BlockRealizeNode* realize = nullptr;
  std::vector<const ir::ForNode*> loops;
};
// The blocks under `stmt` that are not nested in another block, with their loops.
std::vector<ScopedRealize> ScopeRealizes(const ir::Stmt& stmt);

// The realize of the block whose body holds `node` (a loop or a block realize) with no block in
// between; nullptr when that is the function body itself.
const ir::BlockRealizeNode* EnclosingBlock(const ir::PrimFunc& f, const ir::Object* node);

// The statements of `body` when it is a sequence, else `body` alone.
std::vector<ir::Stmt> SeqOf(const ir::Stmt& body);
// Whether `stmt` holds the node `node` (a block realize, a loop), or is it.
bool Holds(const ir::Stmt& stmt, const ir::Object* node);
// Whether a block under `stmt` stores into / loads from the buffer with data variable `data`.
bool Writes(const ir::Stmt& stmt, const ir::Object* data);
bool Reads(const ir::Stmt& stmt, const ir::Object* data);

// An interval [min, max] per dimension, both ends inclusive.
using Region = std::vector<std::pair<ir::PrimExpr, ir::PrimExpr>>;
// Where the accesses `indices` (in `realize`'s block iterators) of its block touch, with the
// iterators replaced by their bindings and the loops `relax` ranged over. nullopt when a
// dimension is unbounded.
std::optional<Region> RelaxAccess(const ir::BlockRealizeNode* realize,
                                  const tvm::ffi::Array<ir::PrimExpr>& indices,
                                  const std::vector<const ir::ForNode*>& relax,
                                  arith::Analyzer* analyzer);
// Every load (`loads`) or store of `data` in `realize`'s block (body and init), relaxed as above
// and joined. nullopt when the block has no such access or one is unbounded.
std::optional<Region> RelaxBlockAccesses(const ir::BlockRealizeNode* realize,
                                         const ir::Object* data, bool loads,
                                         const std::vector<const ir::ForNode*>& relax,
                                         arith::Analyzer* analyzer);
// The smallest region holding both (a min/max expression where the analyzer cannot order ends).
Region JoinRegions(const Region& a, const Region& b, arith::Analyzer* analyzer);

// Whether the bindings of `realize` under `loops` (its loops, outermost first), restricted by its
// predicate, are proved to visit every point of its iterators' domains (iterator-map detector).
bool BindingsCoverDomain(const ir::BlockRealizeNode* realize,
                         const std::vector<const ir::ForNode*>& loops);
// Whether the block of `realize` loads a buffer it also stores into (body or init).
bool ReadsWhatItWrites(const ir::BlockNode* block);

// Replaces buffers in loads, stores and block regions (`loads_only`: only in loads and in read
// regions).
class BufferReplacer : public ir::StmtExprMutator {
 public:
  BufferReplacer(const ir::Buffer& from, const ir::Buffer& to, bool loads_only)
      : from_(from), to_(to), loads_only_(loads_only) {}
  using ir::StmtExprMutator::VisitExpr_;
  using ir::StmtExprMutator::VisitStmt_;
  ir::PrimExpr VisitExpr_(const ir::BufferLoadNode* op) override;
  ir::Stmt VisitStmt_(const ir::BufferStoreNode* op) override;
  ir::Stmt VisitStmt_(const ir::BlockNode* op) override;

 private:
  ir::Buffer from_, to_;
  bool loads_only_;
};

// `f` with the body of the block `scope` (nullptr: the function body) replaced by `body`, and
// `alloc`, when given, added to that block's allocations (a function body without a block is
// wrapped in a "root" block to hold it).
ir::PrimFunc WithScopeBody(const ir::PrimFunc& f, const ir::BlockRealizeNode* scope,
                           const ir::Stmt& body, const std::optional<ir::Buffer>& alloc);

}  // namespace schedule
}  // namespace tessel

#endif  // TESSEL_SRC_SCHEDULE_SCHEDULE_IMPL_H_
