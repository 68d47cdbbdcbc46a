// Schedule: transforms a block program step by step, each step checked, every step recorded in a
// trace that prints as Python, saves as versioned JSON and replays onto a fresh schedule.
//
// A schedule holds a module (`mod()`), changed by every primitive, and refers to its blocks and
// loops through random variables (RV): a BlockRV names a block of a function by name, a LoopRV a
// loop by its loop variable. Both stay valid across primitives that keep the block or the loop;
// a primitive that removes a loop (split, fuse) invalidates its RV, and using it again is a
// ScheduleError naming the primitive that removed it.
//
// Errors are tvm-ffi errors of kind "ScheduleError": the primitive, the precondition that failed,
// the block or loop it failed on, then the function printed with the offending line marked
// (`^^^`). "Could not prove" is said as such, never as "is false".
//
// Names follow TVM's s_tir.Schedule (get_block / get_sblock, get_loops, split, fuse, reorder,
// bind, parallel, vectorize, unroll, annotate, unannotate).
#ifndef TESSEL_SCHEDULE_SCHEDULE_H_
#define TESSEL_SCHEDULE_SCHEDULE_H_

#include <tessel/ir/module.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessel {
namespace schedule {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::String;

// A block or loop of the schedule's module, or a sampled integer. `kind` is 0 for blocks, 1 for
// loops, 2 for integers; `id` is unique in its schedule and names it in the trace (b<id>, l<id>,
// v<id>).
class RVNode : public tvm::ffi::Object {
 public:
  int64_t id = 0;
  int64_t kind = 0;
  static constexpr int64_t kBlock = 0;
  static constexpr int64_t kLoop = 1;
  static constexpr int64_t kExpr = 2;
  // "b3", "l4" or "v5".
  std::string Name() const {
    return (kind == kBlock ? "b" : kind == kLoop ? "l" : "v") + std::to_string(id);
  }
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.schedule.RV", RVNode, tvm::ffi::Object);
};
class RV : public tvm::ffi::ObjectRef {
 public:
  RV(int64_t id, int64_t kind);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(RV, tvm::ffi::ObjectRef, RVNode);
};

// One recorded primitive call: its name, its inputs (RVs, ints, strings, None, arrays of those),
// and the RVs it returned.
struct Instruction {
  std::string kind;
  std::vector<Any> inputs;
  std::vector<RV> outputs;
};

constexpr int64_t kTraceFormatVersion = 1;

// A fact about a block: proved, refuted (a witness was found), or neither.
enum class Fact : int { kYes = 0, kNo = 1, kUnknown = 2 };
const char* FactName(Fact fact);  // "yes", "no", "unknown"

// What the analyzer establishes about one block of the current module (after TVM's BlockInfo).
//   affine_binding  its bindings are quasi-affine maps of the loops between its enclosing block
//                   and it that visit exactly its iterators' domains, predicate included
//                   (iterator-map detector; "no" from enumerating constant loop nests). Stricter
//                   than TVM, whose flag holds for `vi = i // 2` into a domain it half covers.
//   region_cover    for each buffer it loads that blocks before it in its scope store, per
//                   iteration of the loops they share, those producers store every point it
//                   may load.
//   stage_pipeline  every block of its scope (its siblings under the enclosing block) is
//                   data-parallel complete or a reduction: what TVM's primitives check with
//                   CheckCompleteOrReductionBlock. (TVM's cached flag, kept on the scope's root,
//                   is instead the conjunction of the children's region_cover.)
// why_not says, for each fact that is not kYes, what failed or could not be proved.
struct BlockFacts {
  Fact affine_binding = Fact::kUnknown;
  Fact region_cover = Fact::kUnknown;
  Fact stage_pipeline = Fact::kUnknown;
  std::string why_not;
};

class ScheduleNode : public tvm::ffi::Object {
 public:
  // The module as scheduled so far.
  ir::IRModule mod() const { return mod_; }
  const std::vector<Instruction>& trace() const { return trace_; }

  // ---- lookups ----
  // The block named `name` of function `func_name` (or of the module's only function). Error when
  // there is none or more than one.
  RV GetBlock(const String& name, const std::optional<String>& func_name = std::nullopt);
  // The loops above `block`, outermost first.
  Array<RV> GetLoops(const RV& block);
  // The blocks directly under `block_or_loop` (not nested in other blocks), in program order.
  Array<RV> GetChildBlocks(const RV& block_or_loop);
  // The blocks of `block`'s scope (the blocks under the same enclosing block) before it that
  // write a buffer it reads / after it that read a buffer it writes, in program order. What a
  // block reads and writes is taken from its body (loads and stores, its init included), not
  // from its declared regions, which the text may leave empty.
  Array<RV> GetProducers(const RV& block);
  Array<RV> GetConsumers(const RV& block);

