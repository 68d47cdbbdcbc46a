// VerifyWellFormed: every example verifies clean, and each check has negative tests (in the text
// format where the parser can express the mistake, built in C++ where it cannot).
#include <gtest/gtest.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/verify_well_formed.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)

std::string Summary(const std::vector<VerifyError>& errors) {
  std::ostringstream os;
  for (const VerifyError& e : errors) os << e.ToString() << "\n";
  return os.str();
}

// The errors of `func`, expecting exactly one with check `check` whose message contains `needle`.
VerifyError ExpectOneError(const PrimFunc& func, const std::string& check,
                           const std::string& needle) {
  std::vector<VerifyError> errors = VerifyWellFormed(func, "f");
  EXPECT_EQ(errors.size(), 1u) << Summary(errors);
  if (errors.empty()) return VerifyError{};
  EXPECT_EQ(errors[0].check, check) << Summary(errors);
  EXPECT_NE(errors[0].message.find(needle), std::string::npos) << errors[0].message;
  return errors[0];
}

PrimFunc ParseFunc(const std::string& text) { return ParseText(text).as<PrimFunc>().value(); }

// A function of one buffer parameter A (float32, shape (16,)) around `body(A)`.
struct OneBuffer {
  Var a{"a", DataType::Handle()};
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int32(16)});
  PrimFunc Func(Stmt body) const { return PrimFunc({a}, body, {{a, A}}); }
  Stmt Store(PrimExpr index, float value = 0.0f) const {
    return BufferStore(A, FloatImm(DataType::Float(32), value), {index});
  }
};

Stmt Loop(Var v, Stmt body) { return For(v, Int32(0), Int32(16), ForKind::kSerial, body); }

// ---- positives ----

TEST(VerifyWellFormed, EveryExampleIsWellFormed) {
  std::filesystem::path dir = std::filesystem::path(TESSEL_SOURCE_DIR) / "examples";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".py") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    IRModule mod = ParseModule(text.str(), entry.path().filename().string());
    std::vector<VerifyError> errors = VerifyWellFormed(mod);
    EXPECT_TRUE(errors.empty()) << entry.path().filename() << ":\n" << Summary(errors);
    ++count;
  }
  EXPECT_GE(count, 40);
}

TEST(VerifyWellFormed, PassReturnsItsInputWhenWellFormed) {
  IRModule mod = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((n,), "float32")):
    for i in range(n):
        A[i] = T.float32(0)
)");
  IRModule out = VerifyWellFormedPass()(mod);
  EXPECT_TRUE(out.same_as(mod));
}

// ---- free_var ----

TEST(VerifyWellFormed, FreeVariableInText) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    k = T.int32()
    for i in range(16):
        A[i] = T.Cast("float32", i + k)
)");
  VerifyError e = ExpectOneError(f, "free_var", "'k' (int32) is used where nothing binds it");
  std::string text = e.ToString();
  EXPECT_NE(text.find("[free_var] in function 'f'"), std::string::npos) << text;
  EXPECT_NE(text.find("A[i] = T.Cast(\"float32\", i + k)"), std::string::npos) << text;
}

TEST(VerifyWellFormed, FreeVariableListedInAttrsIsAllowed) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    T.func_attr({"tessel.free_vars": ["k"]})
    k = T.int32()
    for i in range(16):
        A[i] = T.Cast("float32", i + k)
)");
  EXPECT_TRUE(VerifyWellFormed(f).empty()) << Summary(VerifyWellFormed(f));
}

TEST(VerifyWellFormed, ShapeVariablesOfParameterBuffersAreBound) {
  // n and m are bound by A's shape; B's shape uses them, and its n * m entry is a use.
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((n, m), "float32"), B: T.Buffer((n * m,), "float32")):
    for i in range(n):
        for j in range(m):
            B[i * m + j] = A[i, j]
)");
  EXPECT_TRUE(VerifyWellFormed(f).empty()) << Summary(VerifyWellFormed(f));
}

