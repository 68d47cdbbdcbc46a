// Buffer storage primitives: set_scope (where an intermediate buffer lives) and storage_align
// (padding of a dimension's stride, recorded as the block annotation "buffer_dim_align" that
// LowerBlocks turns into the allocation's strides).
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <string>
#include <unordered_map>

#include "schedule/buffer_access.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

Buffer AccessedBuffer(Impl* impl, const PrimFunc& f, const BlockSite& site, bool write,
                      int64_t index) {
  const BlockNode* b = site.realize->block.get();
  std::vector<Buffer> buffers = transform::BlockBuffers(b, write);
  if (index < 0 || index >= static_cast<int64_t>(buffers.size())) {
    std::string kind = write ? "writes" : "reads";
    impl->Fail("buffer index " + std::to_string(index) + " is out of range: block \"" +
                   std::string(b->name_hint) + "\" " + kind + " " + std::to_string(buffers.size()) +
                   " buffer" + (buffers.size() == 1 ? "" : "s"),
               f, BlockMark(b->name_hint));
  }
  return buffers[index];
}

bool ParseBufferType(Impl* impl, const std::string& type) {
  if (type == "read") return false;
  if (type == "write") return true;
  impl->Fail("the buffer type is \"" + type + "\"; expected \"read\" or \"write\"", PrimFunc(), "");
}

const BlockNode* AllocatingBlock(const PrimFunc& f, const Buffer& buffer) {
  const BlockNode* found = nullptr;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* blk = n.as<BlockNode>()) {
      for (const Buffer& a : blk->alloc_buffers) {
        if (a.same_as(buffer)) found = blk;
      }
    }
  });
  return found;
}

bool IsParamBuffer(const PrimFunc& f, const Buffer& buffer) {
  for (const auto& kv : f->buffer_map) {
    if (kv.second.same_as(buffer)) return true;
  }
  return false;
}

namespace {

// A storage scope tessel's backends know: a rank, optionally with a tag ("shared.dyn",
// "local.acc").
bool KnownScope(const std::string& scope) {
  std::string rank = scope.substr(0, scope.find('.'));
  bool tagged = rank.size() < scope.size();
  if (tagged && rank.size() + 1 == scope.size()) return false;  // "shared." names no tag
  return rank == "global" || rank == "shared" || rank == "local" || rank == "warp";
}

// The intermediate buffer that set_scope and storage_align change: write buffer `index` of the
// block, allocated by a block of the function (not a parameter).
Buffer AllocatedWriteBuffer(Impl* impl, const PrimFunc& f, const BlockSite& site, int64_t index) {
  Buffer buf = AccessedBuffer(impl, f, site, true, index);
  std::string mark = BlockMark(site.realize->block->name_hint);
  if (IsParamBuffer(f, buf)) {
    impl->Fail(std::string(buf->name) +
                   " is a parameter of the function; only a buffer the function allocates "
                   "(alloc_buffer) can be changed",
               f, mark);
  }
  if (AllocatingBlock(f, buf) == nullptr) {
    impl->Fail(std::string(buf->name) + " is not allocated by a block of the function", f, mark);
  }
  return buf;
}

std::optional<int64_t> AsInt(const Any& v) {
  if (auto i = v.try_cast<int64_t>()) return *i;
  if (auto e = v.try_cast<PrimExpr>()) return AsConstInt(*e);
  return std::nullopt;
}

}  // namespace

void ScheduleNode::SetScope(const RV& block, int64_t buffer_index, const String& storage_scope) {
  Impl impl(this, "set_scope");
  BlockSite site = impl.FindBlock(block);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  std::string scope = storage_scope;
  if (!KnownScope(scope)) {
    impl.Fail("unknown storage scope \"" + scope +
                  "\"; expected global, shared, local or warp, optionally with a tag "
                  "(shared.dyn)",
              f, BlockMark(site.realize->block->name_hint));
  }
  Buffer buf = AllocatedWriteBuffer(&impl, f, site, buffer_index);
  // The data variable carries the scope too (the printer and the backends read it), so the
  // buffer gets a fresh one; buffers matched from it are views of the same memory and follow.
  std::unordered_map<const BufferNode*, Buffer> buffers;
  std::unordered_map<const VarNode*, Var> data;
  auto rescope = [&](const Buffer& old) {
    Var v = Var::Pointer(old->data->name_hint, old->data->pointee, scope);
    buffers[old.get()] = Buffer(old->name, v, old->dtype, old->shape, old->strides,
                                old->elem_offset, scope, old->data_alignment, old->offset_factor);
    data[old->data.get()] = v;
  };
  if (buf->scope != scope) {
    rescope(buf);
    PostOrderVisit(f->body, [&](const ObjectRef& n) {
      if (const auto* blk = n.as<BlockNode>()) {
        for (const MatchBufferRegion& m : blk->match_buffers) {
          if (m->source->buffer.same_as(buf)) rescope(m->buffer);
        }
      }
    });
    PrimFunc g = f;
    g.CopyOnWrite()->body = transform::BufferReplacer(buffers, data).VisitStmt(f->body);
    mod_.CopyOnWrite()->functions.Set(e.func, g);
  }
  impl.Record({block, buffer_index, storage_scope}, {});
}

