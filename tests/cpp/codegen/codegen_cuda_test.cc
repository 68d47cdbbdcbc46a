// The CUDA code generator on hand-written device kernels (text format): the emitted constructs,
// determinism, clear errors, and every feature compiled by NVRTC for sm_80 and sm_90 (skipped
// when no CUDA compiler is installed).
#include <gtest/gtest.h>
#include <tessel/codegen/codegen_cuda.h>
#include <tessel/codegen/compile_cuda.h>
#include <tessel/ir/parser.h>

#include <cstdint>
#include <string>
#include <utility>

#include "../ir/expect_error.h"

namespace tessel {
namespace {

using testing::ExpectError;

bool HaveCudaCompiler() {
  try {
    codegen::CUDACompilerIdentity();
    return true;
  } catch (const tvm::ffi::Error&) {
    return false;
  }
}

ir::IRModule Parse(const std::string& text) { return ir::ParseModule(text, "<test>"); }

void ExpectHas(const std::string& text, const std::string& what) {
  EXPECT_NE(text.find(what), std::string::npos) << "missing '" << what << "' in\n" << text;
}

void ExpectCompiles(const std::string& source, const std::string& arch) {
  if (!HaveCudaCompiler()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  std::string cubin = codegen::CompileCUDA(source, arch);
  ASSERT_GT(cubin.size(), 4u) << arch;
  EXPECT_EQ(cubin.substr(0, 4), std::string("\x7f"
                                            "ELF"))
      << arch;
}

// Shared memory (static and dynamic), __syncthreads, float16, an aligned float4 and a 16-byte
// float16 access, a shuffle, floor division, PDL and a grid barrier.
const char* kFeatures = R"(
@T.prim_func
def features_kernel(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float16"), C: T.Buffer((n,), "float32"), n: T.int32):
    T.func_attr({"global_symbol": "features_kernel", "tessel.device_kernel": True})
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", (n + 127) // 128):
        with T.attr(threadIdx_x, "thread_extent", 128):
            S = T.allocate([128], "float32", "shared")
            Sb = T.decl_buffer((128,), "float32", data=S, scope="shared")
            D = T.allocate([n], "float32", "shared.dyn")
            Db = T.decl_buffer((n,), "float32", data=D, scope="shared.dyn")
            E = T.allocate([7], "float16", "shared.dyn")
            Eb = T.decl_buffer((7,), "float16", data=E, scope="shared.dyn")
            if blockIdx_x * 128 + threadIdx_x < n:
                Sb[threadIdx_x] = A[blockIdx_x * 128 + threadIdx_x] + T.Cast("float32", B[blockIdx_x * 128 + threadIdx_x])
                Db[threadIdx_x] = T.call_pure_extern("float32", "expf", Sb[threadIdx_x])
                Eb[0] = B[0] * B[1]
            T.tvm_storage_sync("shared")
            C[T.Ramp(blockIdx_x * 512 + threadIdx_x * 4, 1, 4)] = A[T.Ramp(blockIdx_x * 512 + threadIdx_x * 4, 1, 4)] * T.Broadcast(T.float32(2), 4)
            B[T.Ramp(threadIdx_x * 8, 1, 8)] = B[T.Ramp(threadIdx_x * 8, 1, 8)]
            C[threadIdx_x] = T.shfl_xor(C[threadIdx_x], 1, 32) + T.shfl_down(C[threadIdx_x], 2, 32) + T.shfl_sync(C[threadIdx_x], 0, 32) + T.Cast("float32", T.floordiv(threadIdx_x - 64, 3))
            T.pdl_sync()
            T.pdl_trigger()
            T.grid_sync()
)";

TEST(CodegenCUDA, FeaturesAreEmittedAndCompileForSm80AndSm90) {
  std::string src = codegen::GenerateCUDA(Parse(kFeatures));
  EXPECT_EQ(src, codegen::GenerateCUDA(Parse(kFeatures)));
  ExpectHas(src, "#include <cuda_fp16.h>");
  ExpectHas(src, "#include <cuda_bf16.h>");
  ExpectHas(src, "#include <cooperative_groups.h>");
  ExpectHas(src, "extern \"C\" __global__ void __launch_bounds__(128) features_kernel(");
  ExpectHas(src, "int32_t threadIdx_x = (int32_t)threadIdx.x;");
  ExpectHas(src, "int32_t blockIdx_x = (int32_t)blockIdx.x;");
  ExpectHas(src, "__shared__ __align__(16) float S[128];");
  ExpectHas(src, "extern __shared__ __align__(16) unsigned char tsl_dyn_smem[];");
  ExpectHas(src, "float* D = (float*)(tsl_dyn_smem + 0);");
  // E starts after n floats, rounded up to 16 bytes.
  ExpectHas(src, "uint16_t* E = (uint16_t*)(tsl_dyn_smem + ");
  ExpectHas(src, "__syncthreads();");
  ExpectHas(src, "const float4 tsl_v");
  ExpectHas(src, "= tsl_wide_load<float4>(((float*)A) + ");
  ExpectHas(src, "tsl_wide_store(((float*)C) + ");
  ExpectHas(src, "const uint4 tsl_v");
  ExpectHas(src, "__shfl_xor_sync(0xffffffffu, ");
  ExpectHas(src, "__shfl_down_sync(0xffffffffu, ");
  ExpectHas(src, "__shfl_sync(0xffffffffu, ");
  ExpectHas(src, "tsl_floordiv_i32(");
  ExpectHas(src, "tsl_f16_to_f32(");
  ExpectHas(src, "tsl_pdl_wait();");
  ExpectHas(src, "griddepcontrol.wait;");
  ExpectHas(src, "griddepcontrol.launch_dependents;");
  ExpectHas(src, "cooperative_groups::this_grid().sync();");
  ExpectCompiles(src, "sm_80");
  ExpectCompiles(src, "sm_90");
}

// Misaligned or strided vector accesses go lane by lane; a vector store computes every lane before
// writing any.
TEST(CodegenCUDA, UnalignedVectorsAreScalarLanes) {
  std::string src = codegen::GenerateCUDA(Parse(R"(
@T.prim_func
def lanes_kernel(A: T.Buffer((1024,), "float32"), I: T.Buffer((1024,), "int32")):
    T.func_attr({"tessel.device_kernel": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        A[T.Ramp(threadIdx_x * 4 + 1, 1, 4)] = A[T.Ramp(threadIdx_x * 4 + 2, 1, 4)]
        A[T.Ramp(threadIdx_x, 2, 4)] = A[I[T.Ramp(threadIdx_x * 4, 1, 4)]] + T.Cast("float32x4", T.Ramp(0, 1, 4))
)"));
  EXPECT_EQ(src.find("float4"), std::string::npos) << src;
  ExpectHas(src, "float tsl_s1[4];");
  ExpectHas(
      src, "tsl_s1[3] = ((float*)A)[tsl_add_i32(tsl_add_i32(tsl_mul_i32(threadIdx_x, 4), 2), 3)];");
  // The int32 index vector is an aligned 16-byte load.
  ExpectHas(src, "const int4 tsl_v");
  ExpectCompiles(src, "sm_80");
}

// bfloat16, int64, uint8, bool, an expression Let, a vector Let, reinterpret, popcount, clz,
// shifts and if_then_else.
TEST(CodegenCUDA, ScalarKindsCompile) {
  std::string src = codegen::GenerateCUDA(Parse(R"(
@T.prim_func
def kinds_kernel(A: T.Buffer((256,), "bfloat16"), B: T.Buffer((256,), "int64"), C: T.Buffer((256,), "uint8"), M: T.Buffer((256,), "bool"), F: T.Buffer((256,), "float32"), k: T.int64):
    T.func_attr({"tessel.device_kernel": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        A[threadIdx_x] = A[threadIdx_x] * A[threadIdx_x + 64] + T.bfloat16(1.5)
        B[threadIdx_x] = T.Let(x * x + k, where={x: B[threadIdx_x] // T.int64(3)}) + T.Cast("int64", T.popcount(B[threadIdx_x])) + T.Cast("int64", T.clz(C[threadIdx_x])) + (B[threadIdx_x] << T.int64(2))
        M[threadIdx_x] = T.if_then_else(threadIdx_x < 32, B[threadIdx_x] > k, M[threadIdx_x + 1])
        F[threadIdx_x] = T.reinterpret("float32", T.Cast("int32", C[threadIdx_x]))
        v = T.Ramp(threadIdx_x, 64, 4)
        F[T.Ramp(threadIdx_x * 4, 1, 4)] = T.Cast("float32x4", v)
)"));
  ExpectHas(src, "tsl_bf16_to_f32(");
  ExpectHas(src, "([&]() { int64_t x = ");
  ExpectHas(src, "__popcll(");
  ExpectHas(src, "__clz(");
  ExpectHas(src, "tsl_bitcast<float>(");
  ExpectHas(src, "int32_t v[4];");
  ExpectHas(src, "extern \"C\" __global__ void __launch_bounds__(64) kinds_kernel(");
  ExpectCompiles(src, "sm_80");
  ExpectCompiles(src, "sm_90");
}

const char* kCluster = R"(
@T.prim_func
def cluster_kernel(A: T.Buffer((256,), "float32")):
    T.func_attr({"tessel.device_kernel": True, "tessel.cluster_dims": [2, 1, 1]})
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 2):
        with T.attr(threadIdx_x, "thread_extent", 128):
            A[blockIdx_x * 128 + threadIdx_x] = T.float32(1)
)";

// Clusters need sm_90: NVRTC refuses them for sm_80 and the error quotes the kernel's line.
TEST(CodegenCUDA, ClusterDimsNeedSm90) {
  std::string src = codegen::GenerateCUDA(Parse(kCluster));
  ExpectHas(src, "__cluster_dims__(2, 1, 1) cluster_kernel(");
  ExpectCompiles(src, "sm_90");
  if (!HaveCudaCompiler()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  ExpectError([&] { codegen::CompileCUDA(src, "sm_80"); }, "RuntimeError",
              {"__cluster_dims__ is not supported for this GPU architecture",
               "__cluster_dims__(2, 1, 1) cluster_kernel("});
}

TEST(CodegenCUDA, OnlyDeviceKernelsAreEmitted) {
  std::string src = codegen::GenerateCUDA(Parse(R"(
@T.prim_func
def host(A: T.Buffer((4,), "float32")):
    A[0] = T.float32(1)
)"));
  EXPECT_EQ(src.find("__global__"), std::string::npos) << src;
}

TEST(CodegenCUDA, ClearErrors) {
  ExpectError(
      [] {
        codegen::GenerateCUDA(Parse(R"(
@T.prim_func
def bad_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"tessel.device_kernel": True})
    tx = T.int32()
    with T.attr(tx, "thread_extent", 4):
        A[tx] = T.float32(1)
)"));
      },
      "ValueError", {"codegen cuda: thread_extent of variable 'tx'", "bad_kernel"});
  ExpectError(
      [] {
        codegen::GenerateCUDA(Parse(R"(
@T.prim_func
def par_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"tessel.device_kernel": True})
    for i in T.parallel(4):
        A[i] = T.float32(1)
)"));
      },
      "ValueError", {"codegen cuda: a parallel loop over i", "par_kernel"});
  ExpectError(
      [] {
        codegen::GenerateCUDA(Parse(R"(
@T.prim_func
def local_kernel(A: T.Buffer((n,), "float32"), n: T.int32):
    T.func_attr({"tessel.device_kernel": True})
    L = T.allocate([n], "float32", "local")
    Lb = T.decl_buffer((n,), "float32", data=L, scope="local")
    Lb[0] = A[0]
)"));
      },
      "ValueError",
      {"allocation of L in scope 'local' without a constant positive size", "local_kernel"});
  ExpectError(
      [] {
        codegen::GenerateCUDA(Parse(R"(
@T.prim_func
def nested_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"tessel.device_kernel": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 4):
        with T.attr(threadIdx_x, "thread_extent", 4):
            A[0] = T.float32(1)
)"));
      },
      "ValueError", {"threadIdx.x bound twice"});
}

// A kernel with `dyn` bytes of shared.dyn memory and, when `stat` > 0, `stat` bytes of static
// shared memory.
ir::IRModule SharedKernel(int64_t dyn, int64_t stat) {
  std::string text = R"(
@T.prim_func
def smem_kernel(A: T.Buffer((256,), "uint8"), k: T.int32):
    T.func_attr({"tessel.device_kernel": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 256):
        D = T.allocate([DYN], "uint8", "shared.dyn")
        Db = T.decl_buffer((DYN,), "uint8", data=D, scope="shared.dyn")
        Db[k + threadIdx_x] = A[threadIdx_x]
        A[threadIdx_x] = Db[k]
)";
  if (stat > 0) {
    text += R"(        S = T.allocate([STAT], "uint8", "shared")
        Sb = T.decl_buffer((STAT,), "uint8", data=S, scope="shared")
        Sb[0] = A[0]
)";
  }
  for (auto [key, value] : {std::pair<std::string, int64_t>{"DYN", dyn}, {"STAT", stat}}) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key)) {
      text.replace(at, key.size(), std::to_string(value));
    }
  }
  return Parse(text);
}

void ExpectSharedLimit(const std::string& arch, int64_t limit, const std::string& source) {
  SCOPED_TRACE(arch.empty() ? "no arch" : arch);
  std::string over = " bytes, more than the limit of " + std::to_string(limit) + " bytes (" +
                     source + ") in smem_kernel";
  EXPECT_NO_THROW(codegen::GenerateCUDA(SharedKernel(limit, 0), arch));
  // One byte more; the layout rounds the dynamic size up to 16 bytes.
  ExpectError([&] { codegen::GenerateCUDA(SharedKernel(limit + 1, 0), arch); }, "ValueError",
              {"codegen cuda: the dynamic shared memory (shared.dyn allocations) needs " +
               std::to_string(limit + 16) + over});
  ExpectError([&] { codegen::GenerateCUDA(SharedKernel(limit, 1), arch); }, "ValueError",
              {"codegen cuda: the static and dynamic shared memory together needs " +
               std::to_string(limit + 1) + over});
}

// The opt-in maximum of shared memory per block of each compute capability (cuda_kernel.cc,
// kMaxSharedBytesByArch), exactly at it and one byte past it.
TEST(CodegenCUDA, SharedMemoryLimitIsTheArchitectures) {
  const std::pair<const char*, int64_t> limits[] = {
      {"sm_70", 96 * 1024},   {"sm_72", 96 * 1024},    {"sm_75", 64 * 1024},
      {"sm_80", 163 * 1024},  {"sm_86", 99 * 1024},    {"sm_87", 163 * 1024},
      {"sm_89", 99 * 1024},   {"sm_90", 227 * 1024},   {"sm_90a", 227 * 1024},
      {"sm_100", 227 * 1024}, {"sm_100a", 227 * 1024}, {"sm_103", 227 * 1024},
      {"sm_110", 227 * 1024}, {"sm_120", 99 * 1024},   {"sm_121", 99 * 1024}};
  for (const auto& [arch, limit] : limits) {
    ExpectSharedLimit(
        arch, limit, std::string("kMaxSharedBytesByArch: the opt-in maximum per block on ") + arch);
  }
  // No opt-in before Volta; an architecture the table lacks, or none, gets the most of any.
  ExpectSharedLimit("sm_61", 48 * 1024, "kMaxStaticSharedBytes: sm_61 has no opt-in past it");
  ExpectSharedLimit("sm_130", 227 * 1024,
                    "kMaxSharedBytes: the most of any known architecture, as sm_130 is not in "
                    "kMaxSharedBytesByArch");
  ExpectSharedLimit("", 227 * 1024,
                    "kMaxSharedBytes: the most of any architecture, as no -arch was given");
  // Static shared memory past 48 KiB points to the arch's dynamic limit.
  ExpectError([] { codegen::GenerateCUDA(SharedKernel(16, 49153), "sm_86"); }, "ValueError",
              {"the shared allocation of S (49153 x uint8) with the kernel's other static shared "
               "memory needs 49153 bytes, more than the limit of 49152 bytes "
               "(kMaxStaticSharedBytes); scope shared.dyn allows up to 101376 "
               "(kMaxSharedBytesByArch: the opt-in maximum per block on sm_86) in smem_kernel"});
}

}  // namespace
}  // namespace tessel
