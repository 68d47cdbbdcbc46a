// The tessel_cuda module without a GPU: the bytes format round trip through tvm-ffi's registered
// loader, the loader's refusals, the launch checks that come before the driver, and the driver's
// absence reported at launch time (in a child process, since the driver is opened once per
// process).
#include <gtest/gtest.h>
#include <tessel/runtime/cuda_driver.h>
#include <tessel/runtime/cuda_module.h>
#include <tvm/ffi/function.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "../ir/expect_error.h"

namespace tessel {
namespace runtime {
namespace {

using testing::ExpectError;

constexpr DLDataType kHandle{kDLOpaqueHandle, 64, 1};
constexpr DLDataType kI32{kDLInt, 32, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};
constexpr DLDataType kF32{kDLFloat, 32, 1};

CUDAModuleData SampleData() {
  CUDAModuleData d;
  // Arbitrary bytes including NULs: the image is opaque to the format.
  d.image = std::string(
      "\x7f"
      "ELF\0\1\2 fake cubin",
      18);
  d.arch = "sm_90";
  d.source = "extern \"C\" __global__ void add_kernel(float* a) {}\n";
  CUDAKernelInfo add;
  add.name = "add_kernel";
  add.arg_types = {kHandle, kHandle, kI32};
  CUDAKernelInfo pdl;
  pdl.name = "consumer_kernel";
  pdl.arg_types = {kHandle, kF32, kI64};
  pdl.use_pdl = true;
  CUDAKernelInfo grid;
  grid.name = "grid_kernel_1";
  grid.use_grid_sync = true;
  grid.use_pdl = true;
  grid.cluster_dims = {2, 1, 1};
  CUDAKernelInfo tma;
  tma.name = "tma_kernel";
  tma.arg_types = {kHandle, kI32};
  CUDATensorMapParam map;
  map.param = 0;
  map.dtype = DLDataType{kDLFloat, 16, 1};
  map.swizzle = 128;
  map.box = {128, 64};
  map.tensor = "A";
  tma.tensor_maps = {map};
  // add_kernel's loads of its two pointers are 16 and 8 bytes wide: its variant assumes them so.
  CUDAKernelInfo add_aligned = add;
  add_aligned.name = "add_kernel_aligned";
  d.kernels = {add, pdl, grid, tma, add_aligned};
  d.kernels[0].aligned_variant = "add_kernel_aligned";
  d.kernels[0].aligned_params = {{0, 16}, {1, 8}};
  return d;
}

tvm::ffi::Module LoadThroughRegistry(const tvm::ffi::Bytes& bytes) {
  auto loader = tvm::ffi::Function::GetGlobal("ffi.Module.load_from_bytes.tessel_cuda");
  if (!loader.has_value()) throw std::runtime_error("loader not registered");
  return (*loader)(bytes).cast<tvm::ffi::Module>();
}

TEST(CUDAModule, BytesRoundTripThroughRegisteredLoader) {
  CUDAModuleData d = SampleData();
  tvm::ffi::Bytes bytes = SaveCUDAModuleBytes(d);
  tvm::ffi::Module m = LoadThroughRegistry(bytes);
  EXPECT_STREQ(m->kind(), "tessel_cuda");
  EXPECT_EQ(m->GetPropertyMask(),
            tvm::ffi::Module::kBinarySerializable | tvm::ffi::Module::kRunnable);
  // The loaded module saves the very same bytes, and they parse back to the same table.
  tvm::ffi::Bytes again = m->SaveToBytes();
  ASSERT_EQ(std::string(again.data(), again.size()), std::string(bytes.data(), bytes.size()));
  CUDAModuleData back = ParseCUDAModuleBytes(again.data(), again.size());
  EXPECT_EQ(back.image, d.image);
  EXPECT_EQ(back.arch, "sm_90");
  EXPECT_EQ(back.source, d.source);
  ASSERT_EQ(back.kernels.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(back.kernels[i], d.kernels[i]) << i;
  EXPECT_EQ(back.kernels[0].aligned_variant, "add_kernel_aligned");
  EXPECT_EQ(back.kernels[0].aligned_params,
            (std::vector<std::pair<uint32_t, uint32_t>>{{0, 16}, {1, 8}}));
  ASSERT_EQ(back.kernels[3].tensor_maps.size(), 1u);
  EXPECT_EQ(back.kernels[3].tensor_maps[0].box, (std::vector<uint32_t>{128, 64}));
  EXPECT_TRUE(back.kernels[2].use_grid_sync);
  EXPECT_EQ(back.kernels[2].cluster_dims[0], 2u);
  EXPECT_EQ(std::string(m->InspectSource("cu")), d.source);
  // Every kernel has a launch function; other names do not.
  EXPECT_TRUE(m->GetFunction("add_kernel").has_value());
  EXPECT_TRUE(m->GetFunction("grid_kernel_1").has_value());
  EXPECT_FALSE(m->GetFunction("add").has_value());
}

TEST(CUDAModule, TableDifferencesAreSeen) {
  CUDAKernelInfo a = SampleData().kernels[0];
  CUDAKernelInfo b = a;
  EXPECT_EQ(a, b);
  b.arg_types[2] = kI64;
  EXPECT_NE(a, b);
  b = a;
  b.use_pdl = true;
  EXPECT_NE(a, b);
  CUDAKernelInfo t = SampleData().kernels[3];
  CUDAKernelInfo u = t;
  EXPECT_EQ(t, u);
  u.tensor_maps[0].swizzle = 64;
  EXPECT_NE(t, u);
  CUDAKernelInfo v = SampleData().kernels[0];
  CUDAKernelInfo w = v;
  w.aligned_params[1].second = 16;
  EXPECT_NE(v, w);
  w = v;
  w.aligned_variant = "other";
  EXPECT_NE(v, w);
}

TEST(CUDAModule, FormatIsLittleEndianWithVersion) {
  CUDAModuleData d;
  d.image = "AB";
  tvm::ffi::Bytes b = SaveCUDAModuleBytes(d);
  std::string s(b.data(), b.size());
  ASSERT_GE(s.size(), 22u);
  EXPECT_EQ(s.substr(0, 8), std::string("TSLCUDA\0", 8));
  EXPECT_EQ(s.substr(8, 4), std::string("\x03\0\0\0", 4));           // version 3
  EXPECT_EQ(s.substr(12, 8), std::string("\x02\0\0\0\0\0\0\0", 8));  // image length
  EXPECT_EQ(s.substr(20, 2), "AB");
  // magic + version + 3 strings (8-byte lengths) + kernel count.
  EXPECT_EQ(s.size(), 8u + 4u + (8u + 2u) + 8u + 8u + 4u);
}

TEST(CUDAModule, LoaderRefusesCorruptBytes) {
  tvm::ffi::Bytes good = SaveCUDAModuleBytes(SampleData());
  std::string s(good.data(), good.size());
  // Every strict prefix is truncated somewhere.
  for (size_t n : {size_t{0}, size_t{5}, size_t{10}, size_t{30}, s.size() / 2, s.size() - 1}) {
    ExpectError([&] { LoadThroughRegistry(tvm::ffi::Bytes(s.substr(0, n))); }, "ValueError",
                {"tessel_cuda module bytes: truncated at"});
  }
  ExpectError([&] { LoadThroughRegistry(tvm::ffi::Bytes(s + "x")); }, "ValueError",
              {"1 trailing bytes"});
  std::string bad_magic = s;
  bad_magic[0] = 'X';
  ExpectError([&] { LoadThroughRegistry(tvm::ffi::Bytes(bad_magic)); }, "ValueError",
              {"bad magic"});
  std::string v1 = s;
  v1[8] = 1;
  ExpectError([&] { LoadThroughRegistry(tvm::ffi::Bytes(v1)); }, "ValueError",
              {"format version 1 is not supported", "reads version 3"});
  // A huge image length cannot reserve memory before failing.
  std::string huge = s;
  for (int i = 12; i < 20; ++i) huge[i] = '\xff';
  ExpectError([&] { LoadThroughRegistry(tvm::ffi::Bytes(huge)); }, "ValueError",
              {"truncated at the image"});
}

TEST(CUDAModule, InvalidTablesAreRefused) {
  CUDAModuleData d = SampleData();
  d.kernels[1].name = d.kernels[0].name;
  ExpectError([&] { SaveCUDAModuleBytes(d); }, "ValueError", {"add_kernel listed twice"});
  d = SampleData();
  d.kernels[2].cluster_dims = {2, 0, 1};
  ExpectError([&] { CreateCUDAModule(d); }, "ValueError", {"grid_kernel_1", "mix 0 and non-zero"});
  d = SampleData();
  d.kernels[0].arg_types[0] = DLDataType{kDLFloat, 32, 4};
  ExpectError([&] { CreateCUDAModule(d); }, "ValueError", {"parameter 0 has unsupported type"});
  d = SampleData();
  d.kernels[3].tensor_maps[0].param = 1;  // an int32 parameter
  ExpectError([&] { CreateCUDAModule(d); }, "ValueError",
              {"tma_kernel: tensor map of A names parameter 1, not a later handle parameter"});
  d = SampleData();
  d.kernels[3].tensor_maps[0].swizzle = 48;
  ExpectError([&] { CreateCUDAModule(d); }, "ValueError", {"rank 2 and swizzle 48"});
  // Aligned variants: another kernel of the table, with the same parameter count, listing pointer
  // parameters in order with an alignment of 2, 4, 8 or 16 bytes.
  for (const char* variant : {"missing_kernel", "add_kernel", "grid_kernel_1"}) {
    d = SampleData();
    d.kernels[0].aligned_variant = variant;
    ExpectError([&] { CreateCUDAModule(d); }, "ValueError",
                {std::string("add_kernel: its aligned variant ") + variant});
  }
  d = SampleData();
  d.kernels[4].arg_types[2] = kI64;  // same count, another type
  ExpectError([&] { CreateCUDAModule(d); }, "ValueError",
              {"add_kernel: its aligned variant add_kernel_aligned"});
  d = SampleData();
  d.kernels[4].use_pdl = true;  // another launch attribute
  ExpectError([&] { CreateCUDAModule(d); }, "ValueError",
              {"add_kernel: its aligned variant add_kernel_aligned"});
  d = SampleData();
  d.kernels[4].aligned_variant = "add_kernel";  // the variant has a variant
  d.kernels[4].aligned_params = {{0, 16}};
  ExpectError([&] { CreateCUDAModule(d); }, "ValueError", {"its aligned variant add_kernel"});
  for (std::pair<uint32_t, uint32_t> bad :
       {std::pair<uint32_t, uint32_t>{2, 16}, {0, 32}, {5, 4}}) {
    d = SampleData();
    d.kernels[0].aligned_params = {bad};
    ExpectError([&] { SaveCUDAModuleBytes(d); }, "ValueError",
                {"add_kernel: aligned parameter " + std::to_string(bad.first)});
  }
  d = SampleData();
  d.kernels[0].aligned_params = {{1, 8}, {0, 16}};  // not in order
  ExpectError([&] { SaveCUDAModuleBytes(d); }, "ValueError", {"aligned parameter 0 (16 bytes)"});
  d = SampleData();
  d.kernels.push_back(d.kernels[3]);
  d.kernels.back().name = "tma_kernel_aligned";
  d.kernels[3].aligned_variant = "tma_kernel_aligned";  // its param 0 is a tensor map
  d.kernels[3].aligned_params = {{0, 16}};
  ExpectError([&] { SaveCUDAModuleBytes(d); }, "ValueError",
              {"tma_kernel: aligned parameter 0 (16 bytes)"});
  d = SampleData();
  d.kernels[0].aligned_params.clear();
  ExpectError([&] { SaveCUDAModuleBytes(d); }, "ValueError", {"or no parameter is listed"});
}

// Checks that need no driver: they fail the same on any machine, before the driver is opened.
TEST(CUDAModule, LaunchChecksBeforeTheDriver) {
  tvm::ffi::Module m = CreateCUDAModule(SampleData());
  tvm::ffi::Function add = *m->GetFunction("add_kernel");
  void* p = reinterpret_cast<void*>(0x1000);
  ExpectError([&] { add(0, 1, 1, 1, 32, 1, 1, 0, p, p); }, "TypeError",
              {"add_kernel: expected 11 launch arguments", "3 kernel argument values", "got 10"});
  ExpectError([&] { add(0, 0, 1, 1, 32, 1, 1, 0, p, p, 4); }, "ValueError",
              {"add_kernel: grid x = 0: launch dimensions must be at least 1"});
  ExpectError([&] { add(0, 4, 1, 1, 32, 1, 0, 0, p, p, 4); }, "ValueError",
              {"add_kernel: block z = 0"});
  ExpectError([&] { add(0, 4, 1, 1, -1, 1, 1, 0, p, p, 4); }, "ValueError", {"block x = -1"});
  ExpectError([&] { add(0, 4, 1, 1, 32, 1, 1, -16, p, p, 4); }, "ValueError",
              {"dyn_shared_bytes = -16"});
  ExpectError([&] { add(-1, 4, 1, 1, 32, 1, 1, 0, p, p, 4); }, "ValueError",
              {"device_id -1 is out of range"});
  ExpectError([&] { add(0, 4.0, 1, 1, 32, 1, 1, 0, p, p, 4); }, "TypeError",
              {"add_kernel: grid x: expected int, got float"});
  ExpectError([&] { add(0, 4, 1, 1, 32, 1, 1, 0, p, 3.5, 4); }, "TypeError",
              {"add_kernel: kernel argument 1: expected a pointer or tensor, got float"});
  ExpectError([&] { add(0, 4, 1, 1, 32, 1, 1, 0, p, p, int64_t{1} << 40); }, "ValueError",
              {"kernel argument 2: expected an int32 value, got 1099511627776"});
  ExpectError([&] { add(0, 4, 1, 1, 32, 1, 1, 0, p, p, "x"); }, "TypeError",
              {"kernel argument 2: expected int, got"});
  tvm::ffi::Function grid = *m->GetFunction("grid_kernel_1");
  ExpectError([&] { grid(0, 3, 1, 1, 32, 1, 1, 0); }, "ValueError",
              {"grid_kernel_1: grid x = 3 is not a multiple of the cluster dim 2"});
  // A tensor-map parameter takes the address, 2 dims and 2 strides: 1 + 4 values, then the int.
  tvm::ffi::Function tma = *m->GetFunction("tma_kernel");
  ExpectError([&] { tma(0, 1, 1, 1, 32, 1, 1, 0, p, 4); }, "TypeError",
              {"tma_kernel: expected 14 launch arguments", "6 kernel argument values", "got 10"});
  void* odd = reinterpret_cast<void*>(0x1002);
  ExpectError([&] { tma(0, 1, 1, 1, 32, 1, 1, 0, odd, 64, 64, 64, 1, 4); }, "ValueError",
              {"tma_kernel: tensor A cannot be described by a TMA tensor map: address 0x1002 is "
               "not 16-byte aligned"});
  ExpectError([&] { tma(0, 1, 1, 1, 32, 1, 1, 0, p, 64, 60, 60, 1, 4); }, "ValueError",
              {"tensor A cannot be described", "stride 0 is 60 elements = 120 bytes"});
}

// Runs this test binary again with only `test` selected and `env` added; returns its exit status
// and output.
int RunChild(const std::string& test, const std::string& env, std::string* output) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return -1;
  exe[n] = '\0';
  std::string cmd =
      "env TESSEL_TEST_CUDA_CHILD=1 " + env + " '" + exe + "' --gtest_filter=" + test + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof(buf), p)) > 0) output->append(buf, k);
  return pclose(p);
}

