// The printer against docs/text_format.md: one line per expression form, precedence and
// associativity, every statement kind, whole functions and modules, naming and determinism.
#include <gtest/gtest.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

namespace tessel {
namespace ir {
namespace {

void ExpectPrint(const ObjectRef& node, const std::string& expected) {
  EXPECT_EQ(AsText(node), expected);
}

const DataType kI32 = DataType::Int(32);
const DataType kI64 = DataType::Int(64);
const DataType kF32 = DataType::Float(32);

PrimExpr F32(double v) { return FloatImm(kF32, v); }
PrimExpr CallOp(DataType t, const Op& op, Array<PrimExpr> args, Map<String, Any> ann = {}) {
  return Call(t, op, std::move(args), std::move(ann));
}

class PrinterTest : public ::testing::Test {
 protected:
  Var a{"a"}, b{"b"}, c{"c"}, x{"x"};
  Var p{"p", DataType::Bool()}, q{"q", DataType::Bool()}, r{"r", DataType::Bool()};
  Var f{"f", kF32}, g{"g", kF32};
  Buffer A = MakeBuffer("A", kF32, {128, 64});
  Buffer B = MakeBuffer("B", kF32, {128});
};

// ---- constants ----

TEST_F(PrinterTest, IntConstants) {
  ExpectPrint(Int32(5), "5");
  ExpectPrint(Int32(-5), "-5");
  ExpectPrint(IntImm(kI64, 5), "T.int64(5)");
  ExpectPrint(IntImm(kI64, -7), "T.int64(-7)");
  ExpectPrint(IntImm(DataType::UInt(8), 3), "T.uint8(3)");
  ExpectPrint(Bool(true), "T.bool(True)");
  ExpectPrint(Bool(false), "T.bool(False)");
}

TEST_F(PrinterTest, FloatConstantsUseShortestRepr) {
  ExpectPrint(F32(1.5), "T.float32(1.5)");
  ExpectPrint(F32(1.0), "T.float32(1)");
  ExpectPrint(FloatImm(DataType::Float(16), 0.0), "T.float16(0)");
  ExpectPrint(FloatImm(DataType::Float(64), 1e-9), "T.float64(1e-09)");
  ExpectPrint(FloatImm(DataType::Float(64), 0.1), "T.float64(0.1)");
  ExpectPrint(FloatImm(DataType::Float(64), 0.0001), "T.float64(0.0001)");
  ExpectPrint(FloatImm(DataType::Float(64), 0.00001), "T.float64(1e-05)");
  ExpectPrint(FloatImm(DataType::Float(64), 1e16), "T.float64(1e+16)");
  ExpectPrint(FloatImm(DataType::Float(64), 1.25e20), "T.float64(1.25e+20)");
  ExpectPrint(FloatImm(DataType::Float(64), 123.25), "T.float64(123.25)");
  ExpectPrint(FloatImm(DataType::Float(64), 1e15), "T.float64(1000000000000000)");
  ExpectPrint(F32(-2.5), "T.float32(-2.5)");
  ExpectPrint(F32(-0.0), "T.float32(-0.0)");
  // A float32 value that is not a short decimal keeps every digit the double needs.
  ExpectPrint(F32(static_cast<double>(0.1f)), "T.float32(0.10000000149011612)");
  ExpectPrint(F32(std::numeric_limits<double>::infinity()), "T.float32(\"inf\")");
  ExpectPrint(F32(-std::numeric_limits<double>::infinity()), "T.float32(\"-inf\")");
  ExpectPrint(F32(std::nan("")), "T.float32(\"nan\")");
  ExpectPrint(FloatImm(DataType::BFloat(16), 2), "T.bfloat16(2)");
}

TEST_F(PrinterTest, StringsUsePythonEscapes) {
  ExpectPrint(StringImm("text"), "\"text\"");
  ExpectPrint(StringImm("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\x01\"");
}

// ---- operators ----

TEST_F(PrinterTest, Arithmetic) {
  ExpectPrint(Add(a, b), "a + b");
  ExpectPrint(Sub(a, b), "a - b");
  ExpectPrint(Mul(a, b), "a * b");
  ExpectPrint(FloorDiv(a, b), "a // b");
  ExpectPrint(FloorMod(a, b), "a % b");
  ExpectPrint(Div(a, b), "T.truncdiv(a, b)");
  ExpectPrint(Mod(a, b), "T.truncmod(a, b)");
  ExpectPrint(Div(f, g), "f / g");
  ExpectPrint(Min(a, b), "T.min(a, b)");
  ExpectPrint(Max(a, Int32(0)), "T.max(a, 0)");
}

TEST_F(PrinterTest, ComparisonsAndLogic) {
  ExpectPrint(EQ(a, b), "a == b");
  ExpectPrint(NE(a, b), "a != b");
  ExpectPrint(LT(a, b), "a < b");
  ExpectPrint(LE(a, b), "a <= b");
  ExpectPrint(GT(a, b), "a > b");
  ExpectPrint(GE(a, b), "a >= b");
  ExpectPrint(And(p, q), "p and q");
  ExpectPrint(Or(p, q), "p or q");
  ExpectPrint(Not(p), "not p");
}

TEST_F(PrinterTest, LeftAssociativity) {
  ExpectPrint(Sub(Sub(a, b), c), "a - b - c");
  ExpectPrint(Sub(a, Sub(b, c)), "a - (b - c)");
  ExpectPrint(Add(a, Add(b, c)), "a + (b + c)");
  ExpectPrint(FloorDiv(FloorDiv(a, b), c), "a // b // c");
  ExpectPrint(FloorDiv(a, Mul(b, c)), "a // (b * c)");
  ExpectPrint(And(And(p, q), r), "p and q and r");
  ExpectPrint(And(p, And(q, r)), "p and (q and r)");
}

TEST_F(PrinterTest, Precedence) {
  ExpectPrint(Mul(Add(a, b), c), "(a + b) * c");
  ExpectPrint(Add(a, Mul(b, c)), "a + b * c");
  ExpectPrint(Add(Mul(a, b), c), "a * b + c");
  ExpectPrint(FloorMod(Sub(a, b), c), "(a - b) % c");
  ExpectPrint(And(Or(p, q), r), "(p or q) and r");
  ExpectPrint(Or(p, And(q, r)), "p or q and r");
  ExpectPrint(LT(Add(a, b), Mul(c, x)), "a + b < c * x");
  ExpectPrint(And(LT(a, b), GE(c, x)), "a < b and c >= x");
  ExpectPrint(Add(Min(a, b), c), "T.min(a, b) + c");
}

TEST_F(PrinterTest, NegativeConstantsAndNegation) {
  ExpectPrint(Mul(a, Int32(-5)), "a * -5");
  ExpectPrint(Sub(a, Int32(-5)), "a - -5");
  ExpectPrint(Mul(Int32(-5), a), "-5 * a");
  ExpectPrint(FloorDiv(Int32(-7), Int32(2)), "-7 // 2");
  // Negating a non-constant is a subtraction from zero, printed as such.
  ExpectPrint(-a, "0 - a");
  ExpectPrint(Mul(-a, b), "(0 - a) * b");
  ExpectPrint(-IntImm(kI64, 3), "T.int64(-3)");
}

TEST_F(PrinterTest, NotAndChainedComparisons) {
  ExpectPrint(Not(LT(a, b)), "not a < b");
  ExpectPrint(Not(And(p, q)), "not (p and q)");
  ExpectPrint(And(Not(p), q), "not p and q");
  ExpectPrint(Not(PrimExpr(Not(p))), "not not p");
  ExpectPrint(EQ(LT(a, b), p), "(a < b) == p");
  ExpectPrint(EQ(p, LT(a, b)), "p == (a < b)");
  ExpectPrint(EQ(p, Not(q)), "p == (not q)");
}

// ---- the other expression nodes ----

TEST_F(PrinterTest, CastSelectVectors) {
  ExpectPrint(Cast(kI64, a), "T.Cast(\"int64\", a)");
  ExpectPrint(Cast(kF32, Add(a, b)), "T.Cast(\"float32\", a + b)");
  ExpectPrint(Select(p, a, b), "T.Select(p, a, b)");
  ExpectPrint(Ramp(a, 2, 4), "T.Ramp(a, 2, 4)");
  ExpectPrint(Broadcast(f, 8), "T.Broadcast(f, 8)");
  ExpectPrint(Shuffle({Ramp(a, 1, 2), Ramp(b, 1, 2)}, {0, 2}),
              "T.Shuffle([T.Ramp(a, 1, 2), T.Ramp(b, 1, 2)], [0, 2])");
}

TEST_F(PrinterTest, LetBindsAFreshName) {
  Var v("v");
  ExpectPrint(Let(v, b, Add(v, 1)), "T.Let(v + 1, where={v: b})");
  Var a2("a");
  ExpectPrint(Add(a, Let(a2, b, Mul(a2, a2))), "a + T.Let(a_1 * a_1, where={a_1: b})");
}

TEST_F(PrinterTest, BufferLoads) {
  ExpectPrint(BufferLoad(A, {a, Add(b, 1)}), "A[a, b + 1]");
  ExpectPrint(BufferLoad(B, {Ramp(Mul(a, 4), 1, 4)}), "B[a * 4:a * 4 + 4]");
  ExpectPrint(BufferLoad(B, {Ramp(Int32(0), 1, 4)}), "B[0:4]");
  ExpectPrint(BufferLoad(B, {Ramp(Int32(8), 1, 4)}), "B[8:12]");
  ExpectPrint(BufferLoad(B, {Ramp(a, 2, 4)}), "B[T.Ramp(a, 2, 4)]");
  Buffer S = MakeBuffer("S", kF32, {});
  ExpectPrint(BufferLoad(S, {}), "S[()]");
}

TEST_F(PrinterTest, InfixAndPrefixOps) {
  ExpectPrint(a << b, "a << b");
  ExpectPrint(a >> b, "a >> b");
  ExpectPrint(a & b, "a & b");
  ExpectPrint(a | b, "a | b");
  ExpectPrint(a ^ b, "a ^ b");
  ExpectPrint(~a, "~a");
  // `+` binds tighter than `<<`, as in Python.
  ExpectPrint(CallOp(kI32, builtin::shift_left(), {Add(a, b), c}), "a + b << c");
  ExpectPrint(CallOp(kI32, builtin::shift_left(), {a | b, c}), "(a | b) << c");
  ExpectPrint(Add(a, CallOp(kI32, builtin::shift_left(), {b, c})), "a + (b << c)");
  ExpectPrint(
      CallOp(kI32, builtin::bitwise_and(), {a, CallOp(kI32, builtin::bitwise_or(), {b, c})}),
      "a & (b | c)");
  ExpectPrint(
      CallOp(kI32, builtin::bitwise_or(), {a, CallOp(kI32, builtin::bitwise_and(), {b, c})}),
      "a | b & c");
  ExpectPrint(CallOp(kI32, builtin::bitwise_not(), {Add(a, b)}), "~(a + b)");
  ExpectPrint(Mul(a, CallOp(kI32, builtin::bitwise_not(), {b})), "a * ~b");
  ExpectPrint(LT(CallOp(kI32, builtin::bitwise_xor(), {a, b}), c), "a ^ b < c");
}

TEST_F(PrinterTest, InfixOpsFallBackToCallForm) {
  ExpectPrint(CallOp(kI32, builtin::shift_left(), {a, b}, {{"k", 1}}),
              "T.shift_left(a, b, annotations={\"k\": 1})");
  Var w("w", kI64);
  // Operands of different dtypes: the call form, with an explicitly typed literal.
  ExpectPrint(CallOp(kI64, builtin::shift_left(), {w, Int32(3)}), "T.shift_left(w, T.int32(3))");
  ExpectPrint(CallOp(kI64, builtin::bitwise_not(), {a}), "T.bitwise_not(a, dtype=\"int64\")");
}

TEST_F(PrinterTest, CallsOfOps) {
  ExpectPrint(CallOp(kF32, Op::Get("exp"), {f}), "T.exp(f)");
  ExpectPrint(CallOp(DataType::Float(16), Op::Get("exp"), {f}), "T.exp(f, dtype=\"float16\")");
  ExpectPrint(CallOp(DataType::Bool(), Op::Get("isnan"), {f}), "T.isnan(f)");
  ExpectPrint(CallOp(kI32, builtin::if_then_else(), {p, a, b}), "T.if_then_else(p, a, b)");
  ExpectPrint(CallOp(kF32, builtin::if_then_else(), {p, f, g}), "T.if_then_else(p, f, g)");
  Var w("w", kI64);
  ExpectPrint(CallOp(kI64, builtin::if_then_else(), {p, w, Int32(0)}),
              "T.if_then_else(p, w, T.int32(0))");
  ExpectPrint(CallOp(kF32, builtin::call_extern(), {StringImm("expf"), f}),
              "T.call_extern(\"float32\", \"expf\", f)");
  ExpectPrint(CallOp(kF32, builtin::reinterpret(), {a}), "T.reinterpret(\"float32\", a)");
  ExpectPrint(CallOp(kI32, Op::Get("tvm_storage_sync"), {StringImm("shared")}),
              "T.tvm_storage_sync(\"shared\", dtype=\"int32\")");
  ExpectPrint(CallOp(kF32, Op::Get("exp"), {f}, {{"b", String("x")}, {"a", 2.5}}),
              "T.exp(f, annotations={\"a\": 2.5, \"b\": \"x\"})");
  ExpectPrint(Call(kI32, GlobalVar("helper"), {a, Int32(1)}),
              "T.call_global(\"helper\", \"int32\", a, 1)");
}

TEST_F(PrinterTest, NamesAreUniqueAndSanitized) {
  Var i1("i"), i2("i"), i3("i");
  ExpectPrint(Add(Add(i1, i2), Add(i3, i1)), "i + i_1 + (i_2 + i)");
  ExpectPrint(Var("threadIdx.x"), "threadIdx_x");
  ExpectPrint(Add(Var("in"), Var("T")), "in_1 + T_1");
  ExpectPrint(Var("0a"), "_0a");
  ExpectPrint(Var(""), "v");
  Var j("j_1"), j2("j");
  Var j3("j");
  ExpectPrint(Add(Add(j, j2), j3), "j_1 + j + j_2");
}

TEST_F(PrinterTest, RegionsRangesAndOtherObjects) {
  ExpectPrint(BufferRegion(A, {Range(a, 1), Range(0, 64)}), "A[a, 0:64]");
  ExpectPrint(BufferRegion(A, {Range(2, 8), Range(a, b)}), "A[2:10, a:a + b]");
  ExpectPrint(BufferRegion(A, {Range(a, Sub(b, a)), Range(0, 64)}), "A[a:b, 0:64]");
  ExpectPrint(Range(0, 16), "0:16");
  ExpectPrint(Op::Get("exp"), "T.exp");
  ExpectPrint(A, "A = T.Buffer((128, 64), \"float32\")");
  // Only the constructor's default offset (an int32 zero) is left out.
  Buffer W = Buffer("W", Var::Pointer("W", kF32), kF32, {IntImm(kI64, 8)}, {}, IntImm(kI64, 0),
                    "global", 64, 1);
  ExpectPrint(W,
              "W = T.Buffer((T.int64(8),), \"float32\", elem_offset=T.int64(0), "
              "index_dtype=\"int64\")");
  ExpectPrint(IterVar(Var("vi"), Range(0, 128), IterVarType::kCommReduce),
              "vi = T.axis.reduce(128)");
}

// ---- statements ----

TEST_F(PrinterTest, BufferStoreAndEvaluate) {
  ExpectPrint(BufferStore(A, Add(BufferLoad(A, {a, b}), F32(1)), {a, b}),
              "A[a, b] = A[a, b] + T.float32(1)\n");
  ExpectPrint(BufferStore(B, Broadcast(F32(0), 4), {Ramp(a, 1, 4)}),
              "B[a:a + 4] = T.Broadcast(T.float32(0), 4)\n");
  ExpectPrint(Evaluate(CallOp(kI32, builtin::call_extern(), {StringImm("f"), a})),
              "T.call_extern(\"int32\", \"f\", a)\n");
  ExpectPrint(Evaluate(Int32(0)), "T.evaluate(0)\n");
  ExpectPrint(Evaluate(a << b), "T.evaluate(a << b)\n");
}

TEST_F(PrinterTest, BindingStatementsContinueAtTheSameIndentation) {
  Var v("v");
  Stmt body = BufferStore(B, Cast(kF32, v), {v});
  ExpectPrint(LetStmt(v, Add(a, 1), body), "v: T.int32 = a + 1\nB[v] = T.Cast(\"float32\", v)\n");
  ExpectPrint(AssertStmt(LT(a, 128), StringImm("a is too large"), body),
              "assert a < 128, \"a is too large\"\nB[v] = T.Cast(\"float32\", v)\n");
  Var data = Var::Pointer("buf", kF32, "shared");
  Buffer buf = Buffer("buf", data, kF32, {128}, {}, Int32(0), "shared", 64, 1);
  Stmt use = BufferStore(buf, F32(0), {a});
  ExpectPrint(Allocate(data, kF32, {128}, Bool(true), DeclBuffer(buf, use)),
              "buf = T.allocate([128], \"float32\", \"shared\")\n"
              "buf_1 = T.decl_buffer((128,), \"float32\", data=buf, scope=\"shared\")\n"
              "buf_1[a] = T.float32(0)\n");
  ExpectPrint(Allocate(data, kF32, {a, 4}, LT(a, 8), use, {{"pragma", 1}}),
              "buf = T.allocate([a, 4], \"float32\", \"shared\", a < 8, "
              "annotations={\"pragma\": 1})\nbuf_1[a] = T.float32(0)\n");
  // A decl_buffer that brings its own data pointer.
  ExpectPrint(
      DeclBuffer(buf, use),
      "buf = T.decl_buffer((128,), \"float32\", scope=\"shared\")\nbuf[a] = T.float32(0)\n");
}

TEST_F(PrinterTest, AttrStmt) {
  Var tx("threadIdx.x");
  Stmt body = BufferStore(B, F32(0), {tx});
  ExpectPrint(AttrStmt(tx, "thread_extent", 128, body),
              "with T.attr(threadIdx_x, \"thread_extent\", 128):\n    B[threadIdx_x] = "
              "T.float32(0)\n");
  ExpectPrint(AttrStmt(String("default"), "pragma_x", 1, body),
              "with T.attr(\"default\", \"pragma_x\", 1):\n    B[threadIdx_x] = T.float32(0)\n");
  ExpectPrint(AttrStmt(Any(nullptr), "pragma_y", 0, body),
              "with T.attr(None, \"pragma_y\", 0):\n    B[threadIdx_x] = T.float32(0)\n");
}

TEST_F(PrinterTest, Loops) {
  Var i("i");
  Stmt body = BufferStore(B, F32(0), {i});
  ExpectPrint(For(i, 0, 128, ForKind::kSerial, body),
              "for i in range(128):\n    B[i] = T.float32(0)\n");
  ExpectPrint(For(i, 2, 8, ForKind::kSerial, body),
              "for i in range(2, 10):\n    B[i] = T.float32(0)\n");
  ExpectPrint(For(i, 2, Sub(a, 2), ForKind::kSerial, body),
              "for i in range(2, a):\n    B[i] = T.float32(0)\n");
  ExpectPrint(For(i, b, a, ForKind::kSerial, body),
              "for i in range(b, b + a):\n    B[i] = T.float32(0)\n");
  ExpectPrint(For(i, 0, a, ForKind::kSerial, body, "", {{"k", 1}}),
              "for i in T.serial(a, annotations={\"k\": 1}):\n    B[i] = T.float32(0)\n");
  ExpectPrint(For(i, 0, 4, ForKind::kParallel, body),
              "for i in T.parallel(4):\n    B[i] = T.float32(0)\n");
  ExpectPrint(For(i, 0, 4, ForKind::kVectorized, body),
              "for i in T.vectorized(4):\n    B[i] = T.float32(0)\n");
  ExpectPrint(For(i, 0, 4, ForKind::kUnrolled, body),
              "for i in T.unroll(4):\n    B[i] = T.float32(0)\n");
  ExpectPrint(For(i, 0, 128, ForKind::kThreadBinding, body, "threadIdx.x"),
              "for i in T.thread_binding(128, thread=\"threadIdx.x\"):\n    B[i] = T.float32(0)\n");
  Var k("k", kI64);
  ExpectPrint(For(k, IntImm(kI64, 0), IntImm(kI64, 16), ForKind::kSerial,
                  Evaluate(CallOp(kI32, builtin::call_extern(), {StringImm("f"), k}))),
              "for k in range(T.int64(16)):\n    T.call_extern(\"int32\", \"f\", k)\n");
}

TEST_F(PrinterTest, WhileIfSeq) {
  Stmt s0 = BufferStore(B, F32(0), {a});
  Stmt s1 = BufferStore(B, F32(1), {a});
  Stmt s2 = BufferStore(B, F32(2), {a});
  ExpectPrint(While(LT(a, 4), s0), "while a < 4:\n    B[a] = T.float32(0)\n");
  ExpectPrint(IfThenElse(p, s0), "if p:\n    B[a] = T.float32(0)\n");
  ExpectPrint(IfThenElse(p, s0, s1),
              "if p:\n    B[a] = T.float32(0)\nelse:\n    B[a] = T.float32(1)\n");
  ExpectPrint(IfThenElse(p, s0, IfThenElse(q, s1, s2)),
              "if p:\n    B[a] = T.float32(0)\nelif q:\n    B[a] = T.float32(1)\n"
              "else:\n    B[a] = T.float32(2)\n");
  ExpectPrint(IfThenElse(p, s0, SeqStmt({IfThenElse(q, s1), s2})),
              "if p:\n    B[a] = T.float32(0)\nelse:\n    if q:\n        B[a] = T.float32(1)\n"
              "    B[a] = T.float32(2)\n");
  ExpectPrint(SeqStmt({s0, SeqStmt({s1, s2})}),
              "B[a] = T.float32(0)\nB[a] = T.float32(1)\nB[a] = T.float32(2)\n");
}

TEST_F(PrinterTest, BlockWithoutRemap) {
  Var i("i"), vi("vi");
  Buffer L = MakeBuffer("L", kF32, {4}, "local");
  Buffer Sub4 = MakeBuffer("A_sub", kF32, {16});
  Block block({IterVar(vi, Range(2, 8), IterVarType::kDataPar)},
              {BufferRegion(A, {Range(vi, 1), Range(0, 16)})}, {BufferRegion(B, {Range(vi, 1)})},
              "blk", BufferStore(B, BufferLoad(L, {0}), {vi}), std::nullopt, {L},
              {MatchBufferRegion(Sub4, BufferRegion(A, {Range(vi, 1), Range(0, 16)}))},
              {{"meta", 1}});
  Stmt s = For(i, 0, 8, ForKind::kSerial, BlockRealize({Add(i, 2)}, LT(i, a), block));
  ExpectPrint(s,
              "for i in range(8):\n"
              "    with T.sblock(\"blk\"):\n"
              "        vi = T.axis.spatial((2, 10), i + 2)\n"
              "        T.where(i < a)\n"
              "        T.reads(A[vi, 0:16])\n"
              "        T.writes(B[vi])\n"
              "        T.sblock_attr({\"meta\": 1})\n"
              "        L = T.sblock_alloc_buffer((4,), \"float32\", scope=\"local\")\n"
              "        A_sub = T.match_buffer(A[vi, 0:16], (16,), \"float32\")\n"
              "        B[vi] = L[0]\n");
  Block empty({}, {}, {}, "root", Evaluate(0));
  ExpectPrint(BlockRealize({}, Bool(true), empty), "with T.sblock(\"root\"):\n    T.evaluate(0)\n");
}

// A matmul with its reduction block: the canonical text a scheduled kernel starts from.
PrimFunc MakeMatmul() {
  Buffer A = MakeBuffer("A", kF32, {128, 128});
  Buffer B = MakeBuffer("B", kF32, {128, 128});
  Buffer C = MakeBuffer("C", kF32, {128, 128});
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  Stmt update = BufferStore(
      C, Add(BufferLoad(C, {vi, vj}), Mul(BufferLoad(A, {vi, vk}), BufferLoad(B, {vk, vj}))),
      {vi, vj});
  Block block({IterVar(vi, Range(0, 128), IterVarType::kDataPar),
               IterVar(vj, Range(0, 128), IterVarType::kDataPar),
               IterVar(vk, Range(0, 128), IterVarType::kCommReduce)},
              {BufferRegion(A, {Range(vi, 1), Range(vk, 1)}),
               BufferRegion(B, {Range(vk, 1), Range(vj, 1)})},
              {BufferRegion(C, {Range(vi, 1), Range(vj, 1)})}, "C", update,
              BufferStore(C, F32(0), {vi, vj}));
  Stmt loops =
      For(i, 0, 128, ForKind::kSerial,
          For(j, 0, 128, ForKind::kSerial,
              For(k, 0, 128, ForKind::kSerial, BlockRealize({i, j, k}, Bool(true), block))));
  Var pa("A", DataType::Handle()), pb("B", DataType::Handle()), pc("C", DataType::Handle());
  return PrimFunc({pa, pb, pc}, loops, {{pa, A}, {pb, B}, {pc, C}},
                  {{"global_symbol", String("matmul")}, {"tir.noalias", true}});
}

TEST_F(PrinterTest, MatmulFunction) {
  ExpectPrint(MakeMatmul(),
              "# from tvm.script import ir as I\n"
              "# from tvm.script import tirx as T\n"
              "\n"
              "@T.prim_func(s_tir=True)\n"
              "def matmul(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), "
              "\"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
              "    T.func_attr({\"global_symbol\": \"matmul\", \"tir.noalias\": True})\n"
              "    for i in range(128):\n"
              "        for j in range(128):\n"
              "            for k in range(128):\n"
              "                with T.sblock(\"C\"):\n"
              "                    vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
              "                    T.reads(A[vi, vk], B[vk, vj])\n"
              "                    T.writes(C[vi, vj])\n"
              "                    with T.init():\n"
              "                        C[vi, vj] = T.float32(0)\n"
              "                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
}

TEST_F(PrinterTest, ParametersAndFreeVariables) {
  Var n("n"), m("m"), s("s", kI64);
  SizeVar sz("sz");
  Var ptr = Var::Pointer("ptr", kF32, "shared");
  Buffer X = MakeBuffer("X", kF32, {n, 4});
  Buffer Y = Buffer("Y", Var::Pointer("Y", DataType::Float(16), "global"), DataType::Float(16),
                    {IntImm(kI64, 8)}, {s}, Int32(0), "global", 16, 4);
  Var px("X", DataType::Handle()), py("Y", DataType::Handle());
  Var h("h", DataType::Handle());
  Var k("k");
  Stmt body = SeqStmt({
      BufferStore(X, Cast(kF32, Add(m, sz)), {0, 0}),
      Evaluate(CallOp(kI32, builtin::call_extern(), {StringImm("use"), ptr, h, k})),
      BufferStore(X, F32(1), {n, 0}),
  });
  PrimFunc fn({px, py, h, k}, body, {{px, X}, {py, Y}}, {}, kI32);
  ExpectPrint(fn,
              "# from tvm.script import ir as I\n"
              "# from tvm.script import tirx as T\n"
              "\n"
              "@T.prim_func(private=True)\n"
              "def main(X: T.Buffer((\"n\", 4), \"float32\"), Y: T.Buffer((T.int64(8),), "
              "\"float16\", strides=(\"s\",), align=16, offset_factor=4), h: T.handle, k: "
              "T.int32) -> T.int32:\n"
              "    n = T.int32()\n"
              "    s = T.int64()\n"
              "    m = T.int32()\n"
              "    sz = T.int32(is_size_var=True)\n"
              "    ptr = T.handle(\"float32\", \"shared\")\n"
              "    X[0, 0] = T.Cast(\"float32\", m + sz)\n"
              "    T.call_extern(\"int32\", \"use\", ptr, h, k)\n"
              "    X[n, 0] = T.float32(1)\n");
}

TEST_F(PrinterTest, BufferDataAndFreeBuffers) {
  Var n("n");
  Buffer X = MakeBuffer("X", kF32, {16});
  Buffer Free = MakeBuffer("F", kF32, {n});
  Var px("X", DataType::Handle());
  Stmt body = SeqStmt({
      Evaluate(CallOp(kI32, builtin::call_extern(), {StringImm("use"), X->data})),
      BufferStore(Free, BufferLoad(X, {0}), {0}),
  });
  ExpectPrint(PrimFunc({px}, body, {{px, X}}),
              "# from tvm.script import ir as I\n"
              "# from tvm.script import tirx as T\n"
              "\n"
              "@T.prim_func(private=True)\n"
              "def main(X: T.Buffer((16,), \"float32\")):\n"
              "    n = T.int32()\n"
              "    F = T.Buffer((n,), \"float32\")\n"
              "    T.call_extern(\"int32\", \"use\", X.data)\n"
              "    F[0] = X[0]\n");
}

TEST_F(PrinterTest, NamesAreUniquePerFunction) {
  Var i1("i"), i2("i");
  Buffer X = MakeBuffer("X", kF32, {16});
  Var px("X", DataType::Handle());
  Stmt body = SeqStmt({For(i1, 0, 4, ForKind::kSerial, BufferStore(X, F32(0), {i1})),
                       For(i2, 0, 4, ForKind::kSerial, BufferStore(X, F32(1), {i2})),
                       For(i1, 0, 2, ForKind::kSerial, BufferStore(X, F32(2), {i1}))});
  std::string text = AsText(PrimFunc({px}, body, {{px, X}}));
  EXPECT_NE(text.find("    for i in range(4):\n        X[i] = T.float32(0)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    for i_1 in range(4):\n        X[i_1] = T.float32(1)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    for i in range(2):\n"), std::string::npos) << text;
}

TEST_F(PrinterTest, ModuleSortsFunctionsAndIsDeterministic) {
  Buffer X = MakeBuffer("X", kF32, {4});
  Var px("X", DataType::Handle());
  PrimFunc fb({px}, BufferStore(X, F32(1), {0}), {{px, X}});
  PrimFunc fa({}, Evaluate(0));
  IRModule mod({{"zeta", fb}, {"alpha", fa}}, {{"version", 2}});
  std::string expected =
      "# from tvm.script import ir as I\n"
      "# from tvm.script import tirx as T\n"
      "\n"
      "@I.ir_module\n"
      "class Module:\n"
      "    I.module_attrs({\"version\": 2})\n"
      "\n"
      "    @T.prim_func(private=True)\n"
      "    def alpha():\n"
      "        T.evaluate(0)\n"
      "\n"
      "    @T.prim_func(private=True)\n"
      "    def zeta(X: T.Buffer((4,), \"float32\")):\n"
      "        X[0] = T.float32(1)\n";
  ExpectPrint(mod, expected);
  ExpectPrint(IRModule({{"alpha", fa}, {"zeta", fb}}, {{"version", 2}}), expected);
  EXPECT_EQ(AsText(MakeMatmul()), AsText(MakeMatmul()));
  ExpectPrint(IRModule(),
              "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n\n"
              "@I.ir_module\nclass Module:\n    pass\n");
}

TEST_F(PrinterTest, AttributeValues) {
  Array<Any> list{1, 2.0, String("s"), false, nullptr};
  Map<String, Any> nested{{"z", 1}, {"a", list}};
  Map<String, Any> attrs{{"ints", nested}, {"expr", Add(a, 1)}, {"imm", Int32(3)}};
  PrimFunc fn({a}, Evaluate(0), {}, attrs);
  std::string text = AsText(fn);
  EXPECT_NE(
      text.find("    T.func_attr({\"expr\": a + 1, \"imm\": T.int32(3), \"ints\": {\"a\": [1, "
                "2.0, \"s\", False, None], \"z\": 1}})\n"),
      std::string::npos)
      << text;
  PrimFunc bad({}, Evaluate(0), {}, {{"dtype", DLDataType(kF32)}});
  EXPECT_THROW(AsText(bad), tvm::ffi::Error);
}

TEST_F(PrinterTest, GlobalFunctionIsRegistered) {
  auto fn = tvm::ffi::Function::GetGlobal("tessel.ir.AsText");
  ASSERT_TRUE(fn.has_value());
  EXPECT_EQ((*fn)(Add(a, b)).cast<String>(), "a + b");
}

// A generated module of about 10,000 lines prints well within a second.
TEST_F(PrinterTest, LargeModuleIsFast) {
  Map<String, PrimFunc> fns;
  for (int fi = 0; fi < 20; ++fi) {
    Buffer X = MakeBuffer("X", kF32, {1024});
    Var px("X", DataType::Handle());
    Array<Stmt> stmts;
    for (int s = 0; s < 250; ++s) {
      Var i("i");
      PrimExpr value = Add(Mul(BufferLoad(X, {i}), F32(s)), F32(1.5));
      stmts.push_back(For(i, 0, 1024, ForKind::kSerial, BufferStore(X, value, {i})));
    }
    fns.Set("f" + std::to_string(fi), PrimFunc({px}, SeqStmt(stmts), {{px, X}}));
  }
  IRModule mod(fns);
  auto start = std::chrono::steady_clock::now();
  std::string text = AsText(mod);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t lines = std::count(text.begin(), text.end(), '\n');
  EXPECT_GE(lines, 10000u);
  EXPECT_NE(text.find("for i_249 in range(1024):"), std::string::npos);
  EXPECT_LT(seconds, 0.5) << "printing " << lines << " lines took " << seconds << " s";
}

}  // namespace
}  // namespace ir
}  // namespace tessel
