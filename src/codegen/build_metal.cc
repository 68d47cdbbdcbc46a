// Build for target metal (called by Build in build.cc): every function is marked for metal (its
// tensors are kDLMetal), lowered with the GPU pipeline, the device kernels go through
// GenerateMetal and are packed with their table as a tessel_metal module into the host library's
// __tvm_ffi__library_bin; the host functions through GenerateC; the library is compiled through
// the build cache and loaded. Nothing here needs Metal: the MSL is compiled by the runtime on the
// first launch on a device.
#include <tessel/codegen/build.h>
#include <tessel/codegen/codegen_c.h>
#include <tessel/codegen/codegen_cuda.h>
#include <tessel/codegen/codegen_metal.h>
#include <tessel/codegen/library_bin.h>
#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>
#include <tessel/ir/span.h>
#include <tessel/runtime/metal_module.h>
#include <tvm/ffi/error.h>

#include <chrono>

namespace tessel {
namespace codegen {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `mod` with attrs["target"] = "metal" on every function: a kernel written for "cuda" is built
// for the target asked for, and the host wrappers take metal tensors.
ir::IRModule MarkedForMetal(const ir::IRModule& mod) {
  return transform::MapFunctions(mod, [](const String&, const ir::PrimFunc& f) {
    ir::PrimFunc out = f;
    out.CopyOnWrite()->attrs.Set("target", String("metal"));
    return out;
  });
}

}  // namespace

CompiledModule BuildMetal(const ir::IRModule& mod, const target::Target& target,
                          const CompileOptions& options) {
  auto n = tvm::ffi::make_object<CompiledModuleNode>();
  n->target = target->str;
  MetalOptions metal = MetalOptions::FromTarget(target);

  Clock::time_point t = Clock::now();
  ir::IRModule lowered = Lower(MarkedForMetal(mod), target);
  n->lower_seconds = SecondsSince(t);

  t = Clock::now();
  tvm::ffi::Map<String, ir::PrimFunc> host_funcs, device_funcs;
  std::vector<std::string> names;
  for (const String& name : lowered.FunctionNames()) {
    ir::PrimFunc f = lowered->functions.at(name);
    if (IsDeviceKernel(f)) {
      // The Hopper builtins are PTX; MSL has nothing that means the same.
      std::string ptx;
      ir::PostOrderVisit(f->body, [&](const tvm::ffi::ObjectRef& node) {
        const auto* call = node.as<ir::CallNode>();
        auto op = call ? call->op.as<ir::Op>() : std::nullopt;
        if (op && ptx.empty() && ir::IsHopperBuiltin((*op)->name)) ptx = (*op)->name;
      });
      if (!ptx.empty()) {
        TVM_FFI_THROW(ValueError) << f.GetGlobalSymbol().value_or(name) << ": target metal: " << ptx
                                  << " is a CUDA PTX builtin; Metal has no equivalent";
      }
      device_funcs.Set(name, f);
    } else {
      // The host cannot touch Metal memory: its data pointers are MTLBuffer handles.
      std::string access;
      ir::PostOrderVisit(f->body, [&](const tvm::ffi::ObjectRef& node) {
        if (const auto* load = node.as<ir::BufferLoadNode>()) access = load->buffer->name;
        if (const auto* store = node.as<ir::BufferStoreNode>()) access = store->buffer->name;
      });
      if (!access.empty()) {
        TVM_FFI_THROW(ValueError)
            << f.GetGlobalSymbol().value_or(name) << ": target metal: buffer " << access
            << " is accessed outside a GPU kernel (the host cannot read Metal memory; bind the "
               "loops that touch it to blockIdx/threadIdx)";
      }
      host_funcs.Set(name, f);
      names.push_back(f.GetGlobalSymbol().value_or(name));
    }
  }
  // An error of a code generator names the statement it was at (a pass's error already does).
  runtime::MetalModuleData data =
      ir::CallNamingErrorSpan([&] { return GenerateMetal(ir::IRModule(device_funcs), metal); });
  n->metal_source = data.source;
  std::string source = ir::CallNamingErrorSpan([&] { return GenerateC(ir::IRModule(host_funcs)); });
  if (!data.kernels.empty()) {
    tvm::ffi::Bytes bytes = runtime::SaveMetalModuleBytes(data);
    LibraryBinModule m;
    m.kind = runtime::kMetalModuleKind;
    m.bytes = std::string(bytes.data(), bytes.size());
    source += "\n" + LibraryBinCDefinition(LibraryBinImporting({m}));
  }
  n->source = source;
  n->codegen_seconds = SecondsSince(t);
  return CompileAndLoad(n, std::move(names), options);
}

}  // namespace codegen
}  // namespace tessel
