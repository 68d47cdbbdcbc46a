// The pass infrastructure's face to Python through tvm-ffi: reflected Pass and PassContext
// objects, and global functions to build, run and look up passes and to verify modules.
#include <tessel/transform/pass.h>
#include <tessel/transform/verify_well_formed.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

namespace tessel {
namespace transform {

namespace {

namespace refl = tvm::ffi::reflection;
using tvm::ffi::Any;
using tvm::ffi::Map;
using tvm::ffi::Optional;

Map<String, Any> ErrorToMap(const VerifyError& e) {
  Map<String, Any> m;
  m.Set("check", String(e.check));
  m.Set("function", String(e.function));
  m.Set("message", String(e.message));
  m.Set("node", e.node);
  m.Set("stmt", e.stmt);
  m.Set("text", String(e.ToString()));
  return m;
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<PassNode>(refl::init(false))
      .def_ro("name", &PassNode::name)
      .def_ro("opt_level", &PassNode::opt_level);
  refl::ObjectDef<ModulePassNode>(refl::init(false));
  refl::ObjectDef<SequentialNode>(refl::init(false)).def_ro("passes", &SequentialNode::passes);
  refl::ObjectDef<PassContextNode>(refl::init(false))
      .def_ro("opt_level", &PassContextNode::opt_level)
      .def_ro("disabled_passes", &PassContextNode::disabled_passes)
      .def_ro("dump_dir", &PassContextNode::dump_dir)
      .def_ro("dump_changed_only", &PassContextNode::dump_changed_only)
      .def_ro("print_timing", &PassContextNode::print_timing)
      .def_ro("verify_each", &PassContextNode::verify_each);

  refl::GlobalDef()
      // Options not given (None) keep the environment's value.
      .def("tessel.transform.PassContext",
           [](Optional<int64_t> opt_level, Optional<Array<String>> disabled_passes,
              Optional<String> dump_dir, Optional<bool> dump_changed_only,
              Optional<bool> print_timing, Optional<bool> verify_each) {
             PassContext ctx;
             auto* n = const_cast<PassContextNode*>(ctx.get());
             if (opt_level) n->opt_level = *opt_level;
             if (disabled_passes) n->disabled_passes = *disabled_passes;
             if (dump_dir) n->dump_dir = *dump_dir;
             if (dump_changed_only) n->dump_changed_only = *dump_changed_only;
             if (print_timing) n->print_timing = *print_timing;
             if (verify_each) n->verify_each = *verify_each;
             return ctx;
           })
      .def("tessel.transform.CurrentPassContext", []() { return PassContext::Current(); })
      .def("tessel.transform.EnterPassContext", [](PassContext ctx) { PassContext::Enter(ctx); })
      .def("tessel.transform.ExitPassContext", [](PassContext ctx) { PassContext::Exit(ctx); })
      // One map per record: name, depth, seconds.
      .def("tessel.transform.PassContextTimings",
           [](PassContext ctx) {
             Array<Map<String, Any>> out;
             for (const PassTiming& t : ctx->Timings()) {
               Map<String, Any> m;
               m.Set("name", String(t.name));
               m.Set("depth", static_cast<int64_t>(t.depth));
               m.Set("seconds", t.seconds);
               out.push_back(m);
             }
             return out;
           })
      .def("tessel.transform.PassContextFormatTimings",
           [](PassContext ctx) { return String(ctx->FormatTimings()); })
      .def("tessel.transform.PassContextClearTimings",
           [](PassContext ctx) {
             std::lock_guard<std::mutex> lock(ctx->mutex);
             const_cast<PassContextNode*>(ctx.get())->timings.clear();
           })
      .def("tessel.transform.CreateModulePass",
           [](tvm::ffi::Function func, int64_t opt_level, String name) {
             return CreateModulePass(std::move(func), opt_level, std::move(name));
           })
      .def("tessel.transform.CreatePrimFuncPass",
           [](tvm::ffi::Function func, int64_t opt_level, String name) {
             return CreatePrimFuncPass(std::move(func), opt_level, std::move(name));
           })
      .def("tessel.transform.Sequential",
           [](Array<Pass> passes, String name) { return Sequential(passes, name); })
      .def("tessel.transform.RunPass", [](Pass pass, IRModule mod) { return pass(mod); })
      .def("tessel.transform.GetPass", [](String name) { return GetPass(name); })
      .def("tessel.transform.ListPasses",
           []() {
             Array<String> out;
             for (const String& n : ListPasses()) out.push_back(n);
             return out;
           })
      // The factory takes no arguments and returns a Pass.
      .def("tessel.transform.RegisterPass",
           [](String name, tvm::ffi::Function factory) {
             RegisterPass(name, [factory]() { return factory().cast<Pass>(); });
           })
      .def("tessel.transform.VerifyWellFormed", [](ObjectRef node) {
        std::vector<VerifyError> errors;
        if (auto m = node.as<IRModule>()) {
          errors = VerifyWellFormed(*m);
        } else if (auto f = node.as<PrimFunc>()) {
          errors = VerifyWellFormed(*f);
        } else {
          TVM_FFI_THROW(TypeError)
              << "VerifyWellFormed expects an IRModule or a PrimFunc, got " << node->GetTypeKey();
        }
        Array<Map<String, Any>> out;
        for (const VerifyError& e : errors) out.push_back(ErrorToMap(e));
        return out;
      });
}

}  // namespace transform
}  // namespace tessel
