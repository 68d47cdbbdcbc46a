// Functors: dispatch by node kind, the default traversals, the mutator's "same object when nothing
// changed" contract, and PostOrderVisit's order.
#include <gtest/gtest.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace tessel {
namespace ir {
namespace {

const DataType i32 = DataType::Int(32);
const DataType f32 = DataType::Float(32);

// One statement that contains every expression and statement kind, and the variable `x` in
// exactly one place (the value of the inner LetStmt).
struct EveryKind {
  Var x{"x"};
  Stmt untouched;  // a subtree that does not mention x
  Stmt stmt;

  EveryKind() {
    Buffer A = MakeBuffer("A", f32, {64});
    Buffer B = MakeBuffer("B", f32, {64});
    Var i("i"), n = SizeVar("n"), t("t", f32), l("l");
    Var c("c", DataType::Bool());
    PrimExpr vec = BufferLoad(A, {Ramp(i, 1, 4)});
    PrimExpr shuffled = Shuffle({vec, Broadcast(FloatImm(f32, 1), 4)}, {0, 5, 2, 7});
    PrimExpr scalar_mix = Select(And(Not(c), Or(c, LT(i, n))), Cast(f32, Min(Div(i, 2), Mod(i, 3))),
                                 Call(f32, Op::Get("exp"), {FloatImm(f32, 0)}));
    PrimExpr ints = Max(FloorDiv(Sub(i, 1), 2), FloorMod(Mul(i, 2), 5));
    PrimExpr cmp = And(And(EQ(i, 1), NE(i, 2)), And(LE(i, 3), And(GT(i, 4), GE(i, 5))));
    PrimExpr let = Let(t, FloatImm(f32, 2), Add(t, BufferLoad(B, {i})));
    Stmt vec_store = BufferStore(B, shuffled, {Ramp(i, 1, 4)});
    Stmt scalar_store = BufferStore(B, Add(scalar_mix, let), {ints});
    Stmt guarded = IfThenElse(cmp, scalar_store,
                              Evaluate(Call(i32, builtin::call_extern(), {StringImm("f"), i})));
    Stmt loop = For(i, 0, 16, ForKind::kSerial, SeqStmt({vec_store, guarded}));
    Stmt wh = While(c, Evaluate(0));
    Buffer S = MakeBuffer("S", f32, {8}, "shared");
    Stmt alloc = Allocate(S->data, f32, {8}, PrimExpr(), DeclBuffer(S, Evaluate(1)));
    Var vi("vi");
    Buffer sub = MakeBuffer("sub", f32, {4});
    Block blk({IterVar(vi, Range(0, 16), IterVarType::kCommReduce)},
              {BufferRegion(A, {Range(vi, 4)})}, {BufferRegion(B, {Range(0, 1)})}, "blk",
              BufferStore(B, BufferLoad(sub, {0}), {0}), BufferStore(B, FloatImm(f32, 0), {0}),
              {MakeBuffer("tmp", f32, {2})},
              {MatchBufferRegion(sub, BufferRegion(A, {Range(vi, 4)}))});
    Stmt realize = For(l, 0, 16, ForKind::kParallel, BlockRealize({l}, Bool(true), blk));
    untouched = SeqStmt({loop, wh, alloc, realize});
    Stmt inner = LetStmt(Var("y"), Add(x, 1), untouched);
    stmt =
        AttrStmt(String("default"), "pragma", 1, AssertStmt(Bool(true), StringImm("msg"), inner));
  }
};

TEST(Functor, KindOf) {
  EXPECT_EQ(KindOf(Var("x").get()), ExprKind::kVar);
  EXPECT_EQ(KindOf(SizeVar("n").get()), ExprKind::kSizeVar);
  EXPECT_EQ(KindOf(Int32(1).get()), ExprKind::kIntImm);
  EXPECT_EQ(KindOf(Evaluate(0).get()), StmtKind::kEvaluate);
}

TEST(Functor, IdentityMutatorReturnsTheSameObject) {
  EveryKind ir;
  StmtExprMutator m;
  EXPECT_TRUE(m.VisitStmt(ir.stmt).same_as(ir.stmt));
}

// Replaces one variable by another.
class Substitute : public StmtExprMutator {
 public:
  Substitute(Var from, PrimExpr to) : from_(std::move(from)), to_(std::move(to)) {}
  PrimExpr VisitExpr_(const VarNode* op) override {
    if (op == from_.get()) return to_;
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  Var from_;
  PrimExpr to_;
};

TEST(Functor, MutatorRebuildsOnlyTheChangedPath) {
  EveryKind ir;
  Var z("z");
  Stmt out = Substitute(ir.x, z).VisitStmt(ir.stmt);
  ASSERT_FALSE(out.same_as(ir.stmt));
  const auto* attr = out.as<AttrStmtNode>();
  ASSERT_NE(attr, nullptr);
  const auto* assert_stmt = attr->body.as<AssertStmtNode>();
  ASSERT_NE(assert_stmt, nullptr);
  const auto* let = assert_stmt->body.as<LetStmtNode>();
  ASSERT_NE(let, nullptr);
  const auto* add = let->value.as<AddNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->a.same_as(z));
  EXPECT_TRUE(let->body.same_as(ir.untouched)) << "the unchanged subtree is shared, not copied";
  // Substituting a variable that does not occur changes nothing.
  EXPECT_TRUE(Substitute(Var("x"), z).VisitStmt(ir.stmt).same_as(ir.stmt));
}

TEST(Functor, VisitorReachesEveryKind) {
  EveryKind ir;
  std::set<std::string> seen;
  PostOrderVisit(ir.stmt, [&](const ObjectRef& n) { seen.insert(n->GetTypeKey()); });
  std::vector<std::string> expected = {
#define TESSEL_X(Name) "tessel.ir." #Name,
      TESSEL_FOR_EACH_EXPR_NODE(TESSEL_X) TESSEL_FOR_EACH_STMT_NODE(TESSEL_X)
#undef TESSEL_X
  };
  for (const std::string& key : expected) EXPECT_TRUE(seen.count(key)) << key << " not visited";
}

TEST(Functor, PostOrderVisitOrder) {
  Var x("x"), y("y"), z("z");
  std::vector<std::string> order;
  auto record = [&](const ObjectRef& n) {
    if (const auto* v = n.as<VarNode>()) {
      order.push_back(v->name_hint);
    } else {
      order.push_back(n->GetTypeKey());
    }
  };
  PostOrderVisit(Mul(Add(x, y), z), record);
  EXPECT_EQ(order, (std::vector<std::string>{"x", "y", "tessel.ir.Add", "z", "tessel.ir.Mul"}));

  order.clear();
  Buffer A = MakeBuffer("A", f32, {4});
  Buffer B = MakeBuffer("B", f32, {4});
  Var i("i");
  Stmt loop = For(i, 0, 4, ForKind::kSerial,
                  BufferStore(A, Add(BufferLoad(B, {i}), FloatImm(f32, 1)), {i}));
  PostOrderVisit(loop, record);
  EXPECT_EQ(order,
            (std::vector<std::string>{"tessel.ir.IntImm", "tessel.ir.IntImm", "i",
                                      "tessel.ir.BufferLoad", "tessel.ir.FloatImm", "tessel.ir.Add",
                                      "i", "tessel.ir.BufferStore", "tessel.ir.For"}));
}

// A functor with a result and an extra argument: the depth of the deepest leaf.
class Depth : public ExprFunctor<int(const PrimExpr&, int)> {
 public:
  int VisitExpr_(const VarNode*, int d) override { return d; }
  int VisitExpr_(const IntImmNode*, int d) override { return d; }
  int VisitExpr_(const AddNode* op, int d) override {
    return std::max(VisitExpr(op->a, d + 1), VisitExpr(op->b, d + 1));
  }
};

TEST(Functor, ResultsArgumentsAndFallbacks) {
  Var x("x");
  Depth depth;
  EXPECT_EQ(depth(Add(Add(x, 1), x), 0), 2);
  // A SizeVar falls back to the Var handler unless a functor handles it itself.
  EXPECT_EQ(depth(Add(SizeVar("n"), 1), 5), 6);
  // An unhandled kind is an internal error naming the node type.
  try {
    depth(Mul(x, x), 0);
    ADD_FAILURE() << "expected an error";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "InternalError");
    EXPECT_NE(e.message().find("tessel.ir.Mul"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace ir
}  // namespace tessel
