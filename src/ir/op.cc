// The op registry: one Op object per name, created at library load by TESSEL_REGISTER_OP.
#include <tessel/ir/op.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace tessel {
namespace ir {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<std::string, Op> ops;
  static Registry* Global() {
    static Registry* r = new Registry();  // never destroyed: ops outlive static destructors
    return r;
  }
};

}  // namespace

Optional<Op> Op::Find(const std::string& name) {
  Registry* r = Registry::Global();
  std::lock_guard<std::mutex> lock(r->mu);
  auto it = r->ops.find(name);
  if (it == r->ops.end()) return std::nullopt;
  return it->second;
}

Op Op::Get(const std::string& name) {
  if (auto op = Find(name)) return *op;
  TVM_FFI_THROW(ValueError) << "unknown op '" << name << "'";
  TVM_FFI_UNREACHABLE();
}

std::vector<std::string> Op::ListNames() {
  Registry* r = Registry::Global();
  std::lock_guard<std::mutex> lock(r->mu);
  std::vector<std::string> names;
  for (const auto& kv : r->ops) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  return names;
}

OpRegEntry::OpRegEntry(const std::string& name) {
  Registry* r = Registry::Global();
  std::lock_guard<std::mutex> lock(r->mu);
  if (r->ops.count(name)) {
    TVM_FFI_THROW(InternalError) << "op '" << name << "' is registered twice";
  }
  auto n = make_object<OpNode>();
  n->name = name;
  node_ = n.get();
  r->ops.emplace(name, Op(std::move(n)));
}

OpRegEntry& OpRegEntry::NumInputs(int32_t n) {
  node_->num_inputs = n;
  return *this;
}
OpRegEntry& OpRegEntry::Effect(CallEffectKind kind) {
  node_->effect = kind;
  return *this;
}
OpRegEntry& OpRegEntry::Infix(const std::string& symbol, int32_t precedence) {
  node_->print_style = OpPrintStyle::kInfix;
  node_->print_symbol = symbol;
  node_->print_precedence = precedence;
  return *this;
}
OpRegEntry& OpRegEntry::Prefix(const std::string& symbol) {
  node_->print_style = OpPrintStyle::kPrefix;
  node_->print_symbol = symbol;
  return *this;
}
OpRegEntry& OpRegEntry::CallWithDType() {
  node_->print_style = OpPrintStyle::kCallWithDType;
  return *this;
}
OpRegEntry& OpRegEntry::Attr(const std::string& key, Any value) {
  node_->attrs.Set(key, std::move(value));
  return *this;
}

}  // namespace ir
}  // namespace tessel
