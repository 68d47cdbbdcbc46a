// Pass objects, the pass registry, and running a pass under a context with its instruments (IR
// dumps, timing, verification); see pass.h for the contract.
#include <tessel/ir/printer.h>
#include <tessel/ir/span.h>
#include <tessel/support/env.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/verify_well_formed.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace tessel {
namespace transform {

namespace {

using tvm::ffi::make_object;

// The context's records change while a pass runs; the handle only gives const access.
PassContextNode* Mutable(const PassContext& ctx) { return const_cast<PassContextNode*>(ctx.get()); }

std::vector<PassContext>& ContextStack() {
  thread_local std::vector<PassContext> stack;
  return stack;
}

// What the runs of one thread under one context share: the nesting depth, and the records the
// outermost run made (its timing table). Per thread, because threads may enter one context at the
// same time; each then nests from 0 and prints only its own runs.
struct ThreadRunState {
  int depth = 0;
  std::vector<size_t> records;
};

std::unordered_map<const PassContextNode*, ThreadRunState>& ThreadRunStates() {
  thread_local std::unordered_map<const PassContextNode*, ThreadRunState> states;
  return states;
}

bool SameOptions(const PassContextNode* a, const PassContextNode* b) {
  return a->opt_level == b->opt_level && a->dump_dir == b->dump_dir &&
         a->dump_changed_only == b->dump_changed_only && a->print_timing == b->print_timing &&
         a->verify_each == b->verify_each && a->disabled_passes.size() == b->disabled_passes.size();
}

// A pass name as a file-name part: letters, digits, '_', '-' and '.'; anything else becomes '_'.
std::string FileSafe(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  return out.empty() ? "pass" : out;
}

std::string DumpPath(const PassContextNode* ctx, int64_t index, const std::string& pass,
                     const char* when) {
  std::ostringstream name;
  name << std::setw(3) << std::setfill('0') << index << "_" << FileSafe(pass) << "_" << when
       << ".py";
  return (std::filesystem::path(std::string(ctx->dump_dir)) / name.str()).string();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::path p(path);
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) {
    TVM_FFI_THROW(RuntimeError) << "IR dump: cannot create directory " << p.parent_path().string()
                                << ": " << ec.message();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) TVM_FFI_THROW(RuntimeError) << "IR dump: cannot write " << path;
}

std::string FormatErrors(const std::vector<VerifyError>& errors) {
  std::ostringstream os;
  os << errors.size() << " error" << (errors.size() == 1 ? "" : "s") << ":\n";
  for (const VerifyError& e : errors) os << e.ToString() << "\n";
  return os.str();
}

class PassRunner {
 public:
  explicit PassRunner(PassContext ctx)
      : ctx_(std::move(ctx)), node_(Mutable(ctx_)), state_(ThreadRunStates()[node_]) {}

  IRModule Run(const Pass& pass, IRModule mod) {
    bool top = state_.depth == 0;
    if (!top) return RunInstrumented(pass, std::move(mod));
    // The outermost run on this thread drops the thread's state when done, even on a throw.
    struct Forget {
      const PassContextNode* node;
      ~Forget() { ThreadRunStates().erase(node); }
    } forget{node_};
    if (node_->verify_each) {
      std::vector<VerifyError> errors = VerifyWellFormed(mod);
      if (!errors.empty()) {
        TVM_FFI_THROW(ValueError) << "the input of pass " << pass->name
                                  << " is not well-formed: " << FormatErrors(errors);
      }
    }
    IRModule out = RunInstrumented(pass, std::move(mod));
    if (node_->print_timing) {
      PassContextNode partial;
      {
        std::lock_guard<std::mutex> lock(node_->mutex);
        for (size_t r : state_.records) partial.timings.push_back(node_->timings[r]);
      }
      std::cerr << partial.FormatTimings() << std::flush;
    }
    return out;
  }

 private:
  // Restores the depth even when a pass throws, so the context stays usable.
  struct DepthGuard {
    ThreadRunState* state;
    explicit DepthGuard(ThreadRunState* s) : state(s) { ++state->depth; }
    ~DepthGuard() { --state->depth; }
  };

  IRModule RunInstrumented(const Pass& pass, IRModule mod) {
    size_t record;
    {
      std::lock_guard<std::mutex> lock(node_->mutex);
      record = node_->timings.size();
      node_->timings.push_back(PassTiming{std::string(pass->name), state_.depth, 0.0});
    }
    state_.records.push_back(record);
    auto start = std::chrono::steady_clock::now();
    IRModule out = mod;
    {
      DepthGuard guard(&state_);
      if (const auto* seq = pass.as<SequentialNode>()) {
        for (const Pass& p : seq->passes) {
          if (p->opt_level > node_->opt_level) continue;
          if (std::find(node_->disabled_passes.begin(), node_->disabled_passes.end(), p->name) !=
              node_->disabled_passes.end()) {
            continue;
          }
          out = RunInstrumented(p, out);
        }
      } else {
        out = RunLeaf(pass, mod);
      }
    }
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    {
      std::lock_guard<std::mutex> lock(node_->mutex);
      // Indexed, not held: another thread's push_back may have moved the vector meanwhile.
      node_->timings[record].seconds = elapsed.count();
    }
    return out;
  }

