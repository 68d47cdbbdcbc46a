// The host wrapper's argument checks: every message of the contract's table, exactly, and the
// binding of symbolic sizes, strides and element offsets.
#include <gtest/gtest.h>

#include <cstring>

#include "../ir/expect_error.h"
#include "compile_util.h"

namespace tessel {
namespace {

using testing::Data;
using testing::Empty;
using testing::ExpectCallError;
using tvm::ffi::Function;
using tvm::ffi::Tensor;

const char* kSignature = R"(
@T.prim_func
def f(A: T.Buffer((n, 4), "float32"), B: T.Buffer((n,), "float32"),
      C: T.Buffer((n * 2,), "int32"), x: T.int32, y: T.float32, p: T.handle):
    A_flat = T.decl_buffer((n * 4,), data=A.data)
    for i in range(n):
        B[i] = A_flat[i * 4] + y
        C[i * 2] = x
        C[i * 2 + 1] = x + 1
)";

class HostWrapper : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { built_ = new testing::CompiledC(testing::BuildText(kSignature)); }
  static void TearDownTestSuite() {
    delete built_;
    built_ = nullptr;
  }
  Function f() { return built_->module->GetFunction("f").value(); }

  // A DLTensor over `storage` for the tests that need fields a Tensor cannot have.
  DLTensor View(void* data, int32_t ndim, int64_t* shape, int64_t* strides = nullptr,
                DLDataType dtype = testing::F32(), DLDevice dev = DLDevice{kDLCPU, 0}) {
    DLTensor t;
    t.data = data;
    t.device = dev;
    t.ndim = ndim;
    t.dtype = dtype;
    t.shape = shape;
    t.strides = strides;
    t.byte_offset = 0;
    return t;
  }

  static testing::CompiledC* built_;
  Tensor a_ = Empty({8, 4}, testing::F32());
  Tensor b_ = Empty({8}, testing::F32());
  Tensor c_ = Empty({16}, testing::I32());
};
testing::CompiledC* HostWrapper::built_ = nullptr;

TEST_F(HostWrapper, CompilesCleanAndRuns) {
  EXPECT_EQ(built_->log, "");
  for (int k = 0; k < 32; ++k) Data<float>(a_)[k] = static_cast<float>(k);
  f()(a_, b_, c_, 7, 0.5, nullptr);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(Data<float>(b_)[k], 4 * k + 0.5f);
    EXPECT_EQ(Data<int32_t>(c_)[2 * k], 7);
    EXPECT_EQ(Data<int32_t>(c_)[2 * k + 1], 8);
  }
  // An int for a float parameter, a bool for an int, a tensor for a handle.
  f()(a_, b_, c_, true, 2, a_);
  EXPECT_EQ(Data<int32_t>(c_)[0], 1);
  EXPECT_EQ(Data<float>(b_)[1], 6.0f);
}

TEST_F(HostWrapper, CountAndKinds) {
  ExpectCallError(f(), "TypeError", "f: expected 6 arguments, got 2", a_, b_);
  ExpectCallError(f(), "TypeError", "f: A: expected a tensor, got int", 1, b_, c_, 1, 1.0, nullptr);
  ExpectCallError(f(), "TypeError", "f: A: expected a tensor, got None", nullptr, b_, c_, 1, 1.0,
                  nullptr);
  ExpectCallError(f(), "TypeError", "f: B: expected a tensor, got ffi.Function", a_, f(), c_, 1,
                  1.0, nullptr);
  ExpectCallError(f(), "TypeError", "f: x: expected int, got float", a_, b_, c_, 1.5, 1.0, nullptr);
  ExpectCallError(f(), "TypeError", "f: y: expected float, got str", a_, b_, c_, 1, "s", nullptr);
  ExpectCallError(f(), "TypeError", "f: p: expected an opaque pointer, got int", a_, b_, c_, 1, 1.0,
                  3);
  ExpectCallError(f(), "ValueError", "f: x: expected an int32 value, got 4294967296", a_, b_, c_,
                  int64_t{4294967296}, 1.0, nullptr);
}

