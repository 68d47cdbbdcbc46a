// Source spans: what the parser records for each statement kind (in the user's coordinates),
// that structural equality ignores them, that rebuilt statements keep them, and how errors after
// parsing name them (the verifier, a pass that throws while visiting, a stale location).
#include <gtest/gtest.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/parser.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/verify_well_formed.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>

#include <set>
#include <string>
#include <tuple>

#include "expect_error.h"

namespace tessel {
namespace ir {
namespace {

using tvm::ffi::StructuralEqual;
using tvm::ffi::StructuralHash;

// One statement of each kind the parser builds; the comment is each line's number.
const char* kKernel = R"(@T.prim_func
def f(A: T.Buffer((8,), "float32"), n: T.int32):
    for i in range(8):
        A[i] = T.float32(1)
    x = n + 1
    if x > 2:
        T.evaluate(x)
    elif x > 1:
        A[0] = T.float32(2)
    assert n > 0, "n must be positive"
    while n < 0:
        T.evaluate(0)
    buf = T.allocate([4], "float32", "global")
    B = T.decl_buffer((4,), "float32", data=buf)
    with T.attr("x", "pragma_y", 1):
        B[0] = T.float32(0)
    with T.block("b"):
        T.evaluate(n)
    y: T.int32 = n * 2
    T.evaluate(y)
)";

PrimFunc Parse(const std::string& text, const std::string& name, int line_offset = 0,
               int col_offset = 0) {
  ParseOptions options;
  options.source_name = name;
  options.line_offset = line_offset;
  options.col_offset = col_offset;
  return ParseSource(text, options).as<PrimFunc>().value();
}

using Site = std::tuple<std::string, int64_t, int64_t>;  // type key, line, column

std::set<Site> Sites(const Stmt& body, const std::string& source_name) {
  std::set<Site> out;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    const auto* s = n.as<StmtNode>();
    if (s == nullptr || !s->span.has_value()) return;
    EXPECT_EQ(std::string((*s->span)->source_name), source_name);
    out.insert({s->GetTypeKey(), (*s->span)->line, (*s->span)->column});
  });
  return out;
}

TEST(Span, ToStringAndChecks) {
  Span s("kernel.py", 12, 5);
  EXPECT_EQ(s->ToString(), "kernel.py:12:5");
  testing::ExpectError([] { Span("k.py", 0, 1); }, "ValueError", {"1-based"});
}

TEST(Span, ParserSetsTheFirstTokenOfEveryStatement) {
  std::set<Site> got = Sites(Parse(kKernel, "k.py")->body, "k.py");
  const std::set<Site> want = {
      {"tessel.ir.For", 3, 5},           {"tessel.ir.BufferStore", 4, 9},
      {"tessel.ir.LetStmt", 5, 5},       {"tessel.ir.IfThenElse", 6, 5},
      {"tessel.ir.Evaluate", 7, 9},      {"tessel.ir.IfThenElse", 8, 5},
      {"tessel.ir.BufferStore", 9, 9},   {"tessel.ir.AssertStmt", 10, 5},
      {"tessel.ir.While", 11, 5},        {"tessel.ir.Evaluate", 12, 9},
      {"tessel.ir.Allocate", 13, 5},     {"tessel.ir.DeclBuffer", 14, 5},
      {"tessel.ir.AttrStmt", 15, 5},     {"tessel.ir.BufferStore", 16, 9},
      {"tessel.ir.BlockRealize", 17, 5}, {"tessel.ir.Block", 17, 5},
      {"tessel.ir.Evaluate", 18, 9},     {"tessel.ir.LetStmt", 19, 5},
      {"tessel.ir.Evaluate", 20, 5},
  };
  EXPECT_EQ(got, want);
}

TEST(Span, ParseOptionsOffsetsGiveTheUsersCoordinates) {
  // As the Python front end passes a dedented function found at line 41, indented by 4.
  std::set<Site> got = Sites(Parse(kKernel, "/home/u/model.py", 40, 4)->body, "/home/u/model.py");
  EXPECT_TRUE(got.count({"tessel.ir.For", 43, 9}));
  EXPECT_TRUE(got.count({"tessel.ir.BufferStore", 44, 13}));
  EXPECT_TRUE(got.count({"tessel.ir.Block", 57, 9}));
}

TEST(Span, ForGridAndRootBlock) {
  PrimFunc f = Parse(R"(@T.prim_func
def g(A: T.Buffer((4, 4), "float32")):
    C = T.alloc_buffer((4,), "float32")
    for i, j in T.grid(4, 4):
        A[i, j] = T.float32(0)
)",
                     "g.py");
  std::set<Site> got = Sites(f->body, "g.py");
  // Every loop of a T.grid starts at its `for`; the implied root block is where `def` names g.
  EXPECT_TRUE(got.count({"tessel.ir.For", 4, 5}));
  EXPECT_TRUE(got.count({"tessel.ir.BufferStore", 5, 9}));
  EXPECT_TRUE(got.count({"tessel.ir.BlockRealize", 2, 5}));
  const auto* root = f->body.as<BlockRealizeNode>();
  ASSERT_NE(root, nullptr);
  const auto* outer = root->block->body.as<ForNode>();
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(outer->body.as<ForNode>(), nullptr);
  EXPECT_EQ((*outer->body.as<ForNode>()->span)->ToString(), "g.py:4:5");
}

