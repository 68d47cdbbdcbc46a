// PlanTileLoopSplit and DropDecidedSelects (tile_loop_split.h).
#include "transform/tile_loop_split.h"

#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/reflection/registry.h>

#include <unordered_map>
#include <utility>

#include "transform/tile_lowering.h"

namespace tessel {
namespace transform {
namespace tile_lowering {

namespace {

using VarSet = std::unordered_set<const VarNode*>;

bool UsesAny(const PrimExpr& e, const VarSet& vars) {
  bool hit = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (const auto* v = n.as<VarNode>()) hit = hit || vars.count(v);
  });
  return hit;
}

// Whether e loads from a buffer or calls anything: the bound is computed once before the loop,
// so its invariant part may not read what the loop could write.
bool ReadsMemory(const PrimExpr& e) {
  bool hit = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    hit = hit || n.as<BufferLoadNode>() != nullptr || n.as<CallNode>() != nullptr;
  });
  return hit;
}

// e = sum(coef[v] * v) + rest over v in `vars`, rest free of them.
struct Linear {
  std::unordered_map<const VarNode*, int64_t> coef;
  PrimExpr rest;
};

std::optional<Linear> AsLinear(const PrimExpr& e, const VarSet& vars) {
  if (!e.dtype().is_int()) return std::nullopt;
  if (!UsesAny(e, vars)) return Linear{{}, e};
  if (const auto* v = e.as<VarNode>()) return Linear{{{v, 1}}, MakeConst(e.dtype(), 0)};
  auto combine = [&](const PrimExpr& a, const PrimExpr& b, int64_t sign) -> std::optional<Linear> {
    auto la = AsLinear(a, vars), lb = AsLinear(b, vars);
    if (!la || !lb) return std::nullopt;
    for (auto& [v, c] : lb->coef) la->coef[v] += sign * c;
    la->rest = sign > 0 ? add(la->rest, lb->rest) : sub(la->rest, lb->rest);
    return la;
  };
  if (const auto* a = e.as<AddNode>()) return combine(a->a, a->b, 1);
  if (const auto* s = e.as<SubNode>()) return combine(s->a, s->b, -1);
  if (const auto* m = e.as<MulNode>()) {
    auto ca = AsConstInt(m->a), cb = AsConstInt(m->b);
    if (!ca && !cb) return std::nullopt;
    auto l = AsLinear(ca ? m->b : m->a, vars);
    if (!l) return std::nullopt;
    int64_t c = ca ? *ca : *cb;
    for (auto& kv : l->coef) kv.second *= c;
    l->rest = mul(l->rest, MakeConst(l->rest.dtype(), c));
    return l;
  }
  return std::nullopt;
}

// cond as comparisons lhs < rhs (strict) or lhs <= rhs, all of which it requires; false when it
// is not such a conjunction.
struct Comparison {
  PrimExpr lhs, rhs;
  bool strict;
};

bool Conjuncts(const PrimExpr& cond, std::vector<Comparison>* out) {
  std::function<void(const PrimExpr&, const PrimExpr&, bool)> cmp =
      [&](const PrimExpr& a, const PrimExpr& b, bool strict) {
        if (const auto* m = b.as<MinNode>()) {
          cmp(a, m->a, strict);
          cmp(a, m->b, strict);
        } else if (const auto* m = a.as<MaxNode>()) {
          cmp(m->a, b, strict);
          cmp(m->b, b, strict);
        } else {
          out->push_back({a, b, strict});
        }
      };
  if (const auto* x = cond.as<AndNode>()) return Conjuncts(x->a, out) && Conjuncts(x->b, out);
  if (const auto* x = cond.as<LTNode>()) return cmp(x->a, x->b, true), true;
  if (const auto* x = cond.as<LENode>()) return cmp(x->a, x->b, false), true;
  if (const auto* x = cond.as<GTNode>()) return cmp(x->b, x->a, true), true;
  if (const auto* x = cond.as<GENode>()) return cmp(x->b, x->a, false), true;
  return false;
}

class Planner {
 public:
  explicit Planner(const ForNode* loop) : k_(loop->loop_var.get()) {}

