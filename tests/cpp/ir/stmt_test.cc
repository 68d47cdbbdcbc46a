// Statement constructors, IterVar/BufferRegion/Block helpers, PrimFunc and IRModule: the fields
// they set and the errors for arguments they reject.
#include <gtest/gtest.h>
#include <tessel/ir/module.h>
#include <tvm/ffi/error.h>

#include <functional>
#include <initializer_list>
#include <string>

#include "expect_error.h"

namespace tessel {
namespace ir {
namespace {

using testing::ExpectError;

const DataType i32 = DataType::Int(32);
const DataType i64 = DataType::Int(64);
const DataType f32 = DataType::Float(32);

Stmt Nop() { return Evaluate(0); }

TEST(StmtCtor, LetStmt) {
  Var x("x");
  LetStmt s(x, 3, Nop());
  EXPECT_TRUE(s->var.same_as(x));
  ExpectError([&] { LetStmt(x, IntImm(i64, 3), Nop()); }, "TypeError", {"x", "int32", "int64"});
  ExpectError([&] { LetStmt(x, 3, Stmt()); }, "ValueError", {"LetStmt", "body"});
  ExpectError([&] { LetStmt(x, PrimExpr(), Nop()); }, "ValueError", {"LetStmt", "value"});
}

TEST(StmtCtor, AttrAndAssert) {
  Var tx("threadIdx_x");
  AttrStmt a(tx, "thread_extent", 128, Nop());
  EXPECT_EQ(a->attr_key, "thread_extent");
  EXPECT_TRUE(a->node.as<VarNode>() == tx.get());
  AttrStmt s(String("default"), "pragma_x", 1, Nop());
  EXPECT_EQ(s->node.cast<String>(), "default");
  AttrStmt none(Any(), "pragma_y", 0, Nop());
  EXPECT_EQ(none->node.type_index(), tvm::ffi::TypeIndex::kTVMFFINone);
  ExpectError([] { AttrStmt(Any(), "k", PrimExpr(), Nop()); }, "ValueError", {"AttrStmt", "value"});
  AssertStmt ok(Var("c", DataType::Bool()), StringImm("bad"), Nop());
  EXPECT_EQ(ok->message.as<StringImmNode>()->value, "bad");
  ExpectError([] { AssertStmt(Var("n"), StringImm("m"), Nop()); }, "TypeError",
              {"AssertStmt", "bool", "int32"});
}

TEST(StmtCtor, BufferStore) {
  Buffer A = MakeBuffer("A", f32, {8, 16});
  Var i("i"), j("j");
  BufferStore s(A, FloatImm(f32, 1), {i, j});
  EXPECT_EQ(s->indices.size(), 2u);
  BufferStore v(A, Broadcast(FloatImm(f32, 1), 4), {i, Ramp(j, 1, 4)});
  EXPECT_EQ(v->value.dtype(), DataType::Float(32, 4));
  ExpectError([&] { BufferStore(A, FloatImm(f32, 1), {i}); }, "ValueError",
              {"A", "2 dimensions", "1 indices"});
  ExpectError([&] { BufferStore(A, 1, {i, j}); }, "TypeError", {"A", "int32", "float32"});
  ExpectError(
      [&] {
        BufferStore(A, FloatImm(f32, 1), {i, Ramp(j, 1, 4)});
      },
      "TypeError", {"A", "float32", "float32x4"});
  ExpectError(
      [&] {
        BufferStore(A, Broadcast(FloatImm(f32, 1), 4), {Ramp(i, 1, 4), j});
      },
      "TypeError", {"A", "last index"});
  ExpectError(
      [&] {
        BufferStore(A, FloatImm(f32, 1), {i, FloatImm(f32, 0)});
      },
      "TypeError", {"A", "index 1", "float32"});
}

TEST(StmtCtor, AllocateAndDeclBuffer) {
  Var data = Var::Pointer("buf", f32, "shared");
  Allocate a(data, f32, {128}, PrimExpr(), Nop(), {{"k", 1}});
  EXPECT_EQ(a->condition.as<IntImmNode>()->value, 1) << "the default condition is true";
  EXPECT_EQ(a->condition.dtype(), DataType::Bool());
  EXPECT_EQ(a->annotations.size(), 1u);
  ExpectError([] { Allocate(Var("x"), f32, {4}, PrimExpr(), Evaluate(0)); }, "TypeError",
              {"Allocate", "handle"});
  ExpectError([&] { Allocate(data, f32, {4}, Var("c"), Nop()); }, "TypeError",
              {"Allocate", "bool"});
  ExpectError([&] { Allocate(data, f32, {PrimExpr()}, PrimExpr(), Nop()); }, "ValueError",
              {"extent"});
  Buffer b("buf", data, f32, {128}, {}, 0, "shared", 64, 1);
  DeclBuffer d(b, Nop());
  EXPECT_TRUE(d->buffer.same_as(b));
  ExpectError([] { DeclBuffer(Buffer(), Evaluate(0)); }, "ValueError", {"DeclBuffer", "buffer"});
}

TEST(StmtCtor, For) {
  Var i("i");
  For f(i, 0, 16, ForKind::kSerial, Nop());
  EXPECT_EQ(f->kind, ForKind::kSerial);
  For t(Var("tx"), 0, 128, ForKind::kThreadBinding, Nop(), "threadIdx.x");
  EXPECT_EQ(t->thread_tag, "threadIdx.x");
  Var k("k", i64);
  For l(k, IntImm(i64, 0), IntImm(i64, 4), ForKind::kVectorized, Nop());
  EXPECT_EQ(l->loop_var.dtype(), i64);
  ExpectError([&] { For(i, 0, IntImm(i64, 16), ForKind::kSerial, Nop()); }, "TypeError",
              {"For i", "int32", "int64"});
  ExpectError(
      [] { For(Var("f", f32), FloatImm(f32, 0), FloatImm(f32, 1), ForKind::kSerial, Nop()); },
      "TypeError", {"For f", "float32"});
  ExpectError([&] { For(i, 0, 16, ForKind::kThreadBinding, Nop()); }, "ValueError",
              {"For i", "thread"});
  ExpectError([&] { For(i, 0, 16, ForKind::kParallel, Nop(), "blockIdx.x"); }, "ValueError",
              {"For i", "thread"});
  ExpectError([&] { For(i, 0, 16, ForKind::kSerial, Stmt()); }, "ValueError", {"For", "body"});
  EXPECT_STREQ(ForKindName(ForKind::kSerial), "serial");
  EXPECT_STREQ(ForKindName(ForKind::kParallel), "parallel");
  EXPECT_STREQ(ForKindName(ForKind::kVectorized), "vectorized");
  EXPECT_STREQ(ForKindName(ForKind::kUnrolled), "unroll");
  EXPECT_STREQ(ForKindName(ForKind::kThreadBinding), "thread_binding");
}

TEST(StmtCtor, ControlFlow) {
  Var c("c", DataType::Bool());
  While w(c, Nop());
  EXPECT_TRUE(w->condition.same_as(c));
  ExpectError([] { While(Var("n"), Evaluate(0)); }, "TypeError", {"While", "bool"});
  IfThenElse only(c, Nop());
  EXPECT_FALSE(only->else_case.has_value());
  IfThenElse both(c, Nop(), Nop());
  EXPECT_TRUE(both->else_case.has_value());
  ExpectError([] { IfThenElse(FloatImm(DataType::Float(32), 1), Evaluate(0)); }, "TypeError",
              {"IfThenElse", "float32"});
  ExpectError([&] { IfThenElse(c, Stmt()); }, "ValueError", {"IfThenElse", "then_case"});
  ExpectError([] { (void)Evaluate(PrimExpr()); }, "ValueError", {"Evaluate"});
  ExpectError([] { SeqStmt({Evaluate(0), Stmt()}); }, "ValueError", {"SeqStmt"});
}

TEST(StmtCtor, SeqStmtFlatten) {
  Stmt a = Evaluate(1), b = Evaluate(2), c = Evaluate(3);
  EXPECT_TRUE(SeqStmt::Flatten({a}).same_as(a)) << "one statement is itself";
  Stmt flat = SeqStmt::Flatten({a, SeqStmt({b, c}), Stmt()});
  const auto* seq = flat.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 3u);
  EXPECT_TRUE(seq->seq[0].same_as(a));
  EXPECT_TRUE(seq->seq[1].same_as(b));
  EXPECT_TRUE(seq->seq[2].same_as(c));
}

TEST(StmtCtor, IterVarAndRegions) {
  IterVar iv(Var("vi"), Range(0, 16), IterVarType::kCommReduce);
  EXPECT_EQ(iv->iter_type, IterVarType::kCommReduce);
  ExpectError([] { IterVar(Var("vi", DataType::Int(64)), Range(0, 16), IterVarType::kDataPar); },
              "TypeError", {"vi", "int64", "int32"});
  EXPECT_STREQ(IterVarTypeName(IterVarType::kDataPar), "spatial");
  EXPECT_STREQ(IterVarTypeName(IterVarType::kCommReduce), "reduce");
  EXPECT_STREQ(IterVarTypeName(IterVarType::kOrdered), "scan");
  EXPECT_STREQ(IterVarTypeName(IterVarType::kOpaque), "opaque");

  Buffer A = MakeBuffer("A", f32, {8, Var("n")});
  BufferRegion full = BufferRegion::Full(A);
  ASSERT_EQ(full->region.size(), 2u);
  EXPECT_EQ(full->region[0]->extent.as<IntImmNode>()->value, 8);
  EXPECT_TRUE(full->region[1]->extent.same_as(A->shape[1]));
  ExpectError([&] { BufferRegion(A, {Range(0, 8)}); }, "ValueError",
              {"A", "2 dimensions", "region has 1"});
  Buffer sub = MakeBuffer("sub", f32, {4});
  MatchBufferRegion m(sub, BufferRegion(A, {Range(0, 1), Range(0, 4)}));
  EXPECT_TRUE(m->buffer.same_as(sub));
}

TEST(StmtCtor, BlockAndRealize) {
  Buffer C = MakeBuffer("C", f32, {16});
  Var vi("vi");
  IterVar iv(vi, Range(0, 16), IterVarType::kDataPar);
  Stmt body = BufferStore(C, FloatImm(f32, 0), {vi});
  Block blk({iv}, {}, {BufferRegion(C, {Range(vi, 1)})}, "C", body, std::nullopt, {}, {},
            {{"meta", 1}});
  EXPECT_EQ(blk->name_hint, "C");
  EXPECT_FALSE(blk->init.has_value());
  EXPECT_EQ(blk->annotations.size(), 1u);
  Var i("i");
  BlockRealize br({i}, PrimExpr(), blk);
  EXPECT_EQ(br->predicate.as<IntImmNode>()->value, 1) << "the default predicate is true";
  ExpectError([&] { BlockRealize({}, PrimExpr(), blk); }, "ValueError",
              {"block C", "1 iter vars", "0 values"});
  ExpectError([&] { BlockRealize({Var("k", i64)}, PrimExpr(), blk); }, "TypeError",
              {"block C", "vi", "int64", "int32"});
  ExpectError([&] { BlockRealize({i}, i, blk); }, "TypeError", {"BlockRealize", "bool"});
  ExpectError([&] { Block({}, {}, {}, "empty", Stmt()); }, "ValueError", {"Block", "body"});
}

TEST(StmtCtor, PrimFuncAndModule) {
  Var a("A", DataType::Handle());
  Var n("n");
  Buffer A = MakeBuffer("A", f32, {n});
  PrimFunc f({a, n}, Nop(), {{a, A}}, {{"global_symbol", String("f")}});
  EXPECT_EQ(f.GetGlobalSymbol(), String("f"));
  EXPECT_EQ(f->ret_type, DataType::Void());
  PrimFunc anon({n}, Nop());
  EXPECT_FALSE(anon.GetGlobalSymbol().has_value());
  ExpectError([&] { PrimFunc({n}, Nop(), {{a, A}}); }, "ValueError", {"A", "not a parameter"});
  ExpectError([&] { PrimFunc({n}, Nop(), {{n, A}}); }, "TypeError", {"n", "not a handle"});
  ExpectError([&] { PrimFunc({n}, Stmt()); }, "ValueError", {"PrimFunc", "body"});

  IRModule mod({{"zeta", f}, {"alpha", anon}});
  std::vector<String> names = mod.FunctionNames();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "alpha");
  EXPECT_EQ(names[1], "zeta");
  EXPECT_TRUE(mod.Lookup("zeta").same_as(f));
  ExpectError([&] { mod.Lookup("missing"); }, "KeyError", {"missing", "alpha", "zeta"});
}

}  // namespace
}  // namespace ir
}  // namespace tessel
