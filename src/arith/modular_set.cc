// Modular sets (contract in modular_set.h), computed over __int128 and normalized on the way out.
#include <tessel/arith/analyzer.h>
#include <tessel/arith/modular_set.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>

#include <unordered_map>
#include <utility>
#include <vector>

#include "arith/depth_guard.h"
#include "arith/node_cache.h"

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// The largest coefficient kept; larger ones are weakened to a divisor (always sound).
constexpr i128 kMaxCoeff = static_cast<i128>(1) << 62;

i128 Abs(i128 v) { return v < 0 ? -v : v; }

struct Mod {
  i128 coeff;  // 0: the constant base
  i128 base;
};

Mod Normalize(Mod m) {
  m.coeff = Abs(m.coeff);
  if (m.coeff == 0) {
    if (m.base >= std::numeric_limits<int64_t>::min() &&
        m.base <= std::numeric_limits<int64_t>::max()) {
      return m;
    }
    m.coeff = kMaxCoeff;
  }
  if (m.coeff > kMaxCoeff) m.coeff = GcdI128(m.coeff, kMaxCoeff);
  m.base = FloorModI128(m.base, m.coeff);
  return m;
}

const Mod kEverything{1, 0};

// The intersection of two sets (Chinese remainder); when it is empty (contradictory facts) or
// too large to represent, one of the two, which is still a true statement.
Mod IntersectMod(Mod a, Mod b) {
  if (a.coeff == 0) return a;
  if (b.coeff == 0) return b;
  i128 g = GcdI128(a.coeff, b.coeff);
  if ((b.base - a.base) % g != 0) return a;
  i128 lcm = a.coeff / g * b.coeff;
  if (lcm > kMaxCoeff) return a.coeff >= b.coeff ? a : b;
  // Solve a.base + a.coeff * t == b.base (mod b.coeff) for t, modulo m = b.coeff / g.
  i128 m = b.coeff / g;
  i128 r = FloorModI128((b.base - a.base) / g, m);
  // Inverse of (a.coeff / g) modulo m by the extended Euclid algorithm.
  i128 old_r = FloorModI128(a.coeff / g, m), rr = m, old_s = 1, s = 0;
  while (rr != 0) {
    i128 q = old_r / rr;
    i128 t = old_r - q * rr;
    old_r = rr;
    rr = t;
    t = old_s - q * s;
    old_s = s;
    s = t;
  }
  i128 t = FloorModI128(SatMul(r, FloorModI128(old_s, m)), m);
  return Normalize({lcm, a.base + a.coeff * t});
}

Mod Union(Mod a, Mod b) {
  // Both sets lie in base_a + gcd(coeff_a, coeff_b, base_a - base_b) * Z.
  return Normalize({GcdI128(GcdI128(a.coeff, b.coeff), a.base - b.base), a.base});
}

