// What the cache and compute-location primitives share: the buffers a block accesses, the blocks
// of a scope with their loops, the block enclosing a statement, access regions relaxed over loops,
// buffer replacement and allocation in a scope.
#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>

#include <algorithm>

#include "schedule/schedule_impl.h"
#include "transform/block_buffers.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

class ScopeRealizeCollector : public StmtExprVisitor {
 public:
  std::vector<ScopedRealize> out;
  void VisitStmt_(const ForNode* op) override {
    loops_.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
    loops_.pop_back();
  }
  void VisitStmt_(const BlockRealizeNode* op) override { out.push_back({op, loops_}); }

 private:
  std::vector<const ForNode*> loops_;
};

// Finds the innermost block realize above a node.
class EnclosingFinder : public StmtExprVisitor {
 public:
  explicit EnclosingFinder(const Object* node) : node_(node) {}
  const BlockRealizeNode* found = nullptr;
  bool done = false;

  void VisitStmt(const Stmt& s) override {
    if (done) return;
    if (s.get() == node_) {
      found = stack_.empty() ? nullptr : stack_.back();
      done = true;
      return;
    }
    StmtExprVisitor::VisitStmt(s);
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    stack_.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
    stack_.pop_back();
  }

 private:
  const Object* node_;
  std::vector<const BlockRealizeNode*> stack_;
};

}  // namespace

BlockBuffers AccessedBuffers(const BlockNode* block) {
  return {transform::BlockBuffers(block, false), transform::BlockBuffers(block, true)};
}

std::vector<ScopedRealize> ScopeRealizes(const Stmt& stmt) {
  ScopeRealizeCollector c;
  c.VisitStmt(stmt);
  return c.out;
}

const BlockRealizeNode* EnclosingBlock(const PrimFunc& f, const Object* node) {
  EnclosingFinder finder(node);
  finder.VisitStmt(f->body);
  return finder.found;
}

std::vector<Stmt> SeqOf(const Stmt& body) {
  if (const auto* seq = body.as<SeqStmtNode>()) return {seq->seq.begin(), seq->seq.end()};
  return {body};
}

bool Holds(const Stmt& stmt, const Object* node) {
  bool found = false;
  PostOrderVisit(stmt, [&](const ObjectRef& n) { found = found || n.get() == node; });
  return found;
}

bool Writes(const Stmt& stmt, const Object* data) {
  bool found = false;
  PostOrderVisit(stmt, [&](const ObjectRef& n) {
    if (const auto* s = n.as<BufferStoreNode>()) found = found || s->buffer->data.get() == data;
  });
  return found;
}

bool Reads(const Stmt& stmt, const Object* data) {
  bool found = false;
  PostOrderVisit(stmt, [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) found = found || l->buffer->data.get() == data;
  });
  return found;
}

std::optional<Region> RelaxAccess(const BlockRealizeNode* realize, const Array<PrimExpr>& indices,
                                  const std::vector<const ForNode*>& relax,
                                  arith::Analyzer* analyzer) {
  std::unordered_map<const VarNode*, PrimExpr> bindings;
  const BlockNode* b = realize->block.get();
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    bindings[b->iter_vars[i]->var.get()] = realize->iter_values[i];
  }
  tvm::ffi::Map<Var, Range> dom;
  for (const ForNode* l : relax) dom.Set(l->loop_var, Range(l->min, l->extent));
  VarSubstituter subst(bindings);
  Region out;
  for (const PrimExpr& idx : indices) {
    arith::IntSet set = analyzer->IntSet(subst.VisitExpr(idx), dom);
    if (!set->HasLowerBound() || !set->HasUpperBound()) return std::nullopt;
    out.emplace_back(analyzer->Simplify(*set->min_value), analyzer->Simplify(*set->max_value));
  }
  return out;
}

std::optional<Region> RelaxBlockAccesses(const BlockRealizeNode* realize, const Object* data,
                                         bool loads, const std::vector<const ForNode*>& relax,
                                         arith::Analyzer* analyzer) {
  std::optional<Region> out;
  bool bounded = true;
  auto join = [&](const Array<PrimExpr>& indices) {
    std::optional<Region> r = RelaxAccess(realize, indices, relax, analyzer);
    if (!r) {
      bounded = false;
      return;
    }
    out = out ? JoinRegions(*out, *r, analyzer) : *r;
  };
  auto visit = [&](const ObjectRef& n) {
    if (loads) {
      if (const auto* l = n.as<BufferLoadNode>()) {
        if (l->buffer->data.get() == data) join(l->indices);
      }
    } else if (const auto* s = n.as<BufferStoreNode>()) {
      if (s->buffer->data.get() == data) join(s->indices);
    }
  };
  const BlockNode* b = realize->block.get();
  PostOrderVisit(b->body, visit);
  if (b->init) PostOrderVisit(*b->init, visit);
  if (!bounded) return std::nullopt;
  return out;
}

