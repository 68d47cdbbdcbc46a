// The Z3 prover (z3_prover.h). The only file that includes Z3: everything Z3-specific sits under
// TESSEL_HAVE_Z3, so a build without Z3 keeps the bookkeeping (bindings, scopes, stats) and answers
// every query kUnknown.
//
// The model (docs/arith.md, "The Z3 prover"): every integer value is a Z3 Int holding the exact
// value of its dtype; + - * and narrowing casts are wrapped modulo 2^bits unless the interval of
// the exact result fits the dtype; division and shifts follow ir/expr.h and ir/builtin.h; where
// the IR leaves a result undefined (division by zero, a shift amount outside [0, bits)) or the
// node cannot be translated, the value is a fresh unconstrained one. A model that uses such a
// value is not reported as a counterexample.
#include <tessel/arith/z3_prover.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <unordered_map>
#include <unordered_set>

#include "arith/depth_guard.h"

#ifdef TESSEL_HAVE_Z3
#include <z3++.h>
#endif

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)
using tvm::ffi::Array;
using tvm::ffi::ObjectRef;

namespace {

// Beyond this many verdicts the cache starts over (a pass over a large kernel asks distinct
// questions; memory stays bounded).
constexpr size_t kMaxCacheEntries = 8192;

[[maybe_unused]] std::string I128ToString(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

// What a verdict depends on, compared exactly on a cache hit: the condition, the facts and the
// bindings of the variables involved (one Array, compared structurally with free variables by
// identity), those variables' known bounds, and the rlimit.
struct CacheKey {
  Array<ObjectRef> items;
  std::vector<IntInterval> bounds;
  int64_t rlimit = 0;
  uint64_t hash = 0;

  bool operator==(const CacheKey& o) const {
    if (hash != o.hash || rlimit != o.rlimit || bounds.size() != o.bounds.size()) return false;
    for (size_t i = 0; i < bounds.size(); ++i) {
      if (bounds[i].lo != o.bounds[i].lo || bounds[i].hi != o.bounds[i].hi) return false;
    }
    return tvm::ffi::StructuralEqual::Equal(items, o.items, /*map_free_vars=*/false);
  }
};

struct Verdict {
  ProofResult result = ProofResult::kUnknown;
  std::optional<Z3Counterexample> counterexample;
  bool minimized = false;
  // Unknown because Z3 spent the query's rlimit, rather than for another reason.
  bool resource_limit = false;
};

}  // namespace

struct Z3Prover::Impl {
  Analyzer* parent;
  // Bindings in order of first binding; a re-binding replaces its entry.
  std::vector<std::pair<Var, ObjectRef>> bindings;
  std::unordered_map<const VarNode*, size_t> binding_index;
  std::vector<PrimExpr> facts;
  int64_t rlimit = kDefaultRLimit;
  Z3Stats stats;
  std::unordered_map<uint64_t, std::vector<std::pair<CacheKey, Verdict>>> cache;
  size_t cache_size = 0;
#ifdef TESSEL_HAVE_Z3
  // Created by the first query that reaches Z3.
  std::unique_ptr<z3::context> ctx;
#endif

  explicit Impl(Analyzer* p) : parent(p) {}

  CacheKey MakeKey(const PrimExpr& cond) const;
  // Whether cond is one Z3 cannot prove where the cheap methods failed (TryProve skips it).
  bool OutOfReach(const PrimExpr& cond) const;
  // Whether one of a few candidate points (the ends of each variable's bounds, 0, 1, and mixes)
  // satisfies the bindings and facts and makes cond false, evaluated exactly: a genuine
  // counterexample, so Z3 could not prove cond (TryProve answers kDisproved without it).
  bool RefutedCheaply(const PrimExpr& cond) const;
  Verdict Solve(const PrimExpr& cond, bool minimize);
  Verdict Query(const PrimExpr& cond, bool minimize);
  std::string SMTLIB2(const PrimExpr& cond);
};

CacheKey Z3Prover::Impl::MakeKey(const PrimExpr& cond) const {
  // The variables the verdict can depend on: those of cond and the facts, and transitively those
  // of their bindings.
  std::vector<Var> vars;
  std::unordered_set<const VarNode*> seen;
  auto collect = [&](const ObjectRef& root) {
    auto visit = [&](const ObjectRef& n) {
      if (const auto* v = n.as<VarNode>()) {
        if (seen.insert(v).second) vars.push_back(tvm::ffi::GetRef<Var>(v));
      }
    };
    if (auto e = root.as<PrimExpr>()) {
      PostOrderVisit(*e, visit);
    } else if (const auto* r = root.as<RangeNode>()) {
      PostOrderVisit(r->min, visit);
      PostOrderVisit(r->extent, visit);
    }
  };
  collect(cond);
  for (const PrimExpr& f : facts) collect(f);
  Array<ObjectRef> bound;
  for (size_t i = 0; i < vars.size(); ++i) {
    auto it = binding_index.find(vars[i].get());
    if (it == binding_index.end()) continue;
    const auto& b = bindings[it->second];
    bound.push_back(Array<ObjectRef>{b.first, b.second});
    collect(b.second);
  }
  CacheKey key;
  key.items = Array<ObjectRef>{cond, Array<ObjectRef>(facts.begin(), facts.end()), bound};
  // The overflow mode changes the model (docs/arith.md): a verdict holds for its own mode only.
  key.rlimit = rlimit | (parent->assume_no_overflow() ? (int64_t{1} << 62) : 0);
  uint64_t h = tvm::ffi::StructuralHash::Hash(key.items, /*map_free_vars=*/false);
  for (const Var& v : vars) {
    IntInterval b = parent->const_int_bound_analyzer().Eval(v);
    key.bounds.push_back(b);
    h = h * 1000003u ^ static_cast<uint64_t>(b.lo) ^ (static_cast<uint64_t>(b.hi) << 1);
  }
  key.hash = h ^ static_cast<uint64_t>(rlimit);
  return key;
}

Verdict Z3Prover::Impl::Query(const PrimExpr& cond, bool minimize) {
  auto start = std::chrono::steady_clock::now();
  ++stats.queries;
  Verdict verdict;
  if (!Z3Prover::Available() || !cond.dtype().is_scalar()) {
    ++stats.unknown;
  } else {
    CacheKey key = MakeKey(cond);
    auto& bucket = cache[key.hash];
    Verdict* hit = nullptr;
    for (auto& entry : bucket) {
      if (entry.first == key) hit = &entry.second;
    }
    if (hit && (!minimize || hit->result != ProofResult::kDisproved || hit->minimized)) {
      ++stats.cache_hits;
      verdict = *hit;
    } else {
      verdict = Solve(cond, minimize);
      if (verdict.result == ProofResult::kProved) {
        ++stats.proved;
      } else if (verdict.result == ProofResult::kDisproved) {
        ++stats.refuted;
      } else {
        ++stats.unknown;
        if (verdict.resource_limit) ++stats.resource_limit;
      }
      if (hit) {
        *hit = verdict;
      } else {
        if (cache_size >= kMaxCacheEntries) {
          cache.clear();
          cache_size = 0;
        }
        cache[key.hash].emplace_back(std::move(key), verdict);
        ++cache_size;
      }
    }
  }
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats.seconds += dt;
  return verdict;
}

#ifdef TESSEL_HAVE_Z3

namespace {

// An integer value: its Z3 term and an interval that contains it (the exact value's range, used
// to leave out wrapping that cannot happen).
struct Term {
  z3::expr e;
  IntInterval iv;
};

// Translates IR to Z3 over one context. Side conditions (variable ranges, fresh values' ranges)
// go to `side`; `guards` holds, for each fresh value standing for an undefined or untranslated
// result, the condition under which the model relies on it.
class Encoder {
 public:
  Encoder(z3::context* ctx, const Analyzer* analyzer) : ctx_(*ctx), analyzer_(analyzer) {}

