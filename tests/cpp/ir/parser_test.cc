// The text-format parser: each statement and expression form builds exactly the IR written, checked
// field by field and against IR built in C++ with structural equality.
#include <gtest/gtest.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/function.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

namespace tessel {
namespace ir {
namespace {

using tvm::ffi::StructuralEqual;

PrimExpr E(const std::string& text, Map<String, Any> vars = {}) { return ParseExpr(text, vars); }

PrimFunc Func(const std::string& text) {
  ObjectRef r = ParseText(text);
  auto f = r.as<PrimFunc>();
  EXPECT_TRUE(f.has_value()) << "not a PrimFunc";
  return *f;
}

// The body of `def f(<params>):` with the given body lines (indented by the caller, 4 spaces).
PrimFunc FuncOf(const std::string& params, const std::string& body) {
  return Func("@T.prim_func\ndef f(" + params + "):\n" + body);
}

void ExpectEqual(const ObjectRef& a, const ObjectRef& b) {
  EXPECT_TRUE(StructuralEqual::Equal(a, b)) << "structural mismatch";
}

TEST(Parser, IntLiteralIsInt32) {
  PrimExpr e = E("5");
  ASSERT_TRUE(e.as<IntImmNode>());
  EXPECT_EQ(e.dtype(), DataType::Int(32));
  EXPECT_EQ(e.as<IntImmNode>()->value, 5);
  EXPECT_EQ(E("-5").as<IntImmNode>()->value, -5);
}

TEST(Parser, TypedConstants) {
  PrimExpr a = E("T.int64(5)");
  EXPECT_EQ(a.dtype(), DataType::Int(64));
  EXPECT_EQ(a.as<IntImmNode>()->value, 5);
  EXPECT_EQ(E("T.uint8(3)").dtype(), DataType::UInt(8));
  EXPECT_EQ(E("T.int64(-9223372036854775808)").as<IntImmNode>()->value, INT64_MIN);
  PrimExpr b = E("T.bool(True)");
  EXPECT_EQ(b.dtype(), DataType::Bool());
  EXPECT_EQ(b.as<IntImmNode>()->value, 1);
  EXPECT_EQ(E("False").as<IntImmNode>()->value, 0);
  PrimExpr f = E("T.float32(1.5)");
  EXPECT_EQ(f.dtype(), DataType::Float(32));
  EXPECT_EQ(f.as<FloatImmNode>()->value, 1.5);
  EXPECT_EQ(E("T.float16(0)").dtype(), DataType::Float(16));
  EXPECT_EQ(E("T.float64(1e-09)").as<FloatImmNode>()->value, 1e-09);
  EXPECT_TRUE(std::isinf(E("T.float32(\"inf\")").as<FloatImmNode>()->value));
  EXPECT_LT(E("T.float32(\"-inf\")").as<FloatImmNode>()->value, 0);
  EXPECT_TRUE(std::isnan(E("T.float32(\"nan\")").as<FloatImmNode>()->value));
  EXPECT_EQ(E("T.float32(-2.5)").as<FloatImmNode>()->value, -2.5);
}

TEST(Parser, StringImmWithEscapes) {
  PrimExpr s = E("\"a\\n\\\"b\\x41\"");
  ASSERT_TRUE(s.as<StringImmNode>());
  EXPECT_EQ(std::string(s.as<StringImmNode>()->value), "a\n\"bA");
}

TEST(Parser, ArithmeticBuildsExactNodes) {
  Var x("x"), y("y");
  Map<String, Any> vars{{"x", x}, {"y", y}};
  // No folding: 1 + 2 stays an Add.
  PrimExpr c = E("1 + 2");
  ASSERT_TRUE(c.as<AddNode>());
  ExpectEqual(E("x + y * 2", vars), Add(x, Mul(y, 2)));
  ExpectEqual(E("x - y - 1", vars), Sub(Sub(x, y), 1));
  ExpectEqual(E("x - (y - 1)", vars), Sub(x, Sub(y, 1)));
  ExpectEqual(E("x // 4 + x % 4", vars), Add(FloorDiv(x, 4), FloorMod(x, 4)));
  ExpectEqual(E("T.truncdiv(x, 4)", vars), Div(x, 4));
  ExpectEqual(E("T.Div(x, 4)", vars), Div(x, 4));
  ExpectEqual(E("T.truncmod(x, y)", vars), Mod(x, y));
  ExpectEqual(E("T.Mod(x, y)", vars), Mod(x, y));
  // TVM prints comparisons of two constants as calls.
  ExpectEqual(E("T.EQ(T.int64(5), T.int64(5))", vars),
              EQ(IntImm(DataType::Int(64), 5), IntImm(DataType::Int(64), 5)));
  ExpectEqual(E("T.NE(x, y)", vars), NE(x, y));
  ExpectEqual(E("T.LT(x, 1)", vars), LT(x, 1));
  ExpectEqual(E("T.GE(x, y)", vars), GE(x, y));
  ExpectEqual(E("T.min(x, 1)", vars), Min(x, 1));
  ExpectEqual(E("T.max(x, y)", vars), Max(x, y));
  ExpectEqual(E("-x", vars), Sub(0, x));
}

TEST(Parser, LiteralAdoptsOtherOperandDtype) {
  Var n("n", DataType::Int(64));
  Var f("f", DataType::Float(16));
  Map<String, Any> vars{{"n", n}, {"f", f}};
  ExpectEqual(E("n + 1", vars), Add(n, IntImm(DataType::Int(64), 1)));
  ExpectEqual(E("2 * n", vars), Mul(IntImm(DataType::Int(64), 2), n));
  ExpectEqual(E("f * 2", vars), Mul(f, FloatImm(DataType::Float(16), 2)));
  ExpectEqual(E("f + 0.5", vars), Add(f, FloatImm(DataType::Float(16), 0.5)));
  ExpectEqual(E("n < 10", vars), LT(n, IntImm(DataType::Int(64), 10)));
  ExpectEqual(E("T.min(n, 4)", vars), Min(n, IntImm(DataType::Int(64), 4)));
  // The dtype flows through a chain: (n * 2) is int64, so 1 adopts int64 too.
  PrimExpr e = E("n * 2 + 1", vars);
  EXPECT_EQ(e.dtype(), DataType::Int(64));
  // A literal that does not fit int32 is fine once it adopts int64.
  EXPECT_EQ(E("n + 5000000000", vars).as<AddNode>()->b.as<IntImmNode>()->value, 5000000000LL);
}

TEST(Parser, ParseExprWithDtypeStrings) {
  PrimExpr e = E("x * 4 + y // 2", {{"x", String("int32")}, {"y", String("int32")}});
  const auto* add = e.as<AddNode>();
  ASSERT_TRUE(add);
  const auto* mul = add->a.as<MulNode>();
  ASSERT_TRUE(mul);
  EXPECT_EQ(std::string(mul->a.as<VarNode>()->name_hint), "x");
  EXPECT_TRUE(add->b.as<FloorDivNode>());
}

TEST(Parser, FloatDivision) {
  Var a("a", DataType::Float(32));
  ExpectEqual(E("a / T.float32(2)", {{"a", a}}), Div(a, FloatImm(DataType::Float(32), 2)));
}

TEST(Parser, ComparisonsAndLogic) {
  Var x("x"), y("y");
  Map<String, Any> vars{{"x", x}, {"y", y}};
  ExpectEqual(E("x < y and not x == 1 or y >= 2", vars),
              Or(And(LT(x, y), Not(EQ(x, 1))), GE(y, 2)));
  ExpectEqual(E("x != y", vars), NE(x, y));
  ExpectEqual(E("x <= y", vars), LE(x, y));
  ExpectEqual(E("x > y", vars), GT(x, y));
  ExpectEqual(E("(x < y) == (y < x)", vars), EQ(LT(x, y), LT(y, x)));
}

TEST(Parser, BitOperatorsAreBuiltinCalls) {
  Var x("x"), y("y");
  Map<String, Any> vars{{"x", x}, {"y", y}};
  DataType i32 = DataType::Int(32);
  ExpectEqual(E("x << 2", vars), Call(i32, builtin::shift_left(), {x, 2}));
  ExpectEqual(E("x >> y", vars), Call(i32, builtin::shift_right(), {x, y}));
  ExpectEqual(E("x & y | x ^ y", vars), Call(i32, builtin::bitwise_or(),
                                             {Call(i32, builtin::bitwise_and(), {x, y}),
                                              Call(i32, builtin::bitwise_xor(), {x, y})}));
  ExpectEqual(E("~x", vars), Call(i32, builtin::bitwise_not(), {x}));
  ExpectEqual(E("T.shift_left(x, 1)", vars), Call(i32, builtin::shift_left(), {x, 1}));
  // Python precedence: << binds tighter than &, + tighter than <<.
  ExpectEqual(
      E("x & y << 1 + 1", vars),
      Call(i32, builtin::bitwise_and(), {x, Call(i32, builtin::shift_left(), {y, Add(1, 1)})}));
}

TEST(Parser, NodeForms) {
  Var x("x"), y("y");
  Var f("f", DataType::Float(32));
  Var c("c", DataType::Bool());
  Map<String, Any> vars{{"x", x}, {"y", y}, {"f", f}, {"c", c}};
  ExpectEqual(E("T.Cast(\"int64\", x)", vars), Cast(DataType::Int(64), x));
  ExpectEqual(E("T.Select(c, x, 0)", vars), Select(c, x, 0));
  ExpectEqual(E("T.Ramp(x, 1, 4)", vars), Ramp(x, 1, 4));
  ExpectEqual(E("T.Broadcast(f, 8)", vars), Broadcast(f, 8));
  ExpectEqual(
      E("T.Shuffle([T.Ramp(x, 1, 4)], [0, 2])", vars),
      Shuffle({Ramp(x, 1, 4)}, {IntImm(DataType::Int(32), 0), IntImm(DataType::Int(32), 2)}));
  ExpectEqual(E("T.if_then_else(c, f, 1)", vars), Call(DataType::Float(32), builtin::if_then_else(),
                                                       {c, f, FloatImm(DataType::Float(32), 1)}));
}

TEST(Parser, LetExpressionScopesItsVariable) {
  Var y("y");
  PrimExpr e = E("T.Let(v * 2, where={v: y + 1})", {{"y", y}});
  const auto* let = e.as<LetNode>();
  ASSERT_TRUE(let);
  EXPECT_EQ(std::string(let->var->name_hint), "v");
  Var v = let->var;
  ExpectEqual(e, Let(v, Add(y, 1), Mul(v, 2)));
  EXPECT_TRUE(let->body.as<MulNode>()->a.same_as(v));
}

TEST(Parser, OpCalls) {
  Var f("f", DataType::Float(32));
  Var h("h", DataType::Float(16));
  Map<String, Any> vars{{"f", f}, {"h", h}};
  ExpectEqual(E("T.exp(f)", vars), Call(DataType::Float(32), Op::Get("exp"), {f}));
  ExpectEqual(E("T.exp(f, dtype=\"float16\")", vars),
              Call(DataType::Float(16), Op::Get("exp"), {f}));
  ExpectEqual(E("T.isnan(f)", vars), Call(DataType::Bool(), Op::Get("isnan"), {f}));
  ExpectEqual(E("T.call_extern(\"float32\", \"expf\", f)", vars),
              Call(DataType::Float(32), builtin::call_extern(), {StringImm("expf"), f}));
  ExpectEqual(E("T.reinterpret(\"int16\", h)", vars),
              Call(DataType::Int(16), builtin::reinterpret(), {h}));
  PrimExpr g = E("T.call_global(\"helper\", \"int32\", 1, 2)");
  const auto* call = g.as<CallNode>();
  ASSERT_TRUE(call);
  ASSERT_TRUE(call->op.as<GlobalVarNode>());
  EXPECT_EQ(std::string(call->op.as<GlobalVarNode>()->name_hint), "helper");
  EXPECT_EQ(call->args.size(), 2u);
  PrimExpr ann = E("T.shift_left(1, 2, annotations={\"k\": 1, \"s\": \"v\"})");
  const auto* ac = ann.as<CallNode>();
  ASSERT_TRUE(ac);
  EXPECT_EQ(ac->annotations.size(), 2u);
  EXPECT_EQ(ac->annotations.at("k").cast<int64_t>(), 1);
  EXPECT_EQ(std::string(ac->annotations.at("s").cast<String>()), "v");
}

TEST(Parser, LoneFunctionWithBufferParams) {
  PrimFunc f = Func(R"(# from tvm.script import tir as T

@T.prim_func
def add(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "add"})
    for i in range(128):
        B[i] = A[i] + T.float32(1)
)");
  ASSERT_EQ(f->params.size(), 2u);
  EXPECT_TRUE(f->params[0].dtype().is_handle());
  Buffer a = f->buffer_map.at(f->params[0]);
  EXPECT_EQ(std::string(a->name), "A");
  EXPECT_EQ(a->dtype, DataType::Float(32));
  EXPECT_EQ(a->data_alignment, 64);
  EXPECT_EQ(std::string(a->scope), "global");
  EXPECT_EQ(std::string(f->attrs.at("global_symbol").cast<String>()), "add");
  const auto* loop = f->body.as<ForNode>();
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->kind, ForKind::kSerial);
  // The same function built in C++.
  Buffer A = MakeBuffer("A", DataType::Float(32), {128});
  Buffer B = MakeBuffer("B", DataType::Float(32), {128});
  Var pa("A", DataType::Handle()), pb("B", DataType::Handle());
  Var i("i");
  Stmt body = For(i, 0, 128, ForKind::kSerial,
                  BufferStore(B, Add(BufferLoad(A, {i}), FloatImm(DataType::Float(32), 1)), {i}));
  PrimFunc expect({pa, pb}, body, {{pa, A}, {pb, B}}, {{"global_symbol", String("add")}});
  ExpectEqual(f, expect);
}

TEST(Parser, ModuleOfTwoFunctions) {
  ObjectRef r = ParseText(R"(# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def a(x: T.int32):
        T.evaluate(x)

    @T.prim_func
    def b(A: T.Buffer((4,), "int8")):
        A[0] = T.int8(1)
)");
  auto m = r.as<IRModule>();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->FunctionNames().size(), 2u);
  PrimFunc a = m->Lookup("a");
  EXPECT_EQ(a->params[0].dtype(), DataType::Int(32));
  EXPECT_TRUE(a->body.as<EvaluateNode>());
  // ParseModule wraps a lone function.
  IRModule single = ParseModule("@T.prim_func\ndef g():\n    T.evaluate(0)\n");
  EXPECT_TRUE(single->functions.count("g"));
}

