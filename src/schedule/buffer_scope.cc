// Buffer storage primitives: set_scope, storage_align. PLACEHOLDER: not implemented yet (being
// written this session).
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

void ScheduleNode::SetScope(const RV&, int64_t, const String&) {
  TVM_FFI_THROW(RuntimeError) << "set_scope is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

void ScheduleNode::StorageAlign(const RV&, int64_t, int64_t, int64_t, int64_t) {
  TVM_FFI_THROW(RuntimeError) << "storage_align is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

}  // namespace schedule
}  // namespace tessel
