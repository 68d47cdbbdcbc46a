// SplitHostDevice and DynamicSharedLayout: host/device pairs compared structurally with expected
// modules (one kernel, two kernels, scalar and symbolic parameters, allocations moved in),
// attributes (launch dims, dynamic shared bytes, PDL, grid sync, cluster dims), the errors, and
// every GPU example through the CUDA pipeline up to SplitHostDevice with the verifier after each
// pass.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/transform/split_host_device.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../ir/expect_error.h"
#include "expect_pass.h"

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)

std::string VerifyModule(const IRModule& mod) {
  std::string out;
  for (const auto& e : VerifyWellFormed(mod)) out += e.ToString() + "\n";
  return out;
}

// SplitHostDevice(before) equals expected (free variables mapped) and verifies.
void ExpectSplit(const std::string& before, const std::string& expected) {
  IRModule in = ParseModule(before), want = ParseModule(expected);
  IRModule got = SplitHostDevice(in);
  auto mismatch = tvm::ffi::StructuralEqual::GetFirstMismatch(got, want, /*map_free_vars=*/true);
  EXPECT_FALSE(mismatch.has_value())
      << "first difference at " << testing::MismatchPath((*mismatch).get<0>()) << "\ngot:\n"
      << AsText(got) << "\nexpected:\n"
      << AsText(want);
  EXPECT_EQ(VerifyModule(got), "") << AsText(got);
}

PrimExpr Attr(const PrimFunc& f, const char* key) {
  auto v = f->attrs.Get(key);
  EXPECT_TRUE(v.has_value()) << key;
  return v ? (*v).cast<PrimExpr>() : PrimExpr();
}