TEST_F(HostWrapper, TensorMetadata) {
  Tensor a3 = Empty({8, 4, 1}, testing::F32());
  ExpectCallError(f(), "ValueError", "f: A.ndim: expected 2, got 3", a3, b_, c_, 1, 1.0, nullptr);
  Tensor a16 = Empty({8, 4}, testing::F16());
  ExpectCallError(f(), "TypeError", "f: A.dtype: expected float32, got float16", a16, b_, c_, 1,
                  1.0, nullptr);
  Tensor a5 = Empty({8, 5}, testing::F32());
  ExpectCallError(f(), "ValueError", "f: A.shape[1]: expected 4, got 5", a5, b_, c_, 1, 1.0,
                  nullptr);
  Tensor b7 = Empty({7}, testing::F32());
  ExpectCallError(f(), "ValueError", "f: B.shape[0]: expected n = 8 (from A.shape[0]), got 7", a_,
                  b7, c_, 1, 1.0, nullptr);
  Tensor c15 = Empty({15}, testing::I32());
  ExpectCallError(f(), "ValueError",
                  "f: C.shape[0]: expected n * 2 = 16 (n from A.shape[0]), got 15", a_, b_, c15, 1,
                  1.0, nullptr);
}

TEST_F(HostWrapper, LayoutAndDevice) {
  int64_t shape[2] = {8, 4};
  int64_t strides[2] = {8, 2};
  DLTensor strided = View(a_.data_ptr(), 2, shape, strides);
  ExpectCallError(f(), "ValueError", "f: A.strides[1]: expected 1 (compact), got 2", &strided, b_,
                  c_, 1, 1.0, nullptr);
  // A dimension of extent 1 may have any stride; compact strides spelled out are fine.
  int64_t shape1[2] = {1, 4};
  int64_t strides1[2] = {99, 1};
  DLTensor one = View(a_.data_ptr(), 2, shape1, strides1);
  int64_t n1 = 1;
  DLTensor b1 = View(b_.data_ptr(), 1, &n1);
  DLTensor c2 = View(c_.data_ptr(), 1, &shape[1], nullptr, testing::I32());
  int64_t two = 2;
  c2.shape = &two;
  f()(&one, &b1, &c2, 1, 1.0, nullptr);

  DLTensor offset = View(a_.data_ptr(), 2, shape);
  offset.byte_offset = 2;
  ExpectCallError(f(), "ValueError", "f: A.byte_offset: expected a multiple of 4, got 2", &offset,
                  b_, c_, 1, 1.0, nullptr);
  DLTensor misaligned = View(static_cast<char*>(a_.data_ptr()) + 2, 2, shape);
  try {
    f()(&misaligned, b_, c_, 1, 1.0, nullptr);
    ADD_FAILURE() << "misaligned data accepted";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_EQ(e.message().rfind("f: A.data: expected 4-byte alignment, got address 0x", 0), 0u)
        << e.message();
  }
  DLTensor null = View(nullptr, 2, shape);
  ExpectCallError(f(), "ValueError", "f: A.data: expected a non-null pointer, got NULL", &null, b_,
                  c_, 1, 1.0, nullptr);
  DLTensor cuda = View(a_.data_ptr(), 2, shape, nullptr, testing::F32(), DLDevice{kDLCUDA, 0});
  ExpectCallError(f(), "ValueError", "f: A.device: expected cpu, got cuda:0", &cuda, b_, c_, 1, 1.0,
                  nullptr);
  DLTensor b_cpu1 = View(b_.data_ptr(), 1, &shape[0], nullptr, testing::F32(), DLDevice{kDLCPU, 1});
  ExpectCallError(f(), "ValueError", "f: B.device: expected cpu:0 (the device of A), got cpu:1", a_,
                  &b_cpu1, c_, 1, 1.0, nullptr);
  // Zero elements: a NULL data pointer is fine.
  int64_t zero_shape[2] = {0, 4};
  int64_t zero = 0;
  DLTensor a0 = View(nullptr, 2, zero_shape), b0 = View(nullptr, 1, &zero),
           c0 = View(nullptr, 1, &zero, nullptr, testing::I32());
  f()(&a0, &b0, &c0, 1, 1.0, nullptr);
  // ... and so are any strides (frameworks report 0 or other values for them).
  int64_t zero_strides[2] = {0, 0};
  a0.strides = zero_strides;
  f()(&a0, &b0, &c0, 1, 1.0, nullptr);
}

