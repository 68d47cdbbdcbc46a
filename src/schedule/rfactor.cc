// rfactor. PLACEHOLDER: not implemented yet (being written this session).
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

RV ScheduleNode::RFactor(const RV&, int64_t) {
  TVM_FFI_THROW(RuntimeError) << "rfactor is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

}  // namespace schedule
}  // namespace tessel
