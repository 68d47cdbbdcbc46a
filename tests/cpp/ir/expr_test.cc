// Expression constructors: the dtype each node gets and the errors for operands it rejects.
#include <gtest/gtest.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/expr.h>
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

TEST(ExprCtor, IntImm) {
  IntImm a(DataType::Int(8), -128);
  EXPECT_EQ(a->value, -128);
  EXPECT_EQ(a.dtype(), DataType::Int(8));
  EXPECT_EQ(IntImm(DataType::UInt(64), 0)->value, 0);
  EXPECT_EQ(IntImm(DataType::Bool(), 1)->value, 1);
  ExpectError([] { IntImm(DataType::Int(8), 128); }, "ValueError", {"128", "int8"});
  ExpectError([] { IntImm(DataType::UInt(8), -1); }, "ValueError", {"-1", "uint8"});
  ExpectError([] { IntImm(DataType::Bool(), 2); }, "ValueError", {"2", "bool"});
  ExpectError([] { IntImm(DataType::UInt(64), -5); }, "ValueError", {"-5", "uint64"});
  ExpectError([] { IntImm(f32, 1); }, "ValueError", {"float32"});
  ExpectError([] { IntImm(DataType::Int(32, 4), 1); }, "ValueError", {"int32x4"});
}

TEST(ExprCtor, FloatImmAndStringImm) {
  FloatImm f(DataType::Float(16), 0.5);
  EXPECT_EQ(f->value, 0.5);
  EXPECT_EQ(f.dtype(), DataType::Float(16));
  ExpectError([] { FloatImm(i32, 1.0); }, "ValueError", {"int32"});
  ExpectError([] { FloatImm(DataType::Float(32, 2), 1.0); }, "ValueError", {"float32x2"});
  StringImm s("hello");
  EXPECT_EQ(s->value, "hello");
  EXPECT_TRUE(s.dtype().is_handle());
}

TEST(ExprCtor, ImplicitConstants) {
  PrimExpr i = 5;
  EXPECT_EQ(i.dtype(), i32);
  PrimExpr f = 1.5f;
  EXPECT_EQ(f.dtype(), f32);
  EXPECT_EQ(MakeConst(DataType::Int(32, 4), 3).as<BroadcastNode>()->lanes, 4);
  EXPECT_EQ(MakeConst(f32, int64_t{2}).as<FloatImmNode>()->value, 2.0);
  ExpectError([] { MakeConst(i32, 1.5); }, "ValueError", {"1.5", "int32"});
  EXPECT_EQ(AsConstInt(Broadcast(IntImm(i64, 7), 4)), 7);
  EXPECT_FALSE(AsConstInt(Var("x")).has_value());
}

TEST(ExprCtor, VarsAndRange) {
  Var x("x");
  EXPECT_EQ(x.dtype(), i32);
  EXPECT_EQ(x->name_hint, "x");
  Var p = Var::Pointer("p", DataType::Float(16), "shared");
  EXPECT_TRUE(p.dtype().is_handle());
  EXPECT_EQ(p->pointee, DataType::Float(16));
  EXPECT_EQ(p->storage_scope, "shared");
  SizeVar n("n", i64);
  EXPECT_EQ(n.dtype(), i64);
  EXPECT_NE(n.as<SizeVarNode>(), nullptr);
  ExpectError([] { Var("v", DataType::Void()); }, "ValueError", {"v", "void"});
  ExpectError([] { SizeVar("s", f32); }, "ValueError", {"s", "float32"});
  Range r(0, 16);
  EXPECT_EQ(r->extent.as<IntImmNode>()->value, 16);
  ExpectError([] { Range(IntImm(i64, 0), 16); }, "TypeError", {"int64", "int32"});
  ExpectError([] { Range(0, FloatImm(f32, 1)); }, "TypeError", {"float32"});
  Range fe = Range::FromMinEnd(2, 10);
  EXPECT_EQ(fe->extent.as<IntImmNode>()->value, 8);
}

TEST(ExprCtor, Cast) {
  Cast c(i64, Var("x"));
  EXPECT_EQ(c.dtype(), i64);
  ExpectError([] { Cast(DataType::Float(32, 4), Var("x")); }, "TypeError", {"lanes", "float32x4"});
}

