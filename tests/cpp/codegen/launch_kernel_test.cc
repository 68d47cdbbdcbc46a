// Host C for launch_kernel, without a GPU: a host function that launches is generated, compiled
// with the C compile step and loaded; its launches look the kernel up among the library's imports,
// then in the global registry, where the test registers a recording stand-in, so the packed launch
// arguments, the device checks, the device id and error propagation are all observable.
#include <gtest/gtest.h>
#include <tessel/codegen/codegen_c.h>
#include <tessel/codegen/compile_c.h>
#include <tessel/ir/parser.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compile_util.h"

namespace tessel {
namespace {

using testing::ExpectCallError;
using tvm::ffi::Function;

// Two launches (the second only when n > 256), a symbolic grid and shared size, a float argument.
const char* kHost = R"(
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), alpha: T.float32):
        T.func_attr({"global_symbol": "add", "target": "cuda"})
        T.launch_kernel("tessel_test_launch_rec", (n + 127) // 128, 1, 1, 128, 1, 1, n * 4, A.data, B.data, alpha, n, dtype="int32")
        if n > 256:
            T.launch_kernel("tessel_test_launch_rec", 2, 3, 4, 5, 6, 7, 0, B.data, A.data, T.float32(0.5), n, dtype="int32")

    @T.prim_func
    def fail(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "fail", "target": "cuda"})
        T.launch_kernel("tessel_test_launch_fail", 1, 1, 1, 1, 1, 1, 0, A.data, dtype="int32")

    @T.prim_func
    def missing(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "missing"})
        T.launch_kernel("tessel_test_no_such_kernel", 1, 1, 1, 1, 1, 1, 0, A.data, dtype="int32")
)";

struct Recorded {
  std::vector<int64_t> ints;  // device_id, 6 dims, dyn smem
  std::vector<tvm::ffi::Any> args;
};
std::mutex g_mu;
std::vector<Recorded> g_calls;
std::atomic<int> g_count{0};

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef()
      .def_packed("tessel_test_launch_rec",
                  [](tvm::ffi::PackedArgs args, tvm::ffi::Any*) {
                    Recorded r;
                    for (int i = 0; i < 8; ++i) r.ints.push_back(args[i].cast<int64_t>());
                    for (int i = 8; i < args.size(); ++i) r.args.push_back(args[i]);
                    std::lock_guard<std::mutex> lock(g_mu);
                    g_calls.push_back(std::move(r));
                    ++g_count;
                  })
      .def_packed("tessel_test_launch_fail", [](tvm::ffi::PackedArgs, tvm::ffi::Any*) {
        TVM_FFI_THROW(ValueError) << "launch refused by the test";
      });
}

class LaunchKernelC : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    source_ = new std::string(codegen::GenerateC(ir::ParseModule(kHost)));
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("tessel-launch-test-" + std::to_string(getpid())));
    std::filesystem::create_directories(*dir_);
    std::string lib = codegen::CompileCSource(*source_, (*dir_ / "lib.so").string());
    module_ = new tvm::ffi::Module(tvm::ffi::Module::LoadFromFile(lib));
  }
  static void TearDownTestSuite() {
    delete module_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete source_;
  }
  Function F(const char* name) { return module_->operator->()->GetFunction(name).value(); }

  // A 1-D float32 view over host memory that claims to live on `dev`.
  static DLTensor View(float* data, int64_t* shape, DLDevice dev) {
    DLTensor t;
    t.data = data;
    t.device = dev;
    t.ndim = 1;
    t.dtype = testing::F32();
    t.shape = shape;
    t.strides = nullptr;
    t.byte_offset = 0;
    return t;
  }

  static std::string* source_;
  static std::filesystem::path* dir_;
  static tvm::ffi::Module* module_;
};
std::string* LaunchKernelC::source_ = nullptr;
std::filesystem::path* LaunchKernelC::dir_ = nullptr;
tvm::ffi::Module* LaunchKernelC::module_ = nullptr;

