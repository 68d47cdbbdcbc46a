// Evaluation of expression trees: names, literals and their dtype adoption, operators,
// subscripts, and the plain data (dicts, lists, strings) that attributes carry.
#include <tessel/ir/builtin.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "ir/parser/parser_impl.h"

namespace tessel {
namespace ir {
namespace parser {

const Binding* Parser::Lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end()) return &found->second;
  }
  return nullptr;
}

Operand Parser::Of(PrimExpr e, Loc loc) {
  Operand op;
  op.expr = std::move(e);
  op.loc = loc;
  return op;
}

std::optional<int64_t> Parser::LiteralValue(const Operand& op) const {
  constexpr uint64_t kMaxPos = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (op.negative) {
    if (op.magnitude <= kMaxPos) return -static_cast<int64_t>(op.magnitude);
    if (op.magnitude == kMaxPos + 1) return std::numeric_limits<int64_t>::min();
    return std::nullopt;
  }
  if (op.magnitude <= kMaxPos) return static_cast<int64_t>(op.magnitude);
  return std::nullopt;
}

PrimExpr Parser::Materialize(const Operand& op) {
  if (op.lit == Operand::kFloat) {
    return FloatImm(DataType::Float(32), op.float_value);
  }
  if (op.lit == Operand::kInt) {
    auto v = LiteralValue(op);
    if (!v || *v < std::numeric_limits<int32_t>::min() ||
        *v > std::numeric_limits<int32_t>::max()) {
      std::string text = (op.negative ? "-" : "") + std::to_string(op.magnitude);
      Fail(op.loc,
           "integer literal " + text + " does not fit in int32; write T.int64(" + text + ")");
    }
    return IntImm(DataType::Int(32), *v);
  }
  return op.expr;
}

PrimExpr Parser::AdoptOrDefault(const Operand& op, DataType t) {
  if (op.lit == Operand::kNone || !t.is_scalar()) return Materialize(op);
  if (op.lit == Operand::kInt && (t.is_int_or_uint() || t.is_floating())) {
    auto v = LiteralValue(op);
    if (!v) Fail(op.loc, "integer literal does not fit in " + t.str());
    if (t.is_floating()) return FloatImm(t, static_cast<double>(*v));
    return Guard(op.loc, [&] { return IntImm(t, *v); });
  }
  if (op.lit == Operand::kFloat && t.is_floating()) return FloatImm(t, op.float_value);
  return Materialize(op);
}

void Parser::Unify(Operand* a, Operand* b, Loc loc, const std::string& what) {
  bool la = a->lit != Operand::kNone, lb = b->lit != Operand::kNone;
  if (la && lb) {
    // Two literals: an int literal next to a float literal becomes float32, as in Python.
    bool any_float = a->lit == Operand::kFloat || b->lit == Operand::kFloat;
    DataType t = any_float ? DataType::Float(32) : DataType::Int(32);
    a->expr = AdoptOrDefault(*a, t);
    b->expr = AdoptOrDefault(*b, t);
  } else if (la) {
    a->expr = AdoptOrDefault(*a, b->expr.dtype());
  } else if (lb) {
    b->expr = AdoptOrDefault(*b, a->expr.dtype());
  }
  a->lit = b->lit = Operand::kNone;
  if (a->expr.dtype() != b->expr.dtype()) {
    Fail(loc, "operands of " + what + " have different dtypes: " + a->expr.dtype().str() + " and " +
                  b->expr.dtype().str() + "; convert one with T.Cast");
  }
}

