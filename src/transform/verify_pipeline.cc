// The VerifyPipeline analysis (contract in include/tessel/transform/verify_pipeline.h).
//
// Two parts: a walker that turns the statements around a pipelined loop, for one trip count, into
// a list of events (it fixes the loop variable and the extent's variables, decides the `if`s it
// can and takes the others both ways), and a checker that runs over the events keeping, per
// staged buffer and stage, the writes since the start and the last read, plus the group count and
// the positions of waits and barriers.
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tessel/ir/substitute.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/software_pipeline.h>
#include <tessel/transform/verify_pipeline.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

struct Event {
  enum Kind { kRead, kWrite, kCommit, kWait, kBarrier } kind;
  const VarNode* buf = nullptr;
  std::string name;  // the buffer's
  int64_t stage = 0;
  bool async = false;
  int64_t n = 0;  // wait_group's count
  Stmt stmt;
  std::string where;  // "prologue", "ko = 3", "after the loop"
};

std::string OneLine(const Stmt& s) {
  std::string t = AsText(s);
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  auto nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(0, nl) + " ...";
}

std::string CallName(const Stmt& s) {
  const auto* ev = s.as<EvaluateNode>();
  const auto* call = ev ? ev->value.as<CallNode>() : nullptr;
  const auto* op = call ? call->op.as<OpNode>() : nullptr;
  return op ? std::string(op->name) : std::string();
}

// Turns statements into events under fixed values of some variables.
class Walker {
 public:
  Walker(const std::unordered_map<const VarNode*, PrimExpr>& stage_elems, arith::Analyzer* a,
         std::vector<std::string>* problems)
      : stage_elems_(stage_elems), analyzer_(a), problems_(problems) {}

  std::unordered_map<const VarNode*, PrimExpr> values;
  std::string where;
  std::vector<Event> events;

