// reverse_compute_inline. PLACEHOLDER: not implemented yet (being written this session).
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

void ScheduleNode::ReverseComputeInline(const RV&) {
  TVM_FFI_THROW(RuntimeError) << "reverse_compute_inline is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

}  // namespace schedule
}  // namespace tessel