TEST_F(LaunchKernelC, SourceDeclaresContextOnceAndCompilesWithoutWarnings) {
  const std::string decl = "TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = NULL;";
  size_t first = source_->find(decl);
  ASSERT_NE(first, std::string::npos) << *source_;
  EXPECT_EQ(source_->find("__tvm_ffi__library_ctx = NULL", first + decl.size()), std::string::npos);
  EXPECT_NE(source_->find("TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx"),
            std::string::npos);
  testing::CompiledC c = testing::CompileAndLoad(*source_);
  EXPECT_EQ(c.log, "");
}

TEST_F(LaunchKernelC, PacksDeviceDimsSharedSizeAndArguments) {
  float a[300], b[300];
  int64_t shape[1] = {300};
  DLTensor ta = View(a, shape, DLDevice{kDLCUDA, 3});
  DLTensor tb = View(b, shape, DLDevice{kDLCUDA, 3});
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_calls.clear();
  }
  F("add")(&ta, &tb, 1.5);
  std::lock_guard<std::mutex> lock(g_mu);
  ASSERT_EQ(g_calls.size(), 2u);
  EXPECT_EQ(g_calls[0].ints, (std::vector<int64_t>{3, 3, 1, 1, 128, 1, 1, 1200}));
  ASSERT_EQ(g_calls[0].args.size(), 4u);
  EXPECT_EQ(g_calls[0].args[0].cast<void*>(), static_cast<void*>(a));
  EXPECT_EQ(g_calls[0].args[1].cast<void*>(), static_cast<void*>(b));
  EXPECT_EQ(g_calls[0].args[2].cast<double>(), 1.5);
  EXPECT_EQ(g_calls[0].args[3].cast<int64_t>(), 300);
  EXPECT_EQ(g_calls[1].ints, (std::vector<int64_t>{3, 2, 3, 4, 5, 6, 7, 0}));
  EXPECT_EQ(g_calls[1].args[0].cast<void*>(), static_cast<void*>(b));
  EXPECT_EQ(g_calls[1].args[2].cast<double>(), 0.5);
}

TEST_F(LaunchKernelC, TensorsMustBeOnOneCUDADevice) {
  float a[4], b[4];
  int64_t shape[1] = {4};
  DLTensor cpu = View(a, shape, DLDevice{kDLCPU, 0});
  DLTensor c0 = View(a, shape, DLDevice{kDLCUDA, 0});
  DLTensor c1 = View(b, shape, DLDevice{kDLCUDA, 1});
  ExpectCallError(F("add"), "ValueError", "add: A.device: expected cuda, got cpu:0", &cpu, &c1,
                  1.0);
  ExpectCallError(F("add"), "ValueError",
                  "add: B.device: expected cuda:0 (the device of A), got cuda:1", &c0, &c1, 1.0);
  // A function without the target attr that launches is a CUDA function too.
  ExpectCallError(F("missing"), "ValueError", "missing: A.device: expected cuda, got cpu:0", &cpu);
}

TEST_F(LaunchKernelC, LaunchErrorsReachTheCaller) {
  float a[4];
  int64_t shape[1] = {4};
  DLTensor t = View(a, shape, DLDevice{kDLCUDA, 0});
  ExpectCallError(F("fail"), "ValueError", "launch refused by the test", &t);
  try {
    F("missing")(&t);
    ADD_FAILURE() << "expected a lookup failure";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_NE(e.message().find("tessel_test_no_such_kernel"), std::string::npos) << e.message();
  }
  // The failure is not cached: the next call fails the same way, and a good call still works.
  ExpectCallError(F("fail"), "ValueError", "launch refused by the test", &t);
}

TEST_F(LaunchKernelC, ConcurrentFirstLaunches) {
  float a[64], b[64];
  int64_t shape[1] = {64};
  DLTensor ta = View(a, shape, DLDevice{kDLCUDA, 0});
  DLTensor tb = View(b, shape, DLDevice{kDLCUDA, 0});
  // A fresh library, so the cached lookup starts empty while 8 threads race on it.
  std::string lib = codegen::CompileCSource(*source_, (*dir_ / "lib2.so").string());
  tvm::ffi::Module m = tvm::ffi::Module::LoadFromFile(lib);
  Function add = m->GetFunction("add").value();
  int before = g_count.load();
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) add(&ta, &tb, 2.0);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(g_count.load() - before, 8 * 50);
}

}  // namespace
}  // namespace tessel
