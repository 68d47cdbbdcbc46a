// Structural equality and hashing through tvm-ffi reflection: bound variables compare by binding
// position (alpha-equivalence), free variables by identity, names never.
#include <gtest/gtest.h>
#include <tessel/ir/module.h>
#include <tessel/ir/op.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>

namespace tessel {
namespace ir {
namespace {

using tvm::ffi::StructuralEqual;
using tvm::ffi::StructuralHash;

const DataType f32 = DataType::Float(32);

void ExpectAlphaEqual(const ObjectRef& a, const ObjectRef& b) {
  EXPECT_TRUE(StructuralEqual::Equal(a, b));
  EXPECT_TRUE(StructuralEqual::Equal(b, a));
  EXPECT_EQ(StructuralHash::Hash(a), StructuralHash::Hash(b));
}

void ExpectUnequal(const ObjectRef& a, const ObjectRef& b) {
  EXPECT_FALSE(StructuralEqual::Equal(a, b));
  EXPECT_FALSE(StructuralEqual::Equal(b, a));
  EXPECT_TRUE(StructuralEqual::GetFirstMismatch(a, b).has_value());
}

PrimExpr LetSquare(const std::string& name, PrimExpr value) {
  Var v(name);
  return Let(v, value, Add(Mul(v, v), 1));
}

TEST(Structural, LetIsAlphaEquivalent) {
  ExpectAlphaEqual(LetSquare("x", 3), LetSquare("y", 3));
  ExpectUnequal(LetSquare("x", 3), LetSquare("x", 4));
}

Stmt Loop(const std::string& i_name, const Buffer& A) {
  Var i(i_name);
  return For(i, 0, 16, ForKind::kSerial, BufferStore(A, Cast(f32, i), {i}));
}

TEST(Structural, ForAndLetStmtAreAlphaEquivalent) {
  Buffer A = MakeBuffer("A", f32, {16});
  ExpectAlphaEqual(Loop("i", A), Loop("j", A));
  auto let_stmt = [&](const std::string& name) {
    Var t(name);
    return LetStmt(t, 7, BufferStore(A, Cast(f32, t), {t}));
  };
  ExpectAlphaEqual(let_stmt("t"), let_stmt("u"));
}

TEST(Structural, FreeVariablesCompareByIdentity) {
  Var x("x"), y("x");  // same name, different variables
  ExpectUnequal(Add(x, 1), Add(y, 1));
  EXPECT_TRUE(StructuralEqual::Equal(Add(x, 1), Add(x, 1)));
  // Unless the caller asks to map free variables onto each other.
  EXPECT_TRUE(StructuralEqual::Equal(Add(x, 1), Add(y, 1), /*map_free_vars=*/true));
  EXPECT_EQ(StructuralHash::Hash(Add(x, 1), true), StructuralHash::Hash(Add(y, 1), true));
  // A buffer used (not bound) in a loop body is free as well.
  ExpectUnequal(Loop("i", MakeBuffer("A", f32, {16})), Loop("i", MakeBuffer("A", f32, {16})));
}

TEST(Structural, OneVariableTwiceDiffersFromTwoVariables) {
  Buffer A = MakeBuffer("A", f32, {16, 16});
  auto nest = [&](bool reuse_outer) {
    Var i("i"), j("j");
    Stmt store = BufferStore(A, FloatImm(f32, 0), {i, reuse_outer ? PrimExpr(i) : PrimExpr(j)});
    return For(i, 0, 16, ForKind::kSerial, For(j, 0, 16, ForKind::kSerial, store));
  };
  ExpectAlphaEqual(nest(true), nest(true));
  ExpectAlphaEqual(nest(false), nest(false));
  ExpectUnequal(nest(true), nest(false));
}

// add(A, B, n): B[i] = A[i] + 1 for i < n, every variable and buffer fresh, with given names.
PrimFunc MakeFunc(const std::string& a, const std::string& b, bool swap_uses = false) {
  Var n("n");
  Var a_handle(a, DataType::Handle()), b_handle(b, DataType::Handle());
  Buffer A = MakeBuffer(a, f32, {n});
  Buffer B = MakeBuffer(b, f32, {n});
  Var i("i");
  const Buffer& src = swap_uses ? B : A;
  const Buffer& dst = swap_uses ? A : B;
  Stmt body = For(i, 0, n, ForKind::kSerial,
                  BufferStore(dst, BufferLoad(src, {i}) + FloatImm(f32, 1), {i}));
  return PrimFunc({a_handle, b_handle}, body, {{a_handle, A}, {b_handle, B}},
                  {{"global_symbol", String("add")}});
}

TEST(Structural, PrimFuncParamsAndBufferMapAreBindings) {
  ExpectAlphaEqual(MakeFunc("A", "B"), MakeFunc("X", "Y"));
  ExpectUnequal(MakeFunc("A", "B"), MakeFunc("A", "B", /*swap_uses=*/true));
}

TEST(Structural, ModulesCompareByFunctionName) {
  IRModule m1({{"add", MakeFunc("A", "B")}});
  IRModule m2({{"add", MakeFunc("P", "Q")}});
  ExpectAlphaEqual(m1, m2);
  IRModule m3({{"other", MakeFunc("A", "B")}});
  ExpectUnequal(m1, m3);
}

TEST(Structural, DTypesAndConstantsMatter) {
  ExpectUnequal(IntImm(DataType::Int(32), 1), IntImm(DataType::Int(64), 1));
  ExpectUnequal(FloatImm(f32, 1.0), FloatImm(DataType::Float(16), 1.0));
  ExpectUnequal(Var("x", DataType::Int(32)), Var("x", DataType::Int(64)));
  ExpectAlphaEqual(Call(f32, Op::Get("exp"), {FloatImm(f32, 1)}),
                   Call(f32, Op::Get("exp"), {FloatImm(f32, 1)}));
  ExpectUnequal(Call(f32, Op::Get("exp"), {FloatImm(f32, 1)}),
                Call(f32, Op::Get("log"), {FloatImm(f32, 1)}));
}

TEST(Structural, BlocksBindIterVarsAndAllocatedBuffers) {
  Buffer C = MakeBuffer("C", f32, {16});
  auto block = [&](const std::string& v, const std::string& tmp) {
    Var vi(v);
    Buffer T = MakeBuffer(tmp, f32, {16});
    Stmt body = SeqStmt(
        {BufferStore(T, FloatImm(f32, 2), {vi}), BufferStore(C, BufferLoad(T, {vi}), {vi})});
    Block b({IterVar(vi, Range(0, 16), IterVarType::kDataPar)}, {},
            {BufferRegion(C, {Range(vi, 1)})}, "C", body, std::nullopt, {T});
    Var i("i");
    return For(i, 0, 16, ForKind::kSerial, BlockRealize({i}, Bool(true), b));
  };
  ExpectAlphaEqual(block("vi", "T"), block("w", "U"));
}

}  // namespace
}  // namespace ir
}  // namespace tessel