TEST(Parser, BufferKeywordsAndSymbolicShapes) {
  PrimFunc f = FuncOf(
      "A: T.Buffer((n, m), \"float16\", strides=(s, 1), elem_offset=off, scope=\"shared\", "
      "align=16, offset_factor=4), B: T.Buffer((n,))",
      "    B[0] = T.float32(0)\n");
  Buffer a = f->buffer_map.at(f->params[0]);
  Buffer b = f->buffer_map.at(f->params[1]);
  EXPECT_EQ(a->dtype, DataType::Float(16));
  EXPECT_EQ(b->dtype, DataType::Float(32));
  EXPECT_EQ(std::string(a->scope), "shared");
  EXPECT_EQ(a->data_alignment, 16);
  EXPECT_EQ(a->offset_factor, 4);
  ASSERT_EQ(a->strides.size(), 2u);
  EXPECT_TRUE(a->elem_offset.as<VarNode>());
  // n in A's shape and n in B's shape are one variable.
  EXPECT_TRUE(a->shape[0].same_as(b->shape[0]));
  EXPECT_EQ(a->shape[0].dtype(), DataType::Int(32));
  EXPECT_EQ(a->data->storage_scope, "shared");
  EXPECT_EQ(DataType(a->data->pointee), DataType::Float(16));
}

