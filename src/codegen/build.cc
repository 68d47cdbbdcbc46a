// The build driver (see build.h): lowering pipeline by pass names, C generation, the
// content-addressed library cache, loading through tvm-ffi.
#include <tessel/codegen/build.h>
#include <tessel/codegen/compile_cuda.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/span.h>
#include <tessel/support/env.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#ifdef _WIN32
#include <process.h>
#define getpid _getpid
#else
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace tessel {
namespace codegen {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string Symbol(const String& name, const ir::PrimFunc& f) {
  return std::string(f.GetGlobalSymbol().value_or(name));
}

// The first GPU thread binding in `f`, described, or "" when there is none. The blockIdx loops of
// a tile program's T.Kernel (annotated "tessel.tile_kernel") are not GPU code: LowerTileOps turns
// them into loops for the C target.
std::string FindThreadBinding(const ir::PrimFunc& f) {
  class Finder : public ir::StmtExprVisitor {
   public:
    using ir::StmtExprVisitor::VisitStmt_;
    std::string found;
    void VisitStmt_(const ir::ForNode* loop) override {
      if (!found.empty()) return;
      bool kernel = loop->annotations.count("tessel.tile_kernel") != 0;
      bool block = std::string(loop->thread_tag).rfind("blockIdx", 0) == 0;
      if (loop->kind == ir::ForKind::kThreadBinding && !(block && (kernel || in_kernel_))) {
        found = "loop " + std::string(loop->loop_var->name_hint) + " is bound to " +
                std::string(loop->thread_tag);
        return;
      }
      bool saved = in_kernel_;
      in_kernel_ = in_kernel_ || kernel;
      ir::StmtExprVisitor::VisitStmt_(loop);
      in_kernel_ = saved;
    }
    void VisitStmt_(const ir::AttrStmtNode* attr) override {
      if (!found.empty()) return;
      if (attr->attr_key == "thread_extent" || attr->attr_key == "virtual_thread") {
        found = "it has a " + std::string(attr->attr_key) + " attribute";
        return;
      }
      ir::StmtExprVisitor::VisitStmt_(attr);
    }

   private:
    bool in_kernel_ = false;
  } finder;
  finder.VisitStmt(f->body);
  return finder.found;
}

uint64_t Fnv1a(const std::string& data, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// 128 bits of hash in hex; the stored key file settles any collision.
std::string HashName(const std::string& key) {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(Fnv1a(key, 14695981039346656037ull)),
                static_cast<unsigned long long>(Fnv1a(key, 0x6c62272e07bb0142ull)));
  return buf;
}

bool ReadFile(const fs::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream os;
  os << in.rdbuf();
  *out = os.str();
  return !in.bad();
}

// Writes `data` to `path` through a temporary name in the same folder and a rename.
void WriteFileAtomic(const fs::path& path, const std::string& data) {
  static std::atomic<uint64_t> counter{0};
  fs::path tmp = path.parent_path() / ("." + path.filename().string() + ".tmp-" +
                                       std::to_string(getpid()) + "-" + std::to_string(counter++));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      TVM_FFI_THROW(RuntimeError) << "build: cannot write " << tmp.string();
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::string why = ec.message();
    fs::remove(tmp, ec);
    TVM_FFI_THROW(RuntimeError) << "build: cannot write " << path.string() << ": " << why;
  }
}

// The C code generator, reached by its global name: it is a separate part of libtessel.
std::string CallGenerateC(const ir::IRModule& lowered) {
  auto gen = tvm::ffi::Function::GetGlobal("tessel.codegen.GenerateC");
  if (!gen.has_value()) {
    TVM_FFI_THROW(RuntimeError) << "build: this libtessel has no C code generator "
                                   "(tessel.codegen.GenerateC is not registered)";
  }
  return std::string((*gen)(lowered).cast<String>());
}

}  // namespace

std::string CacheHashName(const std::string& key) { return HashName(key); }

void CacheWriteFileAtomic(const std::string& path, const std::string& data) {
  WriteFileAtomic(path, data);
}

tvm::ffi::Function CompiledModuleNode::GetFunction(const String& name) const {
  tvm::ffi::Optional<tvm::ffi::Function> f = module->GetFunction(name);
  if (!f.has_value()) {
    std::string names;
    for (const String& n : function_names) names += (names.empty() ? "" : ", ") + std::string(n);
    TVM_FFI_THROW(KeyError) << "compiled module has no function '" << name
                            << "'; its functions: " << (names.empty() ? "(none)" : names);
  }
  return *f;
}

void CompiledModuleNode::ExportLibrary(const String& path) const {
  std::string bytes;
  if (!ReadFile(std::string(library_path), &bytes)) {
    TVM_FFI_THROW(RuntimeError) << "export_library: cannot read " << library_path;
  }
  fs::path out = fs::absolute(std::string(path));
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  WriteFileAtomic(out, bytes);
}

