// Block facts (ScheduleNode::GetBlockFacts): affine bindings, region cover and stage pipeline,
// computed with the analyzer and cached per version of the block's function.
//
// A fact is "yes" only when proved and "no" only with a witness: a point the bindings visit
// outside the iterators' domains or never visit, a point the consumer certainly loads that no
// producer can store, a block that breaks the stage-pipeline definition. Everything else is
// "unknown", with the reason in why_not.
#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <set>
#include <sstream>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

const char* FactName(Fact fact) {
  switch (fact) {
    case Fact::kYes:
      return "yes";
    case Fact::kNo:
      return "no";
    default:
      return "unknown";
  }
}

namespace {

// Loop nests of at most this many points (and iterator domains of at most kMaxDomain points)
// are enumerated to refute an affine binding.
constexpr int64_t kMaxEnumerated = int64_t{1} << 14;
constexpr int64_t kMaxDomain = int64_t{1} << 20;

struct Verdict {
  Fact fact = Fact::kYes;
  std::string why;
};

std::string Text(const PrimExpr& e) { return AsText(e); }

bool ProvedTrue(const PrimExpr& cond, arith::Analyzer* ana) {
  auto c = AsConstInt(cond);
  return (c && *c != 0) || ana->CanProve(cond);
}

// Every loop of `loops` provably runs at least once (each extent under the loops above it).
bool AllRun(const std::vector<const ForNode*>& loops) {
  arith::Analyzer ana;
  BindLoops(&ana, loops);
  for (const ForNode* l : loops) {
    if (!ana.CanProveGreaterEqual(l->extent, 1)) return false;
  }
  return true;
}

// ---- affine_binding ----

// Runs the bindings of `realize` over every point of `loops` where the predicate holds, with the
// IR's semantics (the analyzer folds each value once the loop variables are constants). Returns
// a witness that they leave or miss the iterators' domains, "" when they visit exactly the
// domains, nullopt when the nest is not constant, too large, or a value does not fold.
std::optional<std::string> EnumerateBindings(const BlockRealizeNode* realize,
                                             const std::vector<const ForNode*>& loops) {
  const BlockNode* b = realize->block.get();
  std::vector<int64_t> lmin, lext, dmin, dext;
  int64_t points = 1, domain = 1;
  for (const ForNode* l : loops) {
    auto mn = AsConstInt(l->min), ex = AsConstInt(l->extent);
    if (!mn || !ex || *ex < 0) return std::nullopt;
    lmin.push_back(*mn);
    lext.push_back(*ex);
    points *= std::max<int64_t>(*ex, 1);
    if (points > kMaxEnumerated) return std::nullopt;
  }
  for (const IterVar& iv : b->iter_vars) {
    auto mn = AsConstInt(iv->dom->min), ex = AsConstInt(iv->dom->extent);
    if (!mn || !ex || *ex < 0) return std::nullopt;
    dmin.push_back(*mn);
    dext.push_back(*ex);
    domain *= std::max<int64_t>(*ex, 1);
    if (domain > kMaxDomain) return std::nullopt;
  }
  for (int64_t e : lext) {
    if (e == 0) points = 0;
  }
  for (int64_t e : dext) {
    if (e == 0) domain = 0;
  }
  arith::Analyzer ana;
  std::vector<bool> hit(domain, false);
  int64_t distinct = 0;
  std::vector<int64_t> at(loops.size(), 0);
  auto where = [&]() {
    std::string s;
    for (size_t k = 0; k < loops.size(); ++k) {
      s += (k ? ", " : "") + std::string(loops[k]->loop_var->name_hint) + " = " +
           std::to_string(lmin[k] + at[k]);
    }
    return s.empty() ? std::string() : " at " + s;
  };
  for (int64_t p = 0; p < points; ++p) {
    std::unordered_map<const VarNode*, PrimExpr> env;
    for (size_t k = 0; k < loops.size(); ++k) {
      env[loops[k]->loop_var.get()] = MakeConst(loops[k]->loop_var.dtype(), lmin[k] + at[k]);
    }
    VarSubstituter subst(env);
    auto pred = AsConstInt(ana.Simplify(subst.VisitExpr(realize->predicate)));
    if (!pred) return std::nullopt;
    if (*pred != 0) {
      int64_t flat = 0;
      for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        auto v = AsConstInt(ana.Simplify(subst.VisitExpr(realize->iter_values[i])));
        if (!v) return std::nullopt;
        if (*v < dmin[i] || *v >= dmin[i] + dext[i]) {
          return std::string(b->iter_vars[i]->var->name_hint) + " = " + std::to_string(*v) +
                 where() + " lies outside its domain [" + std::to_string(dmin[i]) + ", " +
                 std::to_string(dmin[i] + dext[i]) + ")";
        }
        flat = flat * dext[i] + (*v - dmin[i]);
      }
      if (!hit[flat]) ++distinct;
      hit[flat] = true;
    }
    for (size_t k = loops.size(); k-- > 0;) {
      if (++at[k] < lext[k]) break;
      at[k] = 0;
    }
  }
  if (distinct == domain) return std::string();
  int64_t missed = 0;
  while (hit[missed]) ++missed;
  std::vector<int64_t> coords(b->iter_vars.size());
  for (size_t i = b->iter_vars.size(); i-- > 0;) {
    coords[i] = dmin[i] + missed % dext[i];
    missed /= dext[i];
  }
  std::string s;
  for (size_t i = 0; i < coords.size(); ++i) {
    s += (i ? ", " : "") + std::string(b->iter_vars[i]->var->name_hint) + " = " +
         std::to_string(coords[i]);
  }
  return "no iteration of its loops visits " + s;
}

