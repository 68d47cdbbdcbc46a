#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/simplify.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/function.h>

#include <string>

#include "expect_pass.h"

namespace tessel {
namespace {

using namespace ir;  // NOLINT(build/namespaces)

// Simplify(before) must equal expected, structurally (free variables mapped onto each other).
void ExpectSimplify(const std::string& before, const std::string& expected) {
  PrimFunc in = testing::ParseFunc(before), want = testing::ParseFunc(expected);
  PrimFunc got = transform::Simplify(in);
  auto mismatch = tvm::ffi::StructuralEqual::GetFirstMismatch(got, want, /*map_free_vars=*/true);
  EXPECT_FALSE(mismatch.has_value())
      << "first difference at " << testing::MismatchPath((*mismatch).get<0>()) << "\ngot:\n"
      << AsText(got) << "\nexpected:\n"
      << AsText(want);
}

TEST(Simplify, ProvablyTrueLoopGuardIsRemoved) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32")):
    for i in range(n):
        if i < n:
            A[i] = 0
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32")):
    for i in range(n):
        A[i] = 0
)");
}

TEST(Simplify, GuardThatMayFailIsKept) {
  const char* text = R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32"), m: T.int32):
    for i in range(m):
        if i < n:
            A[i] = 0
)";
  PrimFunc in = testing::ParseFunc(text);
  EXPECT_TRUE(transform::Simplify(in).same_as(in));
}

TEST(Simplify, DeadElseBranch) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((16,), "int32")):
    for i in range(16):
        if i < 8:
            A[i] = 1
        else:
            if i >= 8:
                A[i] = 2
            else:
                A[i] = 3
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((16,), "int32")):
    for i in range(16):
        if i < 8:
            A[i] = 1
        else:
            A[i] = 2
)");
}

TEST(Simplify, ProvablyFalseConditionKeepsElse) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32")):
    for i in range(n):
        if n <= i:
            A[i] = 1
        else:
            A[i] = 2
        if i >= n:
            A[i] = 3
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32")):
    for i in range(n):
        A[i] = 2
)");
}

TEST(Simplify, AssertIsAFactForItsBody) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32"), m: T.int32):
    assert m <= n, "m must not exceed n"
    for i in range(m):
        if i < n:
            A[i] = 0
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32"), m: T.int32):
    assert m <= n, "m must not exceed n"
    for i in range(m):
        A[i] = 0
)");
}

TEST(Simplify, AssumeIsAFactForTheStatementsAfterIt) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32"), m: T.int32):
    for i in range(m):
        if i < n:
            A[i] = 1
    T.assume(m <= n)
    for i in range(m):
        if i < n:
            A[i] = 0
        else:
            A[i] = 1
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32"), m: T.int32):
    for i in range(m):
        if i < n:
            A[i] = 1
    T.assume(m <= n)
    for i in range(m):
        A[i] = 0
)");
}

TEST(Simplify, LetValueIsAFact) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32")):
    for i in range(n):
        j: T.int32 = i + 1
        if j <= n:
            A[i] = j
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32")):
    for i in range(n):
        j: T.int32 = i + 1
        A[i] = j
)");
}

TEST(Simplify, ConditionsThatReadMemoryAreNotFacts) {
  // The store changes A[0]: the inner test must stay.
  const char* text = R"(
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    if A[0] > 0:
        A[0] = -1
        if A[0] > 0:
            A[1] = 1
)";
  PrimFunc out = transform::Simplify(testing::ParseFunc(text));
  // Both tests stay (the rewrite rules may respell them).
  int ifs = 0;
  PostOrderVisit(out->body, [&](const ObjectRef& n) { ifs += n.as<IfThenElseNode>() != nullptr; });
  EXPECT_EQ(ifs, 2) << AsText(out);
}