  z3::expr Bool(const PrimExpr& e) {
    DepthGuard level;
    DataType t = e.dtype();
    if (!t.is_bool() || !t.is_scalar()) return FreshBool();
    if (const auto* op = e.as<IntImmNode>()) return ctx_.bool_val(op->value != 0);
    if (const auto* op = e.as<VarNode>()) return BoolVar(op);
    if (const auto* op = e.as<NotNode>()) return !Bool(op->a);
    if (const auto* op = e.as<AndNode>()) return Bool(op->a) && Bool(op->b);
    if (const auto* op = e.as<OrNode>()) return Bool(op->a) || Bool(op->b);
#define TESSEL_Z3_CMP(Node, OP)                                       \
  if (const auto* op = e.as<Node>()) {                                \
    DataType ot = op->a.dtype();                                      \
    if (!ot.is_scalar()) return FreshBool();                          \
    if (ot.is_int_or_uint()) return Int(op->a).e OP Int(op->b).e;     \
    if (ot.is_bool()) return Compare##Node(Bool(op->a), Bool(op->b)); \
    return FreshBool();                                               \
  }
    TESSEL_Z3_CMP(EQNode, ==)
    TESSEL_Z3_CMP(NENode, !=)
    TESSEL_Z3_CMP(LTNode, <)
    TESSEL_Z3_CMP(LENode, <=)
    TESSEL_Z3_CMP(GTNode, >)
    TESSEL_Z3_CMP(GENode, >=)
#undef TESSEL_Z3_CMP
    if (const auto* op = e.as<SelectNode>()) {
      return z3::ite(Bool(op->condition), Bool(op->true_value), Bool(op->false_value));
    }
    if (const auto* op = e.as<CastNode>()) {
      DataType from = op->value.dtype();
      if (!from.is_scalar()) return FreshBool();
      if (from.is_bool()) return Bool(op->value);
      if (from.is_int_or_uint()) return Int(op->value).e != 0;
      return FreshBool();
    }
    if (const auto* op = e.as<LetNode>()) {
      return WithLet(op, [&] { return Bool(op->body); });
    }
    if (const auto* op = e.as<CallNode>()) {
      if (op->op.same_as(builtin::if_then_else()) && op->args.size() == 3) {
        return z3::ite(Bool(op->args[0]), Bool(op->args[1]), Bool(op->args[2]));
      }
      if (op->op.same_as(builtin::likely()) && op->args.size() == 1) return Bool(op->args[0]);
    }
    return FreshBool();
  }

  Term Int(const PrimExpr& e) {
    DepthGuard level;
    DataType t = e.dtype();
    if (!t.is_int_or_uint() || !t.is_scalar()) return FreshInt(t, ctx_.bool_val(true));
    if (const auto* op = e.as<IntImmNode>()) {
      i128 v = op->value;
      if (t.is_uint() && t.bits() == 64) v = static_cast<i128>(static_cast<uint64_t>(op->value));
      return Const(v);
    }
    if (const auto* op = e.as<VarNode>()) return IntVar(op);
    if (const auto* op = e.as<AddNode>()) {
      Term a = Int(op->a), b = Int(op->b);
      return WrapArith({a.e + b.e, AddInterval(a.iv, b.iv)}, t);
    }
    if (const auto* op = e.as<SubNode>()) {
      Term a = Int(op->a), b = Int(op->b);
      return WrapArith({a.e - b.e, SubInterval(a.iv, b.iv)}, t);
    }
    if (const auto* op = e.as<MulNode>()) {
      Term a = Int(op->a), b = Int(op->b);
      return WrapArith({a.e * b.e, MulInterval(a.iv, b.iv)}, t);
    }
    if (const auto* op = e.as<FloorDivNode>()) return Divide(Int(op->a), Int(op->b), t, true, true);
    if (const auto* op = e.as<FloorModNode>())
      return Divide(Int(op->a), Int(op->b), t, true, false);
    if (const auto* op = e.as<DivNode>()) return Divide(Int(op->a), Int(op->b), t, false, true);
    if (const auto* op = e.as<ModNode>()) return Divide(Int(op->a), Int(op->b), t, false, false);
    if (const auto* op = e.as<MinNode>()) {
      Term a = Int(op->a), b = Int(op->b);
      return {z3::ite(a.e <= b.e, a.e, b.e), MinInterval(a.iv, b.iv)};
    }
    if (const auto* op = e.as<MaxNode>()) {
      Term a = Int(op->a), b = Int(op->b);
      return {z3::ite(a.e >= b.e, a.e, b.e), MaxInterval(a.iv, b.iv)};
    }
    if (const auto* op = e.as<SelectNode>()) {
      Term a = Int(op->true_value), b = Int(op->false_value);
      return {z3::ite(Bool(op->condition), a.e, b.e), Union(a.iv, b.iv)};
    }
    if (const auto* op = e.as<CastNode>()) {
      DataType from = op->value.dtype();
      if (from.is_scalar() && from.is_int_or_uint()) return Wrap(Int(op->value), t);
      if (from.is_scalar() && from.is_bool()) {
        return {z3::ite(Bool(op->value), Const(1).e, Const(0).e), IntInterval{0, 1}};
      }
      return FreshInt(t, ctx_.bool_val(true));
    }
    if (const auto* op = e.as<LetNode>()) {
      return WithLet(op, [&] { return Int(op->body); });
    }
    if (const auto* op = e.as<CallNode>()) return IntCall(op, t);
    return FreshInt(t, ctx_.bool_val(true));
  }

  // Every free variable met, in order of first appearance.
  const std::vector<std::pair<Var, z3::expr>>& vars() const { return vars_; }
  const std::vector<z3::expr>& side() const { return side_; }
  const std::vector<z3::expr>& guards() const { return guards_; }
  bool Has(const VarNode* v) const { return var_map_.count(v) != 0; }

 private:
  struct LetValue {
    std::optional<Term> i;
    std::optional<z3::expr> b;
  };

  Term Const(i128 v) { return {ctx_.int_val(I128ToString(v).c_str()), IntInterval{v, v}}; }

  template <typename F>
  auto WithLet(const LetNode* op, F body) -> decltype(body()) {
    DataType vt = op->value.dtype();
    LetValue value;
    if (vt.is_scalar() && vt.is_int_or_uint()) {
      value.i = Int(op->value);
    } else if (vt.is_scalar() && vt.is_bool()) {
      value.b = Bool(op->value);
    }
    auto old = let_.find(op->var.get());
    std::optional<LetValue> saved;
    if (old != let_.end()) saved = old->second;
    let_[op->var.get()] = value;
    auto r = body();
    if (saved) {
      let_[op->var.get()] = *saved;
    } else {
      let_.erase(op->var.get());
    }
    return r;
  }

  std::string UniqueName(const std::string& hint) {
    std::string base;
    for (char c : hint) base.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v_" + base;
    std::string name = base;
    for (int i = 1; !names_.insert(name).second; ++i) name = base + "!" + std::to_string(i);
    return name;
  }

  z3::expr BoolVar(const VarNode* v) {
    auto let = let_.find(v);
    if (let != let_.end()) return let->second.b ? *let->second.b : FreshBool();
    auto it = var_map_.find(v);
    if (it != var_map_.end()) return vars_[it->second].second;
    z3::expr x = ctx_.bool_const(UniqueName(v->name_hint).c_str());
    var_map_[v] = vars_.size();
    vars_.emplace_back(tvm::ffi::GetRef<Var>(v), x);
    return x;
  }

