#include <gtest/gtest.h>
#include <tessel/transform/lower_intrinsics.h>

#include <string>
#include <vector>

#include "../ir/expect_error.h"
#include "expect_pass.h"

namespace tessel {
namespace {

using namespace ir;  // NOLINT(build/namespaces)
using testing::ExpectPass;
using testing::ExpectUnchanged;

PrimFunc Lower(const PrimFunc& f) { return transform::LowerIntrinsics(f); }

// A function storing `value` (over the scalar params x and y of dtype `dtype`) into B[0].
std::string Kernel(const std::string& dtype, const std::string& out_dtype,
                   const std::string& value) {
  return "@T.prim_func\ndef f(B: T.Buffer((1,), \"" + out_dtype + "\"), x: T." + dtype + ", y: T." +
         dtype + "):\n    B[0] = " + value + "\n";
}

struct MathCase {
  const char* op;
  const char* c_name;  // the float64 name
  int arity;
};

const std::vector<MathCase>& MathCases() {
  static const std::vector<MathCase> cases = {
      {"exp", "exp", 1},     {"exp2", "exp2", 1},   {"log", "log", 1},   {"log2", "log2", 1},
      {"sqrt", "sqrt", 1},   {"sin", "sin", 1},     {"cos", "cos", 1},   {"tanh", "tanh", 1},
      {"erf", "erf", 1},     {"floor", "floor", 1}, {"ceil", "ceil", 1}, {"round", "nearbyint", 1},
      {"trunc", "trunc", 1}, {"fabs", "fabs", 1},   {"pow", "pow", 2},   {"fmod", "fmod", 2},
      {"abs", "fabs", 1},
  };
  return cases;
}

std::string Args(int arity, const std::string& wrap_l = "", const std::string& wrap_r = "") {
  std::string out = wrap_l + "x" + wrap_r;
  if (arity == 2) out += ", " + wrap_l + "y" + wrap_r;
  return out;
}

TEST(LowerIntrinsics, EachMathOpFloat32) {
  for (const MathCase& c : MathCases()) {
    SCOPED_TRACE(c.op);
    ExpectPass(Lower,
               Kernel("float32", "float32", std::string("T.") + c.op + "(" + Args(c.arity) + ")"),
               Kernel("float32", "float32",
                      std::string("T.call_pure_extern(\"float32\", \"") + c.c_name + "f\", " +
                          Args(c.arity) + ")"));
  }
}

TEST(LowerIntrinsics, EachMathOpFloat64) {
  for (const MathCase& c : MathCases()) {
    SCOPED_TRACE(c.op);
    ExpectPass(Lower,
               Kernel("float64", "float64", std::string("T.") + c.op + "(" + Args(c.arity) + ")"),
               Kernel("float64", "float64",
                      std::string("T.call_pure_extern(\"float64\", \"") + c.c_name + "\", " +
                          Args(c.arity) + ")"));
  }
}

TEST(LowerIntrinsics, HalfPrecisionComputesInFloat32) {
  for (const char* half : {"float16", "bfloat16"}) {
    for (const MathCase& c : MathCases()) {
      SCOPED_TRACE(std::string(c.op) + " " + half);
      std::string h = half;
      ExpectPass(Lower, Kernel(h, h, std::string("T.") + c.op + "(" + Args(c.arity) + ")"),
                 Kernel(h, h,
                        "T.Cast(\"" + h + "\", T.call_pure_extern(\"float32\", \"" + c.c_name +
                            "f\", " + Args(c.arity, "T.Cast(\"float32\", ", ")") + "))"));
    }
  }
}

TEST(LowerIntrinsics, ExpandedOps) {
  ExpectPass(
      Lower, Kernel("float32", "float32", "T.rsqrt(x)"),
      Kernel("float32", "float32", "T.float32(1) / T.call_pure_extern(\"float32\", \"sqrtf\", x)"));
  ExpectPass(Lower, Kernel("float64", "float64", "T.sigmoid(x)"),
             Kernel("float64", "float64",
                    "T.float64(1) / (T.float64(1) + T.call_pure_extern(\"float64\", \"exp\", "
                    "T.float64(0) - x))"));
  ExpectPass(Lower, Kernel("float16", "float16", "T.sigmoid(x)"),
             Kernel("float16", "float16",
                    "T.Cast(\"float16\", T.float32(1) / (T.float32(1) + "
                    "T.call_pure_extern(\"float32\", \"expf\", T.float32(0) - T.Cast(\"float32\", "
                    "x))))"));
  ExpectPass(Lower, Kernel("float32", "bool", "T.isnan(x)"), Kernel("float32", "bool", "x != x"));
  ExpectPass(Lower, Kernel("float32", "bool", "T.isnan(x + y)"),
             Kernel("float32", "bool", "T.Let(v != v, where={v: x + y})"));
  ExpectPass(Lower, Kernel("float64", "bool", "T.isinf(x)"),
             Kernel("float64", "bool",
                    "T.call_pure_extern(\"float64\", \"fabs\", x) == T.float64(\"inf\")"));
  ExpectPass(Lower, Kernel("int32", "bool", "T.isnan(x)"), Kernel("int32", "bool", "False"));
}

TEST(LowerIntrinsics, IntegerAbsStays) {
  ExpectUnchanged(Lower, Kernel("int32", "int32", "T.abs(x)"));
}

TEST(LowerIntrinsics, NestedCallsAreAllLowered) {
  ExpectPass(Lower, Kernel("float32", "float32", "T.exp(T.log(x) * y)"),
             Kernel("float32", "float32",
                    "T.call_pure_extern(\"float32\", \"expf\", T.call_pure_extern(\"float32\", "
                    "\"logf\", x) * y)"));
}

TEST(LowerIntrinsics, VectorsWithoutMathAreUntouched) {
  ExpectUnchanged(Lower, R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 2, 4)] * T.Broadcast(T.float32(2), 4)
    B[7] = T.call_pure_extern("float32", "expf", A[7])
)");
}

TEST(LowerIntrinsics, VectorMathCallIsAnError) {
  PrimFunc f = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "kern"})
    A[T.Ramp(0, 1, 4)] = T.exp(A[T.Ramp(0, 1, 4)])
)");
  testing::ExpectError([&] { transform::LowerIntrinsics(f); }, "ValueError",
                       {"vector call T.exp(A[0:4]) (float32x4) in function 'kern'"});
}

TEST(LowerIntrinsics, IntegerMathIsAnError) {
  PrimFunc f = testing::ParseFunc(Kernel("int32", "int32", "T.exp(x)"));
  testing::ExpectError([&] { transform::LowerIntrinsics(f); }, "ValueError",
                       {"exp of int32 in function 'f'"});
}

}  // namespace
}  // namespace tessel
