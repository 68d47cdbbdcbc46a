// Transitive comparisons as difference bounds between terms, decided by shortest paths.
#include <tessel/arith/transitive_comparison.h>
#include <tessel/ir/functor.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "arith/depth_guard.h"
#include "arith/expr_walk.h"

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// Larger than any path length over kMaxFacts edges of weights bounded by 2^66: "no path".
constexpr i128 kNoPath = static_cast<i128>(1) << 120;

bool IsScalarInt(const PrimExpr& e) {
  return e.defined() && e.dtype().is_scalar() && e.dtype().is_int_or_uint();
}

// The exact value of an integer constant of its dtype (uint64 read as unsigned).
i128 ConstValue(const IntImmNode* op) {
  if (op->dtype.is_uint() && op->dtype.bits() == 64) {
    return static_cast<i128>(static_cast<uint64_t>(op->value));
  }
  return op->value;
}

// Calls f on each variable occurrence in e: integer arithmetic over variables (the common case)
// by the arithmetic walk, anything else by the reflective visitor.
template <typename F>
void ForEachVar(const PrimExpr& e, const F& f) {
  bool other = AnyNode(e.get(), [&f](const PrimExprNode* node) -> std::optional<bool> {
    ExprKind k = KindOf(node);
    if (k == ExprKind::kVar || k == ExprKind::kSizeVar) {
      f(static_cast<const VarNode*>(node));
      return false;
    }
    if (k == ExprKind::kIntImm) return false;
    return std::nullopt;
  });
  if (other) {
    PostOrderVisit(e, [&f](const ObjectRef& node) {
      if (const auto* v = node.as<VarNode>()) f(v);
    });
  }
}

}  // namespace

// Interned terms (index 0 is the constant 0) and the edges u -> v of weight w for
// `val(u) - val(v) <= w`, one per fact in force.
struct TransitiveComparisonAnalyzer::Graph {
  struct Edge {
    int u;
    int v;
    i128 w;
    // The variable whose binding gave this edge (null for a constraint fact): see DecideCompare.
    const VarNode* owner = nullptr;
  };
  std::vector<PrimExpr> terms{PrimExpr()};
  // The variables each term mentions.
  std::vector<std::vector<const VarNode*>> term_vars{{}};
  std::unordered_map<uint64_t, std::vector<int>> by_hash;
  std::vector<Edge> edges;
  // `val(u) - val(v) != w`: not paths, but they sharpen a bound that lands exactly on w.
  std::vector<Edge> ne_edges;
  bool valid = false;

  void Clear() {
    terms.assign(1, PrimExpr());
    term_vars.assign(1, {});
    by_hash.clear();
    edges.clear();
    ne_edges.clear();
  }
  // The index of term, or -1 (an undefined term is the constant 0).
  int Find(const PrimExpr& term) const {
    if (!term.defined()) return 0;
    auto it = by_hash.find(tvm::ffi::StructuralHash::Hash(term));
    if (it == by_hash.end()) return -1;
    for (int i : it->second) {
      if (terms[i].same_as(term) || tvm::ffi::StructuralEqual::Equal(terms[i], term)) return i;
    }
    return -1;
  }
  int Intern(const PrimExpr& term) {
    int i = Find(term);
    if (i >= 0 || terms.size() >= kMaxTerms) return i;
    i = static_cast<int>(terms.size());
    terms.push_back(term);
    std::vector<const VarNode*> vars;
    ForEachVar(term, [&vars](const VarNode* v) {
      if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
    });
    term_vars.push_back(std::move(vars));
    by_hash[tvm::ffi::StructuralHash::Hash(term)].push_back(i);
    return i;
  }
};

TransitiveComparisonAnalyzer::TransitiveComparisonAnalyzer(Analyzer* parent)
    : parent_(parent), graph_(std::make_unique<Graph>()) {}

TransitiveComparisonAnalyzer::~TransitiveComparisonAnalyzer() = default;

std::unique_ptr<AnalyzerExtension> TransitiveComparisonAnalyzer::Clone(Analyzer* parent) const {
  auto copy = std::make_unique<TransitiveComparisonAnalyzer>(parent);
  // The clone has no open scopes: the facts of this one's scopes become permanent there (as the
  // facade does with its own scoped facts).
  copy->permanent_ = permanent_;
  copy->permanent_.insert(copy->permanent_.end(), scoped_.begin(), scoped_.end());
  copy->generation_ = generation_;
  copy->next_generation_ = next_generation_;
  return copy;
}

