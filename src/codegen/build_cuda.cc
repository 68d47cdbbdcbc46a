// Build for target cuda (called by Build in build.cc): lower with the cuda pipeline, generate and
// compile the device kernels, pack the cubin as a tessel_cuda module into the host library's
// __tvm_ffi__library_bin, generate the host C (whose launch_kernel calls find the kernels through
// that import), compile it through the build cache, and load it.
#include <tessel/codegen/build.h>
#include <tessel/codegen/codegen_c.h>
#include <tessel/codegen/codegen_cuda.h>
#include <tessel/codegen/compile_cuda.h>
#include <tessel/codegen/library_bin.h>
#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>
#include <tessel/ir/prim_expr.h>
#include <tessel/ir/span.h>
#include <tessel/runtime/cuda_module.h>
#include <tessel/transform/split_host_device.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

namespace tessel {
namespace codegen {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool BoolAttr(const ir::PrimFunc& f, const char* key) {
  auto it = f->attrs.find(key);
  if (it == f->attrs.end()) return false;
  auto b = (*it).second.try_cast<bool>();
  return b.has_value() && *b;
}

// attrs["tessel.cluster_dims"] as three constants; {0, 0, 0} when absent.
std::array<uint32_t, 3> ClusterDims(const ir::PrimFunc& f, const std::string& name) {
  std::array<uint32_t, 3> dims = {0, 0, 0};
  auto it = f->attrs.find("tessel.cluster_dims");
  if (it == f->attrs.end()) return dims;
  auto arr = (*it).second.try_cast<tvm::ffi::Array<tvm::ffi::Any>>();
  size_t k = 0;
  if (arr && arr->size() == 3) {
    for (const tvm::ffi::Any& a : *arr) {
      std::optional<int64_t> v = a.try_cast<int64_t>();
      if (!v) {
        if (auto e = a.try_cast<ir::PrimExpr>()) v = ir::AsConstInt(*e);
      }
      if (!v || *v < 1) break;
      dims[k++] = static_cast<uint32_t>(*v);
    }
  }
  if (k != 3) {
    TVM_FFI_THROW(ValueError) << "target cuda: kernel " << name
                              << ": tessel.cluster_dims must be three positive constants";
  }
  return dims;
}

int ArchNumber(const std::string& arch) { return std::atoi(arch.c_str() + 3); }

bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream os;
  os << in.rdbuf();
  *out = os.str();
  return !in.bad();
}

// The cubin of `source` for `arch`, from the build cache when the same source was compiled for
// the same arch by the same compiler (CUDACompilerIdentity, which names NVRTC's version) with the
// same options, else compiled and stored. *hit says which.
std::string CompileCUDACached(const std::string& source, const std::string& arch,
                              const CUDACompileOptions& options, bool* hit) {
  std::string key = "cubin\n" + arch + (options.fast_math ? " fast-math" : "") + "\n" +
                    CUDACompilerIdentity() + "\n" + CUDAIncludeDir() + "\n" + source;
  std::string dir = CacheDir();
  std::string hash = CacheHashName(key);
  for (int i = 0;; ++i) {
    std::string stem = dir + "/" + hash + (i == 0 ? "" : "-" + std::to_string(i));
    std::string stored, cubin;
    if (ReadWhole(stem + ".cukey", &stored)) {
      if (stored != key) continue;
      if (ReadWhole(stem + ".cubin", &cubin) && !cubin.empty()) {
        *hit = true;
        return cubin;
      }
    }
    cubin = CompileCUDA(source, arch, nullptr, options);
    CacheWriteFileAtomic(stem + ".cubin", cubin);
    // The key goes last: its presence says the cubin next to it is complete.
    CacheWriteFileAtomic(stem + ".cukey", key);
    *hit = false;
    return cubin;
  }
}

// A kernel that calls an sm_90a-only builtin (wgmma, setmaxnreg) needs exactly that target:
// plain sm_90 lacks the instructions, and later "a" targets have other ones; ptxas would reject
// the PTX with a message that names neither the kernel nor the builtin.
void CheckArchFeatures(const ir::PrimFunc& f, const std::string& symbol, const std::string& arch) {
  std::string needs, newer;
  int min_sm = 0;
  ir::PostOrderVisit(f->body, [&](const tvm::ffi::ObjectRef& n) {
    const auto* call = n.as<ir::CallNode>();
    if (call == nullptr) return;
    auto op = call->op.as<ir::Op>();
    if (!op || !ir::IsHopperBuiltin((*op)->name)) return;
    if (needs.empty() && ir::NeedsSm90a((*op)->name)) needs = (*op)->name;
    if (ir::MinSmVersion((*op)->name) > min_sm) {
      min_sm = ir::MinSmVersion((*op)->name);
      newer = (*op)->name;
    }
  });
  if (min_sm > ArchNumber(arch)) {
    TVM_FFI_THROW(ValueError) << "target cuda: kernel " << symbol << " calls " << newer
                              << ", which needs sm_" << min_sm << " or newer; the target is "
                              << arch;
  }
  if (!needs.empty() && arch != "sm_90a") {
    TVM_FFI_THROW(ValueError) << "target cuda: kernel " << symbol << " calls " << needs
                              << ", which only sm_90a has; the target is " << arch
                              << " (use -arch=sm_90a)";
  }
}

// A TMA copy names as many coordinates as its tensor map has dimensions; PTX takes the rank from
// the instruction, and a mismatch would read the map wrongly at run time.
void CheckTmaRanks(const ir::PrimFunc& f, const std::string& symbol) {
  std::unordered_map<const ir::VarNode*, const transform::KernelTensorMap*> maps;
  std::vector<transform::KernelTensorMap> list = transform::KernelTensorMaps(f);
  for (const transform::KernelTensorMap& m : list) maps[f->params[m.param].get()] = &m;
  ir::PostOrderVisit(f->body, [&](const tvm::ffi::ObjectRef& n) {
    const auto* call = n.as<ir::CallNode>();
    auto op = call ? call->op.as<ir::Op>() : std::nullopt;
    if (!op || ((*op)->name != "ptx_tma_load" && (*op)->name != "ptx_tma_store")) return;
    bool load = (*op)->name == "ptx_tma_load";
    if (call->args.size() < (load ? 2u : 1u)) return;
    const auto* var = call->args[load ? 1 : 0].as<ir::VarNode>();
    auto it = var ? maps.find(var) : maps.end();
    if (it == maps.end()) return;
    size_t coords = call->args.size() - (load ? 3 : 2);
    if (coords != it->second->box.size()) {
      TVM_FFI_THROW(ValueError) << "target cuda: kernel " << symbol << ": " << (*op)->name
                                << " gives " << coords << " coordinate" << (coords == 1 ? "" : "s")
                                << " for the tensor map of " << it->second->tensor << ", of rank "
                                << it->second->box.size();
    }
  });
}

}  // namespace

