// Identity of the runtime library: lets a loaded kernel library (or a user) ask which tessel
// runtime is present, through a tvm-ffi global function that needs no compiler.
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#ifndef TESSEL_VERSION
#define TESSEL_VERSION "0.1.0"
#endif

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("tessel.runtime.version",
                                        []() { return tvm::ffi::String(TESSEL_VERSION); });
}
