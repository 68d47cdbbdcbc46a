// SoftwarePipeline: a serial loop annotated `{"tessel.pipeline_stages": S}` becomes a prologue, a
// steady state and an epilogue in which the copies of iteration k + S - 1 run while iteration k
// computes (design and the exact form in src/transform/software_pipeline.cc, docs/transform.md).
//
// The loop's body is a sequence: its leading statements are the producer (stores into "shared" /
// "shared.dyn" buffers that read no shared buffer, possibly in loops and under `if`s; a zero-fill
// `else` or `T.if_then_else(c, G[i], 0)` for ragged edges), the rest is the consumer, which must
// not write those buffers. Afterwards, for each such loop:
// - every buffer the producer writes has S stages of `stride` elements (its extent rounded up to a
//   16-byte multiple, or to its swizzle atom); the allocation carries
//   `{"tessel.pipeline_stage_elems": stride}` and is hoisted out of the loop when it was inside;
//   iteration k uses stage (k - min) % S;
// - the prologue runs the producer of iterations min .. min + S - 2 (each guarded by `t < extent`
//   unless provable), each followed by `ptx_cp_async_commit_group()` when copies are asynchronous;
// - the loop (annotated `{"tessel.pipelined": S}` instead) runs `ptx_cp_async_wait_group(S - 2)`,
//   a block barrier, the producer of iteration k + S - 1 under `k - min + S - 1 < extent`, an
//   unconditional commit, then the consumer of iteration k; a block barrier follows the loop;
// - with async copies (SoftwarePipelineAsync, inside a GPU kernel), each element or vectorized-loop
//   copy from a non-shared buffer becomes `ptx_cp_async` of 4, 8 or 16 bytes when the dtype, the
//   width and the alignment of both ends (proved by the analyzer relative to the buffers' bases;
//   a copy wider than an element also tests the source buffer's base at run time and falls back
//   to the plain store) allow, else stays a synchronous store; `if c: copy else: zeros` over the
//   same elements becomes `ptx_cp_async(dst, src, bytes, c)` (zeros by src-size 0, no branch);
// - barriers (and the waits and commits) appear only inside a threadIdx thread_extent: the C target
//   gets the same restructuring with plain copies.
// Barriers that the loop body had at its top level between producer and consumer or at its end
// (InjectSharedBarriers' ones: the pass runs after it) are replaced by the pass's own. S = 1 leaves
// the loop as it is. A malformed annotation, "tessel.pipeline_warp_split" (not supported yet), more
// than 9 stages with cp.async, a body without a producer, a consumer that writes a staged buffer or
// one the producer reads, or a staged buffer used outside the loop is a ValueError naming the
// function and the loop.
#ifndef TESSEL_TRANSFORM_SOFTWARE_PIPELINE_H_
#define TESSEL_TRANSFORM_SOFTWARE_PIPELINE_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

// The loop annotation that asks for pipelining, and the option reserved for a producer/consumer
// warp split (refused for now).
constexpr const char* kPipelineStages = "tessel.pipeline_stages";
constexpr const char* kPipelineWarpSplit = "tessel.pipeline_warp_split";
// On a loop with kPipelineStages: the stages are a hint (a tile program's T.Pipelined). When this
// pass cannot stage the function as written, such loops run unstaged instead of the error.
constexpr const char* kPipelineOptional = "tessel.pipeline_optional";
// What the pass leaves: the pipelined loop's annotation (S) and each staged allocation's stage
// stride in elements. VerifyPipeline reads both.
constexpr const char* kPipelinedLoop = "tessel.pipelined";
constexpr const char* kPipelineStageElems = "tessel.pipeline_stage_elems";

// `async_copies`: turn copies into cp.async (a CUDA target of sm_80 or newer).
ir::PrimFunc SoftwarePipeline(const ir::PrimFunc& func, bool async_copies);
ir::IRModule SoftwarePipeline(const ir::IRModule& mod, bool async_copies);
// "SoftwarePipeline": plain copies (c, metal, cuda before sm_80). "SoftwarePipelineAsync":
// cp.async. Both run after InjectSharedBarriers and before VectorizeLoop.
Pass SoftwarePipelinePass();
Pass SoftwarePipelineAsyncPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_SOFTWARE_PIPELINE_H_