TEST(ExprCtor, BinaryArithmetic) {
  Var x("x"), y("y");
  EXPECT_EQ(Add(x, y).dtype(), i32);
  EXPECT_EQ(FloorMod(Var("a", i64), Var("b", i64)).dtype(), i64);
  EXPECT_EQ(Div(Var("a", f32), Var("b", f32)).dtype(), f32);
  ExpectError([&] { Add(x, Var("z", i64)); }, "TypeError", {"Add", "int32", "int64"});
  ExpectError([&] { Sub(x, Var("f", f32)); }, "TypeError", {"Sub", "int32", "float32"});
  ExpectError([] { Mul(Var("p", DataType::Bool()), Var("q", DataType::Bool())); }, "TypeError",
              {"Mul", "bool"});
  ExpectError([] { Min(Var("h", DataType::Handle()), Var("g", DataType::Handle())); }, "TypeError",
              {"Min", "handle"});
  ExpectError([&] { FloorDiv(x, PrimExpr()); }, "ValueError", {"FloorDiv", "undefined"});
}

TEST(ExprCtor, ComparisonsAndLogic) {
  Var v("v", DataType::Float(32, 4));
  EXPECT_EQ(LT(v, v).dtype(), DataType::Bool(4));
  EXPECT_EQ(EQ(Var("x"), Var("y")).dtype(), DataType::Bool());
  ExpectError([] { GE(Var("x"), Var("y", i64)); }, "TypeError", {"GE", "int32", "int64"});
  Var p("p", DataType::Bool()), q("q", DataType::Bool());
  EXPECT_EQ(And(p, q).dtype(), DataType::Bool());
  EXPECT_EQ(Not(p).dtype(), DataType::Bool());
  ExpectError([] { Or(Var("x"), Var("y")); }, "TypeError", {"Or", "bool", "int32"});
  ExpectError([] { Not(Var("x")); }, "TypeError", {"Not", "int32"});
}

TEST(ExprCtor, Select) {
  Var c("c", DataType::Bool());
  EXPECT_EQ(Select(c, Var("a", f32), Var("b", f32)).dtype(), f32);
  Var c4("c4", DataType::Bool(4));
  Var v4("v4", DataType::Float(32, 4));
  EXPECT_EQ(Select(c4, v4, v4).dtype(), DataType::Float(32, 4));
  EXPECT_EQ(Select(c, v4, v4).dtype(), DataType::Float(32, 4)) << "a scalar condition is allowed";
  ExpectError([] { Select(Var("x"), 1, 2); }, "TypeError", {"condition", "int32"});
  ExpectError([&] { Select(c, 1, FloatImm(f32, 2)); }, "TypeError", {"int32", "float32"});
  ExpectError([&] { Select(Var("c2", DataType::Bool(2)), v4, v4); }, "TypeError", {"2", "4"});
}

TEST(ExprCtor, RampAndBroadcast) {
  Ramp r(Var("i"), 1, 4);
  EXPECT_EQ(r.dtype(), DataType::Int(32, 4));
  EXPECT_EQ(r->lanes, 4);
  ExpectError([] { Ramp(Var("i"), IntImm(DataType::Int(64), 1), 4); }, "TypeError",
              {"int32", "int64"});
  ExpectError([] { Ramp(Var("i"), 1, 1); }, "ValueError", {"lanes", "1"});
  ExpectError([] { Ramp(FloatImm(DataType::Float(32), 0), FloatImm(DataType::Float(32), 1), 4); },
              "TypeError", {"base", "float32"});
  ExpectError([] { Ramp(Ramp(Var("i"), 1, 2), Ramp(Var("j"), 1, 2), 2); }, "TypeError",
              {"scalars"});
  Broadcast b(FloatImm(f32, 1), 8);
  EXPECT_EQ(b.dtype(), DataType::Float(32, 8));
  ExpectError([] { Broadcast(Var("x"), 0); }, "ValueError", {"lanes", "0"});
  ExpectError([] { Broadcast(Var("v", DataType::Int(32, 2)), 4); }, "TypeError", {"int32x2"});
  ExpectError([] { Broadcast(Var("x"), 70000); }, "ValueError", {"70000"});
}

TEST(ExprCtor, Shuffle) {
  Var a("a", DataType::Float(32, 4)), b("b", DataType::Float(32, 4));
  Shuffle s({a, b}, {0, 4, 1, 5});
  EXPECT_EQ(s.dtype(), DataType::Float(32, 4));
  Shuffle one({a, b}, {7});
  EXPECT_EQ(one.dtype(), f32);
  ExpectError([&] { Shuffle({a, b}, {8}); }, "ValueError", {"[0, 8)"});
  ExpectError([&] { Shuffle({a}, {Var("k")}); }, "ValueError", {"constant"});
  ExpectError(
      [&] {
        Shuffle({a, Var("c", DataType::Int(32, 4))}, {0});
      },
      "TypeError", {"float32", "int32"});
  ExpectError([] { Shuffle({}, {0}); }, "ValueError", {"no vectors"});
  ExpectError([&] { Shuffle({a}, {}); }, "ValueError", {"no indices"});
}

