// ops.h: type promotion, exact constant folding with wrap-around, and the identities that hold
// for every value.
#include <gtest/gtest.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>

#include "expect_error.h"

namespace tessel {
namespace ir {
namespace {

using testing::ExpectError;

const DataType i8 = DataType::Int(8);
const DataType u8 = DataType::UInt(8);
const DataType i32 = DataType::Int(32);
const DataType u32 = DataType::UInt(32);
const DataType i64 = DataType::Int(64);
const DataType f16 = DataType::Float(16);
const DataType f32 = DataType::Float(32);

// The folded constant `e` must be an IntImm of dtype `t` with value `v`.
void ExpectInt(const PrimExpr& e, DataType t, int64_t v) {
  const auto* imm = e.as<IntImmNode>();
  ASSERT_NE(imm, nullptr) << "not folded: " << e->GetTypeKey();
  EXPECT_EQ(imm->dtype, t);
  EXPECT_EQ(imm->value, v);
}

IntImm C(DataType t, int64_t v) { return IntImm(t, v); }

TEST(Ops, Int32PlusInt64PromotesToInt64) {
  Var x("x", i32), y("y", i64);
  PrimExpr e = x + y;
  const auto* add = e.as<AddNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(e.dtype(), i64);
  const auto* cast = add->a.as<CastNode>();
  ASSERT_NE(cast, nullptr) << "the narrower side is cast";
  EXPECT_TRUE(cast->value.same_as(x));
  EXPECT_TRUE(add->b.same_as(y));
  // Either operand order.
  EXPECT_EQ((y * x).dtype(), i64);
  EXPECT_NE((y * x).as<MulNode>()->b.as<CastNode>(), nullptr);
}

TEST(Ops, IntVersusUInt) {
  // Equal width: the uint type wins.
  EXPECT_EQ((Var("a", i32) + Var("b", u32)).dtype(), u32);
  EXPECT_EQ((Var("b", u32) - Var("a", i32)).dtype(), u32);
  // Different widths: the wider type wins, whatever its signedness.
  EXPECT_EQ((Var("a", i64) + Var("b", u32)).dtype(), i64);
  EXPECT_EQ((Var("a", i8) + Var("b", DataType::UInt(16))).dtype(), DataType::UInt(16));
  // Integer with float: the float type.
  EXPECT_EQ((Var("a", i64) * Var("f", f16)).dtype(), f16);
  // Two floats: the wider.
  EXPECT_EQ((Var("h", f16) + Var("f", f32)).dtype(), f32);
}

TEST(Ops, LiteralAdoptsTheOtherSide) {
  Var x("x", i64);
  PrimExpr e = x + 1;
  const auto* add = e.as<AddNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(e.dtype(), i64);
  ExpectInt(add->b, i64, 1);  // an int64 constant, not Cast(int64, 1)
  // A literal that does not fit the other side's type is not adopted: normal promotion applies.
  Var u("u", u8);
  PrimExpr big = u + 300;
  EXPECT_EQ(big.dtype(), i32);
  EXPECT_NE(big.as<AddNode>()->a.as<CastNode>(), nullptr);
  ExpectInt(big.as<AddNode>()->b, i32, 300);
  // Integer literals become float constants next to floats.
  Var f("f", f16);
  PrimExpr g = f * 2;
  EXPECT_EQ(g.dtype(), f16);
  const auto* two = g.as<MulNode>()->b.as<FloatImmNode>();
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->value, 2.0);
  EXPECT_EQ(two->dtype, f16);
  // A float literal next to an integer does not become an integer: the integer is promoted.
  PrimExpr h = Var("i", i32) + 0.5f;
  EXPECT_EQ(h.dtype(), f32);
  EXPECT_NE(h.as<AddNode>()->a.as<CastNode>(), nullptr);
}

TEST(Ops, ScalarIsBroadcastToVector) {
  Var v("v", DataType::Float(32, 4));
  PrimExpr e = v * Var("s", f32);
  EXPECT_EQ(e.dtype(), DataType::Float(32, 4));
  EXPECT_NE(e.as<MulNode>()->b.as<BroadcastNode>(), nullptr);
  ExpectError([&] { add(v, Var("w", DataType::Float(32, 8))); }, "TypeError",
              {"lanes", "float32x4", "float32x8"});
  ExpectError([] { add(Var("p", DataType::Handle()), Var("x")); }, "TypeError", {"handle"});
}

TEST(Ops, FoldingWrapsForTheDType) {
  ExpectInt(add(C(i8, 127), C(i8, 1)), i8, -128);
  ExpectInt(sub(C(i8, -128), C(i8, 1)), i8, 127);
  ExpectInt(mul(C(i8, 16), C(i8, 16)), i8, 0);
  ExpectInt(mul(C(i8, -128), C(i8, -1)), i8, -128);
  ExpectInt(neg(C(i8, -128)), i8, -128);
  ExpectInt(add(C(u8, 255), C(u8, 1)), u8, 0);
  ExpectInt(sub(C(u8, 0), C(u8, 1)), u8, 255);
  ExpectInt(mul(C(u8, 16), C(u8, 17)), u8, 16);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  ExpectInt(add(C(i64, kMax), C(i64, 1)), i64, kMin);
  ExpectInt(sub(C(i64, kMin), C(i64, 1)), i64, kMax);
  ExpectInt(mul(C(i64, kMax), C(i64, 2)), i64, -2);
  ExpectInt(truncdiv(C(i64, kMin), C(i64, -1)), i64, kMin);
  ExpectInt(add(PrimExpr(2147483647), 1), i32, std::numeric_limits<int32_t>::min());
  ExpectInt(shift_left(PrimExpr(1), 31), i32, std::numeric_limits<int32_t>::min());
  ExpectInt(bitwise_not(C(u8, 0)), u8, 255);
  ExpectInt(bitwise_xor(C(i32, 12), C(i32, 10)), i32, 6);
  ExpectInt(bitwise_and(C(i32, 12), C(i32, 10)), i32, 8);
  ExpectInt(bitwise_or(C(i32, 12), C(i32, 10)), i32, 14);
  ExpectInt(shift_right(C(i32, -8), C(i32, 1)), i32, -4);  // arithmetic on signed
}

TEST(Ops, CastFolding) {
  ExpectInt(cast(i8, 300), i8, 44);
  ExpectInt(cast(u8, -1), u8, 255);
  ExpectInt(cast(DataType::Bool(), 5), DataType::Bool(), 1);
  PrimExpr folded = cast(f32, 3);
  const auto* f = folded.as<FloatImmNode>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->value, 3.0);
  Var x("x");
  EXPECT_TRUE(cast(i32, x).same_as(x)) << "a cast to the same type is the value itself";
  EXPECT_NE(cast(i64, x).as<CastNode>(), nullptr);
  EXPECT_NE(cast(DataType::Int(64, 4), x).as<BroadcastNode>(), nullptr);
}

TEST(Ops, DivisionRounding) {
  ExpectInt(floordiv(-7, 2), i32, -4);
  ExpectInt(floormod(-7, 2), i32, 1);
  ExpectInt(truncdiv(-7, 2), i32, -3);
  ExpectInt(truncmod(-7, 2), i32, -1);
  ExpectInt(floordiv(7, -2), i32, -4);
  ExpectInt(floormod(7, -2), i32, -1);  // floormod takes the divisor's sign
  ExpectInt(truncdiv(7, -2), i32, -3);
  ExpectInt(truncmod(7, -2), i32, 1);
  ExpectInt(floordiv(-8, 2), i32, -4);
  ExpectInt(floormod(-8, 2), i32, 0);
  ExpectInt(div(-7, 2), i32, -3);  // div on integers is truncdiv
  PrimExpr quotient = div(FloatImm(f32, 7), FloatImm(f32, 2));
  const auto* q = quotient.as<FloatImmNode>();
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->value, 3.5);
}

