// The loop transformations: split, fuse, reorder.
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <algorithm>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// Checks what split and fuse need of a loop they replace.
void CheckPlainLoop(Impl* impl, const PrimFunc& f, const ForNode* loop) {
  std::string name = loop->loop_var->name_hint;
  auto min = AsConstInt(loop->min);
  if (!min || *min != 0) {
    impl->Fail("the loop " + name + " starts at " + AsText(loop->min) + ", not 0", f,
               LoopMark(loop->loop_var));
  }
  if (loop->kind != ForKind::kSerial) {
    impl->Fail("the loop " + name + " is " + std::string(ForKindName(loop->kind)) +
                   "; only a serial loop can be " +
                   (impl->primitive() == "split" ? "split" : impl->primitive() + "d"),
               f, LoopMark(loop->loop_var));
  }
  if (!loop->annotations.empty()) {
    impl->Fail("the loop " + name + " has annotations (unannotate it first)", f,
               LoopMark(loop->loop_var));
  }
}

// `body` with `vmap` substituted, every block binding under it simplified under `analyzer`, and
// `predicate` (when defined) added to the blocks directly under it (or around it, without blocks).
Stmt Rewrite(const Stmt& body, const std::unordered_map<const VarNode*, PrimExpr>& vmap,
             arith::Analyzer* analyzer, const PrimExpr& predicate) {
  class Rewriter : public VarSubstituter {
   public:
    Rewriter(std::unordered_map<const VarNode*, PrimExpr> vmap, arith::Analyzer* analyzer,
             PrimExpr predicate)
        : VarSubstituter(std::move(vmap)), analyzer_(analyzer), predicate_(std::move(predicate)) {}
    using VarSubstituter::VisitStmt_;
    Stmt VisitStmt_(const BlockRealizeNode* op) override {
      Array<PrimExpr> values;
      for (const PrimExpr& v : op->iter_values) values.push_back(analyzer_->Simplify(VisitExpr(v)));
      PrimExpr pred = analyzer_->Simplify(VisitExpr(op->predicate));
      if (predicate_.defined() && depth_ == 0) {
        auto c = AsConstInt(pred);
        pred = c && *c == 1 ? predicate_ : And(predicate_, pred);
      }
      ++depth_;
      Block block = GetRef<Block>(VisitStmt(op->block).as<BlockNode>());
      --depth_;
      return WithSpan(BlockRealize(values, pred, block), op->span);
    }

   private:
    arith::Analyzer* analyzer_;
    PrimExpr predicate_;
    int depth_ = 0;
  };
  Rewriter r(vmap, analyzer, predicate);
  Stmt out = r.VisitStmt(body);
  if (predicate.defined() && ChildRealizes(body).empty()) out = IfThenElse(predicate, out);
  return out;
}

// The loops from `outer` down to `inner` when each is the only statement of the one before.
bool SingleChildChain(const ForNode* outer, const ForNode* inner,
                      std::vector<const ForNode*>* chain) {
  chain->clear();
  const ForNode* f = outer;
  while (true) {
    chain->push_back(f);
    if (f == inner) return true;
    f = f->body.as<ForNode>();
    if (f == nullptr) return false;
  }
}

std::string Names(const std::vector<const ForNode*>& loops) {
  std::string out;
  for (const ForNode* f : loops)
    out += (out.empty() ? "" : ", ") + std::string(f->loop_var->name_hint);
  return out;
}

}  // namespace