bool IsPow2(i128 v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

ModularSet::ModularSet(int64_t coeff, int64_t base) {
  Mod m = Normalize({coeff, base});
  auto n = make_object<ModularSetNode>();
  n->coeff = static_cast<int64_t>(m.coeff);
  n->base = static_cast<int64_t>(m.base);
  data_ = std::move(n);
}

struct ModularSetAnalyzer::Impl {
  Analyzer* parent;
  std::unordered_map<Var, Mod, tvm::ffi::ObjectPtrHash, tvm::ffi::ObjectPtrEqual> bound;
  std::vector<std::pair<Var, Mod>> scoped;
  // Sets already computed, stamped with `generation`: a set also depends on the constant bounds
  // (CanWrap), so a new generation of them starts a new one here, as do our own changes of
  // state. Never copied to a clone.
  NodeCache<Mod> cache;
  uint64_t generation = 1;
  uint64_t bound_generation = 0;

  uint64_t CurrentGeneration() {
    uint64_t b = parent->const_int_bound_analyzer().generation();
    if (b != bound_generation) {
      bound_generation = b;
      ++generation;
    }
    return generation;
  }

  Mod VarSet(const VarNode* v) const {
    Mod r = kEverything;
    if (!bound.empty()) {
      auto it = bound.find(GetRef<Var>(v));
      if (it != bound.end()) r = it->second;
    }
    for (const auto& [var, m] : scoped) {
      if (var.get() == v) r = IntersectMod(r, m);
    }
    return r;
  }
};

namespace {

class ModularEvaluator : public ExprFunctor<Mod(const PrimExpr&)> {
 public:
  explicit ModularEvaluator(ModularSetAnalyzer::Impl* state) : state_(state) {}

  using ExprFunctor::VisitExpr_;

  Mod VisitExpr(const PrimExpr& e) final {
    // Inside a Let body a variable may stand for the let's value: those sets are not cached.
    const Object* n = e.get();
    if (n->IsInstance<IntImmNode>()) return ExprFunctor::VisitExpr(e);
    uint64_t gen = state_->CurrentGeneration();
    if (lets_.empty()) {
      if (const Mod* hit = state_->cache.Find(n, gen)) return *hit;
    }
    DepthGuard level;  // only where the walk may descend
    if (!lets_.empty()) return ExprFunctor::VisitExpr(e);
    Mod r = ExprFunctor::VisitExpr(e);
    // Computing r only asks for bounds, which cannot change their generation.
    state_->cache.Put(e, gen, r);
    return r;
  }

  Mod VisitExprDefault_(const Object*) final { return kEverything; }

  Mod VisitExpr_(const IntImmNode* op) final {
    if (op->dtype.is_uint() && op->dtype.bits() == 64 && op->value < 0) {
      return Normalize({0, static_cast<i128>(static_cast<uint64_t>(op->value))});
    }
    return {0, op->value};
  }

  Mod VisitExpr_(const VarNode* op) final {
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) {
      if (it->first == op) return it->second;
    }
    return state_->VarSet(op);
  }

  Mod VisitExpr_(const LetNode* op) final {
    lets_.emplace_back(op->var.get(), VisitExpr(op->value));
    Mod r = VisitExpr(op->body);
    lets_.pop_back();
    return r;
  }

  Mod VisitExpr_(const AddNode* op) final {
    Mod a = VisitExpr(op->a), b = VisitExpr(op->b);
    return Wrap(op, {GcdI128(a.coeff, b.coeff), a.base + b.base});
  }
  Mod VisitExpr_(const SubNode* op) final {
    Mod a = VisitExpr(op->a), b = VisitExpr(op->b);
    return Wrap(op, {GcdI128(a.coeff, b.coeff), a.base - b.base});
  }
  Mod VisitExpr_(const MulNode* op) final {
    return Product(op, VisitExpr(op->a), VisitExpr(op->b));
  }
  Mod VisitExpr_(const FloorDivNode* op) final {
    Mod a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (b.coeff != 0 || b.base == 0) return kEverything;
    // (c*k + r) // d == (c/d)*k + r // d exactly when d divides c.
    if (a.coeff % b.base != 0) return kEverything;
    return Wrap(op, {a.coeff / b.base, FloorDivI128(a.base, b.base)});
  }
  Mod VisitExpr_(const FloorModNode* op) final {
    return Remainder(op, VisitExpr(op->a), VisitExpr(op->b), true);
  }
  Mod VisitExpr_(const ModNode* op) final {
    return Remainder(op, VisitExpr(op->a), VisitExpr(op->b), false);
  }
  Mod VisitExpr_(const DivNode* op) final {
    Mod a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a.coeff == 0 && b.coeff == 0 && b.base != 0) return Wrap(op, {0, a.base / b.base});
    return kEverything;
  }
  Mod VisitExpr_(const MinNode* op) final { return Union(VisitExpr(op->a), VisitExpr(op->b)); }
  Mod VisitExpr_(const MaxNode* op) final { return Union(VisitExpr(op->a), VisitExpr(op->b)); }
  Mod VisitExpr_(const SelectNode* op) final {
    return Union(VisitExpr(op->true_value), VisitExpr(op->false_value));
  }
  Mod VisitExpr_(const CastNode* op) final {
    DataType to = op->dtype, from = op->value.dtype();
    if (!to.is_int_or_uint() || !from.is_int_or_uint()) return kEverything;
    return Wrap(op, VisitExpr(op->value));
  }
  Mod VisitExpr_(const CallNode* op) final {
    if (op->op.same_as(builtin::if_then_else())) {
      return Union(VisitExpr(op->args[1]), VisitExpr(op->args[2]));
    }
    if (op->op.same_as(builtin::shift_left())) {
      Mod a = VisitExpr(op->args[0]), s = VisitExpr(op->args[1]);
      if (s.coeff != 0 || s.base < 0 || s.base >= op->dtype.bits()) return kEverything;
      return Product(op, a, {0, static_cast<i128>(1) << static_cast<int>(s.base)});
    }
    return kEverything;
  }

 private:
  // (ca*x + ba)(cb*y + bb) = ca*cb*xy + ca*bb*x + cb*ba*y + ba*bb, computed without saturation:
  // a saturated product would be a wrong residue.
  Mod Product(const PrimExprNode* op, Mod a, Mod b) {
    if (a.coeff == 0 && b.coeff == 0) {
      // Exact modulo 2^128, which is all Wrap needs of it.
      return Wrap(op, {0, static_cast<i128>(static_cast<unsigned __int128>(a.base) *
                                            static_cast<unsigned __int128>(b.base))});
    }
    i128 p1, p2, p3;
    if (__builtin_mul_overflow(a.coeff, b.coeff, &p1) ||
        __builtin_mul_overflow(a.coeff, b.base, &p2) ||
        __builtin_mul_overflow(b.coeff, a.base, &p3)) {
      return kEverything;
    }
    i128 c = GcdI128(GcdI128(p1, p2), p3);
    if (c == 0) return kEverything;  // not reached: one side has a non-zero coeff
    if (c > kMaxCoeff) c = GcdI128(c, kMaxCoeff);
    i128 base;
    if (__builtin_mul_overflow(FloorModI128(a.base, c), FloorModI128(b.base, c), &base)) {
      return kEverything;
    }
    return Wrap(op, {c, base});
  }

  Mod Remainder(const PrimExprNode* op, Mod a, Mod b, bool floor) {
    if (b.coeff != 0 || b.base == 0) return kEverything;
    if (a.coeff == 0) {
      i128 r = floor ? FloorModI128(a.base, b.base) : a.base % b.base;
      return {0, r};
    }
    // x - d * q(x) == x (mod gcd(c, d)): the residue survives modulo g.
    i128 g = GcdI128(a.coeff, b.base);
    if (floor && a.coeff % b.base == 0) return {0, FloorModI128(a.base, b.base)};
    return Normalize({g, a.base});
  }

  // The set of a node of integer dtype t whose exact values lie in m: wrapping modulo 2^bits
  // keeps residues modulo powers of two up to 2^bits, and only those.
  Mod Wrap(const PrimExprNode* op, Mod m) {
    DataType t = op->dtype.element_of();
    if (!t.is_int_or_uint()) return kEverything;
    i128 modulus = static_cast<i128>(1) << t.bits();
    if (m.coeff == 0) {
      i128 v = WrapToDType(t, m.base);
      if (t.is_uint() && t.bits() == 64) v = static_cast<i128>(static_cast<uint64_t>(v));
      return Normalize({0, v});
    }
    m = Normalize(m);
    if (IsPow2(m.coeff) && m.coeff <= modulus) return m;
    if (!CanWrap(op)) return m;
    i128 c = GcdI128(m.coeff, modulus);
    return Normalize({c, m.base});
  }

  bool CanWrap(const PrimExprNode* op) {
    DataType t = op->dtype.element_of();
    // assume_no_overflow covers + - * and division; casts and shifts wrap in either mode.
    bool arith = op->IsInstance<AddNode>() || op->IsInstance<SubNode>() ||
                 op->IsInstance<MulNode>() || op->IsInstance<DivNode>() ||
                 op->IsInstance<FloorDivNode>();
    if (arith && state_->parent->assume_no_overflow() && NoOverflowDType(t)) return false;
    IntInterval r = state_->parent->const_int_bound_analyzer().Eval(op);
    IntInterval full = DTypeRange(t);
    return r.lo <= full.lo && r.hi >= full.hi;
  }

  ModularSetAnalyzer::Impl* state_;
  std::vector<std::pair<const VarNode*, Mod>> lets_;
};

}  // namespace

