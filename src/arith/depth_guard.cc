// The per-thread counter behind DepthGuard (depth_guard.h).
#include "arith/depth_guard.h"

#include <tvm/ffi/error.h>

namespace tessel {
namespace arith {
namespace detail {

thread_local int expr_depth __attribute__((tls_model("initial-exec"))) = 0;

void ThrowTooDeep() {
  --expr_depth;
  TVM_FFI_THROW(RecursionError) << "expression is deeper than " << kMaxExprDepth
                                << " levels: the analyzer's walks are recursive and stop there "
                                << "rather than overflow the stack";
}

}  // namespace detail
}  // namespace arith
}  // namespace tessel
