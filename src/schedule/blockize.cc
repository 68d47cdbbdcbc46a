// blockize. PLACEHOLDER: not implemented yet (being written this session).
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

RV ScheduleNode::Blockize(const RV&, bool) {
  TVM_FFI_THROW(RuntimeError) << "blockize is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

}  // namespace schedule
}  // namespace tessel