TEST(VerifyWellFormed, LoopVariableUsedAfterItsLoop) {
  OneBuffer p;
  Var i("i");
  PrimFunc f = p.Func(SeqStmt({Loop(i, p.Store(i)), p.Store(i)}));
  ExpectOneError(f, "free_var", "whose scope does not include this use");
}

TEST(VerifyWellFormed, BlockIterVarUsedInItsOwnBinding) {
  // The BlockRealize values are evaluated outside the block: vi is not bound there.
  OneBuffer p;
  Var vi("vi");
  Block block({IterVar(vi, Range(Int32(0), Int32(16)), IterVarType::kDataPar)}, {}, {}, "b",
              p.Store(vi));
  PrimFunc f = p.Func(BlockRealize({vi}, Bool(true), block));
  ExpectOneError(f, "free_var", "'vi'");
}

TEST(VerifyWellFormed, DeclBufferOverAnUnboundPointer) {
  OneBuffer p;
  Var ptr = Var::Pointer("ptr", DataType::Float(32));
  Buffer B("B", ptr, DataType::Float(32), {Int32(4)}, {}, Int32(0), "global", 64, 1);
  PrimFunc f = p.Func(DeclBuffer(B, BufferStore(B, FloatImm(DataType::Float(32), 1), {0})));
  ExpectOneError(f, "free_var", "'ptr'");
}

// ---- undeclared_buffer ----

TEST(VerifyWellFormed, StoreToABufferNobodyDeclared) {
  OneBuffer p;
  Buffer C = MakeBuffer("C", DataType::Float(32), {Int32(16)});
  Var i("i");
  PrimFunc f = p.Func(Loop(i, BufferStore(C, BufferLoad(p.A, {i}), {i})));
  VerifyError e = ExpectOneError(f, "undeclared_buffer", "buffer 'C' is used where it is not");
  EXPECT_NE(e.ToString().find("C[i] = A[i]"), std::string::npos) << e.ToString();
}

TEST(VerifyWellFormed, LoadAfterTheDeclBufferScopeEnds) {
  OneBuffer p;
  Var data = Var::Pointer("t", DataType::Float(32));
  Buffer T("T", data, DataType::Float(32), {Int32(16)}, {}, Int32(0), "global", 64, 1);
  Var i("i");
  Stmt inside = DeclBuffer(T, BufferStore(T, FloatImm(DataType::Float(32), 0), {0}));
  Stmt after = BufferStore(p.A, BufferLoad(T, {0}), {0});
  Stmt body =
      Allocate(data, DataType::Float(32), {Int32(16)}, Bool(true), SeqStmt({inside, after}));
  ExpectOneError(p.Func(body), "undeclared_buffer", "buffer 'T'");
}

TEST(VerifyWellFormed, BlockReadRegionOfAnUndeclaredBuffer) {
  OneBuffer p;
  Buffer C = MakeBuffer("C", DataType::Float(32), {Int32(16)});
  Block block({}, {BufferRegion::Full(C)}, {BufferRegion::Full(p.A)}, "b", p.Store(0));
  ExpectOneError(p.Func(BlockRealize({}, Bool(true), block)), "undeclared_buffer", "'C'");
}

// ---- rebound_var ----

TEST(VerifyWellFormed, LoopVariableReboundInsideItsLoop) {
  OneBuffer p;
  Var i("i");
  ExpectOneError(p.Func(Loop(i, Loop(i, p.Store(i)))), "rebound_var",
                 "'i' (int32) is bound by a For loop, but it is already in scope");
}

TEST(VerifyWellFormed, SiblingLoopsSharingAVariable) {
  OneBuffer p;
  Var i("i");
  ExpectOneError(p.Func(SeqStmt({Loop(i, p.Store(i)), Loop(i, p.Store(i, 1.0f))})), "rebound_var",
                 "already bound elsewhere by a For loop");
}