namespace {

// The software-pipelining pass for a target: cp.async needs CUDA sm_80 or newer (without -arch,
// the arch of the device, as the build will use; none to ask: assumed new enough).
String SoftwarePipelinePassName(const target::Target& target) {
  if (target->kind != "cuda") return "SoftwarePipeline";
  std::string arch;
  try {
    arch = CUDAArch(target);
  } catch (const tvm::ffi::Error&) {
    return "SoftwarePipelineAsync";
  }
  return std::atoi(arch.c_str() + 3) >= 80 ? "SoftwarePipelineAsync" : "SoftwarePipeline";
}

// The tile lowering for a GPU target: T.gemm on mma.sync from sm_80, with wgmma and TMA on sm_90a.
String LowerTileOpsPassName(const target::Target& target) {
  if (target->kind != "cuda") return "LowerTileOpsGPU";
  std::string arch;
  try {
    arch = CUDAArch(target);
  } catch (const tvm::ffi::Error&) {
    return "LowerTileOpsGPU";
  }
  if (arch == "sm_90a") return "LowerTileOpsHopper";
  return std::atoi(arch.c_str() + 3) >= 80 ? "LowerTileOpsSm80" : "LowerTileOpsGPU";
}

}  // namespace

std::vector<String> LowerPipeline(const target::Target& target) {
  if (target->kind == "cuda" || target->kind == "metal") {
    return {LowerTileOpsPassName(target),
            "VerifyWellFormed",
            "LowerCrossThreadReduction",
            "LowerBlocks",
            "CompactBufferAllocation",
            "FlattenBuffer",
            "SwizzleLayout",
            "Simplify",
            "LowerThreadBinding",
            "InjectSharedBarriers",
            SoftwarePipelinePassName(target),
            "VectorizeLoop",
            "SwizzleLayoutLate",
            "UnrollLoop",
            "LowerIntrinsics",
            "SplitHostDevice",
            "Simplify"};
  }
  if (target->kind != "c") {
    TVM_FFI_THROW(ValueError) << "target " << target->kind << ": not supported yet";
  }
  return {"LowerTileOps",  "VerifyWellFormed", "LowerBlocks",     "CompactBufferAllocation",
          "FlattenBuffer", "SwizzleLayout",    "Simplify",        "SoftwarePipeline",
          "VectorizeLoop", "UnrollLoop",       "LowerIntrinsics", "Simplify"};
}

ir::IRModule Lower(const ir::IRModule& mod, const target::Target& target) {
  std::vector<String> names = LowerPipeline(target);
  if (target->kind == "c") {
    for (const String& name : mod.FunctionNames()) {
      std::string where = FindThreadBinding(mod->functions.at(name));
      if (!where.empty()) {
        TVM_FFI_THROW(ValueError) << Symbol(name, mod->functions.at(name))
                                  << ": thread bindings need a GPU target (" << where
                                  << "; the target is " << target->str << ")";
      }
    }
  }
  tvm::ffi::Array<transform::Pass> passes;
  for (const String& name : names) passes.push_back(transform::GetPass(name));
  return transform::Sequential(passes, "Lower[" + std::string(target->kind) + "]")(mod);
}

std::string GenerateSource(const ir::IRModule& mod, const target::Target& target) {
  if (target->kind == "cuda" || target->kind == "metal") {
    TVM_FFI_THROW(ValueError) << "GenerateSource: target " << target->kind
                              << " has two sources; build it (CompiledModule.source and ."
                              << target->kind << "_source)";
  }
  ir::IRModule lowered = Lower(mod, target);
  return ir::CallNamingErrorSpan([&] { return CallGenerateC(lowered); });
}

std::string CacheDir() {
  std::string env = support::GetEnv("TESSEL_CACHE_DIR");
  if (!env.empty()) {
    fs::create_directories(env);
    return env;
  }
#ifdef _WIN32
  fs::path dir = fs::temp_directory_path() / "tessel-cache";
  fs::create_directories(dir);
  return dir.string();
#else
  fs::path dir = fs::temp_directory_path() / ("tessel-cache-" + std::to_string(getuid()));
  // A shared temp folder: the cache must be ours and closed to others, or a planted library
  // would be loaded.
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    TVM_FFI_THROW(RuntimeError) << "build: cannot create the cache folder " << dir.string() << ": "
                                << std::strerror(errno) << " (set TESSEL_CACHE_DIR)";
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
      (st.st_mode & 022) != 0) {
    TVM_FFI_THROW(RuntimeError) << "build: the cache folder " << dir.string()
                                << " is not a folder owned by this user and closed to others; "
                                   "set TESSEL_CACHE_DIR to another folder";
  }
  return dir.string();
#endif
}

