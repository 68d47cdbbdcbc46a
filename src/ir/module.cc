// PrimFunc, GlobalVar and IRModule.
#include <tessel/ir/module.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <sstream>

namespace tessel {
namespace ir {

PrimFunc::PrimFunc(Array<Var> params, Stmt body, Map<Var, Buffer> buffer_map,
                   Map<String, Any> attrs, DataType ret_type) {
  if (!body.defined()) TVM_FFI_THROW(ValueError) << "PrimFunc: body is undefined";
  for (const auto& kv : buffer_map) {
    bool found = false;
    for (const Var& p : params) found = found || p.same_as(kv.first);
    if (!found) {
      TVM_FFI_THROW(ValueError) << "PrimFunc: buffer_map key " << kv.first->name_hint
                                << " is not a parameter";
    }
    if (!kv.first.dtype().is_handle()) {
      TVM_FFI_THROW(TypeError) << "PrimFunc: parameter " << kv.first->name_hint
                               << " maps to a buffer but is not a handle";
    }
  }
  auto n = make_object<PrimFuncNode>();
  n->params = std::move(params);
  n->buffer_map = std::move(buffer_map);
  n->ret_type = ret_type;
  n->body = std::move(body);
  n->attrs = std::move(attrs);
  data_ = std::move(n);
}

Optional<String> PrimFunc::GetGlobalSymbol() const {
  auto it = get()->attrs.find("global_symbol");
  if (it == get()->attrs.end()) return std::nullopt;
  return (*it).second.try_cast<String>();
}

GlobalVar::GlobalVar(String name_hint) {
  auto n = make_object<GlobalVarNode>();
  n->name_hint = std::move(name_hint);
  data_ = std::move(n);
}

IRModule::IRModule(Map<String, PrimFunc> functions, Map<String, Any> attrs) {
  auto n = make_object<IRModuleNode>();
  n->functions = std::move(functions);
  n->attrs = std::move(attrs);
  data_ = std::move(n);
}

std::vector<String> IRModule::FunctionNames() const {
  std::vector<String> names;
  for (const auto& kv : get()->functions) names.push_back(kv.first);
  std::sort(names.begin(), names.end(),
            [](const String& a, const String& b) { return a.compare(b) < 0; });
  return names;
}

PrimFunc IRModule::Lookup(const String& name) const {
  auto it = get()->functions.find(name);
  if (it != get()->functions.end()) return (*it).second;
  std::ostringstream os;
  for (const String& n : FunctionNames()) os << " " << n;
  TVM_FFI_THROW(KeyError) << "IRModule has no function " << name << "; it has:" << os.str();
  TVM_FFI_UNREACHABLE();
}

}  // namespace ir
}  // namespace tessel