  Term IntVar(const VarNode* v) {
    auto let = let_.find(v);
    if (let != let_.end()) {
      if (let->second.i) return *let->second.i;
      return FreshInt(v->dtype, ctx_.bool_val(true));
    }
    auto it = var_map_.find(v);
    if (it != var_map_.end()) return {vars_[it->second].second, var_iv_[it->second]};
    Var var = tvm::ffi::GetRef<Var>(v);
    z3::expr x = ctx_.int_const(UniqueName(v->name_hint).c_str());
    // What the analyzer knows about the variable (bindings, facts, direct updates) is a fact for
    // Z3 too; it is part of the cache key.
    IntInterval iv =
        Intersect(DTypeRange(v->dtype), analyzer_->const_int_bound_analyzer().Eval(var));
    if (iv.is_empty()) {
      side_.push_back(ctx_.bool_val(false));
    } else {
      side_.push_back(Const(iv.lo).e <= x);
      side_.push_back(x <= Const(iv.hi).e);
    }
    var_map_[v] = vars_.size();
    vars_.emplace_back(var, x);
    var_iv_.resize(vars_.size());
    var_iv_.back() = iv;
    return {x, iv};
  }

  z3::expr FreshBool() {
    z3::expr x = ctx_.bool_const(("fresh!" + std::to_string(fresh_++)).c_str());
    guards_.push_back(ctx_.bool_val(true));
    return x;
  }

  // A value of dtype t nothing is known about; the model relies on it where `when` holds.
  Term FreshInt(DataType t, const z3::expr& when) {
    z3::expr x = ctx_.int_const(("fresh!" + std::to_string(fresh_++)).c_str());
    IntInterval iv = (t.is_int_or_uint() && t.is_scalar())
                         ? DTypeRange(t)
                         : IntInterval{-kIntervalInf, kIntervalInf};
    if (t.is_int_or_uint() && t.is_scalar()) {
      side_.push_back(Const(iv.lo).e <= x);
      side_.push_back(x <= Const(iv.hi).e);
    }
    guards_.push_back(when);
    return {x, iv};
  }

  // The result of + - * / % with exact value x: Wrap, except where the analyzer assumes that t
  // does not overflow; then the exact value is the value. (It is not asserted to lie in t's
  // range: that would constrain the variables even where the operation is never evaluated, as
  // in the untaken branch of a select.)
  Term WrapArith(const Term& x, DataType t) {
    // Its interval is the exact one, made "anything" where a product saturated (two saturated
    // ends are not numbers: their difference would read as the point 0).
    if (analyzer_->assume_no_overflow() && NoOverflowDType(t)) {
      return {x.e, FitOrExact(x.iv, t, true)};
    }
    return Wrap(x, t);
  }

  // x reduced modulo 2^bits into t's range, unless its interval shows that it is already there.
  Term Wrap(const Term& x, DataType t) {
    if (FitsIn(x.iv, t)) return x;
    i128 mod = static_cast<i128>(1) << t.bits();
    z3::expr m = Const(mod).e;
    if (t.is_uint()) return {Mod(x.e, m), DTypeRange(t)};
    z3::expr half = Const(mod / 2).e;
    return {Mod(x.e + half, m) - half, DTypeRange(t)};
  }

  z3::expr Div(const z3::expr& a, const z3::expr& b) {
    return z3::expr(ctx_, Z3_mk_div(ctx_, a, b));
  }
  z3::expr Mod(const z3::expr& a, const z3::expr& b) {
    return z3::expr(ctx_, Z3_mk_mod(ctx_, a, b));
  }

  // floor or truncating division/remainder. Z3's div/mod are Euclidean and only used with a
  // divisor that is positive in the branch where they apply; a zero divisor gives a fresh value.
  Term Divide(const Term& a, const Term& b, DataType t, bool floor, bool quotient) {
    std::optional<IntInterval> iv =
        floor ? (quotient ? FloorDivInterval(a.iv, b.iv) : FloorModInterval(a.iv, b.iv))
              : (quotient ? TruncDivInterval(a.iv, b.iv) : TruncModInterval(a.iv, b.iv));
    if (!iv) return FreshInt(t, ctx_.bool_val(true));
    z3::expr zero = Const(0).e;
    z3::expr abs_b = z3::ite(b.e >= zero, b.e, -b.e);
    z3::expr r(ctx_);
    if (floor) {
      // floor(a / b) == floor(-a / -b): divide by the positive one.
      z3::expr pos = z3::ite(b.e > zero, a.e, -a.e);
      z3::expr q = Div(pos, abs_b);
      r = quotient ? q : a.e - b.e * q;
      if (b.iv.lo == b.iv.hi) {
        // A constant divisor keeps the formula linear.
        i128 c = b.iv.lo;
        z3::expr cabs = Const(c < 0 ? -c : c).e;
        z3::expr qc = Div(c > 0 ? a.e : -a.e, cabs);
        r = quotient ? qc : (c > 0 ? Mod(a.e, cabs) : -Mod(-a.e, cabs));
      }
    } else {
      z3::expr abs_a = z3::ite(a.e >= zero, a.e, -a.e);
      z3::expr q = Div(abs_a, abs_b);
      z3::expr same_sign = (a.e >= zero) == (b.e > zero);
      z3::expr tq = z3::ite(same_sign, q, -q);
      r = quotient ? tq : a.e - b.e * tq;
      if (b.iv.lo == b.iv.hi) {
        i128 c = b.iv.lo;
        z3::expr cabs = Const(c < 0 ? -c : c).e;
        z3::expr qa = Div(abs_a, cabs);
        if (quotient) {
          r = c > 0 ? z3::ite(a.e >= zero, qa, -qa) : z3::ite(a.e >= zero, -qa, qa);
        } else {
          r = z3::ite(a.e >= zero, Mod(a.e, cabs), -Mod(-a.e, cabs));
        }
      }
    }
    Term out{r, *iv};
    // The quotient's or remainder's interval, a consequence of the operands', spares the SMT
    // core from deriving it through the div/mod axioms.
    if (b.iv.lo == b.iv.hi && b.iv.lo != 0) Bound(r, *iv);
    if (b.iv.contains(0)) {
      z3::expr is_zero = b.e == zero;
      out.e = z3::ite(is_zero, FreshInt(t, is_zero).e, r);
      out.iv = Union(*iv, DTypeRange(t));
    }
    return WrapArith(out, t);
  }

  // States that x lies in iv, a sound interval of it (an empty one, which should not occur,
  // states nothing rather than make every query vacuously true).
  void Bound(const z3::expr& x, const IntInterval& iv) {
    if (iv.is_empty()) return;
    side_.push_back(Const(iv.lo).e <= x && x <= Const(iv.hi).e);
  }

  static i128 BitWeight(int i, int n, bool is_signed) {
    i128 w = static_cast<i128>(1) << i;
    return (is_signed && i == n - 1) ? -w : w;
  }

  // n fresh bits whose (two's complement when is_signed) value is x.
  std::vector<z3::expr> Bits(const Term& x, int n, bool is_signed) {
    std::vector<z3::expr> bits;
    z3::expr sum = Const(0).e;
    for (int i = 0; i < n; ++i) {
      bits.push_back(ctx_.bool_const(("bit!" + std::to_string(fresh_++)).c_str()));
      sum = sum + z3::ite(bits.back(), Const(BitWeight(i, n, is_signed)).e, Const(0).e);
    }
    side_.push_back(x.e == sum);
    return bits;
  }

