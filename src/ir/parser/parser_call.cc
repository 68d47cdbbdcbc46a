// Calls in expressions: typed constants (T.int64(5)), the node forms that print as calls
// (T.Cast, T.Select, T.Ramp, T.Let, ...), registered ops by name, and T.call_global.
#include <tessel/ir/builtin.h>
#include <tessel/ir/builtin_tile.h>

#include <cmath>
#include <limits>
#include <unordered_set>

#include "ir/parser/parser_impl.h"

namespace tessel {
namespace ir {
namespace parser {
namespace {

std::string Plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// T.* names that are statements; used only to explain why they cannot appear in an expression.
bool IsStatementFunction(const std::string& name) {
  static const std::unordered_set<std::string> names = {
      "evaluate",     "func_attr",    "reads",    "writes",      "where",  "block_attr",
      "alloc_buffer", "match_buffer", "allocate", "decl_buffer", "block",  "init",
      "attr",         "serial",       "parallel", "vectorized",  "unroll", "thread_binding",
      "grid",         "Buffer",       "prim_func"};
  return names.count(name) != 0;
}

}  // namespace

void Parser::CheckArgs(const Node* call, const std::string& name, size_t min_pos, size_t max_pos,
                       std::initializer_list<const char*> keywords) {
  size_t n = call->num_pos;
  if (n < min_pos || n > max_pos) {
    std::string expect = min_pos == max_pos ? Plural(min_pos, "argument")
                         : max_pos == SIZE_MAX
                             ? "at least " + Plural(min_pos, "argument")
                             : std::to_string(min_pos) + " to " + Plural(max_pos, "argument");
    Fail(call->loc, name + " takes " + expect + ", got " + std::to_string(n));
  }
  for (size_t i = 0; i < call->keywords.size(); ++i) {
    bool ok = false;
    for (const char* k : keywords) ok = ok || call->keywords[i] == k;
    if (!ok) {
      Fail(call->keyword_locs[i],
           name + " got an unexpected keyword argument '" + call->keywords[i] + "'");
    }
  }
}

Operand Parser::EvalCall(const Node* n) {
  std::string dotted = DottedName(n->callee());
  if (dotted.rfind("T.", 0) != 0) {
    if (dotted.empty()) Fail(n->loc, "only T.* functions can be called");
    Fail(n->loc, "unknown function '" + dotted + "'");
  }
  std::string name = dotted.substr(2);
  Loc loc = n->loc;

  if (auto t = DataType::Parse(name); t && !t->is_void() && !t->is_handle()) {
    return EvalTypedConst(n, *t);
  }
  if (name == "Cast") {
    CheckArgs(n, dotted, 2, 2);
    DataType t = EvalDType(n->arg(0));
    PrimExpr v = EvalPrim(n->arg(1));
    return Of(Guard(loc, [&] { return Cast(t, v); }), loc);
  }
  if (name == "Select") {
    CheckArgs(n, dotted, 3, 3);
    PrimExpr c = EvalPrim(n->arg(0));
    Operand t = Eval(n->arg(1)), f = Eval(n->arg(2));
    Unify(&t, &f, loc, "T.Select");
    return Of(Guard(loc, [&] { return Select(c, t.expr, f.expr); }), loc);
  }
  // The comparisons are TVM's printed spelling of a comparison of two constants
  // (`T.EQ(T.int64(5), T.int64(5))`), which Python would otherwise fold.
  // T.ceildiv(a, b) is TVM's and TileLang's (a + b - 1) // b, built as that floordiv.
  static const char* const kBinary[] = {"truncdiv", "Div", "truncmod", "Mod", "floordiv",
                                        "floormod", "min", "max",      "EQ",  "NE",
                                        "LT",       "LE",  "GT",       "GE",  "ceildiv"};
  for (const char* b : kBinary) {
    if (name != b) continue;
    CheckArgs(n, dotted, 2, 2);
    Operand a = Eval(n->arg(0)), c = Eval(n->arg(1));
    Unify(&a, &c, loc, dotted);
    PrimExpr x = a.expr, y = c.expr;
    auto make = [&]() -> PrimExpr {
      if (name == "truncdiv" || name == "Div") return Div(x, y);
      if (name == "truncmod" || name == "Mod") return Mod(x, y);
      if (name == "floordiv") return FloorDiv(x, y);
      if (name == "ceildiv") {
        if (auto c = AsConstInt(y)) return FloorDiv(Add(x, MakeConst(y.dtype(), *c - 1)), y);
        return FloorDiv(Sub(Add(x, y), MakeConst(y.dtype(), 1)), y);
      }
      if (name == "floormod") return FloorMod(x, y);
      if (name == "min") return Min(x, y);
      if (name == "max") return Max(x, y);
      if (name == "EQ") return EQ(x, y);
      if (name == "NE") return NE(x, y);
      if (name == "LT") return LT(x, y);
      if (name == "LE") return LE(x, y);
      if (name == "GT") return GT(x, y);
      return GE(x, y);
    };
    return Of(Guard(loc, make), loc);
  }
  if (name == "Ramp") {
    CheckArgs(n, dotted, 3, 3);
    Operand base = Eval(n->arg(0)), stride = Eval(n->arg(1));
    Unify(&base, &stride, loc, dotted);
    int64_t lanes = EvalConstInt(n->arg(2), "the lanes of T.Ramp");
    return Of(Guard(loc, [&] { return Ramp(base.expr, stride.expr, lanes); }), loc);
  }
  if (name == "Broadcast") {
    CheckArgs(n, dotted, 2, 2);
    PrimExpr v = EvalPrim(n->arg(0));
    int64_t lanes = EvalConstInt(n->arg(1), "the lanes of T.Broadcast");
    return Of(Guard(loc, [&] { return Broadcast(v, lanes); }), loc);
  }
  if (name == "Shuffle") {
    CheckArgs(n, dotted, 2, 2);
    Array<PrimExpr> vectors, indices;
    for (int i = 0; i < 2; ++i) {
      const Node* list = n->arg(i);
      if (list->kind != NodeKind::kList && list->kind != NodeKind::kTuple) {
        Fail(list->loc, "T.Shuffle expects two lists: vectors and indices");
      }
      for (const NodePtr& k : list->kids) (i == 0 ? vectors : indices).push_back(EvalPrim(k.get()));
    }
    return Of(Guard(loc, [&] { return Shuffle(vectors, indices); }), loc);
  }
  if (name == "Let") return EvalLet(n);
  if (name == "copy" || name == "gemm" || name == "fill" || name == "clear" ||
      name == "reduce_sum" || name == "reduce_max" || name == "reduce_min" ||
      name == "atomic_add") {
    return EvalTileOp(n, name);
  }
  if (name == "call_global") {
    CheckArgs(n, dotted, 2, SIZE_MAX, {"annotations"});
    std::string callee = EvalString(n->arg(0), "the function name of T.call_global");
    DataType t = EvalDType(n->arg(1));
    Array<PrimExpr> args;
    for (size_t i = 2; i < n->num_pos; ++i) args.push_back(EvalPrim(n->arg(i)));
    Map<String, Any> ann;
    if (const Node* a = n->keyword("annotations")) ann = EvalDict(a, "annotations");
    return Of(Guard(loc, [&] { return Call(t, GlobalVar(callee), args, ann); }), loc);
  }
  if (Op::Find(name)) return EvalOpCall(n, name);
  if (IsStatementFunction(name)) {
    Fail(loc, "'" + dotted + "' is a statement, not an expression");
  }
  Fail(loc, "unknown function '" + dotted + "'");
}

Operand Parser::EvalTypedConst(const Node* n, DataType t) {
  std::string name = "T." + t.str();
  if (n->num_pos == 0) {
    Fail(n->loc, name + "() declares a variable; write it as a statement: x = " + name + "()");
  }
  CheckArgs(n, name, 1, 1);
  if (!t.is_scalar()) Fail(n->loc, "constants of vector type " + t.str() + " need T.Broadcast");
  const Node* arg = n->arg(0);
  Loc loc = n->loc;
  if (arg->kind == NodeKind::kBool) {
    return Of(Guard(loc, [&] { return MakeConst(t, static_cast<int64_t>(arg->int_value)); }), loc);
  }
  if (arg->kind == NodeKind::kString) {
    if (!t.is_floating()) Fail(arg->loc, "a string value needs a float dtype");
    double v;
    if (arg->text == "inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (arg->text == "-inf") {
      v = -std::numeric_limits<double>::infinity();
    } else if (arg->text == "nan") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else {
      Fail(arg->loc, "expected \"inf\", \"-inf\" or \"nan\"");
    }
    return Of(FloatImm(t, v), loc);
  }
  Operand op = Eval(arg);
  if (op.lit == Operand::kNone) {
    Fail(arg->loc, name + "(...) takes a literal; convert an expression with T.Cast(\"" + t.str() +
                       "\", ...)");
  }
  if (op.lit == Operand::kFloat) {
    if (!t.is_floating()) {
      Fail(arg->loc, "float literal for integer dtype " + t.str());
    }
    return Of(FloatImm(t, op.float_value), loc);
  }
  auto v = LiteralValue(op);
  if (!v) Fail(arg->loc, "integer literal does not fit in " + t.str());
  if (t.is_bool() && *v != 0 && *v != 1) Fail(arg->loc, "T.bool takes True or False");
  return Of(Guard(loc, [&] { return MakeConst(t, *v); }), loc);
}

Operand Parser::EvalOpCall(const Node* n, const std::string& name) {
  Op op = Op::Get(name);
  std::string dotted = "T." + name;
  Loc loc = n->loc;
  bool with_dtype = op->print_style == OpPrintStyle::kCallWithDType;
  size_t first = with_dtype ? 1 : 0;
  if (op->num_inputs >= 0) {
    CheckArgs(n, dotted, first + op->num_inputs, first + op->num_inputs, {"annotations", "dtype"});
  } else {
    CheckArgs(n, dotted, first, SIZE_MAX, {"annotations", "dtype"});
  }
  std::vector<Operand> ops;
  for (size_t i = first; i < n->num_pos; ++i) ops.push_back(Eval(n->arg(i)));
  // Operands that must agree: both sides of a binary infix op, the branches of if_then_else.
  if (op->print_style == OpPrintStyle::kInfix && ops.size() == 2) {
    Unify(&ops[0], &ops[1], loc, dotted);
  } else if (name == "if_then_else" && ops.size() == 3) {
    Unify(&ops[1], &ops[2], loc, dotted);
  }
  Array<PrimExpr> args;
  for (const Operand& o : ops) args.push_back(Materialize(o));
  DataType t = DataType::Int(32);
  if (with_dtype) {
    t = EvalDType(n->arg(0));
  } else if (name == "if_then_else") {
    t = args[1].dtype();
  } else if (name == "isnan" || name == "isinf") {
    t = DataType::Bool(args[0].dtype().lanes());
  } else if (name == "address_of" || name == "tile_region") {
    t = DataType::Handle();  // a pointer, as in TVM
  } else if (IsTileOp(name) || name == "atomic_add_at") {
    t = DataType::Int(32);
  } else if (!args.empty()) {
    t = args[0].dtype();
  }
  if (const Node* d = n->keyword("dtype")) {
    if (with_dtype) Fail(d->loc, dotted + " takes its dtype as the first argument");
    t = EvalDType(d);
  }
  Map<String, Any> ann;
  if (const Node* a = n->keyword("annotations")) ann = EvalDict(a, "annotations");
  return Of(Guard(loc, [&] { return Call(t, op, args, ann); }), loc);
}

Operand Parser::EvalLet(const Node* n) {
  if (n->num_pos == 3 && !n->keyword("where")) {
    // TVM's spelling: T.Let(var, value, body), var declared earlier (x = T.int32()).
    CheckArgs(n, "T.Let", 3, 3);
    PrimExpr var = EvalPrim(n->arg(0));
    const auto* v = var.as<VarNode>();
    if (!v)
      Fail(n->arg(0)->loc, "the first argument of T.Let(var, value, body) must be a variable");
    PrimExpr value = EvalPrimAs(n->arg(1), var.dtype());
    PrimExpr body = EvalPrim(n->arg(2));
    Var bound = tvm::ffi::GetRef<Var>(v);
    return Of(Guard(n->loc, [&] { return Let(bound, value, body); }), n->loc);
  }
  CheckArgs(n, "T.Let", 1, 1, {"where"});
  const Node* where = n->keyword("where");
  if (!where || where->kind != NodeKind::kDict) {
    Fail(n->loc, "T.Let needs where={var: value}");
  }
  PushScope();
  std::vector<std::pair<Var, PrimExpr>> bindings;
  for (size_t i = 0; i + 1 < where->kids.size(); i += 2) {
    const Node* key = where->kid(i);
    if (key->kind != NodeKind::kName || IsReserved(key->text)) {
      PopScope();
      Fail(key->loc, "the keys of T.Let's where= must be names");
    }
    PrimExpr value = EvalPrim(where->kid(i + 1));
    Var v(key->text, value.dtype());
    BindVar(key->text, v);
    bindings.emplace_back(v, value);
  }
  PrimExpr body = EvalPrim(n->arg(0));
  PopScope();
  for (auto it = bindings.rbegin(); it != bindings.rend(); ++it) {
    body = Guard(n->loc, [&] { return Let(it->first, it->second, body); });
  }
  if (bindings.empty()) Fail(where->loc, "T.Let needs at least one binding");
  return Of(body, n->loc);
}

}  // namespace parser
}  // namespace ir
}  // namespace tessel