  // The facts of `block`, computed once per version of its function (a query: not traced).
  BlockFacts GetBlockFacts(const RV& block);

  // ---- loop transformations ----
  // Splits `loop` (starting at 0) into loops of the given extents, outermost first; at most one
  // factor may be None (inferred). A non-dividing split adds the predicate `fused < extent` to the
  // blocks below, unless the analyzer proves it.
  Array<RV> Split(const RV& loop, const Array<Any>& factors);
  // Fuses a chain of loops (each the only child of the previous, all starting at 0) into one.
  RV Fuse(const Array<RV>& loops);
  // Reorders loops of one chain of single-child loops into the given order (the other loops of
  // the chain keep their places).
  void Reorder(const Array<RV>& loops);

  // ---- loop kinds ----
  // Marks `loop` parallel / vectorized / unrolled, or binds it to `thread` (blockIdx.x ...,
  // threadIdx.x ...). Parallel, vectorized and bound loops may feed only data-parallel block
  // iterators (a loop bound to threadIdx may also feed reduction iterators).
  void Parallel(const RV& loop);
  void Vectorize(const RV& loop);
  void Unroll(const RV& loop);
  void Bind(const RV& loop, const String& thread);

  // ---- compute location ----
  // Removes a block `X[v0, v1, ...] = f(v)` (data-parallel iterators, each index a distinct
  // iterator, no predicate) that computes an intermediate buffer X written by no other block,
  // and replaces every load X[i, j, ...] by f(i, j, ...). Its loops go with it when they hold
  // nothing else. The block's RV is no longer valid after.
  void ComputeInline(const RV& block);

  // Inlines a block `Y[...] = f(X[v0, v1, ...])` that is the only consumer of buffer X into X's
  // producer: the producer stores f(its value) into Y instead, and the block goes. The block's
  // RV is no longer valid after.
  void ReverseComputeInline(const RV& block);
  // Moves `block` (with the loops that hold only it) under `loop` and regenerates its loops so that
  // it computes exactly what the consumers under `loop` need (the region relaxed over the loops
  // below `loop`, a proof that it covers what they read). `index`: where among `loop`'s children
  // it goes (-1: the last place its consumers allow; -2: the first place after its producers).
  void ComputeAt(const RV& block, const RV& loop, bool preserve_unit_loops = false,
                 int64_t index = -1);
  // The same for a block moved under a loop of its producers: it consumes what they wrote there.
  void ReverseComputeAt(const RV& block, const RV& loop, bool preserve_unit_loops = false,
                        int64_t index = -1);

  // ---- caches and buffers ----
  // A block "<buffer>_<scope>" that copies the region of read buffer `read_buffer_index` of
  // `block` into a new buffer of `storage_scope`, placed before the first reader; the readers
  // (all of them, or `consumer_blocks`) read the copy. Returns the copy block.
  RV CacheRead(const RV& block, int64_t read_buffer_index, const String& storage_scope,
               const Array<RV>& consumer_blocks = {});
  // `block` writes buffer `write_buffer_index` into a new buffer of `storage_scope` instead; a
  // block placed after it copies that into the original buffer. Returns the copy block.
  RV CacheWrite(const RV& block, int64_t write_buffer_index, const String& storage_scope,
                const Array<RV>& consumer_blocks = {});
  // Changes the storage scope of buffer `buffer_index` (a write buffer of `block` that the
  // function allocates) to `storage_scope`.
  void SetScope(const RV& block, int64_t buffer_index, const String& storage_scope);
  // Pads dimension `axis` of write buffer `buffer_index` of `block` so that its stride is
  // `factor * k + offset` (to avoid shared-memory bank conflicts).
  void StorageAlign(const RV& block, int64_t buffer_index, int64_t axis, int64_t factor,
                    int64_t offset);
  // A new block "<buffer>_reindex" (placed before `block`'s loop nest for a read, after it for a
  // write) that copies buffer `index` of `block` into (out of) a new buffer "<buffer>_reindex"
  // indexed by `block`'s iterators (each iterator the indices use, as written: a unit-extent
  // iterator keeps its dimension); `block` then accesses it at its iterators. With
  // `skip_simplify` the copy's indices are taken as written, not simplified.
  RV Reindex(const RV& block, const String& buffer_type, int64_t buffer_index,
             bool skip_simplify = false);
  // Rewrites buffer `buffer_index` (read or write) of `block`'s function to the layout
  // `index_map` (old indices -> new indices), checked bijective over the buffer's shape, or
  // padded with `pad_value` where the map's image is larger than the shape.
  void TransformLayout(const RV& block, const String& buffer_type, int64_t buffer_index,
                       const Array<ir::Var>& index_vars, const Array<ir::PrimExpr>& new_indices,
                       const std::optional<ir::PrimExpr>& pad_value = std::nullopt);
  // Turns the subtree under `loop` into one block whose iterators are the loops' (the outer
  // block), with the inner block inside it. Returns the outer block.
  RV Blockize(const RV& loop, bool preserve_unit_iters = true);