  Term IntCall(const CallNode* op, DataType t) {
    const ObjectRef& f = op->op;
    const Array<PrimExpr>& args = op->args;
    if (f.same_as(builtin::if_then_else()) && args.size() == 3) {
      Term a = Int(args[1]), b = Int(args[2]);
      return {z3::ite(Bool(args[0]), a.e, b.e), Union(a.iv, b.iv)};
    }
    if (f.same_as(builtin::likely()) && args.size() == 1) return Int(args[0]);
    if (f.same_as(builtin::bitwise_not()) && args.size() == 1) {
      // Two's complement: ~a == -a - 1, and 2^bits - 1 - a on unsigned types; never overflows.
      Term a = Int(args[0]);
      if (t.is_uint()) {
        i128 m = (static_cast<i128>(1) << t.bits()) - 1;
        return {Const(m).e - a.e, SubInterval(IntInterval{m, m}, a.iv)};
      }
      return {-a.e - 1, SubInterval(IntInterval{-1, -1}, a.iv)};
    }
    if (args.size() != 2 || !args[0].dtype().is_int_or_uint())
      return FreshInt(t, ctx_.bool_val(true));
    Term a = Int(args[0]), b = Int(args[1]);
    bool shl = f.same_as(builtin::shift_left()), shr = f.same_as(builtin::shift_right());
    if (shl || shr) {
      if (b.iv.is_point() && b.iv.lo >= 0 && b.iv.lo < t.bits()) {
        Term p = Const(static_cast<i128>(1) << static_cast<int>(b.iv.lo));
        if (shl) return Wrap({a.e * p.e, MulInterval(a.iv, p.iv)}, t);
        // Arithmetic shift of a signed value is floor division; unsigned values are >= 0.
        return {Div(a.e, p.e), *FloorDivInterval(a.iv, p.iv)};
      }
      // A variable amount: one linear case per amount the interval allows within [0, bits)
      // (the SMT core handles these far better than bit-vector shifts); any other amount gives
      // a fresh value.
      z3::expr in_range = Const(0).e <= b.e && b.e < Const(t.bits()).e;
      z3::expr r = FreshInt(t, !in_range).e;
      IntInterval riv = DTypeRange(t);
      i128 lo = std::max<i128>(b.iv.lo, 0), hi = std::min<i128>(b.iv.hi, t.bits() - 1);
      if (lo <= hi) riv = IntInterval{1, 0};
      for (i128 k = hi; k >= lo; --k) {
        Term p = Const(static_cast<i128>(1) << static_cast<int>(k));
        Term c = shl ? Wrap({a.e * p.e, MulInterval(a.iv, p.iv)}, t)
                     : Term{Div(a.e, p.e), *FloorDivInterval(a.iv, p.iv)};
        r = z3::ite(b.e == Const(k).e, c.e, r);
        riv = Union(riv, c.iv);
      }
      if (b.iv.lo < 0 || b.iv.hi >= t.bits()) riv = DTypeRange(t);
      // Consequences of the cases above, stated once so that the SMT core need not find them
      // case by case (without them `x >> s <= x` needs ~3x the resources): the result lies in
      // riv, and a right shift of an in-range amount moves a value towards zero... or -1.
      z3::expr rv(r);
      // (Left shifts: only the interval, which usually is the dtype's and only slows the search
      // for a wrapped counterexample, so it is left out.)
      if (shr) Bound(rv, riv);
      if (shr && a.iv.lo >= 0) {
        side_.push_back(z3::implies(in_range, Const(0).e <= rv && rv <= a.e));
      } else if (shr && a.iv.hi < 0) {
        side_.push_back(z3::implies(in_range, a.e <= rv && rv <= Const(-1).e));
      }
      return {r, riv};
    }
    bool band = f.same_as(builtin::bitwise_and()), bor = f.same_as(builtin::bitwise_or()),
         bxor = f.same_as(builtin::bitwise_xor());
    if (!band && !bor && !bxor) return FreshInt(t, ctx_.bool_val(true));
    if (band) {
      // a & (2^k - 1) is a mod 2^k (also for negative a in two's complement): linear.
      for (const auto& [x, m] : {std::pair<Term, Term>{a, b}, std::pair<Term, Term>{b, a}}) {
        if (m.iv.is_point() && m.iv.lo > 0 && ((m.iv.lo + 1) & m.iv.lo) == 0) {
          return {Mod(x.e, Const(m.iv.lo + 1).e), IntInterval{0, m.iv.lo}};
        }
        // a & ~(2^k - 1) clears the low k bits: a - a mod 2^k.
        i128 low = t.is_int() ? -m.iv.lo : (static_cast<i128>(1) << t.bits()) - m.iv.lo;
        if (m.iv.is_point() && low > 0 && (low & (low - 1)) == 0 &&
            low < (static_cast<i128>(1) << t.bits())) {
          return {x.e - Mod(x.e, Const(low).e),
                  Intersect(SubInterval(x.iv, IntInterval{0, low - 1}), DTypeRange(t))};
        }
      }
    }
    // Bit by bit over the fewest bits that hold both operands (two's complement when one may
    // be negative): the dtype's higher bits are copies of the top one, and so are the result's.
    // Linear arithmetic over 0/1 terms, which the SMT core handles far better than int2bv.
    bool is_signed = a.iv.lo < 0 || b.iv.lo < 0;
    int n = 1;
    auto fits = [&](const IntInterval& x, int w) {
      if (is_signed) {
        i128 h = static_cast<i128>(1) << (w - 1);
        return x.lo >= -h && x.hi < h;
      }
      return x.hi < (static_cast<i128>(1) << w);
    };
    while (n < t.bits() && !(fits(a.iv, n) && fits(b.iv, n))) ++n;
    std::vector<z3::expr> abits = Bits(a, n, is_signed), bbits = Bits(b, n, is_signed);
    z3::expr r = Const(0).e;
    for (int i = 0; i < n; ++i) {
      z3::expr bit = band  ? (abits[i] && bbits[i])
                     : bor ? (abits[i] || bbits[i])
                           : (abits[i] != bbits[i]);
      r = r + z3::ite(bit, Const(BitWeight(i, n, is_signed)).e, Const(0).e);
    }
    IntInterval iv = Intersect(band  ? BitAndInterval(a.iv, b.iv)
                               : bor ? BitOrInterval(a.iv, b.iv)
                                     : BitXorInterval(a.iv, b.iv),
                               DTypeRange(t));
    // The interval is a consequence of the operands' (sound) intervals; stated, it spares the
    // SMT core a search over the bits (an XOR swizzle's `< 8` needs ~1/3 of the resources).
    Bound(r, iv);
    return {r, iv};
  }

  template <typename A>
  static z3::expr CompareEQNode(const A& a, const A& b) {
    return a == b;
  }
  template <typename A>
  static z3::expr CompareNENode(const A& a, const A& b) {
    return a != b;
  }
  // Ordering bools: false < true.
  z3::expr CompareLTNode(const z3::expr& a, const z3::expr& b) { return !a && b; }
  z3::expr CompareLENode(const z3::expr& a, const z3::expr& b) { return !a || b; }
  z3::expr CompareGTNode(const z3::expr& a, const z3::expr& b) { return a && !b; }
  z3::expr CompareGENode(const z3::expr& a, const z3::expr& b) { return a || !b; }