  IRModule RunLeaf(const Pass& pass, const IRModule& mod) {
    const auto* leaf = pass.as<ModulePassNode>();
    if (leaf == nullptr) {
      TVM_FFI_THROW(TypeError) << "pass " << pass->name << " is a " << pass->GetTypeKey()
                               << ", which has no function to run";
    }
    int64_t index;
    {
      std::lock_guard<std::mutex> lock(node_->mutex);
      index = node_->pass_counter++;
    }
    bool dump = !node_->dump_dir.empty();
    std::string name = pass->name;
    if (dump && !node_->dump_changed_only) {
      WriteFile(DumpPath(node_, index, name, "before"), ir::AsText(mod));
    }
    IRModule out = RunLeafFunc(*leaf, mod);
    if (dump) {
      bool changed = !out.same_as(mod);
      if (!node_->dump_changed_only) {
        WriteFile(DumpPath(node_, index, name, "after"), ir::AsText(out));
      } else if (changed) {
        std::string before = ir::AsText(mod);
        std::string after = ir::AsText(out);
        if (before != after) {
          WriteFile(DumpPath(node_, index, name, "before"), before);
          WriteFile(DumpPath(node_, index, name, "after"), after);
        }
      }
    }
    // The verifier's own pass need not be checked twice.
    if (node_->verify_each && name != "VerifyWellFormed" && !out.same_as(mod)) {
      std::vector<VerifyError> errors = VerifyWellFormed(out);
      if (!errors.empty()) {
        TVM_FFI_THROW(InternalError)
            << "pass " << name << " produced IR that is not well-formed"
            << (dump ? " (see the dumps in " + std::string(node_->dump_dir) + ")" : "") << ": "
            << FormatErrors(errors);
      }
    }
    return out;
  }

  // Runs the pass's function. An error thrown while it visited a statement with a span names
  // that span: `file:line:col: message` (span.h).
  static IRModule RunLeafFunc(const ModulePassNode& leaf, const IRModule& mod) {
    return ir::CallNamingErrorSpan([&] { return leaf.func(mod).cast<IRModule>(); });
  }

  PassContext ctx_;
  PassContextNode* node_;
  ThreadRunState& state_;  // a node of an unordered_map: stays put while other keys come and go
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, PassFactory> factories;
  static Registry& Global() {
    static Registry* r = new Registry();  // never destroyed: passes may be looked up at exit
    return *r;
  }
};

}  // namespace

// ---- PassContext ----

int PassContextNode::DepthOnThisThread() const {
  auto& states = ThreadRunStates();
  auto it = states.find(this);
  return it == states.end() ? 0 : it->second.depth;
}

std::vector<PassTiming> PassContextNode::Timings() const {
  std::lock_guard<std::mutex> lock(mutex);
  return timings;
}

std::string PassContextNode::FormatTimings() const {
  std::vector<PassTiming> records = Timings();
  double total = 0;
  for (const PassTiming& t : records) {
    if (t.depth == 0) total += t.seconds;
  }
  std::ostringstream os;
  os << "pass timing: " << std::fixed << std::setprecision(3) << total * 1e3 << " ms in total\n";
  os << std::setw(10) << "ms" << std::setw(8) << "%"
     << "  pass\n";
  for (const PassTiming& t : records) {
    double share = total > 0 ? 100.0 * t.seconds / total : 0.0;
    os << std::setw(10) << std::setprecision(3) << t.seconds * 1e3 << std::setw(8)
       << std::setprecision(1) << share << "  " << std::string(2 * t.depth, ' ') << t.name << "\n";
  }
  return os.str();
}

PassContext::PassContext() {
  auto n = make_object<PassContextNode>();
  n->dump_dir = support::GetEnv("TESSEL_DUMP_IR");
  n->dump_changed_only = support::GetEnvFlag("TESSEL_DUMP_IR_CHANGED_ONLY");
  n->print_timing = support::GetEnvFlag("TESSEL_PASS_TIMING");
  n->verify_each = support::GetEnvFlag("TESSEL_VERIFY_EACH_PASS");
  data_ = std::move(n);
}