TEST(VerifyWellFormed, LetStmtShadowingAParameter) {
  OneBuffer p;
  Var n("n");
  PrimFunc f({p.a, n}, LetStmt(n, Int32(3), p.Store(n)), {{p.a, p.A}});
  ExpectOneError(f, "rebound_var", "already in scope, bound by a function parameter");
}

TEST(VerifyWellFormed, LetExpressionReboundToADifferentValue) {
  OneBuffer p;
  Var i("i"), x("x");
  PrimExpr first = Let(x, i + 1, x * 2);
  PrimExpr second = Let(x, i + 2, x * 2);
  Stmt body = Loop(i, BufferStore(p.A, Cast(DataType::Float(32), first + second), {i}));
  ExpectOneError(p.Func(body), "rebound_var", "to a different value");
}

TEST(VerifyWellFormed, LetExpressionDuplicatedWithTheSameValueIsAllowed) {
  OneBuffer p;
  Var i("i"), x("x");
  PrimExpr e = Let(x, i + 1, x * 2);
  Stmt body = Loop(i, BufferStore(p.A, Cast(DataType::Float(32), e + e), {i}));
  EXPECT_TRUE(VerifyWellFormed(p.Func(body)).empty());
}

TEST(VerifyWellFormed, ThreadVariableLaunchedTwiceSideBySideIsAllowedNotNested) {
  OneBuffer p;
  Var tx("threadIdx_x");
  auto launch = [&](Stmt body) { return AttrStmt(tx, "thread_extent", Int32(16), body); };
  EXPECT_TRUE(
      VerifyWellFormed(p.Func(SeqStmt({launch(p.Store(tx)), launch(p.Store(tx))}))).empty());
  ExpectOneError(p.Func(launch(launch(p.Store(tx)))), "rebound_var", "already in scope");
}

TEST(VerifyWellFormed, ThreadAxisGivenAsAnIterVarBindsItsVariable) {
  OneBuffer p;
  Var tx("threadIdx_x");
  IterVar axis(tx, Range(Int32(0), Int32(16)), IterVarType::kDataPar);
  EXPECT_TRUE(
      VerifyWellFormed(p.Func(AttrStmt(axis, "thread_extent", Int32(16), p.Store(tx)))).empty());
  // Any other attribute on a variable is a use of it.
  ExpectOneError(p.Func(AttrStmt(tx, "pragma_unroll", Int32(1), p.Store(0))), "free_var",
                 "'threadIdx_x'");
}

// ---- vector_index ----

TEST(VerifyWellFormed, VectorIndexBeforeTheLast) {
  // The BufferLoad and BufferStore constructors refuse this; a pass editing indices in place
  // (CopyOnWrite) does not go through them.
  Var a("a", DataType::Handle());
  Buffer A = MakeBuffer("A", DataType::Float(32), {Int32(4), Int32(4)});
  PrimExpr ramp = Ramp(Int32(0), Int32(1), 4);
  BufferLoad load(A, {Int32(0), ramp});
  load.CopyOnWrite()->indices = {ramp, Int32(0)};
  Stmt body = BufferStore(A, load, {Int32(0), ramp});
  PrimFunc f({a}, body, {{a, A}});
  VerifyError e = ExpectOneError(f, "vector_index", "index 0 of an access to buffer 'A'");
  EXPECT_NE(e.message.find("int32x4"), std::string::npos) << e.message;
}

// ---- allocate_dtype ----

TEST(VerifyWellFormed, AllocatePointeeDisagreesWithDtype) {
  OneBuffer p;
  Var data = Var::Pointer("t", DataType::Float(16));
  Stmt body = Allocate(data, DataType::Float(32), {Int32(16)}, Bool(true), p.Store(0));
  ExpectOneError(p.Func(body), "allocate_dtype",
                 "Allocate of float32 elements: its buffer_var 't' (handle) points to float16");
}

