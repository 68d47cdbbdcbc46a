// Registration of the built-in intrinsics (semantics in builtin.h). Infix precedences follow the
// text format's (Python's) scale: | 5, ^ 6, & 7, << >> 8.
#include <tessel/ir/builtin.h>

namespace tessel {
namespace ir {
namespace builtin {

#define TESSEL_DEFINE_BUILTIN(Name)      \
  const Op& Name() {                     \
    static const Op op = Op::Get(#Name); \
    return op;                           \
  }
TESSEL_FOR_EACH_BUILTIN_ACCESSOR(TESSEL_DEFINE_BUILTIN)
#undef TESSEL_DEFINE_BUILTIN

}  // namespace builtin

using K = CallEffectKind;

TESSEL_REGISTER_OP("if_then_else").NumInputs(3);
TESSEL_REGISTER_OP("shift_left").NumInputs(2).Infix("<<", 8);
TESSEL_REGISTER_OP("shift_right").NumInputs(2).Infix(">>", 8);
TESSEL_REGISTER_OP("bitwise_and").NumInputs(2).Infix("&", 7);
TESSEL_REGISTER_OP("bitwise_xor").NumInputs(2).Infix("^", 6);
TESSEL_REGISTER_OP("bitwise_or").NumInputs(2).Infix("|", 5);
TESSEL_REGISTER_OP("bitwise_not").NumInputs(1).Prefix("~");
TESSEL_REGISTER_OP("assume").NumInputs(1).Effect(K::kEmbedding);
TESSEL_REGISTER_OP("likely").NumInputs(1);
TESSEL_REGISTER_OP("call_extern").Effect(K::kOpaque).CallWithDType();
TESSEL_REGISTER_OP("call_pure_extern").CallWithDType();
TESSEL_REGISTER_OP("reinterpret").NumInputs(1).CallWithDType();
TESSEL_REGISTER_OP("address_of").NumInputs(1);
TESSEL_REGISTER_OP("popcount").NumInputs(1);
TESSEL_REGISTER_OP("clz").NumInputs(1);
TESSEL_REGISTER_OP("abs").NumInputs(1);
TESSEL_REGISTER_OP("ret").NumInputs(1).Effect(K::kUpdateState);
TESSEL_REGISTER_OP("tvm_thread_allreduce").Effect(K::kOpaque);
TESSEL_REGISTER_OP("tvm_storage_sync").NumInputs(1).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_ldmatrix").Effect(K::kOpaque);
// Opaque: it updates the accumulator it is given by pointer.
TESSEL_REGISTER_OP("ptx_mma").Effect(K::kOpaque).CallWithDType();
// GPU synchronization and launch: barriers order memory, so nothing may move across them.
TESSEL_REGISTER_OP("pdl_trigger").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("pdl_sync").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("grid_sync").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("vscale").NumInputs(0);
TESSEL_REGISTER_OP("launch_kernel").Effect(K::kOpaque);
// Warp shuffles are functions of their arguments on every lane, but every lane of the warp must
// execute the very same call: kUpdateState keeps Simplify from dropping, merging or hoisting one.
TESSEL_REGISTER_OP("shfl_xor").NumInputs(3).Effect(K::kUpdateState);
TESSEL_REGISTER_OP("shfl_down").NumInputs(3).Effect(K::kUpdateState);
TESSEL_REGISTER_OP("shfl_sync").NumInputs(3).Effect(K::kUpdateState);
// A write through a pointer that no buffer access shows: opaque, so nothing moves across it.
TESSEL_REGISTER_OP("atomic_add_at").NumInputs(2).Effect(K::kOpaque);

// Unary float math: C name in attrs for the C and CUDA backends.
#define TESSEL_MATH_UNARY(Name) TESSEL_REGISTER_OP(Name).NumInputs(1)
TESSEL_MATH_UNARY("exp");
TESSEL_MATH_UNARY("exp2");
TESSEL_MATH_UNARY("log");
TESSEL_MATH_UNARY("log2");
TESSEL_MATH_UNARY("sqrt");
TESSEL_MATH_UNARY("rsqrt");
TESSEL_MATH_UNARY("sin");
TESSEL_MATH_UNARY("cos");
TESSEL_MATH_UNARY("tanh");
TESSEL_MATH_UNARY("sigmoid");
TESSEL_MATH_UNARY("erf");
TESSEL_MATH_UNARY("floor");
TESSEL_MATH_UNARY("ceil");
TESSEL_MATH_UNARY("round");
TESSEL_MATH_UNARY("trunc");
TESSEL_MATH_UNARY("fabs");
TESSEL_MATH_UNARY("isnan");
TESSEL_MATH_UNARY("isinf");
#undef TESSEL_MATH_UNARY
TESSEL_REGISTER_OP("pow").NumInputs(2);
TESSEL_REGISTER_OP("fmod").NumInputs(2);

}  // namespace ir
}  // namespace tessel