Array<RV> ScheduleNode::Split(const RV& loop, const Array<Any>& factors) {
  Impl impl(this, "split");
  LoopSite site = impl.FindLoop(loop);
  const Entry e = rvs_[loop->id];
  PrimFunc f = impl.Func(e);
  const ForNode* op = site.loop;
  std::string name = op->loop_var->name_hint;
  CheckPlainLoop(&impl, f, op);
  if (factors.size() < 2) impl.Fail("needs at least two factors", f, LoopMark(op->loop_var));
  DataType t = op->loop_var.dtype();
  arith::Analyzer analyzer;
  BindLoops(&analyzer, site.above);
  // The factors, with the one None inferred from the others.
  std::vector<PrimExpr> fs;
  int inferred = -1;
  PrimExpr known = MakeConst(t, 1);
  for (size_t i = 0; i < factors.size(); ++i) {
    const Any& a = factors[i];
    if (a == nullptr) {
      if (inferred >= 0) impl.Fail("at most one factor may be None", f, LoopMark(op->loop_var));
      inferred = static_cast<int>(i);
      fs.push_back(PrimExpr());
      continue;
    }
    PrimExpr v;
    if (auto rv = a.try_cast<RV>()) {
      v = MakeConst(t, impl.Entry(*rv, RVNode::kExpr).value);  // a sampled factor
    } else if (auto i64 = a.try_cast<int64_t>()) {
      v = MakeConst(t, *i64);
    } else if (auto e = a.try_cast<PrimExpr>()) {
      v = *e;
    } else {
      impl.Fail("factor " + std::to_string(i) + " is a " + a.GetTypeKey() +
                    ", not an int, an expression or None",
                f, LoopMark(op->loop_var));
    }
    if (v.dtype() != t) v = Cast(t, v);
    if (!analyzer.CanProve(GT(v, MakeConst(t, 0)))) {
      impl.Fail("factor " + std::to_string(i) + " (" + AsText(v) + ") is not provably positive", f,
                LoopMark(op->loop_var));
    }
    fs.push_back(v);
    known = analyzer.Simplify(Mul(known, v));
  }
  if (inferred >= 0) {
    fs[inferred] = analyzer.Simplify(FloorDiv(Sub(Add(op->extent, known), MakeConst(t, 1)), known));
  }
  PrimExpr product = MakeConst(t, 1);
  for (const PrimExpr& v : fs) product = analyzer.Simplify(Mul(product, v));
  if (!analyzer.CanProve(GE(product, op->extent))) {
    impl.Fail("the product of the factors (" + AsText(product) +
                  ") could not be proved to cover the loop's extent " + AsText(op->extent),
              f, LoopMark(op->loop_var));
  }
  // New loops, outermost first; i = ((v0 * f1 + v1) * f2 + v2) ...
  std::vector<Var> vars;
  PrimExpr fused;
  for (size_t i = 0; i < fs.size(); ++i) {
    Var v(name + "_" + std::to_string(i), t);
    vars.push_back(v);
    analyzer.Bind(v, Range(MakeConst(t, 0), fs[i]), true);
    fused = fused.defined() ? Add(Mul(fused, fs[i]), v) : PrimExpr(v);
  }
  PrimExpr pred;
  if (!analyzer.CanProve(LT(fused, op->extent))) pred = LT(fused, op->extent);
  Stmt body = Rewrite(op->body, {{op->loop_var.get(), fused}}, &analyzer, pred);
  for (size_t i = fs.size(); i-- > 0;) {
    body = For(vars[i], MakeConst(t, 0), fs[i], ForKind::kSerial, body);
  }
  body = WithSpan(body, op->span);
  impl.Replace(e, GetRef<Stmt>(op), body);
  impl.Remove({op->loop_var.get()});
  Array<RV> out;
  std::vector<RV> outs;
  for (const Var& v : vars) {
    RV rv = impl.NewLoop(e.func, v);
    out.push_back(rv);
    outs.push_back(rv);
  }
  Array<Any> factor_list;
  for (const Any& a : factors) factor_list.push_back(a);
  impl.Record({loop, factor_list}, outs);
  return out;
}

RV ScheduleNode::Fuse(const Array<RV>& loops) {
  Impl impl(this, "fuse");
  if (loops.empty()) impl.Fail("needs at least one loop", PrimFunc(), "");
  std::vector<LoopSite> sites;
  for (const RV& l : loops) sites.push_back(impl.FindLoop(l));
  const Entry e = rvs_[loops[0]->id];
  PrimFunc f = impl.Func(e);
  for (const RV& l : loops) {
    if (rvs_[l->id].func != e.func) impl.Fail("the loops are in different functions", f, "");
  }
  std::vector<const ForNode*> chain;
  if (!SingleChildChain(sites.front().loop, sites.back().loop, &chain) ||
      chain.size() != sites.size()) {
    std::vector<const ForNode*> given;
    for (const LoopSite& s : sites) given.push_back(s.loop);
    impl.Fail("the loops " + Names(given) +
                  " are not a chain in which each loop is the only statement of the one before",
              f, LoopMark(sites.front().loop->loop_var));
  }
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i] != sites[i].loop) {
      impl.Fail("the loops are not given outermost first", f, LoopMark(chain[i]->loop_var));
    }
  }
  std::vector<const VarNode*> vars;
  for (const ForNode* l : chain) vars.push_back(l->loop_var.get());
  for (const ForNode* l : chain) {
    CheckPlainLoop(&impl, f, l);
    if (UsesAny(l->extent, vars)) {
      impl.Fail("the extent of " + std::string(l->loop_var->name_hint) +
                    " depends on another loop being fused",
                f, LoopMark(l->loop_var));
    }
  }
  DataType t = chain[0]->loop_var.dtype();
  arith::Analyzer analyzer;
  BindLoops(&analyzer, sites.front().above);
  PrimExpr extent = MakeConst(t, 1);
  std::string name;
  for (const ForNode* l : chain) {
    PrimExpr ext = l->extent.dtype() == t ? l->extent : Cast(t, l->extent);
    extent = analyzer.Simplify(Mul(extent, ext));
    name += std::string(l->loop_var->name_hint) + "_";
  }
  Var fused(name + "fused", t);
  analyzer.Bind(fused, Range(MakeConst(t, 0), extent), true);
  std::unordered_map<const VarNode*, PrimExpr> vmap;
  PrimExpr inner = MakeConst(t, 1);
  for (size_t i = chain.size(); i-- > 0;) {
    PrimExpr ext = chain[i]->extent.dtype() == t ? chain[i]->extent : Cast(t, chain[i]->extent);
    PrimExpr q = FloorDiv(fused, inner);
    PrimExpr v = i == 0 ? q : FloorMod(q, ext);
    vmap[chain[i]->loop_var.get()] = analyzer.Simplify(v);
    inner = analyzer.Simplify(Mul(inner, ext));
  }
  Stmt body = Rewrite(chain.back()->body, vmap, &analyzer, PrimExpr());
  body = WithSpan(For(fused, MakeConst(t, 0), extent, ForKind::kSerial, body), chain[0]->span);
  impl.Replace(e, GetRef<Stmt>(chain[0]), body);
  impl.Remove(vars);
  RV out = impl.NewLoop(e.func, fused);
  Array<Any> inputs;
  for (const RV& l : loops) inputs.push_back(l);
  impl.Record({inputs}, {out});
  return out;
}

