// Expression helpers: build an expression the way a user means it. Unlike the node constructors,
// these (1) promote operand types by TVM's rules, (2) fold constants exactly for the dtype (integer
// results wrap modulo 2^bits; a constant division by zero is an error, never folded), and (3)
// apply identities that hold for every value (x + 0, x * 1, and x * 0 for integers).
//
// Promotion (TVM's BinaryOpMatchTypes): a scalar is broadcast to the other side's lanes; an integer
// side is cast to the float side's type; two integers of one signedness widen to the wider; int and
// uint of different widths widen to the wider type, and of equal width become the uint type.
// An integer constant (IntImm) operand takes the other side's dtype instead of promoting it.
#ifndef TESSEL_IR_OPS_H_
#define TESSEL_IR_OPS_H_

#include <tessel/ir/expr.h>

#include <functional>
#include <utility>

namespace tessel {
namespace ir {

PrimExpr cast(DataType dtype, PrimExpr value);
PrimExpr add(PrimExpr a, PrimExpr b);
PrimExpr sub(PrimExpr a, PrimExpr b);
PrimExpr mul(PrimExpr a, PrimExpr b);
PrimExpr neg(PrimExpr a);
// Truncating division and remainder (C semantics).
PrimExpr truncdiv(PrimExpr a, PrimExpr b);
PrimExpr truncmod(PrimExpr a, PrimExpr b);
// Division for floats; truncdiv for integers (as T.Div).
PrimExpr div(PrimExpr a, PrimExpr b);
PrimExpr floordiv(PrimExpr a, PrimExpr b);
PrimExpr floormod(PrimExpr a, PrimExpr b);
PrimExpr min(PrimExpr a, PrimExpr b);
PrimExpr max(PrimExpr a, PrimExpr b);
PrimExpr eq(PrimExpr a, PrimExpr b);
PrimExpr ne(PrimExpr a, PrimExpr b);
PrimExpr lt(PrimExpr a, PrimExpr b);
PrimExpr le(PrimExpr a, PrimExpr b);
PrimExpr gt(PrimExpr a, PrimExpr b);
PrimExpr ge(PrimExpr a, PrimExpr b);
PrimExpr logical_and(PrimExpr a, PrimExpr b);
PrimExpr logical_or(PrimExpr a, PrimExpr b);
PrimExpr logical_not(PrimExpr a);
PrimExpr select(PrimExpr cond, PrimExpr t, PrimExpr f);
PrimExpr if_then_else(PrimExpr cond, PrimExpr t, PrimExpr f);
PrimExpr shift_left(PrimExpr a, PrimExpr b);
PrimExpr shift_right(PrimExpr a, PrimExpr b);
PrimExpr bitwise_and(PrimExpr a, PrimExpr b);
PrimExpr bitwise_or(PrimExpr a, PrimExpr b);
PrimExpr bitwise_xor(PrimExpr a, PrimExpr b);
PrimExpr bitwise_not(PrimExpr a);

// The terms of the nested Adds of `e` for which `pick` holds, summed, and the others, summed; each
// undefined when there is none (e itself is one term when it is not an Add).
std::pair<PrimExpr, PrimExpr> PartitionTerms(const PrimExpr& e,
                                             const std::function<bool(const PrimExpr&)>& pick);

// Wraps v to the range of the integer dtype t (two's complement); bool gives v != 0.
int64_t WrapToDType(DataType t, __int128 v);
// Whether v is representable in the integer dtype t.
bool FitsInDType(DataType t, __int128 v);

inline PrimExpr operator+(PrimExpr a, PrimExpr b) { return add(std::move(a), std::move(b)); }
inline PrimExpr operator-(PrimExpr a, PrimExpr b) { return sub(std::move(a), std::move(b)); }
inline PrimExpr operator-(PrimExpr a) { return neg(std::move(a)); }
inline PrimExpr operator*(PrimExpr a, PrimExpr b) { return mul(std::move(a), std::move(b)); }
inline PrimExpr operator<(PrimExpr a, PrimExpr b) { return lt(std::move(a), std::move(b)); }
inline PrimExpr operator<=(PrimExpr a, PrimExpr b) { return le(std::move(a), std::move(b)); }
inline PrimExpr operator>(PrimExpr a, PrimExpr b) { return gt(std::move(a), std::move(b)); }
inline PrimExpr operator>=(PrimExpr a, PrimExpr b) { return ge(std::move(a), std::move(b)); }
inline PrimExpr operator&&(PrimExpr a, PrimExpr b) {
  return logical_and(std::move(a), std::move(b));
}
inline PrimExpr operator||(PrimExpr a, PrimExpr b) {
  return logical_or(std::move(a), std::move(b));
}
inline PrimExpr operator!(PrimExpr a) { return logical_not(std::move(a)); }
inline PrimExpr operator&(PrimExpr a, PrimExpr b) {
  return bitwise_and(std::move(a), std::move(b));
}
inline PrimExpr operator|(PrimExpr a, PrimExpr b) { return bitwise_or(std::move(a), std::move(b)); }
inline PrimExpr operator^(PrimExpr a, PrimExpr b) {
  return bitwise_xor(std::move(a), std::move(b));
}
inline PrimExpr operator~(PrimExpr a) { return bitwise_not(std::move(a)); }
inline PrimExpr operator<<(PrimExpr a, PrimExpr b) {
  return shift_left(std::move(a), std::move(b));
}
inline PrimExpr operator>>(PrimExpr a, PrimExpr b) {
  return shift_right(std::move(a), std::move(b));
}

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_OPS_H_
