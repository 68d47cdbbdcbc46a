// Buffer construction and its checks.
#include <tessel/ir/buffer.h>
#include <tvm/ffi/error.h>

namespace tessel {
namespace ir {

Buffer::Buffer(String name, Var data, DataType dtype, Array<PrimExpr> shape,
               Array<PrimExpr> strides, PrimExpr elem_offset, String scope, int64_t data_alignment,
               int64_t offset_factor) {
  if (!data.defined() || !data.dtype().is_handle()) {
    TVM_FFI_THROW(TypeError) << "Buffer " << name << ": data must be a handle variable";
  }
  for (const PrimExpr& s : shape) {
    if (!s.defined() || !s.dtype().is_int_or_uint() || !s.dtype().is_scalar()) {
      TVM_FFI_THROW(TypeError) << "Buffer " << name << ": shape entries must be integers";
    }
  }
  if (!strides.empty() && strides.size() != shape.size()) {
    TVM_FFI_THROW(ValueError) << "Buffer " << name << ": " << strides.size() << " strides for "
                              << shape.size() << " dimensions";
  }
  if (!elem_offset.defined()) elem_offset = IntImm(DataType::Int(32), 0);
  if (data_alignment <= 0 || (data_alignment & (data_alignment - 1)) != 0) {
    TVM_FFI_THROW(ValueError) << "Buffer " << name << ": alignment " << data_alignment
                              << " is not a positive power of two";
  }
  auto n = make_object<BufferNode>();
  n->name = std::move(name);
  n->data = std::move(data);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->strides = std::move(strides);
  n->elem_offset = std::move(elem_offset);
  n->scope = scope.empty() ? String("global") : std::move(scope);
  n->data_alignment = data_alignment;
  n->offset_factor = offset_factor;
  data_ = std::move(n);
}

Buffer MakeBuffer(String name, DataType dtype, Array<PrimExpr> shape, String scope) {
  Var data = Var::Pointer(name, dtype, scope);
  return Buffer(name, data, dtype, std::move(shape), {}, IntImm(DataType::Int(32), 0), scope,
                kDefaultBufferAlignment, 1);
}

}  // namespace ir
}  // namespace tessel
