// The C code generator on hand-written lowered IR: generated C compiled with the system compiler,
// run on data, results checked against exact C++ computations.
#include <gtest/gtest.h>
#include <tessel/codegen/codegen_c.h>
#include <tessel/ir/parser.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "../ir/expect_error.h"
#include "compile_util.h"

namespace tessel {
namespace {

using testing::BuildText;
using testing::Data;
using testing::Empty;
using tvm::ffi::Function;
using tvm::ffi::Tensor;

const char* kElementwise = R"(
@T.prim_func
def scale(A: T.Buffer((n, 8), "float32"), B: T.Buffer((n, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    A_flat = T.decl_buffer((n * 8,), data=A.data)
    B_flat = T.decl_buffer((n * 8,), data=B.data)
    for i in T.parallel(n):
        for j in range(8):
            B_flat[i * 8 + j] = A_flat[i * 8 + j] * T.float32(2) + T.Cast("float32", j)
)";

TEST(CodegenC, ParallelElementwiseRunsAndIsDeterministic) {
  ir::IRModule mod = ir::ParseModule(kElementwise);
  std::string c1 = codegen::GenerateC(mod);
  std::string c2 = codegen::GenerateC(ir::ParseModule(kElementwise));
  EXPECT_EQ(c1, c2);
  EXPECT_NE(c1.find("#pragma omp parallel for"), std::string::npos) << c1;
  EXPECT_NE(c1.find("restrict"), std::string::npos);
  EXPECT_NE(c1.find("TVM_FFI_DLL_EXPORT int __tvm_ffi_scale("), std::string::npos);
  auto built = testing::CompileAndLoad(c1);
  EXPECT_EQ(built.log, "");
  Function f = built.module->GetFunction("scale").value();
  Tensor a = Empty({37, 8}, testing::F32()), b = Empty({37, 8}, testing::F32());
  for (int k = 0; k < 37 * 8; ++k) Data<float>(a)[k] = 0.5f * k - 3;
  f(a, b);
  for (int k = 0; k < 37 * 8; ++k) {
    ASSERT_EQ(Data<float>(b)[k], (0.5f * k - 3) * 2 + (k % 8)) << k;
  }
}

// A parallel loop forks threads only with enough work: never for a small constant trip count,
// always for a large one, and under a run-time `if` clause for symbolic sizes.
TEST(CodegenC, ParallelLoopForksOnlyWhenWorthIt) {
  auto source = [](const std::string& n, const std::string& m) {
    return codegen::GenerateC(ir::ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((N,), "float32")):
    for i in T.parallel()" + n + R"():
        for j in range()" + m + R"():
            A[i * 8 + j] = T.float32(1)
)"));
  };
  std::string small = source("8", "8"), large = source("4096", "8"),
              symbolic = source("N // 8", "8");
  EXPECT_EQ(small.find("#pragma omp parallel for"), std::string::npos) << small;
  EXPECT_NE(large.find("#pragma omp parallel for\n"), std::string::npos) << large;
  EXPECT_NE(symbolic.find("#pragma omp parallel for if("), std::string::npos) << symbolic;
  EXPECT_NE(symbolic.find("32768"), std::string::npos) << symbolic;
}

// Every float16 bit pattern survives load -> float32 -> store; NaNs stay NaNs.
TEST(CodegenC, Float16RoundTripAndRounding) {
  auto built = BuildText(R"(
@T.prim_func
def f16(A: T.Buffer((65536,), "float16"), B: T.Buffer((65536,), "float32"),
        C: T.Buffer((65536,), "float16"), X: T.Buffer((16,), "float32"),
        H: T.Buffer((16,), "float16"), G: T.Buffer((16,), "bfloat16")):
    for i in range(65536):
        B[i] = T.Cast("float32", A[i])
        C[i] = T.Cast("float16", B[i])
    for i in range(16):
        H[i] = T.Cast("float16", X[i])
        G[i] = T.Cast("bfloat16", X[i])
)");
  EXPECT_EQ(built.log, "");
  Function f = built.module->GetFunction("f16").value();
  Tensor a = Empty({65536}, testing::F16()), b = Empty({65536}, testing::F32()),
         c = Empty({65536}, testing::F16()), x = Empty({16}, testing::F32()),
         h = Empty({16}, testing::F16()), g = Empty({16}, DLDataType{kDLBfloat, 16, 1});
  for (int k = 0; k < 65536; ++k) Data<uint16_t>(a)[k] = static_cast<uint16_t>(k);
  const float xs[] = {1.0f + std::ldexp(1.0f, -11),
                      1.0f + 3 * std::ldexp(1.0f, -11),
                      65519.0f,
                      65520.0f,
                      std::ldexp(1.0f, -24),
                      std::ldexp(1.0f, -25),
                      3 * std::ldexp(1.0f, -26),
                      -2.0f,
                      1.0f + std::ldexp(1.0f, -8),
                      1.0f + 3 * std::ldexp(1.0f, -8),
                      0.0f,
                      -0.0f,
                      INFINITY,
                      1e30f,
                      0.1f,
                      0.1f};
  std::memcpy(Data<float>(x), xs, sizeof(xs));
  f(a, b, c, x, h, g);
  for (int k = 0; k < 65536; ++k) {
    bool nan = (k & 0x7C00) == 0x7C00 && (k & 0x3FF) != 0;
    if (nan) {
      ASSERT_TRUE(std::isnan(Data<float>(b)[k])) << k;
      ASSERT_EQ(Data<uint16_t>(c)[k] & 0x7E00, 0x7E00) << k;
    } else {
      ASSERT_EQ(Data<uint16_t>(c)[k], k) << "bits 0x" << std::hex << k;
    }
  }
  EXPECT_EQ(Data<float>(b)[0x3C00], 1.0f);
  EXPECT_EQ(Data<float>(b)[0x0001], std::ldexp(1.0f, -24));
  EXPECT_EQ(Data<float>(b)[0xFBFF], -65504.0f);
  const uint16_t want_h[] = {0x3C00, 0x3C02, 0x7BFF, 0x7C00, 0x0001, 0x0000, 0x0001, 0xC000,
                             0x3C04, 0x3C0C, 0x0000, 0x8000, 0x7C00, 0x7C00, 0x2E66, 0x2E66};
  for (int k = 0; k < 14; ++k) EXPECT_EQ(Data<uint16_t>(h)[k], want_h[k]) << "float16 case " << k;
  // bfloat16: 1 + 2^-8 is a tie (to even: 1), 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
  EXPECT_EQ(Data<uint16_t>(g)[8], 0x3F80);
  EXPECT_EQ(Data<uint16_t>(g)[9], 0x3F82);
  EXPECT_EQ(Data<uint16_t>(g)[14], 0x3DCD);  // 0.1f = 0x3DCCCCCD rounds up
}

// IR floordiv/floormod round toward negative infinity, truncdiv/truncmod toward zero; results
// wrap to the dtype (INT_MIN // -1).
template <typename T>
void CheckDivision(const std::string& dtype) {
  std::string text = R"(
@T.prim_func
def div(A: T.Buffer((N,), "DT"), B: T.Buffer((N,), "DT"), Q: T.Buffer((N,), "DT"),
        R: T.Buffer((N,), "DT"), TQ: T.Buffer((N,), "DT"), TR: T.Buffer((N,), "DT")):
    for i in range(N):
        Q[i] = A[i] // B[i]
        R[i] = A[i] % B[i]
        TQ[i] = T.truncdiv(A[i], B[i])
        TR[i] = T.truncmod(A[i], B[i])
)";
  for (size_t p; (p = text.find("DT")) != std::string::npos;) text.replace(p, 2, dtype);
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const std::vector<T> as = {-7, 7, -8, 8, 0, -1, 1, lo, hi, -100, 100, 13, -13, lo + 1};
  const std::vector<T> bs = {1, -1, 2, -2, 3, -3, 7, -7, hi, lo};
  int64_t n = static_cast<int64_t>(as.size() * bs.size());
  for (size_t p; (p = text.find("(N,)")) != std::string::npos;) {
    text.replace(p, 4, "(" + std::to_string(n) + ",)");
  }
  text.replace(text.find("range(N)"), 8, "range(" + std::to_string(n) + ")");
  auto built = BuildText(text);
  EXPECT_EQ(built.log, "");
  DLDataType dt{kDLInt, static_cast<uint8_t>(sizeof(T) * 8), 1};
  std::vector<Tensor> t;
  for (int k = 0; k < 6; ++k) t.push_back(Empty({n}, dt));
  int64_t k = 0;
  for (T a : as) {
    for (T b : bs) {
      Data<T>(t[0])[k] = a;
      Data<T>(t[1])[k] = b;
      ++k;
    }
  }
  built.module->GetFunction("div").value()(t[0], t[1], t[2], t[3], t[4], t[5]);
  for (k = 0; k < n; ++k) {
    __int128 a = Data<T>(t[0])[k], b = Data<T>(t[1])[k];
    __int128 tq = a / b, tr = a % b;
    __int128 fq = tq - ((tr != 0 && ((tr < 0) != (b < 0))) ? 1 : 0);
    __int128 fr = a - fq * b;
    auto wrap = [](__int128 v) { return static_cast<T>(static_cast<uint64_t>(v)); };
    SCOPED_TRACE(std::to_string(static_cast<int64_t>(a)) + " / " +
                 std::to_string(static_cast<int64_t>(b)));
    EXPECT_EQ(Data<T>(t[2])[k], wrap(fq));
    EXPECT_EQ(Data<T>(t[3])[k], wrap(fr));
    EXPECT_EQ(Data<T>(t[4])[k], wrap(tq));
    EXPECT_EQ(Data<T>(t[5])[k], wrap(tr));
  }
}

TEST(CodegenC, FloorDivModInt32) { CheckDivision<int32_t>("int32"); }
TEST(CodegenC, FloorDivModInt64) { CheckDivision<int64_t>("int64"); }

TEST(CodegenC, VectorRampBroadcastGatherSelect) {
  std::string c = codegen::GenerateC(ir::ParseModule(R"(
@T.prim_func
def vec(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
        C: T.Buffer((32,), "float32"), D: T.Buffer((64,), "float32"),
        E: T.Buffer((64,), "int32")):
    for i in range(16):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4) + T.Cast("float32x4", T.Ramp(i * 4, 1, 4))
        D[T.Ramp(i * 4, 1, 4)] = T.Select(A[T.Ramp(i * 4, 1, 4)] > T.Broadcast(T.float32(0), 4), A[T.Ramp(i * 4, 1, 4)], T.Broadcast(T.float32(0), 4))
        E[T.Ramp(i * 4, 1, 4)] = T.Ramp(i * 4, 1, 4) // T.Broadcast(-3, 4) + T.Ramp(i, -1, 4) % T.Broadcast(5, 4)
    for i in range(8):
        C[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i, 2, 4)]
)"));
  EXPECT_NE(c.find("vector_size(16)"), std::string::npos) << c;
  EXPECT_NE(c.find("tsl_vgather_f32x4_i32x4"), std::string::npos) << c;
  for (const char* cc : {"gcc", "clang"}) {
    auto built = testing::CompileAndLoad(c, cc);
    EXPECT_EQ(built.log, "") << cc;
    Tensor a = Empty({64}, testing::F32()), b = Empty({64}, testing::F32()),
           cc_out = Empty({32}, testing::F32()), d = Empty({64}, testing::F32()),
           e = Empty({64}, testing::I32());
    for (int k = 0; k < 64; ++k) Data<float>(a)[k] = static_cast<float>(k % 7) - 3;
    built.module->GetFunction("vec").value()(a, b, cc_out, d, e);
    for (int k = 0; k < 64; ++k) {
      float av = static_cast<float>(k % 7) - 3;
      ASSERT_EQ(Data<float>(b)[k], av * 2 + k) << k;
      ASSERT_EQ(Data<float>(d)[k], av > 0 ? av : 0) << k;
      int i = k / 4, lane = k % 4;
      auto fdiv = [](int x, int y) { return (x - (((x % y) + y) % y)) / y; };
      auto fmod = [](int x, int y) { return ((x % y) + y) % y; };
      ASSERT_EQ(Data<int32_t>(e)[k], fdiv(k, -3) + fmod(i - lane, 5)) << k;
    }
    for (int k = 0; k < 32; ++k) {
      int i = k / 4, lane = k % 4;
      ASSERT_EQ(Data<float>(cc_out)[k], Data<float>(a)[i + 2 * lane]) << k;
    }
  }
}

TEST(CodegenC, EqualityAssertPrintsBothSides) {
  auto built = BuildText(R"(
@T.prim_func
def check(A: T.Buffer((n,), "float32"), m: T.int32):
    assert n == m * 2, "n must be twice m"
    for i in range(n):
        A[i] = T.float32(0)
)");
  Function f = built.module->GetFunction("check").value();
  Tensor a = Empty({6}, testing::F32());
  f(a, 3);
  testing::ExpectCallError(f, "RuntimeError", "check: n must be twice m (n = 6, m * 2 = 8)", a, 4);
}

TEST(CodegenC, AssertInParallelLoopReportsFirstError) {
  auto built = BuildText(R"(
@T.prim_func
def guard(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for i in T.parallel(n):
        assert A[i] < T.float32(100), "value too large"
        tmp = T.allocate([n], "float32", "global")
        tmp_buf = T.decl_buffer((n,), data=tmp)
        tmp_buf[0] = A[i]
        assert tmp_buf[0] >= T.float32(0), "negative value"
        B[i] = tmp_buf[0] + T.float32(1)
)");
  EXPECT_EQ(built.log, "");
  Function f = built.module->GetFunction("guard").value();
  // Large enough that the loop forks threads (kMinParallelWork).
  constexpr int kN = 20000;
  Tensor a = Empty({kN}, testing::F32()), b = Empty({kN}, testing::F32());
  for (int k = 0; k < kN; ++k) Data<float>(a)[k] = static_cast<float>(k % 50);
  f(a, b);
  EXPECT_EQ(Data<float>(b)[kN - 1], 50.0f);
  Data<float>(a)[500] = -1;
  testing::ExpectCallError(f, "RuntimeError", "guard: negative value", a, b);
  Data<float>(a)[500] = 1000;
  testing::ExpectCallError(f, "RuntimeError", "guard: value too large", a, b);
}

TEST(CodegenC, AllocateStackHeapAndOutOfMemory) {
  std::string c = codegen::GenerateC(ir::ParseModule(R"(
@T.prim_func
def alloc(A: T.Buffer((16,), "float32"), m: T.int64):
    small = T.allocate([16], "float32", "global")
    small_buf = T.decl_buffer((16,), data=small)
    big = T.allocate([m], "float32", "global")
    big_buf = T.decl_buffer((m,), data=big)
    for i in range(16):
        small_buf[i] = T.Cast("float32", i)
    for i in range(16):
        big_buf[T.Cast("int64", i)] = small_buf[15 - i]
    for i in range(16):
        A[i] = big_buf[T.Cast("int64", i)]
)"));
  EXPECT_NE(c.find("small[16] __attribute__((aligned(64)))"), std::string::npos) << c;
  EXPECT_NE(c.find("tsl_alloc("), std::string::npos);
  auto built = testing::CompileAndLoad(c);
  EXPECT_EQ(built.log, "");
  Function f = built.module->GetFunction("alloc").value();
  Tensor a = Empty({16}, testing::F32());
  f(a, int64_t{16});
  for (int k = 0; k < 16; ++k) EXPECT_EQ(Data<float>(a)[k], 15 - k);
  int64_t huge = int64_t{1} << 60;
  testing::ExpectCallError(
      f, "RuntimeError",
      "alloc: out of memory allocating " + std::to_string(huge * 4) + " bytes for big", a, huge);
}

TEST(CodegenC, ExternCallsAndIntrinsics) {
  auto built = BuildText(R"(
@T.prim_func
def ops(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "int32")):
    for i in range(8):
        B[i] = T.call_pure_extern("float32", "expf", A[i]) + T.if_then_else(i < 4, T.float32(1), T.float32(0))
        C[i] = (i << 2) + T.popcount(i) + T.bitwise_and(i, 3) + T.min(i, 5) + T.max(i, -1)
)");
  EXPECT_EQ(built.log, "");
  Tensor a = Empty({8}, testing::F32()), b = Empty({8}, testing::F32()),
         c = Empty({8}, testing::I32());
  for (int k = 0; k < 8; ++k) Data<float>(a)[k] = 0.25f * k;
  built.module->GetFunction("ops").value()(a, b, c);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(Data<float>(b)[k], std::exp(0.25f * k) + (k < 4 ? 1.0f : 0.0f));
    EXPECT_EQ(Data<int32_t>(c)[k],
              (k << 2) + __builtin_popcount(k) + (k & 3) + std::min(k, 5) + std::max(k, -1));
  }
}

TEST(CodegenC, UnsupportedConstructsAreErrors) {
  using testing::ExpectError;
  ExpectError(
      [] {
        codegen::GenerateC(ir::ParseModule(R"(
@T.prim_func
def g(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = T.exp(A[i])
)"));
      },
      "ValueError", {"codegen c: unsupported op exp in g"});
  ExpectError(
      [] {
        codegen::GenerateC(ir::ParseModule(R"(
@T.prim_func
def h(A: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            T.reads()
            T.writes(A[vi])
            A[vi] = T.float32(0)
)"));
      },
      "ValueError", {"codegen c: BlockRealize 'b' (not lowered: run LowerBlocks) in h"});
  ExpectError(
      [] {
        codegen::GenerateC(ir::ParseModule(R"(
@T.prim_func
def k(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        A[i, 0] = T.float32(0)
)"));
      },
      "ValueError", {"codegen c:", "2 indices (not flattened) in k"});
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// Many constructs at once, compiled by gcc and clang with no diagnostics, then run.
TEST(CodegenC, KitchenSinkCompilesCleanWithGccAndClang) {
  std::string c = codegen::GenerateC(ir::ParseModule(R"(
@T.prim_func
def sink(A: T.Buffer((16,), "float16"), B: T.Buffer((16,), "int8"), C: T.Buffer((16,), "uint64"),
         D: T.Buffer((16,), "bool"), E: T.Buffer((16,), "int64"), F: T.Buffer((16,), "float16"),
         G: T.Buffer((16,), "float32"), H: T.Buffer((16,), "int32"), s: T.int64):
    for i in T.unroll(4):
        F[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * A[T.Ramp(i * 4, 1, 4)] + T.Broadcast(T.float16(1), 4)
        D[T.Ramp(i * 4, 1, 4)] = E[T.Ramp(i * 4, 1, 4)] < T.Broadcast(T.int64(5), 4)
        G[T.Ramp(i * 4, 1, 4)] = T.Select(D[T.Ramp(i * 4, 1, 4)], T.Cast("float32x4", A[T.Ramp(i * 4, 1, 4)]), T.Broadcast(T.float32(-1), 4))
    for i in range(16):
        B[i] = B[i] * T.int8(3) + T.int8(100)
        C[i] = (C[i] << T.uint64(1)) - T.uint64(1)
        x: T.int64 = E[i] * s
        if x > T.int64(10):
            E[i] = T.Let(y * y, where={y: x})
        else:
            E[i] = T.abs(x) + T.Cast("int64", T.clz(T.Cast("int32", x)))
        H[i] = T.reinterpret("int32", G[i]) >> 23
    j = T.int32()
    while H[0] > 1000:
        H[0] = H[0] // 2
)"));
  for (const char* cc : {"gcc", "clang"}) {
    auto built = testing::CompileAndLoad(c, cc);
    EXPECT_EQ(built.log, "") << cc << "\n" << c;
    std::vector<Tensor> t;
    DLDataType dts[] = {testing::F16(),
                        DLDataType{kDLInt, 8, 1},
                        DLDataType{kDLUInt, 64, 1},
                        DLDataType{kDLBool, 8, 1},
                        testing::I64(),
                        testing::F16(),
                        testing::F32(),
                        testing::I32()};
    for (DLDataType dt : dts) t.push_back(Empty({16}, dt));
    for (int k = 0; k < 16; ++k) {
      Data<uint16_t>(t[0])[k] = 0x4000;  // 2.0
      Data<int8_t>(t[1])[k] = static_cast<int8_t>(k * 10);
      Data<uint64_t>(t[2])[k] = k;
      Data<int64_t>(t[4])[k] = k - 3;
    }
    built.module->GetFunction("sink").value()(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7],
                                              int64_t{2});
    for (int k = 0; k < 16; ++k) {
      SCOPED_TRACE(k);
      EXPECT_EQ(Data<uint16_t>(t[5])[k], 0x4500);  // 2 * 2 + 1 = 5
      EXPECT_EQ(Data<uint8_t>(t[3])[k], k - 3 < 5 ? 1 : 0);
      EXPECT_EQ(Data<float>(t[6])[k], k - 3 < 5 ? 2.0f : -1.0f);
      EXPECT_EQ(Data<int8_t>(t[1])[k], static_cast<int8_t>(static_cast<uint8_t>(k * 30 + 100)));
      EXPECT_EQ(Data<uint64_t>(t[2])[k], uint64_t(k) * 2 - 1);
      int64_t x = (k - 3) * 2;
      int64_t want =
          x > 10 ? x * x
                 : (x < 0 ? -x : x) + (x == 0 ? 32 : __builtin_clz(static_cast<uint32_t>(x)));
      EXPECT_EQ(Data<int64_t>(t[4])[k], want);
    }
    // H[k] = G[k]'s bits >> 23, arithmetic: 2.0f -> 128, -1.0f (0xBF800000) -> -129.
    EXPECT_EQ(Data<int32_t>(t[7])[0], 128);
    EXPECT_EQ(Data<int32_t>(t[7])[15], -129);
  }
}

TEST(CodegenC, RetReturnsAValueAndFreesAllocations) {
  auto built = BuildText(R"(
@T.prim_func
def count_positive(A: T.Buffer((n,), "float32")) -> T.int64:
    buf = T.allocate([n], "int64", "global")
    acc = T.decl_buffer((n,), "int64", data=buf)
    acc[0] = T.int64(0)
    for i in range(n):
        if A[i] > T.float32(0):
            acc[0] = acc[0] + T.int64(1)
        if A[i] > T.float32(100):
            T.ret(T.int64(-1))
    T.ret(acc[0])
)");
  EXPECT_EQ(built.log, "");
  Function f = built.module->GetFunction("count_positive").value();
  Tensor a = Empty({5}, testing::F32());
  const float xs[] = {1, -2, 3, 0, 5};
  std::memcpy(Data<float>(a), xs, sizeof(xs));
  EXPECT_EQ(f(a).cast<int64_t>(), 3);
  Data<float>(a)[1] = 1000;
  EXPECT_EQ(f(a).cast<int64_t>(), -1);
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// Signed index arithmetic uses C's operators where the loop bounds rule out overflow (so the C
// compiler may vectorize and strength-reduce it), and keeps the wrap-around helpers where they
// do not: a product that can leave int32, and a symbolic operand with no bound.
TEST(CodegenC, IndexArithmeticDropsWrapHelpersOnlyWhereOverflowIsRuledOut) {
  const char* text = R"(
@T.prim_func
def f(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"), C: T.Buffer((4096,), "int32"), n: T.int32):
    for i in range(64):
        for j in range(64):
            B[i * 64 + j] = A[(i * 64 + j) // 2 * 2 + (i * 64 + j) % 2]
            C[i * 64 + j] = i * 67108864 + j + n * 2
)";
  std::string c = codegen::GenerateC(ir::ParseModule(text));
  EXPECT_NE(c.find("B[((i * 64) + j)]"), std::string::npos) << c;
  EXPECT_NE(c.find("((((i * 64) + j) / 2) * 2)"), std::string::npos) << c;
  EXPECT_NE(c.find("(((i * 64) + j) % 2)"), std::string::npos) << c;
  // 63 * 2^26 does not fit int32: the product wraps, so the helpers stay (and so does the sum).
  EXPECT_NE(c.find("tsl_mul_i32(i, 67108864)"), std::string::npos) << c;
  EXPECT_NE(c.find("tsl_mul_i32(n, 2)"), std::string::npos) << c;
  auto built = testing::CompileAndLoad(c);
  ASSERT_EQ(built.log, "");
  Tensor a = Empty({4096}, testing::F32()), b = Empty({4096}, testing::F32()),
         out = Empty({4096}, testing::I32());
  for (int k = 0; k < 4096; ++k) Data<float>(a)[k] = 0.25f * k;
  built.module->GetFunction("f").value()(a, b, out, 1 << 30);
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 64; ++j) {
      int k = i * 64 + j;
      ASSERT_EQ(Data<float>(b)[k], 0.25f * k);
      uint32_t want = static_cast<uint32_t>(i) * 67108864u + j + (1u << 31);
      ASSERT_EQ(Data<int32_t>(out)[k], static_cast<int32_t>(want)) << i << " " << j;
    }
  }
}

// T.max / T.min of floats are `a > b ? a : b` / `a < b ? a : b` (ir/expr.h): the second operand
// when either is NaN, and for two zeros; no fmaxf/fminf.
TEST(CodegenC, FloatMaxMinGiveTheSecondOperandForNaNAndZeros) {
  const char* text = R"(
@T.prim_func
def f(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32"), Mx: T.Buffer((6,), "float32"), Mn: T.Buffer((6,), "float32"), D: T.Buffer((6,), "float64"), Dx: T.Buffer((6,), "float64"), Dn: T.Buffer((6,), "float64")):
    for i in range(6):
        Mx[i] = T.max(A[i], B[i])
        Mn[i] = T.min(A[i], B[i])
        Dx[i] = T.max(D[i], T.Cast("float64", B[i]))
        Dn[i] = T.min(D[i], T.Cast("float64", B[i]))
)";
  std::string c = codegen::GenerateC(ir::ParseModule(text));
  EXPECT_EQ(c.find("fmaxf("), std::string::npos) << c;
  EXPECT_EQ(c.find("fmin("), std::string::npos) << c;
  auto built = testing::CompileAndLoad(c);
  ASSERT_EQ(built.log, "");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float as[6] = {nan, 1.0f, nan, 0.0f, -0.0f, 2.0f};
  const float bs[6] = {1.0f, nan, nan, -0.0f, 0.0f, 3.0f};
  DLDataType f64{kDLFloat, 64, 1};
  Tensor a = Empty({6}, testing::F32()), b = Empty({6}, testing::F32()),
         mx = Empty({6}, testing::F32()), mn = Empty({6}, testing::F32()), d = Empty({6}, f64),
         dx = Empty({6}, f64), dn = Empty({6}, f64);
  for (int k = 0; k < 6; ++k) {
    Data<float>(a)[k] = as[k];
    Data<float>(b)[k] = bs[k];
    Data<double>(d)[k] = as[k];
  }
  built.module->GetFunction("f").value()(a, b, mx, mn, d, dx, dn);
  auto same = [](double x, double y) {
    return (std::isnan(x) && std::isnan(y)) || (x == y && std::signbit(x) == std::signbit(y));
  };
  for (int k = 0; k < 6; ++k) {
    float x = as[k], y = bs[k];
    SCOPED_TRACE(k);
    EXPECT_TRUE(same(Data<float>(mx)[k], x > y ? x : y));
    EXPECT_TRUE(same(Data<float>(mn)[k], x < y ? x : y));
    EXPECT_TRUE(same(Data<double>(dx)[k], x > y ? x : y));
    EXPECT_TRUE(same(Data<double>(dn)[k], x < y ? x : y));
  }
  // max(NaN, 1) = 1 and max(1, NaN) = NaN, as TVM's LLVM backend computes.
  EXPECT_EQ(Data<float>(mx)[0], 1.0f);
  EXPECT_TRUE(std::isnan(Data<float>(mx)[1]));
}

}  // namespace
}  // namespace tessel
