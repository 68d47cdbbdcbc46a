// The tessel_cuda launch path on a real GPU, independent of the compiler: hand-written kernels
// compiled with nvcc to a cubin, wrapped in a module, launched through the packed launch
// functions. Skipped (with the reason) without a CUDA device or without nvcc.
#include <gtest/gtest.h>
#include <tessel/runtime/cuda_driver.h>
#include <tessel/runtime/cuda_module.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "../ir/expect_error.h"

namespace tessel {
namespace runtime {
namespace {

using testing::ExpectError;

const char* kKernels = R"CU(
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <stdint.h>

extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void producer(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * 2.0f;
  asm volatile("griddepcontrol.launch_dependents;");
}
extern "C" __global__ void consumer(const float* b, float* c, int n) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = b[i] + 1.0f;
}
extern "C" __global__ void grid_rotate(float* a, float* b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = (float)i;
  cooperative_groups::this_grid().sync();
  b[i] = a[((blockIdx.x + 1) % gridDim.x) * blockDim.x + threadIdx.x];
}
extern "C" __global__ void reverse_rows(const float* a, float* b, int m) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* row = (float*)smem;
  for (int j = threadIdx.x; j < m; j += blockDim.x) row[j] = a[blockIdx.x * m + j];
  __syncthreads();
  for (int j = threadIdx.x; j < m; j += blockDim.x) b[blockIdx.x * m + j] = row[m - 1 - j];
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_rank(int* out) {
  out[blockIdx.x] = (int)cooperative_groups::this_cluster().block_rank();
}
extern "C" __global__ void scalars(double* out, int8_t a, int64_t b, double c, float d, __half e,
                                   uint16_t f, bool g) {
  out[0] = a; out[1] = (double)b; out[2] = c; out[3] = d; out[4] = __half2float(e);
  out[5] = f; out[6] = g ? 1.0 : 0.0;
}
extern "C" __global__ void spin_then_fill(float* a, int n, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 3.0f;
}
)CU";

constexpr DLDataType kPtr{kDLOpaqueHandle, 64, 1};
constexpr DLDataType kI32{kDLInt, 32, 1};

std::string FindNvcc() {
  if (const char* e = std::getenv("TESSEL_NVCC")) return e;
  for (const char* p : {"/usr/local/cuda/bin/nvcc"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return std::system("command -v nvcc > /dev/null 2>&1") == 0 ? "nvcc" : "";
}

CUDAKernelInfo K(const char* name, std::vector<DLDataType> args) {
  CUDAKernelInfo k;
  k.name = name;
  k.arg_types = std::move(args);
  return k;
}

class CUDALaunchGPU : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (cu::DeviceCount() == 0) return;
    std::string nvcc = FindNvcc();
    if (nvcc.empty()) return;
    int cc = cu::DeviceComputeCapability(0);
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("tessel-gpu-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "k.cu") << kKernels;
    std::string arch = "sm_" + std::to_string(cc) + (cc >= 90 ? "a" : "");
    std::string cmd = nvcc + " -cubin -arch=" + arch + " -o '" + (dir / "k.cubin").string() +
                      "' '" + (dir / "k.cu").string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      compile_error_ = new std::string("nvcc failed: " + cmd);
      return;
    }
    std::ifstream in(dir / "k.cubin", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    CUDAModuleData data;
    data.image = ss.str();
    data.arch = arch;
    data.kernels = {K("add", {kPtr, kPtr, kPtr, kI32}),
                    K("producer", {kPtr, kPtr, kI32}),
                    K("consumer", {kPtr, kPtr, kI32}),
                    K("grid_rotate", {kPtr, kPtr}),
                    K("reverse_rows", {kPtr, kPtr, kI32}),
                    K("cluster_rank", {kPtr}),
                    K("scalars", {kPtr, DLDataType{kDLInt, 8, 1}, DLDataType{kDLInt, 64, 1},
                                  DLDataType{kDLFloat, 64, 1}, DLDataType{kDLFloat, 32, 1},
                                  DLDataType{kDLFloat, 16, 1}, DLDataType{kDLUInt, 16, 1},
                                  DLDataType{kDLBool, 8, 1}}),
                    K("spin_then_fill", {kPtr, kI32, DLDataType{kDLInt, 64, 1}})};
    data.kernels[1].use_pdl = true;  // trigger
    data.kernels[2].use_pdl = true;  // wait
    data.kernels[3].use_grid_sync = true;
    data.kernels[5].cluster_dims = {2, 1, 1};
    module_ = new tvm::ffi::Module(CreateCUDAModule(std::move(data)));
    std::filesystem::remove_all(dir);
  }
  static void TearDownTestSuite() {
    delete module_;
    module_ = nullptr;
  }
  void SetUp() override {
    if (cu::DeviceCount() == 0) GTEST_SKIP() << "no CUDA device (or no driver)";
    if (compile_error_ != nullptr) GTEST_SKIP() << *compile_error_;
    if (module_ == nullptr) GTEST_SKIP() << "nvcc not found (TESSEL_NVCC, PATH, /usr/local/cuda)";
    // The test allocates and copies in the primary context, which launches use too.
    cu::Device dev;
    TESSEL_CUDA_CALL(cuDeviceGet, &dev, 0);
    TESSEL_CUDA_CALL(cuDevicePrimaryCtxRetain, &ctx_, dev);
    TESSEL_CUDA_CALL(cuCtxSetCurrent, ctx_);
  }
  tvm::ffi::Function F(const char* name) { return (*module_)->GetFunction(name).value(); }

  cu::DevicePtr Alloc(size_t bytes) {
    cu::DevicePtr p = 0;
    TESSEL_CUDA_CALL(cuMemAlloc, &p, bytes);
    allocs_.push_back(p);
    return p;
  }
  template <typename T>
  cu::DevicePtr Upload(const std::vector<T>& v) {
    cu::DevicePtr p = Alloc(v.size() * sizeof(T));
    TESSEL_CUDA_CALL(cuMemcpyHtoD, p, v.data(), v.size() * sizeof(T));
    return p;
  }
  template <typename T>
  std::vector<T> Download(cu::DevicePtr p, size_t n) {
    TESSEL_CUDA_CALL(cuCtxSynchronize);
    std::vector<T> v(n);
    TESSEL_CUDA_CALL(cuMemcpyDtoH, v.data(), p, n * sizeof(T));
    return v;
  }
  static void* P(cu::DevicePtr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
  void TearDown() override {
    for (cu::DevicePtr p : allocs_) cu::Driver().cuMemFree(p);
  }

  static tvm::ffi::Module* module_;
  static std::string* compile_error_;
  cu::Context ctx_ = nullptr;
  std::vector<cu::DevicePtr> allocs_;
};
tvm::ffi::Module* CUDALaunchGPU::module_ = nullptr;
std::string* CUDALaunchGPU::compile_error_ = nullptr;

std::vector<float> Iota(int n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 1000);
  return v;
}

TEST_F(CUDALaunchGPU, AddAndScalarConversions) {
  int n = 100000;
  cu::DevicePtr a = Upload(Iota(n)), b = Upload(Iota(n, 0.5f)), c = Alloc(n * 4);
  F("add")(0, (n + 255) / 256, 1, 1, 256, 1, 1, 0, P(a), P(b), P(c), n);
  std::vector<float> got = Download<float>(c, n);
  for (int i = 0; i < n; i += 997) ASSERT_EQ(got[i], 1.5f * static_cast<float>(i % 1000)) << i;
  cu::DevicePtr out = Alloc(7 * 8);
  F("scalars")(0, 1, 1, 1, 1, 1, 1, 0, P(out), -5, int64_t{1} << 40, 2.25, 0.1, 1.5, 65535, true);
  std::vector<double> s = Download<double>(out, 7);
  EXPECT_EQ(s[0], -5);
  EXPECT_EQ(s[1], static_cast<double>(int64_t{1} << 40));
  EXPECT_EQ(s[2], 2.25);
  EXPECT_EQ(s[3], static_cast<double>(0.1f));
  EXPECT_EQ(s[4], 1.5);
  EXPECT_EQ(s[5], 65535);
  EXPECT_EQ(s[6], 1.0);
}

TEST_F(CUDALaunchGPU, PDLProducerConsumer) {
  int n = 1 << 22;
  cu::DevicePtr a = Upload(Iota(n)), b = Alloc(n * 4), c = Alloc(n * 4);
  for (int round = 0; round < 5; ++round) {
    F("producer")(0, n / 256, 1, 1, 256, 1, 1, 0, P(a), P(b), n);
    F("consumer")(0, n / 256, 1, 1, 256, 1, 1, 0, P(b), P(c), n);
  }
  std::vector<float> got = Download<float>(c, n);
  for (int i = 0; i < n; i += 4099) ASSERT_EQ(got[i], 2.0f * static_cast<float>(i % 1000) + 1) << i;
}

TEST_F(CUDALaunchGPU, CooperativeGridSyncAndTooLargeGrid) {
  int blocks = 64, threads = 256;
  cu::DevicePtr a = Alloc(blocks * threads * 4), b = Alloc(blocks * threads * 4);
  F("grid_rotate")(0, blocks, 1, 1, threads, 1, 1, 0, P(a), P(b));
  std::vector<float> got = Download<float>(b, blocks * threads);
  for (int i = 0; i < blocks * threads; ++i) {
    int want = ((i / threads + 1) % blocks) * threads + i % threads;
    ASSERT_EQ(got[i], static_cast<float>(want)) << i;
  }
  ExpectError([&] { F("grid_rotate")
                    (0, 1000000, 1, 1, 1024, 1, 1, 0, P(a), P(b)); }, "ValueError",
              {"grid_rotate: cooperative grid of 1000000 blocks exceeds the"});
}

TEST_F(CUDALaunchGPU, DynamicSharedMemoryGrowsAndIsBounded) {
  int rows = 3;
  for (int m : {100, 5000, 20000, 40000, 100}) {  // 400 B .. 160 KB, then small again
    cu::DevicePtr a = Upload(Iota(rows * m)), b = Alloc(rows * m * 4);
    F("reverse_rows")(0, rows, 1, 1, 256, 1, 1, m * 4, P(a), P(b), m);
    std::vector<float> got = Download<float>(b, rows * m);
    std::vector<float> src = Iota(rows * m);
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < m; j += 7) ASSERT_EQ(got[r * m + j], src[r * m + m - 1 - j]) << m;
    }
  }
  cu::DevicePtr a = Alloc(4), b = Alloc(4);
  ExpectError([&] { F("reverse_rows")
                    (0, 1, 1, 1, 256, 1, 1, 300000, P(a), P(b), 75000); },
              "ValueError", {"reverse_rows: needs 300000 bytes of dynamic shared memory"});
  ExpectError([&] { F("add")
                    (0, 1, 1, 1, 2048, 1, 1, 0, P(a), P(a), P(a), 1); }, "ValueError",
              {"add: block x = 2048 exceeds the maximum 1024 of device 0"});
  ExpectError([&] { F("add")
                    (0, 1, 1, 1, 32, 32, 2, 0, P(a), P(a), P(a), 1); }, "ValueError",
              {"add: 2048 threads per block (32 x 32 x 2) exceed the kernel's limit of 1024"});
}

