// The rewrite simplifier: matches the compiled rule table bottom-up, builds results in the
// matched dtype with exact constant folding, and applies a rule only where it is sound
// (rewrite_simplify.h says when that is).
#include <tessel/arith/rewrite_simplify.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <unordered_map>
#include <utility>
#include <vector>

#include "arith/depth_guard.h"
#include "arith/rewrite/compare_cast.h"
#include "arith/rewrite/if_then_else.h"
#include "arith/rewrite/product_division.h"
#include "arith/rewrite/rule_table.h"
#include "arith/rewrite/vector_rewrite.h"

namespace tessel {
namespace arith {

using namespace ir;       // NOLINT(build/namespaces)
using namespace rewrite;  // NOLINT(build/namespaces)

namespace {

// v reduced modulo 2^bits into t's range, as a mathematical value (bool: v != 0).
i128 Wrap(DataType t, i128 v) {
  if (t.is_bool()) return v != 0;
  int bits = t.bits();
  unsigned __int128 u = static_cast<unsigned __int128>(v);
  if (bits < 128) u &= (static_cast<unsigned __int128>(1) << bits) - 1;
  if (t.is_int() && ((u >> (bits - 1)) & 1)) {
    return static_cast<i128>(u) - (static_cast<i128>(1) << bits);
  }
  return static_cast<i128>(u);
}

PrimExpr MakeInt(DataType t, i128 v) {
  if (t.is_bool()) return Bool(v != 0);
  return IntImm(t, WrapToDType(t, v));
}

bool IsImpureCall(const PrimExprNode* e) {
  if (!e->IsInstance<CallNode>()) return false;
  const auto* call = static_cast<const CallNode*>(e);
  const auto* op = call->op.as<OpNode>();
  return !op || op->effect > CallEffectKind::kReadState;
}

bool IsCmp(ExprKind k) { return k >= ExprKind::kEQ && k <= ExprKind::kGE; }
bool IsLogical(ExprKind k) {
  return k == ExprKind::kAnd || k == ExprKind::kOr || k == ExprKind::kNot;
}
bool IsIntScalar(DataType t) { return t.is_scalar() && t.is_int_or_uint(); }

}  // namespace

i128 rewrite::ConstValue(const IntImmNode* n) {
  if (n->dtype.is_uint() && n->dtype.bits() == 64 && n->value < 0) {
    return static_cast<i128>(static_cast<uint64_t>(n->value));
  }
  return n->value;
}

int rewrite::KidsOf(const PrimExprNode* e, ExprKind k, const PrimExprNode* out[3]) {
  switch (k) {
#define TESSEL_X(Name)                                  \
  case ExprKind::k##Name: {                             \
    const auto* op = static_cast<const Name##Node*>(e); \
    out[0] = op->a.get();                               \
    out[1] = op->b.get();                               \
    return 2;                                           \
  }
    TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
    TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
    TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
    case ExprKind::kNot:
      out[0] = static_cast<const NotNode*>(e)->a.get();
      return 1;
    case ExprKind::kSelect: {
      const auto* op = static_cast<const SelectNode*>(e);
      out[0] = op->condition.get();
      out[1] = op->true_value.get();
      out[2] = op->false_value.get();
      return 3;
    }
    default:
      return 0;
  }
}

bool rewrite::SameExpr(const PrimExprNode* a, const PrimExprNode* b) {
  if (a == b) return true;
  if (a->dtype != b->dtype) return false;
  ExprKind k = KindOf(a);
  if (k != KindOf(b)) return false;
  if (k == ExprKind::kIntImm) {
    return static_cast<const IntImmNode*>(a)->value == static_cast<const IntImmNode*>(b)->value;
  }
  if (k == ExprKind::kVar || k == ExprKind::kSizeVar) return false;
  const PrimExprNode* ka[3];
  const PrimExprNode* kb[3];
  int n = KidsOf(a, k, ka);
  if (n == 0) {
    return tvm::ffi::StructuralEqual::Equal(GetRef<PrimExpr>(a), GetRef<PrimExpr>(b));
  }
  KidsOf(b, k, kb);
  for (int i = 0; i < n; ++i) {
    if (!SameExpr(ka[i], kb[i])) return false;
  }
  return true;
}

namespace {

// Consumes kid (moved into the node).
PrimExpr MakeNode(ExprKind k, PrimExpr* kid) {
  switch (k) {
#define TESSEL_X(Name)    \
  case ExprKind::k##Name: \
    return Name(std::move(kid[0]), std::move(kid[1]));
    TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
    TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
    TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
    case ExprKind::kNot:
      return Not(std::move(kid[0]));
    case ExprKind::kSelect:
      return Select(std::move(kid[0]), std::move(kid[1]), std::move(kid[2]));
    default:
      TVM_FFI_THROW(InternalError) << "rewrite: cannot build node kind " << static_cast<int>(k);
  }
  TVM_FFI_UNREACHABLE();
}

// The exact value of op(a, b) over integers of dtype t (nullopt: division by zero). Overflow is
// the caller's business.
std::optional<i128> ExactOp(ExprKind k, i128 a, i128 b, i128 c = 0) {
  switch (k) {
    case ExprKind::kAdd:
      return a + b;
    case ExprKind::kSub:
      return a - b;
    case ExprKind::kMul:
      return a * b;
    case ExprKind::kDiv:
      if (b == 0) return std::nullopt;
      return TruncDivI128(a, b);
    case ExprKind::kMod:
      if (b == 0) return std::nullopt;
      return TruncModI128(a, b);
    case ExprKind::kFloorDiv:
      if (b == 0) return std::nullopt;
      return FloorDivI128(a, b);
    case ExprKind::kFloorMod:
      if (b == 0) return std::nullopt;
      return FloorModI128(a, b);
    case ExprKind::kMin:
      return a < b ? a : b;
    case ExprKind::kMax:
      return a > b ? a : b;
    case ExprKind::kEQ:
      return a == b;
    case ExprKind::kNE:
      return a != b;
    case ExprKind::kLT:
      return a < b;
    case ExprKind::kLE:
      return a <= b;
    case ExprKind::kGT:
      return a > b;
    case ExprKind::kGE:
      return a >= b;
    case ExprKind::kAnd:
      return (a != 0) && (b != 0);
    case ExprKind::kOr:
      return (a != 0) || (b != 0);
    case ExprKind::kNot:
      return a == 0;
    case ExprKind::kSelect:
      return a != 0 ? b : c;
    default:
      return std::nullopt;
  }
}

bool MayOverflow(ExprKind k) {
  return k == ExprKind::kAdd || k == ExprKind::kSub || k == ExprKind::kMul || k == ExprKind::kDiv ||
         k == ExprKind::kFloorDiv;
}
bool IsDivision(ExprKind k) {
  return k == ExprKind::kDiv || k == ExprKind::kMod || k == ExprKind::kFloorDiv ||
         k == ExprKind::kFloorMod;
}

// A built piece of a rule's result or condition.
struct Val {
  // The value's node, null for a constant. A matched hole is named without a reference (it lives
  // in the expression being rewritten, and most built values are only compared by their
  // intervals); a built node is held in `owned`.
  const PrimExprNode* node = nullptr;
  PrimExpr owned;
  i128 c = 0;
  DataType t;
  IntInterval iv{0, 0};
  // Only while a rule's condition is built: a part that Decide could not prove either (no node,
  // no constant).
  bool unprovable = false;
  bool is_const() const { return node == nullptr && !unprovable; }
  PrimExpr Take() { return owned.defined() ? std::move(owned) : GetRef<PrimExpr>(node); }
};

// A visited node and what it became. Raw pointers: every node whose address is recorded stays
// alive until the call ends (Scratch::keep), so an address cannot be reused by another node; and a
// reference here would cost two atomic count updates per node (reference counting was about a
// third of a simplification's time before it was cut down).
struct Done {
  const Object* key;
  const PrimExprNode* result;
  bool impure;
};

}  // namespace

struct RewriteSimplifier::Scratch {
  std::vector<PrimExpr> facts;
  std::vector<Done> done;
  std::unordered_map<const Object*, size_t> done_index;
  // Every node this call built (rule results, rebuilt parents, folded constants): with the
  // caller's expression they hold every node a Done entry names.
  std::vector<PrimExpr> keep;
};

namespace {

class Rewriter : public ExprMutator {
 public:
  Rewriter(Analyzer* analyzer, int budget, RewriteSimplifier::Scratch* scratch)
      : analyzer_(analyzer),
        budget_(budget),
        facts_(scratch->facts),
        done_(scratch->done),
        done_index_(scratch->done_index),
        keep_(scratch->keep) {
    for (const PrimExpr& f : analyzer->facts()) AddFact(f);
  }
  ~Rewriter() override {
    facts_.clear();
    done_.clear();
    if (!done_index_.empty()) done_index_.clear();
    keep_.clear();
  }

