#include <gtest/gtest.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/vectorize_loop.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "../arith/eval.h"
#include "expect_pass.h"

namespace tessel {
namespace {

using namespace ir;  // NOLINT(build/namespaces)
using testing::ExpectPass;
using testing::ExpectUnchanged;

PrimFunc Vectorize(const PrimFunc& f) { return transform::VectorizeLoop(f); }

void ExpectVectorize(const std::string& before, const std::string& expected) {
  ExpectPass(Vectorize, before, expected);
}

TEST(VectorizeLoop, AddFourLanes) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        C[i] = A[i] + B[i]
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    C[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] + B[T.Ramp(0, 1, 4)]
)");
}

TEST(VectorizeLoop, SevenLanesBecomePowerOfTwoPieces) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((16,), "float32")):
    for i in T.vectorized(1, 8):
        C[i + 3] = A[i] * A[i - 1]
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((16,), "float32")):
    C[T.Ramp(4, 1, 4)] = A[T.Ramp(1, 1, 4)] * A[T.Ramp(0, 1, 4)]
    C[T.Ramp(8, 1, 2)] = A[T.Ramp(5, 1, 2)] * A[T.Ramp(4, 1, 2)]
    for i in range(7, 8):
        C[i + 3] = A[i] * A[i - 1]
)");
}

TEST(VectorizeLoop, StridedAccessKeepsARamp) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((64,), "int32"), B: T.Buffer((32,), "int32")):
    for j in range(8):
        for i in T.vectorized(4):
            B[j * 4 + i] = A[(j * 4 + i) * 2]
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((64,), "int32"), B: T.Buffer((32,), "int32")):
    for j in range(8):
        B[T.Ramp(j * 4, 1, 4)] = A[T.Ramp(j * 4 * 2, 2, 4)]
)");
}

TEST(VectorizeLoop, InvariantScalarIsBroadcast) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), x: T.float32):
    for i in T.vectorized(4):
        B[i] = A[i] * x + T.float32(1)
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), x: T.float32):
    B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] * T.Broadcast(x, 4) + T.Broadcast(T.float32(1), 4)
)");
}

TEST(VectorizeLoop, InvariantValueStoredToEveryLane) {
  ExpectVectorize(R"(
@T.prim_func
def f(B: T.Buffer((4,), "float32"), x: T.float32):
    for i in T.vectorized(4):
        B[i] = x
)",
                  R"(
@T.prim_func
def f(B: T.Buffer((4,), "float32"), x: T.float32):
    B[T.Ramp(0, 1, 4)] = T.Broadcast(x, 4)
)");
}

TEST(VectorizeLoop, Select) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        B[i] = T.Select(A[i] > T.float32(0), A[i], T.float32(0))
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    B[T.Ramp(0, 1, 4)] = T.Select(A[T.Ramp(0, 1, 4)] > T.Broadcast(T.float32(0), 4), A[T.Ramp(0, 1, 4)], T.Broadcast(T.float32(0), 4))
)");
}

TEST(VectorizeLoop, Cast) {
  ExpectVectorize(R"(
@T.prim_func
def f(B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "int64")):
    for i in T.vectorized(4):
        B[i] = T.Cast("float32", i)
        C[i] = T.Cast("int64", i * 2)
)",
                  R"(
@T.prim_func
def f(B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "int64")):
    B[T.Ramp(0, 1, 4)] = T.Cast("float32x4", T.Ramp(0, 1, 4))
    C[T.Ramp(0, 1, 4)] = T.Cast("int64x4", T.Ramp(0, 2, 4))
)");
}

TEST(VectorizeLoop, LetBoundToAVectorBecomesAVectorVariable) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        y: T.float32 = A[i] + T.float32(1)
        B[i] = T.Let(z * y, where={z: y + y})
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    y: T.float32x4 = A[T.Ramp(0, 1, 4)] + T.Broadcast(T.float32(1), 4)
    B[T.Ramp(0, 1, 4)] = T.Let(z * y, where={z: y + y})
)");
}

TEST(VectorizeLoop, NestedSerialLoopAndInvariantIf) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((12,), "float32"), n: T.int32):
    for i in T.vectorized(4):
        if n > 0:
            for k in range(3):
                A[i * 3 + k] = T.float32(0)
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((12,), "float32"), n: T.int32):
    if n > 0:
        for k in range(3):
            A[T.Ramp(k, 3, 4)] = T.Broadcast(T.float32(0), 4)
)");
}

TEST(VectorizeLoop, IfThenElseWithSafeBranchesBecomesSelect) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), n: T.int32):
    for i in T.vectorized(4):
        A[i] = T.if_then_else(n > 0, i * 2, 0)
        B[i] = T.if_then_else(i < n, i, n)
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), n: T.int32):
    A[T.Ramp(0, 1, 4)] = T.Select(T.Broadcast(n > 0, 4), T.Ramp(0, 2, 4), T.Broadcast(0, 4))
    B[T.Ramp(0, 1, 4)] = T.Select(T.Ramp(0, 1, 4) < T.Broadcast(n, 4), T.Ramp(0, 1, 4), T.Broadcast(n, 4))
)");
}

