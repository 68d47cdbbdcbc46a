// The arith layer's face to Python through tvm-ffi: result objects with reflected fields, and an
// Analyzer object ("tessel.arith.Analyzer") whose methods mirror tvm.arith.Analyzer.
#include <tessel/arith/analyzer.h>
#include <tessel/arith/z3_prover.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/cast.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace tessel {
namespace arith {

using tvm::ffi::Any;
using tvm::ffi::Function;
using tvm::ffi::Map;
using tvm::ffi::ObjectRef;

// The Analyzer behind a reference-counted handle (the Analyzer itself is not copyable), and the
// constraint scopes opened on it from Python. Python may leave scopes in any order, leave one
// twice, or drop one without leaving it (also after dropping the analyzer, or at interpreter
// exit, where objects die in no particular order), so the scopes live here rather than in the
// function that leaves them: that function holds a reference to this object, and a scope is
// left only when it is the innermost one open (leaving an outer one first is a ValueError; a
// dropped inner one is left when the scopes above it are).
class AnalyzerObj : public tvm::ffi::Object {
 public:
  struct OpenScope {
    uint64_t id;
    bool dropped;  // its leave function is gone: leave it as soon as it is innermost
    std::unique_ptr<ConstraintScope> scope;
  };
  std::unique_ptr<Analyzer> analyzer;
  std::vector<OpenScope> scopes;  // outermost first
  uint64_t next_scope_id = 0;

  AnalyzerObj() : analyzer(std::make_unique<Analyzer>()) {}
  explicit AnalyzerObj(std::unique_ptr<Analyzer> a) : analyzer(std::move(a)) {}
  ~AnalyzerObj() {
    while (!scopes.empty()) scopes.pop_back();  // innermost first, before the analyzer goes
  }
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.Analyzer", AnalyzerObj, tvm::ffi::Object);