TEST(Ops, ConstantDivisionByZeroIsAnError) {
  Var x("x");
  ExpectError([&] { truncdiv(x, 0); }, "ValueError", {"truncdiv", "zero"});
  ExpectError([&] { truncmod(x, 0); }, "ValueError", {"truncmod", "zero"});
  ExpectError([&] { floordiv(7, 0); }, "ValueError", {"floordiv", "zero"});
  ExpectError([&] { floormod(x, 0); }, "ValueError", {"floormod", "zero"});
  ExpectError([&] { div(x, 0); }, "ValueError", {"zero"});
  // A float division by zero is well defined (inf or NaN) and is left for run time.
  EXPECT_NE(div(FloatImm(f32, 1), FloatImm(f32, 0)).as<DivNode>(), nullptr);
}

TEST(Ops, Identities) {
  Var x("x");
  EXPECT_TRUE((x + 0).same_as(x));
  EXPECT_TRUE((0 + x).same_as(x));
  EXPECT_TRUE((x - 0).same_as(x));
  EXPECT_TRUE((x * 1).same_as(x));
  EXPECT_TRUE((1 * x).same_as(x));
  EXPECT_TRUE(truncdiv(x, 1).same_as(x));
  EXPECT_TRUE(floordiv(x, 1).same_as(x));
  ExpectInt(floormod(x, 1), i32, 0);
  ExpectInt(truncmod(x, 1), i32, 0);
  EXPECT_NE((0 - x).as<SubNode>(), nullptr) << "0 - x is not x";
  EXPECT_TRUE(min(x, x).same_as(x));
  EXPECT_TRUE(max(x, x).same_as(x));
  ExpectInt(min(3, 5), i32, 3);
  ExpectInt(max(3, 5), i32, 5);
}