ModularSetAnalyzer::ModularSetAnalyzer(Analyzer* parent) : impl_(std::make_unique<Impl>()) {
  impl_->parent = parent;
}
ModularSetAnalyzer::~ModularSetAnalyzer() = default;

void ModularSetAnalyzer::CopyStateFrom(const ModularSetAnalyzer& other) {
  Analyzer* parent = impl_->parent;
  uint64_t generation = impl_->generation;
  *impl_ = *other.impl_;
  impl_->parent = parent;
  impl_->cache.Reset();
  impl_->generation = generation + 1;
}

ModularSet ModularSetAnalyzer::operator()(const PrimExpr& expr) const {
  auto [coeff, base] = Eval(expr);
  return ModularSet(coeff, base);
}

std::pair<int64_t, int64_t> ModularSetAnalyzer::Eval(const PrimExpr& expr) const {
  if (!expr.defined()) TVM_FFI_THROW(ValueError) << "ModularSet: undefined expression";
  Mod m = Normalize(ModularEvaluator(impl_.get())(expr));
  return {static_cast<int64_t>(m.coeff), static_cast<int64_t>(m.base)};
}

bool ModularSetAnalyzer::HasVarFacts() const {
  return !impl_->bound.empty() || !impl_->scoped.empty();
}

void ModularSetAnalyzer::Update(const Var& var, const ModularSet& info, bool allow_override) {
  Mod m{info->coeff, info->base};
  auto it = impl_->bound.find(var);
  if (it != impl_->bound.end() && !allow_override &&
      (it->second.coeff != m.coeff || it->second.base != m.base)) {
    TVM_FFI_THROW(ValueError) << "ModularSetAnalyzer::Update: " << var->name_hint
                              << " is already bound to a different modular set; pass "
                                 "allow_override to replace it";
  }
  impl_->bound[var] = m;
  ++impl_->generation;
}

