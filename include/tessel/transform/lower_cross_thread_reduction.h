// LowerCrossThreadReduction: a reduction block whose reduce iterators are bound to threadIdx loops
// becomes an all-reduce through shared memory. Runs on block IR, before LowerBlocks (the cuda
// pipeline); target c refuses thread bindings anyway.
//
// A BlockRealize is rewritten when some reduce iterator's bound value uses the variable of an
// enclosing loop bound to threadIdx.[xyz] and all of the following hold:
// - the block has no alloc_buffers or match_buffers; its body is one scalar BufferStore
//   `B[idx] = f(B[idx], v)` or `f(v, B[idx])`, f one of +, *, T.max, T.min over an int, uint or
//   float dtype, v reading nothing of B;
// - its init, if any, is one BufferStore `B[idx] = c` to the same element, c reading nothing of B;
// - every reduce iterator's value uses only variables of enclosing threadIdx loops (the reduce
//   threads) and, optionally, of serial loops perfectly nested between the innermost enclosing
//   loop and the block (the serial part); no spatial iterator's value, no index of idx, and no
//   init value uses a reduce thread, a serial-part loop or a reduce iterator;
// - every enclosing threadIdx loop has a constant extent, and every threadIdx tag that the
//   function binds anywhere is bound by an enclosing loop (a launched axis not around the block
//   would run the tree once per thread of that axis, racing on the slots).
// Anything else is left unchanged, so LowerBlocks refuses it as before.
//
// Afterwards, with R the product of the reduce threads' extents and G that of the other
// enclosing threadIdx loops (r, g: the threads' flattened indices, innermost loop fastest), the
// block is replaced, in place, by plain statements without blocks:
//   red = T.allocate([G * R], dtype, "shared")        (named "<block>_red")
//   red[g * R + r] = v        (the identity of f instead when the block predicate is false)
// or, with a serial part (which the rewrite replaces too), each thread first reduces it locally:
//   acc = T.allocate([1], dtype, "local")             (named "<block>_acc")
//   acc[0] = identity
//   for <the serial loops>: if predicate: acc[0] = f(acc[0], v)
//   red[g * R + r] = acc[0]
//   T.tvm_storage_sync("shared")
//   for each halving step n -> h = ceil(n / 2), from n = R down to 1 (unrolled):
//       if r < n - h: red[g * R + r] = f(red[g * R + r], red[g * R + r + h])
//       T.tvm_storage_sync("shared")
//   if r == 0: B[idx] = total    (init c is the identity of f), f(c, total) (any other c), or
//                                 f(B[idx], total) (no init); total = red[g * R]
//   T.tvm_storage_sync("shared")
// Identities: 0 for +, 1 for *, -inf / +inf for a float T.max / T.min and the dtype's lowest /
// highest value for an integer one. Every thread of the enclosing threadIdx loops reaches every
// barrier unless the user's own control flow around the block diverges (InjectSharedBarriers
// refuses or splits that later). Functions without such blocks are returned unchanged (the very
// input object).
#ifndef TESSEL_TRANSFORM_LOWER_CROSS_THREAD_REDUCTION_H_
#define TESSEL_TRANSFORM_LOWER_CROSS_THREAD_REDUCTION_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

ir::PrimFunc LowerCrossThreadReduction(const ir::PrimFunc& func);
ir::IRModule LowerCrossThreadReduction(const ir::IRModule& mod);
Pass LowerCrossThreadReductionPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_LOWER_CROSS_THREAD_REDUCTION_H_