TEST(Parser, Int64Shapes) {
  PrimFunc f = FuncOf("A: T.Buffer((n, 128), \"float32\", index_dtype=\"int64\")",
                      "    for i in range(n):\n"
                      "        A[i, T.int64(0)] = T.float32(0)\n");
  Buffer a = f->buffer_map.at(f->params[0]);
  EXPECT_EQ(a->shape[0].dtype(), DataType::Int(64));
  EXPECT_EQ(a->shape[1].dtype(), DataType::Int(64));
  const auto* loop = f->body.as<ForNode>();
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->loop_var.dtype(), DataType::Int(64));
  EXPECT_EQ(loop->min.dtype(), DataType::Int(64));
  PrimFunc g = FuncOf("A: T.Buffer((T.int64(16),), \"float32\")",
                      "    for i in range(T.int64(16)):\n        A[i] = T.float32(0)\n");
  EXPECT_EQ(g->body.as<ForNode>()->loop_var.dtype(), DataType::Int(64));
}

TEST(Parser, ScalarHandleAndMatchBuffer) {
  PrimFunc f = FuncOf("a: T.handle, n: T.int32",
                      "    A = T.match_buffer(a, (n,), \"float32\")\n"
                      "    for i in range(n):\n"
                      "        A[i] = T.float32(0)\n");
  ASSERT_EQ(f->params.size(), 2u);
  Buffer a = f->buffer_map.at(f->params[0]);
  EXPECT_TRUE(a->shape[0].same_as(f->params[1]));
}

