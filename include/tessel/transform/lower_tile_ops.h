// LowerTileOps: tile programs (include/tessel/ir/builtin_tile.h, the T.Kernel / T.copy / T.gemm
// front end of src/ir/parser/parser_tile.cc) become loops (the C target: a tile program runs on
// the CPU and is checked against NumPy) or GPU kernels. On GPUs each T.Kernel is first planned
// (layout inference, src/transform/tile_layout_inference.h): the plan is written on its block
// loop ("tessel.tile_plan", "tessel.tile_layouts"). On CUDA sm_90a (LowerTileOpsHopperPass) a
// kernel whose plan is warp-specialized becomes a persistent producer/consumer TMA + wgmma kernel
// (src/transform/lower_tile_ops_hopper.cc), under a host test that TMA can describe its tensors,
// with a SIMT copy of the same kernel (fresh variables) on the other side; every other kernel
// gets the SIMT lowering below.
//
// Afterwards, for the C target (LowerTileOpsPass):
// - tile_copy(src, dst) is a loop nest over dst's extents, dst[d + i] = cast(src[s + i]); the
//   extents of src and dst must be provably equal (ValueError otherwise). Where an index of a
//   buffer that is not a tile (any scope but shared / local / fragment) may leave its shape (below
//   0 or at its extent and above, as far as the ranges of the enclosing loops let the analyzer
//   tell), a read gives 0 and a write is skipped: ragged edges need no code in the program;
// - tile_fill(dst, v) is a loop nest of stores of v;
// - tile_gemm(A, B, C, trans_a, trans_b, clear) is (after zeroing C when clear) the i, j, k loop
//   nest C[i, j] += cast(A[i, k]) * cast(B[k, j]) in C's dtype, A and B read transposed when asked;
//   the extents must agree (M, N, K), else a ValueError names the two that differ;
// - tile_reduce(src, dst, kind, dim, clear) is, per element of dst, the loop over src's axis dim
//   combining into dst (from the identity when clear: 0, or the dtype's lowest / highest value);
// - tile_atomic_add(dst, src) is a loop nest over dst's extents of atomic_add_at(&dst[d + i],
//   cast(src[s + i])) (or of the value src), skipped where dst leaves its shape: the blocks of a
//   T.Kernel run in parallel and may add into the same elements. Into a shared tile, which belongs
//   to one block, it is a plain add;
// - a T.Kernel's blockIdx loops (the one annotated "tessel.tile_kernel" and the blockIdx loops
//   directly inside it) are ordinary loops, the outermost parallel; T.Parallel loops are serial
//   (their annotation goes). Allocations keep their scopes ("shared.dyn", "local.fragment"): the
//   C generator gives every scope the same storage.
// The SIMT lowering (every GPU target), correct on any GPU; tensor cores (mma.sync) for T.gemm on
// CUDA sm_80 and later where the operands fit (src/transform/tile_mma.h), plain dot products
// otherwise (src/transform/lower_tile_ops_gpu.cc says how each operation is spread over the
// T.Kernel's threads): a threadIdx.x loop of the kernel's thread count runs the body, fragments
// become per-thread registers (spread round-robin, or replicated when a reduction writes them),
// shared tiles are copied cooperatively (InjectSharedBarriers places the barriers), and a
// T.Pipelined loop is left to SoftwarePipeline(Async), which stages its copies (cp.async);
// tile_atomic_add has each thread add the elements of a spread source it holds (or an even share,
// or inside T.Parallel its own element) with atomic_add_at, into a tensor only. What it
// cannot lower yet (part of a fragment, a spread fragment indexed other than by its T.Parallel
// loop variables, a gemm with fragment operands, a tile operation outside a T.Kernel) is a
// ValueError that says so. Functions without tile operations or T.Kernel loops are returned
// unchanged by both.
#ifndef TESSEL_TRANSFORM_LOWER_TILE_OPS_H_
#define TESSEL_TRANSFORM_LOWER_TILE_OPS_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

#include <string>

namespace tessel {
namespace transform {

// `arch`: the CUDA arch of a GPU target ("sm_80" and later have mma.sync, "sm_90a" also allows
// the warp-specialized form), "" for Metal or an arch not known.
ir::IRModule LowerTileOps(const ir::IRModule& mod, bool gpu, const std::string& arch = "");
// "LowerTileOps" (the C target), "LowerTileOpsGPU" (CUDA before sm_80, Metal: layout inference
// then the SIMT lowering), "LowerTileOpsSm80" (CUDA sm_80 to sm_90: the same with T.gemm on
// mma.sync) and "LowerTileOpsHopper" (CUDA sm_90a: also the warp-specialized form).
Pass LowerTileOpsPass();
Pass LowerTileOpsGPUPass();
Pass LowerTileOpsSm80Pass();
Pass LowerTileOpsHopperPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_LOWER_TILE_OPS_H_