void ScheduleNode::StorageAlign(const RV& block, int64_t buffer_index, int64_t axis, int64_t factor,
                                int64_t offset) {
  Impl impl(this, "storage_align");
  BlockSite site = impl.FindBlock(block);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  const BlockNode* b = site.realize->block.get();
  std::string mark = BlockMark(b->name_hint);
  Buffer buf = AllocatedWriteBuffer(&impl, f, site, buffer_index);
  int64_t ndim = static_cast<int64_t>(buf->shape.size());
  if (axis < 0 || axis >= ndim) {
    impl.Fail("axis " + std::to_string(axis) + " is out of range: " + std::string(buf->name) +
                  " has " + std::to_string(ndim) + " dimension" + (ndim == 1 ? "" : "s"),
              f, mark);
  }
  if (factor <= 0) {
    impl.Fail("factor " + std::to_string(factor) + " is not positive", f, mark);
  }
  if (offset < 0 || offset >= factor) {
    impl.Fail("offset " + std::to_string(offset) + " is not in [0, factor) = [0, " +
                  std::to_string(factor) + ")",
              f, mark);
  }
  if (!buf->strides.empty()) {
    impl.Fail(std::string(buf->name) + " is declared with strides; storage_align sets them", f,
              mark);
  }
  // Another block's annotation for the same dimension of this buffer must agree: the
  // allocation has one stride per dimension.
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    const auto* other = n.as<BlockNode>();
    if (!other || other == b || !other->annotations.count("buffer_dim_align")) return;
    std::vector<Buffer> writes = transform::BlockBuffers(other, true);
    auto list = other->annotations.at("buffer_dim_align").try_cast<Array<Any>>();
    if (!list) return;
    for (const Any& entry : *list) {
      auto t = entry.try_cast<Array<Any>>();
      if (!t || t->size() != 4) continue;
      std::optional<int64_t> i = AsInt((*t)[0]), a = AsInt((*t)[1]), fa = AsInt((*t)[2]),
                             o = AsInt((*t)[3]);
      if (!i || !a || !fa || !o || *i < 0 || *i >= static_cast<int64_t>(writes.size())) continue;
      if (writes[*i].same_as(buf) && *a == axis && (*fa != factor || *o != offset)) {
        impl.Fail("block \"" + std::string(other->name_hint) + "\" already aligns axis " +
                      std::to_string(axis) + " of " + std::string(buf->name) + " to factor " +
                      std::to_string(*fa) + ", offset " + std::to_string(*o),
                  f, BlockMark(other->name_hint));
      }
    }
  });
  // [[buffer_index, axis, factor, offset], ...] as TVM keeps it; a second call for the same
  // buffer and axis replaces the first.
  Array<Any> entries;
  if (b->annotations.count("buffer_dim_align")) {
    if (auto old = b->annotations.at("buffer_dim_align").try_cast<Array<Any>>()) {
      for (const Any& entry : *old) {
        auto t = entry.try_cast<Array<Any>>();
        bool same = t && t->size() == 4 && AsInt((*t)[0]) == buffer_index && AsInt((*t)[1]) == axis;
        if (!same) entries.push_back(entry);
      }
    }
  }
  entries.push_back(Array<Any>{buffer_index, axis, factor, offset});
  Map<String, Any> ann = b->annotations;
  ann.Set("buffer_dim_align", entries);
  Block nb(b->iter_vars, b->reads, b->writes, b->name_hint, b->body, b->init, b->alloc_buffers,
           b->match_buffers, ann);
  nb.CopyOnWrite()->span = b->span;
  const BlockRealizeNode* r = site.realize;
  impl.Replace(e, GetRef<Stmt>(r),
               WithSpan(BlockRealize(r->iter_values, r->predicate, nb), r->span));
  impl.Record({block, buffer_index, axis, factor, offset}, {});
}

}  // namespace schedule
}  // namespace tessel
