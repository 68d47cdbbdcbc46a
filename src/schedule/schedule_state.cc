// The schedule's state: RVs and their lookup in the current module, errors that render the
// function, statement replacement, and the lookup primitives (get_block, get_loops,
// get_child_blocks).
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/reflection/registry.h>

#include <sstream>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

RV::RV(int64_t id, int64_t kind) {
  auto n = tvm::ffi::make_object<RVNode>();
  n->id = id;
  n->kind = kind;
  data_ = std::move(n);
}

Schedule::Schedule(IRModule mod, uint64_t seed) {
  auto n = tvm::ffi::make_object<ScheduleNode>();
  n->mod_ = std::move(mod);
  n->rng_state_ ^= seed * 0xBF58476D1CE4E5B9ull;
  data_ = std::move(n);
}

std::string LoopMark(const Var& loop_var) {
  return "for " + std::string(loop_var->name_hint) + " in";
}
std::string BlockMark(const std::string& block) { return "block(\"" + block + "\")"; }

void ScheduleError(const std::string& primitive, const std::string& message, const PrimFunc& func,
                   const std::string& mark) {
  std::ostringstream os;
  os << primitive << ": " << message;
  if (func.defined()) {
    os << "\n\n";
    std::istringstream text(AsText(func));
    bool marked = false;
    for (std::string line; std::getline(text, line);) {
      os << line << "\n";
      size_t at = mark.empty() ? std::string::npos : line.find(mark);
      if (at != std::string::npos && !marked) {
        size_t indent = line.find_first_not_of(' ');
        os << std::string(indent, ' ') << std::string(line.size() - indent, '^') << "\n";
        marked = true;
      }
    }
  }
  TVM_FFI_THROW(ScheduleError) << os.str();
  TVM_FFI_UNREACHABLE();
}

void BindLoops(arith::Analyzer* analyzer, const std::vector<const ForNode*>& loops) {
  for (const ForNode* f : loops) {
    analyzer->Bind(f->loop_var, Range(f->min, f->extent), true);
  }
}

bool UsesAny(const PrimExpr& e, const std::vector<const VarNode*>& vars) {
  bool found = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (const auto* v = n.as<VarNode>()) {
      for (const VarNode* w : vars) found = found || v == w;
    }
  });
  return found;
}

namespace {

class ChildRealizeCollector : public StmtExprVisitor {
 public:
  std::vector<const BlockRealizeNode*> out;
  void VisitStmt_(const BlockRealizeNode* op) override { out.push_back(op); }
};

// Replaces one statement object.
class StmtReplacer : public StmtExprMutator {
 public:
  StmtReplacer(const Stmt& target, const Stmt& replacement)
      : target_(target), replacement_(replacement) {}
  Stmt VisitStmt(const Stmt& s) override {
    if (s.same_as(target_)) {
      found_ = true;
      return replacement_;
    }
    return StmtExprMutator::VisitStmt(s);
  }
  bool found() const { return found_; }

 private:
  Stmt target_, replacement_;
  bool found_ = false;
};

// Walks a function for a loop or a block, keeping the loops above.
class SiteFinder : public StmtExprVisitor {
 public:
  const VarNode* loop_var = nullptr;
  std::string block;
  LoopSite loop_site;
  std::vector<BlockSite> block_sites;

  void VisitStmt_(const ForNode* op) override {
    if (op->loop_var.get() == loop_var) {
      loop_site.loop = op;
      loop_site.above = loops_;
    }
    loops_.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
    loops_.pop_back();
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    if (!block.empty() && op->block->name_hint == block) {
      block_sites.push_back(BlockSite{op, loops_});
    }
    // Loops above an inner block start at its enclosing block.
    std::vector<const ForNode*> saved = std::move(loops_);
    loops_.clear();
    StmtExprVisitor::VisitStmt_(op);
    loops_ = std::move(saved);
  }

 private:
  std::vector<const ForNode*> loops_;
};

}  // namespace

Stmt ReplaceIn(const Stmt& root, const Stmt& target, const Stmt& replacement) {
  StmtReplacer r(target, replacement);
  return r.VisitStmt(root);
}

std::vector<const BlockRealizeNode*> ChildRealizes(const Stmt& stmt) {
  ChildRealizeCollector c;
  c.VisitStmt(stmt);
  return c.out;
}

const ScheduleNode::Entry& Impl::Entry(const RV& rv, int64_t kind) {
  const char* want = kind == RVNode::kBlock  ? "a block"
                     : kind == RVNode::kLoop ? "a loop"
                                             : "an integer";
  if (rv->id < 0 || rv->id >= static_cast<int64_t>(sch_->rvs_.size())) {
    Fail("RV " + rv->Name() + " does not belong to this schedule", PrimFunc(), "");
  }
  const ScheduleNode::Entry& e = sch_->rvs_[rv->id];
  if (e.kind != kind) Fail(rv->Name() + " is not " + std::string(want), PrimFunc(), "");
  if (!e.removed_by.empty()) {
    Fail(rv->Name() + " refers to a " + (kind == RVNode::kLoop ? "loop" : "block") + " that " +
             e.removed_by + (kind == RVNode::kLoop ? " replaced" : " removed"),
         Func(e), e.loop_var.defined() ? LoopMark(e.loop_var) : "");
  }
  return e;
}

PrimFunc Impl::Func(const ScheduleNode::Entry& e) const { return sch_->mod_->functions.at(e.func); }

