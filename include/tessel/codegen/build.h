// Build: from an IRModule to a loaded library of tvm-ffi functions.
//
// For target "c": the lowering pipeline (LowerPipeline below) runs under the current
// PassContext (so IR dumps and pass timing apply), the C code generator turns the lowered module
// into one C file, the system C compiler (compile_c.h) turns that into a shared library in the
// build cache, and tvm-ffi loads it. Each PrimFunc is exported as `__tvm_ffi_<symbol>`, symbol
// being attrs["global_symbol"] when set, else the function's name in the module.
//
// The build cache (TESSEL_CACHE_DIR, default <temp dir>/tessel-cache-<uid>) is content-addressed:
// a library is named by a hash of its C source, the compiler command and CompilerIdentity(),
// stored with that key, so building the same source again loads the stored library without
// compiling, and two processes building at once each write under a temporary name and rename.
#ifndef TESSEL_CODEGEN_BUILD_H_
#define TESSEL_CODEGEN_BUILD_H_

#include <tessel/codegen/compile_c.h>
#include <tessel/ir/module.h>
#include <tessel/target/target.h>
#include <tessel/transform/pass.h>
#include <tvm/ffi/extra/module.h>

#include <string>
#include <utility>
#include <vector>

namespace tessel {
namespace codegen {

using tvm::ffi::String;

// What Build returns: the loaded library and what it was made from.
class CompiledModuleNode : public tvm::ffi::Object {
 public:
  tvm::ffi::Module module{tvm::ffi::UnsafeInit{}};
  // The generated C (for target cuda: the host code, with the device image embedded).
  String source;
  // Target cuda: the generated CUDA C++ of the device kernels ("" for other targets).
  String cuda_source;
  // Target metal: the generated MSL of the device kernels ("" for other targets).
  String metal_source;
  // The library file (in the build cache) that `module` was loaded from.
  String library_path;
  // The target string built for.
  String target;
  // Whether the library came from the build cache without compiling.
  bool cache_hit = false;
  // Wall time of each step of Build, in seconds.
  double lower_seconds = 0;
  double codegen_seconds = 0;
  double cc_seconds = 0;
  double nvcc_seconds = 0;  // target cuda: compiling the device code (NVRTC or nvcc)
  double load_seconds = 0;

  // The exported function `name` (its symbol without the __tvm_ffi_ prefix); KeyError listing
  // the module's functions when there is none.
  tvm::ffi::Function GetFunction(const String& name) const;
  // Copies the library to `path` (atomically: a temporary name in its folder, then a rename).
  void ExportLibrary(const String& path) const;

  // The exported symbols' names, sorted.
  tvm::ffi::Array<String> function_names;

  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.codegen.CompiledModule", CompiledModuleNode,
                                    tvm::ffi::Object);
};

class CompiledModule : public tvm::ffi::ObjectRef {
 public:
  explicit CompiledModule(tvm::ffi::ObjectPtr<CompiledModuleNode> n) { data_ = std::move(n); }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(CompiledModule, tvm::ffi::ObjectRef,
                                                CompiledModuleNode);
};

// The registered passes that lower a module for `target`, in order. For "c":
// VerifyWellFormed, LowerBlocks, FlattenBuffer, Simplify, VectorizeLoop, UnrollLoop,
// LowerIntrinsics, Simplify. For "cuda" and "metal": VerifyWellFormed, LowerBlocks, FlattenBuffer, Simplify,
// LowerThreadBinding, InjectSharedBarriers, VectorizeLoop, UnrollLoop, LowerIntrinsics,
// SplitHostDevice, Simplify. ValueError for a target that cannot be built yet.
std::vector<String> LowerPipeline(const target::Target& target);

// Runs LowerPipeline(target) on `mod` under the current PassContext. Before lowering, fails
// (ValueError "<f>: thread bindings need a GPU target") when a function of a CPU build binds a
// loop or an attribute to a GPU thread.
ir::IRModule Lower(const ir::IRModule& mod, const target::Target& target);

// Lowers `mod` and generates its C (what Build compiles).
std::string GenerateSource(const ir::IRModule& mod, const target::Target& target);

// Lower, generate C, compile (or reuse the cached library), load. Target cuda goes to BuildCUDA.
CompiledModule Build(const ir::IRModule& mod, const target::Target& target,
                     const CompileOptions& options = {});

// Target cuda (build_cuda.cc): the cuda pipeline, then the device kernels (attr
// tessel.device_kernel) through GenerateCUDA and CompileCUDA for CUDAArch(target), packed as a
// tessel_cuda module in the host library's __tvm_ffi__library_bin; the host functions through
// GenerateC. Loading needs no GPU; launching a kernel does.
CompiledModule BuildCUDA(const ir::IRModule& mod, const target::Target& target,
                         const CompileOptions& options = {});

// Target metal (build_metal.cc): the same GPU pipeline as cuda with every function marked for
// metal, then the device kernels through GenerateMetal, packed with their kernel table as a
// tessel_metal module in the host library's __tvm_ffi__library_bin; the host functions through
// GenerateC. Building and loading need no Metal; launching a kernel does (or an executor such as
// the tests' emulator).
CompiledModule BuildMetal(const ir::IRModule& mod, const target::Target& target,
                          const CompileOptions& options = {});

// The last steps every target shares: `names` sorted into n->function_names, n->source compiled
// through the build cache (cc_seconds, cache_hit), the library loaded (load_seconds).
CompiledModule CompileAndLoad(tvm::ffi::ObjectPtr<CompiledModuleNode> n,
                              std::vector<std::string> names, const CompileOptions& options);

// The library for `source` in the build cache: compiled (with CompileCSource) unless a library
// for the same source and compiler command is stored. *cache_hit, when given, says which.
std::string CompileCached(const std::string& source, const CompileOptions& options = {},
                          bool* cache_hit = nullptr);

// The build cache folder (created on first use, private to the user).
std::string CacheDir();
// The file stem the cache uses for `key` (128 bits of hash in hex), and its atomic write (a
// temporary name in the same folder, then a rename); for other caches in CacheDir (cubins).
std::string CacheHashName(const std::string& key);
void CacheWriteFileAtomic(const std::string& path, const std::string& data);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_CODEGEN_BUILD_H_
