// The pass infrastructure: a Pass is a named function IRModule -> IRModule with an opt level;
// passes compose into Sequential pipelines and are registered by name. Every pass runs under a
// PassContext, whose options add, around each pass, the debugging instruments:
//
// - IR dumps: with a dump directory, each pass writes `NNN_<pass>_before.py` (before it runs, so a
//   pass that crashes leaves its input behind) and `NNN_<pass>_after.py`, both in the text format;
//   NNN numbers the passes in the order they run within the context (a Sequential takes no
//   number). With dump_changed_only, only passes that changed the IR write their two files.
// - Timing: every pass (and every Sequential, with its passes indented under it) is timed; the
//   records stay on the context, and with `timing` a table goes to stderr after each top-level run.
// - Verification: with verify_each, VerifyWellFormed checks the input of a top-level run
//   (ValueError when the caller's IR is ill-formed) and the output of every pass (InternalError
//   naming the pass that broke it).
//
// A pass returns its input object when it changes nothing, so `out.same_as(in)` is exact for
// "unchanged"; the instruments preserve that.
#ifndef TESSEL_TRANSFORM_PASS_H_
#define TESSEL_TRANSFORM_PASS_H_

#include <tessel/ir/module.h>
#include <tvm/ffi/function.h>

#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {

using ir::IRModule;
using ir::PrimFunc;
using tvm::ffi::Array;
using tvm::ffi::Object;
using tvm::ffi::ObjectRef;
using tvm::ffi::String;

// One timed pass run. depth is the nesting level (0: run directly; 1: inside one Sequential ...).
struct PassTiming {
  std::string name;
  int depth;
  double seconds;
};

class PassContextNode : public Object {
 public:
  // A Sequential skips the passes whose opt_level is above this, and those named in disabled.
  int64_t opt_level = 2;
  Array<String> disabled_passes;
  // Empty: no dumps.
  String dump_dir;
  bool dump_changed_only = false;
  // Print the timing table to stderr after each top-level run.
  bool print_timing = false;
  bool verify_each = false;

  // Records of the runs made under this context, oldest first; guarded by `mutex`, since threads
  // that enter one context append to it at the same time.
  std::vector<PassTiming> timings;
  // The number the next leaf pass takes in dump file names; guarded by `mutex`.
  int64_t pass_counter = 0;
  mutable std::mutex mutex;

  // Nesting depth of the pass this thread is running under this context (0 when idle). Kept per
  // thread: a run on another thread is not nested in this one.
  int DepthOnThisThread() const;

  // A copy of the timing records, taken under the lock.
  std::vector<PassTiming> Timings() const;
  // The timing records as a table: milliseconds, share of the top-level total, name.
  std::string FormatTimings() const;

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.transform.PassContext", PassContextNode, Object);
};

class PassContext : public ObjectRef {
 public:
  // Options start from the environment switches (TESSEL_DUMP_IR, TESSEL_DUMP_IR_CHANGED_ONLY,
  // TESSEL_PASS_TIMING, TESSEL_VERIFY_EACH_PASS: see support/env.h); set fields to override them.
  PassContext();
  // The innermost context entered on this thread; else the thread's default context, built from
  // the environment (rebuilt when the switches change, so its dump numbering continues otherwise).
  static PassContext Current();

  // Makes a context current on this thread for the scope's lifetime.
  class Scope;
  // Python's `with`: Enter pushes, Exit pops (ValueError when ctx is not the innermost).
  static void Enter(PassContext ctx);
  static void Exit(const PassContext& ctx);

  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(PassContext, ObjectRef, PassContextNode);
};

class PassContext::Scope {
 public:
  explicit Scope(PassContext ctx);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  PassContext ctx_;
};

class PassNode : public Object {
 public:
  String name;
  // The lowest PassContext::opt_level at which a Sequential runs this pass.
  int64_t opt_level = 0;

  static constexpr uint32_t _type_child_slots = 4;
  TVM_FFI_DECLARE_OBJECT_INFO("tessel.transform.Pass", PassNode, Object);
};

class Pass : public ObjectRef {
 public:
  // Runs the pass under PassContext::Current(), with its instruments.
  IRModule operator()(IRModule mod) const;
  // Runs the pass under ctx (entered for the duration).
  IRModule operator()(IRModule mod, const PassContext& ctx) const;
  explicit Pass(tvm::ffi::ObjectPtr<PassNode> node) { data_ = std::move(node); }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Pass, ObjectRef, PassNode);
};

// A leaf pass: `func` maps an IRModule to an IRModule.
class ModulePassNode : public PassNode {
 public:
  tvm::ffi::Function func;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.transform.ModulePass", ModulePassNode, PassNode);
};

// A pipeline: runs its passes in order, skipping those the context's opt level or disabled list
// excludes.
class SequentialNode : public PassNode {
 public:
  Array<Pass> passes;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.transform.Sequential", SequentialNode, PassNode);
};

// A pass from a C++ function over modules.
Pass CreateModulePass(std::function<IRModule(IRModule)> func, int64_t opt_level, String name);
// A pass from a tvm-ffi function (IRModule) -> IRModule, e.g. written in Python.
Pass CreateModulePass(tvm::ffi::Function func, int64_t opt_level, String name);
// Lifts a PrimFunc -> PrimFunc function to a pass over every function of a module; the module is
// returned untouched when every function is.
Pass CreatePrimFuncPass(std::function<PrimFunc(PrimFunc)> func, int64_t opt_level, String name);
Pass CreatePrimFuncPass(tvm::ffi::Function func, int64_t opt_level, String name);
// Every function of `mod` mapped by `func(name, function)`; the very module when every function
// comes back as itself (so `same_as` still means "unchanged").
IRModule MapFunctions(const IRModule& mod,
                      const std::function<PrimFunc(const String&, const PrimFunc&)>& func);
// `func` with `body`; the very function when `body` is its own.
PrimFunc WithBody(const PrimFunc& func, ir::Stmt body);

// A pipeline; opt_level 0, so a pipeline itself always runs.
Pass Sequential(Array<Pass> passes, String name = "Sequential");

// The registry of passes by name. A factory builds a fresh Pass each call.
using PassFactory = std::function<Pass()>;
// Fails (ValueError) when `name` is already registered.
void RegisterPass(const String& name, PassFactory factory);
// Fails (KeyError) listing the registered names when `name` is not one of them.
Pass GetPass(const String& name);
// Registered names, sorted.
std::vector<String> ListPasses();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_PASS_H_
