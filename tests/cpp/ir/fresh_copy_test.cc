// FreshCopy (include/tessel/ir/fresh_copy.h): every binder renamed, buffers over renamed data
// variables remapped at every use, free variables kept, the copy structurally equal to the
// original, and blocks refused.
#include <gtest/gtest.h>
#include <tessel/ir/fresh_copy.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/module.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <unordered_set>

#include "expect_error.h"

namespace tessel {
namespace ir {
namespace {

// for i in range(n): let t = i * 2: allocate a[8] (shared): a[t % 8] = x; y[i] = a[0]
Stmt Sample(const Var& n, const Var& x, const Buffer& y) {
  Var i("i"), t("t");
  Buffer a = MakeBuffer("a", DataType::Float(32), {Int32(8)}, "shared");
  Stmt body = SeqStmt::Flatten(
      Array<Stmt>{BufferStore(a, cast(DataType::Float(32), x), {floormod(t, Int32(8))}),
                  BufferStore(y, BufferLoad(a, {Int32(0)}), {i})});
  body = Allocate(a->data, a->dtype, a->shape, MakeConst(DataType::Bool(), 1), DeclBuffer(a, body));
  return For(i, Int32(0), n, ForKind::kSerial, LetStmt(t, mul(i, Int32(2)), body));
}

std::unordered_set<const Object*> Bound(const Stmt& s) {
  std::unordered_set<const Object*> out;
  PostOrderVisit(s, [&](const ObjectRef& o) {
    if (const auto* f = o.as<ForNode>()) out.insert(f->loop_var.get());
    if (const auto* l = o.as<LetStmtNode>()) out.insert(l->var.get());
    if (const auto* a = o.as<AllocateNode>()) out.insert(a->buffer_var.get());
    if (const auto* d = o.as<DeclBufferNode>()) out.insert(d->buffer.get());
  });
  return out;
}

TEST(FreshCopy, RenamesEveryBinderAndKeepsTheStructure) {
  Var n("n"), x("x");
  Buffer y = MakeBuffer("y", DataType::Float(32), {n});
  Stmt s = Sample(n, x, y);
  Stmt c = FreshCopy(s);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(s, c));
  std::unordered_set<const Object*> before = Bound(s), after = Bound(c);
  EXPECT_EQ(before.size(), 4u);
  EXPECT_EQ(after.size(), 4u);
  for (const Object* o : after) EXPECT_FALSE(before.count(o));
  // Every access of the shared buffer uses the copy's buffer, over the copy's data variable;
  // the free variables (n, x) and the parameter buffer y stay.
  bool saw_y = false;
  PostOrderVisit(c, [&](const ObjectRef& o) {
    Buffer b;
    if (const auto* l = o.as<BufferLoadNode>()) b = l->buffer;
    if (const auto* st = o.as<BufferStoreNode>()) b = st->buffer;
    if (b.defined() && b->name == "a") {
      EXPECT_TRUE(after.count(b.get()));
      EXPECT_TRUE(after.count(b->data.get()));
    }
    if (b.defined() && b->name == "y") saw_y = b.same_as(y);
    if (const auto* v = o.as<VarNode>(); v && v->name_hint == "n") EXPECT_EQ(v, n.get());
    if (const auto* v = o.as<VarNode>(); v && v->name_hint == "x") EXPECT_EQ(v, x.get());
  });
  EXPECT_TRUE(saw_y);
  // Both can live in one function: VerifyWellFormed's "rebound_var" would see a shared binder.
  Stmt both = SeqStmt::Flatten(Array<Stmt>{s, c});
  EXPECT_EQ(Bound(both).size(), 8u);
}

TEST(FreshCopy, RefusesBlocks) {
  Block block({}, {}, {}, "b", Evaluate(0));
  Stmt s = BlockRealize({}, MakeConst(DataType::Bool(), 1), block);
  testing::ExpectError([&] { FreshCopy(s); }, "ValueError", {"FreshCopy", "block"});
}

}  // namespace
}  // namespace ir
}  // namespace tessel
