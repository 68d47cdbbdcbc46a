// Expression helpers: type promotion, exact constant folding, and always-true identities.
#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>

#include <cmath>

namespace tessel {
namespace ir {
namespace {

using i128 = __int128;

const IntImmNode* AsInt(const PrimExpr& e) { return e.as<IntImmNode>(); }
const FloatImmNode* AsFloat(const PrimExpr& e) { return e.as<FloatImmNode>(); }

// Makes a and b the same dtype (TVM's BinaryOpMatchTypes, with constants adopting the other side).
void MatchTypes(const char* op, PrimExpr* a, PrimExpr* b) {
  if (!a->defined() || !b->defined()) TVM_FFI_THROW(ValueError) << op << ": undefined operand";
  DataType ta = a->dtype(), tb = b->dtype();
  if (ta == tb) return;
  // Scalar constants adopt the other side's element type, as when the user writes `x + 1`.
  auto adopt = [](PrimExpr* c, DataType t) -> bool {
    if (const auto* i = AsInt(*c)) {
      if (t.is_floating()) {
        *c = FloatImm(t.element_of(), static_cast<double>(i->value));
      } else if ((t.is_int_or_uint() || t.is_bool()) && FitsInDType(t.element_of(), i->value)) {
        *c = IntImm(t.element_of(), i->value);
      } else {
        return false;
      }
      return true;
    }
    if (const auto* f = AsFloat(*c)) {
      if (!t.is_floating()) return false;
      *c = FloatImm(t.element_of(), f->value);
      return true;
    }
    return false;
  };
  if (ta.element_of() != tb.element_of()) {
    if (AsInt(*a) || AsFloat(*a)) {
      if (!(AsFloat(*a) && !tb.is_floating()) && adopt(a, tb)) ta = a->dtype();
    } else if (AsInt(*b) || AsFloat(*b)) {
      if (!(AsFloat(*b) && !ta.is_floating()) && adopt(b, ta)) tb = b->dtype();
    }
  }
  if (ta.lanes() != tb.lanes()) {
    if (ta.lanes() == 1) {
      *a = Broadcast(*a, tb.lanes());
    } else if (tb.lanes() == 1) {
      *b = Broadcast(*b, ta.lanes());
    } else {
      TVM_FFI_THROW(TypeError) << op << ": lanes differ: " << ta << " vs " << tb;
    }
    ta = a->dtype();
    tb = b->dtype();
  }
  if (ta == tb) return;
  if (ta.is_handle() || tb.is_handle()) {
    TVM_FFI_THROW(TypeError) << op << ": cannot combine " << ta << " and " << tb;
  }
  if (ta.is_floating() && !tb.is_floating()) {
    *b = cast(ta, *b);
  } else if (!ta.is_floating() && tb.is_floating()) {
    *a = cast(tb, *a);
  } else if (ta.is_floating() && tb.is_floating()) {
    if (ta.bits() >= tb.bits())
      *b = cast(ta, *b);
    else
      *a = cast(tb, *a);
  } else if (ta.code() == tb.code() || ta.is_bool() || tb.is_bool()) {
    if (ta.bits() < tb.bits())
      *a = cast(tb, *a);
    else
      *b = cast(ta, *b);
  } else {
    // int vs uint
    if (ta.bits() < tb.bits()) {
      *a = cast(tb, *a);
    } else if (ta.bits() > tb.bits()) {
      *b = cast(ta, *b);
    } else if (ta.is_uint()) {
      *b = cast(ta, *b);
    } else {
      *a = cast(tb, *a);
    }
  }
}

bool IsConstValue(const PrimExpr& e, int64_t v) {
  if (const auto* i = AsInt(e)) return i->value == v;
  if (const auto* f = AsFloat(e)) return f->value == static_cast<double>(v);
  if (const auto* b = e.as<BroadcastNode>()) return IsConstValue(b->value, v);
  return false;
}

PrimExpr IntResult(DataType t, i128 v) { return IntImm(t, WrapToDType(t, v)); }

i128 FloorDivI(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

void CheckNonZeroDivisor(const char* op, const PrimExpr& b) {
  if (const auto* i = AsInt(b)) {
    if (i->value == 0) TVM_FFI_THROW(ValueError) << op << ": division by constant zero";
  }
}

}  // namespace

bool FitsInDType(DataType t, i128 v) {
  if (t.is_bool()) return v == 0 || v == 1;
  if (t.code() == DataType::kUInt) {
    if (v < 0) return false;
    return t.bits() >= 64 ? v <= (static_cast<i128>(1) << 64) - 1
                          : v <= (static_cast<i128>(1) << t.bits()) - 1;
  }
  return v >= t.min_int() && v <= t.max_int();
}

std::pair<PrimExpr, PrimExpr> PartitionTerms(const PrimExpr& e,
                                             const std::function<bool(const PrimExpr&)>& pick) {
  PrimExpr picked, rest;
  std::function<void(const PrimExpr&)> walk = [&](const PrimExpr& x) {
    if (const auto* a = x.as<AddNode>()) {
      walk(a->a);
      walk(a->b);
      return;
    }
    PrimExpr& into = pick(x) ? picked : rest;
    into = into.defined() ? add(into, x) : x;
  };
  walk(e);
  return {picked, rest};
}

int64_t WrapToDType(DataType t, i128 v) {
  if (t.is_bool()) return v != 0;
  int bits = t.bits();
  unsigned __int128 mask = bits >= 128 ? ~static_cast<unsigned __int128>(0)
                                       : ((static_cast<unsigned __int128>(1) << bits) - 1);
  unsigned __int128 u = static_cast<unsigned __int128>(v) & mask;
  if (t.code() == DataType::kInt && bits < 128 && (u >> (bits - 1)) & 1) {
    return static_cast<int64_t>(static_cast<i128>(u) - (static_cast<i128>(1) << bits));
  }
  // uint64 values above INT64_MAX keep their bit pattern in the int64 field.
  return static_cast<int64_t>(static_cast<uint64_t>(u));
}

PrimExpr cast(DataType t, PrimExpr value) {
  if (!value.defined()) TVM_FFI_THROW(ValueError) << "cast: undefined value";
  if (value.dtype() == t) return value;
  if (t.is_vector() && value.dtype().is_scalar()) {
    return Broadcast(cast(t.element_of(), std::move(value)), t.lanes());
  }
  if (const auto* b = value.as<BroadcastNode>()) {
    return Broadcast(cast(t.element_of(), b->value), b->lanes);
  }
  if (t.is_scalar()) {
    if (const auto* i = AsInt(value)) {
      if (t.is_int_or_uint() || t.is_bool()) return IntImm(t, WrapToDType(t, i->value));
      if (t.is_floating()) return FloatImm(t, static_cast<double>(i->value));
    }
    if (const auto* f = AsFloat(value)) {
      if (t.is_floating()) return FloatImm(t, f->value);
    }
  }
  return Cast(t, std::move(value));
}

PrimExpr add(PrimExpr a, PrimExpr b) {
  MatchTypes("add", &a, &b);
  DataType t = a.dtype();
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) return IntResult(t, static_cast<i128>(x->value) + y->value);
  }
  if (const auto* x = AsFloat(a)) {
    if (const auto* y = AsFloat(b)) return FloatImm(t, x->value + y->value);
  }
  if (IsConstValue(a, 0)) return b;
  if (IsConstValue(b, 0)) return a;
  return Add(a, b);
}

PrimExpr sub(PrimExpr a, PrimExpr b) {
  MatchTypes("sub", &a, &b);
  DataType t = a.dtype();
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) return IntResult(t, static_cast<i128>(x->value) - y->value);
  }
  if (const auto* x = AsFloat(a)) {
    if (const auto* y = AsFloat(b)) return FloatImm(t, x->value - y->value);
  }
  if (IsConstValue(b, 0)) return a;
  return Sub(a, b);
}

