// transform_layout. PLACEHOLDER: not implemented yet (being written this session).
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

void ScheduleNode::TransformLayout(const RV&, const String&, int64_t, const Array<ir::Var>&,
                                   const Array<ir::PrimExpr>&, const std::optional<ir::PrimExpr>&) {
  TVM_FFI_THROW(RuntimeError) << "transform_layout is not implemented yet";
  TVM_FFI_UNREACHABLE();
}

}  // namespace schedule
}  // namespace tessel