Verdict AffineBinding(const BlockRealizeNode* realize, const std::vector<const ForNode*>& loops) {
  if (BindingsCoverDomain(realize, loops)) return {};
  std::optional<std::string> witness = EnumerateBindings(realize, loops);
  if (witness && !witness->empty()) return {Fact::kNo, *witness};
  tvm::ffi::Map<Var, Range> dom;
  for (const ForNode* l : loops) dom.Set(l->loop_var, Range(l->min, l->extent));
  arith::Analyzer ana;
  BindLoops(&ana, loops);
  arith::IterMapResult m = arith::DetectIterMap(realize->iter_values, dom, realize->predicate,
                                                arith::IterMapLevel::kSurjective, &ana, false);
  std::string detail = m.errors.empty() ? "" : " (" + std::string(m.errors[0]) + ")";
  if (witness) {
    return {Fact::kUnknown,
            "its bindings visit exactly its iterators' domains, but the iterator-map detector "
            "does not find them quasi-affine" +
                detail};
  }
  return {Fact::kUnknown,
          "the iterator-map detector could not show that its bindings visit exactly its "
          "iterators' domains" +
              detail};
}

// ---- region_cover ----

// Accesses that run whenever their block does: stores reached from the body through sequences
// only (no condition, loop, let or inner block around them), and the loads in their values and
// indices outside calls, selects and lets (an if_then_else may skip its loads).
class UnconditionalAccesses : public StmtExprVisitor {
 public:
  explicit UnconditionalAccesses(const Object* data) : data_(data) {}
  std::vector<const BufferStoreNode*> stores;
  std::vector<const BufferLoadNode*> loads;

  void Collect(const Stmt& s) {
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : seq->seq) Collect(x);
    } else if (const auto* st = s.as<BufferStoreNode>()) {
      if (st->buffer->data.get() == data_) stores.push_back(st);
      VisitExpr(st->value);
      for (const PrimExpr& i : st->indices) VisitExpr(i);
    }
  }
  using StmtExprVisitor::VisitExpr_;
  void VisitExpr_(const BufferLoadNode* op) override {
    if (op->buffer->data.get() == data_) loads.push_back(op);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const CallNode*) override {}
  void VisitExpr_(const SelectNode*) override {}
  void VisitExpr_(const LetNode*) override {}

 private:
  const Object* data_;
};