PrimExpr mul(PrimExpr a, PrimExpr b) {
  MatchTypes("mul", &a, &b);
  DataType t = a.dtype();
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) return IntResult(t, static_cast<i128>(x->value) * y->value);
  }
  if (const auto* x = AsFloat(a)) {
    if (const auto* y = AsFloat(b)) return FloatImm(t, x->value * y->value);
  }
  if (IsConstValue(a, 1)) return b;
  if (IsConstValue(b, 1)) return a;
  // x * 0 = 0 only for integers: for floats NaN * 0 and inf * 0 are NaN.
  if (t.is_int_or_uint() && (IsConstValue(a, 0) || IsConstValue(b, 0))) return MakeConst(t, 0);
  return Mul(a, b);
}

PrimExpr neg(PrimExpr a) {
  if (!a.defined()) TVM_FFI_THROW(ValueError) << "neg: undefined operand";
  if (const auto* x = AsInt(a)) return IntResult(a.dtype(), -static_cast<i128>(x->value));
  if (const auto* x = AsFloat(a)) return FloatImm(a.dtype(), -x->value);
  return sub(MakeConst(a.dtype(), 0), a);
}

PrimExpr truncdiv(PrimExpr a, PrimExpr b) {
  MatchTypes("truncdiv", &a, &b);
  CheckNonZeroDivisor("truncdiv", b);
  DataType t = a.dtype();
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) return IntResult(t, static_cast<i128>(x->value) / y->value);
  }
  if (IsConstValue(b, 1) && t.is_int_or_uint()) return a;
  return Div(a, b);
}

