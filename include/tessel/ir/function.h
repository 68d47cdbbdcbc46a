// PrimFunc: a low-level tensor function. Parameters are scalars or handles; buffer_map gives the
// Buffer each handle parameter is viewed as (its shape may introduce symbolic size variables, bound
// by the caller's arguments). attrs carry function attributes ("global_symbol", "target", ...).
#ifndef TESSEL_IR_FUNCTION_H_
#define TESSEL_IR_FUNCTION_H_

#include <tessel/ir/stmt.h>

namespace tessel {
namespace ir {

class PrimFuncNode : public Object {
 public:
  Array<Var> params;
  Map<Var, Buffer> buffer_map;
  // The return type: void for kernels, a scalar for functions that return a value.
  DataType ret_type;
  Stmt body;
  Map<String, Any> attrs;

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.PrimFunc", PrimFuncNode, Object);
};

class PrimFunc : public ObjectRef {
 public:
  // Fails when a buffer_map key is not a handle parameter of this function.
  PrimFunc(Array<Var> params, Stmt body, Map<Var, Buffer> buffer_map = {},
           Map<String, Any> attrs = {}, DataType ret_type = DataType::Void());
  // attrs["global_symbol"] when it is a string.
  Optional<String> GetGlobalSymbol() const;
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(PrimFunc, ObjectRef, PrimFuncNode);
  TESSEL_DEFINE_COW_METHOD(PrimFuncNode);
};

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_FUNCTION_H_