std::vector<TransitiveComparisonAnalyzer::Fact> TransitiveComparisonAnalyzer::facts() const {
  std::vector<Fact> out;
  for (const auto* list : {&permanent_, &scoped_}) {
    for (const Fact& f : *list) {
      if (f.owner.defined()) {
        auto it = generation_.find(f.owner.get());
        if (it == generation_.end() || it->second.second != f.generation) continue;
      }
      out.push_back(f);
    }
  }
  return out;
}

namespace {

// Reads e as `term + offset` where val(e) == val(term) + offset exactly (see the header): a
// constant offset is peeled off only when the bound of the rest shows it cannot overflow.
void Decompose(const ConstIntBoundAnalyzer& bounds, const PrimExpr& e, PrimExpr* term, i128* offset,
               bool* used_bounds, bool assume_no_overflow) {
  if (const auto* imm = e.as<IntImmNode>()) {
    *term = PrimExpr();
    *offset = ConstValue(imm);
    return;
  }
  PrimExpr rest;
  i128 c = 0;
  if (const auto* op = e.as<AddNode>()) {
    if (const auto* imm = op->b.as<IntImmNode>()) {
      rest = op->a;
      c = ConstValue(imm);
    } else if (const auto* imm = op->a.as<IntImmNode>()) {
      rest = op->b;
      c = ConstValue(imm);
    }
  } else if (const auto* op = e.as<SubNode>()) {
    if (const auto* imm = op->b.as<IntImmNode>()) {
      rest = op->a;
      c = -ConstValue(imm);
    }
  }
  if (rest.defined() &&
      FitsOrAssumed(AddInterval(bounds.Eval(rest), {c, c}), e.dtype(), assume_no_overflow)) {
    Decompose(bounds, rest, term, offset, used_bounds, assume_no_overflow);
    *offset += c;
    *used_bounds = true;
    return;
  }
  *term = e;
  *offset = 0;
}

// `val(a) - val(b) <= w` for the terms of a and b with their offsets folded into w.
TransitiveComparisonAnalyzer::Fact MakeFact(const PrimExpr& ta, i128 ka, const PrimExpr& tb,
                                            i128 kb, i128 w) {
  // val(ta) + ka - val(tb) - kb <= w
  return TransitiveComparisonAnalyzer::Fact{ta, tb, w - ka + kb, Var(), 0};
}

bool SameTerm(const PrimExpr& a, const PrimExpr& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  return a.same_as(b) || tvm::ffi::StructuralEqual::Equal(a, b);
}

}  // namespace

void TransitiveComparisonAnalyzer::Collect(const PrimExpr& cond, bool negate,
                                           std::vector<Fact>* out, bool* used_bounds) {
  if (const auto* op = cond.as<NotNode>()) return Collect(op->a, !negate, out, used_bounds);
  if (const auto* op = cond.as<AndNode>()) {
    if (negate) return;  // not (a and b): a disjunction, nothing certain about either side
    Collect(op->a, false, out, used_bounds);
    Collect(op->b, false, out, used_bounds);
    return;
  }
  if (const auto* op = cond.as<OrNode>()) {
    if (!negate) return;
    Collect(op->a, true, out, used_bounds);
    Collect(op->b, true, out, used_bounds);
    return;
  }
  // The comparison as `a rel b` with rel one of <, <=, ==, != after applying negate.
  enum Rel { kLT, kLE, kEQ, kNE, kNone } rel = kNone;
  PrimExpr a, b;
  auto set = [&](const PrimExpr& x, const PrimExpr& y, Rel r, const PrimExpr& nx,
                 const PrimExpr& ny, Rel nr) {
    if (!negate) {
      a = x, b = y, rel = r;
    } else {
      a = nx, b = ny, rel = nr;
    }
  };
  if (const auto* op = cond.as<LTNode>()) {
    set(op->a, op->b, kLT, op->b, op->a, kLE);  // not (a < b): b <= a
  } else if (const auto* op = cond.as<LENode>()) {
    set(op->a, op->b, kLE, op->b, op->a, kLT);
  } else if (const auto* op = cond.as<GTNode>()) {
    set(op->b, op->a, kLT, op->a, op->b, kLE);
  } else if (const auto* op = cond.as<GENode>()) {
    set(op->b, op->a, kLE, op->a, op->b, kLT);
  } else if (const auto* op = cond.as<EQNode>()) {
    a = op->a, b = op->b, rel = negate ? kNE : kEQ;
  } else if (const auto* op = cond.as<NENode>()) {
    a = op->a, b = op->b, rel = negate ? kEQ : kNE;
  }
  if (rel == kNone || !IsScalarInt(a) || !IsScalarInt(b)) return;
  const ConstIntBoundAnalyzer& bounds = parent_->const_int_bound_analyzer();
  PrimExpr ta, tb;
  i128 ka = 0, kb = 0;
  Decompose(bounds, a, &ta, &ka, used_bounds, parent_->assume_no_overflow());
  Decompose(bounds, b, &tb, &kb, used_bounds, parent_->assume_no_overflow());
  // A comparison of constants, or of a term with itself, relates no two terms.
  if (SameTerm(ta, tb)) return;
  if (rel == kLT) out->push_back(MakeFact(ta, ka, tb, kb, -1));
  if (rel == kLE || rel == kEQ) out->push_back(MakeFact(ta, ka, tb, kb, 0));
  if (rel == kEQ) out->push_back(MakeFact(tb, kb, ta, ka, 0));
  if (rel == kNE) {
    out->push_back(MakeFact(ta, ka, tb, kb, 0));
    out->back().not_equal = true;
  }
}