  int steps() const { return steps_; }

  PrimExpr VisitExpr(const PrimExpr& e) final {
    // A scalar variable or constant has no rule and no operand: not worth a memo entry. A variable
    // whose value is known becomes that constant (the facade's constant pass, skipped for pure
    // integer arithmetic, would have done it).
    if (e->dtype.is_scalar() && (e->IsInstance<IntImmNode>() || e->IsInstance<FloatImmNode>())) {
      return e;
    }
    if (e->dtype.is_scalar() && e->IsInstance<VarNode>()) {
      DataType t = e->dtype;
      if (!t.is_int_or_uint() && !t.is_bool()) return e;
      IntInterval b = Bound(e.get());
      if (b.is_point() && FitsInDType(t, b.lo)) return MakeInt(t, b.lo);
      if (t.is_int_or_uint() && analyzer_->modular_set_analyzer().HasVarFacts()) {
        auto [coeff, base] = analyzer_->modular_set_analyzer().Eval(e);
        if (coeff == 0 && FitsInDType(t, base)) return MakeInt(t, base);
      }
      return e;
    }
    if (const Done* d = FindDone(e.get())) {
      impure_ = impure_ || d->impure;
      return GetRef<PrimExpr>(d->result);
    }
    DepthGuard level;
    bool outer = impure_;
    impure_ = false;
    PrimExpr r = ExprMutator::VisitExpr(e);
    bool here = impure_ || IsImpureCall(r.get());
    if (!here) r = Post(std::move(r));
    impure_ = outer || here;
    AddDone(e.get(), r.get(), here);
    if (!r.same_as(e)) {
      keep_.push_back(r);
      AddDone(r.get(), r.get(), here);
    }
    return r;
  }

 private:
  // The memo of visited nodes: index expressions are small, so a linear scan of a flat vector
  // beats hashing (and allocates once); a hash index takes over for large expressions.
  static constexpr size_t kLinearDone = 48;
  const Done* FindDone(const Object* key) const {
    if (done_.size() <= kLinearDone) {
      for (const Done& d : done_) {
        if (d.key == key) return &d;
      }
      return nullptr;
    }
    auto it = done_index_.find(key);
    return it == done_index_.end() ? nullptr : &done_[it->second];
  }
  void AddDone(const Object* key, const PrimExprNode* result, bool impure) {
    done_.push_back(Done{key, result, impure});
    if (done_.size() == kLinearDone + 1) {
      for (size_t i = 0; i < done_.size(); ++i) done_index_.emplace(done_[i].key, i);
    } else if (done_.size() > kLinearDone + 1) {
      done_index_.emplace(key, done_.size() - 1);
    }
  }
  struct Match {
    const PrimExprNode* hole[kNumHoles] = {};
  };