TEST(SplitHostDevice, OneKernelWithSymbolicSize) {
  ExpectSplit(R"(
@T.prim_func
def add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "add"})
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", (n + 127) // 128):
        with T.attr(threadIdx_x, "thread_extent", 128):
            if blockIdx_x * 128 + threadIdx_x < n:
                B[blockIdx_x * 128 + threadIdx_x] = A[blockIdx_x * 128 + threadIdx_x]
)",
              R"(
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "add"})
        T.launch_kernel("add_kernel", (n + 127) // 128, 1, 1, 128, 1, 1, 0, A.data, B.data, n, dtype="int32")

    @T.prim_func
    def add_kernel(A: T.handle("float32", "global"), B: T.handle("float32", "global"), n: T.int32):
        T.func_attr({"global_symbol": "add_kernel", "tessel.device_kernel": True, "tessel.dyn_shared_bytes": T.int32(0), "tessel.host_facts": [n >= 0], "tessel.launch_dims": [(n + 127) // 128, T.int32(1), T.int32(1), T.int32(128), T.int32(1), T.int32(1)], "tessel.use_grid_sync": False, "tessel.use_pdl": False})
        blockIdx_x = T.int32()
        threadIdx_x = T.int32()
        with T.attr(blockIdx_x, "thread_extent", (n + 127) // 128):
            A_1 = T.decl_buffer((n,), "float32", data=A)
            B_1 = T.decl_buffer((n,), "float32", data=B)
            with T.attr(threadIdx_x, "thread_extent", 128):
                if blockIdx_x * 128 + threadIdx_x < n:
                    B_1[blockIdx_x * 128 + threadIdx_x] = A_1[blockIdx_x * 128 + threadIdx_x]
)");
}

TEST(SplitHostDevice, TwoKernelsScalarParamsAndASharedAllocationMovedIn) {
  ExpectSplit(R"(
@T.prim_func
def scale(A: T.Buffer((n,), "float32"), alpha: T.float32):
    T.func_attr({"global_symbol": "scale"})
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    S_data = T.allocate([64], "float32", "shared")
    S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
    with T.attr(blockIdx_x, "thread_extent", n // 64):
        with T.attr(threadIdx_x, "thread_extent", 64):
            A[blockIdx_x * 64 + threadIdx_x] = A[blockIdx_x * 64 + threadIdx_x] * alpha
    with T.attr(blockIdx_x, "thread_extent", n // 64):
        with T.attr(threadIdx_x, "thread_extent", 64):
            S[threadIdx_x] = A[blockIdx_x * 64 + threadIdx_x]
            T.tvm_storage_sync("shared")
            A[blockIdx_x * 64 + threadIdx_x] = S[63 - threadIdx_x]
)",
              R"(
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def scale(A: T.Buffer((n,), "float32"), alpha: T.float32):
        T.func_attr({"global_symbol": "scale"})
        T.launch_kernel("scale_kernel", n // 64, 1, 1, 64, 1, 1, 0, A.data, alpha, n, dtype="int32")
        T.launch_kernel("scale_kernel_1", n // 64, 1, 1, 64, 1, 1, 0, A.data, n, dtype="int32")

    @T.prim_func
    def scale_kernel(A: T.handle("float32", "global"), alpha: T.float32, n: T.int32):
        T.func_attr({"global_symbol": "scale_kernel", "tessel.device_kernel": True, "tessel.dyn_shared_bytes": T.int32(0), "tessel.host_facts": [n >= 0], "tessel.launch_dims": [n // 64, T.int32(1), T.int32(1), T.int32(64), T.int32(1), T.int32(1)], "tessel.use_grid_sync": False, "tessel.use_pdl": False})
        blockIdx_x = T.int32()
        threadIdx_x = T.int32()
        with T.attr(blockIdx_x, "thread_extent", n // 64):
            A_1 = T.decl_buffer((n,), "float32", data=A)
            with T.attr(threadIdx_x, "thread_extent", 64):
                A_1[blockIdx_x * 64 + threadIdx_x] = A_1[blockIdx_x * 64 + threadIdx_x] * alpha

    @T.prim_func
    def scale_kernel_1(A: T.handle("float32", "global"), n: T.int32):
        T.func_attr({"global_symbol": "scale_kernel_1", "tessel.device_kernel": True, "tessel.dyn_shared_bytes": T.int32(0), "tessel.host_facts": [n >= 0], "tessel.launch_dims": [n // 64, T.int32(1), T.int32(1), T.int32(64), T.int32(1), T.int32(1)], "tessel.use_grid_sync": False, "tessel.use_pdl": False})
        blockIdx_x = T.int32()
        threadIdx_x = T.int32()
        with T.attr(blockIdx_x, "thread_extent", n // 64):
            S_data = T.allocate([64], "float32", "shared")
            A_1 = T.decl_buffer((n,), "float32", data=A)
            S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
            with T.attr(threadIdx_x, "thread_extent", 64):
                S[threadIdx_x] = A_1[blockIdx_x * 64 + threadIdx_x]
                T.tvm_storage_sync("shared")
                A_1[blockIdx_x * 64 + threadIdx_x] = S[63 - threadIdx_x]
)");
}

constexpr char kDynamicKernel[] = R"(
@T.prim_func
def f(A: T.Buffer((n, m), "float32")):
    T.func_attr({"global_symbol": "f", "tessel.cluster_dims": [2, 1, 1]})
    blockIdx_x = T.int32()
    blockIdx_z = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_z, "thread_extent", 3):
        with T.attr(blockIdx_x, "thread_extent", n):
            R_data = T.allocate([m], "float32", "shared.dyn")
            R = T.decl_buffer((m,), "float32", data=R_data, scope="shared.dyn")
            H_data = T.allocate([3], "float16", "shared.dyn")
            H = T.decl_buffer((3,), "float16", data=H_data, scope="shared.dyn")
            Q_data = T.allocate([8], "float32", "shared")
            Q = T.decl_buffer((8,), "float32", data=Q_data, scope="shared")
            with T.attr(threadIdx_x, "thread_extent", 32):
                T.pdl_sync()
                R[threadIdx_x] = A[blockIdx_x, threadIdx_x]
                H[0] = T.float16(0)
                Q[0] = R[0]
                T.grid_sync()
)";

// e with m bound to value, folded to a constant.
int64_t EvalAt(const PrimExpr& e, const Var& m, int64_t value) {
  arith::Analyzer analyzer;
  analyzer.Bind(m, Int32(value));
  PrimExpr folded = analyzer.Simplify(e);
  const auto* imm = folded.as<IntImmNode>();
  EXPECT_NE(imm, nullptr) << AsText(folded);
  return imm ? imm->value : -1;
}

TEST(SplitHostDevice, DynamicSharedBytesFlagsAndClusterDims) {
  IRModule in = ParseModule(kDynamicKernel);
  IRModule out = SplitHostDevice(in);
  EXPECT_EQ(VerifyModule(out), "") << AsText(out);
  PrimFunc k = out->functions.Get("f_kernel").value();
  PrimFunc host = out->functions.Get("f").value();
  EXPECT_TRUE(k->attrs.Get("tessel.use_pdl").value().cast<bool>());
  EXPECT_TRUE(k->attrs.Get("tessel.use_grid_sync").value().cast<bool>());
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(k->attrs.Get("tessel.cluster_dims").value(),
                                               host->attrs.Get("tessel.cluster_dims").value()));
  auto dims = k->attrs.Get("tessel.launch_dims").value().cast<Array<PrimExpr>>();
  ASSERT_EQ(dims.size(), 6u);
  // Params: A's data, then m and n by name (n from the launch dims, m from R's size). The kernel
  // has variables of its own; its attributes use them.
  ASSERT_EQ(k->params.size(), 3u);
  EXPECT_EQ(std::string(k->params[1]->name_hint), "m");
  EXPECT_EQ(std::string(k->params[2]->name_hint), "n");
  Var m = k->params[1];
  Var host_m = host->buffer_map.Get(host->params[0]).value()->shape[1].as<Var>().value();
  EXPECT_FALSE(m.same_as(host_m));
  EXPECT_TRUE(dims[0].same_as(k->params[2]));
  EXPECT_EQ(dims[1].as<IntImmNode>()->value, 1);
  EXPECT_EQ(dims[2].as<IntImmNode>()->value, 3);
  EXPECT_EQ(dims[3].as<IntImmNode>()->value, 32);
  // R: m * 4 bytes at 0; H: 6 bytes at the next multiple of 16; Q is static.
  PrimExpr dyn = Attr(k, "tessel.dyn_shared_bytes");
  EXPECT_EQ(EvalAt(dyn, m, 5), 48);  // 20 -> H at 32, ends at 38
  EXPECT_EQ(EvalAt(dyn, m, 4), 32);  // 16 -> H at 16, ends at 22
  EXPECT_EQ(EvalAt(dyn, m, 0), 16);  // H at 0
  DynamicSharedLayoutInfo layout = DynamicSharedLayout(k);
  ASSERT_EQ(layout.allocations.size(), 2u);
  EXPECT_EQ(std::string(layout.allocations[0].buffer_var->name_hint), "R_data");
  EXPECT_EQ(std::string(layout.allocations[1].buffer_var->name_hint), "H_data");
  EXPECT_EQ(EvalAt(layout.allocations[1].offset, m, 5), 32);
  EXPECT_EQ(EvalAt(layout.allocations[1].bytes, m, 5), 6);
  EXPECT_EQ(EvalAt(layout.allocations[0].bytes, m, 7), 28);
  // The launch passes the same byte count, over the host's variables.
  const auto* launch = host->body.as<EvaluateNode>()->value.as<CallNode>();
  ASSERT_NE(launch, nullptr);
  EXPECT_TRUE(launch->op.same_as(builtin::launch_kernel()));
  EXPECT_EQ(EvalAt(launch->args[7], host_m, 5), 48);
  EXPECT_EQ(launch->args.size(), 8u + 3u);
  EXPECT_TRUE(launch->args[1].same_as(host->buffer_map.Get(host->params[0]).value()->shape[0]));
}

TEST(SplitHostDevice, KernelsWithoutPdlOrGridSyncSayFalse) {
  IRModule out = SplitHostDevice(ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((32,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 32):
        A[threadIdx_x] = T.float32(0)
)"));
  PrimFunc k = out->functions.Get("f_kernel").value();
  EXPECT_FALSE(k->attrs.Get("tessel.use_pdl").value().cast<bool>());
  EXPECT_FALSE(k->attrs.Get("tessel.use_grid_sync").value().cast<bool>());
  EXPECT_FALSE(k->attrs.Get("tessel.cluster_dims").has_value());
  auto dims = k->attrs.Get("tessel.launch_dims").value().cast<Array<PrimExpr>>();
  EXPECT_EQ(dims[0].as<IntImmNode>()->value, 1);
  EXPECT_EQ(dims[3].as<IntImmNode>()->value, 32);
}

TEST(SplitHostDevice, GlobalAllocationOutsideUsedInsideIsAnError) {
  IRModule in = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((32,), "float32")):
    threadIdx_x = T.int32()
    T_data = T.allocate([32], "float32", "global")
    T_buf = T.decl_buffer((32,), "float32", data=T_data)
    with T.attr(threadIdx_x, "thread_extent", 32):
        T_buf[threadIdx_x] = A[threadIdx_x]
)");
  testing::ExpectError(
      [&] { SplitHostDevice(in); }, "ValueError",
      {"SplitHostDevice", "'f'", "'T_data'", "allocated outside kernel 'f_kernel'"});
}

TEST(SplitHostDevice, SharedBufferUsedByTwoKernelsIsAnError) {
  IRModule in = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((32,), "float32")):
    threadIdx_x = T.int32()
    S_data = T.allocate([32], "float32", "shared")
    S = T.decl_buffer((32,), "float32", data=S_data, scope="shared")
    with T.attr(threadIdx_x, "thread_extent", 32):
        S[threadIdx_x] = A[threadIdx_x]
    with T.attr(threadIdx_x, "thread_extent", 32):
        A[threadIdx_x] = S[threadIdx_x]
)");
  testing::ExpectError([&] { SplitHostDevice(in); }, "ValueError", {"'S_data'", "two kernels"});
}

TEST(SplitHostDevice, OneAxisWithTwoExtentsIsAnError) {
  IRModule in = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    threadIdx_x_1 = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 1):
        with T.attr(threadIdx_x, "thread_extent", 32):
            A[threadIdx_x] = T.float32(0)
        with T.attr(threadIdx_x_1, "thread_extent", 64):
            A[threadIdx_x_1] = T.float32(1)
)");
  testing::ExpectError([&] { SplitHostDevice(in); }, "ValueError",
                       {"threadIdx.x of kernel 'f_kernel' has two extents"});
}

TEST(SplitHostDevice, ExtentBoundInsideTheKernelIsAnError) {
  IRModule in = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((64,), "int32")):
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 2):
        k: T.int32 = A[blockIdx_x]
        with T.attr(threadIdx_x, "thread_extent", k):
            A[threadIdx_x] = 0
)");
  testing::ExpectError([&] { SplitHostDevice(in); }, "ValueError",
                       {"extent of threadIdx.x", "'k'", "bound inside the kernel"});
}

TEST(SplitHostDevice, AttributeVariableThatNamesNoAxisIsAnError) {
  IRModule in = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    tx = T.int32()
    with T.attr(tx, "thread_extent", 64):
        A[tx] = T.float32(0)
)");
  testing::ExpectError([&] { SplitHostDevice(in); }, "ValueError",
                       {"'tx'", "does not name a thread axis"});
}

TEST(SplitHostDevice, ThreadBindingLoopsMustBeLoweredFirst) {
  IRModule in = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = T.float32(0)
)");
  testing::ExpectError([&] { SplitHostDevice(in); }, "ValueError",
                       {"'tx'", "run LowerThreadBinding first"});
}

TEST(SplitHostDevice, CpuModuleIsReturnedAsIs) {
  IRModule in = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for i in range(64):
        A[i] = T.float32(0)
)");
  EXPECT_TRUE(SplitHostDevice(in).same_as(in));
}