TEST(VectorizeLoop, SplitsLongLoopsIntoChunksAndRemainder) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((130,), "float32"), B: T.Buffer((130,), "float32")):
    for i in T.vectorized(130):
        x: T.float32 = A[i]
        B[i] = x
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((130,), "float32"), B: T.Buffer((130,), "float32")):
    for i_chunk in range(2):
        x: T.float32x64 = A[T.Ramp(i_chunk * 64, 1, 64)]
        B[T.Ramp(i_chunk * 64, 1, 64)] = x
    x_1: T.float32x2 = A[T.Ramp(128, 1, 2)]
    B[T.Ramp(128, 1, 2)] = x_1
)");
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((129,), "float32")):
    for i in T.vectorized(129):
        A[i] = T.float32(0)
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((129,), "float32")):
    for i_chunk in range(2):
        A[T.Ramp(i_chunk * 64, 1, 64)] = T.Broadcast(T.float32(0), 64)
    for i in range(128, 129):
        A[i] = T.float32(0)
)");
}

// The cases below cannot be vectorized: the loop becomes serial with its body untouched.
void ExpectSerial(const std::string& vectorized_text) {
  std::string serial = vectorized_text;
  size_t at = serial.find("T.vectorized(");
  ASSERT_NE(at, std::string::npos);
  serial.replace(at, std::string("T.vectorized").size(), "T.serial");
  ExpectVectorize(vectorized_text, serial);
}

TEST(VectorizeLoop, ReductionIntoOneElementStaysSerial) {
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
    for i in T.vectorized(4):
        s[0] = s[0] + A[i]
)");
}

TEST(VectorizeLoop, MathCallStaysSerial) {
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        B[i] = T.exp(A[i])
)");
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        A[i] = T.call_extern("float32", "g", i)
)");
}

TEST(VectorizeLoop, NonConstantExtentStaysSerial) {
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((n,), "float32")):
    for i in T.vectorized(n):
        A[i] = T.float32(0)
)");
}

TEST(VectorizeLoop, OtherBlockersStaySerial) {
  // An inner loop whose extent depends on the vector variable.
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in T.vectorized(4):
        for k in range(i):
            A[i * 4 + k] = T.float32(0)
)");
  // An IfThenElse statement on a vector condition.
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        if i < 2:
            A[i] = T.float32(0)
)");
  // A vector if_then_else whose branch loads memory (it may be out of bounds on other lanes).
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), n: T.int32):
    for i in T.vectorized(4):
        A[i] = T.if_then_else(i < n, A[i + 1], T.float32(0))
)");
  // The same with an invariant condition: the guarded load must not run when it is false.
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32"), n: T.int32):
    for i in T.vectorized(4):
        A[i] = T.if_then_else(n > 0, A[i + 1], T.float32(0))
)");
  // An allocation inside.
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        t_data = T.allocate([1], "float32", "local")
        t = T.decl_buffer((1,), "float32", data=t_data, scope="local")
        t[0] = A[i]
        A[i] = t[0]
)");
}

TEST(VectorizeLoop, InnerVectorLoopFirstThenOuterSerial) {
  ExpectVectorize(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for j in T.vectorized(4):
        for i in T.vectorized(4):
            A[j * 4 + i] = T.float32(0)
)",
                  R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for j in range(4):
        A[T.Ramp(j * 4, 1, 4)] = T.Broadcast(T.float32(0), 4)
)");
}

TEST(VectorizeLoop, NoVectorLoopReturnsInput) {
  ExpectUnchanged(Vectorize, R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.unroll(4):
        A[i] = T.float32(0)
)");
}

TEST(VectorizeLoop, ExtentOneBecomesSerial) {
  ExpectSerial(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.vectorized(1):
        A[i] = T.float32(0)
)");
}

// ---- lane-wise soundness: lane k of the vector value equals the scalar body at i = min + k ----

