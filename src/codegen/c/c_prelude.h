// The fixed text that starts every generated C translation unit: includes, scalar helpers (wrapping
// integer arithmetic, floor/trunc division, min/max, float16/bfloat16 conversions) and the error
// helpers that the kernels and host wrappers call. Everything in it is named tsl_* / TSL_*, a
// prefix the name table never hands to IR variables.
#ifndef TESSEL_SRC_CODEGEN_C_C_PRELUDE_H_
#define TESSEL_SRC_CODEGEN_C_C_PRELUDE_H_

namespace tessel {
namespace codegen {

const char* CPrelude();
// The part of the prelude with the integer and float division helpers (wrapping +-*, floor/trunc
// division, min/max, abs), written against a TSL_HELPER macro its includer defines. With
// `fast_min_max` (CUDA's -fast-math) float max/min are fmaxf/fminf rather than the C selects.
const char* CArithmeticHelpers(bool fast_min_max = false);
// Its integer half only (valid MSL too: C casts and fixed-width types, no double).
const char* CIntegerHelpers();

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_SRC_CODEGEN_C_C_PRELUDE_H_