void ScheduleNode::Reorder(const Array<RV>& loops) {
  Impl impl(this, "reorder");
  if (loops.empty()) return;
  std::vector<LoopSite> sites;
  for (const RV& l : loops) sites.push_back(impl.FindLoop(l));
  const Entry e = rvs_[loops[0]->id];
  PrimFunc f = impl.Func(e);
  for (size_t i = 0; i < sites.size(); ++i) {
    if (rvs_[loops[i]->id].func != e.func) impl.Fail("the loops are in different functions", f, "");
    for (size_t j = 0; j < i; ++j) {
      if (sites[i].loop == sites[j].loop) {
        impl.Fail("the loop " + std::string(sites[i].loop->loop_var->name_hint) + " is given twice",
                  f, LoopMark(sites[i].loop->loop_var));
      }
    }
  }
  // The outermost and innermost of the given loops: all must lie on the innermost one's path.
  const LoopSite* innermost = &sites[0];
  for (const LoopSite& s : sites) {
    if (s.above.size() > innermost->above.size()) innermost = &s;
  }
  std::vector<const ForNode*> path = innermost->above;
  path.push_back(innermost->loop);
  size_t first = path.size();
  for (const LoopSite& s : sites) {
    auto it = std::find(path.begin(), path.end(), s.loop);
    if (it == path.end()) {
      impl.Fail("the loop " + std::string(s.loop->loop_var->name_hint) +
                    " is not on the path of the others (they must nest in one another)",
                f, LoopMark(s.loop->loop_var));
    }
    first = std::min(first, static_cast<size_t>(it - path.begin()));
  }
  std::vector<const ForNode*> chain;
  if (!SingleChildChain(path[first], innermost->loop, &chain)) {
    impl.Fail("the loops from " + std::string(path[first]->loop_var->name_hint) + " to " +
                  std::string(innermost->loop->loop_var->name_hint) +
                  " are not a chain in which each loop is the only statement of the one before",
              f, LoopMark(path[first]->loop_var));
  }
  std::vector<const VarNode*> vars;
  for (const ForNode* l : chain) vars.push_back(l->loop_var.get());
  for (const ForNode* l : chain) {
    if (UsesAny(l->min, vars) || UsesAny(l->extent, vars)) {
      impl.Fail("the range of " + std::string(l->loop_var->name_hint) +
                    " depends on another loop of the chain",
                f, LoopMark(l->loop_var));
    }
  }
  // The given loops take the chain positions they occupy, in the order given.
  std::vector<const ForNode*> order = chain;
  size_t next = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    bool given = false;
    for (const LoopSite& s : sites) given = given || s.loop == chain[i];
    if (given) order[i] = sites[next++].loop;
  }
  Stmt body = chain.back()->body;
  for (size_t i = order.size(); i-- > 0;) {
    const ForNode* l = order[i];
    body = WithSpan(
        For(l->loop_var, l->min, l->extent, l->kind, body, l->thread_tag, l->annotations), l->span);
  }
  impl.Replace(e, GetRef<Stmt>(chain[0]), body);
  Array<Any> inputs;
  for (const RV& l : loops) inputs.push_back(l);
  impl.Record({inputs}, {});
}

}  // namespace schedule
}  // namespace tessel
