// LowerIntrinsics: afterwards no scalar call to a math op is left; each became C99 libm calls
// (`call_pure_extern`) or plain arithmetic, so the C backend needs no table of math ops.
//
// - exp exp2 log log2 sqrt sin cos tanh erf floor ceil trunc fabs pow fmod: the libm function of
//   the call's dtype: float32 `expf`, float64 `exp`. round is round-half-to-even (as NumPy), so it
//   becomes `nearbyintf`/`nearbyint` (the default rounding mode), never C's `roundf`.
// - float16 and bfloat16 calls compute in float32: the arguments are cast to float32, the `f`
//   function is called, the result is cast back. (C has no half-precision libm.)
// - rsqrt(x) -> 1 / sqrt(x); sigmoid(x) -> 1 / (1 + exp(-x)), its exp lowered as above.
// - isnan(x) -> x != x; isinf(x) -> fabs(x) == inf (float16/bfloat16 compared in float32); an
//   integer argument gives False. An argument that is not a variable, constant or load and is used
//   twice (isnan) is bound once with a Let.
// - abs: of an integer stays `abs` (the C backend emits it); of a float becomes fabs as above.
// - Math on an integer dtype (e.g. exp of int32) is an error (ValueError) naming the call.
// - A vector call (lanes > 1) to any of these ops is an error naming the call: VectorizeLoop never
//   makes one, and lowering lane by lane is not implemented.
//
// Everything else is untouched (vector expressions included); the input object is returned when
// there is no math call.
#ifndef TESSEL_TRANSFORM_LOWER_INTRINSICS_H_
#define TESSEL_TRANSFORM_LOWER_INTRINSICS_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

ir::PrimExpr LowerIntrinsics(const ir::PrimExpr& expr);
// Errors name the function by its global symbol (else "<unnamed>").
ir::PrimFunc LowerIntrinsics(const ir::PrimFunc& func);
// Errors name the function by its key in the module.
ir::IRModule LowerIntrinsics(const ir::IRModule& mod);

Pass LowerIntrinsicsPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_LOWER_INTRINSICS_H_