// The exact set of points `indices` (the block's bindings put in) take as the loops `relax` run,
// when the detector (surjective, no padding) shows it is a box: each index a constant or one split
// of step 1, so the points are the product of [base, base + extent - 1].
std::optional<Region> ExactBox(const BlockRealizeNode* realize, const Array<PrimExpr>& indices,
                               const std::vector<const ForNode*>& relax, arith::Analyzer* ana) {
  const BlockNode* b = realize->block.get();
  std::unordered_map<const VarNode*, PrimExpr> bindings;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    bindings[b->iter_vars[i]->var.get()] = realize->iter_values[i];
  }
  VarSubstituter subst(bindings);
  Array<PrimExpr> idx;
  for (const PrimExpr& e : indices) idx.push_back(subst.VisitExpr(e));
  tvm::ffi::Map<Var, Range> dom;
  for (const ForNode* l : relax) {
    bool used = false;
    for (const PrimExpr& e : idx) used = used || UsesAny(e, {l->loop_var.get()});
    if (used) dom.Set(l->loop_var, Range(l->min, l->extent));
  }
  if (idx.empty()) return Region{};
  arith::IterMapResult m =
      arith::DetectIterMap(idx, dom, Bool(true), arith::IterMapLevel::kSurjective, ana);
  if (!m.ok() || AsConstInt(m.padding_predicate).value_or(1) != 0) return std::nullopt;
  Region out;
  for (const arith::IterSumExpr& s : m.indices) {
    if (s->args.empty()) {
      out.emplace_back(s->base, s->base);
    } else if (s->args.size() == 1 &&
               ana->CanProveEqual(s->args[0]->scale, MakeConst(s->dtype, int64_t{1}))) {
      out.emplace_back(s->base, ana->Simplify(s->base + s->args[0]->extent - 1));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::string RegionText(const Region& r) {
  std::string s;
  for (size_t d = 0; d < r.size(); ++d) {
    s += (d ? ", " : "") + Text(r[d].first) + ":" + Text(r[d].second) + " + 1";
  }
  return "[" + s + "]";
}

size_t CommonDepth(const std::vector<const ForNode*>& a, const std::vector<const ForNode*>& b) {
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  return k;
}

std::vector<const ForNode*> Below(const std::vector<const ForNode*>& loops, size_t depth) {
  return {loops.begin() + depth, loops.end()};
}

bool StoresTo(const BlockNode* b, const Object* data) {
  return Writes(b->body, data) || (b->init && Writes(*b->init, data));
}

// Whether one unconditional store of one producer, as its loops below the loops it shares with
// the consumer run, writes every point of a box holding everything the consumer may load there.
bool ProvedCovered(const std::vector<ScopedRealize>& producers, const ScopedRealize& consumer,
                   const Object* data) {
  for (const ScopedRealize& p : producers) {
    size_t k = CommonDepth(p.loops, consumer.loops);
    arith::Analyzer ana;
    BindLoops(&ana, p.loops);
    if (!ProvedTrue(p.realize->predicate, &ana) || !AllRun(p.loops)) continue;
    arith::Analyzer shared;
    BindLoops(&shared, {p.loops.begin(), p.loops.begin() + k});
    std::optional<Region> need =
        RelaxBlockAccesses(consumer.realize, data, true, Below(consumer.loops, k), &shared);
    if (!need) continue;
    const BlockNode* b = p.realize->block.get();
    UnconditionalAccesses acc(data);
    acc.Collect(b->body);
    if (b->init) acc.Collect(*b->init);
    for (const BufferStoreNode* st : acc.stores) {
      std::optional<Region> box = ExactBox(p.realize, st->indices, Below(p.loops, k), &shared);
      if (!box || box->size() != need->size()) continue;
      bool inside = true;
      for (size_t d = 0; d < box->size() && inside; ++d) {
        inside = shared.CanProve((*box)[d].first <= (*need)[d].first) &&
                 shared.CanProve((*need)[d].second <= (*box)[d].second);
      }
      if (inside) return true;
    }
  }
  return false;
}

// A witness that the consumer loads a point no producer stores (per iteration of the loops they
// share, which must be the same for all producers): a load that runs at every point of the
// consumer's loops (which all run, the predicate proved true) whose exact box reaches past the
// bounding box of every producer store. "" when none is found.
std::string RefuteCover(const std::vector<ScopedRealize>& producers, const ScopedRealize& consumer,
                        const Object* data, const std::string& bname) {
  size_t k = CommonDepth(producers[0].loops, consumer.loops);
  for (const ScopedRealize& p : producers) {
    if (CommonDepth(p.loops, consumer.loops) != k) return "";
  }
  arith::Analyzer all;
  BindLoops(&all, consumer.loops);
  if (!ProvedTrue(consumer.realize->predicate, &all) || !AllRun(consumer.loops)) return "";
  arith::Analyzer shared;
  BindLoops(&shared, {consumer.loops.begin(), consumer.loops.begin() + k});
  std::optional<Region> written;
  for (const ScopedRealize& p : producers) {
    std::optional<Region> r =
        RelaxBlockAccesses(p.realize, data, false, Below(p.loops, k), &shared);
    if (!r) return "";
    written = written ? JoinRegions(*written, *r, &shared) : *r;
  }
  if (!written) return "";
  const BlockNode* b = consumer.realize->block.get();
  UnconditionalAccesses acc(data);
  acc.Collect(b->body);
  for (const BufferLoadNode* ld : acc.loads) {
    std::optional<Region> box =
        ExactBox(consumer.realize, ld->indices, Below(consumer.loops, k), &shared);
    if (!box || box->size() != written->size()) continue;
    for (size_t d = 0; d < box->size(); ++d) {
      const auto& [lo, hi] = (*box)[d];
      const auto& [wlo, whi] = (*written)[d];
      if (shared.CanProve(lo < wlo) || shared.CanProve(hi > whi)) {
        return "it loads " + bname + RegionText(*box) + " but its producers store " + bname +
               " only within " + RegionText(*written) + " (dimension " + std::to_string(d) + ")";
      }
    }
  }
  return "";
}

Verdict RegionCover(const std::vector<ScopedRealize>& scope, size_t self) {
  const ScopedRealize& consumer = scope[self];
  const BlockNode* cb = consumer.realize->block.get();
  std::vector<std::pair<const Object*, std::string>> loaded;
  auto visit = [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) {
      const Object* data = l->buffer->data.get();
      for (const auto& x : loaded) {
        if (x.first == data) return;
      }
      loaded.emplace_back(data, std::string(l->buffer->name));
    }
  };
  PostOrderVisit(cb->body, visit);
  if (cb->init) PostOrderVisit(*cb->init, visit);
  Verdict out;
  for (const auto& [data, bname] : loaded) {
    std::vector<ScopedRealize> producers;
    for (size_t i = 0; i < self; ++i) {
      if (StoresTo(scope[i].realize->block.get(), data)) producers.push_back(scope[i]);
    }
    if (producers.empty() || ProvedCovered(producers, consumer, data)) continue;
    std::string witness = RefuteCover(producers, consumer, data, bname);
    if (!witness.empty()) return {Fact::kNo, witness};
    out = {Fact::kUnknown,
           "that its producers store every point of " + bname + " it may load could not be proved"};
  }
  return out;
}

// ---- stage_pipeline ----

// The data of the buffers a block stores / loads (body, init, inner blocks), leaving out those
// allocated inside it: they are private to it.
struct DataAccess {
  std::set<const Object*> loads, stores;
};
DataAccess AccessOf(const BlockNode* b) {
  std::set<const Object*> local;
  DataAccess a;
  auto visit = [&](const ObjectRef& n) {
    if (const auto* inner = n.as<BlockNode>()) {
      for (const Buffer& buf : inner->alloc_buffers) local.insert(buf->data.get());
    } else if (const auto* l = n.as<BufferLoadNode>()) {
      a.loads.insert(l->buffer->data.get());
    } else if (const auto* s = n.as<BufferStoreNode>()) {
      a.stores.insert(s->buffer->data.get());
    }
  };
  for (const Buffer& buf : b->alloc_buffers) local.insert(buf->data.get());
  PostOrderVisit(b->body, visit);
  if (b->init) PostOrderVisit(*b->init, visit);
  for (const Object* o : local) {
    a.loads.erase(o);
    a.stores.erase(o);
  }
  return a;
}

// Whether a store of the block uses one of `vars` in its indices.
bool IndexedBy(const BlockNode* b, const std::vector<const VarNode*>& vars) {
  bool found = false;
  auto visit = [&](const ObjectRef& n) {
    if (const auto* s = n.as<BufferStoreNode>()) {
      for (const PrimExpr& i : s->indices) found = found || UsesAny(i, vars);
    }
  };
  PostOrderVisit(b->body, visit);
  if (b->init) PostOrderVisit(*b->init, visit);
  return found;
}

// TVM's stage pipeline: every block of the scope is complete (data-parallel iterators only, the
// only writer of what it stores, not loading it) or a reduction (an init, data-parallel and
// commutative-reduce iterators only, the only writer of what it stores, no reduce iterator in
// the indices of its stores). Decided exactly from the text: never unknown.
Verdict StagePipeline(const std::vector<ScopedRealize>& scope) {
  std::vector<DataAccess> access;
  for (const ScopedRealize& s : scope) access.push_back(AccessOf(s.realize->block.get()));
  for (size_t i = 0; i < scope.size(); ++i) {
    const BlockNode* b = scope[i].realize->block.get();
    std::string name = "block \"" + std::string(b->name_hint) + "\"";
    for (size_t j = 0; j < scope.size(); ++j) {
      if (j == i) continue;
      for (const Object* o : access[i].stores) {
        if (access[j].stores.count(o)) {
          return {Fact::kNo, name + " and block \"" +
                                 std::string(scope[j].realize->block->name_hint) +
                                 "\" store into the same buffer"};
        }
      }
    }
    bool data_parallel = true, reduce_only = true;
    std::vector<const VarNode*> reduce_vars;
    for (const IterVar& iv : b->iter_vars) {
      data_parallel = data_parallel && iv->iter_type == IterVarType::kDataPar;
      if (iv->iter_type == IterVarType::kCommReduce) {
        reduce_vars.push_back(iv->var.get());
      } else if (iv->iter_type != IterVarType::kDataPar) {
        reduce_only = false;
      }
    }
    bool reads_output = false;
    for (const Object* o : access[i].stores)
      reads_output = reads_output || access[i].loads.count(o);
    if (data_parallel && !reads_output) continue;
    if (!reduce_only) {
      return {Fact::kNo, name +
                             " has an iterator that is neither data-parallel nor a "
                             "commutative reduction"};
    }
    if (!b->init) {
      return {Fact::kNo,
              name + (data_parallel ? " loads a buffer it stores into" : " has reduce iterators") +
                  " but no init: it is neither complete nor a reduction"};
    }
    if (IndexedBy(b, reduce_vars)) {
      return {Fact::kNo, name + " stores at an index that uses a reduce iterator"};
    }
  }
  return {};
}

}  // namespace

