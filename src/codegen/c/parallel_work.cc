// How much work a parallel loop holds, so that the C code forks threads only when it pays.
//
// An OpenMP fork/join costs microseconds on an idle machine and can cost a scheduler tick (several
// milliseconds) when the machine is busy and a worker must wait for a core, while a small loop
// (a row of 7 elements, a 1 x 5 matmul) runs in well under a microsecond. The estimate counts the
// innermost statements one run of the loop executes: a loop multiplies its body's count by its
// extent, a sequence adds, an `if` counts both branches. Extents that depend on variables bound
// inside the parallel loop count as 1 and a vector store as its lanes (an underestimate: such loops
// stay serial only when the rest of the work is small too).
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>

#include <unordered_set>

#include "codegen/c/codegen_c.h"

namespace tessel {
namespace codegen {

namespace {

using namespace ir;  // NOLINT(build/namespaces)

class WorkCounter {
 public:
  explicit WorkCounter(const ForNode* loop) {
    bound_.insert(loop->loop_var.get());
    PostOrderVisit(loop->body, [this](const ObjectRef& node) {
      if (const auto* f = node.as<ForNode>()) bound_.insert(f->loop_var.get());
      if (const auto* l = node.as<LetStmtNode>()) bound_.insert(l->var.get());
      if (const auto* l = node.as<LetNode>()) bound_.insert(l->var.get());
      if (const auto* a = node.as<AllocateNode>()) bound_.insert(a->buffer_var.get());
    });
  }

  PrimExpr Count(const Stmt& s) {
    if (const auto* seq = s.as<SeqStmtNode>()) {
      PrimExpr total = Int64(0);
      for (const Stmt& c : seq->seq) total = add(total, Count(c));
      return total;
    }
    if (const auto* f = s.as<ForNode>()) return mul(Extent(f->extent), Count(f->body));
    if (const auto* w = s.as<IfThenElseNode>()) {
      PrimExpr n = Count(w->then_case);
      return w->else_case.has_value() ? add(n, Count(w->else_case.value())) : n;
    }
    if (const auto* l = s.as<LetStmtNode>()) return Count(l->body);
    if (const auto* a = s.as<AllocateNode>()) return Count(a->body);
    if (const auto* d = s.as<DeclBufferNode>()) return Count(d->body);
    if (const auto* a = s.as<AttrStmtNode>()) return Count(a->body);
    if (const auto* a = s.as<AssertStmtNode>()) return Count(a->body);
    // A vector store does one element's work per lane.
    if (const auto* st = s.as<BufferStoreNode>()) return Int64(st->value.dtype().lanes());
    return Int64(1);
  }

  PrimExpr Extent(const PrimExpr& e) {
    bool inner = false;
    PostOrderVisit(e, [&](const ObjectRef& node) {
      if (const auto* v = node.as<VarNode>()) inner = inner || bound_.count(v) != 0;
      if (node.as<BufferLoadNode>() || node.as<CallNode>()) inner = true;
    });
    if (inner) return Int64(1);
    return max(cast(DataType::Int(64), e), Int64(0));
  }

  static PrimExpr Int64(int64_t v) { return MakeConst(DataType::Int(64), v); }

 private:
  std::unordered_set<const Object*> bound_;
};

}  // namespace

PrimExpr ParallelWork(const ForNode* loop) {
  WorkCounter counter(loop);
  return mul(counter.Extent(loop->extent), counter.Count(loop->body));
}

}  // namespace codegen
}  // namespace tessel