TEST(Ops, TimesZeroFoldsOnlyForIntegers) {
  ExpectInt(Var("x") * 0, i32, 0);
  ExpectInt(0 * Var("y", i64), i64, 0);
  // NaN * 0 and inf * 0 are NaN: a float product with zero stays.
  Var f("f", f32);
  PrimExpr e = f * 0.0f;
  EXPECT_NE(e.as<MulNode>(), nullptr);
  EXPECT_NE((FloatImm(f32, 0) * f).as<MulNode>(), nullptr);
}

TEST(Ops, ComparisonsAndLogic) {
  ExpectInt(lt(1, 2), DataType::Bool(), 1);
  ExpectInt(ge(1, 2), DataType::Bool(), 0);
  ExpectInt(eq(FloatImm(f32, 1.5), FloatImm(f32, 1.5)), DataType::Bool(), 1);
  ExpectInt(ne(C(i64, 3), C(i64, 3)), DataType::Bool(), 0);
  Var p("p", DataType::Bool());
  EXPECT_TRUE(logical_and(Bool(true), p).same_as(p));
  ExpectInt(logical_and(Bool(false), p), DataType::Bool(), 0);
  EXPECT_TRUE(logical_or(Bool(false), p).same_as(p));
  ExpectInt(logical_or(p, Bool(true)), DataType::Bool(), 1);
  ExpectInt(logical_not(Bool(true)), DataType::Bool(), 0);
  EXPECT_NE(logical_not(p).as<NotNode>(), nullptr);
  EXPECT_EQ((Var("x") < Var("y", i64)).as<LTNode>()->a.dtype(), i64);
}

TEST(Ops, SelectAndIfThenElse) {
  Var a("a", f32), b("b", f32), c("c", DataType::Bool());
  EXPECT_TRUE(select(Bool(true), a, b).same_as(a));
  EXPECT_TRUE(if_then_else(Bool(false), a, b).same_as(b));
  EXPECT_NE(select(c, a, b).as<SelectNode>(), nullptr);
  PrimExpr ite = if_then_else(c, a, 0);
  const auto* call = ite.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->op.same_as(builtin::if_then_else()));
  EXPECT_EQ(ite.dtype(), f32);
  EXPECT_NE(call->args[2].as<FloatImmNode>(), nullptr) << "the literal branch adopts float32";
}

TEST(Ops, BitwiseAndShifts) {
  Var x("x", u32);
  PrimExpr e = x << 3;
  const auto* call = e.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->op.same_as(builtin::shift_left()));
  EXPECT_EQ(e.dtype(), u32);
  ExpectInt(call->args[1], u32, 3);
  // Out-of-range shift amounts are not folded (their result is undefined).
  EXPECT_NE(shift_left(PrimExpr(1), 40).as<CallNode>(), nullptr);
  EXPECT_NE(shift_right(PrimExpr(1), -1).as<CallNode>(), nullptr);
  EXPECT_TRUE((~x).as<CallNode>()->op.same_as(builtin::bitwise_not()));
  ExpectError([] { bitwise_and(Var("f", DataType::Float(32)), 1); }, "TypeError",
              {"bitwise_and", "float32"});
  ExpectError([] { bitwise_not(Var("f", DataType::Float(16))); }, "TypeError",
              {"bitwise_not", "float16"});
}

TEST(Ops, WrapAndFit) {
  EXPECT_EQ(WrapToDType(i8, 255), -1);
  EXPECT_EQ(WrapToDType(u8, 256), 0);
  EXPECT_EQ(WrapToDType(u8, -1), 255);
  EXPECT_EQ(WrapToDType(DataType::Bool(), 7), 1);
  EXPECT_EQ(WrapToDType(DataType::UInt(64), -1), -1) << "uint64 keeps its bit pattern";
  EXPECT_TRUE(FitsInDType(i8, -128));
  EXPECT_FALSE(FitsInDType(i8, 128));
  EXPECT_TRUE(FitsInDType(DataType::UInt(64), static_cast<__int128>(1) << 63));
  EXPECT_FALSE(FitsInDType(DataType::UInt(64), -1));
  EXPECT_FALSE(FitsInDType(DataType::Bool(), 2));
}

}  // namespace
}  // namespace ir
}  // namespace tessel