// Declared symbolic strides and element offset are bound from the tensor and reach the kernel.
TEST(HostWrapperBinding, SymbolicStridesAndOffset) {
  auto built = testing::BuildText(R"(
@T.prim_func
def strided(A: T.Buffer((m,), "float32", strides=(s,), elem_offset=off), B: T.Buffer((m,), "float32")):
    A_flat = T.decl_buffer((m * s + off,), data=A.data)
    for i in range(m):
        B[i] = A_flat[off + i * s]
)");
  EXPECT_EQ(built.log, "");
  Function f = built.module->GetFunction("strided").value();
  Tensor storage = Empty({64}, testing::F32()), b = Empty({10}, testing::F32());
  for (int k = 0; k < 64; ++k) Data<float>(storage)[k] = static_cast<float>(k);
  int64_t m = 10, s = 3;
  DLTensor a;
  std::memset(&a, 0, sizeof(a));
  a.data = storage.data_ptr();
  a.device = DLDevice{kDLCPU, 0};
  a.ndim = 1;
  a.dtype = testing::F32();
  a.shape = &m;
  a.strides = &s;
  a.byte_offset = 5 * 4;
  f(&a, b);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(Data<float>(b)[k], 5 + 3 * k) << k;
  Tensor b9 = Empty({9}, testing::F32());
  ExpectCallError(f, "ValueError", "strided: B.shape[0]: expected m = 10 (from A.shape[0]), got 9",
                  &a, b9);
}

// A size written as v * c binds v (checking divisibility); one that cannot be solved is refused
// when generating, naming the buffer and dimension.
TEST(HostWrapperBinding, SolvedAndUnsolvableSizeExpressions) {
  auto built = testing::BuildText(R"(
@T.prim_func
def quad(A: T.Buffer((n * 4,), "int32"), m: T.int32):
    for i in range(n):
        A[i * 4] = n + m
)",
                                  "clang");
  EXPECT_EQ(built.log, "");
  Function f = built.module->GetFunction("quad").value();
  Tensor a = Empty({12}, testing::I32());
  f(a, 1);
  EXPECT_EQ(Data<int32_t>(a)[8], 4);
  Tensor a10 = Empty({10}, testing::I32());
  ExpectCallError(f, "ValueError", "quad: A.shape[0]: expected n * 4 (a multiple of 4), got 10",
                  a10, 1);
  testing::ExpectError(
      [] {
        codegen::GenerateC(ir::ParseModule(R"(
@T.prim_func
def mn(A: T.Buffer((n * m,), "float32")):
    A[0] = T.float32(0)
)"));
      },
      "ValueError",
      {"mn: A.shape[0]: cannot bind the size n * m from the argument (n, m not bound by an "
       "earlier parameter or dimension)"});
}

TEST(HostWrapperBinding, NegativeSizeGlobalSymbolAndNoParameters) {
  auto built = testing::BuildText(R"(
@I.ir_module
class Module:
    @T.prim_func
    def fill(A: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "fill_ones"})
        for i in range(n):
            A[i] = T.float32(1)

    @T.prim_func
    def nothing():
        T.evaluate(0)
)");
  EXPECT_EQ(built.log, "");
  EXPECT_FALSE(built.module->GetFunction("fill").has_value());
  Function f = built.module->GetFunction("fill_ones").value();
  int64_t minus_one = -1;
  float storage[4];
  DLTensor a;
  std::memset(&a, 0, sizeof(a));
  a.data = storage;
  a.device = DLDevice{kDLCPU, 0};
  a.ndim = 1;
  a.dtype = testing::F32();
  a.shape = &minus_one;
  ExpectCallError(f, "ValueError", "fill_ones: A.shape[0]: expected 0 <= n <= 2147483647, got -1",
                  &a);
  Function nothing = built.module->GetFunction("nothing").value();
  nothing();
  ExpectCallError(nothing, "TypeError", "nothing: expected 0 arguments, got 1", 1);
}