  z3::context& ctx_;
  const Analyzer* analyzer_;
  std::vector<std::pair<Var, z3::expr>> vars_;
  std::vector<IntInterval> var_iv_;
  std::unordered_map<const VarNode*, size_t> var_map_;
  std::unordered_map<const VarNode*, LetValue> let_;
  std::unordered_set<std::string> names_;
  std::vector<z3::expr> side_;
  std::vector<z3::expr> guards_;
  int fresh_ = 0;
};

// The query's assertions: side conditions, bindings of the variables met, facts, not(cond).
struct Encoding {
  std::vector<z3::expr> assertions;
  std::vector<std::pair<Var, z3::expr>> vars;
  std::vector<z3::expr> guards;
};

Encoding Encode(z3::context* ctx, const Analyzer* analyzer, const Z3Prover::Impl& impl,
                const PrimExpr& cond) {
  Encoder enc(ctx, analyzer);
  std::vector<z3::expr> body;
  // The condition first, so that its variables come first in a counterexample.
  z3::expr goal = enc.Bool(cond);
  for (const PrimExpr& f : impl.facts) body.push_back(enc.Bool(f));
  // Bindings of every variable met, also those met in other bindings.
  std::vector<bool> done(impl.bindings.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < impl.bindings.size(); ++i) {
      const auto& [var, binding] = impl.bindings[i];
      if (done[i] || !enc.Has(var.get())) continue;
      done[i] = changed = true;
      bool is_int = var.dtype().is_scalar() && var.dtype().is_int_or_uint();
      if (const auto* r = binding.as<RangeNode>()) {
        if (!is_int || !r->min.dtype().is_int_or_uint() || !r->extent.dtype().is_int_or_uint()) {
          continue;
        }
        // [min, min + extent) over the mathematical integers (the range itself cannot wrap).
        z3::expr x = enc.Int(var).e;
        z3::expr lo = enc.Int(r->min).e;
        z3::expr extent = enc.Int(r->extent).e;
        body.push_back(lo <= x && x < lo + extent);
      } else if (auto value = binding.as<PrimExpr>()) {
        if (var.dtype().is_bool() && var.dtype().is_scalar()) {
          body.push_back(enc.Bool(EQ(var, *value)));
        } else if (is_int) {
          body.push_back(enc.Bool(EQ(var, *value)));
        }
      }
    }
  }
  Encoding out;
  out.assertions = enc.side();
  for (auto& b : body) out.assertions.push_back(b);
  out.assertions.push_back(!goal);
  out.vars = enc.vars();
  out.guards = enc.guards();
  return out;
}

// The exact value of an integer or bool term in a model.
std::optional<i128> ModelValue(const z3::model& m, const z3::expr& x) {
  z3::expr v = m.eval(x, /*model_completion=*/true);
  if (v.is_bool()) {
    if (v.is_true()) return 1;
    if (v.is_false()) return 0;
    return std::nullopt;
  }
  if (!v.is_numeral()) return std::nullopt;
  std::string s = v.get_decimal_string(0);
  bool neg = !s.empty() && s[0] == '-';
  i128 r = 0;
  for (size_t i = neg ? 1 : 0; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    r = r * 10 + (s[i] - '0');
  }
  return neg ? -r : r;
}

// A model is a counterexample only when no fresh value it relies on stands for an undefined or
// untranslated result.
std::optional<Z3Counterexample> Extract(const z3::model& m, const Encoding& enc) {
  for (const z3::expr& g : enc.guards) {
    if (!m.eval(g, true).is_false()) return std::nullopt;
  }
  Z3Counterexample out;
  for (const auto& [var, x] : enc.vars) {
    std::optional<i128> v = ModelValue(m, x);
    if (!v) return std::nullopt;
    out.emplace_back(var, *v);
  }
  return out;
}

z3::params LimitParams(z3::context& ctx, int64_t rlimit) {
  z3::params p(ctx);
  p.set("rlimit", static_cast<unsigned>(std::min<int64_t>(rlimit, UINT_MAX)));
  return p;
}

}  // namespace

Verdict Z3Prover::Impl::Solve(const PrimExpr& cond, bool minimize) {
  Verdict verdict;
  try {
    if (!ctx) ctx = std::make_unique<z3::context>();
    Encoding enc = Encode(ctx.get(), parent, *this, cond);
    // A fresh solver per query: no assertion outlives it, and no earlier query can steer the
    // search (the same question gives the same verdict in an original and in its clone).
    // The plain SMT core: Z3's default QF_NIA strategy bit-blasts bounded non-linear problems and
    // spends ~1000x more on the typical index fact (a product or quotient of variables treated
    // as one term is usually all a proof needs).
    z3::solver solver(*ctx, z3::solver::simple());
    solver.set(LimitParams(*ctx, rlimit));
    for (const z3::expr& a : enc.assertions) solver.add(a);
    z3::check_result r = solver.check();
    if (r == z3::unsat) {
      verdict.result = ProofResult::kProved;
      return verdict;
    }
    if (r != z3::sat) {
      // Z3 words it "max. resource limit exceeded" (rlimit) or "canceled"; both mean the budget.
      std::string reason = solver.reason_unknown();
      verdict.resource_limit = reason.find("resource") != std::string::npos ||
                               reason.find("canceled") != std::string::npos;
      return verdict;
    }
    verdict.counterexample = Extract(solver.get_model(), enc);
    if (!verdict.counterexample) return verdict;
    verdict.result = ProofResult::kDisproved;
    if (minimize) {
      verdict.minimized = true;
      z3::optimize opt(*ctx);
      opt.set(LimitParams(*ctx, rlimit));
      for (const z3::expr& a : enc.assertions) opt.add(a);
      // Lexicographic: the first variable's magnitude first.
      for (const auto& var_x : enc.vars) {
        const z3::expr& x = var_x.second;
        if (x.is_int()) opt.minimize(z3::ite(x >= 0, x, -x));
      }
      if (opt.check() == z3::sat) {
        if (auto smaller = Extract(opt.get_model(), enc)) verdict.counterexample = smaller;
      }
    }
  } catch (const z3::exception&) {
    // Whatever Z3 failed on, the answer is "not proved".
    Verdict unknown;
    return unknown;
  }
  return verdict;
}

std::string Z3Prover::Impl::SMTLIB2(const PrimExpr& cond) {
  try {
    if (!ctx) ctx = std::make_unique<z3::context>();
    Encoding enc = Encode(ctx.get(), parent, *this, cond);
    z3::solver solver(*ctx);
    for (const z3::expr& a : enc.assertions) solver.add(a);
    std::string script =
        "; tessel: the variables' bounds, bindings and facts, then the negated condition.\n"
        "; unsat means the condition holds.\n";
    script += solver.to_smt2();
    return script;
  } catch (const z3::exception& e) {
    TVM_FFI_THROW(RuntimeError) << "GetSMTLIB2: Z3 failed: " << e.msg();
  }
}

bool Z3Prover::Available() { return true; }

#else  // !TESSEL_HAVE_Z3

Verdict Z3Prover::Impl::Solve(const PrimExpr& cond, bool minimize) { return Verdict(); }

std::string Z3Prover::Impl::SMTLIB2(const PrimExpr& cond) {
  TVM_FFI_THROW(ValueError) << "GetSMTLIB2: this tessel was built without Z3 (TESSEL_USE_Z3=OFF "
                               "or Z3 not found)";
}

bool Z3Prover::Available() { return false; }

#endif  // TESSEL_HAVE_Z3

Z3Prover::Z3Prover(Analyzer* parent) : impl_(std::make_unique<Impl>(parent)) {}
Z3Prover::~Z3Prover() = default;

std::unique_ptr<AnalyzerExtension> Z3Prover::Clone(Analyzer* parent) const {
  auto copy = std::make_unique<Z3Prover>(parent);
  // Facts, bindings and limits travel; the Z3 context is made again on the clone's first query
  // and the verdicts (whose keys hold the same variables) stay valid.
  copy->impl_->bindings = impl_->bindings;
  copy->impl_->binding_index = impl_->binding_index;
  copy->impl_->facts = impl_->facts;
  copy->impl_->rlimit = impl_->rlimit;
  copy->impl_->cache = impl_->cache;
  copy->impl_->cache_size = impl_->cache_size;
  return copy;
}

void Z3Prover::OnBind(const Var& var, const tvm::ffi::Optional<Range>& range,
                      const tvm::ffi::Optional<PrimExpr>& value) {
  ObjectRef binding = range.has_value() ? ObjectRef(*range) : ObjectRef(*value);
  auto it = impl_->binding_index.find(var.get());
  if (it != impl_->binding_index.end()) {
    impl_->bindings[it->second].second = binding;
  } else {
    impl_->binding_index[var.get()] = impl_->bindings.size();
    impl_->bindings.emplace_back(var, binding);
  }
}

