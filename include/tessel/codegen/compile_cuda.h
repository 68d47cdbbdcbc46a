// CompileCUDA: CUDA C++ source to a cubin for one GPU architecture.
//
// NVRTC is opened at run time with dlopen (never linked), so tessel builds and imports on machines
// without it. Library search: $TESSEL_NVRTC_LIBRARY, else libnvrtc.so.13, libnvrtc.so.12,
// libnvrtc.so on the loader path, then in $CUDA_HOME/lib64 and /usr/local/cuda/lib64. When no
// NVRTC loads (or TESSEL_CUDA_COMPILER=nvcc), nvcc compiles instead: $TESSEL_NVCC, else nvcc on
// PATH, else /usr/local/cuda/bin/nvcc, run as `nvcc -cubin -arch=sm_XX`.
//
// A compile error is a RuntimeError with the compiler's log followed by each generated line it
// names (kernel.cu(LINE)), quoted with its number.
#ifndef TESSEL_CODEGEN_COMPILE_CUDA_H_
#define TESSEL_CODEGEN_COMPILE_CUDA_H_

#include <tessel/target/target.h>

#include <string>

namespace tessel {
namespace codegen {

struct CUDACompileOptions {
  // "" = NVRTC when it loads, else nvcc; "nvrtc" or "nvcc" forces one (TESSEL_CUDA_COMPILER sets
  // the default).
  std::string compiler;
  // nvcc's --use_fast_math (flush-to-zero, approximate division, square root and transcendentals),
  // for the target option -fast-math.
  bool fast_math = false;
};

// The cubin of `source` for `arch` ("sm_80", "sm_90", "sm_90a"); ValueError for a malformed arch.
// *log, when given, receives the compiler's messages (warnings). Also the Python global
// "tessel.codegen.CompileCUDA" (returns bytes).
std::string CompileCUDA(const std::string& source, const std::string& arch,
                        std::string* log = nullptr, const CUDACompileOptions& options = {});

// The PTX NVRTC makes of `source` for the virtual architecture of `arch` (sm_90a: compute_90a),
// to check which instructions a kernel uses without a GPU. "tessel.codegen.CompileCUDAToPTX".
std::string CompileCUDAToPTX(const std::string& source, const std::string& arch);
// Which compiler CompileCUDA would use now: "nvrtc <library path>" or "nvcc <path>"; RuntimeError
// when neither is found.
std::string CUDACompilerIdentity(const CUDACompileOptions& options = {});

// The architecture to build `target` (kind cuda) for: its "arch" attribute, else the compute
// capability of GPU 0 asked through the CUDA driver; ValueError "target cuda: no -arch given and
// no GPU to ask" when neither is there.
std::string CUDAArch(const target::Target& target);

// The CUDA include folder used for cuda_fp16.h ($CUDA_HOME/include, else /usr/local/cuda/include).
std::string CUDAIncludeDir();

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_CODEGEN_COMPILE_CUDA_H_
