// get_producers / get_consumers: the dataflow between the blocks of one scope, from what their
// bodies load and store.
#include <tvm/ffi/error.h>

#include <set>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

struct Access {
  std::set<const Object*> reads, writes;
};

Access AccessOf(const BlockNode* b) {
  Access a;
  auto visit = [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) a.reads.insert(l->buffer->data.get());
    if (const auto* s = n.as<BufferStoreNode>()) a.writes.insert(s->buffer->data.get());
  };
  PostOrderVisit(b->body, visit);
  if (b->init) PostOrderVisit(*b->init, visit);
  return a;
}

bool Meets(const std::set<const Object*>& x, const std::set<const Object*>& y) {
  for (const Object* o : x) {
    if (y.count(o)) return true;
  }
  return false;
}

// The realizes of the scope that holds `target`, in program order: the blocks under the closest
// enclosing block (or the function body) that are not nested in another block.
std::vector<const BlockRealizeNode*> ScopeOf(const PrimFunc& f, const BlockRealizeNode* target) {
  std::vector<const BlockRealizeNode*> found;
  std::function<bool(const Stmt&)> search = [&](const Stmt& scope) {
    std::vector<const BlockRealizeNode*> children = ChildRealizes(scope);
    for (const BlockRealizeNode* r : children) {
      if (r == target) {
        found = children;
        return true;
      }
    }
    for (const BlockRealizeNode* r : children) {
      if (search(r->block->body)) return true;
    }
    return false;
  };
  search(f->body);
  return found;
}

Array<RV> Dataflow(ScheduleNode* sch, const RV& block, bool producers) {
  Impl impl(sch, producers ? "get_producers" : "get_consumers");
  BlockSite site = impl.FindBlock(block);
  const ScheduleNode::Entry e = sch->rvs_[block->id];
  PrimFunc f = impl.Func(e);
  std::vector<const BlockRealizeNode*> scope = ScopeOf(f, site.realize);
  Access self = AccessOf(site.realize->block.get());
  Array<RV> out;
  std::vector<RV> outs;
  bool before = true;
  for (const BlockRealizeNode* r : scope) {
    if (r == site.realize) {
      before = false;
      continue;
    }
    Access other = AccessOf(r->block.get());
    bool related = producers ? before && Meets(other.writes, self.reads)
                             : !before && Meets(self.writes, other.reads);
    if (!related) continue;
    RV rv = impl.NewBlock(e.func, r->block->name_hint);
    out.push_back(rv);
    outs.push_back(rv);
  }
  impl.Record({block}, outs);
  return out;
}

}  // namespace

Array<RV> ScheduleNode::GetProducers(const RV& block) { return Dataflow(this, block, true); }
Array<RV> ScheduleNode::GetConsumers(const RV& block) { return Dataflow(this, block, false); }

}  // namespace schedule
}  // namespace tessel
