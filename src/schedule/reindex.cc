// reindex. PLACEHOLDER: not implemented yet (being written this session).
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

RV ScheduleNode::Reindex(const RV&, const String&, int64_t, bool) {
  TVM_FFI_THROW(RuntimeError) << "reindex is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

}  // namespace schedule
}  // namespace tessel