PassContext PassContext::Current() {
  std::vector<PassContext>& stack = ContextStack();
  if (!stack.empty()) return stack.back();
  thread_local std::optional<PassContext> fallback;
  PassContext fresh;
  if (!fallback || !SameOptions(fallback->get(), fresh.get())) fallback = fresh;
  return *fallback;
}

PassContext::Scope::Scope(PassContext ctx) : ctx_(std::move(ctx)) { Enter(ctx_); }
PassContext::Scope::~Scope() { ContextStack().pop_back(); }

void PassContext::Enter(PassContext ctx) { ContextStack().push_back(std::move(ctx)); }

void PassContext::Exit(const PassContext& ctx) {
  std::vector<PassContext>& stack = ContextStack();
  if (stack.empty() || !stack.back().same_as(ctx)) {
    TVM_FFI_THROW(ValueError) << "PassContext exit: this context is not the innermost one "
                                 "entered on this thread";
  }
  stack.pop_back();
}

// ---- Pass ----

IRModule Pass::operator()(IRModule mod) const {
  return PassRunner(PassContext::Current()).Run(*this, std::move(mod));
}

IRModule Pass::operator()(IRModule mod, const PassContext& ctx) const {
  PassContext::Scope scope(ctx);
  return PassRunner(ctx).Run(*this, std::move(mod));
}

Pass CreateModulePass(tvm::ffi::Function func, int64_t opt_level, String name) {
  auto n = make_object<ModulePassNode>();
  n->name = std::move(name);
  n->opt_level = opt_level;
  n->func = std::move(func);
  return Pass(n);
}

IRModule MapFunctions(const IRModule& mod,
                      const std::function<PrimFunc(const String&, const PrimFunc&)>& func) {
  tvm::ffi::Map<String, PrimFunc> functions;
  bool changed = false;
  for (const auto& kv : mod->functions) {
    PrimFunc f = func(kv.first, kv.second);
    changed = changed || !f.same_as(kv.second);
    functions.Set(kv.first, f);
  }
  if (!changed) return mod;
  IRModule out = mod;
  out.CopyOnWrite()->functions = functions;
  return out;
}

PrimFunc WithBody(const PrimFunc& func, ir::Stmt body) {
  if (body.same_as(func->body)) return func;
  PrimFunc out = func;
  out.CopyOnWrite()->body = std::move(body);
  return out;
}

Pass CreateModulePass(std::function<IRModule(IRModule)> func, int64_t opt_level, String name) {
  return CreateModulePass(tvm::ffi::Function::FromTyped(std::move(func)), opt_level,
                          std::move(name));
}

Pass CreatePrimFuncPass(std::function<PrimFunc(PrimFunc)> func, int64_t opt_level, String name) {
  auto over_module = [func = std::move(func)](IRModule mod) -> IRModule {
    return MapFunctions(mod, [&](const String&, const PrimFunc& f) { return func(f); });
  };
  return CreateModulePass(std::function<IRModule(IRModule)>(over_module), opt_level,
                          std::move(name));
}

Pass CreatePrimFuncPass(tvm::ffi::Function func, int64_t opt_level, String name) {
  std::string pass_name = name;
  return CreatePrimFuncPass(
      [func, pass_name](PrimFunc f) -> PrimFunc {
        tvm::ffi::Any result = func(f);
        if (auto out = result.try_cast<PrimFunc>()) return *out;
        TVM_FFI_THROW(TypeError) << "pass " << pass_name
                                 << ": the function must return a PrimFunc, got "
                                 << result.GetTypeKey();
        TVM_FFI_UNREACHABLE();
      },
      opt_level, std::move(name));
}

Pass Sequential(Array<Pass> passes, String name) {
  auto n = make_object<SequentialNode>();
  n->name = std::move(name);
  n->opt_level = 0;
  n->passes = std::move(passes);
  return Pass(n);
}

// ---- registry ----

void RegisterPass(const String& name, PassFactory factory) {
  Registry& r = Registry::Global();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.factories.emplace(std::string(name), std::move(factory)).second) {
    TVM_FFI_THROW(ValueError) << "RegisterPass: a pass named " << name << " is already registered";
  }
}

Pass GetPass(const String& name) {
  PassFactory factory;
  {
    Registry& r = Registry::Global();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.factories.find(std::string(name));
    if (it != r.factories.end()) factory = it->second;
  }
  if (!factory) {
    std::ostringstream names;
    for (const String& n : ListPasses()) names << " " << n;
    TVM_FFI_THROW(KeyError) << "no pass named " << name << "; registered:" << names.str();
  }
  return factory();
}

std::vector<String> ListPasses() {
  Registry& r = Registry::Global();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<String> out;
  for (const auto& kv : r.factories) out.push_back(kv.first);
  return out;  // std::map keeps them sorted
}

}  // namespace transform
}  // namespace tessel