Operand Parser::Eval(const Node* n) {
  switch (n->kind) {
    case NodeKind::kName:
      return EvalName(n);
    case NodeKind::kInt: {
      Operand op;
      op.lit = Operand::kInt;
      op.magnitude = n->int_value;
      op.loc = n->loc;
      return op;
    }
    case NodeKind::kFloat: {
      Operand op;
      op.lit = Operand::kFloat;
      op.float_value = n->float_value;
      op.loc = n->loc;
      return op;
    }
    case NodeKind::kString:
      return Of(StringImm(n->text), n->loc);
    case NodeKind::kBool:
      return Of(IntImm(DataType::Bool(), static_cast<int64_t>(n->int_value)), n->loc);
    case NodeKind::kNone:
      Fail(n->loc, "None is not a value here");
    case NodeKind::kAttr:
      return EvalAttr(n);
    case NodeKind::kCall:
      return EvalCall(n);
    case NodeKind::kSubscript:
      return EvalSubscript(n);
    case NodeKind::kSlice:
      Fail(n->loc, "a slice is only allowed inside a subscript");
    case NodeKind::kTuple:
    case NodeKind::kList:
      Fail(n->loc, "expected an expression, found a tuple or list");
    case NodeKind::kDict:
      Fail(n->loc, "expected an expression, found a dictionary");
    case NodeKind::kBinary:
      return EvalBinary(n);
    case NodeKind::kCompare:
      return EvalCompare(n);
    case NodeKind::kUnary:
      return EvalUnary(n);
    case NodeKind::kAnd:
    case NodeKind::kOr: {
      PrimExpr a = EvalPrim(n->kid(0));
      PrimExpr b = EvalPrim(n->kid(1));
      const char* word = n->kind == NodeKind::kAnd ? "'and'" : "'or'";
      if (!a.dtype().is_bool() || !b.dtype().is_bool()) {
        Fail(n->loc, std::string("operands of ") + word + " must be bool, got " + a.dtype().str() +
                         " and " + b.dtype().str());
      }
      if (n->kind == NodeKind::kAnd) return Of(Guard(n->loc, [&] { return And(a, b); }), n->loc);
      return Of(Guard(n->loc, [&] { return Or(a, b); }), n->loc);
    }
    case NodeKind::kNot: {
      PrimExpr a = EvalPrim(n->kid(0));
      return Of(Guard(n->loc, [&] { return Not(a); }), n->loc);
    }
  }
  Fail(n->loc, "unsupported expression");
}

Operand Parser::EvalName(const Node* n) { return EvalNamed(n->text, n->loc); }

Operand Parser::EvalNamed(const std::string& name, Loc loc) {
  if (const Binding* b = Lookup(name)) {
    if (b->var.defined()) return Of(b->var, loc);
    Fail(loc, "'" + name + "' is a buffer, not a value; index it, as in " + name + "[i]");
  }
  if (const Any* v = GivenValue(name)) return OperandOfValue(name, *v, loc);
  if (declare_unknown_as_) {
    DataType t = *declare_unknown_as_;
    bool size_var = false;
    auto later = later_decls_.find(name);
    if (later != later_decls_.end()) std::tie(t, size_var) = later->second;
    Var v = size_var ? Guard(loc, [&]() -> Var { return SizeVar(name, t); })
                     : Guard(loc, [&] { return Var(name, t); });
    BindVar(name, v);
    shape_declared_.insert(v.get());
    return Of(v, loc);
  }
  if (name == "T" || name == "I") Fail(loc, "'" + name + "' must be followed by '.'");
  Fail(loc, "unknown name '" + name + "'");
}

