// Hopper PTX builtins: asynchronous copies, transaction barriers, warpgroup matrix multiply and
// register reallocation, as IR calls that print and parse like any other (`T.ptx_wgmma_fence()`)
// and that the CUDA generator emits as inline PTX. Pointers are `T.address_of(buf[i])` (or a
// buffer's data variable); an mbarrier is a uint64 element of a "shared" buffer.
//
//   ptx_mbarrier_init(bar, count)           mbarrier.init.shared::cta.b64: expect `count` arrivals
//   ptx_mbarrier_arrive(bar)                mbarrier.arrive.shared::cta.b64
//   ptx_mbarrier_arrive_expect_tx(bar, n)   mbarrier.arrive.expect_tx: arrive, and expect n bytes
//                                           of asynchronous transactions (TMA) in this phase
//   ptx_mbarrier_try_wait(bar, parity)      bool: mbarrier.try_wait.parity once (phase `parity`
//                                           0/1 has completed)
//   ptx_mbarrier_wait(bar, parity)          try_wait.parity until it succeeds
//   ptx_fence_mbarrier_init()               fence.mbarrier_init.release.cluster
//   ptx_fence_proxy_async()                 fence.proxy.async.shared::cta: generic-proxy writes to
//                                           shared memory become visible to the async proxy
//                                           (wgmma, TMA) that reads them next
//   ptx_cp_async(dst, src, bytes)           cp.async.{ca,cg}.shared.global, 4, 8 or 16 bytes
//                                           (16: .cg, bypassing L1)
//   ptx_cp_async(dst, src, bytes, in_bounds) the same with src-size bytes or, where the boolean
//                                           in_bounds is false, 0: nothing read, zeros written
//   ptx_cp_async_commit_group()             cp.async.commit_group
//   ptx_cp_async_wait_group(n)              cp.async.wait_group n (constant): at most n groups of
//                                           this thread still in flight
//   ptx_named_barrier_sync(id, nthreads)    bar.sync id, nthreads (id 1..15; 0 is __syncthreads)
//   ptx_named_barrier_arrive(id, nthreads)  bar.arrive id, nthreads
//   ptx_setmaxnreg_inc(n) / _dec(n)         setmaxnreg.{inc,dec}.sync.aligned.u32 n (constant, a
//                                           multiple of 8 in [24, 256]); sm_90a
//   ptx_elect_one_sync()                    bool: elect.sync, true on one lane of the warp
//   ptx_wgmma_fence()                       wgmma.fence.sync.aligned; sm_90a
//   ptx_wgmma_commit_group()                wgmma.commit_group.sync.aligned; sm_90a
//   ptx_wgmma_wait_group(n)                 wgmma.wait_group.sync.aligned n (constant); sm_90a
//   ptx_ldmatrix(dtype, trans, num, ".b16", local_ptr, local_offset, smem_ptr, smem_offset)
//                                           TVM's op: ldmatrix.sync.aligned.m8n8.x<num>[.trans]
//                                           .shared.b16 into num 32-bit registers at local_ptr +
//                                           local_offset (elements of dtype), rows addressed by
//                                           smem_ptr + smem_offset per lane; sm_75
//   ptx_stmatrix(trans, num, smem_ptr, smem_offset, local_ptr, local_offset)
//                                           stmatrix.sync.aligned.m8n8.x<num>[.trans].shared.b16:
//                                           the reverse, from num 32-bit registers; sm_90
//   ptx_mma(shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, a, a_offset, b, b_offset, c,
//           c_offset, saturate)
//       TVM's op (printed T.ptx_mma("float32", "m16n8k16", ...)): mma.sync.aligned.m16n8k16.row
//       .col.f32.<ab>.<ab>.f32, c += a * b in place. Only shape "m16n8k16", layouts "row" and
//       "col", A_dtype = B_dtype "fp16" or "bf16", C_dtype "fp32", saturate false. a, b and c are
//       "local" buffers (data variables or T.address_of), offsets in their elements: a holds 4
//       32-bit registers (pairs of 16-bit elements), b 2, c 4 float32. The fragments, for lane l
//       (g = l / 4, t = l % 4): a = A[g + 8i][2t + 8j + c] at 2 (2j + i) + c, b = B[2t + 8j + c]
//       [g] at 2j + c, c = C[g + 8i][2t + c] at 2i + c (i, j, c in {0, 1}); sm_80
//   ptx_cvt_pack(dtype, lo, hi)            uint32: cvt.rn.<dtype>x2.f32, float32 lo and hi rounded
//                                           to nearest even as dtype ("f16" or "bf16") and packed,
//                                           lo in the low half (one instruction for two
//                                           conversions); pure; sm_80
//   ptx_wgmma_desc(smem, lbo, sbo, swizzle) uint64 shared-memory matrix descriptor: start address
//                                           of `smem` >> 4, leading and stride byte offsets >> 4,
//                                           swizzle 0 (none), 32, 64 or 128 bytes (constant)
//   ptx_wgmma_mma_async(acc, desc_a, desc_b, scale_d, shape, dtype, trans_a, trans_b)
//       wgmma.mma_async.sync.aligned.<shape>.f32.<dtype>.<dtype>: acc (address_of a "local"
//       float32 buffer of N/2 elements, the thread's accumulator fragment) = A * B + (scale_d ?
//       acc : 0); shape "m64n<N>k16", N a multiple of 8 in [8, 256]; dtype "f16" or "bf16";
//       trans_a / trans_b 0 (K-major) or 1 (MN-major), constants; sm_90a. The fragment: thread t
//       of the warpgroup (warp w = t / 32, lane l) holds, for j < N / 8, acc[4j + 2i + c] = D[16w
//       + l / 4 + 8i][8j + 2 (l % 4) + c], i, c in {0, 1}.
//   ptx_wgmma_mma_async_rs(acc, a, desc_b, scale_d, shape, dtype, trans_b)
//       the same with A from registers: `a` (address_of a "local" uint32 buffer) holds the
//       thread's 8 16-bit elements of the 64 x 16 A slice packed in pairs (low half first), in
//       the accumulator's order for 16 columns (element 2i + c = A[16w + l / 4 + 8i][2 (l % 4) +
//       c], 4 + 2i + c the same 8 columns on), so that an m64n16 accumulator converted to 16
//       bits is an A operand as it stands. Pack before the wgmma fence; sm_90a.
//
// TMA (the tensor memory accelerator). Coordinates and dimensions are in the tensor's axis order,
// outermost first (the PTX operands are innermost first; the generator reverses them).
//   tma_descriptor(dtype, swizzle, addr, d_0..d_r-1, s_0..s_r-1, b_0..b_r-1)
//       handle: a CUtensorMap describing the global tensor at `addr` of element type `dtype` (a
//       string), rank r in [1, 5], dims d, strides s in elements (s_r-1 must be 1), box b
//       (constants, each in [1, 256]) and swizzle 0 / 32 / 64 / 128 bytes (constant); out of range
//       reads fill zeros. Evaluated on the host: SplitHostDevice turns each one a kernel uses into
//       a
//       `__grid_constant__` kernel parameter, and the launch encodes it through the driver
//       (cuTensorMapEncodeTiled) from the values of addr, d and s at that launch.
//   ptx_tma_load(dst, map, bar, c_0..c_r-1)
//       cp.async.bulk.tensor.<r>d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: the
//       box at coordinates c of `map` into shared memory at dst (aligned to 128 bytes, 1024 with
//       a 128-byte swizzle); completion counts the box's bytes on the mbarrier `bar`
//   ptx_tma_store(map, src, c_0..c_r-1)
//       cp.async.bulk.tensor.<r>d.global.shared::cta.tile.bulk_group: the reverse; elements
//       outside the tensor are not written
//   ptx_tma_store_commit_group()            cp.async.bulk.commit_group
//   ptx_tma_store_wait_group(n)             cp.async.bulk.wait_group.read n (constant 0..7): the
//                                           shared memory of all but n groups may be reused
//   ptx_prefetch_tensor_map(map)            prefetch.tensormap: the descriptor into the cache
#ifndef TESSEL_IR_BUILTIN_HOPPER_H_
#define TESSEL_IR_BUILTIN_HOPPER_H_

