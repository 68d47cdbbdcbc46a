// CompactBufferAllocation: an allocation of a "local" or "shared" buffer made by a block (after
// LowerBlocks: `Allocate` + `DeclBuffer` over the block's body) shrinks to the region its accesses
// touch, and moves down to the innermost loop that holds all of them. The schedule's cache_read /
// cache_write make buffers of the full shape; this is what turns a C_local[1024, 1024] written
// per tile into a 16x16 array in each tile's loop body (registers, on a GPU one per thread).
//
// Afterwards, for each buffer it changes: the allocation sits at the body of loop L (or stays where
// it was), its shape is a constant upper bound of the region's extent, and every access
// X[i, j, ...] reads X'[i - lo_i, j - lo_j, ...] where [lo, hi] is the region relaxed over the
// loops below L. The allocation moves into a loop only where that cannot lose a value: a parallel
// or thread-bound loop (distinct iterations cannot share the buffer's contents legally; a shared
// buffer's region is relaxed over every threadIdx loop around it, since its threads share it), or
// a serial loop whose
// iterations touch disjoint, increasing slabs of the buffer (checked with the analyzer). Never
// into a vectorized or unrolled loop. A buffer whose extent has no constant bound, that has
// explicit strides, or whose data variable is used other than by loads and stores, is left
// unchanged. Global-scope buffers are left unchanged.
#ifndef TESSEL_TRANSFORM_COMPACT_BUFFER_ALLOCATION_H_
#define TESSEL_TRANSFORM_COMPACT_BUFFER_ALLOCATION_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

ir::PrimFunc CompactBufferAllocation(const ir::PrimFunc& func);
ir::IRModule CompactBufferAllocation(const ir::IRModule& mod);
// The registered pass "CompactBufferAllocation" (runs after LowerBlocks).
Pass CompactBufferAllocationPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_COMPACT_BUFFER_ALLOCATION_H_