  void AddFact(const PrimExpr& f) {
    if (const auto* a = f.as<AndNode>()) {
      AddFact(a->a);
      AddFact(a->b);
    } else {
      facts_.push_back(f);
    }
  }

  // ConstIntBoundAnalyzer keeps the bounds it computed until the analyzer's state changes.
  IntInterval Bound(const PrimExprNode* e) { return analyzer_->const_int_bound_analyzer().Eval(e); }

  // Rewrites e (whose operands are already rewritten) until no rule applies.
  PrimExpr Post(PrimExpr e) {
    while (true) {
      const PrimExprNode* n = e.get();
      DataType t = n->dtype;
      if (!t.is_scalar()) {
        if (steps_ >= budget_) return e;
        std::optional<PrimExpr> next = RewriteVector(e, analyzer_);
        if (!next) return e;
        ++steps_;
        keep_.push_back(*next);  // its operands become memo keys
        e = ExprMutator::VisitExpr(*next);
        continue;
      }
      if (n->IsInstance<CastNode>()) {
        if (auto folded = FoldConstantCast(static_cast<const CastNode*>(n))) return *folded;
      }
      if (n->IsInstance<CallNode>() && steps_ < budget_) {
        if (std::optional<PrimExpr> merged = MergeNestedIfThenElse(n)) {
          ++steps_;
          keep_.push_back(*merged);  // its operands become memo keys
          e = ExprMutator::VisitExpr(*merged);
          continue;
        }
      }
      if (!(t.is_int_or_uint() || t.is_bool())) return e;
      ExprKind k = KindOf(n);
      const PrimExprNode* kids[3];
      int nk = KidsOf(n, k, kids);
      if (nk == 0) return e;
      if (IsCmp(k) && !IsIntScalar(kids[0]->dtype)) return e;
      if (auto folded = Fold(n, k, kids, nk)) return *folded;
      if (IsCmp(k) || IsLogical(k) || IsDivision(k) || k == ExprKind::kMin || k == ExprKind::kMax ||
          k == ExprKind::kSelect) {
        IntInterval b = Bound(n);
        if (b.is_point() && FitsInDType(t, b.lo)) return MakeInt(t, b.lo);
        // A remainder the modular sets fix (`x % 4` when `x % 4 == 1` is a fact, `(x * 4) % 2`).
        if ((k == ExprKind::kFloorMod || k == ExprKind::kMod) && t.is_int_or_uint()) {
          auto [coeff, base] = analyzer_->modular_set_analyzer().Eval(e);
          if (coeff == 0 && FitsInDType(t, base)) return MakeInt(t, base);
        }
        if (t.is_bool()) {
          for (const PrimExpr& f : facts_) {
            if (SameExpr(f.get(), n)) return Bool(true);
          }
        }
        if (IsCmp(k)) {
          ProofResult r = ScaledCompare(k, kids[0], kids[1]);
          if (r != ProofResult::kUnknown) return Bool(r == ProofResult::kProved);
        }
      }
      if (k == ExprKind::kMin || k == ExprKind::kMax) {
        // An operand that already occurs in the other's chain of the same operator adds nothing:
        // min(min(min(x, y), z), y) is min(min(x, y), z), at any depth the rules do not spell.
        if (ChainHas(kids[0], k, kids[1], kMaxChainDepth)) return GetRef<PrimExpr>(kids[0]);
        if (ChainHas(kids[1], k, kids[0], kMaxChainDepth)) return GetRef<PrimExpr>(kids[1]);
      }
      if (steps_ >= budget_) return e;
      std::optional<PrimExpr> next;
      ExprKind kid_kind[3] = {ExprKind::kUnknown, ExprKind::kUnknown, ExprKind::kUnknown};
      for (int j = 0; j < nk; ++j) kid_kind[j] = KindOf(kids[j]);
      RuleTable::Span cands = GetRuleTable().Candidates(k, kid_kind[0], kids[0], kid_kind[1],
                                                        nk > 1 ? kids[1] : nullptr);
      for (const CompiledRule* const* it = cands.begin; it != cands.end; ++it) {
        const CompiledRule* rule = *it;
        ExprKind want = rule->kid_kind[2];
        if (want != ExprKind::kUnknown && want != kid_kind[2]) continue;
        next = TryRule(*rule, e);
        if (next) break;
      }
      if (!next && IsCmp(k)) next = NormalizeOffsetCompare(n, analyzer_);
      if (!next && IsDivision(k)) next = CancelCommonFactors(n, analyzer_);
      if (!next) return e;
      ++steps_;
      // The result's operands are rewritten holes or fresh nodes: visit them, then this node.
      keep_.push_back(*next);  // its operands become memo keys
      e = ExprMutator::VisitExpr(*next);
    }
  }

  static constexpr int kMaxChainDepth = 16;
  static constexpr int kMaxDivisorSearch = 8;
  // Whether e (within `depth` levels) contains a division or remainder whose divisor is d.
  static bool InputDividesBy(const PrimExprNode* e, const PrimExprNode* d, int depth) {
    if (!e || depth == 0) return false;
    ExprKind k = KindOf(e);
    const PrimExprNode* kids[3];
    int n = KidsOf(e, k, kids);
    if (IsDivision(k) && n == 2 && SameExpr(kids[1], d)) return true;
    for (int j = 0; j < n; ++j) {
      if (InputDividesBy(kids[j], d, depth - 1)) return true;
    }
    return false;
  }
  // Whether b is a (pure) operand of the chain of k-nodes rooted at a, a itself included.
  static bool ChainHas(const PrimExprNode* a, ExprKind k, const PrimExprNode* b, int depth) {
    if (SameExpr(a, b)) return true;
    if (depth == 0 || KindOf(a) != k) return false;
    const PrimExprNode* kids[3];
    KidsOf(a, k, kids);
    return ChainHas(kids[0], k, b, depth - 1) || ChainHas(kids[1], k, b, depth - 1);
  }