TEST(Parser, FreeVariableDeclarations) {
  PrimFunc f = FuncOf("A: T.Buffer((16,), \"int32\")",
                      "    n = T.int32()\n"
                      "    m = T.int64(is_size_var=True)\n"
                      "    p = T.handle(\"float32\", \"shared\")\n"
                      "    A[0] = n + T.Cast(\"int32\", m)\n"
                      "    T.evaluate(T.address_of(p))\n");
  const auto* seq = f->body.as<SeqStmtNode>();
  ASSERT_TRUE(seq);
  const auto* store = seq->seq[0].as<BufferStoreNode>();
  ASSERT_TRUE(store);
  const auto* add = store->value.as<AddNode>();
  EXPECT_TRUE(add->a.as<VarNode>());
  EXPECT_TRUE(add->b.as<CastNode>()->value.as<SizeVarNode>());
  const auto* call = seq->seq[1].as<EvaluateNode>()->value.as<CallNode>();
  Var p = tvm::ffi::GetRef<Var>(call->args[0].as<VarNode>());
  EXPECT_EQ(std::string(p->storage_scope), "shared");
}

TEST(Parser, LoopKinds) {
  PrimFunc f = FuncOf("A: T.Buffer((64,), \"float32\")",
                      "    for i in T.parallel(4):\n"
                      "        for j in T.vectorized(4):\n"
                      "            for k in T.unroll(2, 4):\n"
                      "                for t in T.thread_binding(128, thread=\"threadIdx.x\"):\n"
                      "                    for s in T.serial(8, annotations={\"pragma\": 1}):\n"
                      "                        A[i] = T.float32(0)\n");
  const auto* l0 = f->body.as<ForNode>();
  EXPECT_EQ(l0->kind, ForKind::kParallel);
  const auto* l1 = l0->body.as<ForNode>();
  EXPECT_EQ(l1->kind, ForKind::kVectorized);
  const auto* l2 = l1->body.as<ForNode>();
  EXPECT_EQ(l2->kind, ForKind::kUnrolled);
  EXPECT_EQ(l2->min.as<IntImmNode>()->value, 2);
  EXPECT_EQ(l2->extent.as<IntImmNode>()->value, 2);
  const auto* l3 = l2->body.as<ForNode>();
  EXPECT_EQ(l3->kind, ForKind::kThreadBinding);
  EXPECT_EQ(std::string(l3->thread_tag), "threadIdx.x");
  const auto* l4 = l3->body.as<ForNode>();
  EXPECT_EQ(l4->annotations.at("pragma").cast<int64_t>(), 1);
}

