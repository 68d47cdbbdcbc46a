// Where a buffer's elements live in its data array, shared by the passes that lower buffer
// accesses (LowerBlocks, FlattenBuffer): strides spelled out, and how many elements a layout
// spans.
#ifndef TESSEL_TRANSFORM_BUFFER_LAYOUT_H_INTERNAL_
#define TESSEL_TRANSFORM_BUFFER_LAYOUT_H_INTERNAL_

#include <tessel/ir/buffer.h>
#include <tessel/ir/ops.h>

#include <vector>

namespace tessel {
namespace transform {

// The strides of `buf` as declared, or its compact row-major strides when none are.
inline std::vector<ir::PrimExpr> StridesOf(const ir::Buffer& buf) {
  std::vector<ir::PrimExpr> out(buf->shape.size());
  if (!buf->strides.empty()) {
    for (size_t k = 0; k < out.size(); ++k) out[k] = buf->strides[k];
    return out;
  }
  ir::DataType t = buf->shape.empty() ? ir::DataType::Int(32) : buf->shape[0].dtype();
  ir::PrimExpr acc = ir::MakeConst(t, 1);
  for (size_t k = out.size(); k-- > 0;) {
    out[k] = acc;
    acc = ir::mul(acc, buf->shape[k]);
  }
  return out;
}

// Whether the layout is compact row-major from element 0 (no strides, elem_offset 0).
inline bool IsCompact(const ir::Buffer& buf) {
  const auto* off = buf->elem_offset.as<ir::IntImmNode>();
  return buf->strides.empty() && off && off->value == 0;
}

// The number of elements from the data pointer that the layout reaches: the product of the
// shape for a compact buffer, else elem_offset + 1 + sum((shape_k - 1) * stride_k).
inline ir::PrimExpr FlatExtent(const ir::Buffer& buf) {
  if (IsCompact(buf)) {
    ir::PrimExpr n =
        ir::MakeConst(buf->shape.empty() ? ir::DataType::Int(32) : buf->shape[0].dtype(), 1);
    for (const ir::PrimExpr& e : buf->shape) n = ir::mul(n, e);
    return n;
  }
  std::vector<ir::PrimExpr> strides = StridesOf(buf);
  ir::PrimExpr span = ir::add(buf->elem_offset, ir::MakeConst(buf->elem_offset.dtype(), 1));
  for (size_t k = 0; k < buf->shape.size(); ++k) {
    ir::PrimExpr last = ir::sub(buf->shape[k], ir::MakeConst(buf->shape[k].dtype(), 1));
    span = ir::add(span, ir::mul(last, strides[k]));
  }
  return span;
}

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_BUFFER_LAYOUT_H_INTERNAL_
