// GenerateMetal: the prelude, then every device kernel of the module in name order, with the
// kernel table the runtime binds them by.
#include <tessel/codegen/codegen_cuda.h>
#include <tessel/codegen/codegen_metal.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <set>

#include "codegen/metal/codegen_metal.h"

namespace tessel {
namespace codegen {

using tvm::ffi::String;

MetalOptions MetalOptions::FromTarget(const target::Target& target) {
  if (target->kind != "metal") {
    TVM_FFI_THROW(ValueError) << "MetalOptions: target " << target->str << " is not metal";
  }
  MetalOptions o;
  o.msl_version = target->GetAttr("msl", "3.1");
  o.fast_math = target->GetAttr("fast-math", "false") == "true";
  return o;
}

runtime::MetalModuleData GenerateMetal(const ir::IRModule& mod, const MetalOptions& options) {
  runtime::MetalModuleData data;
  data.msl_version = options.msl_version;
  data.fast_math = options.fast_math;
  std::set<std::string> symbols;
  std::string kernels;
  for (const String& name : mod.FunctionNames()) {
    ir::PrimFunc func = mod->functions.at(name);
    if (!IsDeviceKernel(func)) continue;
    std::string symbol = func.GetGlobalSymbol().value_or(name);
    if (!symbols.insert(symbol).second) {
      TVM_FFI_THROW(ValueError) << "codegen metal: two kernels export the symbol '" << symbol
                                << "'";
    }
    runtime::MetalKernelInfo info;
    kernels += "/* ---- " + std::string(name) + " ---- */\n" +
               EmitMetalKernel(func, symbol, options, &info) + "\n";
    data.kernels.push_back(std::move(info));
  }
  data.source = MetalPrelude(options) + kernels;
  return data;
}

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def(
      "tessel.codegen.GenerateMetal", [](ir::IRModule mod, const String& target) -> String {
        return String(
            GenerateMetal(mod, MetalOptions::FromTarget(target::Target::Parse(target))).source);
      });
}

}  // namespace codegen
}  // namespace tessel