TEST(Span, StructuralEqualityIgnoresSpans) {
  PrimFunc a = Parse(kKernel, "a.py");
  PrimFunc b = Parse(std::string("\n\n") + kKernel, "b.py", 7, 3);
  EXPECT_TRUE(StructuralEqual::Equal(a, b));
  EXPECT_EQ(StructuralHash::Hash(a), StructuralHash::Hash(b));
  // One statement with and without a span.
  Stmt store = BufferStore(a->buffer_map.at(a->params[0]), FloatImm(DataType::Float(32), 1),
                           {IntImm(DataType::Int(32), 0)});
  Stmt spanned = WithSpan(store, Span("x.py", 3, 1));
  EXPECT_FALSE(store->span.has_value());
  EXPECT_TRUE(StructuralEqual::Equal(store, spanned));
  EXPECT_EQ(StructuralHash::Hash(store), StructuralHash::Hash(spanned));
}

TEST(Span, WithSpanEditsAUniqueNodeAndCopiesASharedOne) {
  Stmt e = Evaluate(IntImm(DataType::Int(32), 0));
  const Object* before = e.get();
  Stmt shared = e;
  Stmt copy = WithSpan(shared, Span("x.py", 1, 1));
  EXPECT_NE(copy.get(), before);
  EXPECT_FALSE(e->span.has_value());
  Stmt fresh = WithSpan(Evaluate(IntImm(DataType::Int(32), 1)), Span("x.py", 2, 1));
  EXPECT_EQ((*fresh->span)->line, 2);
}

TEST(Span, MutatorKeepsTheSpanOfARebuiltStatement) {
  PrimFunc f = Parse(kKernel, "k.py");
  // Renames nothing but rebuilds every store: replaces each float constant.
  class Rewriter : public StmtExprMutator {
   public:
    using StmtExprMutator::VisitExpr_;
    PrimExpr VisitExpr_(const FloatImmNode* op) override {
      return FloatImm(op->dtype, op->value + 1);
    }
  };
  Stmt out = Rewriter().VisitStmt(f->body);
  EXPECT_FALSE(out.same_as(f->body));
  EXPECT_EQ(Sites(out, "k.py"), Sites(f->body, "k.py"));
}

// A pass that fails at the first store whose value is 2.
transform::Pass FailAtStore() {
  return transform::CreatePrimFuncPass(
      [](PrimFunc f) {
        class Finder : public StmtExprVisitor {
         public:
          using StmtExprVisitor::VisitStmt_;
          void VisitStmt_(const BufferStoreNode* op) override {
            const auto* v = op->value.as<FloatImmNode>();
            if (v && v->value == 2) TVM_FFI_THROW(TypeError) << "bad store";
            StmtExprVisitor::VisitStmt_(op);
          }
        };
        Finder().VisitStmt(f->body);
        return f;
      },
      0, "FailAtStore");
}

IRModule Module(const PrimFunc& f) { return IRModule(Map<String, PrimFunc>{{"f", f}}); }

TEST(Span, PassErrorNamesTheInnermostStatement) {
  IRModule mod = Module(Parse(kKernel, "/src/k.py", 100, 0));
  // The store at line 9 (+100), inside the elif at line 8.
  testing::ExpectError([&] { FailAtStore()(mod); }, "TypeError", {"/src/k.py:109:9: bad store"});
  try {
    FailAtStore()(mod);
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.message().rfind("/src/k.py:109:9: ", 0), 0u) << e.message();
  }
  // Inside a Sequential too, and only once.
  try {
    transform::Sequential({FailAtStore()})(mod);
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.message(), "/src/k.py:109:9: bad store");
  }
}

TEST(Span, ErrorWithoutASpanIsUnchangedAndAStaleLocationIsNotUsed) {
  IRModule mod = Module(Parse(kKernel, "k.py"));
  // Pass 1 throws in a visit and catches it itself: a location is left behind.
  transform::Pass swallow = transform::CreatePrimFuncPass(
      [](PrimFunc f) {
        try {
          FailAtStore()(Module(f));
        } catch (const tvm::ffi::Error&) {
        }
        class Thrower : public StmtExprVisitor {
         public:
          void VisitStmt_(const ForNode* op) override { TVM_FFI_THROW(ValueError) << "x"; }
        };
        try {
          Thrower().VisitStmt(f->body);
        } catch (const tvm::ffi::Error&) {
        }
        return f;
      },
      0, "Swallow");
  // Pass 2 throws outside any visit.
  transform::Pass plain = transform::CreatePrimFuncPass(
      [](PrimFunc f) -> PrimFunc {
        TVM_FFI_THROW(ValueError) << "no statement here";
        TVM_FFI_UNREACHABLE();
      },
      0, "Plain");
  try {
    transform::Sequential({swallow, plain})(mod);
    ADD_FAILURE() << "no error";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.message(), "no statement here");
  }
}

TEST(Span, VerifierErrorStartsWithTheSpan) {
  PrimFunc f = Parse(R"(@T.prim_func
def add(A: T.Buffer((16,), "float32")):
    k = T.int32()
    for i in range(16):
        A[i] = T.Cast("float32", i + k)
)",
                     "v.py", 20, 0);
  std::vector<transform::VerifyError> errors = transform::VerifyWellFormed(f, "add");
  ASSERT_EQ(errors.size(), 1u);
  ASSERT_TRUE(errors[0].span.has_value());
  EXPECT_EQ(errors[0].ToString().rfind("v.py:25:9: [free_var] in function 'add'", 0), 0u)
      << errors[0].ToString();
  testing::ExpectError([&] { transform::VerifyWellFormedPass()(Module(f)); }, "ValueError",
                       {"VerifyWellFormed: v.py:25:9: [free_var]"});
}

}  // namespace
}  // namespace ir
}  // namespace tessel