#include <tessel/ir/expr.h>

#include <cstdint>
#include <string>

namespace tessel {
namespace ir {

// What is wrong with the operands of a call of one of these builtins ("" when nothing): pointers
// that are not handles, and operands PTX takes as immediates that are not literals or out of
// their range (wgmma shape, input type, transposes, group counts, register counts, barrier ids
// and thread counts, copy sizes, swizzle). The verifier and the CUDA generator both ask it.
std::string CheckHopperCall(const CallNode* op);
// N of a wgmma shape "m64n<N>k16" (a multiple of 8 in [8, 256]); 0 for any other text.
int64_t WgmmaN(const std::string& shape);

// Whether `name` is one of the builtins above that a kernel calls (all but tma_descriptor).
bool IsHopperBuiltin(const std::string& name);
// The rank of a tma_descriptor call from its operand count; 0 when the count fits no rank.
int TmaDescriptorRank(const CallNode* op);
// Whether `e` is a call of tma_descriptor.
bool IsTmaDescriptor(const PrimExpr& e);
// The oldest sm_XX that has it (75 for ldmatrix, 80 for cp.async and mma, 0 for named barriers,
// 90 for the rest).
int MinSmVersion(const std::string& name);
// Whether it exists only on sm_90a (wgmma, setmaxnreg): built for plain sm_90 it is an error.
bool NeedsSm90a(const std::string& name);

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_BUILTIN_HOPPER_H_
