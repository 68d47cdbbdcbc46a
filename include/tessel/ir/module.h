// IRModule: named PrimFuncs. GlobalVar names a function of the module (as the op of a Call).
// Functions are keyed by name, so two modules are structurally equal when their functions of the
// same name are; printing lists them sorted by name.
#ifndef TESSEL_IR_MODULE_H_
#define TESSEL_IR_MODULE_H_

#include <tessel/ir/function.h>

namespace tessel {
namespace ir {

class GlobalVarNode : public Object {
 public:
  String name_hint;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.GlobalVar", GlobalVarNode, Object);
};
class GlobalVar : public ObjectRef {
 public:
  explicit GlobalVar(String name_hint);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(GlobalVar, ObjectRef, GlobalVarNode);
};

class IRModuleNode : public Object {
 public:
  Map<String, PrimFunc> functions;
  Map<String, Any> attrs;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.IRModule", IRModuleNode, Object);
};
class IRModule : public ObjectRef {
 public:
  explicit IRModule(Map<String, PrimFunc> functions = {}, Map<String, Any> attrs = {});
  // The function `name`; fails (KeyError) listing the module's functions when absent.
  PrimFunc Lookup(const String& name) const;
  // Function names, sorted.
  std::vector<String> FunctionNames() const;
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(IRModule, ObjectRef, IRModuleNode);
  TESSEL_DEFINE_COW_METHOD(IRModuleNode);
};

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_MODULE_H_
