// Compute location: compute_at, reverse_compute_at. PLACEHOLDER: not implemented yet (being written
// this session).
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

void ScheduleNode::ComputeAt(const RV&, const RV&, bool, int64_t) {
  TVM_FFI_THROW(RuntimeError) << "compute_at is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

void ScheduleNode::ReverseComputeAt(const RV&, const RV&, bool, int64_t) {
  TVM_FFI_THROW(RuntimeError) << "reverse_compute_at is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

}  // namespace schedule
}  // namespace tessel