std::function<void()> TransitiveComparisonAnalyzer::EnterConstraint(const PrimExpr& constraint) {
  std::vector<Fact> facts;
  bool used_bounds = false;
  Collect(constraint, false, &facts, &used_bounds);
  size_t old_size = scoped_.size();
  for (Fact& f : facts) {
    if (!MakeRoom()) break;
    scoped_.push_back(std::move(f));
  }
  ++open_scopes_;
  if (scoped_.size() != old_size) graph_->valid = false;
  return [this, old_size]() {
    // Bindings made inside this scope may have appended facts after this scope's own: they
    // depend on this scope's bounds and end with it.
    if (scoped_.size() != old_size) {
      scoped_.resize(old_size);
      graph_->valid = false;
    }
    --open_scopes_;
  };
}

void TransitiveComparisonAnalyzer::OnBind(const Var& var, const tvm::ffi::Optional<Range>& range,
                                          const tvm::ffi::Optional<PrimExpr>& value) {
  if (!IsScalarInt(var)) return;
  // A new binding replaces every fact of the old one (allow_override).
  uint64_t generation = next_generation_++;
  auto [it, first_binding] = generation_.insert({var.get(), {var, generation}});
  if (!first_binding) {
    it->second.second = generation;
    graph_->valid = false;
  }

  std::vector<Fact> facts;
  bool used_bounds = false;
  const ConstIntBoundAnalyzer& bounds = parent_->const_int_bound_analyzer();
  if (value) {
    Collect(EQ(var, *value), false, &facts, &used_bounds);
  } else if (range) {
    const PrimExpr& mn = (*range)->min;
    const PrimExpr& extent = (*range)->extent;
    if (IsScalarInt(mn) && mn.dtype() == var.dtype()) {
      Collect(GE(var, mn), false, &facts, &used_bounds);
    }
    // var < min + extent over the integers. The computed sum equals that only without
    // overflow, so a symbolic end needs a constant side or a bound that shows it fits.
    if (IsScalarInt(mn) && IsScalarInt(extent) && extent.dtype() == var.dtype() &&
        mn.dtype() == var.dtype()) {
      PrimExpr te;
      i128 ke = 0;
      bool has_end = true;
      if (const auto* c = mn.as<IntImmNode>()) {
        Decompose(bounds, extent, &te, &ke, &used_bounds, parent_->assume_no_overflow());
        ke += ConstValue(c);
      } else if (const auto* c = extent.as<IntImmNode>()) {
        Decompose(bounds, mn, &te, &ke, &used_bounds, parent_->assume_no_overflow());
        ke += ConstValue(c);
      } else if (FitsOrAssumed(AddInterval(bounds.Eval(mn), bounds.Eval(extent)), var.dtype(),
                               parent_->assume_no_overflow())) {
        used_bounds = true;
        te = Add(mn, extent);
      } else {
        has_end = false;
      }
      if (has_end && te.defined()) facts.push_back(MakeFact(var, 0, te, ke, -1));
    }
  }
  for (Fact& f : facts) {
    f.owner = var;
    f.generation = generation;
  }
  // A binding normally outlives every scope; one whose offsets relied on the bounds of an open
  // scope ends with that scope.
  std::vector<Fact>* list = (used_bounds && open_scopes_ > 0) ? &scoped_ : &permanent_;
  for (Fact& f : facts) {
    if (!MakeRoom()) break;
    list->push_back(std::move(f));
    graph_->valid = false;
  }
}