  std::optional<TileLoopSplit> Run(const ForNode* loop) {
    // Variables bound inside the body (other than a nest's own) make a bound depend on the
    // element: such a comparison is not decided.
    PostOrderVisit(loop->body, [&](const ObjectRef& n) {
      if (const auto* f = n.as<ForNode>()) inner_.insert(f->loop_var.get());
      if (const auto* l = n.as<LetStmtNode>()) inner_.insert(l->var.get());
      if (const auto* l = n.as<LetNode>()) inner_.insert(l->var.get());
    });
    for (const Stmt& st : FlattenSeq(loop->body)) {
      const auto* f = st.as<ForNode>();
      if (!f || !f->annotations.count("tessel.tile_parallel")) continue;
      size_t before = split_.selects.size();
      Nest(f);
      if (split_.selects.size() > before) split_.where.push_back(st.get());
    }
    if (split_.selects.empty()) return std::nullopt;
    split_.before = arith::Analyzer().Simplify(split_.before);
    return split_;
  }

 private:
  void Nest(const ForNode* op) {
    std::vector<std::pair<const VarNode*, int64_t>> range;  // the nest's variables, extents
    Stmt body = GetRef<Stmt>(op);
    while (const auto* f = body.as<ForNode>()) {
      if (!f->annotations.count("tessel.tile_parallel")) break;
      auto lo = AsConstInt(f->min), n = AsConstInt(f->extent);
      if (!lo || *lo != 0 || !n || *n < 1) return;
      range.push_back({f->loop_var.get(), *n});
      body = f->body;
    }
    PostOrderVisit(body, [&](const ObjectRef& n) {
      const auto* call = n.as<CallNode>();
      if (call && call->op.same_as(builtin::if_then_else())) Select(call, range);
    });
  }

  void Select(const CallNode* call, const std::vector<std::pair<const VarNode*, int64_t>>& range) {
    std::vector<Comparison> parts;
    if (!Conjuncts(call->args[0], &parts) || !UsesAny(call->args[0], {k_})) return;
    VarSet linear{k_}, outside = inner_;
    for (const auto& [v, n] : range) {
      linear.insert(v);
      outside.erase(v);
    }
    std::optional<PrimExpr> bound;
    for (const Comparison& c : parts) {
      auto l = AsLinear(sub(c.lhs, c.rhs), linear);
      if (!l || UsesAny(l->rest, outside) || ReadsMemory(l->rest) || l->coef[k_] <= 0) return;
      int64_t m = 0;  // the largest sum(c_v * v) over the nest
      for (const auto& [v, n] : range) m += std::max<int64_t>(l->coef[v], 0) * (n - 1);
      DataType t = l->rest.dtype();
      PrimExpr top = sub(neg(l->rest), MakeConst(t, m + (c.strict ? 1 : 0)));
      PrimExpr b = add(floordiv(top, MakeConst(t, l->coef[k_])), MakeConst(t, 1));
      bound = bound ? min(*bound, b) : b;
    }
    split_.selects.insert(call);
    split_.before = split_.before.defined() ? min(split_.before, *bound) : *bound;
  }

  const VarNode* k_;
  VarSet inner_;
  TileLoopSplit split_;
};

}  // namespace

std::optional<TileLoopSplit> PlanTileLoopSplit(const ForNode* loop) {
  if (!loop->loop_var.dtype().is_int()) return std::nullopt;
  return Planner(loop).Run(loop);
}

Stmt DropDecidedSelects(const Stmt& s, const TileLoopSplit& split) {
  class Drop : public StmtExprMutator {
   public:
    explicit Drop(const TileLoopSplit& split) : split_(split) {}
    using StmtExprMutator::VisitExpr_;

    PrimExpr VisitExpr_(const CallNode* op) override {
      if (split_.selects.count(op)) return VisitExpr(op->args[1]);
      return StmtExprMutator::VisitExpr_(op);
    }

   private:
    const TileLoopSplit& split_;
  };
  return Drop(split).VisitStmt(s);
}

// For tests: the split of the first T.Pipelined loop in `body`, as [before, number of selects],
// or None.
TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def(
      "tessel.tile.PlanLoopSplit", [](Stmt body) -> Optional<Array<Any>> {
        const ForNode* loop = nullptr;
        PostOrderVisit(body, [&](const ObjectRef& n) {
          const auto* f = n.as<ForNode>();
          if (f && !loop && f->annotations.count("tessel.pipeline_stages")) loop = f;
        });
        auto split = loop ? PlanTileLoopSplit(loop) : std::nullopt;
        if (!split) return std::nullopt;
        return Array<Any>{split->before, static_cast<int64_t>(split->selects.size())};
      });
}

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel
