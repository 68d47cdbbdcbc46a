// The registry's list of built-in passes: each pass's factory, registered under the name it
// reports. Add a pass here when its header lands.
#include <tessel/transform/pass.h>
#include <tessel/transform/simplify.h>
#include <tessel/transform/verify_well_formed.h>
#include <tvm/ffi/reflection/registry.h>

namespace tessel {
namespace transform {

TVM_FFI_STATIC_INIT_BLOCK() {
  RegisterPass("VerifyWellFormed", VerifyWellFormedPass);
  RegisterPass("Simplify", [] {
    return CreateModulePass([](IRModule mod) { return Simplify(mod); }, 1, "Simplify");
  });
}

}  // namespace transform
}  // namespace tessel