bool TransitiveComparisonAnalyzer::MakeRoom() {
  if (permanent_.size() + scoped_.size() < kMaxFacts) return true;
  // Scoped facts are removed by size when their scope ends, so only permanent ones can go:
  // first those of overridden bindings, then the oldest bindings (a pass that binds every loop
  // variable of a long function keeps the recent, enclosing ones). Forgetting a fact is sound.
  auto stale = [this](const Fact& f) {
    if (!f.owner.defined()) return false;
    auto it = generation_.find(f.owner.get());
    return it == generation_.end() || it->second.second != f.generation;
  };
  permanent_.erase(std::remove_if(permanent_.begin(), permanent_.end(), stale), permanent_.end());
  if (permanent_.size() + scoped_.size() >= kMaxFacts) {
    auto oldest = std::find_if(permanent_.begin(), permanent_.end(),
                               [](const Fact& f) { return f.owner.defined(); });
    if (oldest != permanent_.end()) permanent_.erase(oldest);
  }
  graph_->valid = false;
  return permanent_.size() + scoped_.size() < kMaxFacts;
}

const TransitiveComparisonAnalyzer::Graph& TransitiveComparisonAnalyzer::GetGraph() {
  Graph& g = *graph_;
  if (g.valid) return g;
  g.Clear();
  for (const Fact& f : facts()) {
    int u = g.Intern(f.lhs), v = g.Intern(f.rhs);
    if (u < 0 || v < 0) continue;  // past kMaxTerms: forgetting a fact is safe
    (f.not_equal ? g.ne_edges : g.edges).push_back({u, v, f.offset, f.owner.get()});
  }
  g.valid = true;
  return g;
}

namespace {

// Shortest paths from src over the fact edges plus each node's constant bound against node 0.
// Returns false when a negative cycle is reachable (the facts contradict each other).
bool ShortestPaths(int n, const std::vector<std::pair<std::pair<int, int>, i128>>& edges, int src,
                   std::vector<i128>* dist) {
  dist->assign(n, kNoPath);
  (*dist)[src] = 0;
  for (int round = 0; round <= n; ++round) {
    bool changed = false;
    for (const auto& e : edges) {
      i128 du = (*dist)[e.first.first];
      if (du == kNoPath) continue;
      i128 nd = du + e.second;
      if (nd < (*dist)[e.first.second]) {
        (*dist)[e.first.second] = nd;
        changed = true;
      }
    }
    if (!changed) return true;
    // Relaxing still after n rounds: a negative cycle.
    if (round == n) return false;
  }
  return true;
}

}  // namespace