  void Walk(const Stmt& s, bool decided = true) {
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& c : seq->seq) Walk(c, decided);
    } else if (const auto* f = s.as<ForNode>()) {
      PrimExpr mn = Eval(f->min), ext = Eval(f->extent);
      if (auto e = AsConstInt(ext); e && *e <= 0) return;
      analyzer_->Bind(f->loop_var, Range(mn, ext), true);
      Walk(f->body, decided);
    } else if (const auto* ite = s.as<IfThenElseNode>()) {
      Reads(ite->condition, s);
      PrimExpr c = Eval(ite->condition);
      auto v = AsConstInt(c);
      if (v) {
        if (*v) {
          Walk(ite->then_case, decided);
        } else if (ite->else_case) {
          Walk(*ite->else_case, decided);
        }
      } else {
        Walk(ite->then_case, false);
        if (ite->else_case) Walk(*ite->else_case, false);
      }
    } else if (const auto* let = s.as<LetStmtNode>()) {
      Reads(let->value, s);
      analyzer_->Bind(let->var, Eval(let->value), true);
      Walk(let->body, decided);
    } else if (const auto* a = s.as<AttrStmtNode>()) {
      if (a->attr_key == "thread_extent") {
        if (auto v = a->node.as<Var>()) {
          analyzer_->Bind(*v, Range(MakeConst(v->dtype(), int64_t{0}), Eval(a->value)), true);
        }
      }
      Walk(a->body, decided);
    } else if (const auto* al = s.as<AllocateNode>()) {
      Walk(al->body, decided);
    } else if (const auto* d = s.as<DeclBufferNode>()) {
      Walk(d->body, decided);
    } else if (const auto* st = s.as<BufferStoreNode>()) {
      Reads(st->value, s);
      for (const PrimExpr& i : st->indices) Reads(i, s);
      if (auto stage = StageOf(st->buffer, st->indices, s)) {
        Push({Event::kWrite, st->buffer->data.get(), st->buffer->name, *stage, false, 0, s, where});
      }
    } else if (const auto* ev = s.as<EvaluateNode>()) {
      Evaluate(ev, s, decided);
    } else if (const auto* as = s.as<AssertStmtNode>()) {
      Reads(as->condition, s);
      Walk(as->body, decided);
    } else {
      Problem("a " + std::string(s->GetTypeKey()) + " around a pipelined loop is not understood");
    }
  }

 private:
  void Evaluate(const EvaluateNode* ev, const Stmt& s, bool decided) {
    const auto* call = ev->value.as<CallNode>();
    std::string name = CallName(s);
    bool sync_point =
        call && (call->op.same_as(builtin::tvm_storage_sync()) ||
                 (name == "ptx_cp_async_commit_group" || name == "ptx_cp_async_wait_group"));
    if (sync_point && !decided) {
      Problem("'" + OneLine(s) + "' (" + where +
              ") sits under a condition the check cannot decide, so groups and barriers cannot "
              "be counted");
      return;
    }
    if (call && call->op.same_as(builtin::tvm_storage_sync())) {
      Push({Event::kBarrier, nullptr, "", 0, false, 0, s, where});
    } else if (name == "ptx_cp_async_commit_group") {
      Push({Event::kCommit, nullptr, "", 0, false, 0, s, where});
    } else if (name == "ptx_cp_async_wait_group") {
      Push({Event::kWait, nullptr, "", 0, false, AsConstInt(call->args[0]).value_or(0), s, where});
    } else if (name == "ptx_cp_async" && call->args.size() >= 3) {
      Reads(call->args[1], s);
      if (call->args.size() == 4) Reads(call->args[3], s);
      const auto* addr = call->args[0].as<CallNode>();
      const auto* dst =
          addr && addr->args.size() == 1 ? addr->args[0].as<BufferLoadNode>() : nullptr;
      if (dst) {
        for (const PrimExpr& i : dst->indices) Reads(i, s);
        if (auto stage = StageOf(dst->buffer, dst->indices, s)) {
          Push({Event::kWrite, dst->buffer->data.get(), dst->buffer->name, *stage, true, 0, s,
                where});
        }
      }
    } else {
      Reads(ev->value, s);
    }
  }

  void Reads(const PrimExpr& e, const Stmt& s) {
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (const auto* load = n.as<BufferLoadNode>()) {
        if (auto stage = StageOf(load->buffer, load->indices, s)) {
          Push({Event::kRead, load->buffer->data.get(), load->buffer->name, *stage, false, 0, s,
                where});
        }
      }
    });
  }

  PrimExpr Eval(const PrimExpr& e) { return analyzer_->Simplify(Substitute(e, values)); }

  std::optional<int64_t> StageOf(const Buffer& buf, const Array<PrimExpr>& indices, const Stmt& s) {
    auto it = stage_elems_.find(buf->data.get());
    if (it == stage_elems_.end() || indices.size() != 1) return std::nullopt;
    PrimExpr first = indices[0], last = indices[0];
    if (const auto* r = indices[0].as<RampNode>()) {
      first = r->base;
      last = add(r->base, mul(r->stride, MakeConst(r->stride.dtype(), int64_t{r->lanes - 1})));
    }
    PrimExpr e = cast(first.dtype(), it->second);
    auto a = AsConstInt(Eval(floordiv(first, e)));
    auto b = AsConstInt(Eval(floordiv(last, e)));
    if (!a || !b || *a != *b) {
      Problem("cannot tell which stage of " + std::string(buf->name) + " '" + OneLine(s) + "' (" +
              where + ") touches: floordiv(index, " + AsText(it->second) + ") is " +
              AsText(Eval(floordiv(first, e))));
      return std::nullopt;
    }
    return *a;
  }

  void Push(Event e) { events.push_back(std::move(e)); }
  void Problem(const std::string& p) {
    if (std::find(problems_->begin(), problems_->end(), p) == problems_->end()) {
      problems_->push_back(p);
    }
  }

  const std::unordered_map<const VarNode*, PrimExpr>& stage_elems_;
  arith::Analyzer* analyzer_;
  std::vector<std::string>* problems_;
};