TEST(Parser, RangeWithSymbolicBounds) {
  PrimFunc f = FuncOf("n: T.int32",
                      "    for i in range(2, n):\n        T.evaluate(i)\n"
                      "    for j in range(n, n + 8):\n        T.evaluate(j)\n");
  const auto* seq = f->body.as<SeqStmtNode>();
  const auto* l0 = seq->seq[0].as<ForNode>();
  ExpectEqual(l0->extent, Sub(f->params[0], 2));
  const auto* l1 = seq->seq[1].as<ForNode>();
  EXPECT_EQ(l1->extent.as<IntImmNode>()->value, 8);
}

TEST(Parser, GridIsNestedSerialLoops) {
  PrimFunc f = FuncOf("A: T.Buffer((4, 8), \"float32\")",
                      "    for i, j in T.grid(4, 8):\n        A[i, j] = T.float32(0)\n");
  const auto* l0 = f->body.as<ForNode>();
  ASSERT_TRUE(l0);
  const auto* l1 = l0->body.as<ForNode>();
  ASSERT_TRUE(l1);
  EXPECT_EQ(l1->extent.as<IntImmNode>()->value, 8);
}

TEST(Parser, IfElifElseWhile) {
  PrimFunc f = FuncOf("n: T.int32",
                      "    if n < 0:\n        T.evaluate(0)\n"
                      "    elif n < 5:\n        T.evaluate(1)\n"
                      "    else:\n        T.evaluate(2)\n"
                      "    while n > 0:\n        T.evaluate(3)\n");
  const auto* seq = f->body.as<SeqStmtNode>();
  const auto* top = seq->seq[0].as<IfThenElseNode>();
  ASSERT_TRUE(top);
  const auto* nested = top->else_case.value().as<IfThenElseNode>();
  ASSERT_TRUE(nested);
  EXPECT_TRUE(nested->else_case.has_value());
  EXPECT_TRUE(seq->seq[1].as<WhileNode>());
}

TEST(Parser, BindersTakeTheRestOfTheSuite) {
  PrimFunc f = FuncOf("n: T.int32",
                      "    x: T.int32 = n + 1\n"
                      "    assert x > 0, \"x must be positive\"\n"
                      "    y = x * 2\n"
                      "    T.evaluate(y)\n"
                      "    T.evaluate(x)\n");
  const auto* let = f->body.as<LetStmtNode>();
  ASSERT_TRUE(let);
  EXPECT_EQ(std::string(let->var->name_hint), "x");
  const auto* as = let->body.as<AssertStmtNode>();
  ASSERT_TRUE(as);
  EXPECT_EQ(std::string(as->message.as<StringImmNode>()->value), "x must be positive");
  const auto* let2 = as->body.as<LetStmtNode>();
  ASSERT_TRUE(let2);
  const auto* seq = let2->body.as<SeqStmtNode>();
  ASSERT_TRUE(seq);
  EXPECT_EQ(seq->seq.size(), 2u);
  EXPECT_TRUE(seq->seq[1].as<EvaluateNode>()->value.same_as(let->var));
}

TEST(Parser, AllocateDeclBufferAttr) {
  PrimFunc f = FuncOf("n: T.int32",
                      "    A_data = T.allocate([128], \"float32\", \"shared\")\n"
                      "    A = T.decl_buffer((128,), \"float32\", data=A_data, scope=\"shared\")\n"
                      "    B_data = T.allocate([n], \"int8\", \"global\", n > 4, "
                      "annotations={\"x\": [1, 2]})\n"
                      "    with T.attr(A_data, \"storage_alignment\", 16):\n"
                      "        A[0] = T.float32(1)\n"
                      "    with T.attr(None, \"k\", 1):\n"
                      "        T.evaluate(0)\n"
                      "    with T.attr(\"s\", \"k\", \"v\"):\n"
                      "        T.evaluate(0)\n");
  const auto* alloc = f->body.as<AllocateNode>();
  ASSERT_TRUE(alloc);
  EXPECT_EQ(std::string(alloc->buffer_var->storage_scope), "shared");
  EXPECT_EQ(alloc->dtype, DataType::Float(32));
  const auto* decl = alloc->body.as<DeclBufferNode>();
  ASSERT_TRUE(decl);
  EXPECT_TRUE(decl->buffer->data.same_as(alloc->buffer_var));
  const auto* alloc2 = decl->body.as<AllocateNode>();
  ASSERT_TRUE(alloc2);
  EXPECT_TRUE(alloc2->condition.as<GTNode>());
  EXPECT_EQ(alloc2->annotations.at("x").cast<Array<Any>>().size(), 2u);
  const auto* seq = alloc2->body.as<SeqStmtNode>();
  ASSERT_TRUE(seq);
  const auto* attr = seq->seq[0].as<AttrStmtNode>();
  EXPECT_EQ(std::string(attr->attr_key), "storage_alignment");
  EXPECT_TRUE(attr->node.as<VarNode>() != nullptr);
  EXPECT_EQ(seq->seq[1].as<AttrStmtNode>()->node.type_index(), tvm::ffi::TypeIndex::kTVMFFINone);
  EXPECT_TRUE(seq->seq[2].as<AttrStmtNode>()->node.as<String>().has_value());
}

