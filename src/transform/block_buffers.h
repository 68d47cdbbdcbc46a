// Which buffers a block reads and writes, by index, and the replacement of one buffer object by
// another everywhere in a function. Shared by the schedule primitives that name a buffer by
// (block, index) and by LowerBlocks, which reads the storage_align annotation that names one the
// same way: both must agree on what "write buffer 1 of block C" is.
#ifndef TESSEL_TRANSFORM_BLOCK_BUFFERS_H_INTERNAL_
#define TESSEL_TRANSFORM_BLOCK_BUFFERS_H_INTERNAL_

#include <tessel/ir/functor.h>
#include <tessel/ir/stmt.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tessel {
namespace transform {

// The buffers of a block's declared T.reads (write = false) or T.writes (write = true), one per
// region, when the block declares any; else the buffers its init and body load (store), once
// each, in order of first access (the init first), leaving out buffers allocated inside the
// block. A block with an init does not count the buffers it stores among its reads: the
// accumulator of a reduction is a write, as in TVM's region detection.
inline std::vector<ir::Buffer> BlockBuffers(const ir::BlockNode* b, bool write) {
  std::vector<ir::Buffer> out;
  const ir::Array<ir::BufferRegion>& declared = write ? b->writes : b->reads;
  if (!declared.empty()) {
    for (const ir::BufferRegion& r : declared) out.push_back(r->buffer);
    return out;
  }
  std::unordered_set<const ir::Object*> inner, stored, seen;
  auto note = [&](const ir::ObjectRef& n) {
    if (const auto* blk = n.as<ir::BlockNode>()) {
      for (const ir::Buffer& a : blk->alloc_buffers) inner.insert(a.get());
      for (const ir::MatchBufferRegion& m : blk->match_buffers) inner.insert(m->buffer.get());
    }
    if (const auto* s = n.as<ir::BufferStoreNode>()) stored.insert(s->buffer.get());
  };
  for (const ir::Buffer& a : b->alloc_buffers) inner.insert(a.get());
  if (b->init) ir::PostOrderVisit(*b->init, note);
  ir::PostOrderVisit(b->body, note);
  auto collect = [&](const ir::ObjectRef& n) {
    ir::Buffer buf;
    if (const auto* l = n.as<ir::BufferLoadNode>()) {
      if (!write) buf = l->buffer;
    } else if (const auto* s = n.as<ir::BufferStoreNode>()) {
      if (write) buf = s->buffer;
    }
    if (!buf.defined() || inner.count(buf.get()) || seen.count(buf.get())) return;
    if (!write && b->init && stored.count(buf.get())) return;
    seen.insert(buf.get());
    out.push_back(buf);
  };
  if (b->init) ir::PostOrderVisit(*b->init, collect);
  ir::PostOrderVisit(b->body, collect);
  return out;
}

// Replaces buffer objects (and the data variables of replaced buffers) everywhere: loads,
// stores, regions, match sources, alloc_buffers, matched buffers and DeclBuffer.
class BufferReplacer : public ir::StmtExprMutator {
 public:
  BufferReplacer(std::unordered_map<const ir::BufferNode*, ir::Buffer> buffers,
                 std::unordered_map<const ir::VarNode*, ir::Var> data)
      : buffers_(std::move(buffers)), data_(std::move(data)) {}

  using ir::StmtExprMutator::VisitExpr_;
  using ir::StmtExprMutator::VisitStmt_;

  ir::Buffer VisitBufferUse(const ir::Buffer& buf) override { return Map(buf); }

  ir::PrimExpr VisitExpr_(const ir::VarNode* op) override {
    auto it = data_.find(op);
    return it == data_.end() ? ir::GetRef<ir::PrimExpr>(op) : ir::PrimExpr(it->second);
  }

  ir::Stmt VisitStmt_(const ir::DeclBufferNode* op) override {
    ir::Stmt body = VisitStmt(op->body);
    ir::Buffer buf = Map(op->buffer);
    if (body.same_as(op->body) && buf.same_as(op->buffer)) return ir::GetRef<ir::Stmt>(op);
    return ir::WithSpan(ir::DeclBuffer(buf, body), op->span);
  }

  ir::Stmt VisitStmt_(const ir::BlockNode* op) override {
    ir::Stmt visited = ir::StmtExprMutator::VisitStmt_(op);
    const auto* b = visited.as<ir::BlockNode>();
    bool changed = !visited.same_as(ir::GetRef<ir::Stmt>(op));
    ir::Array<ir::Buffer> allocs;
    for (const ir::Buffer& a : b->alloc_buffers) {
      allocs.push_back(Map(a));
      changed = changed || !allocs.back().same_as(a);
    }
    ir::Array<ir::MatchBufferRegion> matches;
    for (const ir::MatchBufferRegion& m : b->match_buffers) {
      ir::Buffer mb = Map(m->buffer);
      changed = changed || !mb.same_as(m->buffer);
      matches.push_back(mb.same_as(m->buffer) ? m : ir::MatchBufferRegion(mb, m->source));
    }
    if (!changed) return visited;
    return ir::WithSpan(ir::Block(b->iter_vars, b->reads, b->writes, b->name_hint, b->body, b->init,
                                  allocs, matches, b->annotations),
                        op->span);
  }

 private:
  ir::Buffer Map(const ir::Buffer& buf) {
    auto it = buffers_.find(buf.get());
    return it == buffers_.end() ? buf : it->second;
  }
  std::unordered_map<const ir::BufferNode*, ir::Buffer> buffers_;
  std::unordered_map<const ir::VarNode*, ir::Var> data_;
};

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_BLOCK_BUFFERS_H_INTERNAL_
