// An exact evaluator of integer expressions for the soundness fuzzers: it follows the semantics
// of ir/expr.h and ir/builtin.h to the letter (wrap-around modulo 2^bits per dtype, truncating
// Div/Mod, flooring FloorDiv/FloorMod, both Select arms evaluated, only the chosen
// if_then_else arm), over __int128 so that no intermediate overflows in C++.
//
// Values are the mathematical values of their dtype (uint64 in [0, 2^64)). Evaluation gives
// nullopt where the IR leaves the result undefined: division by zero, a shift amount outside
// [0, bits), or a node it does not know.
//
// Semantics::kAssumeNoOverflow evaluates as an Analyzer in assume_no_overflow mode reasons:
// + - * / % floordiv floormod of signed 32/64-bit integers are the mathematical operations
// (no wrap-around; values may leave the dtype), everything else (narrower or unsigned integers,
// casts, shifts, bitwise operations) wraps as in the default semantics. A point at which such an
// operation that is evaluated (both Select arms, only the chosen if_then_else arm, every Let
// value) has an exact value outside its dtype lies outside the mode's domain: out_of_domain()
// says so after the evaluation, and the analyzer's answers need not hold there. The value is
// still computed (nullopt only where an intermediate leaves __int128).
#ifndef TESSEL_TESTS_ARITH_EVAL_H_
#define TESSEL_TESTS_ARITH_EVAL_H_

#include <tessel/ir/builtin.h>
#include <tessel/ir/expr.h>

#include <optional>
#include <unordered_map>