BlockFacts ScheduleNode::GetBlockFacts(const RV& block) {
  Impl impl(this, "block_facts");
  const Entry e = impl.Entry(block, RVNode::kBlock);
  PrimFunc f = impl.Func(e);
  auto key = std::make_pair(e.func, e.block);
  auto cached = block_facts_.find(key);
  if (cached != block_facts_.end() && cached->second.func.same_as(f)) return cached->second.facts;

  BlockSite site = impl.FindBlock(block);
  const BlockRealizeNode* enclosing = EnclosingBlock(f, site.realize);
  std::vector<ScopedRealize> scope = ScopeRealizes(enclosing ? enclosing->block->body : f->body);
  size_t self = 0;
  while (self < scope.size() && scope[self].realize != site.realize) ++self;
  if (self == scope.size())
    TVM_FFI_THROW(InternalError) << "block_facts: the block is not in its scope";

  Verdict affine = AffineBinding(site.realize, site.loops);
  Verdict cover = RegionCover(scope, self);
  Verdict pipeline = StagePipeline(scope);
  BlockFacts facts;
  facts.affine_binding = affine.fact;
  facts.region_cover = cover.fact;
  facts.stage_pipeline = pipeline.fact;
  for (const auto& [fact, v] :
       {std::make_pair("affine_binding", &affine), std::make_pair("region_cover", &cover),
        std::make_pair("stage_pipeline", &pipeline)}) {
    if (v->fact == Fact::kYes) continue;
    if (!facts.why_not.empty()) facts.why_not += "; ";
    facts.why_not += std::string(fact) + ": " + v->why;
  }
  ++block_facts_computed_;
  block_facts_.insert_or_assign(key, CachedFacts{f, facts});
  return facts;
}

}  // namespace schedule
}  // namespace tessel