  uint64_t Enter(const PrimExpr& cond) {
    uint64_t id = next_scope_id++;
    scopes.push_back({id, false, std::make_unique<ConstraintScope>(analyzer.get(), cond)});
    return id;
  }
  // Leaves scope `id` (nothing when it was left already). `dropped`: called as its leave
  // function dies, which must not throw; an outer scope is then only marked.
  void Leave(uint64_t id, bool dropped) {
    auto it =
        std::find_if(scopes.begin(), scopes.end(), [id](const OpenScope& s) { return s.id == id; });
    if (it == scopes.end()) return;
    if (it + 1 != scopes.end()) {
      if (dropped) {
        it->dropped = true;
        return;
      }
      TVM_FFI_THROW(ValueError) << "constraint scopes must be left in reverse order of entry: "
                                << "this scope is left while " << (scopes.end() - it - 1)
                                << " scope(s) entered after it are still open";
    }
    scopes.pop_back();
    while (!scopes.empty() && scopes.back().dropped) scopes.pop_back();
  }
};

// The analyzer behind a handle (the iterator-map globals take one, iter_map_expr.cc).
Analyzer* AnalyzerFromHandle(const ObjectRef& handle) {
  const auto* obj = handle.as<AnalyzerObj>();
  if (!obj) {
    TVM_FFI_THROW(TypeError) << "expected a tessel.arith.Analyzer, got " << handle.GetTypeKey();
  }
  return obj->analyzer.get();
}

namespace {

namespace refl = tvm::ffi::reflection;

ObjectRef NewAnalyzer() { return ObjectRef(tvm::ffi::make_object<AnalyzerObj>()); }

// A dom_map whose values are Ranges or IntSets, as IntSets (TVM's int_set takes either).
Map<Var, IntSet> ToIntSetDom(const Map<Var, Any>& dom, const char* where) {
  Map<Var, IntSet> out;
  for (const auto& kv : dom) {
    if (auto r = kv.second.try_cast<Range>()) {
      out.Set(kv.first, IntSet::FromRange(*r));
    } else if (auto s = kv.second.try_cast<IntSet>()) {
      out.Set(kv.first, *s);
    } else {
      TVM_FFI_THROW(TypeError) << where << ": the domain of " << kv.first->name_hint
                               << " must be a Range or an IntSet, got " << kv.second.GetTypeKey();
    }
  }
  return out;
}

// What a Python user would call the type of v.
std::string PythonTypeName(const Any& v) {
  switch (v.type_index()) {
    case tvm::ffi::TypeIndex::kTVMFFINone:
      return "NoneType";
    case tvm::ffi::TypeIndex::kTVMFFIBool:
      return "bool";
    case tvm::ffi::TypeIndex::kTVMFFIInt:
      return "int";
    case tvm::ffi::TypeIndex::kTVMFFIFloat:
      return "float";
    case tvm::ffi::TypeIndex::kTVMFFISmallStr:
    case tvm::ffi::TypeIndex::kTVMFFIStr:
      return "str";
    default:
      return v.GetTypeKey();
  }
}

// The Python face passes its arguments through unchecked (checking them in Python cost more than
// the simplification of a small expression): what Python users may pass is checked here. A
// PrimExpr passes; a Python bool or int becomes a bool or int32 constant.
PrimExpr ExprArg(const Any& v, const char* what) {
  switch (v.type_index()) {
    case tvm::ffi::TypeIndex::kTVMFFIBool:
      return ir::IntImm(DataType::Bool(), v.cast<bool>() ? 1 : 0);
    case tvm::ffi::TypeIndex::kTVMFFIInt: {
      int64_t x = v.cast<int64_t>();
      if (!ir::FitsInDType(DataType::Int(32), x)) {
        TVM_FFI_THROW(ValueError) << what << ": " << x << " does not fit in int32";
      }
      return ir::IntImm(DataType::Int(32), x);
    }
    default:
      if (v.as<ir::PrimExprNode>()) return v.cast<PrimExpr>();
      TVM_FFI_THROW(TypeError) << what << ": expected a PrimExpr or a Python int, got "
                               << PythonTypeName(v);
  }
  TVM_FFI_UNREACHABLE();
}

ProofStrength ParseStrength(const tvm::ffi::String& s) {
  if (s == "default") return ProofStrength::kDefault;
  if (s == "symbolic_bound") return ProofStrength::kSymbolicBound;
  TVM_FFI_THROW(ValueError)
      << "can_prove: strength must be \"default\" or \"symbolic_bound\", got \"" << s << "\"";
  TVM_FFI_UNREACHABLE();
}

ProofStrength ParseStrength(const Any& v) {
  int32_t t = v.type_index();
  if (t != tvm::ffi::TypeIndex::kTVMFFISmallStr && t != tvm::ffi::TypeIndex::kTVMFFIStr) {
    TVM_FFI_THROW(TypeError) << "can_prove: strength must be a str, got " << PythonTypeName(v);
  }
  return ParseStrength(v.cast<tvm::ffi::String>());
}

PrimExpr PySimplify(const AnalyzerObj* self, Any e, Any steps) {
  if (steps.type_index() != tvm::ffi::TypeIndex::kTVMFFIInt) {
    TVM_FFI_THROW(TypeError) << "simplify: steps must be an int, got " << PythonTypeName(steps);
  }
  int64_t n = steps.cast<int64_t>();
  if (n < 0) TVM_FFI_THROW(ValueError) << "simplify: steps must be >= 0, got " << n;
  return self->analyzer->Simplify(ExprArg(e, "simplify"),
                                  static_cast<int>(std::min<int64_t>(n, 1 << 20)));
}

bool PyCanProve(const AnalyzerObj* self, Any cond, Any strength) {
  ProofStrength st = ParseStrength(strength);
  return self->analyzer->CanProve(ExprArg(cond, "can_prove"), st);
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<ConstIntBoundNode>(refl::init(false))
      .def_ro("min_value", &ConstIntBoundNode::min_value)
      .def_ro("max_value", &ConstIntBoundNode::max_value);
  refl::ObjectDef<ModularSetNode>(refl::init(false))
      .def_ro("coeff", &ModularSetNode::coeff)
      .def_ro("base", &ModularSetNode::base);
  refl::ObjectDef<IntSetNode>(refl::init(false))
      .def_ro("min_value", &IntSetNode::min_value)
      .def_ro("max_value", &IntSetNode::max_value);
  refl::ObjectDef<AnalyzerObj>(refl::init(false))
      .def("const_int_bound",
           [](const AnalyzerObj* self, PrimExpr e) { return self->analyzer->ConstIntBound(e); })
      .def("modular_set",
           [](const AnalyzerObj* self, PrimExpr e) { return self->analyzer->ModularSet(e); })
      .def("int_set",
           [](const AnalyzerObj* self, PrimExpr e, Map<Var, Any> dom) {
             return self->analyzer->IntSet(e, ToIntSetDom(dom, "Analyzer.int_set"));
           })
      .def("simplify", PySimplify)
      .def("rewrite_simplify",
           [](const AnalyzerObj* self, PrimExpr e) { return self->analyzer->RewriteSimplify(e); })
      .def("canonical_simplify",
           [](const AnalyzerObj* self, PrimExpr e) { return self->analyzer->CanonicalSimplify(e); })
      .def("can_prove_equal", [](const AnalyzerObj* self, PrimExpr a,
                                 PrimExpr b) { return self->analyzer->CanProveEqual(a, b); })
      .def("can_prove_greater_equal",
           [](const AnalyzerObj* self, PrimExpr e, int64_t lower) {
             return self->analyzer->CanProveGreaterEqual(e, lower);
           })
      .def("can_prove_less", [](const AnalyzerObj* self, PrimExpr e,
                                int64_t upper) { return self->analyzer->CanProveLess(e, upper); })
      // TVM's Analyzer.update: a ConstIntBound or ModularSet fact about var, told straight to that
      // sub-analyzer (no binding record, extensions not told).
      .def("update",
           [](const AnalyzerObj* self, Var var, Any info, bool allow_override) {
             if (auto b = info.try_cast<ConstIntBound>()) {
               self->analyzer->const_int_bound_analyzer().Update(var, *b, allow_override);
             } else if (auto m = info.try_cast<ModularSet>()) {
               self->analyzer->modular_set_analyzer().Update(var, *m, allow_override);
             } else {
               TVM_FFI_THROW(TypeError)
                   << "Analyzer.update: expected a ConstIntBound or a ModularSet for "
                   << var->name_hint << ", got " << info.GetTypeKey();
             }
           })
      .def("can_prove", PyCanProve)
      .def("bind",
           [](const AnalyzerObj* self, Var var, Any value, bool allow_override) {
             if (auto r = value.try_cast<Range>()) {
               self->analyzer->Bind(var, *r, allow_override);
             } else if (auto e = value.try_cast<PrimExpr>()) {
               self->analyzer->Bind(var, *e, allow_override);
             } else {
               TVM_FFI_THROW(TypeError)
                   << "Analyzer.bind: expected a Range or a PrimExpr for " << var->name_hint;
             }
           })
      // Opens a constraint scope; calling the returned function closes it (a second call does
      // nothing). The function keeps the analyzer alive; dropping it closes the scope too.
      .def("enter_constraint_scope",
           [](const AnalyzerObj* self, PrimExpr cond) {
             // Leaves the scope when the last copy of the function dies.
             struct Handle {
               ObjectRef ref;
               AnalyzerObj* owner;
               uint64_t id;
               Handle(const AnalyzerObj* obj, const PrimExpr& cond)
                   : ref(tvm::ffi::GetRef<ObjectRef>(obj)),
                     owner(const_cast<AnalyzerObj*>(obj)),
                     id(owner->Enter(cond)) {}
               Handle(const Handle&) = delete;
               Handle& operator=(const Handle&) = delete;
               ~Handle() { owner->Leave(id, /*dropped=*/true); }
             };
             auto handle = std::make_shared<Handle>(self, cond);
             return Function::FromTyped([handle]() { handle->owner->Leave(handle->id, false); });
           })
      .def("set_assume_no_overflow",
           [](const AnalyzerObj* self, bool on) { self->analyzer->SetAssumeNoOverflow(on); })
      .def("assume_no_overflow",
           [](const AnalyzerObj* self) { return self->analyzer->assume_no_overflow(); })
      .def("clone", [](const AnalyzerObj* self) {
        return ObjectRef(tvm::ffi::make_object<AnalyzerObj>(self->analyzer->Clone()));
      });
  refl::GlobalDef()
      .def("tessel.arith.CreateAnalyzer", NewAnalyzer)
      // The Python Analyzer's simplify and can_prove call these globals (a global function call
      // is a little cheaper than a reflected method's).
      .def("tessel.arith.AnalyzerSimplify", PySimplify)
      .def("tessel.arith.AnalyzerCanProve", PyCanProve)
      .def("tessel.arith.ConstIntBound",
           [](int64_t lo, int64_t hi) { return ConstIntBound(lo, hi); })
      .def("tessel.arith.ModularSet", [](int64_t c, int64_t b) { return ModularSet(c, b); })
      .def("tessel.arith.EvalSet",
           [](PrimExpr e, Map<Var, Any> dom) { return EvalSet(e, ToIntSetDom(dom, "EvalSet")); })
      .def("tessel.arith.IntSetInterval",
           [](tvm::ffi::Optional<PrimExpr> lo, tvm::ffi::Optional<PrimExpr> hi) {
             return IntSet(lo, hi);
           })
      .def("tessel.arith.IntSetFromRange", [](Range r) { return IntSet::FromRange(r); })
      .def("tessel.arith.IntSetIsSinglePoint", [](IntSet s) { return s->IsSinglePoint(); });
}

// ---- The Z3 prover (issue 4, z3_prover.h): global functions over an Analyzer handle ----
namespace {

Z3Prover& Z3Of(const ObjectRef& handle, const char* where) {
  const auto* obj = handle.as<AnalyzerObj>();
  if (!obj) {
    TVM_FFI_THROW(TypeError) << where << ": expected a tessel.arith.Analyzer, got "
                             << handle.GetTypeKey();
  }
  Z3Prover* prover = GetZ3Prover(*obj->analyzer);
  if (!prover) TVM_FFI_THROW(ValueError) << where << ": this analyzer has no Z3 prover";
  return *prover;
}

std::string I128Text(i128 v) {
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u);
  return neg ? "-" + s : s;
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::GlobalDef()
      .def("tessel.arith.Z3Available", []() { return Z3Prover::Available(); })
      .def("tessel.arith.Z3GetSMTLIB2",
           [](ObjectRef a, PrimExpr cond) {
             return tvm::ffi::String(Z3Of(a, "Analyzer.get_smtlib2").GetSMTLIB2(cond));
           })
      .def("tessel.arith.Z3SetRLimit",
           [](ObjectRef a, int64_t n) { Z3Of(a, "Analyzer.set_z3_rlimit").set_rlimit(n); })
      .def("tessel.arith.Z3RLimit",
           [](ObjectRef a) { return Z3Of(a, "Analyzer.z3_rlimit").rlimit(); })
      .def("tessel.arith.Z3Stats",
           [](ObjectRef a) {
             Z3Stats s = Z3Of(a, "Analyzer.z3_stats").stats();
             Map<tvm::ffi::String, Any> out;
             out.Set("queries", s.queries);
             out.Set("cache_hits", s.cache_hits);
             out.Set("proved", s.proved);
             out.Set("refuted", s.refuted);
             out.Set("unknown", s.unknown);
             out.Set("resource_limit", s.resource_limit);
             out.Set("seconds", s.seconds);
             out.Set("skipped", s.skipped);
             out.Set("refuted_cheaply", s.refuted_cheaply);
             return out;
           })
      // [[var, value as decimal text], ...] in the prover's order, or None when not refuted.
      .def("tessel.arith.Z3Counterexample",
           [](ObjectRef a, PrimExpr cond) -> tvm::ffi::Optional<tvm::ffi::Array<Any>> {
             auto cx = Z3Of(a, "Analyzer.z3_counterexample").Counterexample(cond);
             if (!cx) return std::nullopt;
             tvm::ffi::Array<Any> out;
             for (const auto& [var, value] : *cx) {
               out.push_back(tvm::ffi::Array<Any>{var, tvm::ffi::String(I128Text(value))});
             }
             return out;
           });
}

}  // namespace arith
}  // namespace tessel