  // All operands constant: the exact value with wrap-around (division by zero stays).
  std::optional<PrimExpr> Fold(const PrimExprNode* n, ExprKind k, const PrimExprNode** kids,
                               int nk) {
    i128 v[3] = {0, 0, 0};
    for (int i = 0; i < nk; ++i) {
      const auto* imm =
          kids[i]->IsInstance<IntImmNode>() ? static_cast<const IntImmNode*>(kids[i]) : nullptr;
      // A select with a constant condition picks its arm (both are evaluated; dropping one is
      // fine since only the chosen value is observable).
      if (k == ExprKind::kSelect && i == 0 && imm) {
        return GetRef<PrimExpr>(ConstValue(imm) ? kids[1] : kids[2]);
      }
      if (!imm) return std::nullopt;
      v[i] = ConstValue(imm);
    }
    auto r = ExactOp(k, v[0], v[1], v[2]);
    if (!r) return std::nullopt;
    // Under assume_no_overflow a signed 32/64-bit value is its mathematical value: a constant
    // that leaves the dtype cannot be written, so the node stays.
    if (MathInt(n->dtype) && !FitsInDType(n->dtype, *r)) return std::nullopt;
    return MakeInt(n->dtype, Wrap(n->dtype, *r));
  }

  bool MatchAt(const Pattern& p, int32_t i, const PrimExprNode* e, Match* m) {
    const PatNode& pn = p[i];
    if (pn.kind == ExprKind::kVar) {
      if (IsConstHole(pn.hole)) {
        if (!e->IsInstance<IntImmNode>() || !e->dtype.is_int_or_uint()) return false;
      } else if ((pn.hole == kP || pn.hole == kQ) != e->dtype.is_bool() || !e->dtype.is_scalar() ||
                 !(e->dtype.is_int_or_uint() || e->dtype.is_bool())) {
        // Rules are integer algebra: a float operand (NaN, rounding) never matches.
        return false;
      }
      const PrimExprNode*& slot = m->hole[pn.hole];
      if (slot) return SameExpr(slot, e);
      slot = e;
      return true;
    }
    ExprKind k = KindOf(e);
    if (pn.kind == ExprKind::kIntImm) {
      return k == ExprKind::kIntImm && e->dtype.is_bool() == pn.bool_literal &&
             ConstValue(static_cast<const IntImmNode*>(e)) == pn.value;
    }
    if (k != pn.kind) return false;
    const PrimExprNode* kids[3];
    int n = KidsOf(e, k, kids);
    for (int j = 0; j < n; ++j) {
      if (!MatchAt(p, pn.kid[j], kids[j], m)) return false;
    }
    return true;
  }

  // Every integer operation of the matched expression stays inside its dtype.
  bool NoOverflowIn(const Pattern& p, int32_t i, const PrimExprNode* e) {
    const PatNode& pn = p[i];
    if (pn.kind == ExprKind::kVar || pn.kind == ExprKind::kIntImm) return true;
    const PrimExprNode* kids[3];
    int n = KidsOf(e, pn.kind, kids);
    for (int j = 0; j < n; ++j) {
      if (!NoOverflowIn(p, pn.kid[j], kids[j])) return false;
    }
    if (!MayOverflow(pn.kind)) return true;
    std::optional<IntInterval> r = OpInterval(pn.kind, Bound(kids[0]), Bound(kids[1]));
    return !r || FitsOrAssumed(*r, e->dtype, analyzer_->assume_no_overflow());
  }

  // The exact interval of op over operand intervals (nullopt: always a division by zero).
  static std::optional<IntInterval> OpInterval(ExprKind k, const IntInterval& a,
                                               const IntInterval& b) {
    switch (k) {
      case ExprKind::kAdd:
        return AddInterval(a, b);
      case ExprKind::kSub:
        return SubInterval(a, b);
      case ExprKind::kMul:
        return MulInterval(a, b);
      case ExprKind::kDiv:
        return TruncDivInterval(a, b);
      case ExprKind::kMod:
        return TruncModInterval(a, b);
      case ExprKind::kFloorDiv:
        return FloorDivInterval(a, b);
      case ExprKind::kFloorMod:
        return FloorModInterval(a, b);
      case ExprKind::kMin:
        return MinInterval(a, b);
      case ExprKind::kMax:
        return MaxInterval(a, b);
      default:
        return IntInterval{0, 1};
    }
  }

  DataType HoleType(const Match& m, int hole) { return m.hole[hole]->dtype; }

  // Whether t's arithmetic is mathematical here (assume_no_overflow): no constant of it may wrap.
  bool MathInt(DataType t) const {
    return analyzer_->assume_no_overflow() && NoOverflowDType(t.element_of());
  }

  // The value of a constant subtree, exact (every step must fit t) or wrapping.
  bool ConstEval(const Pattern& p, int32_t i, const Match& m, DataType t, bool wrap, i128* out) {
    if (wrap && MathInt(t)) wrap = false;
    const PatNode& pn = p[i];
    if (pn.kind == ExprKind::kVar) {
      *out = ConstValue(static_cast<const IntImmNode*>(m.hole[pn.hole]));
      return true;
    }
    if (pn.kind == ExprKind::kIntImm) {
      if (pn.bool_literal) {
        *out = pn.value;
        return true;
      }
      if (wrap) {
        *out = Wrap(t, pn.value);
        return true;
      }
      *out = pn.value;
      return FitsInDType(t, pn.value);
    }
    i128 v[3] = {0, 0, 0};
    for (int j = 0; j < pn.num_kids; ++j) {
      if (!ConstEval(p, pn.kid[j], m, t, wrap, &v[j])) return false;
    }
    auto r = ExactOp(pn.kind, v[0], v[1], v[2]);
    if (!r) return false;
    if (IsCmp(pn.kind) || IsLogical(pn.kind)) {
      *out = *r;
      return true;
    }
    if (wrap) {
      *out = Wrap(t, *r);
      return true;
    }
    *out = *r;
    return FitsInDType(t, *r);
  }

