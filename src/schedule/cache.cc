// Cache primitives: cache_read, cache_write. PLACEHOLDER: not implemented yet (being written this
// session).
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

RV ScheduleNode::CacheRead(const RV&, int64_t, const String&, const Array<RV>&) {
  TVM_FFI_THROW(RuntimeError) << "cache_read is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

RV ScheduleNode::CacheWrite(const RV&, int64_t, const String&, const Array<RV>&) {
  TVM_FFI_THROW(RuntimeError) << "cache_write is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

}  // namespace schedule
}  // namespace tessel
