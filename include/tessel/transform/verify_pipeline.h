// VerifyPipeline: checks that a software-pipelined loop never reads a stage before its copy
// landed, nor overwrites a stage another thread may still be reading. It reads the form that
// SoftwarePipeline produces, and hand-written IR in that form:
// - a staged buffer is an allocation annotated `{"tessel.pipeline_stage_elems": E}`: stage s is
//   elements [s * E, (s + 1) * E);
// - a pipelined loop is a serial For annotated `{"tessel.pipelined": S}`; the statements before
//   it in the same sequence are its prologue, those after it its epilogue.
// For each pipelined loop the check runs the sequence abstractly, for every trip count n in
// 0 .. 2S + 2 (a symbolic extent: values of its variables that give each n; a constant one: that
// n, at most 512 iterations), with the loop variable and the extent's variables replaced by
// numbers and every other `if` taken both ways. The events are cp.async writes (committed to
// group g by the next ptx_cp_async_commit_group), plain stores, reads, waits
// (ptx_cp_async_wait_group(N) retires all groups but the newest N) and block barriers. A stage's
// access index must fall into one stage (floordiv(index, E) simplifies to a number once the loop
// variable is fixed and the inner loops and threads are bounded). Violations:
// - a read of a stage with an asynchronous write to it that no wait before the read retires (not
//   yet committed, or too few groups committed after it: e.g. wait_group(S - 1) for S - 2);
// - inside a GPU kernel, a read with no block barrier between the retiring wait (a plain store:
//   the store) and the read; a write to a stage with no barrier after the last read of it.
// For a symbolic (or over 512) trip count it also proves that every stage index in the loop is a
// number or `(k + c) % m` with m dividing S (else it says that larger counts are not covered): the
// events of an iteration then depend on k only through k mod S and through guards comparing k
// with n, so a larger count repeats the steady state of those run, which cover the prologue, the
// first and last iterations and every distance between a copy and its read.
#ifndef TESSEL_TRANSFORM_VERIFY_PIPELINE_H_
#define TESSEL_TRANSFORM_VERIFY_PIPELINE_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

#include <string>
#include <vector>

namespace tessel {
namespace transform {

// One line per violation (empty when none), each naming the function, the buffer, the stage, the
// iteration and trip count, and the statements involved.
std::vector<std::string> VerifyPipeline(const ir::PrimFunc& func);
std::vector<std::string> VerifyPipeline(const ir::IRModule& mod);
// The registered pass "VerifyPipeline": its input, or a ValueError with the first violation.
Pass VerifyPipelinePass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_VERIFY_PIPELINE_H_
