// The arith layer's face to Python through tvm-ffi: result objects with reflected fields, and an
// Analyzer object ("tessel.arith.Analyzer") whose methods mirror tvm.arith.Analyzer.
#include <tessel/arith/analyzer.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <memory>

namespace tessel {
namespace arith {

using tvm::ffi::Any;
using tvm::ffi::Function;
using tvm::ffi::Map;
using tvm::ffi::ObjectRef;

// The Analyzer behind a reference-counted handle (the Analyzer itself is not copyable).
class AnalyzerObj : public tvm::ffi::Object {
 public:
  std::unique_ptr<Analyzer> analyzer;
  AnalyzerObj() : analyzer(std::make_unique<Analyzer>()) {}
  explicit AnalyzerObj(std::unique_ptr<Analyzer> a) : analyzer(std::move(a)) {}
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.Analyzer", AnalyzerObj, tvm::ffi::Object);
};

namespace {

namespace refl = tvm::ffi::reflection;

ObjectRef NewAnalyzer() { return ObjectRef(tvm::ffi::make_object<AnalyzerObj>()); }

ProofStrength ParseStrength(const tvm::ffi::String& s) {
  if (s == "default") return ProofStrength::kDefault;
  if (s == "symbolic_bound") return ProofStrength::kSymbolicBound;
  TVM_FFI_THROW(ValueError)
      << "can_prove: strength must be \"default\" or \"symbolic_bound\", got \"" << s << "\"";
  TVM_FFI_UNREACHABLE();
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
      .def("int_set", [](const AnalyzerObj* self, PrimExpr e,
                         Map<Var, Range> dom) { return self->analyzer->IntSet(e, dom); })
      .def("simplify",
           [](const AnalyzerObj* self, PrimExpr e) { return self->analyzer->Simplify(e); })
      .def("can_prove",
           [](const AnalyzerObj* self, PrimExpr cond, tvm::ffi::String strength) {
             return self->analyzer->CanProve(cond, ParseStrength(strength));
           })
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
      // Opens a constraint scope; calling the returned function closes it.
      .def("enter_constraint_scope",
           [](const AnalyzerObj* self, PrimExpr cond) {
             auto scope = std::make_shared<std::unique_ptr<ConstraintScope>>(
                 std::make_unique<ConstraintScope>(self->analyzer.get(), cond));
             return Function::FromTyped([scope]() { scope->reset(); });
           })
      .def("clone", [](const AnalyzerObj* self) {
        return ObjectRef(tvm::ffi::make_object<AnalyzerObj>(self->analyzer->Clone()));
      });
  refl::GlobalDef()
      .def("tessel.arith.CreateAnalyzer", NewAnalyzer)
      .def("tessel.arith.ConstIntBound",
           [](int64_t lo, int64_t hi) { return ConstIntBound(lo, hi); })
      .def("tessel.arith.ModularSet", [](int64_t c, int64_t b) { return ModularSet(c, b); })
      .def("tessel.arith.EvalSet", [](PrimExpr e, Map<Var, Range> dom) { return EvalSet(e, dom); });
}

}  // namespace arith
}  // namespace tessel
