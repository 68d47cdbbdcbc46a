// UnrollLoop: afterwards no `T.unroll` loop with a constant extent of at most kMaxUnrollExtent
// (16) is left, and no serial or unrolled loop of constant extent 1.
//
// - `for i in T.unroll(c)` with a constant 0 <= c <= 16 becomes c copies of its body in sequence,
//   copy k with i replaced by min + k (folded when min is a constant); c == 0 leaves
//   `T.evaluate(0)`. Every variable bound inside the body (Let, LetStmt, For, Allocate's
//   buffer_var, with the buffers over it) is a fresh variable in each copy, so each variable is
//   still bound at one place (VerifyWellFormed's "rebound_var" check).
// - A serial or unrolled loop of constant extent 1 becomes its body with i replaced by min.
// - Unroll loops with a larger or symbolic extent stay loops: the C backend marks them with
//   `#pragma GCC unroll`, which lets the compiler weigh code size; a body holding a Block is never
//   copied (its iteration variables and allocations would need renaming too), so its loop stays.
// - An unroll loop with a constant extent above kMaxUnrollRequest is a ValueError that names the
//   loop variable, its extent and the limit (docs/reliability.md, "Resource limits").
// - Inner loops are unrolled before outer ones, so nested unroll loops multiply out.
//
// The limit is a constant rather than a PassContext option: 16 copies keep the C code readable
// and small, and the pragma covers every loop above it.
//
// The input object is returned when no loop qualifies.
#ifndef TESSEL_TRANSFORM_UNROLL_LOOP_H_
#define TESSEL_TRANSFORM_UNROLL_LOOP_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

constexpr int64_t kMaxUnrollExtent = 16;

// The largest constant extent a `T.unroll` loop may ask for. No backend honours more: this pass
// copies at most kMaxUnrollExtent bodies, the C backend's pragma stops at 1024 and NVRTC's full
// unroll gives up at a code-size threshold of thousands of instructions. A request beyond it
// (10^9 iterations, say) is a mistake that any pass or compiler that did expand it would pay for
// in hours and gigabytes, so it is refused while the loop can still be named.
constexpr int64_t kMaxUnrollRequest = int64_t{1} << 16;

ir::Stmt UnrollLoop(const ir::Stmt& stmt);
ir::PrimFunc UnrollLoop(const ir::PrimFunc& func);
ir::IRModule UnrollLoop(const ir::IRModule& mod);

Pass UnrollLoopPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_UNROLL_LOOP_H_
