// LowerBlocks: block-structured IR to plain loops. Afterwards the function holds no Block,
// BlockRealize or MatchBufferRegion, and computes the same as before:
//
// - each BlockRealize is replaced by its block's body, with every block iteration variable
//   substituted by its bound value (iter_values); the block's T.reads/T.writes and annotations
//   are dropped;
// - a predicate that is not the constant True becomes `if predicate:` around the whole block;
// - `T.init()` becomes `if v0 == min0 and v1 == min1 ...: init` before the body, over the bound
//   values of the reduce (T.axis.reduce) iteration variables and their domain mins (no `if` when
//   the condition folds to a constant). A block with an init but no reduce axis is a ValueError.
//   The `if` then leaves each enclosing serial (or unrolled) loop of constant extent >= 1 whose
//   body it starts, when one of its `and`-terms is `loop_var == loop.min` and neither the other
//   terms nor the init use that variable: `for k: {if k == 0: init; body}` becomes
//   `init; for k: body` (the init ran in the first iteration, before the rest of it), so a
//   reduction's init runs outside the reduce loops that directly enclose its block;
// - each alloc_buffer becomes `Allocate(buffer.data, dtype, extents, True)` + `DeclBuffer(buffer)`
//   around the block's init and body, outermost the first buffer. Extents are the buffer's shape
//   (FlattenBuffer makes them one flat extent later); a buffer declared with strides or an
//   elem_offset gets the single extent elem_offset + 1 + sum((shape_k - 1) * stride_k);
// - each match_buffer disappears: loads and stores of the matched buffer become loads and stores
//   of the source buffer with the region's mins added to the indices (a matched buffer of lower
//   rank lines up with the region's last dimensions; the leading ones take their min). A bare
//   variable in the matched buffer's shape, strides or elem_offset that nothing else binds is
//   substituted by the value the match gives it (the region extent, the source's stride, the
//   source's elem_offset plus the region's offset), and uses of its data variable by the
//   source's data variable. A constant shape entry that contradicts the region's extent is a
//   ValueError; symbolic ones are not checked (they are the writer's contract). Declared strides
//   and elem_offset matter only through the variables they bind: accesses go through the source
//   buffer, so they are exact whatever the matched buffer's layout says;
// - a block annotation "buffer_dim_align" = [[write buffer index, axis, factor, offset], ...]
//   (schedule storage_align; the index counts the block's writes as transform::BlockBuffers
//   does) gives the allocated buffer strides first: the stride of dimension `axis` is the
//   smallest value >= the next dimension's stride times its extent that is `offset` modulo
//   `factor`, and every use of the buffer follows that layout. An entry out of range, two blocks
//   that disagree on one dimension, a buffer no block allocates or one declared with strides is
//   a ValueError;
// - a buffer declared inside a block whose shape mentions an iteration variable (or a matched
//   size variable) is re-declared with the substituted shape.
// A root block (no iteration variables) simply disappears, leaving its allocations.
// A reduce iteration variable whose bound value uses the variable of an enclosing parallel,
// vectorized or thread_binding loop is a ValueError naming the block, the iterator and the loop:
// those iterations would update one accumulator at once (TVM lowers a reduction bound to
// threadIdx as a cross-thread all-reduce; tessel does not have that lowering yet).
//
// Functions without blocks are returned unchanged (the very input object).
#ifndef TESSEL_TRANSFORM_LOWER_BLOCKS_H_
#define TESSEL_TRANSFORM_LOWER_BLOCKS_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

ir::PrimFunc LowerBlocks(const ir::PrimFunc& func);
// Every function of the module; the module itself when no function changed.
ir::IRModule LowerBlocks(const ir::IRModule& mod);
// The registered pass "LowerBlocks".
Pass LowerBlocksPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_LOWER_BLOCKS_H_
