// EvalInt (include/tessel/arith/int_eval.h).
#include <tessel/arith/int_eval.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/expr.h>
#include <tessel/ir/ops.h>

#include <algorithm>
#include <utility>

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)

std::optional<int64_t> EvalInt(const PrimExpr& e,
                               const std::unordered_map<const VarNode*, int64_t>& env) {
  if (auto c = AsConstInt(e)) return c;
  if (const auto* v = e.as<VarNode>()) {
    auto it = env.find(v);
    if (it == env.end()) return std::nullopt;
    return it->second;
  }
  auto both = [&](const PrimExpr& a,
                  const PrimExpr& b) -> std::optional<std::pair<int64_t, int64_t>> {
    auto x = EvalInt(a, env), y = EvalInt(b, env);
    if (!x || !y) return std::nullopt;
    return std::make_pair(*x, *y);
  };
#define TESSEL_BIN(Node, expr)           \
  if (const auto* n = e.as<Node>()) {    \
    auto p = both(n->a, n->b);           \
    if (!p) return std::nullopt;         \
    int64_t x = p->first, y = p->second; \
    (void)x;                             \
    (void)y;                             \
    return std::optional<int64_t>(expr); \
  }
  // Overflowing int64 is not a value.
  TESSEL_BIN(AddNode, __builtin_add_overflow(x, y, &x) ? std::nullopt : std::optional<int64_t>(x))
  TESSEL_BIN(SubNode, __builtin_sub_overflow(x, y, &x) ? std::nullopt : std::optional<int64_t>(x))
  TESSEL_BIN(MulNode, __builtin_mul_overflow(x, y, &x) ? std::nullopt : std::optional<int64_t>(x))
  TESSEL_BIN(MinNode, std::min(x, y))
  TESSEL_BIN(MaxNode, std::max(x, y))
  TESSEL_BIN(EQNode, int64_t{x == y})
  TESSEL_BIN(NENode, int64_t{x != y})
  TESSEL_BIN(LTNode, int64_t{x < y})
  TESSEL_BIN(LENode, int64_t{x <= y})
  TESSEL_BIN(GTNode, int64_t{x > y})
  TESSEL_BIN(GENode, int64_t{x >= y})
  TESSEL_BIN(AndNode, int64_t{x != 0 && y != 0})
  TESSEL_BIN(OrNode, int64_t{x != 0 || y != 0})
#undef TESSEL_BIN
  if (const auto* n = e.as<FloorDivNode>()) {
    auto p = both(n->a, n->b);
    if (!p || p->second == 0) return std::nullopt;
    int64_t q = p->first / p->second;
    if ((p->first % p->second != 0) && ((p->first < 0) != (p->second < 0))) --q;
    return q;
  }
  if (const auto* n = e.as<FloorModNode>()) {
    auto p = both(n->a, n->b);
    if (!p || p->second == 0) return std::nullopt;
    int64_t r = p->first % p->second;
    if (r != 0 && ((r < 0) != (p->second < 0))) r += p->second;
    return r;
  }
  if (const auto* n = e.as<NotNode>()) {
    auto x = EvalInt(n->a, env);
    if (!x) return std::nullopt;
    return int64_t{*x == 0};
  }
  if (const auto* n = e.as<SelectNode>()) {
    auto c = EvalInt(n->condition, env);
    if (!c) return std::nullopt;
    return EvalInt(*c ? n->true_value : n->false_value, env);
  }
  if (const auto* n = e.as<CastNode>()) {
    if (!n->dtype.is_int() && !n->dtype.is_uint()) return std::nullopt;
    return EvalInt(n->value, env);
  }
  if (const auto* call = e.as<CallNode>()) {
    auto arg = [&](size_t i) { return EvalInt(call->args[i], env); };
    if (call->op.same_as(builtin::bitwise_not()) && call->args.size() == 1) {
      auto x = arg(0);
      if (!x) return std::nullopt;
      return ~*x;
    }
    if (call->args.size() != 2) return std::nullopt;
    auto x = arg(0), y = arg(1);
    if (!x || !y) return std::nullopt;
    if (call->op.same_as(builtin::bitwise_and())) return *x & *y;
    if (call->op.same_as(builtin::bitwise_or())) return *x | *y;
    if (call->op.same_as(builtin::bitwise_xor())) return *x ^ *y;
    if (*y < 0 || *y > 63) return std::nullopt;
    if (call->op.same_as(builtin::shift_left())) {
      return static_cast<int64_t>(static_cast<uint64_t>(*x) << *y);
    }
    if (call->op.same_as(builtin::shift_right())) return *x >> *y;
  }
  return std::nullopt;
}

}  // namespace arith
}  // namespace tessel
