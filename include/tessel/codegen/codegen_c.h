// The C code generator: lowered IR (docs/codegen.md, "What codegen may assume") to one C11
// translation unit that speaks the tvm-ffi C ABI.
//
// For each PrimFunc of the module, sorted by name, the unit holds a `static int32_t` kernel with
// the function's body and an exported host wrapper `__tvm_ffi_<symbol>` (symbol: attrs
// ["global_symbol"], else the function's name) that checks the caller's arguments, binds symbolic
// sizes and calls the kernel. The same module always gives byte-identical text. Anything the
// generator cannot translate exactly fails with a ValueError naming the construct and the function.
#ifndef TESSEL_CODEGEN_CODEGEN_C_H_
#define TESSEL_CODEGEN_CODEGEN_C_H_

#include <tessel/ir/module.h>

#include <string>

namespace tessel {
namespace codegen {

// One C11 translation unit for `lowered` (also the Python global "tessel.codegen.GenerateC").
// It includes <tvm/ffi/c_api.h>; compile it with -fopenmp for parallel loops.
std::string GenerateC(const ir::IRModule& lowered);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_CODEGEN_CODEGEN_C_H_