TEST(ExprCtor, Let) {
  Var x("x", f32);
  Let l(x, FloatImm(f32, 2), Cast(i32, x));
  EXPECT_EQ(l.dtype(), i32) << "a Let has its body's dtype";
  ExpectError([&] { Let(x, 1, x); }, "TypeError", {"x", "float32", "int32"});
  ExpectError([&] { Let(Var(), 1, x); }, "ValueError", {"var"});
}

TEST(ExprCtor, BufferLoad) {
  Buffer A = MakeBuffer("A", f32, {16, 32});
  Var i("i"), j("j");
  BufferLoad scalar(A, {i, j});
  EXPECT_EQ(scalar.dtype(), f32);
  BufferLoad vec(A, {i, Ramp(j, 1, 8)});
  EXPECT_EQ(vec.dtype(), DataType::Float(32, 8));
  ExpectError([&] { BufferLoad(A, {i}); }, "ValueError", {"A", "2 dimensions", "1 indices"});
  ExpectError([&] { BufferLoad(A, {Ramp(i, 1, 4), j}); }, "TypeError", {"A", "last index"});
  ExpectError([&] { BufferLoad(A, {i, FloatImm(f32, 0)}); }, "TypeError", {"index", "float32"});
  ExpectError([&] { BufferLoad(Buffer(), {i}); }, "ValueError", {"buffer"});
}

TEST(ExprCtor, Call) {
  Var x("x", f32);
  Call e(f32, Op::Get("exp"), {x});
  EXPECT_TRUE(e->op.same_as(Op::Get("exp")));
  EXPECT_EQ(e.dtype(), f32);
  Call ext(f32, builtin::call_extern(), {StringImm("expf"), x});
  EXPECT_EQ(ext->args.size(), 2u) << "call_extern is variadic";
  Call g(i32, GlobalVar("helper"), {1, 2}, {{"inline", true}});
  EXPECT_EQ(g->annotations.size(), 1u);
  ExpectError([&] { Call(f32, Op::Get("exp"), {x, x}); }, "ValueError", {"exp", "1", "2"});
  ExpectError([&] { Call(f32, builtin::if_then_else(), {x}); }, "ValueError",
              {"if_then_else", "3"});
  ExpectError([&] { Call(f32, StringImm("exp"), {x}); }, "TypeError",
              {"Op or a GlobalVar", "tessel.ir.StringImm"});
  ExpectError([&] { Call(f32, Op::Get("exp"), {PrimExpr()}); }, "ValueError", {"argument"});
}

TEST(ExprCtor, BufferChecks) {
  Var data = Var::Pointer("A", f32);
  Buffer b("A", data, f32, {4, 4}, {4, 1}, PrimExpr(), "", 16, 1);
  EXPECT_EQ(b->scope, "global") << "an empty scope means global";
  EXPECT_EQ(b->elem_offset.as<IntImmNode>()->value, 0);
  ExpectError([&] { Buffer("A", Var("d"), f32, {4}, {}, 0, "global", 64, 1); }, "TypeError",
              {"A", "handle"});
  ExpectError([&] { Buffer("A", data, f32, {FloatImm(f32, 4)}, {}, 0, "global", 64, 1); },
              "TypeError", {"A", "shape"});
  ExpectError(
      [&] {
        Buffer("A", data, f32, {4, 4}, {1}, 0, "global", 64, 1);
      },
      "ValueError", {"A", "1 strides", "2 dimensions"});
  ExpectError([&] { Buffer("A", data, f32, {4}, {}, 0, "global", 48, 1); }, "ValueError",
              {"A", "48", "power of two"});
  Buffer m = MakeBuffer("S", DataType::Float(16), {8}, "shared");
  EXPECT_EQ(m->scope, "shared");
  EXPECT_EQ(m->data->storage_scope, "shared");
  EXPECT_EQ(m->data->pointee, DataType::Float(16));
  EXPECT_EQ(m->data_alignment, kDefaultBufferAlignment);
}

}  // namespace
}  // namespace ir
}  // namespace tessel