LoopSite Impl::FindLoop(const RV& loop) {
  const ScheduleNode::Entry& e = Entry(loop, RVNode::kLoop);
  PrimFunc f = Func(e);
  SiteFinder finder;
  finder.loop_var = e.loop_var.get();
  finder.VisitStmt(f->body);
  if (finder.loop_site.loop == nullptr) {
    Fail("the loop " + std::string(e.loop_var->name_hint) + " (" + loop->Name() +
             ") is no longer in function " + e.func,
         f, "");
  }
  return finder.loop_site;
}

BlockSite Impl::FindBlock(const RV& block) {
  const ScheduleNode::Entry& e = Entry(block, RVNode::kBlock);
  PrimFunc f = Func(e);
  SiteFinder finder;
  finder.block = e.block;
  finder.VisitStmt(f->body);
  if (finder.block_sites.size() != 1) {
    Fail(std::string(finder.block_sites.empty() ? "no" : "more than one") + " block named \"" +
             e.block + "\" in function " + e.func,
         f, BlockMark(e.block));
  }
  return finder.block_sites[0];
}

void Impl::Replace(const ScheduleNode::Entry& e, const Stmt& target, const Stmt& replacement) {
  PrimFunc f = Func(e);
  StmtReplacer r(target, replacement);
  Stmt body = r.VisitStmt(f->body);
  if (!r.found())
    TVM_FFI_THROW(InternalError) << primitive_ << ": the statement to replace is gone";
  PrimFunc g = f;
  g.CopyOnWrite()->body = body;
  sch_->mod_.CopyOnWrite()->functions.Set(e.func, g);
}

RV Impl::NewLoop(const std::string& func, const Var& loop_var) {
  ScheduleNode::Entry e;
  e.kind = RVNode::kLoop;
  e.func = func;
  e.loop_var = loop_var;
  sch_->rvs_.push_back(e);
  return RV(static_cast<int64_t>(sch_->rvs_.size()) - 1, RVNode::kLoop);
}

RV Impl::NewBlock(const std::string& func, const std::string& block) {
  ScheduleNode::Entry e;
  e.kind = RVNode::kBlock;
  e.func = func;
  e.block = block;
  sch_->rvs_.push_back(e);
  return RV(static_cast<int64_t>(sch_->rvs_.size()) - 1, RVNode::kBlock);
}

RV Impl::NewValue(int64_t value) {
  ScheduleNode::Entry e;
  e.kind = RVNode::kExpr;
  e.value = value;
  sch_->rvs_.push_back(e);
  return RV(static_cast<int64_t>(sch_->rvs_.size()) - 1, RVNode::kExpr);
}

void Impl::Remove(const std::vector<const VarNode*>& loop_vars) {
  for (ScheduleNode::Entry& e : sch_->rvs_) {
    if (e.kind != RVNode::kLoop) continue;
    for (const VarNode* v : loop_vars) {
      if (e.loop_var.get() == v) e.removed_by = primitive_;
    }
  }
}

void Impl::Record(std::vector<Any> inputs, std::vector<RV> outputs) {
  sch_->trace_.push_back(Instruction{primitive_, std::move(inputs), std::move(outputs)});
}

// ---- lookups ----

RV ScheduleNode::GetBlock(const String& name, const std::optional<String>& func_name) {
  Impl impl(this, "get_block");
  std::string func;
  if (func_name) {
    func = *func_name;
    if (!mod_->functions.count(func)) {
      impl.Fail("the module has no function " + func, PrimFunc(), "");
    }
  } else {
    std::vector<String> names = mod_.FunctionNames();
    if (names.size() != 1) {
      impl.Fail("the module has " + std::to_string(names.size()) +
                    " functions: name the one the block is in (func_name=...)",
                PrimFunc(), "");
    }
    func = names[0];
  }
  RV rv = impl.NewBlock(func, name);
  impl.FindBlock(rv);  // exactly one such block
  impl.Record({name, func_name ? Any(*func_name) : Any(nullptr)}, {rv});
  return rv;
}

Array<RV> ScheduleNode::GetLoops(const RV& block) {
  Impl impl(this, "get_loops");
  BlockSite site = impl.FindBlock(block);
  const Entry& e = rvs_[block->id];
  std::string func = e.func;
  Array<RV> out;
  std::vector<RV> outs;
  for (const ForNode* f : site.loops) {
    RV rv = impl.NewLoop(func, f->loop_var);
    out.push_back(rv);
    outs.push_back(rv);
  }
  impl.Record({block}, outs);
  return out;
}

Array<RV> ScheduleNode::GetChildBlocks(const RV& block_or_loop) {
  Impl impl(this, "get_child_blocks");
  Stmt under;
  std::string func;
  if (block_or_loop->kind == RVNode::kBlock) {
    BlockSite site = impl.FindBlock(block_or_loop);
    under = site.realize->block->body;
    func = rvs_[block_or_loop->id].func;
  } else {
    LoopSite site = impl.FindLoop(block_or_loop);
    under = site.loop->body;
    func = rvs_[block_or_loop->id].func;
  }
  Array<RV> out;
  std::vector<RV> outs;
  for (const BlockRealizeNode* r : ChildRealizes(under)) {
    RV rv = impl.NewBlock(func, r->block->name_hint);
    out.push_back(rv);
    outs.push_back(rv);
  }
  impl.Record({block_or_loop}, outs);
  return out;
}

PrimFunc ScheduleNode::FuncOf(const RV& rv) const {
  const Entry& e = rvs_.at(rv->id);
  return mod_->functions.at(e.func);
}

}  // namespace schedule
}  // namespace tessel
