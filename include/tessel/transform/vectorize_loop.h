// VectorizeLoop: afterwards no `T.vectorized` loop is left. Each became either straight-line
// vector code or a serial loop with the same body; never code that computes something else.
//
// A vectorized loop `for i in T.vectorized(min, min + L)` with a constant extent 2 <= L <= 64
// becomes its body evaluated on vectors: once on L lanes when L is a power of two, else on
// power-of-two pieces, largest first (7 = 4 + 2 + 1; a last single iteration stays a serial loop of
// extent 1), since C vector types exist only for power-of-two sizes:
// - i becomes Ramp(min, 1, L); a loop-invariant scalar mixed with a vector becomes a Broadcast;
//   integer `+ - *` of a Ramp and an invariant (or of two Ramps) stay Ramps, so `A[2 * i]` loads
//   `A[T.Ramp(2 * min, 2, L)]`;
// - vectorizable: BufferLoad / BufferStore (only the last index may depend on i: a Ramp or any
//   vector, i.e. a gather/scatter), arithmetic, comparisons, logic, Select, Cast, Let and LetStmt
//   (a variable bound to a vector becomes a new vector variable), if_then_else (with an invariant
//   or a vector condition) when neither branch loads memory, divides or calls anything impure: it
//   becomes a Select, which evaluates both sides (the C backend has no vector if_then_else),
//   IfThenElse statements with an invariant condition, AssertStmt with an invariant
//   condition, and nested serial or unrolled loops whose bounds do not depend on i;
// - every variable bound inside the body (Let, LetStmt, For) is a fresh variable in the result.
//
// The loop stays, as a serial loop (same variable, bounds, body and annotations), when anything
// else is met: a call whose arguments depend on i other than such a safe if_then_else (math ops,
// call_extern, bitwise ops, an if_then_else guarding a load ...), an impure call even with
// invariant arguments, a store whose index does not depend on i (every lane would write one
// element, e.g. a reduction), a vector condition of an IfThenElse statement, an inner loop whose
// bounds depend on i or that is parallel or thread-bound, Allocate, DeclBuffer, While, AttrStmt,
// blocks, an Evaluate of anything but a constant, a body that already holds vectors (an inner
// vectorized loop that succeeded), or a non-constant, zero, negative or unit extent (extent 1
// becomes serial; UnrollLoop then removes it).
//
// A constant extent of at least 2 * kMaxVectorLanes (128) is split: a serial loop over
// extent / 64 chunks of 64 lanes each, then the remainder in power-of-two pieces as above. When the
// first (largest) piece does not vectorize, the whole loop becomes serial.
//
// Assumption: the `T.vectorized` annotation asserts that the iterations are independent (no
// iteration reads what another writes), as in TVM; the pass does not check it. Loops are processed
// innermost first. The input object is returned when there is no vectorized loop.
#ifndef TESSEL_TRANSFORM_VECTORIZE_LOOP_H_
#define TESSEL_TRANSFORM_VECTORIZE_LOOP_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

constexpr int64_t kMaxVectorLanes = 64;

ir::Stmt VectorizeLoop(const ir::Stmt& stmt);
ir::PrimFunc VectorizeLoop(const ir::PrimFunc& func);
ir::IRModule VectorizeLoop(const ir::IRModule& mod);

Pass VectorizeLoopPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_VECTORIZE_LOOP_H_