bool IsChild() { return std::getenv("TESSEL_TEST_CUDA_CHILD") != nullptr; }

// In a child process with TESSEL_CUDA_DRIVER_LIBRARY set: creating and loading a module never
// opens the driver, a launch that passes the early checks reports the driver's absence, and so
// does every later launch.
TEST(CUDAModuleChild, MissingDriverAtLaunch) {
  if (!IsChild())
    GTEST_SKIP() << "runs in a child process (CUDAModule.MissingDriverIsALaunchError)";
  tvm::ffi::Module m = LoadThroughRegistry(SaveCUDAModuleBytes(SampleData()));
  tvm::ffi::Function add = *m->GetFunction("add_kernel");
  void* p = reinterpret_cast<void*>(0x1000);
  for (int i = 0; i < 2; ++i) {
    ExpectError(
        [&] { add(0, 4, 1, 1, 32, 1, 1, 0, p, p, 4); }, "RuntimeError",
        {"CUDA driver (/nonexistent/libcuda.so.1) not found:", "TESSEL_CUDA_DRIVER_LIBRARY"});
  }
  EXPECT_EQ(cu::DeviceCount(), 0);
  ExpectError([] { cu::DeviceComputeCapability(0); }, "RuntimeError",
              {"CUDA driver (/nonexistent/libcuda.so.1) not found:"});
}