std::function<void()> Z3Prover::EnterConstraint(const PrimExpr& constraint) {
  Impl* impl = impl_.get();
  size_t old = impl->facts.size();
  impl->facts.push_back(constraint);
  return [impl, old]() { impl->facts.resize(old); };
}

namespace {

// Collects the variables of e into `out` and whether e is a linear form over them (constants,
// variables, + -, products with a constant) in which no variable occurs twice.
bool SingleOccurrenceLinear(const PrimExpr& e, std::vector<const VarNode*>* out) {
  if (e.as<IntImmNode>()) return true;
  if (const auto* v = e.as<VarNode>()) {
    if (std::find(out->begin(), out->end(), v) != out->end()) return false;
    out->push_back(v);
    return true;
  }
  if (const auto* op = e.as<AddNode>()) {
    return SingleOccurrenceLinear(op->a, out) && SingleOccurrenceLinear(op->b, out);
  }
  if (const auto* op = e.as<SubNode>()) {
    return SingleOccurrenceLinear(op->a, out) && SingleOccurrenceLinear(op->b, out);
  }
  if (const auto* op = e.as<MulNode>()) {
    if (op->a.as<IntImmNode>()) return SingleOccurrenceLinear(op->b, out);
    if (op->b.as<IntImmNode>()) return SingleOccurrenceLinear(op->a, out);
  }
  return false;
}

bool Mentions(const PrimExpr& e, const VarNode* v) {
  bool found = false;
  PostOrderVisit(e, [&](const ObjectRef& n) { found = found || n.get() == v; });
  return found;
}

// `v cmp c` or `c cmp v` (an ordering, not == or !=: a fact v != c leaves a hole in v's interval).
bool IsVarVsConstOrdering(const PrimExpr& e, const VarNode* v) {
  auto check = [&](const PrimExpr& a, const PrimExpr& b) {
    return (a.get() == v && b.as<IntImmNode>()) || (b.get() == v && a.as<IntImmNode>());
  };
  if (const auto* op = e.as<LTNode>()) return check(op->a, op->b);
  if (const auto* op = e.as<LENode>()) return check(op->a, op->b);
  if (const auto* op = e.as<GTNode>()) return check(op->a, op->b);
  if (const auto* op = e.as<GENode>()) return check(op->a, op->b);
  if (const auto* op = e.as<AndNode>()) {
    return IsVarVsConstOrdering(op->a, v) && IsVarVsConstOrdering(op->b, v);
  }
  return false;
}

}  // namespace

bool Z3Prover::Impl::OutOfReach(const PrimExpr& cond) const {
  PrimExpr atom = cond;
  // Under an odd number of negations an `and` is an `or` and an `==` a `!=`.
  bool negated = false;
  for (;;) {
    if (const auto* op = atom.as<NotNode>()) {
      atom = op->a;
      negated = !negated;
    } else if (const auto* call = atom.as<CallNode>();
               call && call->op.same_as(builtin::likely()) && call->args.size() == 1) {
      atom = call->args[0];
    } else {
      break;
    }
  }
  if (const auto* op = atom.as<AndNode>(); op && !negated) {
    // Z3 proves a conjunction only by proving each conjunct: one out of its reach, and not
    // decided true by the bounds, is enough.
    auto beyond = [&](const PrimExpr& c) {
      return OutOfReach(c) && parent->const_int_bound_analyzer().Eval(c).lo < 1;
    };
    return beyond(op->a) || beyond(op->b);
  }
  // A load is a fresh value for Z3 (each occurrence its own), so a condition on one is beyond it
  // unless the load cancels out, which the rewrite stage already finds.
  bool has_load = false;
  PostOrderVisit(atom, [&](const ObjectRef& n) { has_load = has_load || n.as<BufferLoadNode>(); });
  if (has_load) return true;
  // The variables whose every known constraint is an interval: no value binding, a range with
  // constant ends (or none), and facts that only order it against constants. Over a box of such
  // variables the bounds the cheap methods compute for a linear form in which each variable
  // occurs once are its exact minimum and maximum, so Z3 cannot prove what they did not.
  auto interval_only = [&](const VarNode* v) {
    auto it = binding_index.find(v);
    if (it != binding_index.end()) {
      const auto* r = bindings[it->second].second.as<RangeNode>();
      if (!r || !r->min.as<IntImmNode>() || !r->extent.as<IntImmNode>()) return false;
    }
    for (const PrimExpr& f : facts) {
      if (Mentions(f, v) && !IsVarVsConstOrdering(f, v)) return false;
    }
    return true;
  };
  std::vector<const VarNode*> vars;
  if (const auto* v = atom.as<VarNode>()) {
    // A bool variable nothing is known about.
    if (!v->dtype.is_bool()) return false;
    if (binding_index.count(v)) return false;
    for (const PrimExpr& f : facts) {
      if (Mentions(f, v)) return false;
    }
    return true;
  }
  auto linear_cmp = [&](const PrimExpr& a, const PrimExpr& b) {
    if (!a.dtype().is_int_or_uint() || !a.dtype().is_scalar()) return false;
    if (!SingleOccurrenceLinear(a, &vars) || !SingleOccurrenceLinear(b, &vars)) return false;
    return std::all_of(vars.begin(), vars.end(), interval_only);
  };
  if (const auto* op = atom.as<LTNode>()) return linear_cmp(op->a, op->b);
  if (const auto* op = atom.as<LENode>()) return linear_cmp(op->a, op->b);
  if (const auto* op = atom.as<GTNode>()) return linear_cmp(op->a, op->b);
  if (const auto* op = atom.as<GENode>()) return linear_cmp(op->a, op->b);
  // Equality: the exact minimum and maximum decide it too. Disequality only without constant
  // factors (2 * x skips odd values, which the bounds do not see).
  const auto* eq = atom.as<EQNode>();
  const auto* ne = atom.as<NENode>();
  if (eq || ne) {
    bool scaled = false;
    PostOrderVisit(atom, [&](const ObjectRef& n) { scaled = scaled || n.as<MulNode>(); });
    bool is_ne = (ne != nullptr) != negated;
    if (is_ne && scaled) return false;
    return eq ? linear_cmp(eq->a, eq->b) : linear_cmp(ne->a, ne->b);
  }
  return false;
}

namespace {

// Exact evaluation of the IR at one point (values of the free variables), for the cheap refuter.
// `undefined` marks a point where the IR leaves a result undefined (division by zero, a shift
// amount outside [0, bits)); `unknown` a node this evaluator does not model, so no point can be
// trusted.
class PointEvaluator {
 public:
  // assume_no_overflow: signed 32/64-bit + - * / % are exact, and a point where one of them
  // leaves its dtype is outside what the analyzer reasons about (it counts as undefined).
  PointEvaluator(const std::unordered_map<const VarNode*, i128>& point,
                 const std::unordered_map<const VarNode*, PrimExpr>& values,
                 bool assume_no_overflow)
      : point_(point), values_(values), assume_no_overflow_(assume_no_overflow) {}

  bool unknown = false;
  bool undefined = false;

