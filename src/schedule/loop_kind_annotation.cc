// Loop kinds (parallel, vectorize, unroll, bind) and annotations of loops and blocks.
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// Every block under `loop` may let `loop` feed only its data-parallel iterators (reduction ones
// too when `allow_reduction`, for a loop bound to threadIdx: a cross-thread reduction).
void CheckFeedsDataParallel(Impl* impl, const PrimFunc& f, const ForNode* loop,
                            bool allow_reduction) {
  std::vector<const VarNode*> var = {loop->loop_var.get()};
  PostOrderVisit(loop->body, [&](const ObjectRef& n) {
    const auto* r = n.as<BlockRealizeNode>();
    if (r == nullptr) return;
    for (size_t i = 0; i < r->iter_values.size(); ++i) {
      const IterVar& iv = r->block->iter_vars[i];
      if (iv->iter_type == IterVarType::kDataPar) continue;
      if (allow_reduction && iv->iter_type == IterVarType::kCommReduce) continue;
      if (UsesAny(r->iter_values[i], var)) {
        impl->Fail("the loop " + std::string(loop->loop_var->name_hint) + " feeds the " +
                       IterVarTypeName(iv->iter_type) + " iterator " +
                       std::string(iv->var->name_hint) + " of block \"" +
                       std::string(r->block->name_hint) +
                       "\"; only data-parallel iterators can be " +
                       (impl->primitive() == "bind"       ? std::string("bound")
                        : impl->primitive() == "parallel" ? std::string("parallelized")
                                                          : impl->primitive() + "d"),
                   f, LoopMark(loop->loop_var));
      }
    }
  });
}

void SetKind(Impl* impl, ScheduleNode* sch, const RV& loop, ForKind kind, const String& thread) {
  LoopSite site = impl->FindLoop(loop);
  const ScheduleNode::Entry e = sch->rvs_[loop->id];
  PrimFunc f = impl->Func(e);
  const ForNode* op = site.loop;
  if (op->kind == ForKind::kThreadBinding) {
    impl->Fail("the loop " + std::string(op->loop_var->name_hint) + " is already bound to " +
                   std::string(op->thread_tag),
               f, LoopMark(op->loop_var));
  }
  if (kind != ForKind::kUnrolled) {
    bool threads =
        kind == ForKind::kThreadBinding && std::string(thread).rfind("threadIdx", 0) == 0;
    CheckFeedsDataParallel(impl, f, op, threads);
  }
  Stmt out = WithSpan(
      For(op->loop_var, op->min, op->extent, kind, op->body, thread, op->annotations), op->span);
  impl->Replace(e, GetRef<Stmt>(op), out);
}

bool IsThreadTag(const std::string& t) {
  for (const char* p : {"blockIdx.", "threadIdx."}) {
    std::string prefix = p;
    if (t.size() == prefix.size() + 1 && t.compare(0, prefix.size(), prefix) == 0 &&
        (t.back() == 'x' || t.back() == 'y' || t.back() == 'z')) {
      return true;
    }
  }
  return false;
}

}  // namespace

void ScheduleNode::Parallel(const RV& loop) {
  Impl impl(this, "parallel");
  SetKind(&impl, this, loop, ForKind::kParallel, "");
  impl.Record({loop}, {});
}

void ScheduleNode::Vectorize(const RV& loop) {
  Impl impl(this, "vectorize");
  SetKind(&impl, this, loop, ForKind::kVectorized, "");
  impl.Record({loop}, {});
}

void ScheduleNode::Unroll(const RV& loop) {
  Impl impl(this, "unroll");
  SetKind(&impl, this, loop, ForKind::kUnrolled, "");
  impl.Record({loop}, {});
}

void ScheduleNode::Bind(const RV& loop, const String& thread) {
  Impl impl(this, "bind");
  if (!IsThreadTag(thread)) {
    impl.Fail(
        "'" + std::string(thread) + "' is not a thread tag (blockIdx.x/y/z or threadIdx.x/y/z)",
        PrimFunc(), "");
  }
  SetKind(&impl, this, loop, ForKind::kThreadBinding, thread);
  impl.Record({loop, thread}, {});
}

namespace {

// Rewrites the annotations of the loop or block `rv` with `edit`, which may refuse (it gets the
// function and the mark to show).
void EditAnnotations(
    Impl* impl, ScheduleNode* sch, const RV& rv,
    const std::function<void(Map<String, Any>*, const PrimFunc&, const std::string&)>& edit) {
  if (rv->kind == RVNode::kLoop) {
    LoopSite site = impl->FindLoop(rv);
    const ScheduleNode::Entry e = sch->rvs_[rv->id];
    const ForNode* op = site.loop;
    Map<String, Any> ann = op->annotations;
    edit(&ann, impl->Func(e), LoopMark(op->loop_var));
    impl->Replace(
        e, GetRef<Stmt>(op),
        WithSpan(For(op->loop_var, op->min, op->extent, op->kind, op->body, op->thread_tag, ann),
                 op->span));
    return;
  }
  BlockSite site = impl->FindBlock(rv);
  const ScheduleNode::Entry e = sch->rvs_[rv->id];
  const BlockNode* b = site.realize->block.get();
  Map<String, Any> ann = b->annotations;
  edit(&ann, impl->Func(e), BlockMark(e.block));
  Block nb(b->iter_vars, b->reads, b->writes, b->name_hint, b->body, b->init, b->alloc_buffers,
           b->match_buffers, ann);
  impl->Replace(e, GetRef<Stmt>(site.realize),
                WithSpan(BlockRealize(site.realize->iter_values, site.realize->predicate,
                                      GetRef<Block>(WithSpan(nb, b->span).as<BlockNode>())),
                         site.realize->span));
}

}  // namespace

void ScheduleNode::Annotate(const RV& rv, const String& key, const Any& value) {
  Impl impl(this, "annotate");
  EditAnnotations(&impl, this, rv, [&](Map<String, Any>* ann, const PrimFunc&, const std::string&) {
    ann->Set(key, value);
  });
  impl.Record({rv, key, value}, {});
}

void ScheduleNode::Unannotate(const RV& rv, const String& key) {
  Impl impl(this, "unannotate");
  EditAnnotations(
      &impl, this, rv, [&](Map<String, Any>* ann, const PrimFunc& f, const std::string& mark) {
        if (!ann->count(key)) {
          impl.Fail(rv->Name() + " has no annotation '" + std::string(key) + "'", f, mark);
        }
        ann->erase(key);
      });
  impl.Record({rv, key}, {});
}

}  // namespace schedule
}  // namespace tessel
