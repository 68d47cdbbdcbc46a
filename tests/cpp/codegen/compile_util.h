// Test helpers for the C code generator: compile generated C into a shared library with the
// system compiler and load it through tvm-ffi, and make CPU tensors. Until the build driver
// (codegen::Build) is in place the codegen tests compile by themselves, with warnings on, so a
// warning in generated code is visible to the test.
#ifndef TESSEL_TESTS_CPP_CODEGEN_COMPILE_UTIL_H_
#define TESSEL_TESTS_CPP_CODEGEN_COMPILE_UTIL_H_

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <tessel/codegen/codegen_c.h>
#include <tessel/ir/parser.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel {
namespace testing {

// The folder of the libtvm_ffi this process runs with; its package keeps the headers in
// ../include.
inline std::filesystem::path TvmFfiLibDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&TVMFFIErrorSetRaisedFromCStr), &info) == 0) {
    throw std::runtime_error("dladdr failed for libtvm_ffi");
  }
  return std::filesystem::path(info.dli_fname).parent_path();
}

struct CompiledC {
  tvm::ffi::Module module;
  // The compiler's output (warnings), empty when clean.
  std::string log;
};

// Compiles `source` with `cc` (-std=c11 -O2 -Wall -Werror=implicit-function-declaration, plus
// -fopenmp when `openmp`) and loads the library. With OpenMP the library is linked -z nodelete:
// unloading it would unload libgomp under its idle worker threads, which then crash. Throws
// std::runtime_error with the compiler's output when it fails.
// An empty `cc` means TESSEL_TEST_CC when set (e.g. "gcc -fsanitize=undefined"), else "cc".
inline CompiledC CompileAndLoad(const std::string& source, std::string cc = "",
                                bool openmp = true) {
  if (cc.empty()) {
    const char* env = std::getenv("TESSEL_TEST_CC");
    cc = env != nullptr && *env != '\0' ? env : "cc";
  }
  char tmpl[] = "/tmp/tessel-cgen-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  std::filesystem::path dir(tmpl);
  std::ofstream(dir / "kernel.c") << source;
  std::filesystem::path lib_dir = TvmFfiLibDir();
  std::string cmd = "cd '" + dir.string() + "' && " + cc +
                    " -std=c11 -O2 -Wall -Werror=implicit-function-declaration -fPIC -shared " +
                    (openmp ? "-fopenmp -Wl,-z,nodelete " : "") + "-I'" +
                    (lib_dir.parent_path() / "include").string() + "' -o lib.so kernel.c -L'" +
                    lib_dir.string() + "' -ltvm_ffi 2>&1";
  std::string log;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) log.append(buf, n);
  int status = pclose(p);
  if (status != 0) {
    throw std::runtime_error("C compile failed (kept in " + dir.string() + "):\n" + log);
  }
  CompiledC out{tvm::ffi::Module::LoadFromFile((dir / "lib.so").string()), log};
  std::filesystem::remove_all(dir);
  return out;
}

// Parses a module in the text format, generates C, compiles and loads it.
inline CompiledC BuildText(const std::string& text, const std::string& cc = "") {
  return CompileAndLoad(codegen::GenerateC(ir::ParseModule(text)), cc);
}

struct CPUAlloc {
  void AllocData(DLTensor* t) {
    size_t bytes = tvm::ffi::GetDataSize(*t);
    t->data = aligned_alloc(64, ((bytes + 63) / 64) * 64 + 64);
  }
  void FreeData(DLTensor* t) { free(t->data); }
};

inline tvm::ffi::Tensor Empty(std::vector<int64_t> shape, DLDataType dtype) {
  return tvm::ffi::Tensor::FromNDAlloc(CPUAlloc(), tvm::ffi::ShapeView(shape.data(), shape.size()),
                                       dtype, DLDevice{kDLCPU, 0});
}

template <typename T>
T* Data(const tvm::ffi::Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

inline DLDataType F32() { return DLDataType{kDLFloat, 32, 1}; }
inline DLDataType F16() { return DLDataType{kDLFloat, 16, 1}; }
inline DLDataType I32() { return DLDataType{kDLInt, 32, 1}; }
inline DLDataType I64() { return DLDataType{kDLInt, 64, 1}; }

// Calls `f` with `args`, which must fail with a tvm-ffi error of `kind` and exactly `message`.
template <typename... Args>
void ExpectCallError(const tvm::ffi::Function& f, const std::string& kind,
                     const std::string& message, Args&&... args) {
  try {
    f(std::forward<Args>(args)...);
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.message();
    EXPECT_EQ(e.message(), message);
    return;
  }
  ADD_FAILURE() << "expected " << kind << ": " << message;
}

}  // namespace testing
}  // namespace tessel

#endif  // TESSEL_TESTS_CPP_CODEGEN_COMPILE_UTIL_H_