  i128 Eval(const PrimExpr& e) {
    DepthGuard level;
    if (unknown || undefined) return 0;
    DataType t = e.dtype();
    if (!t.is_scalar() || !(t.is_bool() || t.is_int_or_uint()) || t.bits() > 64) {
      unknown = true;
      return 0;
    }
    if (const auto* op = e.as<IntImmNode>()) return op->value;
    if (const auto* v = e.as<VarNode>()) return Lookup(v);
    if (const auto* op = e.as<AddNode>()) return Arith(Eval(op->a) + Eval(op->b), t);
    if (const auto* op = e.as<SubNode>()) return Arith(Eval(op->a) - Eval(op->b), t);
    if (const auto* op = e.as<MulNode>()) return Arith(Multiply(Eval(op->a), Eval(op->b)), t);
    if (const auto* op = e.as<DivNode>()) return Divide(op->a, op->b, t, true, false);
    if (const auto* op = e.as<ModNode>()) return Divide(op->a, op->b, t, false, false);
    if (const auto* op = e.as<FloorDivNode>()) return Divide(op->a, op->b, t, true, true);
    if (const auto* op = e.as<FloorModNode>()) return Divide(op->a, op->b, t, false, true);
    if (const auto* op = e.as<MinNode>()) return std::min(Eval(op->a), Eval(op->b));
    if (const auto* op = e.as<MaxNode>()) return std::max(Eval(op->a), Eval(op->b));
    if (const auto* op = e.as<EQNode>()) return Eval(op->a) == Eval(op->b);
    if (const auto* op = e.as<NENode>()) return Eval(op->a) != Eval(op->b);
    if (const auto* op = e.as<LTNode>()) return Eval(op->a) < Eval(op->b);
    if (const auto* op = e.as<LENode>()) return Eval(op->a) <= Eval(op->b);
    if (const auto* op = e.as<GTNode>()) return Eval(op->a) > Eval(op->b);
    if (const auto* op = e.as<GENode>()) return Eval(op->a) >= Eval(op->b);
    // Both sides are evaluated: an undefined value on the side not taken still only skips a
    // point, which costs a candidate, never soundness.
    if (const auto* op = e.as<AndNode>()) return (Eval(op->a) != 0) & (Eval(op->b) != 0);
    if (const auto* op = e.as<OrNode>()) return (Eval(op->a) != 0) | (Eval(op->b) != 0);
    if (const auto* op = e.as<NotNode>()) return Eval(op->a) == 0;
    if (const auto* op = e.as<SelectNode>()) {
      i128 c = Eval(op->condition);
      i128 a = Eval(op->true_value);
      i128 b = Eval(op->false_value);
      return c ? a : b;
    }
    if (const auto* op = e.as<CastNode>()) {
      i128 v = Eval(op->value);
      if (t.is_bool()) return v != 0;
      return Wrap(v, t);
    }
    if (const auto* call = e.as<CallNode>()) return EvalCall(call, t);
    unknown = true;
    return 0;
  }

 private:
  // The value of an arithmetic result whose exact value is v.
  // The product modulo 2^128. Exact where the analyzer needs it (signed operands of at most 64
  // bits: |a * b| <= 2^126), and right modulo 2^64 otherwise, which is all Wrap keeps. Two uint64
  // values near 2^64 multiplied as i128 overflowed it: undefined behaviour (UBSan, rule_z3_test).
  static i128 Multiply(i128 a, i128 b) {
    return static_cast<i128>(static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b));
  }

  i128 Arith(i128 v, DataType t) {
    if (assume_no_overflow_ && NoOverflowDType(t)) {
      if (!FitsInDType(t, v)) undefined = true;
      return v;
    }
    return Wrap(v, t);
  }

  static i128 Wrap(i128 v, DataType t) {
    if (t.is_bool()) return v != 0;
    int bits = t.bits();
    unsigned __int128 mask = (static_cast<unsigned __int128>(1) << bits) - 1;
    unsigned __int128 m = static_cast<unsigned __int128>(v) & mask;
    i128 r = static_cast<i128>(m);
    if (t.is_int() && r >= (static_cast<i128>(1) << (bits - 1))) r -= static_cast<i128>(1) << bits;
    return r;
  }

  i128 Divide(const PrimExpr& a, const PrimExpr& b, DataType t, bool quotient, bool floor) {
    i128 x = Eval(a);
    i128 y = Eval(b);
    if (unknown || undefined) return 0;
    if (y == 0) {
      undefined = true;
      return 0;
    }
    if (floor) return Arith(quotient ? FloorDivI128(x, y) : FloorModI128(x, y), t);
    return Arith(quotient ? x / y : x % y, t);
  }

  i128 EvalCall(const CallNode* call, DataType t) {
    const auto& args = call->args;
    if (call->op.same_as(builtin::likely()) && args.size() == 1) return Eval(args[0]);
    if (args.size() == 2 &&
        (call->op.same_as(builtin::shift_left()) || call->op.same_as(builtin::shift_right()))) {
      i128 a = Eval(args[0]);
      i128 b = Eval(args[1]);
      if (unknown || undefined) return 0;
      if (t.is_bool() || b < 0 || b >= t.bits()) {
        undefined = true;
        return 0;
      }
      if (call->op.same_as(builtin::shift_right())) return a >> static_cast<int>(b);
      return Wrap(static_cast<i128>(static_cast<unsigned __int128>(a) << static_cast<int>(b)), t);
    }
    if (args.size() == 2 && !t.is_bool()) {
      if (call->op.same_as(builtin::bitwise_and())) return Wrap(Eval(args[0]) & Eval(args[1]), t);
      if (call->op.same_as(builtin::bitwise_or())) return Wrap(Eval(args[0]) | Eval(args[1]), t);
      if (call->op.same_as(builtin::bitwise_xor())) return Wrap(Eval(args[0]) ^ Eval(args[1]), t);
    }
    if (args.size() == 1 && !t.is_bool() && call->op.same_as(builtin::bitwise_not())) {
      return Wrap(~Eval(args[0]), t);
    }
    unknown = true;
    return 0;
  }

  i128 Lookup(const VarNode* v) {
    auto it = point_.find(v);
    if (it != point_.end()) return it->second;
    auto vt = values_.find(v);
    // A variable bound to a value has that value; the guard stops a cyclic binding.
    if (vt == values_.end() || depth_ > 64) {
      unknown = true;
      return 0;
    }
    ++depth_;
    i128 r = Eval(vt->second);
    --depth_;
    return r;
  }

  const std::unordered_map<const VarNode*, i128>& point_;
  const std::unordered_map<const VarNode*, PrimExpr>& values_;
  bool assume_no_overflow_;
  int depth_ = 0;
};

}  // namespace

