// What the buffer primitives (set_scope, storage_align, reindex, transform_layout) share: a
// buffer named by (block, "read"/"write", index), where a buffer is allocated, and a checked
// storage scope.
#ifndef TESSEL_SRC_SCHEDULE_BUFFER_ACCESS_H_
#define TESSEL_SRC_SCHEDULE_BUFFER_ACCESS_H_

#include <string>

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

}  // namespace schedule
}  // namespace tessel

#endif  // TESSEL_SRC_SCHEDULE_BUFFER_ACCESS_H_
