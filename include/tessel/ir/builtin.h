// The built-in intrinsic ops, registered in src/ir/builtin_ops.cc. Accessors return the unique Op
// object so passes can compare `call->op.same_as(builtin::if_then_else())`.
//
// Semantics of those the analyzer reasons about:
// - if_then_else(c, t, f): evaluates only the chosen side (unlike Select).
// - shift_left(a, b), shift_right(a, b): b must be in [0, bits); shift_right is arithmetic on
//   signed types, logical on unsigned ones.
// - bitwise_and/or/xor(a, b), bitwise_not(a): on the dtype's two's-complement bits.
// - assume(c): a fact the author guarantees; the analyzer may use it; it emits no code.
// - likely(c): c, with a branch hint.
// - call_extern("dtype", "name", args...): a call to an external C function.
// - vscale(): int32, the multiple of the vector length of scalable-vector hardware (Arm SVE,
//   RISC-V V), as TVM writes it (`T.vscale()`). It parses and prints; no tessel target has
//   scalable vectors, so lowering a kernel that uses it is an error.
// GPU only (the C backend rejects them):
// - tvm_storage_sync("shared"): a barrier of the thread block (__syncthreads).
// - pdl_trigger(): lets the next kernel on the stream start (griddepcontrol.launch_dependents);
//   pdl_sync(): waits until the previous kernel's memory is visible (griddepcontrol.wait).
// - grid_sync(): a barrier of the whole grid (needs a cooperative launch).
// - launch_kernel("name", gx, gy, gz, bx, by, bz, dyn_shared_bytes, args...): a host-side launch
//   of the device function `name` of the module; int32 (0 on success).
// - shfl_xor(v, lane_mask, width), shfl_down(v, delta, width), shfl_sync(v, src_lane, width):
//   warp shuffles over all 32 lanes (full mask), result of v's dtype. Every lane must execute
//   them together, so they count as stateful (kUpdateState): never dropped, merged or moved.
// - atomic_add_at(address_of(buf[i]), v): buf[i] += v as one atomic read-modify-write (relaxed
//   order), for v of buf's dtype. The C backend takes int/uint of 32 and 64 bits and float16,
//   bfloat16, float32, float64 (compare-and-swap loops for floats); CUDA the types atomicAdd
//   takes (float16 from sm_70, bfloat16 from sm_80); Metal float32, int32 and uint32 in device
//   memory.
#ifndef TESSEL_IR_BUILTIN_H_
#define TESSEL_IR_BUILTIN_H_

#include <tessel/ir/op.h>

namespace tessel {
namespace ir {
namespace builtin {

#define TESSEL_DECLARE_BUILTIN(Name) const Op& Name();
#define TESSEL_FOR_EACH_BUILTIN_ACCESSOR(X) \
  X(if_then_else)                           \
  X(shift_left)                             \
  X(shift_right)                            \
  X(bitwise_and)                            \
  X(bitwise_or)                             \
  X(bitwise_xor)                            \
  X(bitwise_not)                            \
  X(assume)                                 \
  X(likely)                                 \
  X(call_extern)                            \
  X(call_pure_extern)                       \
  X(reinterpret)                            \
  X(address_of)                             \
  X(tvm_storage_sync)                       \
  X(pdl_trigger)                            \
  X(pdl_sync)                               \
  X(grid_sync)                              \
  X(launch_kernel)                          \
  X(shfl_xor)                               \
  X(shfl_down)                              \
  X(shfl_sync)                              \
  X(atomic_add_at)
TESSEL_FOR_EACH_BUILTIN_ACCESSOR(TESSEL_DECLARE_BUILTIN)
#undef TESSEL_DECLARE_BUILTIN

}  // namespace builtin
}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_BUILTIN_H_
