// CompileCUDA: NVRTC and the nvcc fallback give cubins, errors quote the generated lines they
// name, output is deterministic, and the architecture comes from the target or a GPU.
#include <gtest/gtest.h>
#include <tessel/codegen/compile_cuda.h>
#include <tessel/runtime/cuda_driver.h>

#include <string>

#include "../ir/expect_error.h"

namespace tessel {
namespace {

using testing::ExpectError;

const char* kSource = R"(#include <cuda_fp16.h>
extern "C" __global__ void scale(float* a, __half* h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 2.0f + __half2float(h[i]);
}
)";

bool HaveNvrtc() {
  try {
    return codegen::CUDACompilerIdentity({"nvrtc"}).rfind("nvrtc ", 0) == 0;
  } catch (const tvm::ffi::Error&) {
    return false;
  }
}
bool HaveNvcc() {
  try {
    codegen::CUDACompilerIdentity({"nvcc"});
    return true;
  } catch (const tvm::ffi::Error&) {
    return false;
  }
}

bool IsElf(const std::string& s) {
  return s.size() > 4 && s.compare(0, 4,
                                   "\x7f"
                                   "ELF") == 0;
}

TEST(CompileCUDA, NvrtcGivesDeterministicCubins) {
  if (!HaveNvrtc()) GTEST_SKIP() << "NVRTC is not installed";
  for (const char* arch : {"sm_80", "sm_90", "sm_90a"}) {
    std::string log;
    std::string a = codegen::CompileCUDA(kSource, arch, &log, {"nvrtc"});
    EXPECT_TRUE(IsElf(a)) << arch;
    EXPECT_EQ(a, codegen::CompileCUDA(kSource, arch, nullptr, {"nvrtc"})) << arch;
  }
}

TEST(CompileCUDA, NvccFallbackGivesCubin) {
  if (!HaveNvcc()) GTEST_SKIP() << "nvcc is not installed";
  std::string cubin = codegen::CompileCUDA(kSource, "sm_90", nullptr, {"nvcc"});
  EXPECT_TRUE(IsElf(cubin));
  EXPECT_EQ(codegen::CUDACompilerIdentity({"nvcc"}).rfind("nvcc ", 0), 0u);
  // The environment variable picks the fallback too.
  setenv("TESSEL_CUDA_COMPILER", "nvcc", 1);
  EXPECT_EQ(codegen::CUDACompilerIdentity().rfind("nvcc ", 0), 0u);
  unsetenv("TESSEL_CUDA_COMPILER");
  ExpectError(
      [] {
        codegen::CompileCUDA("extern \"C\" __global__ void k() { nope(); }\n", "sm_90", nullptr,
                             {"nvcc"});
      },
      "RuntimeError", {"nvcc", "kernel.cu(1): extern \"C\" __global__ void k() { nope(); }"});
}

TEST(CompileCUDA, ErrorsQuoteTheGeneratedLine) {
  if (!HaveNvrtc()) GTEST_SKIP() << "NVRTC is not installed";
  std::string bad = std::string(kSource) +
                    "extern \"C\" __global__ void broken(float* a) {\n"
                    "  a[0] = undefined_value + 1;\n"
                    "}\n";
  ExpectError([&] { codegen::CompileCUDA(bad, "sm_90", nullptr, {"nvrtc"}); }, "RuntimeError",
              {"identifier \"undefined_value\" is undefined", "generated lines named above:",
               "kernel.cu(7):   a[0] = undefined_value + 1;", "sm_90"});
}

TEST(CompileCUDA, BadArchAndCompiler) {
  ExpectError([] { codegen::CompileCUDA(kSource, "90"); }, "ValueError", {"bad architecture '90'"});
  ExpectError([] { codegen::CompileCUDA(kSource, "sm_90", nullptr, {"clang"}); }, "ValueError",
              {"unknown compiler 'clang'"});
}

TEST(CompileCUDA, ArchFromTargetOrGpu) {
  EXPECT_EQ(codegen::CUDAArch(target::Target::Parse("cuda -arch=sm_90a")), "sm_90a");
  if (runtime::cu::DeviceCount() > 0) {
    EXPECT_EQ(codegen::CUDAArch(target::Target::Parse("cuda")).rfind("sm_", 0), 0u);
  } else {
    ExpectError([] { codegen::CUDAArch(target::Target::Parse("cuda")); }, "ValueError",
                {"target cuda: no -arch given and no GPU to ask"});
  }
}

}  // namespace
}  // namespace tessel