TEST_F(CUDALaunchGPU, ClusterLaunch) {
  cu::DevicePtr out = Alloc(8 * 4);
  F("cluster_rank")(0, 8, 1, 1, 32, 1, 1, 0, P(out));
  std::vector<int> got = Download<int>(out, 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], i % 2) << i;
}

TEST_F(CUDALaunchGPU, LaunchesGoToTheEnvStream) {
  int n = 1 << 20;
  cu::DevicePtr a = Upload(std::vector<float>(n, 0.0f)), b = Upload(Iota(n)), c = Alloc(n * 4);
  cu::Stream s = nullptr;
  TESSEL_CUDA_CALL(cuStreamCreate, &s, cu::kStreamNonBlocking);
  TVMFFIStreamHandle old = nullptr;
  ASSERT_EQ(TVMFFIEnvSetStream(kDLCUDA, 0, s, &old), 0);
  // On a non-blocking stream, add reads a only after the spinning fill: a launch on any other
  // stream would see zeros.
  F("spin_then_fill")(0, n / 256, 1, 1, 256, 1, 1, 0, P(a), n, int64_t{200000000});
  F("add")(0, n / 256, 1, 1, 256, 1, 1, 0, P(a), P(b), P(c), n);
  TVMFFIEnvSetStream(kDLCUDA, 0, old, nullptr);
  TESSEL_CUDA_CALL(cuStreamSynchronize, s);
  std::vector<float> got = Download<float>(c, n);
  for (int i = 0; i < n; i += 1021) ASSERT_EQ(got[i], 3.0f + static_cast<float>(i % 1000)) << i;
  cu::Driver().cuStreamDestroy(s);
}