  static DataType ResultTypeOf(ExprKind k, const PatNode& pn, DataType t) {
    if (IsCmp(k) || IsLogical(k) || (k == ExprKind::kIntImm && pn.bool_literal)) {
      return DataType::Bool();
    }
    return t;
  }

  // Builds a subtree of a result or condition; t_hint types literal-only constants.
  bool Build(const Pattern& p, int32_t i, const Match& m, DataType t_hint, bool wrap, Val* out) {
    const PatNode& pn = p[i];
    if (pn.constant) {
      DataType t = pn.const_hole >= 0 ? HoleType(m, pn.const_hole) : t_hint;
      if (!ConstEval(p, i, m, t, wrap, &out->c)) return false;
      out->t = ResultTypeOf(pn.kind, pn, t);
      out->iv = {out->c, out->c};
      return true;
    }
    if (pn.kind == ExprKind::kVar) {
      out->node = m.hole[pn.hole];
      out->t = out->node->dtype;
      out->iv = Bound(m.hole[pn.hole]);
      return true;
    }
    Val kid[3];
    // Non-constant operands first: their dtype types the constant ones.
    DataType sib = t_hint;
    bool have_sib = false;
    for (int j = 0; j < pn.num_kids; ++j) {
      if (p[pn.kid[j]].constant) continue;
      if (!Build(p, pn.kid[j], m, t_hint, wrap, &kid[j])) return false;
      // `a and b` with a decided false (or `a or b` with a true) needs no b: most conditions
      // (`x >= 0 and x < y`) are settled by their first part.
      if ((pn.kind == ExprKind::kAnd || pn.kind == ExprKind::kOr) && kid[j].is_const() &&
          (kid[j].c != 0) == (pn.kind == ExprKind::kOr)) {
        SetBool(out, pn.kind == ExprKind::kOr);
        return true;
      }
      bool operand_typed = pn.kind != ExprKind::kSelect || j > 0;
      if (!have_sib && operand_typed) {
        sib = kid[j].t;
        have_sib = true;
      }
    }
    for (int j = 0; j < pn.num_kids; ++j) {
      if (p[pn.kid[j]].constant) {
        bool cond_operand = pn.kind == ExprKind::kSelect && j == 0;
        DataType want = IsLogical(pn.kind) || cond_operand ? DataType::Bool() : sib;
        if (!Build(p, pn.kid[j], m, want, wrap, &kid[j])) return false;
        DataType ct = kid[j].t.is_bool() ? kid[j].t : want;
        if (!ct.is_bool() && (!wrap || MathInt(ct)) && !FitsInDType(ct, kid[j].c)) return false;
        kid[j].t = ct;
      }
    }
    if (DecideByIntervals(pn.kind, kid, out)) return true;
    if (building_cond_) {
      // A value that is not a truth value (a select, an arithmetic node) over an unprovable part
      // has no interval to go on: the condition is given up, as Decide could not prove it.
      bool truth = IsCmp(pn.kind) || IsLogical(pn.kind) || pn.kind == ExprKind::kNot;
      for (int j = 0; j < pn.num_kids; ++j) {
        if (kid[j].unprovable && !truth) return false;
      }
      if (Unprovable(pn.kind, pn.num_kids, kid, out)) return true;
    }
    ExprKind k = pn.kind;
    DataType t = kid[0].t;
    if (k == ExprKind::kSelect) {
      out->iv = Union(kid[1].iv, kid[2].iv);
    } else if (IsCmp(k) || IsLogical(k)) {
      out->iv = {0, 1};
    } else {
      // A division whose divisor may be zero is built only by a divisor the matched input
      // already divides by: where it is zero the input is undefined behaviour (ir/expr.h), so
      // the result may be anything there, and no new division by zero is introduced.
      if (IsDivision(k) && kid[1].iv.contains(0) &&
          !(kid[1].node && InputDividesBy(input_, kid[1].node, kMaxDivisorSearch))) {
        return false;
      }
      std::optional<IntInterval> r = OpInterval(k, kid[0].iv, kid[1].iv);
      if (!r) return false;
      if (MayOverflow(k) && !FitsIn(*r, t)) {
        bool assumed = MathInt(t);
        if (!wrap && !assumed) return false;
        *r = FitOrExact(*r, t.element_of(), assumed);
      }
      out->iv = *r;
      if (FoldWithoutNode(k, kid, t, out)) return true;
    }
    PrimExpr exprs[3];
    for (int j = 0; j < pn.num_kids; ++j) {
      // Constants (of the pattern, or sub-conditions decided by intervals) become literals here.
      exprs[j] = kid[j].is_const() ? MakeInt(kid[j].t, kid[j].c) : kid[j].Take();
    }
    out->owned = MakeNode(k, exprs);
    out->node = out->owned.get();
    out->t = out->node->dtype;
    return true;
  }

