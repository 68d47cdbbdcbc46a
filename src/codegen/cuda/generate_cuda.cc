// GenerateCUDA: the prelude, then every device kernel of the module in name order.
#include <tessel/codegen/codegen_cuda.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <map>
#include <set>

#include "codegen/cuda/codegen_cuda.h"

namespace tessel {
namespace codegen {

using tvm::ffi::String;

bool IsDeviceKernel(const ir::PrimFunc& func) {
  auto it = func->attrs.find("tessel.device_kernel");
  if (it == func->attrs.end()) return false;
  auto b = (*it).second.try_cast<bool>();
  return b.has_value() && *b;
}

std::string GenerateCUDA(const ir::IRModule& mod, const std::string& arch, bool fast_math,
                         std::map<std::string, CudaAlignedVariant>* variants) {
  std::set<std::string> symbols;
  for (const String& name : mod.FunctionNames()) {
    ir::PrimFunc func = mod->functions.at(name);
    if (!IsDeviceKernel(func)) continue;
    std::string symbol = func.GetGlobalSymbol().value_or(name);
    if (!symbols.insert(symbol).second) {
      TVM_FFI_THROW(ValueError) << "codegen cuda: two kernels export the symbol '" << symbol << "'";
    }
  }
  std::string kernels;
  bool grid_sync = false;
  for (const String& name : mod.FunctionNames()) {
    ir::PrimFunc func = mod->functions.at(name);
    if (!IsDeviceKernel(func)) continue;
    std::string symbol = func.GetGlobalSymbol().value_or(name);
    bool uses = false;
    CudaAlignedVariant variant;
    kernels += "/* ---- " + std::string(name) + " ---- */\n" +
               EmitCudaKernel(func, symbol, arch, &uses, false, &variant.params) + "\n";
    grid_sync = grid_sync || uses;
    if (variant.params.empty()) continue;
    variant.name = symbol + "_aligned";
    for (int n = 2; symbols.count(variant.name); ++n) {
      variant.name = symbol + "_aligned" + std::to_string(n);
    }
    symbols.insert(variant.name);
    kernels += "/* ---- " + std::string(name) + ", pointers aligned ---- */\n" +
               EmitCudaKernel(func, variant.name, arch, &uses, true) + "\n";
    if (variants) (*variants)[symbol] = std::move(variant);
  }
  return CudaPrelude(grid_sync, fast_math) + HopperPrelude(mod) + kernels;
}

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def(
      "tessel.codegen.GenerateCUDA",
      [](ir::IRModule mod) -> String { return String(GenerateCUDA(mod)); });
}

}  // namespace codegen
}  // namespace tessel