TEST_F(CUDALaunchGPU, EightThreadsLaunchConcurrently) {
  // A fresh module: the first launches of all threads race on the lazy load.
  tvm::ffi::Bytes bytes = (*module_)->SaveToBytes();
  tvm::ffi::Module fresh = CreateCUDAModule(ParseCUDAModuleBytes(bytes.data(), bytes.size()));
  tvm::ffi::Function add = fresh->GetFunction("add").value();
  tvm::ffi::Function rev = fresh->GetFunction("reverse_rows").value();
  int n = 1 << 16;
  cu::DevicePtr a = Upload(Iota(n)), b = Upload(Iota(n, 2.0f));
  std::vector<cu::DevicePtr> outs;
  for (int t = 0; t < 8; ++t) outs.push_back(Alloc(n * 4));
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      try {
        cu::Driver().cuCtxSetCurrent(ctx_);
        for (int k = 0; k < 50; ++k) {
          add(0, n / 256, 1, 1, 256, 1, 1, 0, P(a), P(b), P(outs[t]), n);
          // Shared sizes differ by thread: the limit is raised concurrently, never lowered.
          rev(0, 1, 1, 1, 128, 1, 1, (t + 1) * 16 * 1024, P(a), P(outs[t]), (t + 1) * 4096);
          add(0, n / 256, 1, 1, 256, 1, 1, 0, P(a), P(b), P(outs[t]), n);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(errors[t], "") << t;
    std::vector<float> got = Download<float>(outs[t], n);
    for (int i = 0; i < n; i += 331) ASSERT_EQ(got[i], 3.0f * static_cast<float>(i % 1000)) << t;
  }
}

}  // namespace
}  // namespace runtime
}  // namespace tessel