TEST(VerifyWellFormed, AllocateThroughAnUntypedHandle) {
  OneBuffer p;
  Var data("t", DataType::Handle());
  Stmt body = Allocate(data, DataType::Float(32), {Int32(16)}, Bool(true), p.Store(0));
  ExpectOneError(p.Func(body), "allocate_dtype", "points to void");
}

// ---- iter_var_dtype ----

TEST(VerifyWellFormed, BlockIterVarBoundToAValueOfAnotherDtype) {
  // The BlockRealize constructor refuses this; an in-place edit does not.
  OneBuffer p;
  Var i("i", DataType::Int(64));
  Var vi("vi");
  Block block({IterVar(vi, Range(Int32(0), Int32(16)), IterVarType::kDataPar)}, {}, {}, "b",
              p.Store(vi));
  BlockRealize realize({Cast(DataType::Int(32), i)}, Bool(true), block);
  realize.CopyOnWrite()->iter_values = {i};
  Stmt body = For(i, IntImm(DataType::Int(64), 0), IntImm(DataType::Int(64), 16), ForKind::kSerial,
                  realize);
  ExpectOneError(p.Func(body), "iter_var_dtype",
                 "block 'b': iteration variable 'vi' (int32) has a bound value of dtype int64");
}

TEST(VerifyWellFormed, NegativeBufferDimension) {
  VerifyError e = ExpectOneError(ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    with T.sblock("root"):
        B = T.sblock_alloc_buffer((-3,), "float32")
        A[0] = B[0]
)"),
                                 "negative_size", "buffer 'B' has shape[0] = -3");
  ASSERT_TRUE(e.span.has_value());
  EXPECT_EQ((*e.span)->line, 4);
}

TEST(VerifyWellFormed, NegativeAllocateExtentAndVectorizedExtent) {
  ExpectOneError(ParseFunc(R"(
@T.prim_func
def f():
    p = T.allocate([-8], "float32", "global")
    T.evaluate(0)
)"),
                 "negative_size", "extents[0] = -8");
  ExpectOneError(ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.vectorized(-1):
        A[i] = T.float32(0)
)"),
                 "negative_size", "vectorized loop 'i' has extent -1");
  // A serial loop with a negative extent runs zero times: allowed.
  EXPECT_TRUE(VerifyWellFormed(ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(-1):
        A[i] = T.float32(0)
)"),
                               "f")
                  .empty());
}

TEST(VerifyWellFormed, IntegerDivisionByConstantZero) {
  for (const char* op : {"n // 0", "n % 0", "T.truncdiv(n, 0)", "T.truncmod(n, 0)"}) {
    ExpectOneError(ParseFunc(std::string(R"(
@T.prim_func
def f(A: T.Buffer((n,), "float32")):
    for i in range()") + op + R"():
        A[i] = T.float32(0)
)"),
                   "div_by_zero", "integer division or remainder by zero");
  }
  // Float division by zero is IEEE arithmetic, not an error.
  EXPECT_TRUE(VerifyWellFormed(ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    A[0] = A[1] / T.float32(0)
)"),
                               "f")
                  .empty());
}

TEST(VerifyWellFormed, PassThrowsTheFirstError) {
  OneBuffer p;
  Var i("i"), j("j");
  IRModule mod({{"f", p.Func(SeqStmt({p.Store(i), p.Store(j)}))}});
  // Debug builds verify every pass's input by default, which would report first: this test is
  // about the pass's own message.
  PassContext ctx;
  ctx->verify_each = false;
  PassContext::Scope scope(ctx);
  try {
    VerifyWellFormedPass()(mod);
    FAIL() << "expected a ValueError";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    std::string msg = e.message();
    EXPECT_NE(msg.find("(and 1 more)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[free_var] in function 'f': variable 'i'"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace transform
}  // namespace tessel