TEST(CUDAModule, MissingDriverIsALaunchError) {
  std::string out;
  int status = RunChild("CUDAModuleChild.MissingDriverAtLaunch",
                        "TESSEL_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1", &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
}

// The toolkit's stub libcuda resolves every symbol but fails cuInit: the error names the call.
TEST(CUDAModuleChild, StubDriverAtLaunch) {
  if (!IsChild()) GTEST_SKIP() << "runs in a child process (CUDAModule.StubDriverFailsInit)";
  tvm::ffi::Module m = CreateCUDAModule(SampleData());
  tvm::ffi::Function add = *m->GetFunction("add_kernel");
  void* p = reinterpret_cast<void*>(0x1000);
  ExpectError([&] { add(0, 4, 1, 1, 32, 1, 1, 0, p, p, 4); }, "RuntimeError", {"CUDA: cuInit: "});
  EXPECT_EQ(cu::DeviceCount(), 0);
}

TEST(CUDAModule, StubDriverFailsInit) {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0) GTEST_SKIP() << "no CUDA toolkit stub driver at " << stub;
  std::string out;
  int status = RunChild("CUDAModuleChild.StubDriverAtLaunch",
                        std::string("TESSEL_CUDA_DRIVER_LIBRARY=") + stub, &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
}

}  // namespace
}  // namespace runtime
}  // namespace tessel
