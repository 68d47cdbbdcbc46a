// Build for target cuda on any machine: the pipeline, the device kernels compiled for the given
// arch and embedded as a tessel_cuda import of the host library, the host wrapper's CUDA checks;
// without a GPU a call fails only when it launches, with the runtime's clear error.
#include <gtest/gtest.h>
#include <tessel/codegen/build.h>
#include <tessel/codegen/compile_cuda.h>
#include <tessel/codegen/library_bin.h>
#include <tessel/ir/parser.h>
#include <tessel/runtime/cuda_driver.h>
#include <tessel/runtime/cuda_module.h>
#include <tvm/ffi/container/tensor.h>

#include <string>

#include "../ir/expect_error.h"

namespace tessel {
namespace {

using testing::ExpectError;

const char* kVectorAdd = R"(
@T.prim_func
def vector_add_gpu(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "vector_add_gpu", "tir.noalias": True})
    for bx in T.thread_binding((n + 255) // 256, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            if bx * 256 + tx < n:
                C[bx * 256 + tx] = A[bx * 256 + tx] + B[bx * 256 + tx]
)";

bool HaveCudaCompiler() {
  try {
    codegen::CUDACompilerIdentity();
    return true;
  } catch (const tvm::ffi::Error&) {
    return false;
  }
}

// A tensor that claims to live on cuda:0 at an address nobody dereferences on the host.
struct FakeCUDAAlloc {
  void AllocData(DLTensor* t) { t->data = reinterpret_cast<void*>(uintptr_t{1} << 20); }
  void FreeData(DLTensor*) {}
};
tvm::ffi::Tensor FakeCUDA(int64_t n) {
  return tvm::ffi::Tensor::FromNDAlloc(FakeCUDAAlloc(), tvm::ffi::ShapeView(&n, 1),
                                       DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, 0});
}

TEST(BuildCUDA, PipelineNames) {
  auto names = codegen::LowerPipeline(target::Target::Parse("cuda -arch=sm_90"));
  std::vector<std::string> got(names.begin(), names.end());
  EXPECT_EQ(got, (std::vector<std::string>{
                     "LowerTileOpsSm80", "VerifyWellFormed", "LowerCrossThreadReduction",
                     "LowerBlocks", "CompactBufferAllocation", "FlattenBuffer", "SwizzleLayout",
                     "Simplify", "LowerThreadBinding", "InjectSharedBarriers",
                     "SoftwarePipelineAsync", "VectorizeLoop", "SwizzleLayoutLate", "UnrollLoop",
                     "LowerIntrinsics", "SplitHostDevice", "Simplify"}));
  // The tile lowering by arch: SIMT before sm_80, mma.sync from sm_80, wgmma on sm_90a.
  EXPECT_EQ(std::string(codegen::LowerPipeline(target::Target::Parse("cuda -arch=sm_75"))[0]),
            "LowerTileOpsGPU");
  EXPECT_EQ(std::string(codegen::LowerPipeline(target::Target::Parse("cuda -arch=sm_90a"))[0]),
            "LowerTileOpsHopper");
}

TEST(BuildCUDA, BuildsAndLoadsWithoutAGpu) {
  if (!HaveCudaCompiler()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  codegen::CompiledModule m =
      codegen::Build(ir::ParseModule(kVectorAdd), target::Target::Parse("cuda -arch=sm_90"));
  std::string cuda = m->cuda_source;
  EXPECT_NE(cuda.find("extern \"C\" __global__ void __launch_bounds__(256) vector_add_gpu_kernel("),
            std::string::npos)
      << cuda;
  std::string c = m->source;
  EXPECT_NE(c.find("__tvm_ffi__library_bin["), std::string::npos);
  EXPECT_EQ(c.find("__global__"), std::string::npos);
  ASSERT_EQ(m->function_names.size(), 1u);
  EXPECT_EQ(std::string(m->function_names[0]), "vector_add_gpu");

  // The loaded library imports one tessel_cuda module holding the kernel.
  const auto& imports = m->module->imports();
  ASSERT_EQ(imports.size(), 1u);
  auto cuda_mod = imports[0].cast<tvm::ffi::Module>();
  EXPECT_EQ(std::string(cuda_mod->kind()), runtime::kCUDAModuleKind);
  tvm::ffi::Bytes bytes = cuda_mod->SaveToBytes();
  runtime::CUDAModuleData data = runtime::ParseCUDAModuleBytes(bytes.data(), bytes.size());
  EXPECT_EQ(data.arch, "sm_90");
  EXPECT_EQ(data.image.substr(0, 4), std::string("\x7f"
                                                 "ELF"));
  ASSERT_EQ(data.kernels.size(), 1u);
  EXPECT_EQ(data.kernels[0].name, "vector_add_gpu_kernel");
  EXPECT_FALSE(data.kernels[0].use_pdl);

  tvm::ffi::Function f = m->GetFunction("vector_add_gpu");
  tvm::ffi::Tensor a = FakeCUDA(1000), b = FakeCUDA(1000), out = FakeCUDA(1000);
  if (runtime::cu::DeviceCount() == 0) {
    ExpectError([&] { f(a, b, out); }, "RuntimeError", {"CUDA driver"});
  }
}

TEST(BuildCUDA, ArchErrors) {
  ExpectError(
      [] {
        if (runtime::cu::DeviceCount() > 0) throw tvm::ffi::Error("ValueError", "no arch", "");
        codegen::Build(ir::ParseModule(kVectorAdd), target::Target::Parse("cuda"));
      },
      "ValueError", {});
  if (!HaveCudaCompiler()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  ExpectError(
      [] {
        codegen::Build(ir::ParseModule(R"(
@T.prim_func
def clustered(A: T.Buffer((256,), "float32")):
    T.func_attr({"tessel.cluster_dims": [2, 1, 1]})
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            A[bx * 128 + tx] = T.float32(1)
)"),
                       target::Target::Parse("cuda -arch=sm_80"));
      },
      "ValueError", {"clustered_kernel uses thread block clusters", "need sm_90", "sm_80"});
}

}  // namespace
}  // namespace tessel