  // An arithmetic node of a rule's result (or condition) that needs no IR: its operands' intervals
  // pin its value down (`ii // 2` for ii in [0, 2) is 0), or it is an identity (x * 1, 1 * x,
  // x + 0, 0 + x, x - 0, x // 1). Without this the node would be built, visited, matched against
  // its rules and folded to the same answer. Sound: the intervals bound the operands' actual
  // values (exact, or the whole dtype where a wrapping step may overflow), and the holes of a
  // rule are pure (Post never runs on an impure subtree), so dropping one changes nothing.
  static bool FoldWithoutNode(ExprKind k, Val* kid, DataType t, Val* out) {
    if (!IsIntScalar(t) || kid[0].t != kid[1].t) return false;
    if (out->iv.is_point() && FitsInDType(t, out->iv.lo)) {
      i128 v = out->iv.lo;
      *out = Val();
      out->c = v;
      out->t = t;
      out->iv = {v, v};
      return true;
    }
    auto is = [&](int j, i128 v) { return kid[j].is_const() && kid[j].c == v; };
    int keep = -1;
    switch (k) {
      case ExprKind::kMul:
        keep = is(1, 1) ? 0 : is(0, 1) ? 1 : -1;
        break;
      case ExprKind::kAdd:
        keep = is(1, 0) ? 0 : is(0, 0) ? 1 : -1;
        break;
      case ExprKind::kSub:
      case ExprKind::kDiv:
      case ExprKind::kFloorDiv:
        keep = is(1, k == ExprKind::kSub ? 0 : 1) ? 0 : -1;
        break;
      default:
        break;
    }
    if (keep < 0) return false;
    IntInterval iv = out->iv;
    *out = std::move(kid[keep]);
    out->iv = iv;
    return true;
  }

  // While a condition is built, a part the intervals left open that Decide could not prove
  // either is marked instead of built: an order comparison with a constant side (Decide would
  // only ask the same bounds again, or find the very comparison among the facts, when there are
  // none), and what such a part makes unprovable (an `and`, `not` or comparison of it; an `or` is
  // left with its other operand). Only truth values are marked, so the [0, 1] interval of a mark
  // holds. Most conditions tried on index expressions over unbounded variables
  // (`x >= 0 and x < y` for `i % 8`) end here without building IR.
  bool Unprovable(ExprKind k, int nk, Val* kid, Val* out) const {
    bool any = false;
    for (int j = 0; j < nk; ++j) any = any || kid[j].unprovable;
    if (k == ExprKind::kOr && any && !(kid[0].unprovable && kid[1].unprovable)) {
      *out = std::move(kid[kid[0].unprovable ? 1 : 0]);
      return true;
    }
    bool order =
        k == ExprKind::kLT || k == ExprKind::kLE || k == ExprKind::kGT || k == ExprKind::kGE;
    if (!any && !(order && facts_.empty() && (kid[0].is_const() || kid[1].is_const()))) {
      return false;
    }
    *out = Val();
    out->unprovable = true;
    out->t = DataType::Bool();
    out->iv = {0, 1};
    return true;
  }

  static void SetBool(Val* out, bool v) {
    *out = Val();
    out->c = v;
    out->t = DataType::Bool();
    out->iv = {v, v};
  }

  // A comparison whose operands' intervals already decide it, and a logical node with a decided
  // operand, become constants without building IR (which would then be decided from bounds
  // anyway). The intervals hold every value the operands take: a condition's operands are built
  // exactly (no step may wrap), a result's exactly or as the whole dtype where a step may wrap.
  static bool DecideByIntervals(ExprKind k, Val* kid, Val* out) {
    if (IsCmp(k)) {
      const IntInterval &a = kid[0].iv, &b = kid[1].iv;
      if (a.is_empty() || b.is_empty()) return false;
      std::optional<bool> d;
      switch (k) {
        case ExprKind::kLT:
          if (a.hi < b.lo) d = true;
          if (a.lo >= b.hi) d = false;
          break;
        case ExprKind::kLE:
          if (a.hi <= b.lo) d = true;
          if (a.lo > b.hi) d = false;
          break;
        case ExprKind::kGT:
          if (a.lo > b.hi) d = true;
          if (a.hi <= b.lo) d = false;
          break;
        case ExprKind::kGE:
          if (a.lo >= b.hi) d = true;
          if (a.hi < b.lo) d = false;
          break;
        case ExprKind::kEQ:
          if (a.is_point() && b.is_point() && a.lo == b.lo) d = true;
          if (a.hi < b.lo || b.hi < a.lo) d = false;
          break;
        case ExprKind::kNE:
          if (a.hi < b.lo || b.hi < a.lo) d = true;
          if (a.is_point() && b.is_point() && a.lo == b.lo) d = false;
          break;
        default:
          break;
      }
      if (!d) return false;
      SetBool(out, *d);
      return true;
    }
    if (k == ExprKind::kNot) {
      if (!kid[0].is_const()) return false;
      SetBool(out, kid[0].c == 0);
      return true;
    }
    if (k == ExprKind::kAnd || k == ExprKind::kOr) {
      bool absorbing = k == ExprKind::kOr;  // the value that decides: false for and, true for or
      for (int j = 0; j < 2; ++j) {
        if (kid[j].is_const() && (kid[j].c != 0) == absorbing) {
          SetBool(out, absorbing);
          return true;
        }
      }
      for (int j = 0; j < 2; ++j) {
        if (kid[j].is_const()) {  // the neutral value: the other operand decides
          *out = kid[1 - j];
          return true;
        }
      }
    }
    return false;
  }