// Runs the events of one trip count.
class Checker {
 public:
  Checker(bool gpu, std::string context, std::vector<std::string>* problems,
          std::set<std::string>* seen)
      : gpu_(gpu), context_(std::move(context)), problems_(problems), seen_(seen) {}

  void Run(const std::vector<Event>& events) {
    for (size_t p = 0; p < events.size(); ++p) {
      const Event& e = events[p];
      switch (e.kind) {
        case Event::kBarrier:
          barriers_.push_back(p);
          break;
        case Event::kCommit:
          for (size_t w : open_) writes_[w].group = groups_;
          open_.clear();
          ++groups_;
          break;
        case Event::kWait:
          if (groups_ - e.n > retired_) {
            retired_ = groups_ - e.n;
            waits_.push_back({p, retired_});
          }
          break;
        case Event::kWrite:
          Write(e, p);
          break;
        case Event::kRead:
          Read(e, p);
          break;
      }
    }
  }

 private:
  struct Write_ {
    Event event;
    size_t pos;
    int64_t group = -1;
    bool settled = false;
  };
  using Key = std::pair<const VarNode*, int64_t>;

  bool BarrierBetween(size_t a, size_t b) const {
    auto it = std::upper_bound(barriers_.begin(), barriers_.end(), a);
    return it != barriers_.end() && *it < b;
  }

  void Write(const Event& e, size_t p) {
    Key key{e.buf, e.stage};
    auto r = last_read_.find(key);
    if (gpu_ && r != last_read_.end() && !BarrierBetween(r->second.second, p)) {
      Report("overwrite", e,
             "overwrites stage " + std::to_string(e.stage) + " of " + e.name + " that " +
                 r->second.first.where +
                 " read with no block barrier in between (another thread may still be "
                 "reading it)",
             r->second.first);
    }
    writes_.push_back({e, p});
    by_stage_[key].push_back(writes_.size() - 1);
    if (e.async) open_.push_back(writes_.size() - 1);
  }

  void Read(const Event& e, size_t p) {
    Key key{e.buf, e.stage};
    last_read_[key] = {e, p};
    for (size_t wi : by_stage_[key]) {
      Write_& w = writes_[wi];
      if (w.settled) continue;
      std::string what = std::string(w.event.async ? "cp.async" : "store") + " in " + w.event.where;
      size_t visible_from = w.pos;
      if (w.event.async) {
        if (w.group < 0) {
          Report("uncommitted", e,
                 "reads stage " + std::to_string(e.stage) + " of " + e.name +
                     " before its copy landed: the " + what + " is not committed yet",
                 w.event);
          continue;
        }
        auto q = std::find_if(waits_.begin(), waits_.end(), [&](const auto& wt) {
          return wt.second > w.group && wt.first > w.pos;
        });
        if (q == waits_.end() || q->first > p) {
          Report("unretired", e,
                 "reads stage " + std::to_string(e.stage) + " of " + e.name +
                     " before its copy landed: the " + what + " is in group " +
                     std::to_string(w.group) + ", and the waits so far retire only groups < " +
                     std::to_string(retired_) + " (" + std::to_string(groups_) + " committed)",
                 w.event);
          continue;
        }
        visible_from = q->first;
      }
      if (gpu_ && !BarrierBetween(visible_from, p)) {
        Report("invisible", e,
               "reads stage " + std::to_string(e.stage) + " of " + e.name +
                   " with no block barrier after the " + what +
                   (w.event.async ? " was waited for" : "") +
                   " (other threads' copies are not visible)",
               w.event);
        continue;
      }
      w.settled = true;
    }
  }