bool Z3Prover::Impl::RefutedCheaply(const PrimExpr& cond) const {
  if (!cond.dtype().is_bool() || !cond.dtype().is_scalar()) return false;
  // The variables met, transitively through bindings; those bound to a value are computed, the
  // others get candidate values.
  std::vector<const VarNode*> free;
  std::unordered_set<const VarNode*> seen;
  std::unordered_map<const VarNode*, PrimExpr> values;
  std::vector<std::pair<const VarNode*, const RangeNode*>> ranges;
  std::vector<ObjectRef> work{cond};
  for (const PrimExpr& f : facts) work.push_back(f);
  while (!work.empty()) {
    ObjectRef root = work.back();
    work.pop_back();
    std::vector<const VarNode*> met;
    auto visit = [&](const ObjectRef& n) {
      if (const auto* v = n.as<VarNode>(); v && seen.insert(v).second) met.push_back(v);
    };
    if (auto e = root.as<PrimExpr>()) {
      PostOrderVisit(*e, visit);
    } else if (const auto* r = root.as<RangeNode>()) {
      PostOrderVisit(r->min, visit);
      PostOrderVisit(r->extent, visit);
    }
    for (const VarNode* v : met) {
      auto it = binding_index.find(v);
      const ObjectRef* binding = it == binding_index.end() ? nullptr : &bindings[it->second].second;
      if (binding) work.push_back(*binding);
      if (binding && binding->as<PrimExpr>()) {
        values[v] = *binding->as<PrimExpr>();
      } else {
        free.push_back(v);
        if (binding) ranges.emplace_back(v, binding->as<RangeNode>());
      }
    }
  }
  // Candidate values per free variable: the ends of its known bounds (clamped to its dtype), and
  // 0 and 1 where they lie within.
  std::vector<IntInterval> box;
  for (const VarNode* v : free) {
    DataType t = v->dtype;
    if (!t.is_scalar() || !(t.is_bool() || t.is_int_or_uint()) || t.bits() > 64) return false;
    IntInterval b = parent->const_int_bound_analyzer().Eval(tvm::ffi::GetRef<Var>(v));
    i128 tlo = t.is_int() ? -(static_cast<i128>(1) << (t.bits() - 1)) : 0;
    i128 thi = t.is_bool() ? 1 : (static_cast<i128>(1) << (t.bits() - (t.is_int() ? 1 : 0))) - 1;
    b.lo = std::max(b.lo, tlo);
    b.hi = std::min(b.hi, thi);
    if (b.lo > b.hi) return false;
    box.push_back(b);
  }
  auto clamp = [&](size_t i, i128 x) { return std::min(std::max(x, box[i].lo), box[i].hi); };
  size_t n = free.size();
  std::vector<std::vector<i128>> points;
  auto add = [&](auto pick) {
    std::vector<i128> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = pick(i);
    points.push_back(std::move(p));
  };
  add([&](size_t i) { return box[i].lo; });
  add([&](size_t i) { return box[i].hi; });
  add([&](size_t i) { return clamp(i, 0); });
  add([&](size_t i) { return clamp(i, 1); });
  add([&](size_t i) { return i % 2 ? box[i].hi : box[i].lo; });
  add([&](size_t i) { return i % 2 ? box[i].lo : box[i].hi; });
  // One variable at an end, the others at their low end, or near zero.
  for (size_t k = 0; k < std::min<size_t>(n, 8); ++k) {
    add([&](size_t i) { return i == k ? box[i].hi : box[i].lo; });
    add([&](size_t i) { return i == k ? box[i].lo : box[i].hi; });
    add([&](size_t i) { return i == k ? box[i].hi : clamp(i, 0); });
    add([&](size_t i) { return i == k ? box[i].lo : clamp(i, 0); });
    add([&](size_t i) { return i == k ? box[i].hi : clamp(i, 1); });
  }
  // Every variable at one shape-like value: facts of a tensor program's shapes (K % 8 == 0 from
  // a divisibility specialization, M <= INT_MAX // K from the host's overflow checks) admit none
  // of the points above, whose ends are 1 and INT_MAX.
  static constexpr int64_t kShapes[] = {8, 16, 128, 1024, 4096};
  for (int64_t v : kShapes) add([&](size_t i) { return clamp(i, v); });
  // Boundary values: one variable at c - 1, c or c + 1 for a constant c of the condition, the
  // variables with a range at its start and the others at a shape-like 4096. A guard such as
  // `K <= tx % 8 * 8 + 1` in the else branch of `tx % 8 * 8 + 7 < K` fails only for K in 2..7.
  std::vector<i128> near;
  PostOrderVisit(cond, [&](const ObjectRef& node) {
    if (const auto* imm = node.as<IntImmNode>()) {
      for (int64_t d = -1; d <= 1; ++d) {
        i128 c = static_cast<i128>(imm->value) + d;
        if (near.size() < 24 && std::find(near.begin(), near.end(), c) == near.end()) {
          near.push_back(c);
        }
      }
    }
  });
  std::vector<i128> base(n);
  for (size_t i = 0; i < n; ++i) {
    bool ranged = false;
    for (const auto& [v, r] : ranges) ranged = ranged || (v == free[i] && r);
    base[i] = ranged ? box[i].lo : clamp(i, 4096);
  }
  for (size_t k = 0; k < std::min<size_t>(n, 8); ++k) {
    for (i128 c : near) add([&](size_t i) { return i == k ? clamp(i, c) : base[i]; });
  }
  // Then mixes of {low end, high end, 0, 1, -1, those shapes} from a fixed pseudo-random
  // sequence, so that the answer is deterministic: they meet facts that tie unrelated variables
  // together.
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int r = 0; r < 96 && n > 0; ++r) {
    add([&](size_t i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t pick = (seed >> 33) % 10;
      switch (pick) {
        case 0:
          return box[i].lo;
        case 1:
          return box[i].hi;
        case 2:
          return clamp(i, 0);
        case 3:
          return clamp(i, 1);
        case 4:
          return clamp(i, -1);
        default:
          return clamp(i, kShapes[pick - 5]);
      }
    });
  }
  for (const auto& p : points) {
    std::unordered_map<const VarNode*, i128> point;
    for (size_t i = 0; i < n; ++i) point[free[i]] = p[i];
    PointEvaluator ev(point, values, parent->assume_no_overflow());
    bool holds = true;
    for (const auto& [v, r] : ranges) {
      if (!r) continue;
      i128 lo = ev.Eval(r->min);
      i128 extent = ev.Eval(r->extent);
      holds = holds && lo <= point[v] && point[v] < lo + extent;
    }
    // A value-bound variable must lie within its known bounds too, as in the Z3 query.
    for (const auto& [v, e] : values) {
      IntInterval b = parent->const_int_bound_analyzer().Eval(tvm::ffi::GetRef<Var>(v));
      i128 x = ev.Eval(e);
      holds = holds && b.contains(x);
    }
    for (const PrimExpr& f : facts) holds = holds && ev.Eval(f) != 0;
    bool refutes = holds && ev.Eval(cond) == 0;
    if (ev.unknown) return false;
    if (!ev.undefined && refutes) return true;
  }
  return false;
}

ProofResult Z3Prover::TryProve(const PrimExpr& cond, ProofStrength strength) {
  // A build without Z3 answers every prover query unknown (counted as one), the refuter included.
  if (!Available()) return impl_->Query(cond, /*minimize=*/false).result;
  if (cond.defined() && impl_->OutOfReach(cond)) {
    ++impl_->stats.skipped;
    return ProofResult::kUnknown;
  }
  if (cond.defined() && impl_->RefutedCheaply(cond)) {
    // The point is a genuine counterexample, which is what Z3's kDisproved means too.
    ++impl_->stats.refuted_cheaply;
    return ProofResult::kDisproved;
  }
  return impl_->Query(cond, /*minimize=*/false).result;
}

void Z3Prover::set_rlimit(int64_t rlimit) {
  if (rlimit <= 0) {
    TVM_FFI_THROW(ValueError) << "Z3Prover::set_rlimit: the resource limit must be > 0, got "
                              << rlimit;
  }
  impl_->rlimit = rlimit;
}

int64_t Z3Prover::rlimit() const { return impl_->rlimit; }

std::optional<Z3Counterexample> Z3Prover::Counterexample(const PrimExpr& cond) {
  return impl_->Query(cond, /*minimize=*/true).counterexample;
}

std::string Z3Prover::GetSMTLIB2(const PrimExpr& cond) {
  if (!cond.defined() || !cond.dtype().is_bool() || !cond.dtype().is_scalar()) {
    TVM_FFI_THROW(TypeError) << "GetSMTLIB2: the condition must be a scalar bool expression";
  }
  return impl_->SMTLIB2(cond);
}

Z3Stats Z3Prover::stats() const { return impl_->stats; }

Z3Prover* GetZ3Prover(const Analyzer& analyzer) {
  return dynamic_cast<Z3Prover*>(analyzer.FindExtension("z3"));
}

TESSEL_REGISTER_ANALYZER_EXTENSION([](Analyzer* parent) -> std::unique_ptr<AnalyzerExtension> {
  return std::make_unique<Z3Prover>(parent);
});

}  // namespace arith
}  // namespace tessel