ProofResult TransitiveComparisonAnalyzer::DecideCompare(const PrimExpr& cond) {
  PrimExpr a, b;
  // rel: 0 for a < b, 1 for a <= b, 2 for a == b, 3 for a != b
  int rel;
  if (const auto* op = cond.as<LTNode>()) {
    a = op->a, b = op->b, rel = 0;
  } else if (const auto* op = cond.as<LENode>()) {
    a = op->a, b = op->b, rel = 1;
  } else if (const auto* op = cond.as<GTNode>()) {
    a = op->b, b = op->a, rel = 0;
  } else if (const auto* op = cond.as<GENode>()) {
    a = op->b, b = op->a, rel = 1;
  } else if (const auto* op = cond.as<EQNode>()) {
    a = op->a, b = op->b, rel = 2;
  } else if (const auto* op = cond.as<NENode>()) {
    a = op->a, b = op->b, rel = 3;
  } else {
    return ProofResult::kUnknown;
  }
  if (!IsScalarInt(a) || !IsScalarInt(b)) return ProofResult::kUnknown;
  const Graph& g = GetGraph();
  if (g.edges.empty() && g.ne_edges.empty()) return ProofResult::kUnknown;
  const ConstIntBoundAnalyzer& bounds = parent_->const_int_bound_analyzer();
  PrimExpr ta, tb;
  i128 ka = 0, kb = 0;
  bool used_bounds = false;  // query time: the current bounds hold
  Decompose(bounds, a, &ta, &ka, &used_bounds, parent_->assume_no_overflow());
  Decompose(bounds, b, &tb, &kb, &used_bounds, parent_->assume_no_overflow());
  int ia = g.Find(ta), ib = g.Find(tb);
  // A term no fact mentions is related to others only through its bound, which the facade's
  // own bound check already uses.
  if (ia < 0 && ib < 0) return ProofResult::kUnknown;
  int n = static_cast<int>(g.terms.size());
  if (ia < 0) ia = n++;
  if (ib < 0) ib = n++;
  // A binding's facts hold where its variable exists (inside its loop or let): `0 <= i < n`
  // says nothing about n after a loop that may not have run. So they take part only when the
  // query mentions the variable, or mentions (through facts already taking part) a variable
  // whose binding refers to it.
  std::vector<const VarNode*> active;
  auto add_vars = [&active](const std::vector<const VarNode*>& vs) {
    bool grew = false;
    for (const VarNode* v : vs) {
      if (std::find(active.begin(), active.end(), v) == active.end()) {
        active.push_back(v);
        grew = true;
      }
    }
    return grew;
  };
  for (const PrimExpr& side : {a, b}) {
    ForEachVar(side, [&add_vars](const VarNode* v) { add_vars({v}); });
  }
  auto is_active = [&active](const VarNode* owner) {
    return !owner || std::find(active.begin(), active.end(), owner) != active.end();
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto* list : {&g.edges, &g.ne_edges}) {
      for (const Graph::Edge& e : *list) {
        if (!is_active(e.owner)) continue;
        grew = add_vars(g.term_vars[e.u]) || grew;
        grew = add_vars(g.term_vars[e.v]) || grew;
      }
    }
  }
  std::vector<std::pair<std::pair<int, int>, i128>> edges;
  edges.reserve(g.edges.size() + 2 * n);
  for (const Graph::Edge& e : g.edges) {
    if (is_active(e.owner)) edges.push_back({{e.u, e.v}, e.w});
  }
  for (int i = 1; i < n; ++i) {
    const PrimExpr& t = i < static_cast<int>(g.terms.size()) ? g.terms[i] : (i == ia ? ta : tb);
    IntInterval r = bounds.Eval(t);
    edges.push_back({{i, 0}, r.hi});   // t - 0 <= hi
    edges.push_back({{0, i}, -r.lo});  // 0 - t <= -lo
  }
  std::vector<i128> from_a, from_b;
  if (!ShortestPaths(n, edges, ia, &from_a) || !ShortestPaths(n, edges, ib, &from_b)) {
    return ProofResult::kProved;  // contradictory facts: unreachable, every claim holds
  }
  // Upper bounds of val(ta) - val(tb) and of val(tb) - val(ta); a known `!=` at exactly that
  // bound lowers it by one. equal_excluded: val(a) == val(b) is ruled out by a `!=` fact.
  i128 dab = from_a[ib], dba = from_b[ia];
  bool equal_excluded = false;
  for (const Graph::Edge& e : g.ne_edges) {
    if (!is_active(e.owner)) continue;
    i128 w;  // val(ta) - val(tb) != w
    if (e.u == ia && e.v == ib) {
      w = e.w;
    } else if (e.u == ib && e.v == ia) {
      w = -e.w;
    } else {
      continue;
    }
    if (dab == w) --dab;
    if (dba == -w) --dba;
    if (w == kb - ka) equal_excluded = true;
  }
  // Upper bounds of val(a) - val(b) and of val(b) - val(a).
  i128 ab = dab >= kNoPath ? kNoPath : dab + ka - kb;
  i128 ba = dba >= kNoPath ? kNoPath : dba + kb - ka;
  bool lt = ab <= -1, le = ab <= 0, gt = ba <= -1, ge = ba <= 0;
  ProofResult r = ProofResult::kUnknown;
  switch (rel) {
    case 0:
      r = lt ? ProofResult::kProved : (ge ? ProofResult::kDisproved : r);
      break;
    case 1:
      r = le ? ProofResult::kProved : (gt ? ProofResult::kDisproved : r);
      break;
    case 2:
    case 3:
      if (le && ge) r = ProofResult::kProved;
      if (lt || gt || equal_excluded) r = ProofResult::kDisproved;
      if (rel == 3 && r != ProofResult::kUnknown) {
        r = r == ProofResult::kProved ? ProofResult::kDisproved : ProofResult::kProved;
      }
      break;
  }
  return r;
}