// Lane k of a vector expression as a scalar expression; `lets` maps a vector Let variable to the
// scalar variable standing for its lane k.
PrimExpr Lane(const PrimExpr& e, int64_t k, std::map<const VarNode*, Var>* lets) {
  auto lane = [&](const PrimExpr& x) { return Lane(x, k, lets); };
  if (const auto* v = e.as<VarNode>()) {
    auto it = lets->find(v);
    if (it != lets->end()) return it->second;
  }
  if (e.dtype().is_scalar() && !e.as<LetNode>()) return e;
  if (const auto* r = e.as<RampNode>()) {
    return Add(r->base, Mul(r->stride, IntImm(r->stride.dtype(), k)));
  }
  if (const auto* b = e.as<BroadcastNode>()) return b->value;
  if (const auto* c = e.as<CastNode>()) return Cast(c->dtype.element_of(), lane(c->value));
  if (const auto* s = e.as<SelectNode>()) {
    return Select(lane(s->condition), lane(s->true_value), lane(s->false_value));
  }
  if (const auto* n = e.as<NotNode>()) return Not(lane(n->a));
  if (const auto* l = e.as<LetNode>()) {
    // A scalar Let variable stays (scalar parts of the lanes use it as it is).
    Var scalar = l->var;
    if (l->var.dtype().is_vector()) {
      scalar = Var(l->var->name_hint, l->var.dtype().element_of());
      (*lets)[l->var.get()] = scalar;
    }
    return Let(scalar, lane(l->value), lane(l->body));
  }
#define TESSEL_X(Name) \
  if (const auto* op = e.as<Name##Node>()) return Name(lane(op->a), lane(op->b));
  TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
  TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
  TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
  ADD_FAILURE() << "no lane rule for " << AsText(e);
  return e;
}

PrimExpr Lane(const PrimExpr& e, int64_t k) {
  std::map<const VarNode*, Var> lets;
  return Lane(e, k, &lets);
}

class ExprGen {
 public:
  ExprGen(Var i, Var n, uint32_t seed) : i_(std::move(i)), n_(std::move(n)), rng_(seed) {}

  PrimExpr Int(int depth) {
    int pick = Pick(depth <= 0 ? 3 : 12);
    switch (pick) {
      case 0:
        return i_;
      case 1:
        return bound_.empty() || Pick(2) ? PrimExpr(n_)
                                         : PrimExpr(bound_[Pick(static_cast<int>(bound_.size()))]);
      case 2:
        return Int32(Pick(9) - 4);
      case 3:
        return Add(Int(depth - 1), Int(depth - 1));
      case 4:
        return Sub(Int(depth - 1), Int(depth - 1));
      case 5:
        return Mul(Int(depth - 1), Int(depth - 1));
      case 6:
        return FloorDiv(Int(depth - 1), Int(depth - 1));
      case 7:
        return FloorMod(Int(depth - 1), Int(depth - 1));
      case 8:
        return Min(Int(depth - 1), Int(depth - 1));
      case 9:
        return Select(LT(Int(depth - 1), Int(depth - 1)), Int(depth - 1), Int(depth - 1));
      case 10: {
        Var y("y");
        PrimExpr value = Int(depth - 1);
        bound_.push_back(y);
        PrimExpr body = Add(Int(depth - 1), y);
        bound_.pop_back();
        return Let(y, value, body);
      }
      default:
        return Cast(DataType::Int(32), Cast(DataType::Int(64), Int(depth - 1)) * Int64Of(depth));
    }
  }

 private:
  PrimExpr Int64Of(int depth) { return Cast(DataType::Int(64), Int(depth - 1)); }
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  Var i_, n_;
  // Let variables in scope where the next leaf is made.
  std::vector<Var> bound_;
  std::mt19937 rng_;
};

TEST(VectorizeLoop, LanesMatchScalarBody) {
  Var i("i"), n("n");
  Buffer b = MakeBuffer("B", DataType::Int(32), {256});
  ExprGen gen(i, n, 1234);
  int compared = 0, vector_lets = 0;
  for (int round = 0; round < 300; ++round) {
    PrimExpr e = gen.Int(3);
    int64_t lanes = round % 2 ? 4 : 16;
    int64_t mn = round % 5;
    Stmt loop = For(i, Int32(mn), Int32(lanes), ForKind::kVectorized, BufferStore(b, e, {i}));
    Stmt out = transform::VectorizeLoop(loop);
    const auto* store = out.as<BufferStoreNode>();
    ASSERT_NE(store, nullptr) << AsText(e) << "\n->\n" << AsText(out);
    PostOrderVisit(store->value, [&](const ObjectRef& node) {
      if (const auto* let = node.as<LetNode>()) vector_lets += let->var.dtype().is_vector();
    });
    for (int64_t nv : {-7, 0, 3, 100}) {
      for (int64_t k = 0; k < lanes; ++k) {
        testing::ExactEvaluator scalar({{i.get(), mn + k}, {n.get(), nv}});
        testing::ExactEvaluator vec({{n.get(), nv}});
        auto want = scalar(e);
        auto got_index = vec(Lane(store->indices[0], k));
        ASSERT_TRUE(got_index.has_value());
        EXPECT_EQ(static_cast<int64_t>(*got_index), mn + k);
        if (!want) continue;  // undefined (division by zero) in the scalar body
        auto got = vec(Lane(store->value, k));
        ASSERT_TRUE(got.has_value()) << AsText(store->value);
        EXPECT_EQ(static_cast<int64_t>(*got), static_cast<int64_t>(*want))
            << "lane " << k << " n=" << nv << "\nscalar: " << AsText(e)
            << "\nvector: " << AsText(store->value);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 1000);
  EXPECT_GT(vector_lets, 10);
}

}  // namespace
}  // namespace tessel