  ProofResult Decide(const PrimExpr& c) {
    const PrimExprNode* n = c.get();
    if (const auto* imm = c.as<IntImmNode>()) {
      return imm->value ? ProofResult::kProved : ProofResult::kDisproved;
    }
    if (const auto* op = c.as<NotNode>()) {
      ProofResult r = Decide(op->a);
      if (r == ProofResult::kProved) return ProofResult::kDisproved;
      if (r == ProofResult::kDisproved) return ProofResult::kProved;
      return r;
    }
    if (const auto* op = c.as<AndNode>()) {
      ProofResult a = Decide(op->a);
      if (a != ProofResult::kProved) return a;
      return Decide(op->b);
    }
    if (const auto* op = c.as<OrNode>()) {
      ProofResult a = Decide(op->a);
      if (a == ProofResult::kProved) return a;
      ProofResult b = Decide(op->b);
      if (b == ProofResult::kProved) return b;
      return a == ProofResult::kDisproved && b == ProofResult::kDisproved ? b
                                                                          : ProofResult::kUnknown;
    }
    for (const PrimExpr& f : facts_) {
      if (SameExpr(f.get(), n)) return ProofResult::kProved;
    }
    IntInterval b = Bound(n);
    if (b.lo >= 1) return ProofResult::kProved;
    if (b.hi <= 0) return ProofResult::kDisproved;
    const EQNode* eq = c.as<EQNode>();
    const NENode* ne = c.as<NENode>();
    if (eq || ne) {
      const PrimExpr& a = eq ? eq->a : ne->a;
      const PrimExpr& bb = eq ? eq->b : ne->b;
      if (!IsIntScalar(a.dtype())) return ProofResult::kUnknown;
      const ModularSetAnalyzer& mods = analyzer_->modular_set_analyzer();
      auto [ca, ba] = mods.Eval(a);
      auto [cb, bb2] = mods.Eval(bb);
      i128 g = GcdI128(ca, cb);
      i128 diff = static_cast<i128>(ba) - bb2;
      bool differ = g == 0 ? diff != 0 : diff % g != 0;
      bool same = g == 0 && diff == 0;
      if (differ) return eq ? ProofResult::kDisproved : ProofResult::kProved;
      if (same) return eq ? ProofResult::kProved : ProofResult::kDisproved;
    }
    // A rule's side condition between two symbolic values (`i <= n - 1` from `i in [0, n)`):
    // the chains of known comparisons decide it.
    // Against a constant the bounds above already said all that the chains could.
    if (IsCmp(KindOf(n))) {
      const PrimExprNode* kids[3];
      KidsOf(n, KindOf(n), kids);
      if (!kids[0]->IsInstance<IntImmNode>() && !kids[1]->IsInstance<IntImmNode>()) {
        if (AnalyzerExtension* transitive = Transitive()) {
          ProofResult r = transitive->TryProve(c, ProofStrength::kDefault);
          if (r != ProofResult::kUnknown) return r;
        }
        return ScaledCompare(KindOf(n), kids[0], kids[1]);
      }
    }
    return ProofResult::kUnknown;
  }

  // e as x * c + r with a constant c > 0 (r null: no remainder term); false if e has no
  // constant factor. Says nothing yet about overflow.
  static bool SplitScaled(const PrimExprNode* e, const PrimExprNode** x, i128* c,
                          const PrimExprNode** r) {
    *r = nullptr;
    if (e->IsInstance<AddNode>()) {
      const auto* add = static_cast<const AddNode*>(e);
      if (!SplitScaled(add->a.get(), x, c, r) || *r) return false;
      *r = add->b.get();
      return true;
    }
    if (!e->IsInstance<MulNode>()) return false;
    const auto* mul = static_cast<const MulNode*>(e);
    const PrimExprNode* k = mul->b.get();
    *x = mul->a.get();
    if (!k->IsInstance<IntImmNode>()) std::swap(k, *x);
    if (!k->IsInstance<IntImmNode>()) return false;
    *c = ConstValue(static_cast<const IntImmNode*>(k));
    return *c > 1;
  }

  // Whether no step of x * c + r (r may be null) wraps around t, for x in xb.
  bool ExactScaled(const IntInterval& xb, i128 c, const PrimExprNode* r, DataType t) {
    IntInterval v = MulInterval(xb, IntInterval{c, c});
    bool assumed = analyzer_->assume_no_overflow();
    if (!FitsOrAssumed(v, t, assumed)) return false;
    return !r || FitsOrAssumed(AddInterval(v, Bound(r)), t, assumed);
  }

  // `c * x + r  cmp  c * y + s` (one common constant factor c > 1) decided from a comparison of
  // x and y: a - b == c * (x - y) + (r - s) over the integers when no step wraps around, so
  // `x < y` (x - y <= -1) bounds a - b by -c + max(r - s), and `x <= y` by max(r - s). This is
  // `i * 4 + j < n * 4` from `i < n` and j in [0, 4). The no-wrap check may use the proved
  // relation itself: x < y bounds y below by min(x) + 1 (and x above by max(y) - 1) at every
  // point the facts allow, which is what makes `n * 4` exact for an n known only as `<= 65536`.
  ProofResult ScaledCompare(ExprKind k, const PrimExprNode* a, const PrimExprNode* b) {
    if (k == ExprKind::kGT || k == ExprKind::kGE) {
      std::swap(a, b);
      k = k == ExprKind::kGT ? ExprKind::kLT : ExprKind::kLE;
    }
    if (k != ExprKind::kLT && k != ExprKind::kLE) return ProofResult::kUnknown;
    DataType t = a->dtype;
    if (!IsIntScalar(t) || b->dtype != t) return ProofResult::kUnknown;
    const PrimExprNode *x, *y, *r, *s;
    i128 c, c2;
    if (!SplitScaled(a, &x, &c, &r) || !SplitScaled(b, &y, &c2, &s) || c != c2) {
      return ProofResult::kUnknown;
    }
    if (x->dtype != t || y->dtype != t || (r && r->dtype != t) || (s && s->dtype != t)) {
      return ProofResult::kUnknown;
    }
    IntInterval rb = r ? Bound(r) : IntInterval{0, 0};
    IntInterval sb = s ? Bound(s) : IntInterval{0, 0};
    if (rb.is_empty() || sb.is_empty()) return ProofResult::kUnknown;
    // a cmp b holds when a - b <= limit; it fails when b - a <= opp.
    i128 limit = k == ExprKind::kLT ? -1 : 0;
    i128 opp = k == ExprKind::kLT ? 0 : -1;
    i128 hi_rs = rb.hi - sb.lo, hi_sr = sb.hi - rb.lo;
    // gap 1: u < v is what is needed, gap 0: u <= v.
    // ru, rv: the remainder terms next to u and v.
    auto holds = [&](const PrimExprNode* u, const PrimExprNode* ru, const PrimExprNode* v,
                     const PrimExprNode* rv, int gap) {
      PrimExpr pu = GetRef<PrimExpr>(u), pv = GetRef<PrimExpr>(v);
      PrimExpr rel = gap ? PrimExpr(LT(pu, pv)) : PrimExpr(LE(pu, pv));
      if (Decide(rel) != ProofResult::kProved) return false;
      IntInterval ub = Bound(u), vb = Bound(v);
      IntInterval u_in{ub.lo, std::min(ub.hi, vb.hi - gap)};
      IntInterval v_in{std::max(vb.lo, ub.lo + gap), vb.hi};
      if (u_in.is_empty() || v_in.is_empty()) return true;  // no point satisfies the facts
      return ExactScaled(u_in, c, ru, t) && ExactScaled(v_in, c, rv, t);
    };
    if (hi_rs - c <= limit && holds(x, r, y, s, 1)) return ProofResult::kProved;
    if (hi_rs <= limit && holds(x, r, y, s, 0)) return ProofResult::kProved;
    if (hi_sr - c <= opp && holds(y, s, x, r, 1)) return ProofResult::kDisproved;
    if (hi_sr <= opp && holds(y, s, x, r, 0)) return ProofResult::kDisproved;
    return ProofResult::kUnknown;
  }