  void Report(const char* kind, const Event& at, const std::string& what, const Event& other) {
    std::string msg = context_ + ": " + at.where + " " + what + "\n    at: " + OneLine(at.stmt) +
                      "\n    and: " + OneLine(other.stmt);
    // One report per kind and pair of statements: the first trip count that shows it.
    std::string key =
        what.substr(0, what.find(':')) + "|" + OneLine(at.stmt) + "|" + OneLine(other.stmt);
    if (seen_->insert(key).second) problems_->push_back(msg);
  }

  bool gpu_;
  std::string context_;
  std::vector<std::string>* problems_;
  std::set<std::string>* seen_;
  std::vector<Write_> writes_;
  std::map<Key, std::vector<size_t>> by_stage_;
  std::map<Key, std::pair<Event, size_t>> last_read_;
  std::vector<size_t> open_, barriers_;
  std::vector<std::pair<size_t, int64_t>> waits_;
  int64_t groups_ = 0, retired_ = 0;
};

// Finds the pipelined loops and checks each with the sequence around it.
class Finder : public StmtExprVisitor {
 public:
  explicit Finder(std::string function) : function_(std::move(function)) {}
  using StmtExprVisitor::VisitStmt_;
  std::vector<std::string> problems;

  void VisitStmt_(const AllocateNode* op) override {
    auto it = op->annotations.find(kPipelineStageElems);
    if (it != op->annotations.end()) {
      if (auto v = (*it).second.try_cast<int64_t>()) {
        stage_elems_[op->buffer_var.get()] = MakeConst(DataType::Int(32), *v);
      } else if (auto e = (*it).second.try_cast<PrimExpr>()) {
        stage_elems_[op->buffer_var.get()] = *e;
      }
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    std::optional<std::string> tag;
    if (op->attr_key == "thread_extent") {
      if (auto v = op->node.as<Var>()) tag = ThreadTagOf(*v);
    }
    if (tag) outer_.push_back(GetRef<Stmt>(op));
    bool thread = tag && tag->rfind("threadIdx", 0) == 0;
    gpu_ += thread;
    StmtExprVisitor::VisitStmt_(op);
    gpu_ -= thread;
    if (tag) outer_.pop_back();
  }
  void VisitStmt_(const ForNode* op) override {
    if (op->annotations.count(kPipelinedLoop) && !done_.count(op)) {
      Check(op, {GetRef<Stmt>(op)});
    }
    outer_.push_back(GetRef<Stmt>(op));
    StmtExprVisitor::VisitStmt_(op);
    outer_.pop_back();
  }
  void VisitStmt_(const SeqStmtNode* op) override {
    for (const Stmt& s : op->seq) {
      if (const auto* f = s.as<ForNode>(); f && f->annotations.count(kPipelinedLoop)) {
        Check(f, op->seq);
      }
    }
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  // Values of the extent's variables that give trip counts 0 .. max (a constant extent: itself).
  std::vector<std::pair<int64_t, std::unordered_map<const VarNode*, PrimExpr>>> TripCounts(
      const ForNode* loop, int64_t stages, arith::Analyzer* a) {
    std::vector<std::pair<int64_t, std::unordered_map<const VarNode*, PrimExpr>>> out;
    if (auto c = AsConstInt(loop->extent)) {
      out.push_back({std::min<int64_t>(*c, 512), {}});
      return out;
    }
    std::vector<const VarNode*> vars;
    PostOrderVisit(loop->extent, [&](const ObjectRef& n) {
      if (const auto* v = n.as<VarNode>()) {
        if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
      }
    });
    int64_t max_n = 2 * stages + 2;
    std::set<int64_t> found;
    for (int64_t v = 0; v < 4096 && static_cast<int64_t>(found.size()) <= max_n; ++v) {
      std::unordered_map<const VarNode*, PrimExpr> m;
      for (const VarNode* x : vars) m[x] = MakeConst(x->dtype, v);
      auto n = AsConstInt(a->Simplify(Substitute(loop->extent, m)));
      if (n && *n >= 0 && *n <= max_n && found.insert(*n).second) out.push_back({*n, m});
    }
    return out;
  }

  // The loops and threads around the sequence bound what is inside it.
  void BindOuter(arith::Analyzer* analyzer) const {
    for (const Stmt& o : outer_) {
      if (const auto* f = o.as<ForNode>()) {
        analyzer->Bind(f->loop_var, Range(f->min, f->extent), true);
      } else if (const auto* at = o.as<AttrStmtNode>()) {
        auto v = at->node.as<Var>();
        analyzer->Bind(*v, Range(MakeConst(v->dtype(), int64_t{0}), at->value), true);
      }
    }
  }

  void Check(const ForNode* loop, const Array<Stmt>& seq) {
    done_.insert(loop);
    auto s = loop->annotations.at(kPipelinedLoop).try_cast<int64_t>();
    int64_t stages = s.value_or(2);
    std::string context = "function '" + function_ + "', pipelined loop '" +
                          std::string(loop->loop_var->name_hint) + "'";
    arith::Analyzer analyzer;
    for (const auto& [n, values] : TripCounts(loop, stages, &analyzer)) {
      Walker w(stage_elems_, &analyzer, &problems);
      w.values = values;
      BindOuter(&analyzer);
      bool after = false;
      for (const Stmt& st : seq) {
        if (st.get() == loop) {
          after = true;
          PrimExpr mn = analyzer.Simplify(Substitute(loop->min, values));
          for (int64_t k = 0; k < n; ++k) {
            PrimExpr kv = analyzer.Simplify(add(mn, MakeConst(mn.dtype(), k)));
            w.values[loop->loop_var.get()] = kv;
            w.where = "iteration " + std::string(loop->loop_var->name_hint) + " = " + AsText(kv) +
                      " (of " + std::to_string(n) + ")";
            w.Walk(loop->body);
          }
          w.values.erase(loop->loop_var.get());
          continue;
        }
        w.where = std::string(after ? "after the loop" : "the prologue") + " (trip count " +
                  std::to_string(n) + ")";
        w.Walk(st);
      }
      Checker(gpu_ > 0, context, &problems, &seen_).Run(w.events);
    }
    // A constant trip count of at most 512 was run whole.
    auto n = AsConstInt(loop->extent);
    if (!n || *n > 512) CheckPeriodic(loop, stages, context);
  }

  // Every stage the loop body touches repeats every S iterations: floordiv(index, E), with the
  // inner loops and threads bounded, is a number or `(k + c) % m` with m dividing S (the
  // simplifier does not fold `(k + c + S) % S` itself: in int32 the sum may wrap). With that, a
  // trip count past those run above repeats their steady state.
  void CheckPeriodic(const ForNode* loop, int64_t stages, const std::string& context) {
    arith::Analyzer analyzer;
    BindOuter(&analyzer);
    analyzer.Bind(loop->loop_var, Range(loop->min, loop->extent), true);
    const VarNode* k = loop->loop_var.get();
    auto periodic = [&](const PrimExpr& stage) {
      bool uses_k = false;
      PostOrderVisit(stage, [&](const ObjectRef& n) { uses_k = uses_k || n.get() == k; });
      if (!uses_k) return true;
      const auto* mod = stage.as<FloorModNode>();
      auto m = mod ? AsConstInt(mod->b) : std::nullopt;
      if (!m || *m <= 0 || stages % *m != 0) return false;
      PrimExpr rest = analyzer.Simplify(sub(mod->a, GetRef<PrimExpr>(k)));
      bool rest_uses_k = false;
      PostOrderVisit(rest, [&](const ObjectRef& n) { rest_uses_k = rest_uses_k || n.get() == k; });
      return !rest_uses_k;
    };
    auto check = [&](const Buffer& buf, const Array<PrimExpr>& indices, const Stmt& at) {
      auto it = stage_elems_.find(buf->data.get());
      if (it == stage_elems_.end() || indices.size() != 1) return;
      PrimExpr i = indices[0];
      if (const auto* r = i.as<RampNode>()) i = r->base;
      PrimExpr stage = analyzer.Simplify(floordiv(i, cast(i.dtype(), it->second)));
      if (!periodic(stage)) {
        std::string p = context + ": the stage of " + std::string(buf->name) + " in '" +
                        OneLine(at) + "' is " + AsText(stage) + ", not proved to repeat every " +
                        std::to_string(stages) +
                        " iterations, so trip counts past those checked are not covered";
        if (seen_.insert(p).second) problems.push_back(p);
      }
    };
    auto loads = [&](const PrimExpr& e, const Stmt& at) {
      PostOrderVisit(e, [&](const ObjectRef& n) {
        if (const auto* load = n.as<BufferLoadNode>()) check(load->buffer, load->indices, at);
      });
    };
    // Each expression is looked at under the ranges of the loops around it.
    std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
      if (const auto* seq = st.as<SeqStmtNode>()) {
        for (const Stmt& c : seq->seq) walk(c);
      } else if (const auto* f = st.as<ForNode>()) {
        analyzer.Bind(f->loop_var, Range(f->min, f->extent), true);
        walk(f->body);
      } else if (const auto* ite = st.as<IfThenElseNode>()) {
        loads(ite->condition, st);
        walk(ite->then_case);
        if (ite->else_case) walk(*ite->else_case);
      } else if (const auto* store = st.as<BufferStoreNode>()) {
        loads(store->value, st);
        check(store->buffer, store->indices, st);
      } else if (const auto* ev = st.as<EvaluateNode>()) {
        loads(ev->value, st);
      } else if (const auto* let = st.as<LetStmtNode>()) {
        loads(let->value, st);
        walk(let->body);
      } else if (const auto* a = st.as<AllocateNode>()) {
        walk(a->body);
      } else if (const auto* d = st.as<DeclBufferNode>()) {
        walk(d->body);
      } else if (const auto* at = st.as<AttrStmtNode>()) {
        walk(at->body);
      }
    };
    walk(loop->body);
  }

  std::string function_;
  std::unordered_map<const VarNode*, PrimExpr> stage_elems_;
  std::vector<Stmt> outer_;
  std::set<const ForNode*> done_;
  std::set<std::string> seen_;
  int gpu_ = 0;
};

}  // namespace