TEST(Simplify, EmptyLoopIsRemovedOnlyWhenProvablyEmpty) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((16,), "int32"), n: T.int32):
    if n < 1:
        for i in range(n):
            A[i] = 0
        A[0] = 1
    for i in range(n):
        A[i] = 2
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((16,), "int32"), n: T.int32):
    if n < 1:
        A[0] = 1
    for i in range(n):
        A[i] = 2
)");
}

TEST(Simplify, BlockIterVarDomains) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((16,), "int32")):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.spatial(16, i)
            T.reads()
            T.writes(A[vi])
            if vi < 16:
                A[vi] = 0
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((16,), "int32")):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.spatial(16, i)
            T.reads()
            T.writes(A[vi])
            A[vi] = 0
)");
}

TEST(Simplify, ThreadExtentBindsTheThreadVariable) {
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((128,), "int32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        if threadIdx_x < 128:
            A[threadIdx_x] = 0
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((128,), "int32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        A[threadIdx_x] = 0
)");
}

TEST(Simplify, TiledIndexFusesBack) {
  arith::Analyzer probe;
  if (!probe.FindExtension("canonical")) {
    GTEST_SKIP() << "the canonical simplifier (extension \"canonical\") is not registered yet";
  }
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((64,), "int32")):
    for i in range(64):
        A[i // 8 * 8 + i % 8] = 0
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((64,), "int32")):
    for i in range(64):
        A[i] = 0
)");
}

TEST(Simplify, UnchangedInputIsReturnedAsIs) {
  const char* text = R"(
@T.prim_func
def f(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for i in range(n):
        B[i] = A[i]
)";
  PrimFunc in = testing::ParseFunc(text);
  EXPECT_TRUE(transform::Simplify(in).same_as(in));
  IRModule mod({{"f", in}});
  EXPECT_TRUE(transform::Simplify(mod).same_as(mod));
}

TEST(Simplify, StatementWithCallerAnalyzer) {
  arith::Analyzer analyzer;
  Var n("n"), i("i");
  Buffer a = MakeBuffer("A", DataType::Int(32), {n});
  Stmt store = BufferStore(a, Int32(0), {i});
  Stmt body = For(i, Int32(0), n, ForKind::kSerial, IfThenElse(i < n, store));
  Stmt out = transform::Simplify(body, &analyzer);
  Stmt want = For(i, Int32(0), n, ForKind::kSerial, store);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(out, want)) << AsText(out);
  // Its scopes are closed again; the loop variable's binding stays.
  EXPECT_TRUE(analyzer.facts().empty());
}

// The host wrapper checks that each buffer's element count fits its index dtype
// (transform/host_facts.h): with that fact the flat index of an (n, m) buffer cannot wrap, so a
// guard that TVM's loop transformations leave behind is provably true. Without it (a statement
// simplified with a plain analyzer, or a function another function calls, which the wrapper does
// not guard) the guard must stay: n = m = 65536 makes i * m + j wrap.
constexpr char kFlatGuard[] = R"(
@T.prim_func
def f(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
    A_1 = T.decl_buffer((n * m,), data=A.data)
    B_1 = T.decl_buffer((n * m,), data=B.data)
    for i in range(n):
        for j in range(m):
            if i * m + j < n * m:
                B_1[i * m + j] = A_1[i * m + j]
)";

bool HasIf(const Stmt& node) {
  bool found = false;
  PostOrderVisit(node, [&](const ObjectRef& n) { found = found || n.as<IfThenElseNode>(); });
  return found;
}