  std::optional<PrimExpr> TryRule(const CompiledRule& rule, const PrimExpr& e) {
    Match m;
    if (!MatchAt(rule.before, rule.before.root, e.get(), &m)) return std::nullopt;
    input_ = e.get();
    bool wrap = rule.info->wrap;
    DataType t_hint = e.dtype();
    if (!IsIntScalar(t_hint)) {
      for (const PrimExprNode* h : m.hole) {
        if (h && IsIntScalar(h->dtype)) {
          t_hint = h->dtype;
          break;
        }
      }
    }
    // The overflow check first: it only reads bounds, where a condition builds values.
    if (!wrap && !NoOverflowIn(rule.before, rule.before.root, e.get())) return std::nullopt;
    try {
      if (rule.cond.defined()) {
        Val c;
        // Conditions are always evaluated exactly: a step that overflows decides nothing.
        building_cond_ = true;
        bool built = Build(rule.cond, rule.cond.root, m, t_hint, false, &c);
        building_cond_ = false;
        if (!built || c.unprovable) return std::nullopt;
        if (c.is_const()) {
          if (c.c == 0) return std::nullopt;
        } else if (Decide(c.Take()) != ProofResult::kProved) {
          return std::nullopt;
        }
      }
      Val r;
      if (!Build(rule.after, rule.after.root, m, e.dtype(), wrap, &r)) return std::nullopt;
      if (r.is_const()) {
        if (!e.dtype().is_bool() && (!wrap || MathInt(e.dtype())) && !FitsInDType(e.dtype(), r.c)) {
          return std::nullopt;
        }
        return MakeInt(e.dtype(), e.dtype().is_bool() ? r.c : Wrap(e.dtype(), r.c));
      }
      if (r.t != e.dtype()) return std::nullopt;
      return r.Take();
    } catch (const tvm::ffi::Error&) {
      building_cond_ = false;
      // A rule whose result is ill-typed for this match (mixed dtypes) does not apply.
      return std::nullopt;
    }
  }

  Analyzer* analyzer_;
  int budget_;
  // Looked up on first use: most calls never need it, and the lookup compares names.
  AnalyzerExtension* Transitive() {
    if (!transitive_looked_up_) {
      transitive_ = analyzer_->FindExtension("transitive");
      transitive_looked_up_ = true;
    }
    return transitive_;
  }
  AnalyzerExtension* transitive_ = nullptr;
  bool transitive_looked_up_ = false;
  int steps_ = 0;
  bool impure_ = false;
  bool building_cond_ = false;  // while a rule's condition is built (see Unprovable)
  // The expression the rule being tried matched (for InputDividesBy).
  const PrimExprNode* input_ = nullptr;
  std::vector<PrimExpr>& facts_;
  std::vector<Done>& done_;
  std::unordered_map<const Object*, size_t>& done_index_;
  std::vector<PrimExpr>& keep_;
};

}  // namespace

RewriteSimplifier::RewriteSimplifier(Analyzer* parent)
    : parent_(parent), scratch_(std::make_unique<Scratch>()) {
  // Parse the table now, so a malformed rule fails when the first Analyzer is made.
  GetRuleTable();
}

RewriteSimplifier::~RewriteSimplifier() = default;

std::unique_ptr<AnalyzerExtension> RewriteSimplifier::Clone(Analyzer* parent) const {
  auto copy = std::make_unique<RewriteSimplifier>(parent);
  copy->max_steps_ = max_steps_;
  return copy;
}

PrimExpr RewriteSimplifier::Simplify(const PrimExpr& expr) {
  if (busy_) return expr;
  busy_ = true;
  struct Reset {
    bool* flag;
    ~Reset() { *flag = false; }
  } reset{&busy_};
  Rewriter rewriter(parent_, max_steps_, scratch_.get());
  PrimExpr r = rewriter(expr);
  last_steps_ = rewriter.steps();
  return r;
}

ProofResult RewriteSimplifier::TryProve(const PrimExpr& cond, ProofStrength strength) {
  if (busy_) return ProofResult::kUnknown;
  PrimExpr r = Simplify(cond);
  if (auto v = AsConstInt(r); v && r.as<IntImmNode>()) {
    return *v ? ProofResult::kProved : ProofResult::kDisproved;
  }
  return ProofResult::kUnknown;
}

TESSEL_REGISTER_ANALYZER_EXTENSION([](Analyzer* parent) -> std::unique_ptr<AnalyzerExtension> {
  return std::make_unique<RewriteSimplifier>(parent);
});

}  // namespace arith
}  // namespace tessel
