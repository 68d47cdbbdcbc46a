// Buffer: a typed, shaped view of memory reached through a handle variable.
//
// Element (i0, ..., ik) lives at data[elem_offset + sum(ij * strides[j])]; an empty `strides` means
// compact row-major strides derived from `shape`. `scope` names the memory ("global", "shared",
// "local", "shared.dyn"). `data_alignment` is in bytes; `offset_factor` says elem_offset is a
// multiple of it (0: unknown).
#ifndef TESSEL_IR_BUFFER_H_
#define TESSEL_IR_BUFFER_H_

#include <tessel/ir/prim_expr.h>

namespace tessel {
namespace ir {

class BufferNode : public Object {
 public:
  String name;
  Var data;
  DataType dtype;
  Array<PrimExpr> shape;
  Array<PrimExpr> strides;
  PrimExpr elem_offset;
  String scope;
  int64_t data_alignment;
  int64_t offset_factor;

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Buffer", BufferNode, Object);
};

class Buffer : public ObjectRef {
 public:
  // Fails (ValueError) when data is not a handle, a shape entry is not an integer, or the number
  // of strides is neither 0 nor the number of dimensions.
  Buffer(String name, Var data, DataType dtype, Array<PrimExpr> shape, Array<PrimExpr> strides,
         PrimExpr elem_offset, String scope, int64_t data_alignment, int64_t offset_factor);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(Buffer, ObjectRef, BufferNode);
  TESSEL_DEFINE_COW_METHOD(BufferNode);
};

// The default alignment (bytes) of buffers the compiler allocates or requires of arguments.
constexpr int64_t kDefaultBufferAlignment = 64;

// A buffer with a fresh data variable named `name`, compact strides, offset 0, default alignment.
Buffer MakeBuffer(String name, DataType dtype, Array<PrimExpr> shape, String scope = "global");

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_BUFFER_H_
