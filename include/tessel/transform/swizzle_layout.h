// SwizzleLayout: the swizzled shared-memory layouts that Hopper's wgmma and TMA read, as a property
// of an allocation rather than index arithmetic written by hand. An Allocate annotated
// `{"tessel.swizzle_bytes": S}` (S = 32, 64 or 128) stores element f of its flat buffer at
//   f ^ (((f * e >> 7) & (S / 16 - 1)) << 4) / e        (e: the element size in bytes)
// i.e. in byte terms the 16-byte chunk index (address bits 4..) is XORed with the row of the
// 8-row atom (bits 7..): CUTLASS's Swizzle<log2(S/16), 4, 3>, the layout that wgmma descriptors
// with the same swizzle mode and TMA's CU_TENSOR_MAP_SWIZZLE_<S>B expect. The program indexes the
// buffer logically; this pass, after FlattenBuffer, rewrites every load, store and address_of of
// it. Afterwards:
// - every scalar access of such a buffer goes through the formula above;
// - a vector access present when the pass runs (a Ramp of stride 1) stays one vector access when it
//   lies in one 16-byte chunk (lanes dividing the chunk, its start provably a multiple of them):
//   the XOR moves whole chunks; any other vector access is a ValueError naming the buffer. A loop
//   vectorized later (VectorizeLoop runs after this pass) cannot see through the XOR and is
//   emitted lane by lane;
// - a `ptx_wgmma_desc` of the buffer must name the same swizzle (ValueError otherwise), so the
//   descriptor and the layout cannot disagree;
// - the element size is at most 16 bytes and a power of two (ValueError otherwise).
// The allocation's base must be aligned to the atom (8 * S bytes); the CUDA generator declares
// such arrays so.
//
// An allocation also annotated {"tessel.swizzle_late": True} is left to SwizzleLayoutLate, which
// the GPU pipelines run after VectorizeLoop: InjectSharedBarriers and SoftwarePipeline then see
// its logical indices (the SIMT tile lowering's ldmatrix operands, src/transform/tile_mma.h, whose
// cooperative stores those passes must see as one per thread), and the loops are vector accesses
// (Ramps) by the time the formula applies, each kept whole when it lies in one chunk.
#ifndef TESSEL_TRANSFORM_SWIZZLE_LAYOUT_H_
#define TESSEL_TRANSFORM_SWIZZLE_LAYOUT_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

// The annotation that defers an allocation's swizzle to SwizzleLayoutLate.
constexpr const char* kSwizzleLateAttr = "tessel.swizzle_late";

// `late`: the allocations annotated kSwizzleLateAttr, else all others.
ir::PrimFunc SwizzleLayout(const ir::PrimFunc& func, bool late = false);
ir::IRModule SwizzleLayout(const ir::IRModule& mod);
// The registered passes "SwizzleLayout" (after FlattenBuffer) and "SwizzleLayoutLate" (after
// VectorizeLoop).
Pass SwizzleLayoutPass();
Pass SwizzleLayoutLatePass();

// The swizzle of an allocation (its "tessel.swizzle_bytes"), 0 when it has none.
int64_t SwizzleBytes(const ir::AllocateNode* alloc);

// The element where the formula above stores flat element `f` (elem_bytes a power of two <= 16,
// swizzle_bytes 32, 64 or 128).
ir::PrimExpr SwizzledElement(const ir::PrimExpr& f, int64_t elem_bytes, int64_t swizzle_bytes);

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_SWIZZLE_LAYOUT_H_