std::function<void()> ModularSetAnalyzer::EnterConstraint(const PrimExpr& constraint) {
  std::vector<std::pair<Var, Mod>> facts;
  std::function<void(const PrimExpr&)> collect = [&](const PrimExpr& c) {
    if (const auto* op = c.as<AndNode>()) {
      collect(op->a);
      collect(op->b);
      return;
    }
    PrimExpr a, b;
    if (const auto* op = c.as<EQNode>()) {
      a = op->a;
      b = op->b;
    } else if (const auto* op = c.as<NotNode>()) {
      const auto* ne = op->a.as<NENode>();
      if (!ne) return;
      a = ne->a;
      b = ne->b;
    } else {
      return;
    }
    if (!a.dtype().is_int_or_uint() || !a.dtype().is_scalar()) return;
    for (int side = 0; side < 2; ++side) {
      const PrimExpr& lhs = side == 0 ? a : b;
      const PrimExpr& rhs = side == 0 ? b : a;
      // x % c == k, floor or truncating: either way x == k (mod c).
      PrimExpr x, d;
      if (const auto* m = lhs.as<FloorModNode>()) {
        x = m->a;
        d = m->b;
      } else if (const auto* m = lhs.as<ModNode>()) {
        x = m->a;
        d = m->b;
      }
      std::optional<int64_t> dc;
      if (d.defined()) dc = AsConstInt(d);
      auto k = AsConstInt(rhs);
      if (x.defined() && x.as<VarNode>() && dc && *dc != 0 && k) {
        facts.emplace_back(GetRef<Var>(x.as<VarNode>()), Normalize({*dc, *k}));
      }
      if (const auto* v = lhs.as<VarNode>()) {
        facts.emplace_back(GetRef<Var>(v), Normalize(ModularEvaluator(impl_.get())(rhs)));
      }
    }
  };
  collect(constraint);
  if (facts.empty()) return nullptr;
  size_t old_size = impl_->scoped.size();
  for (auto& f : facts) impl_->scoped.push_back(std::move(f));
  ++impl_->generation;
  Impl* impl = impl_.get();
  return [impl, old_size]() {
    impl->scoped.resize(old_size);
    ++impl->generation;
  };
}

}  // namespace arith
}  // namespace tessel