const Any* Parser::GivenValue(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Operand Parser::OperandOfValue(const std::string& name, const Any& value, Loc loc) {
  // An int or a float stays a literal, so that it adopts the other operand's dtype exactly as if
  // its digits were written in place of the name.
  if (auto b = value.as<bool>()) return Of(IntImm(DataType::Bool(), *b ? 1 : 0), loc);
  if (auto i = value.as<int64_t>()) {
    Operand op;
    op.lit = Operand::kInt;
    op.negative = *i < 0;
    op.magnitude = *i < 0 ? 0 - static_cast<uint64_t>(*i) : static_cast<uint64_t>(*i);
    op.given = true;
    op.loc = loc;
    return op;
  }
  if (auto f = value.as<double>()) {
    Operand op;
    op.lit = Operand::kFloat;
    op.float_value = *f;
    op.given = true;
    op.loc = loc;
    return op;
  }
  if (auto e = value.as<PrimExpr>()) return Of(*e, loc);
  std::string what = value.GetTypeKey();
  if (value.as<String>() || value.as<DataType>()) what = "a string";
  if (value.as<Buffer>()) what = "a buffer";
  Fail(loc, "'" + name + "' is " + what + ", not a value");
}

Operand Parser::EvalAttr(const Node* n) {
  const Node* obj = n->kid(0);
  if (obj->kind == NodeKind::kName) {
    const Binding* b = Lookup(obj->text);
    if (b && b->buffer.defined()) {
      if (n->text == "data") return Of(b->buffer->data, n->loc);
      if (n->text == "elem_offset") return Of(b->buffer->elem_offset, n->loc);
      Fail(n->loc, "buffer attribute '" + n->text + "' is not an expression here");
    }
  }
  std::string dotted = DottedName(n);
  if (dotted.rfind("T.", 0) == 0) {
    Fail(n->loc, "'" + dotted + "' is not a value; did you mean to call it?");
  }
  Fail(n->loc, "unsupported attribute '" + n->text + "'");
}

Operand Parser::EvalSubscript(const Node* n) {
  const Node* obj = n->kid(0);
  // A.shape[i] / A.strides[i]
  if (obj->kind == NodeKind::kAttr && (obj->text == "shape" || obj->text == "strides") &&
      obj->kid(0)->kind == NodeKind::kName) {
    Buffer buf = EvalBufferRef(obj->kid(0), "an attribute access");
    const Array<PrimExpr>& arr = obj->text == "shape" ? buf->shape : buf->strides;
    if (n->kids.size() != 2) Fail(n->loc, "expected one index into " + obj->text);
    int64_t i = EvalConstInt(n->kid(1), "an index into the shape");
    if (i < 0 || i >= static_cast<int64_t>(arr.size())) {
      Fail(n->kid(1)->loc, "index " + std::to_string(i) + " is out of range for " + obj->text);
    }
    return Of(arr[i], n->loc);
  }
  Buffer buf = EvalBufferRef(obj, "a load");
  Array<PrimExpr> indices = EvalIndices(buf, n);
  return Of(Guard(n->loc, [&] { return BufferLoad(buf, indices); }), n->loc);
}

std::optional<Operand> Parser::FoldGiven(const Operand& a, const Operand& b, const std::string& op,
                                         Loc loc) const {
  if (!(a.given || b.given) || a.lit == Operand::kNone || b.lit == Operand::kNone) {
    return std::nullopt;
  }
  Operand r;
  r.given = true;
  r.loc = loc;
  if (a.lit == Operand::kInt && b.lit == Operand::kInt && op != "/") {
    auto x = LiteralValue(a), y = LiteralValue(b);
    if (!x || !y) return std::nullopt;
    int64_t v = 0;
    bool overflow = false;
    if (op == "+") {
      overflow = __builtin_add_overflow(*x, *y, &v);
    } else if (op == "-") {
      overflow = __builtin_sub_overflow(*x, *y, &v);
    } else if (op == "*") {
      overflow = __builtin_mul_overflow(*x, *y, &v);
    } else if (op == "//" || op == "%") {
      // Python's floor division and remainder; by zero (and the one overflowing quotient) stay
      // IR, for the verifier to report.
      if (*y == 0 || (*x == std::numeric_limits<int64_t>::min() && *y == -1)) return std::nullopt;
      int64_t q = *x / *y, m = *x % *y;
      if (m != 0 && ((m < 0) != (*y < 0))) {
        q -= 1;
        m += *y;
      }
      v = op == "//" ? q : m;
    } else {
      return std::nullopt;
    }
    if (overflow) return std::nullopt;
    r.lit = Operand::kInt;
    r.negative = v < 0;
    r.magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    return r;
  }
  auto as_double = [&](const Operand& o) -> std::optional<double> {
    if (o.lit == Operand::kFloat) return o.float_value;
    auto v = LiteralValue(o);
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  };
  auto x = as_double(a), y = as_double(b);
  if (!x || !y) return std::nullopt;
  double v;
  if (op == "+") {
    v = *x + *y;
  } else if (op == "-") {
    v = *x - *y;
  } else if (op == "*") {
    v = *x * *y;
  } else if (op == "/" && *y != 0) {
    v = *x / *y;
  } else {
    return std::nullopt;
  }
  r.lit = Operand::kFloat;
  r.float_value = v;
  return r;
}

Operand Parser::EvalBinary(const Node* n) {
  Operand a = Eval(n->kid(0));
  Operand b = Eval(n->kid(1));
  const std::string& op = n->text;
  if (auto folded = FoldGiven(a, b, op, n->loc)) return *folded;
  Unify(&a, &b, n->loc, "'" + op + "'");
  PrimExpr x = a.expr, y = b.expr;
  auto make = [&]() -> PrimExpr {
    if (op == "+") return Add(x, y);
    if (op == "-") return Sub(x, y);
    if (op == "*") return Mul(x, y);
    if (op == "//") return FloorDiv(x, y);
    if (op == "%") return FloorMod(x, y);
    if (op == "/") {
      if (!x.dtype().is_floating()) {
        Fail(n->loc, "'/' is only defined on floats, got " + x.dtype().str() +
                         "; use '//' (floor division) or T.truncdiv");
      }
      return Div(x, y);
    }
    const Op* bit = nullptr;
    if (op == "&") bit = &builtin::bitwise_and();
    if (op == "|") bit = &builtin::bitwise_or();
    if (op == "^") bit = &builtin::bitwise_xor();
    if (op == "<<") bit = &builtin::shift_left();
    if (op == ">>") bit = &builtin::shift_right();
    if (!bit) Fail(n->loc, "unsupported operator '" + op + "'");
    if (!x.dtype().element_of().is_int_or_uint() && !x.dtype().is_bool()) {
      Fail(n->loc, "'" + op + "' needs integer operands, got " + x.dtype().str());
    }
    return Call(x.dtype(), *bit, {x, y});
  };
  return Of(Guard(n->loc, make), n->loc);
}

Operand Parser::EvalCompare(const Node* n) {
  Operand a = Eval(n->kid(0));
  Operand b = Eval(n->kid(1));
  const std::string& op = n->text;
  Unify(&a, &b, n->loc, "'" + op + "'");
  PrimExpr x = a.expr, y = b.expr;
  auto make = [&]() -> PrimExpr {
    if (op == "<") return LT(x, y);
    if (op == "<=") return LE(x, y);
    if (op == ">") return GT(x, y);
    if (op == ">=") return GE(x, y);
    if (op == "==") return EQ(x, y);
    return NE(x, y);
  };
  return Of(Guard(n->loc, make), n->loc);
}

Operand Parser::EvalUnary(const Node* n) {
  Operand a = Eval(n->kid(0));
  if (n->text == "+") return a;
  if (n->text == "-") {
    if (a.lit == Operand::kInt) {
      a.negative = !a.negative;
      a.loc = n->loc;
      return a;
    }
    if (a.lit == Operand::kFloat) {
      a.float_value = -a.float_value;
      a.loc = n->loc;
      return a;
    }
    PrimExpr x = a.expr;
    return Of(Guard(n->loc, [&]() -> PrimExpr { return Sub(MakeConst(x.dtype(), 0), x); }), n->loc);
  }
  // "~"
  PrimExpr x = Materialize(a);
  if (!x.dtype().element_of().is_int_or_uint()) {
    Fail(n->loc, "'~' needs an integer operand, got " + x.dtype().str());
  }
  return Of(Guard(n->loc, [&] { return Call(x.dtype(), builtin::bitwise_not(), {x}); }), n->loc);
}

PrimExpr Parser::Extent(const PrimExpr& begin, const PrimExpr& end, Loc loc) {
  if (begin.dtype() != end.dtype()) {
    Fail(loc, "the bounds of a range have different dtypes: " + begin.dtype().str() + " and " +
                  end.dtype().str());
  }
  auto b = AsConstInt(begin);
  if (b && *b == 0 && begin.as<IntImmNode>()) return end;
  auto e = AsConstInt(end);
  if (b && e && begin.as<IntImmNode>() && end.as<IntImmNode>()) {
    return Guard(loc, [&] { return IntImm(end.dtype(), *e - *b); });
  }
  if (const auto* add = end.as<AddNode>()) {
    if (tvm::ffi::StructuralEqual::Equal(add->a, begin)) return add->b;
    if (tvm::ffi::StructuralEqual::Equal(add->b, begin)) return add->a;
  }
  return Guard(loc, [&] { return Sub(end, begin); });
}

Any Parser::EvalAny(const Node* n) {
  switch (n->kind) {
    case NodeKind::kInt:
    case NodeKind::kUnary:
    case NodeKind::kFloat: {
      if (n->kind == NodeKind::kUnary && n->text == "~") break;
      Operand op = Eval(n);
      if (op.lit == Operand::kInt) {
        auto v = LiteralValue(op);
        if (!v) Fail(n->loc, "integer is too large");
        return *v;
      }
      if (op.lit == Operand::kFloat) return op.float_value;
      return op.expr;
    }
    case NodeKind::kString:
      return String(n->text);
    case NodeKind::kBool:
      return n->int_value != 0;
    case NodeKind::kNone:
      return Any();
    case NodeKind::kList:
    case NodeKind::kTuple: {
      Array<Any> items;
      for (const NodePtr& k : n->kids) items.push_back(EvalAny(k.get()));
      return items;
    }
    case NodeKind::kDict:
      return EvalDict(n, "a dictionary");
    default:
      break;
  }
  return EvalPrim(n);
}

Map<String, Any> Parser::EvalDict(const Node* n, const char* what) {
  if (n->kind != NodeKind::kDict) Fail(n->loc, std::string("expected a dictionary for ") + what);
  Map<String, Any> out;
  for (size_t i = 0; i + 1 < n->kids.size(); i += 2) {
    std::string key = EvalString(n->kid(i), "a dictionary key");
    out.Set(key, EvalAny(n->kid(i + 1)));
  }
  return out;
}

std::string Parser::EvalString(const Node* n, const char* what) {
  if (n->kind == NodeKind::kName && !Lookup(n->text)) {
    if (const Any* v = GivenValue(n->text)) {
      if (auto s = v->as<String>()) return *s;
    }
  }
  if (n->kind != NodeKind::kString) {
    Fail(n->loc, std::string("expected a string literal for ") + what);
  }
  return n->text;
}

DataType Parser::EvalDType(const Node* n) {
  std::string text;
  if (n->kind == NodeKind::kString) {
    text = n->text;
  } else if (n->kind == NodeKind::kName && !Lookup(n->text) && GivenValue(n->text)) {
    const Any* v = GivenValue(n->text);
    if (auto t = v->as<DataType>()) return *t;
    auto s = v->as<String>();
    if (!s) Fail(n->loc, "'" + n->text + "' is not a dtype; expected a string such as \"float32\"");
    text = *s;
  } else {
    std::string dotted = DottedName(n);
    if (dotted.rfind("T.", 0) != 0) Fail(n->loc, "expected a dtype string such as \"float32\"");
    text = dotted.substr(2);
  }
  auto t = DataType::Parse(text);
  if (!t) Fail(n->loc, "unknown dtype '" + text + "'");
  return *t;
}

int64_t Parser::EvalConstInt(const Node* n, const char* what) {
  Operand op = Eval(n);
  if (op.lit == Operand::kInt) {
    auto v = LiteralValue(op);
    if (v) return *v;
  }
  if (op.lit == Operand::kNone) {
    if (const auto* imm = op.expr.as<IntImmNode>()) return imm->value;
  }
  Fail(n->loc, std::string("expected an integer constant for ") + what);
}

bool Parser::EvalBoolConst(const Node* n, const char* what) {
  if (n->kind == NodeKind::kBool) return n->int_value != 0;
  Fail(n->loc, std::string("expected True or False for ") + what);
}

}  // namespace parser
}  // namespace ir
}  // namespace tessel
