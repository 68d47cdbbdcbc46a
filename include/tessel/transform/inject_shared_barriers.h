// InjectSharedBarriers: thread-block barriers around shared memory. Afterwards, between any two
// accesses to one buffer of scope "shared" or "shared.dyn" of which at least one is a write (in
// program order, or from the end of a serial loop's body to its start in the next iteration),
// every path of execution passes a `T.tvm_storage_sync("shared")`. Buffers are told apart by their
// data variable; indices are analysed for one thing only: two writes need no barrier between
// them when every store involved has the index `g + t`, t the block's only threadIdx variable and
// g provably a multiple of t's extent (each thread owns its addresses). Otherwise a barrier is
// placed whenever one could be needed (conservative: correct, maybe more barriers than needed).
// Registers and "local" buffers never need one.
//
// Placement: a barrier goes right before the statement that would race with what came since the
// last barrier; a loop-carried hazard puts one at the end of the loop body. Existing barriers
// count. A barrier is never placed under an `if` whose condition may differ between the threads
// of a block (it mentions a threadIdx variable, a variable computed from one, or reads memory):
// such an `if` is split around the barrier instead (`if c: A` / barrier / `if c: B`), which needs
// a condition without memory reads and the barrier at the top level of the branch; otherwise a
// ValueError explains where. Functions without shared-memory accesses are returned unchanged, and
// so are functions with the attribute kManualSharedSyncAttr set to True: kernels that order their
// shared-memory accesses themselves with mbarriers and named barriers (warp-specialized
// producer/consumer code), which this analysis cannot see and would only over-synchronize. An
// `AttrStmt` of that key (any node and value) marks one such kernel inside a function (the
// warp-specialized tile lowering puts one in each kernel it makes): its body is left unchanged.
#ifndef TESSEL_TRANSFORM_INJECT_SHARED_BARRIERS_H_
#define TESSEL_TRANSFORM_INJECT_SHARED_BARRIERS_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

inline constexpr const char* kManualSharedSyncAttr = "tessel.manual_shared_sync";

ir::PrimFunc InjectSharedBarriers(const ir::PrimFunc& func);
ir::IRModule InjectSharedBarriers(const ir::IRModule& mod);
Pass InjectSharedBarriersPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_INJECT_SHARED_BARRIERS_H_