Region JoinRegions(const Region& a, const Region& b, arith::Analyzer* analyzer) {
  Region out;
  for (size_t d = 0; d < a.size() && d < b.size(); ++d) {
    auto pick = [&](const PrimExpr& x, const PrimExpr& y, bool lower) -> PrimExpr {
      if (analyzer->CanProveEqual(x, y)) return x;
      if (analyzer->CanProve(lower ? x <= y : x >= y)) return x;
      if (analyzer->CanProve(lower ? y <= x : y >= x)) return y;
      return analyzer->Simplify(lower ? min(x, y) : max(x, y));
    };
    out.emplace_back(pick(a[d].first, b[d].first, true), pick(a[d].second, b[d].second, false));
  }
  return out;
}

bool BindingsCoverDomain(const BlockRealizeNode* realize,
                         const std::vector<const ForNode*>& loops) {
  const BlockNode* b = realize->block.get();
  if (b->iter_vars.empty()) return true;
  tvm::ffi::Map<Var, Range> dom;
  for (const ForNode* l : loops) dom.Set(l->loop_var, Range(l->min, l->extent));
  arith::Analyzer ana;
  BindLoops(&ana, loops);
  arith::IterMapResult m = arith::DetectIterMap(realize->iter_values, dom, realize->predicate,
                                                arith::IterMapLevel::kSurjective, &ana,
                                                /*simplify_trivial_iterators=*/false);
  if (!m.ok() || AsConstInt(m.padding_predicate).value_or(1) != 0) return false;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    const Range& d = b->iter_vars[i]->dom;
    const arith::IterSumExpr& s = m.indices[i];
    if (!ana.CanProveEqual(s->base, d->min)) return false;
    if (s->args.empty()) {
      if (!ana.CanProveEqual(d->extent, MakeConst(d->extent.dtype(), int64_t{1}))) return false;
    } else if (s->args.size() != 1 ||
               !ana.CanProveEqual(s->args[0]->scale, MakeConst(s->dtype, int64_t{1})) ||
               !ana.CanProveEqual(s->args[0]->extent, d->extent)) {
      return false;
    }
  }
  return true;
}

bool ReadsWhatItWrites(const BlockNode* block) {
  std::vector<const Object*> stored;
  auto stores = [&](const ObjectRef& n) {
    if (const auto* st = n.as<BufferStoreNode>()) stored.push_back(st->buffer->data.get());
  };
  PostOrderVisit(block->body, stores);
  if (block->init) PostOrderVisit(*block->init, stores);
  bool found = false;
  auto loads = [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) {
      found =
          found || std::find(stored.begin(), stored.end(), l->buffer->data.get()) != stored.end();
    }
  };
  PostOrderVisit(block->body, loads);
  if (block->init) PostOrderVisit(*block->init, loads);
  return found;
}

PrimExpr BufferReplacer::VisitExpr_(const BufferLoadNode* op) {
  PrimExpr e = StmtExprMutator::VisitExpr_(op);
  const auto* l = e.as<BufferLoadNode>();
  if (!l->buffer.same_as(from_)) return e;
  return BufferLoad(to_, l->indices);
}

Stmt BufferReplacer::VisitStmt_(const BufferStoreNode* op) {
  Stmt s = StmtExprMutator::VisitStmt_(op);
  const auto* st = s.as<BufferStoreNode>();
  if (loads_only_ || !st->buffer.same_as(from_)) return s;
  return WithSpan(BufferStore(to_, st->value, st->indices), op->span);
}

Stmt BufferReplacer::VisitStmt_(const BlockNode* op) {
  Stmt s = StmtExprMutator::VisitStmt_(op);
  const auto* b = s.as<BlockNode>();
  auto swap = [&](const Array<BufferRegion>& regions) {
    Array<BufferRegion> out;
    for (const BufferRegion& r : regions) {
      out.push_back(r->buffer.same_as(from_) ? BufferRegion(to_, r->region) : r);
    }
    return out;
  };
  Block out(b->iter_vars, swap(b->reads), loads_only_ ? b->writes : swap(b->writes), b->name_hint,
            b->body, b->init, b->alloc_buffers, b->match_buffers, b->annotations);
  return WithSpan(out, op->span);
}

PrimFunc WithScopeBody(const PrimFunc& f, const BlockRealizeNode* scope, const Stmt& body,
                       const std::optional<Buffer>& alloc) {
  PrimFunc g = f;
  if (scope == nullptr) {
    g.CopyOnWrite()->body =
        alloc
            ? BlockRealize({}, Bool(true), Block({}, {}, {}, "root", body, std::nullopt, {*alloc}))
            : body;
    return g;
  }
  const BlockNode* b = scope->block.get();
  Array<Buffer> allocs = b->alloc_buffers;
  if (alloc) allocs.push_back(*alloc);
  Block nb(b->iter_vars, b->reads, b->writes, b->name_hint, body, b->init, allocs, b->match_buffers,
           b->annotations);
  BlockRealize nr(scope->iter_values, scope->predicate, nb);
  g.CopyOnWrite()->body = ReplaceIn(f->body, GetRef<Stmt>(scope), WithSpan(nr, scope->span));
  return g;
}

}  // namespace schedule
}  // namespace tessel