// The element count must fit the buffer's index dtype and the byte size int64; zero-size
// tensors pass. Views with stride 0 make huge shapes without memory.
TEST(HostWrapperBinding, ElementCountAndByteSize) {
  const char* text = R"(
@I.ir_module
class Module:
    @T.prim_func
    def copy2d(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
        A_1 = T.decl_buffer((n * m,), data=A.data)
        B_1 = T.decl_buffer((n * m,), data=B.data)
        for i in range(n):
            for j in range(m):
                B_1[i * m + j] = A_1[i * m + j]

    @T.prim_func
    def first64(A: T.Buffer((k,), "float32", index_dtype="int64"), B: T.Buffer((1,), "float32")):
        B[0] = A[T.int64(0)]

    @T.prim_func
    def twice(A: T.Buffer((n,), "float32"), B: T.Buffer((n * 2,), "float32")):
        B[0] = A[0]

    @T.prim_func
    def fixed(A: T.Buffer((4, 8), "float32")):
        A_1 = T.decl_buffer((32,), data=A.data)
        A_1[0] = T.float32(1)
)";
  auto built = testing::BuildText(text);
  EXPECT_EQ(built.log, "");
  Function copy2d = built.module->GetFunction("copy2d").value();
  Function first64 = built.module->GetFunction("first64").value();
  Function twice = built.module->GetFunction("twice").value();
  float storage[8] = {5, 0, 0, 0, 0, 0, 0, 0};
  float out[8] = {0};
  int64_t zero_strides[2] = {0, 0};
  auto view = [&](float* data, int32_t ndim, int64_t* shape, int64_t* strides) {
    DLTensor t;
    std::memset(&t, 0, sizeof(t));
    t.data = data;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = ndim;
    t.dtype = testing::F32();
    t.shape = shape;
    t.strides = strides;
    return t;
  };
  // 65536 * 65536 = 2^32 elements: beyond int32 indices.
  int64_t big[2] = {65536, 65536};
  DLTensor a = view(storage, 2, big, zero_strides), b = view(out, 2, big, zero_strides);
  ExpectCallError(copy2d, "ValueError",
                  "copy2d: A.shape: expected at most 2147483647 elements (int32 indices), got "
                  "65536 * 65536 = 4294967296",
                  &a, &b);
  // One element more than int32 allows, and exactly as many (refused later for its strides).
  int64_t over[2] = {2, 1073741824}, exact[2] = {1, 2147483647};
  a = view(storage, 2, over, zero_strides);
  ExpectCallError(copy2d, "ValueError",
                  "copy2d: A.shape: expected at most 2147483647 elements (int32 indices), got 2 * "
                  "1073741824 = 2147483648",
                  &a, &b);
  a = view(storage, 2, exact, zero_strides);
  ExpectCallError(copy2d, "ValueError", "copy2d: A.strides[1]: expected 1 (compact), got 0", &a,
                  &b);
  // Zero elements pass whatever the other extent, and a legal call works.
  int64_t empty[2] = {0, 2147483647};
  a = view(storage, 2, empty, nullptr);
  b = view(out, 2, empty, nullptr);
  copy2d(&a, &b);
  int64_t small[2] = {2, 4};
  a = view(storage, 2, small, nullptr);
  b = view(out, 2, small, nullptr);
  copy2d(&a, &b);
  EXPECT_EQ(out[0], 5.0f);
  // int64 indices: 2^61 floats are 2^63 bytes, one past INT64_MAX; 2^60 are fine.
  int64_t huge = int64_t{1} << 61, fine = int64_t{1} << 60, one = 1;
  int64_t stride0 = 0;
  DLTensor h = view(storage, 1, &huge, &stride0), o = view(out, 1, &one, nullptr);
  ExpectCallError(first64, "ValueError",
                  "first64: A.shape: expected at most 9223372036854775807 bytes, got "
                  "2305843009213693952 elements of 4 bytes",
                  &h, &o);
  h = view(storage, 1, &fine, &stride0);
  ExpectCallError(first64, "ValueError", "first64: A.strides[0]: expected 1 (compact), got 0", &h,
                  &o);
  // n = 2^30 makes the int32 size n * 2 wrap to -2^31: it equals the extent given, which is
  // then refused for being negative.
  int64_t n30 = int64_t{1} << 30, wrapped = -(int64_t{1} << 31);
  DLTensor x = view(storage, 1, &n30, &stride0), y = view(out, 1, &wrapped, nullptr);
  x.strides = nullptr;
  ExpectCallError(twice, "ValueError",
                  "twice: B.shape[0]: expected an extent >= 0, got -2147483648", &x, &y);
  // A constant shape that fits needs no runtime check at all.
  std::string source = codegen::GenerateC(ir::ParseModule(text));
  EXPECT_EQ(source.find("tsl_check_size(\"fixed\""), std::string::npos);
  EXPECT_NE(source.find("tsl_check_size(\"copy2d\", \"A\", tsl_t0, 2147483647LL, 4LL, \"int32\")"),
            std::string::npos);
  EXPECT_NE(source.find("tsl_check_size(\"first64\", \"A\", tsl_t0, 9223372036854775807LL, 4LL, "
                        "\"int64\")"),
            std::string::npos);
}

TEST(HostWrapperBinding, PythonGlobalIsRegistered) {
  auto f = tvm::ffi::Function::GetGlobal("tessel.codegen.GenerateC");
  ASSERT_TRUE(f.has_value());
  std::string c = (*f)(ir::ParseModule(kSignature)).cast<tvm::ffi::String>();
  EXPECT_EQ(c, codegen::GenerateC(ir::ParseModule(kSignature)));
}

}  // namespace
}  // namespace tessel