PrimExpr truncmod(PrimExpr a, PrimExpr b) {
  MatchTypes("truncmod", &a, &b);
  CheckNonZeroDivisor("truncmod", b);
  DataType t = a.dtype();
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) return IntResult(t, static_cast<i128>(x->value) % y->value);
  }
  if (IsConstValue(b, 1) && t.is_int_or_uint()) return MakeConst(t, 0);
  return Mod(a, b);
}

PrimExpr div(PrimExpr a, PrimExpr b) {
  MatchTypes("div", &a, &b);
  if (a.dtype().is_floating()) {
    if (const auto* x = AsFloat(a)) {
      if (const auto* y = AsFloat(b)) {
        if (y->value != 0) return FloatImm(a.dtype(), x->value / y->value);
      }
    }
    return Div(a, b);
  }
  return truncdiv(a, b);
}

PrimExpr floordiv(PrimExpr a, PrimExpr b) {
  MatchTypes("floordiv", &a, &b);
  CheckNonZeroDivisor("floordiv", b);
  DataType t = a.dtype();
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) return IntResult(t, FloorDivI(x->value, y->value));
  }
  if (IsConstValue(b, 1) && t.is_int_or_uint()) return a;
  return FloorDiv(a, b);
}

PrimExpr floormod(PrimExpr a, PrimExpr b) {
  MatchTypes("floormod", &a, &b);
  CheckNonZeroDivisor("floormod", b);
  DataType t = a.dtype();
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) {
      i128 q = FloorDivI(x->value, y->value);
      return IntResult(t, static_cast<i128>(x->value) - q * y->value);
    }
  }
  if (IsConstValue(b, 1) && t.is_int_or_uint()) return MakeConst(t, 0);
  return FloorMod(a, b);
}

PrimExpr min(PrimExpr a, PrimExpr b) {
  MatchTypes("min", &a, &b);
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) return x->value <= y->value ? a : b;
  }
  if (a.same_as(b)) return a;
  return Min(a, b);
}

PrimExpr max(PrimExpr a, PrimExpr b) {
  MatchTypes("max", &a, &b);
  if (const auto* x = AsInt(a)) {
    if (const auto* y = AsInt(b)) return x->value >= y->value ? a : b;
  }
  if (a.same_as(b)) return a;
  return Max(a, b);
}

