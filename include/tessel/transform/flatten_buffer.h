// FlattenBuffer: every buffer access becomes a one-index access of a flat buffer. Afterwards:
//
// - every BufferLoad and BufferStore has exactly one index, into a buffer of one dimension, no
//   strides and elem_offset 0, over the original buffer's data variable. The index is
//   elem_offset + sum(index_k * stride_k), with the declared strides, or the compact row-major
//   ones when none are declared. A vector last index stays a vector: a Ramp(b, s, lanes) becomes
//   Ramp(rest + b * stride, s * stride, lanes); any other vector adds the broadcast scalar rest;
// - every Allocate has one extent, the product of its extents;
// - a DeclBuffer of a buffer that is not already flat declares the flat buffer instead (same
//   name, data variable, dtype, scope and alignment; its one extent is the number of elements
//   the layout reaches: the shape's product when compact, else
//   elem_offset + 1 + sum((shape_k - 1) * stride_k));
// - parameter buffers keep their N-D declaration in buffer_map (the host wrapper checks callers
//   against it); the body refers to their flat twins, declared by DeclBuffer statements at the
//   top of the body in parameter order, one per parameter buffer the body uses and that is not
//   already flat.
// A buffer that is already flat is kept as is (the same object), so a second run changes nothing
// and returns its input. Blocks must be lowered first: a Block or BlockRealize is a ValueError
// ("FlattenBuffer: run LowerBlocks first: block "C" found").
#ifndef TESSEL_TRANSFORM_FLATTEN_BUFFER_H_
#define TESSEL_TRANSFORM_FLATTEN_BUFFER_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

namespace tessel {
namespace transform {

ir::PrimFunc FlattenBuffer(const ir::PrimFunc& func);
// Every function of the module; the module itself when no function changed.
ir::IRModule FlattenBuffer(const ir::IRModule& mod);
// The registered pass "FlattenBuffer".
Pass FlattenBufferPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_FLATTEN_BUFFER_H_