std::string CompileCached(const std::string& source, const CompileOptions& options,
                          bool* cache_hit) {
  std::string key;
  for (const std::string& a : CompileCommand(options)) key += a + '\n';
  key += CompilerIdentity() + '\n' + source;
  const fs::path dir = CacheDir();
  const std::string hash = HashName(key);
  // A stored key that differs is a hash collision: the next suffix is tried.
  for (int i = 0;; ++i) {
    std::string stem = hash + (i == 0 ? "" : "-" + std::to_string(i));
    fs::path lib = dir / (stem + ".so");
    fs::path key_file = dir / (stem + ".key");
    std::string stored;
    if (ReadFile(key_file, &stored) && fs::exists(lib)) {
      if (stored != key) continue;
      if (cache_hit != nullptr) *cache_hit = true;
      return lib.string();
    }
    CompileCSource(source, lib.string(), options);
    // The key goes last: its presence says the library next to it is complete.
    WriteFileAtomic(key_file, key);
    if (cache_hit != nullptr) *cache_hit = false;
    return lib.string();
  }
}

CompiledModule CompileAndLoad(tvm::ffi::ObjectPtr<CompiledModuleNode> n,
                              std::vector<std::string> names, const CompileOptions& options) {
  std::sort(names.begin(), names.end());
  for (const std::string& s : names) n->function_names.push_back(s);

  auto t = Clock::now();
  bool hit = false;
  n->library_path = CompileCached(std::string(n->source), options, &hit);
  n->cache_hit = hit;
  n->cc_seconds = SecondsSince(t);

  t = Clock::now();
  n->module = tvm::ffi::Module::LoadFromFile(n->library_path);
  n->load_seconds = SecondsSince(t);
  return CompiledModule(n);
}

CompiledModule Build(const ir::IRModule& mod, const target::Target& target,
                     const CompileOptions& options) {
  if (target->kind == "cuda") return BuildCUDA(mod, target, options);
  if (target->kind == "metal") return BuildMetal(mod, target, options);
  auto n = tvm::ffi::make_object<CompiledModuleNode>();
  n->target = target->str;

  Clock::time_point t = Clock::now();
  ir::IRModule lowered = Lower(mod, target);
  n->lower_seconds = SecondsSince(t);

  t = Clock::now();
  // An error of the code generator names the statement it was at (a pass's error already does).
  std::string source = ir::CallNamingErrorSpan([&] { return CallGenerateC(lowered); });
  n->source = source;
  n->codegen_seconds = SecondsSince(t);
  std::vector<std::string> names;
  for (const String& name : lowered.FunctionNames()) {
    names.push_back(Symbol(name, lowered->functions.at(name)));
  }
  return CompileAndLoad(n, std::move(names), options);
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<CompiledModuleNode>(refl::init(false))
      .def_ro("module", &CompiledModuleNode::module)
      .def_ro("source", &CompiledModuleNode::source)
      .def_ro("cuda_source", &CompiledModuleNode::cuda_source)
      .def_ro("metal_source", &CompiledModuleNode::metal_source)
      .def_ro("nvcc_seconds", &CompiledModuleNode::nvcc_seconds)
      .def_ro("library_path", &CompiledModuleNode::library_path)
      .def_ro("target", &CompiledModuleNode::target)
      .def_ro("cache_hit", &CompiledModuleNode::cache_hit)
      .def_ro("lower_seconds", &CompiledModuleNode::lower_seconds)
      .def_ro("codegen_seconds", &CompiledModuleNode::codegen_seconds)
      .def_ro("cc_seconds", &CompiledModuleNode::cc_seconds)
      .def_ro("load_seconds", &CompiledModuleNode::load_seconds)
      .def_ro("function_names", &CompiledModuleNode::function_names);
  refl::GlobalDef()
      .def("tessel.codegen.Build",
           [](const ir::IRModule& mod, const String& target,
              tvm::ffi::Optional<tvm::ffi::Array<String>> extra_flags) {
             CompileOptions options;
             if (extra_flags) {
               for (const String& f : *extra_flags) options.extra_flags.push_back(f);
             }
             return Build(mod, target::Target::Parse(target), options);
           })
      .def("tessel.codegen.Lower",
           [](const ir::IRModule& mod, const String& target) {
             return Lower(mod, target::Target::Parse(target));
           })
      .def("tessel.codegen.LowerPipeline",
           [](const String& target) {
             tvm::ffi::Array<String> out;
             for (const String& s : LowerPipeline(target::Target::Parse(target))) out.push_back(s);
             return out;
           })
      .def("tessel.codegen.CompiledModuleGetFunction",
           [](const CompiledModule& m, const String& name) { return m->GetFunction(name); })
      .def("tessel.codegen.CompiledModuleExportLibrary",
           [](const CompiledModule& m, const String& path) { m->ExportLibrary(path); })
      .def("tessel.codegen.CompileCSource",
           [](const String& source, const String& out_path) {
             return String(CompileCSource(source, out_path));
           })
      .def("tessel.codegen.CacheDir", []() { return String(CacheDir()); });
}

}  // namespace codegen
}  // namespace tessel
