// The base of every expression (PrimExpr) and the leaves that Buffer needs: constants, variables,
// and Range. The other expression nodes are in expr.h.
//
// Every IR node is a tvm-ffi object registered with reflection: fields are visible from Python
// under the names used here, and structural equality and hashing come from that reflection.
// Variables compare by binding position (kTVMFFISEqHashKindFreeVar); their names are ignored.
#ifndef TESSEL_IR_PRIM_EXPR_H_
#define TESSEL_IR_PRIM_EXPR_H_

#include <tessel/ir/dtype.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>
#include <utility>

namespace tessel {
namespace ir {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::make_object;
using tvm::ffi::Map;
using tvm::ffi::Object;
using tvm::ffi::ObjectPtr;
using tvm::ffi::ObjectRef;
using tvm::ffi::Optional;
using tvm::ffi::String;

// Copy-on-write access for a handle: clones the node when it is shared, so a mutator can edit a
// node in place exactly when nobody else can observe the edit.
#define TESSEL_DEFINE_COW_METHOD(NodeName)                                          \
  NodeName* CopyOnWrite() {                                                         \
    if (!data_.unique()) data_ = ::tvm::ffi::make_object<NodeName>(*(this->get())); \
    return static_cast<NodeName*>(data_.get());                                     \
  }

// Every node kind has a final node class and a non-nullable handle class of the same name.
#define TESSEL_DEFINE_NODE_REF(Name, Parent)                               \
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Name, Parent, Name##Node); \
  TESSEL_DEFINE_COW_METHOD(Name##Node)

class PrimExprNode : public Object {
 public:
  DataType dtype;

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  static constexpr uint32_t _type_child_slots = 64;
  TVM_FFI_DECLARE_OBJECT_INFO("tessel.ir.PrimExpr", PrimExprNode, Object);
};

// A handle to any expression. Integers convert to int32 constants and doubles to float32
// constants, as in TVM, so that `x + 1` reads naturally in C++.
class PrimExpr : public ObjectRef {
 public:
  PrimExpr(int32_t value);  // NOLINT(google-explicit-constructor)
  PrimExpr(float value);    // NOLINT(google-explicit-constructor)
  DataType dtype() const { return get()->dtype; }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(PrimExpr, ObjectRef, PrimExprNode);
};

// An integer constant; value is within dtype's range (bool: 0 or 1).
class IntImmNode : public PrimExprNode {
 public:
  int64_t value;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.IntImm", IntImmNode, PrimExprNode);
};
class IntImm : public PrimExpr {
 public:
  // Fails (ValueError) when dtype is not an integer or bool scalar, or value does not fit.
  IntImm(DataType dtype, int64_t value);
  TESSEL_DEFINE_NODE_REF(IntImm, PrimExpr);
};

class FloatImmNode : public PrimExprNode {
 public:
  double value;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.FloatImm", FloatImmNode, PrimExprNode);
};
class FloatImm : public PrimExpr {
 public:
  FloatImm(DataType dtype, double value);
  TESSEL_DEFINE_NODE_REF(FloatImm, PrimExpr);
};

// A string constant (dtype handle); used as intrinsic arguments and attribute values.
class StringImmNode : public PrimExprNode {
 public:
  String value;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.StringImm", StringImmNode, PrimExprNode);
};
class StringImm : public PrimExpr {
 public:
  explicit StringImm(String value);
  TESSEL_DEFINE_NODE_REF(StringImm, PrimExpr);
};

// A variable. Identity matters, not the name: two Vars named "i" are different variables.
// A Var of dtype handle may carry the element type it points to (pointee) and a storage scope.
class VarNode : public PrimExprNode {
 public:
  String name_hint;
  // For handles that point at buffer data: the element type (void when unknown).
  DataType pointee;
  String storage_scope;

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindFreeVar;
  static constexpr uint32_t _type_child_slots = 1;
  TVM_FFI_DECLARE_OBJECT_INFO("tessel.ir.Var", VarNode, PrimExprNode);
};
class Var : public PrimExpr {
 public:
  explicit Var(String name_hint, DataType dtype = DataType::Int(32));
  // A handle variable pointing at `pointee` elements in `storage_scope` ("global", "shared", ...).
  static Var Pointer(String name_hint, DataType pointee, String storage_scope = "global");
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(Var, PrimExpr, VarNode);
  TESSEL_DEFINE_COW_METHOD(VarNode);
};

// A variable known to be non-negative (a size, such as a symbolic shape dimension).
class SizeVarNode : public VarNode {
 public:
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindFreeVar;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.SizeVar", SizeVarNode, VarNode);
};
class SizeVar : public Var {
 public:
  explicit SizeVar(String name_hint, DataType dtype = DataType::Int(32));
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(SizeVar, Var, SizeVarNode);
};

// The half-open interval [min, min + extent).
class RangeNode : public Object {
 public:
  PrimExpr min;
  PrimExpr extent;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Range", RangeNode, Object);
};
class Range : public ObjectRef {
 public:
  // Fails when min and extent are not integers of the same dtype.
  Range(PrimExpr min, PrimExpr extent);
  // [begin, end): extent = end - begin, folded when both are constants.
  static Range FromMinEnd(PrimExpr begin, PrimExpr end);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Range, ObjectRef, RangeNode);
};

// Shorthand constructors used throughout the compiler.
inline IntImm Int32(int64_t v) { return IntImm(DataType::Int(32), v); }
inline IntImm Bool(bool v) { return IntImm(DataType::Bool(), v ? 1 : 0); }
// An integer constant of `dtype` (scalar int/uint/bool), or a float constant for float dtypes;
// a vector dtype gives a Broadcast.
PrimExpr MakeConst(DataType dtype, int64_t value);
PrimExpr MakeConst(DataType dtype, double value);
inline PrimExpr MakeConst(DataType dtype, int value) {
  return MakeConst(dtype, static_cast<int64_t>(value));
}

// The value of an integer constant (looking through Broadcast), or nullopt.
std::optional<int64_t> AsConstInt(const PrimExpr& e);

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_PRIM_EXPR_H_