#define TESSEL_DEFINE_CMP_HELPER(fname, Node, OP)                        \
  PrimExpr fname(PrimExpr a, PrimExpr b) {                               \
    MatchTypes(#fname, &a, &b);                                          \
    if (const auto* x = AsInt(a)) {                                      \
      if (const auto* y = AsInt(b)) return Bool(x->value OP y->value);   \
    }                                                                    \
    if (const auto* x = AsFloat(a)) {                                    \
      if (const auto* y = AsFloat(b)) return Bool(x->value OP y->value); \
    }                                                                    \
    return Node(a, b);                                                   \
  }
TESSEL_DEFINE_CMP_HELPER(eq, EQ, ==)
TESSEL_DEFINE_CMP_HELPER(ne, NE, !=)
TESSEL_DEFINE_CMP_HELPER(lt, LT, <)
TESSEL_DEFINE_CMP_HELPER(le, LE, <=)
TESSEL_DEFINE_CMP_HELPER(gt, GT, >)
TESSEL_DEFINE_CMP_HELPER(ge, GE, >=)
#undef TESSEL_DEFINE_CMP_HELPER

PrimExpr logical_and(PrimExpr a, PrimExpr b) {
  MatchTypes("logical_and", &a, &b);
  if (const auto* x = AsInt(a)) return x->value ? b : a;
  if (const auto* y = AsInt(b)) return y->value ? a : b;
  return And(a, b);
}

PrimExpr logical_or(PrimExpr a, PrimExpr b) {
  MatchTypes("logical_or", &a, &b);
  if (const auto* x = AsInt(a)) return x->value ? a : b;
  if (const auto* y = AsInt(b)) return y->value ? b : a;
  return Or(a, b);
}

PrimExpr logical_not(PrimExpr a) {
  if (!a.defined()) TVM_FFI_THROW(ValueError) << "logical_not: undefined operand";
  if (const auto* x = AsInt(a)) return Bool(!x->value);
  return Not(a);
}

PrimExpr select(PrimExpr cond, PrimExpr t, PrimExpr f) {
  MatchTypes("select", &t, &f);
  if (const auto* c = AsInt(cond)) return c->value ? t : f;
  return Select(cond, t, f);
}

PrimExpr if_then_else(PrimExpr cond, PrimExpr t, PrimExpr f) {
  MatchTypes("if_then_else", &t, &f);
  if (const auto* c = AsInt(cond)) return c->value ? t : f;
  return Call(t.dtype(), builtin::if_then_else(), {cond, t, f});
}

namespace {
void CheckIntegerOperand(const char* op, const PrimExpr& a) {
  if (!a.dtype().is_int_or_uint() && !a.dtype().is_bool()) {
    TVM_FFI_THROW(TypeError) << op << ": operands must be integers, got " << a.dtype();
  }
}
}  // namespace

PrimExpr shift_left(PrimExpr a, PrimExpr b) {
  MatchTypes("shift_left", &a, &b);
  CheckIntegerOperand("shift_left", a);
  const auto* x = AsInt(a);
  const auto* y = AsInt(b);
  if (x && y && y->value >= 0 && y->value < a.dtype().bits()) {
    // Shift the bit pattern unsigned: shifting a negative signed value is undefined in C++17.
    unsigned __int128 bits = static_cast<unsigned __int128>(static_cast<i128>(x->value));
    return IntResult(a.dtype(), static_cast<i128>(bits << y->value));
  }
  return Call(a.dtype(), builtin::shift_left(), {a, b});
}

PrimExpr shift_right(PrimExpr a, PrimExpr b) {
  MatchTypes("shift_right", &a, &b);
  CheckIntegerOperand("shift_right", a);
  const auto* x = AsInt(a);
  const auto* y = AsInt(b);
  if (x && y && y->value >= 0 && y->value < a.dtype().bits()) {
    // Arithmetic on signed, logical on unsigned: both are floor(x / 2^y) of the stored value.
    return IntResult(a.dtype(), static_cast<i128>(x->value) >> y->value);
  }
  return Call(a.dtype(), builtin::shift_right(), {a, b});
}

#define TESSEL_DEFINE_BITWISE(fname, OP)                                               \
  PrimExpr fname(PrimExpr a, PrimExpr b) {                                             \
    MatchTypes(#fname, &a, &b);                                                        \
    CheckIntegerOperand(#fname, a);                                                    \
    if (const auto* x = AsInt(a)) {                                                    \
      if (const auto* y = AsInt(b)) return IntResult(a.dtype(), x->value OP y->value); \
    }                                                                                  \
    return Call(a.dtype(), builtin::fname(), {a, b});                                  \
  }
TESSEL_DEFINE_BITWISE(bitwise_and, &)
TESSEL_DEFINE_BITWISE(bitwise_or, |)
TESSEL_DEFINE_BITWISE(bitwise_xor, ^)
#undef TESSEL_DEFINE_BITWISE

PrimExpr bitwise_not(PrimExpr a) {
  if (!a.defined()) TVM_FFI_THROW(ValueError) << "bitwise_not: undefined operand";
  CheckIntegerOperand("bitwise_not", a);
  if (const auto* x = AsInt(a)) return IntResult(a.dtype(), ~x->value);
  return Call(a.dtype(), builtin::bitwise_not(), {a});
}

Range Range::FromMinEnd(PrimExpr begin, PrimExpr end) {
  PrimExpr extent = sub(end, begin);
  return Range(begin.dtype() == extent.dtype() ? begin : cast(extent.dtype(), begin), extent);
}

}  // namespace ir
}  // namespace tessel
