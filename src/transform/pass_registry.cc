// The registry's list of built-in passes: each pass's factory, registered under the name it
// reports. Add a pass here when its header lands.
#include <tessel/transform/compact_buffer_allocation.h>
#include <tessel/transform/flatten_buffer.h>
#include <tessel/transform/inject_shared_barriers.h>
#include <tessel/transform/lower_blocks.h>
#include <tessel/transform/lower_cross_thread_reduction.h>
#include <tessel/transform/lower_intrinsics.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/lower_tile_ops.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/simplify.h>
#include <tessel/transform/software_pipeline.h>
#include <tessel/transform/split_host_device.h>
#include <tessel/transform/swizzle_layout.h>
#include <tessel/transform/unroll_loop.h>
#include <tessel/transform/vectorize_loop.h>
#include <tessel/transform/verify_pipeline.h>
#include <tessel/transform/verify_well_formed.h>
#include <tvm/ffi/reflection/registry.h>

namespace tessel {
namespace transform {

TVM_FFI_STATIC_INIT_BLOCK() {
  RegisterPass("VerifyWellFormed", VerifyWellFormedPass);
  RegisterPass("LowerTileOps", LowerTileOpsPass);
  RegisterPass("LowerTileOpsGPU", LowerTileOpsGPUPass);
  RegisterPass("LowerTileOpsSm80", LowerTileOpsSm80Pass);
  RegisterPass("LowerTileOpsHopper", LowerTileOpsHopperPass);
  RegisterPass("LowerCrossThreadReduction", LowerCrossThreadReductionPass);
  RegisterPass("LowerBlocks", LowerBlocksPass);
  RegisterPass("CompactBufferAllocation", CompactBufferAllocationPass);
  RegisterPass("FlattenBuffer", FlattenBufferPass);
  RegisterPass("SwizzleLayout", SwizzleLayoutPass);
  RegisterPass("SwizzleLayoutLate", SwizzleLayoutLatePass);
  RegisterPass("Simplify", [] {
    return CreateModulePass([](IRModule mod) { return Simplify(mod); }, 1, "Simplify");
  });
  RegisterPass("VectorizeLoop", VectorizeLoopPass);
  RegisterPass("UnrollLoop", UnrollLoopPass);
  RegisterPass("LowerIntrinsics", LowerIntrinsicsPass);
  RegisterPass("LowerThreadBinding", LowerThreadBindingPass);
  RegisterPass("InjectSharedBarriers", InjectSharedBarriersPass);
  RegisterPass("SplitHostDevice", SplitHostDevicePass);
  RegisterPass("SoftwarePipeline", SoftwarePipelinePass);
  RegisterPass("SoftwarePipelineAsync", SoftwarePipelineAsyncPass);
  RegisterPass("VerifyPipeline", VerifyPipelinePass);
}

}  // namespace transform
}  // namespace tessel