ProofResult TransitiveComparisonAnalyzer::Decide(const PrimExpr& cond) {
  if (const auto* op = cond.as<NotNode>()) {
    ProofResult r = Decide(op->a);
    if (r == ProofResult::kProved) return ProofResult::kDisproved;
    if (r == ProofResult::kDisproved) return ProofResult::kProved;
    return r;
  }
  if (const auto* op = cond.as<AndNode>()) {
    ProofResult x = Decide(op->a);
    if (x == ProofResult::kDisproved) return x;
    ProofResult y = Decide(op->b);
    if (y == ProofResult::kDisproved) return y;
    return x == ProofResult::kProved && y == ProofResult::kProved ? x : ProofResult::kUnknown;
  }
  if (const auto* op = cond.as<OrNode>()) {
    ProofResult x = Decide(op->a);
    if (x == ProofResult::kProved) return x;
    ProofResult y = Decide(op->b);
    if (y == ProofResult::kProved) return y;
    return x == ProofResult::kDisproved && y == ProofResult::kDisproved ? x : ProofResult::kUnknown;
  }
  return DecideCompare(cond);
}

ProofResult TransitiveComparisonAnalyzer::TryProve(const PrimExpr& cond, ProofStrength strength) {
  if (!cond.defined() || !cond.dtype().is_scalar()) return ProofResult::kUnknown;
  return Decide(cond);
}

namespace {

// Replaces the comparisons the facts decide by constants.
class ComparisonFolder : public ExprMutator {
 public:
  explicit ComparisonFolder(std::function<ProofResult(const PrimExpr&)> decide)
      : decide_(std::move(decide)) {}
  PrimExpr VisitExpr(const PrimExpr& e) final {
    DepthGuard level;
    return ExprMutator::VisitExpr(e);
  }
  using ExprMutator::VisitExpr_;
#define TESSEL_X(Name)                                    \
  PrimExpr VisitExpr_(const Name##Node* op) final {       \
    PrimExpr e = ExprMutator::VisitExpr_(op);             \
    if (!e.dtype().is_scalar()) return e;                 \
    ProofResult r = decide_(e);                           \
    if (r == ProofResult::kProved) return Bool(true);     \
    if (r == ProofResult::kDisproved) return Bool(false); \
    return e;                                             \
  }
  TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
#undef TESSEL_X

 private:
  std::function<ProofResult(const PrimExpr&)> decide_;
};

// Whether e may hold a comparison (only those are folded; without one the folder would rebuild
// nothing and cost a traversal). Nodes AnyNode does not look into count as "may".
bool HasComparison(const PrimExpr& e) {
  return AnyNode(e.get(), [](const PrimExprNode* n) -> std::optional<bool> {
    ExprKind k = KindOf(n);
    if (k >= ExprKind::kEQ && k <= ExprKind::kGE) return true;
    if (k == ExprKind::kIntImm || k == ExprKind::kFloatImm || k == ExprKind::kVar ||
        k == ExprKind::kSizeVar) {
      return false;
    }
    return std::nullopt;
  });
}

}  // namespace

PrimExpr TransitiveComparisonAnalyzer::Simplify(const PrimExpr& expr) {
  const Graph& g = GetGraph();
  if (g.edges.empty() && g.ne_edges.empty()) return expr;
  if (!HasComparison(expr)) return expr;
  return ComparisonFolder([this](const PrimExpr& e) { return DecideCompare(e); })(expr);
}

TESSEL_REGISTER_ANALYZER_EXTENSION([](Analyzer* parent) -> std::unique_ptr<AnalyzerExtension> {
  return std::make_unique<TransitiveComparisonAnalyzer>(parent);
});

}  // namespace arith
}  // namespace tessel