TEST(SplitHostDevice, DynamicSizeOverAKernelLocalVariableIsAnError) {
  PrimFunc k = testing::ParseFunc(R"(
@T.prim_func
def k(A: T.handle("float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 32):
        R_data = T.allocate([threadIdx_x + 1], "float32", "shared")
        R = T.decl_buffer((threadIdx_x + 1,), "float32", data=R_data, scope="shared")
        R[0] = T.float32(0)
)");
  testing::ExpectError([&] { DynamicSharedLayout(k); }, "ValueError",
                       {"DynamicSharedLayout", "'R_data'", "threadIdx_x"});
}

// The CUDA pipeline up to SplitHostDevice, verified after every pass, on every GPU example.
TEST(SplitHostDevice, GpuExamplesGoThroughTheCudaPipeline) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TESSEL_SOURCE_DIR) / "examples")) {
    std::string name = e.path().filename().string();
    bool gpu = name.find("gpu") != std::string::npos || name.find("pdl") != std::string::npos ||
               name.find("grid") != std::string::npos || name.find("smem") != std::string::npos;
    if (gpu && e.path().extension() == ".py") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 7u);
  const char* passes[] = {
      "VerifyWellFormed", "LowerBlocks", "CompactBufferAllocation", "FlattenBuffer",
      "SwizzleLayout",    "Simplify",    "LowerThreadBinding",      "InjectSharedBarriers",
      "VectorizeLoop",    "UnrollLoop",  "LowerIntrinsics",         "SplitHostDevice",
      "Simplify"};
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    IRModule mod = ParseModule(text.str(), path.string());
    for (const char* name : passes) {
      SCOPED_TRACE(name);
      try {
        mod = GetPass(name)(mod);
      } catch (const tvm::ffi::Error& e) {
        ADD_FAILURE() << e.kind() << ": " << e.message();
        break;
      }
      ASSERT_EQ(VerifyModule(mod), "") << AsText(mod);
    }
    size_t kernels = 0;
    for (const auto& kv : mod->functions) {
      if (kv.second->attrs.count("tessel.device_kernel")) ++kernels;
      bool has_thread_loop = false;
      PostOrderVisit(kv.second->body, [&](const ObjectRef& n) {
        if (const auto* f = n.as<ForNode>()) {
          has_thread_loop = has_thread_loop || f->kind == ForKind::kThreadBinding;
        }
      });
      EXPECT_FALSE(has_thread_loop) << kv.first;
    }
    EXPECT_GE(kernels, 1u) << AsText(mod);
    // Host and kernels share no variables, so the split module reads back as itself.
    IRModule reparsed = ParseModule(AsText(mod));
    auto mismatch =
        tvm::ffi::StructuralEqual::GetFirstMismatch(reparsed, mod, /*map_free_vars=*/true);
    EXPECT_FALSE(mismatch.has_value())
        << "round trip differs at " << testing::MismatchPath((*mismatch).get<0>()) << "\n"
        << AsText(mod);
  }
}

}  // namespace
}  // namespace transform
}  // namespace tessel
