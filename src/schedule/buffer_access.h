// What the buffer primitives (set_scope, storage_align, reindex, transform_layout) share: a
// buffer named by (block, "read"/"write", index), where a buffer is allocated, and a checked
// storage scope.
#ifndef TESSEL_SRC_SCHEDULE_BUFFER_ACCESS_H_
#define TESSEL_SRC_SCHEDULE_BUFFER_ACCESS_H_

#include <string>
#include <utility>

#include "schedule/schedule_impl.h"
#include "transform/block_buffers.h"

namespace tessel {
namespace schedule {

// Buffer `index` of the reads (write = false) or writes of the block of `site`, as
// transform::BlockBuffers numbers them; a ScheduleError naming the count when out of range.
ir::Buffer AccessedBuffer(Impl* impl, const ir::PrimFunc& f, const BlockSite& site, bool write,
                          int64_t index);

// "read" -> false, "write" -> true; a ScheduleError otherwise.
bool ParseBufferType(Impl* impl, const std::string& type);

// The block that allocates `buffer` (alloc_buffers), or null when none does.
const ir::BlockNode* AllocatingBlock(const ir::PrimFunc& f, const ir::Buffer& buffer);

// Whether `buffer` is one of the function's parameters (its buffer_map).
bool IsParamBuffer(const ir::PrimFunc& f, const ir::Buffer& buffer);

// An index map written as Python, "lambda i, j: (j // 4, i, j % 4)": its parameters (int32
// variables) and its results. ValueError when it is not that form.
std::pair<ir::Array<ir::Var>, ir::Array<ir::PrimExpr>> ParseIndexMap(const std::string& text);
// ("read"|"write", index) of the buffer named `name` among `block`'s reads, then its writes; a
// ScheduleError of `primitive` when the block accesses no buffer of that name.
ir::Array<tvm::ffi::Any> BufferIndexOf(ScheduleNode* sch, const std::string& primitive,
                                       const RV& block, const std::string& name);

// The inverse: the text that ParseIndexMap reads back to the same map.
std::string IndexMapText(const ir::Array<ir::Var>& vars, const ir::Array<ir::PrimExpr>& exprs);

}  // namespace schedule
}  // namespace tessel

#endif  // TESSEL_SRC_SCHEDULE_BUFFER_ACCESS_H_