std::vector<std::string> VerifyPipeline(const PrimFunc& func) {
  Finder f(func.GetGlobalSymbol().value_or("<unnamed>"));
  f.VisitStmt(func->body);
  return f.problems;
}

std::vector<std::string> VerifyPipeline(const IRModule& mod) {
  std::vector<std::string> out;
  for (const String& name : mod.FunctionNames()) {
    for (std::string& p : VerifyPipeline(mod->functions.at(name))) out.push_back(std::move(p));
  }
  return out;
}

Pass VerifyPipelinePass() {
  return CreateModulePass(
      [](IRModule mod) {
        std::vector<std::string> problems = VerifyPipeline(mod);
        if (!problems.empty()) TVM_FFI_THROW(ValueError) << "VerifyPipeline: " << problems[0];
        return mod;
      },
      0, "VerifyPipeline");
}

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("tessel.transform.VerifyPipeline", [](ObjectRef node) {
    std::vector<std::string> problems;
    if (auto m = node.as<IRModule>()) {
      problems = VerifyPipeline(*m);
    } else if (auto f = node.as<PrimFunc>()) {
      problems = VerifyPipeline(*f);
    } else {
      TVM_FFI_THROW(TypeError) << "VerifyPipeline expects an IRModule or a PrimFunc, got "
                               << node->GetTypeKey();
    }
    Array<String> out;
    for (const std::string& p : problems) out.push_back(p);
    return out;
  });
}

}  // namespace transform
}  // namespace tessel