CompiledModule BuildCUDA(const ir::IRModule& mod, const target::Target& target,
                         const CompileOptions& options) {
  auto n = tvm::ffi::make_object<CompiledModuleNode>();
  n->target = target->str;
  // The architecture first: without one there is nothing to build for.
  std::string arch = CUDAArch(target);
  CUDACompileOptions cuda_options;
  cuda_options.fast_math = target->GetAttr("fast-math", "false") == "true";

  Clock::time_point t = Clock::now();
  ir::IRModule lowered = Lower(mod, target);
  n->lower_seconds = SecondsSince(t);

  t = Clock::now();
  tvm::ffi::Map<String, ir::PrimFunc> host_funcs, device_funcs;
  runtime::CUDAModuleData data;
  data.arch = arch;
  std::vector<std::string> names;
  for (const String& name : lowered.FunctionNames()) {
    ir::PrimFunc f = lowered->functions.at(name);
    std::string symbol = f.GetGlobalSymbol().value_or(name);
    if (!IsDeviceKernel(f)) {
      host_funcs.Set(name, f);
      names.push_back(symbol);
      continue;
    }
    device_funcs.Set(name, f);
    runtime::CUDAKernelInfo info;
    info.name = symbol;
    for (const ir::Var& p : f->params) {
      if (p.dtype().is_handle()) {
        info.arg_types.push_back(DLDataType{kDLOpaqueHandle, 64, 1});
      } else {
        info.arg_types.push_back(p.dtype());
      }
    }
    for (const transform::KernelTensorMap& m : transform::KernelTensorMaps(f)) {
      runtime::CUDATensorMapParam t;
      t.param = static_cast<uint32_t>(m.param);
      t.dtype = m.dtype;
      t.swizzle = static_cast<uint32_t>(m.swizzle);
      for (int64_t b : m.box) t.box.push_back(static_cast<uint32_t>(b));
      t.tensor = m.tensor;
      info.tensor_maps.push_back(std::move(t));
    }
    info.use_pdl = BoolAttr(f, "tessel.use_pdl");
    info.use_grid_sync = BoolAttr(f, "tessel.use_grid_sync");
    info.cluster_dims = ClusterDims(f, symbol);
    if (info.cluster_dims[0] != 0 && ArchNumber(arch) < 90) {
      TVM_FFI_THROW(ValueError) << "target cuda: kernel " << symbol
                                << " uses thread block clusters (tessel.cluster_dims), which need "
                                   "sm_90 or newer; the target is "
                                << arch;
    }
    CheckArchFeatures(f, symbol, arch);
    CheckTmaRanks(f, symbol);
    data.kernels.push_back(info);
  }
  ir::IRModule device_mod(device_funcs);
  ir::IRModule host_mod(host_funcs);
  // An error of a code generator names the statement it was at (a pass's error already does).
  std::map<std::string, CudaAlignedVariant> variants;
  data.source = ir::CallNamingErrorSpan(
      [&] { return GenerateCUDA(device_mod, arch, cuda_options.fast_math, &variants); });
  for (size_t i = 0, n = data.kernels.size(); i < n; ++i) {
    auto it = variants.find(data.kernels[i].name);
    if (it == variants.end()) continue;
    runtime::CUDAKernelInfo aligned = data.kernels[i];
    aligned.name = it->second.name;
    data.kernels[i].aligned_variant = it->second.name;
    data.kernels[i].aligned_params = it->second.params;
    data.kernels.push_back(std::move(aligned));
  }
  n->cuda_source = data.source;
  n->codegen_seconds = SecondsSince(t);

  t = Clock::now();
  bool cubin_hit = false;
  if (!data.kernels.empty())
    data.image = CompileCUDACached(data.source, arch, cuda_options, &cubin_hit);
  n->nvcc_seconds = SecondsSince(t);

  t = Clock::now();
  std::string source = ir::CallNamingErrorSpan([&] { return GenerateC(host_mod); });
  if (!data.kernels.empty()) {
    tvm::ffi::Bytes bytes = runtime::SaveCUDAModuleBytes(data);
    LibraryBinModule cuda;
    cuda.kind = runtime::kCUDAModuleKind;
    cuda.bytes = std::string(bytes.data(), bytes.size());
    source += "\n" + LibraryBinCDefinition(LibraryBinImporting({cuda}));
  }
  n->source = source;
  n->codegen_seconds += SecondsSince(t);
  return CompileAndLoad(n, std::move(names), options);
}

}  // namespace codegen
}  // namespace tessel