  // ---- reductions ----
  // Moves the init of reduction block `block` into a new block "<name>_init" placed right before
  // `loop` (an ancestor of the block), under copies of the loops between `loop` and the block
  // that feed its data-parallel iterators. No loop above `loop` may feed a reduction iterator.
  RV DecomposeReduction(const RV& block, const RV& loop);
  // Factors the reduction of `loop`'s block over `loop`: a new block "<name>_rf" reduces into an
  // intermediate buffer with `loop`'s iterator as a data-parallel dimension at `factor_axis`, and
  // the original block reduces that buffer. Returns the rfactor block.
  RV RFactor(const RV& loop, int64_t factor_axis);

  // ---- sampling (decisions are recorded, so a replay takes the same ones) ----
  // `n` factors of `loop`'s constant extent whose product is the extent, the innermost at most
  // `max_innermost_factor` (0: no limit), drawn uniformly among all such factorizations; or
  // `decision` when given (checked). Returns one integer RV per factor, usable as split factors.
  Array<RV> SamplePerfectTile(const RV& loop, int64_t n, int64_t max_innermost_factor,
                              const std::optional<std::vector<int64_t>>& decision = std::nullopt);
  // One of `candidates`, drawn with probabilities `probs` (normalized), or candidates[decision].
  RV SampleCategorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs,
                       const std::optional<int64_t>& decision = std::nullopt);
  // The value of an integer RV.
  int64_t Get(const RV& value) const;

  // ---- annotations ----
  void Annotate(const RV& block_or_loop, const String& key, const Any& value);
  void Unannotate(const RV& block_or_loop, const String& key);

  // ---- trace ----
  // The trace as Python that replays it on `sch` (a tessel.Schedule of the original module).
  std::string TraceAsPython() const;
  // The trace as versioned JSON: {"version": 1, "insts": [[kind, [inputs], [outputs]], ...]}.
  std::string TraceAsJSON() const;

  // The function and the loop/block RV `rv` refers to now (for tests and tools).
  ir::PrimFunc FuncOf(const RV& rv) const;

  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.schedule.Schedule", ScheduleNode, tvm::ffi::Object);

  // ---- state (schedule/*.cc) ----
  struct Entry {
    int64_t kind = RVNode::kBlock;
    std::string func;        // the function's name in the module
    std::string block;       // kBlock: the block's name
    ir::Var loop_var;        // kLoop: the loop's variable
    std::string removed_by;  // not empty: the primitive that removed it
    int64_t value = 0;       // kExpr: the sampled integer
  };
  ir::IRModule mod_{tvm::ffi::UnsafeInit{}};
  std::vector<Instruction> trace_;
  std::vector<Entry> rvs_;
  uint64_t rng_state_ = 0x9E3779B97F4A7C15ull;  // the sampling generator (splitmix64)
  // Facts per (function, block), valid while the module holds that very function object:
  // every primitive that changes a function replaces the object. Holding the reference keeps a
  // freed function's address from being reused by a new one and mistaken for it.
  struct CachedFacts {
    tvm::ffi::ObjectRef func;
    BlockFacts facts;
  };
  std::map<std::pair<std::string, std::string>, CachedFacts> block_facts_;
  int64_t block_facts_computed_ = 0;  // how many times facts were computed, not looked up
};

class Schedule : public tvm::ffi::ObjectRef {
 public:
  // A schedule of `mod`; `seed` starts the sampling generator (the same seed, the same draws).
  explicit Schedule(ir::IRModule mod, uint64_t seed = 1);
  // A fresh schedule of `mod` with the JSON trace `json` applied (ValueError naming the
  // instruction that failed, or a format it does not read).
  static Schedule FromJSON(ir::IRModule mod, const std::string& json);
  // The schedule's state, to apply primitives through.
  ScheduleNode* mut() const { return const_cast<ScheduleNode*>(get()); }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Schedule, tvm::ffi::ObjectRef, ScheduleNode);
};

}  // namespace schedule
}  // namespace tessel

#endif  // TESSEL_SCHEDULE_SCHEDULE_H_