namespace tessel {
namespace testing {

using i128 = __int128;
using Env = std::unordered_map<const ir::VarNode*, i128>;

// v reduced modulo 2^bits into t's range (bool: v != 0).
inline i128 WrapExact(ir::DataType t, i128 v) {
  if (t.is_bool()) return v != 0;
  int bits = t.bits();
  unsigned __int128 u = static_cast<unsigned __int128>(v);
  if (bits < 128) u &= (static_cast<unsigned __int128>(1) << bits) - 1;
  if (t.is_int() && ((u >> (bits - 1)) & 1)) {
    return static_cast<i128>(u) - (static_cast<i128>(1) << bits);
  }
  return static_cast<i128>(u);
}

inline i128 FloorDivExact(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// The integer semantics an ExactEvaluator computes (see the top of the file).
enum class Semantics { kWrap, kAssumeNoOverflow };

// The dtypes whose arithmetic Semantics::kAssumeNoOverflow takes as mathematical: int32, int64.
inline bool NoOverflowType(ir::DataType t) {
  return t.is_int() && (t.bits() == 32 || t.bits() == 64);
}

class ExactEvaluator {
 public:
  explicit ExactEvaluator(Env env, Semantics semantics = Semantics::kWrap)
      : env_(std::move(env)), semantics_(semantics) {}

  std::optional<i128> operator()(const ir::PrimExpr& e) { return Eval(e); }

  // Whether an evaluation so far met an operation that Semantics::kAssumeNoOverflow takes not to
  // overflow with an exact value outside its dtype (always false under Semantics::kWrap).
  bool out_of_domain() const { return out_of_domain_; }

 private:
  // The value of an arithmetic operation (+ - * / % and floor variants) whose exact value is v
  // (nullopt: v left __int128).
  std::optional<i128> Arith(ir::DataType t, std::optional<i128> v) {
    bool exact = semantics_ == Semantics::kAssumeNoOverflow && NoOverflowType(t);
    if (!v) {
      out_of_domain_ = out_of_domain_ || exact;
      return std::nullopt;
    }
    if (exact) {
      int bits = t.bits();
      i128 lo = -(static_cast<i128>(1) << (bits - 1)),
           hi = (static_cast<i128>(1) << (bits - 1)) - 1;
      if (*v < lo || *v > hi) out_of_domain_ = true;
      return v;
    }
    return WrapExact(t, *v);
  }
  static std::optional<i128> CheckedAdd(i128 a, i128 b) {
    i128 r;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
  }
  static std::optional<i128> CheckedSub(i128 a, i128 b) {
    i128 r;
    if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
    return r;
  }
  // The product of operands of t: exact for the mathematical semantics, modulo 2^128 otherwise
  // (WrapExact then keeps the low bits, which is all it needs).
  std::optional<i128> Product(ir::DataType t, i128 a, i128 b) {
    if (semantics_ == Semantics::kAssumeNoOverflow && NoOverflowType(t)) {
      i128 r;
      if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
      return r;
    }
    return static_cast<i128>(static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b));
  }

  std::optional<i128> Eval(const ir::PrimExpr& e) {
    using namespace ir;  // NOLINT(build/namespaces)
    DataType t = e.dtype();
    if (const auto* op = e.as<IntImmNode>()) {
      if (t.is_uint() && t.bits() == 64) return static_cast<i128>(static_cast<uint64_t>(op->value));
      return op->value;
    }
    if (const auto* op = e.as<VarNode>()) {
      auto it = env_.find(op);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    }
    if (const auto* op = e.as<LetNode>()) {
      auto v = Eval(op->value);
      if (!v) return std::nullopt;
      auto old = env_.find(op->var.get());
      std::optional<i128> saved;
      if (old != env_.end()) saved = old->second;
      env_[op->var.get()] = *v;
      auto r = Eval(op->body);
      if (saved) {
        env_[op->var.get()] = *saved;
      } else {
        env_.erase(op->var.get());
      }
      return r;
    }
    if (const auto* op = e.as<CastNode>()) {
      auto v = Eval(op->value);
      if (!v || !(op->value.dtype().is_int_or_uint() || op->value.dtype().is_bool())) {
        return std::nullopt;
      }
      return WrapExact(t, *v);
    }
#define TESSEL_EVAL_BINARY(Node, expr_)  \
  if (const auto* op = e.as<Node>()) {   \
    auto av = Eval(op->a);               \
    auto bv = Eval(op->b);               \
    if (!av || !bv) return std::nullopt; \
    i128 a = *av, b = *bv;               \
    (void)a;                             \
    (void)b;                             \
    expr_;                               \
  }
    TESSEL_EVAL_BINARY(AddNode, return Arith(t, CheckedAdd(a, b)))
    TESSEL_EVAL_BINARY(SubNode, return Arith(t, CheckedSub(a, b)))
    TESSEL_EVAL_BINARY(MulNode, return Arith(t, Product(t, a, b)))
    TESSEL_EVAL_BINARY(DivNode, if (b == 0) return std::nullopt; return Arith(t, a / b))
    TESSEL_EVAL_BINARY(ModNode, if (b == 0) return std::nullopt; return Arith(t, a % b))
    TESSEL_EVAL_BINARY(FloorDivNode, if (b == 0) return std::nullopt;
                       return Arith(t, FloorDivExact(a, b)))
    TESSEL_EVAL_BINARY(FloorModNode, if (b == 0) return std::nullopt;
                       return Arith(t, a - FloorDivExact(a, b) * b))
    TESSEL_EVAL_BINARY(MinNode, return a < b ? a : b)
    TESSEL_EVAL_BINARY(MaxNode, return a > b ? a : b)
    TESSEL_EVAL_BINARY(EQNode, return a == b)
    TESSEL_EVAL_BINARY(NENode, return a != b)
    TESSEL_EVAL_BINARY(LTNode, return a < b)
    TESSEL_EVAL_BINARY(LENode, return a <= b)
    TESSEL_EVAL_BINARY(GTNode, return a > b)
    TESSEL_EVAL_BINARY(GENode, return a >= b)
    TESSEL_EVAL_BINARY(AndNode, return (a != 0) && (b != 0))
    TESSEL_EVAL_BINARY(OrNode, return (a != 0) || (b != 0))
#undef TESSEL_EVAL_BINARY
    if (const auto* op = e.as<NotNode>()) {
      auto v = Eval(op->a);
      if (!v) return std::nullopt;
      return *v == 0;
    }
    if (const auto* op = e.as<SelectNode>()) {
      auto c = Eval(op->condition), a = Eval(op->true_value), b = Eval(op->false_value);
      if (!c || !a || !b) return std::nullopt;
      return *c ? *a : *b;
    }
    if (const auto* op = e.as<CallNode>()) return EvalCall(op);
    return std::nullopt;
  }

  std::optional<i128> EvalCall(const ir::CallNode* op) {
    using namespace ir;  // NOLINT(build/namespaces)
    DataType t = op->dtype;
    const ObjectRef& f = op->op;
    if (f.same_as(builtin::if_then_else())) {
      auto c = Eval(op->args[0]);
      if (!c) return std::nullopt;
      return Eval(*c ? op->args[1] : op->args[2]);
    }
    if (f.same_as(builtin::likely())) return Eval(op->args[0]);
    if (f.same_as(builtin::bitwise_not())) {
      auto a = Eval(op->args[0]);
      if (!a) return std::nullopt;
      return WrapExact(t, ~*a);
    }
    if (op->args.size() != 2) return std::nullopt;
    auto av = Eval(op->args[0]), bv = Eval(op->args[1]);
    if (!av || !bv) return std::nullopt;
    i128 a = *av, b = *bv;
    if (f.same_as(builtin::shift_left()) || f.same_as(builtin::shift_right())) {
      if (b < 0 || b >= t.bits()) return std::nullopt;
      i128 p = static_cast<i128>(1) << static_cast<int>(b);
      if (f.same_as(builtin::shift_left())) {
        return WrapExact(t, static_cast<i128>(static_cast<unsigned __int128>(a) *
                                              static_cast<unsigned __int128>(p)));
      }
      return WrapExact(t, FloorDivExact(a, p));
    }
    if (f.same_as(builtin::bitwise_and())) return WrapExact(t, a & b);
    if (f.same_as(builtin::bitwise_or())) return WrapExact(t, a | b);
    if (f.same_as(builtin::bitwise_xor())) return WrapExact(t, a ^ b);
    return std::nullopt;
  }

  Env env_;
  Semantics semantics_;
  bool out_of_domain_ = false;
};

}  // namespace testing
}  // namespace tessel

#endif  // TESSEL_TESTS_ARITH_EVAL_H_