TEST(Simplify, HostCheckedElementCountProvesFlatIndexGuard) {
  ExpectSimplify(kFlatGuard, R"(
@T.prim_func
def f(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
    A_1 = T.decl_buffer((n * m,), data=A.data)
    B_1 = T.decl_buffer((n * m,), data=B.data)
    for i in range(n):
        for j in range(m):
            B_1[i * m + j] = A_1[i * m + j]
)");
}

TEST(Simplify, WithoutHostCheckedFactsTheFlatIndexGuardStays) {
  PrimFunc in = testing::ParseFunc(kFlatGuard);
  // The statement alone, with an analyzer that knows only n, m >= 0.
  arith::Analyzer analyzer;
  Buffer a = in->buffer_map.Get(in->params[0]).value();
  Var n = a->shape[0].as<Var>().value(), m = a->shape[1].as<Var>().value();
  arith::ConstraintScope sizes(&analyzer, n >= 0 && m >= 0);
  EXPECT_TRUE(HasIf(transform::Simplify(in->body, &analyzer)));
  // Called through T.call_global by another function: no host facts for f.
  IRModule mod = ParseModule(R"(
@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
        A_1 = T.decl_buffer((n * m,), data=A.data)
        B_1 = T.decl_buffer((n * m,), data=B.data)
        for i in range(n):
            for j in range(m):
                if i * m + j < n * m:
                    B_1[i * m + j] = A_1[i * m + j]

    @T.prim_func
    def g(x: T.int32) -> T.int32:
        T.ret(T.call_global("f", "int32", x))
)");
  IRModule out = transform::Simplify(mod);
  EXPECT_TRUE(HasIf(out->functions.Get("f").value()->body));
}

TEST(Simplify, HostCheckedCountBoundsAConstantRowLength) {
  // A of shape (n, 4) float32: n * 4 <= 2^31 - 1, so i * 4 + j fits and (i * 4 + j) // 4 is i.
  ExpectSimplify(R"(
@T.prim_func
def g(A: T.Buffer((n, 4), "float32"), B: T.Buffer((n,), "float32")):
    A_1 = T.decl_buffer((n * 4,), data=A.data)
    for i in range(n):
        for j in range(4):
            B[(i * 4 + j) // 4] = B[(i * 4 + j) // 4] + A_1[i * 4 + j]
)",
                 R"(
@T.prim_func
def g(A: T.Buffer((n, 4), "float32"), B: T.Buffer((n,), "float32")):
    A_1 = T.decl_buffer((n * 4,), data=A.data)
    for i in range(n):
        for j in range(4):
            B[i] = B[i] + A_1[i * 4 + j]
)");
  // Without the count fact, i may reach 2^31 - 2 and i * 4 wraps: the division stays.
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def g(A: T.Buffer((n, k), "float32"), B: T.Buffer((n,), "float32")):
    A_1 = T.decl_buffer((n * k,), data=A.data)
    for i in range(n):
        for j in range(4):
            B[(i * 4 + j) // 4] = B[(i * 4 + j) // 4] + A_1[i * 4 + j]
)");
  EXPECT_TRUE(transform::Simplify(in).same_as(in));
}

TEST(Simplify, LoopBodyKnowsTheExtentIsPositiveButCodeAfterItDoesNot) {
  // Inside `for j in range(m)`, m >= 1; after the loop m may be 0.
  ExpectSimplify(R"(
@T.prim_func
def f(A: T.Buffer((m,), "int32")):
    for j in range(m):
        if m > 0:
            A[j] = 1
)",
                 R"(
@T.prim_func
def f(A: T.Buffer((m,), "int32")):
    for j in range(m):
        A[j] = 1
)");
}

TEST(Simplify, RegisteredGlobal) {
  auto f = tvm::ffi::Function::GetGlobal("tessel.transform.Simplify");
  ASSERT_TRUE(f.has_value());
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32")):
    for i in range(n):
        if i < n:
            A[i] = 0
)");
  PrimFunc want = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32")):
    for i in range(n):
        A[i] = 0
)");
  PrimFunc got = (*f)(in).cast<PrimFunc>();
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(got, want, /*map_free_vars=*/true)) << AsText(got);
  IRModule mod = (*f)(IRModule({{"f", in}})).cast<IRModule>();
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(mod->functions.at("f"), want, true));
  EXPECT_THROW((*f)(Int32(1)), tvm::ffi::Error);
}

}  // namespace
}  // namespace tessel