TEST(Parser, BareCallStatementAndVectorSlices) {
  PrimFunc f = FuncOf("A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\")",
                      "    T.call_extern(\"int32\", \"sync\")\n"
                      "    for i in range(4):\n"
                      "        B[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4]\n");
  const auto* seq = f->body.as<SeqStmtNode>();
  ASSERT_TRUE(seq->seq[0].as<EvaluateNode>()->value.as<CallNode>());
  const auto* store = seq->seq[1].as<ForNode>()->body.as<BufferStoreNode>();
  const auto* ramp = store->indices[0].as<RampNode>();
  ASSERT_TRUE(ramp);
  EXPECT_EQ(ramp->lanes, 4);
  EXPECT_TRUE(ramp->base.as<MulNode>());
  EXPECT_EQ(store->value.dtype(), DataType::Float(32, 4));
}

const char* kMatmul = R"(# from tvm.script import tir as T

@T.prim_func
def matmul(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

TEST(Parser, MatmulWithReduceAxisAndInit) {
  PrimFunc f = Func(kMatmul);
  const auto* li = f->body.as<ForNode>();
  const auto* lk = li->body.as<ForNode>()->body.as<ForNode>();
  ASSERT_TRUE(lk);
  const auto* realize = lk->body.as<BlockRealizeNode>();
  ASSERT_TRUE(realize);
  const BlockNode* block = realize->block.get();
  EXPECT_EQ(std::string(block->name_hint), "C");
  ASSERT_EQ(block->iter_vars.size(), 3u);
  EXPECT_EQ(block->iter_vars[0]->iter_type, IterVarType::kDataPar);
  EXPECT_EQ(block->iter_vars[2]->iter_type, IterVarType::kCommReduce);
  EXPECT_EQ(block->iter_vars[2]->dom->extent.as<IntImmNode>()->value, 128);
  EXPECT_TRUE(realize->iter_values[2].same_as(lk->loop_var));
  EXPECT_EQ(realize->predicate.as<IntImmNode>()->value, 1);
  ASSERT_EQ(block->reads.size(), 2u);
  EXPECT_EQ(block->reads[0]->region[1]->extent.as<IntImmNode>()->value, 1);
  ASSERT_TRUE(block->init.has_value());
  EXPECT_TRUE(block->init.value().as<BufferStoreNode>());
  EXPECT_TRUE(block->body.as<BufferStoreNode>());
  EXPECT_TRUE(f->attrs.at("tir.noalias").cast<bool>());

  // Built in C++.
  DataType f32 = DataType::Float(32);
  Buffer A = MakeBuffer("A", f32, {128, 128}), B = MakeBuffer("B", f32, {128, 128}),
         C = MakeBuffer("C", f32, {128, 128});
  Var pa("A", DataType::Handle()), pb("B", DataType::Handle()), pc("C", DataType::Handle());
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  auto point = [](PrimExpr e) { return Range(e, 1); };
  Block blk(
      {IterVar(vi, Range(0, 128), IterVarType::kDataPar),
       IterVar(vj, Range(0, 128), IterVarType::kDataPar),
       IterVar(vk, Range(0, 128), IterVarType::kCommReduce)},
      {BufferRegion(A, {point(vi), point(vk)}), BufferRegion(B, {point(vk), point(vj)})},
      {BufferRegion(C, {point(vi), point(vj)})}, "C",
      BufferStore(
          C, Add(BufferLoad(C, {vi, vj}), Mul(BufferLoad(A, {vi, vk}), BufferLoad(B, {vk, vj}))),
          {vi, vj}),
      Stmt(BufferStore(C, FloatImm(f32, 0), {vi, vj})));
  Stmt body = For(i, 0, 128, ForKind::kSerial,
                  For(j, 0, 128, ForKind::kSerial,
                      For(k, 0, 128, ForKind::kSerial, BlockRealize({i, j, k}, Bool(true), blk))));
  PrimFunc expect({pa, pb, pc}, body, {{pa, A}, {pb, B}, {pc, C}},
                  {{"global_symbol", String("matmul")}, {"tir.noalias", true}});
  ExpectEqual(f, expect);
}

TEST(Parser, TiledGpuKernelWithSharedMemory) {
  PrimFunc f = Func(R"(@T.prim_func
def tiled(A: T.Buffer((1024, 1024), "float16"), B: T.Buffer((1024,), "float16")):
    for bx in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("tile"):
                v0 = T.axis.spatial(64, bx)
                v1 = T.axis.spatial((0, 16), tx)
                T.where(bx * 16 + tx < 1024)
                T.reads(A[v0 * 16:v0 * 16 + 16, 0:1024])
                T.writes(B[v0 * 16 + v1])
                T.block_attr({"meta": 1})
                A_shared = T.alloc_buffer((16, 1024), "float16", scope="shared")
                A_sub = T.match_buffer(A[v0 * 16:v0 * 16 + 16, 0:1024], (16, 1024), "float16")
                for k in range(1024):
                    A_shared[v1, k] = A_sub[v1, k]
                B[v0 * 16 + v1] = A_shared[v1, 0]
)");
  const auto* bx = f->body.as<ForNode>();
  EXPECT_EQ(std::string(bx->thread_tag), "blockIdx.x");
  const auto* realize = bx->body.as<ForNode>()->body.as<BlockRealizeNode>();
  ASSERT_TRUE(realize);
  EXPECT_TRUE(realize->predicate.as<LTNode>());
  const BlockNode* b = realize->block.get();
  EXPECT_EQ(b->alloc_buffers.size(), 1u);
  EXPECT_EQ(std::string(b->alloc_buffers[0]->scope), "shared");
  EXPECT_EQ(b->match_buffers.size(), 1u);
  EXPECT_EQ(b->annotations.at("meta").cast<int64_t>(), 1);
  // v0 * 16:v0 * 16 + 16 has extent 16 exactly, not (v0 * 16 + 16) - v0 * 16.
  EXPECT_EQ(b->reads[0]->region[0]->extent.as<IntImmNode>()->value, 16);
  EXPECT_EQ(b->reads[0]->region[1]->extent.as<IntImmNode>()->value, 1024);
  EXPECT_EQ(b->iter_vars[1]->dom->extent.as<IntImmNode>()->value, 16);
  const auto* seq = b->body.as<SeqStmtNode>();
  ASSERT_TRUE(seq);
  EXPECT_EQ(seq->seq.size(), 2u);
}

TEST(Parser, BlockWithoutIterVarsAndEmptyRegions) {
  PrimFunc f = FuncOf("A: T.Buffer((4,), \"float32\")",
                      "    with T.block(\"root\"):\n"
                      "        T.reads()\n"
                      "        T.writes()\n"
                      "        A[0] = T.float32(0)\n");
  const auto* realize = f->body.as<BlockRealizeNode>();
  ASSERT_TRUE(realize);
  EXPECT_EQ(realize->block->iter_vars.size(), 0u);
  EXPECT_EQ(realize->block->reads.size(), 0u);
}

TEST(Parser, CommentsBlankLinesAndOddIndentation) {
  PrimFunc f = Func(
      "# leading comment\n\n@T.prim_func\ndef f(n: T.int32):  # trailing\n"
      "  # comment in body\n\n  if n > (1 +\n      2):\n     T.evaluate(n)\n");
  EXPECT_TRUE(f->body.as<IfThenElseNode>());
}

TEST(Parser, RegisteredGlobalFunctions) {
  auto parse_text = tvm::ffi::Function::GetGlobal("tessel.ir.ParseText");
  auto parse_module = tvm::ffi::Function::GetGlobal("tessel.ir.ParseModule");
  auto parse_expr = tvm::ffi::Function::GetGlobal("tessel.ir.ParseExpr");
  ASSERT_TRUE(parse_text.has_value() && parse_module.has_value() && parse_expr.has_value());
  std::string fn = "@T.prim_func\ndef g():\n    T.evaluate(0)\n";
  EXPECT_TRUE((*parse_text)(fn, "x.py").cast<ObjectRef>().as<PrimFuncNode>());
  EXPECT_TRUE((*parse_module)(fn, "x.py").cast<IRModule>()->functions.count("g"));
  Var y("y", DataType::Int(64));
  Map<String, Any> vars{{"x", String("int64")}, {"y", y}};
  PrimExpr e = (*parse_expr)("x + y", vars).cast<PrimExpr>();
  EXPECT_EQ(e.dtype(), DataType::Int(64));
  EXPECT_TRUE(e.as<AddNode>()->b.same_as(y));
}

TEST(Parser, LinearTimeOnALargeModule) {
  std::ostringstream os;
  os << "@I.ir_module\nclass Module:\n";
  int lines = 0;
  for (int fn = 0; lines < 10000; ++fn) {
    os << "    @T.prim_func\n    def f" << fn << "(A: T.Buffer((n,), \"float32\")):\n";
    lines += 2;
    for (int s = 0; s < 48; ++s) {
      os << "        for i" << s << " in range(n):\n"
         << "            A[i" << s << "] = A[i" << s << "] * T.float32(2) + T.float32(" << s
         << ")\n";
      lines += 2;
    }
    os << "\n";
  }
  std::string text = os.str();
  auto start = std::chrono::steady_clock::now();
  IRModule m = ParseModule(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(m->functions.size(), 100u);
  EXPECT_LT(seconds, 1.0) << "parsing " << lines << " lines took " << seconds << " s";
}

TEST(Parser, LongBinderChainDoesNotRecurse) {
  std::ostringstream os;
  os << "@T.prim_func\ndef f(n: T.int32):\n";
  for (int i = 0; i < 20000; ++i) os << "    x" << i << " = n + " << i << "\n";
  os << "    T.evaluate(x19999)\n";
  PrimFunc f = Func(os.str());
  EXPECT_TRUE(f->body.as<LetStmtNode>());
}

// ---- round trip with the printer: parse -> print -> parse gives an equal object, and printing
// again gives the same text ----

std::string ReadCorpus(const std::string& name) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/tests/fuzz/corpus/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ExpectRoundTrip(const std::string& text) {
  ObjectRef first = ParseText(text);
  std::string printed = AsText(first);
  ObjectRef second;
  try {
    second = ParseText(printed, "printed");
  } catch (const tvm::ffi::Error& e) {
    FAIL() << "printed text does not parse: " << e.message() << "\n" << printed;
  }
  // Free variables (declared with T.int32()) are new objects in each parse: map them.
  EXPECT_TRUE(StructuralEqual::Equal(first, second, /*map_free_vars=*/true))
      << "not equal after print and parse:\n"
      << printed;
  EXPECT_EQ(AsText(second), printed);
}

TEST(ParserRoundTrip, CorpusKernels) {
  for (const char* name : {"add.py", "matmul.py", "module.py", "tiled.py"}) {
    SCOPED_TRACE(name);
    std::string text = ReadCorpus(name);
    ASSERT_FALSE(text.empty());
    ExpectRoundTrip(text);
  }
}

TEST(ParserRoundTrip, StatementAndExpressionForms) {
  ExpectRoundTrip(kMatmul);
  ExpectRoundTrip(
      "@T.prim_func\ndef f(A: T.Buffer((n, 128), \"float32\", index_dtype=\"int64\"), "
      "B: T.Buffer((16,), \"float16\", strides=(s,), elem_offset=off, scope=\"shared\", "
      "align=16, offset_factor=4), x: T.int64, p: T.handle):\n"
      "    k = T.int32(is_size_var=True)\n"
      "    for i in T.serial(T.int64(2), n, annotations={\"a\": [1, \"b\"]}):\n"
      "        A[i, x] = T.float32(\"inf\") / T.float32(2.5e-07)\n"
      "    for j in T.unroll(4):\n"
      "        B[j * 4:j * 4 + 4] = T.Broadcast(T.float16(1), 4)\n"
      "        B[j] = T.if_then_else(j < k and not j == 2, T.float16(0), T.exp(B[j]))\n"
      "    y: T.int32 = T.Let(v << 2 | v & 1, where={v: T.truncmod(k, 3) + T.truncdiv(k, -2)})\n"
      "    T.evaluate(T.Shuffle([T.Ramp(y, 2, 4)], [3, 1]))\n"
      "    T.evaluate(T.call_extern(\"int32\", \"f\", T.Select(y > 0, y, -y), \"s\\n\"))\n"
      "    T.evaluate(T.reinterpret(\"float32\", y) + T.float32(0))\n"
      "    T.evaluate(T.shift_left(y, 1, annotations={\"x\": 1}))\n");
}

TEST(ParserRoundTrip, IrBuiltInCppPrintsAndParsesBack) {
  DataType f32 = DataType::Float(32);
  Var n("n"), i("i"), x("x");
  Buffer A = MakeBuffer("A", f32, {n});
  Var pa("A", DataType::Handle());
  Stmt body = For(i, 1, Sub(n, 1), ForKind::kParallel,
                  LetStmt(x, Mul(i, 2),
                          IfThenElse(LT(x, n), BufferStore(A, FloatImm(f32, 0.5), {x}),
                                     Evaluate(Call(DataType::Int(32), builtin::call_extern(),
                                                   {StringImm("g"), x})))));
  PrimFunc f({pa}, body, {{pa, A}});
  std::string text = AsText(f);
  ObjectRef back = ParseText(text);
  EXPECT_TRUE(StructuralEqual::Equal(f, back, /*map_free_vars=*/true)) << text;
}

}  // namespace
}  // namespace ir
}  // namespace tessel
