// The emulator as tessel's MetalExecutor (include/tessel/runtime/metal_module.h), its default
// context, and the tvm-ffi globals tests use:
//   tessel.testing.metal_emu.install(order, seed) / uninstall()
//   tessel.testing.metal_emu.as_metal(tensor, byte_offset) -> Tensor on metal:0
//   tessel.testing.metal_emu.run(source, kernel, grid, group, dyn_tg_bytes, buffers, arg_bytes,
//                                order, seed)
//   tessel.testing.metal_emu.stats() -> {name: count}
//   tessel.testing.metal_emu.translate(source) -> the generated C++
// In the emulator an "MTLBuffer" is the host address of the memory: a binding's pointer is
// (char*)buffer + offset.
#include "executor.h"

#include <tessel/runtime/metal_module.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/reflection/registry.h>

#include <mutex>
#include <sstream>
#include <vector>

#include "compiler.h"
#include "emulator.h"

namespace tessel {
namespace metal_emu {

namespace {

using runtime::MetalExecutor;
using runtime::MetalLaunchPlan;

// The command buffer the default context lends: any non-null pointer; nothing reads it.
char g_fake_command_buffer;

int DefaultWithEncoder(void* /*self*/, int32_t /*device_id*/, TesselMetalEncodeBody body,
                       void* user) {
  return body(user, &g_fake_command_buffer, nullptr);
}
int DefaultCommit(void* /*self*/, int32_t /*device_id*/, int32_t /*wait*/) { return 0; }

const TesselMetalContext kDefaultContext = {TESSEL_METAL_CONTEXT_MAGIC,
                                            TESSEL_METAL_CONTEXT_ABI_VERSION,
                                            "emulator.default",
                                            nullptr,
                                            &DefaultWithEncoder,
                                            &DefaultCommit,
                                            nullptr};

class Emulator final : public MetalExecutor {
 public:
  const char* name() const override { return "emulator"; }

  void Encode(const MetalLaunchPlan& plan, void* command_buffer, void* encoder) override {
    if (command_buffer == nullptr && encoder == nullptr) {
      TVM_FFI_THROW(RuntimeError) << "metal_emu: kernel " << plan.info().name
                                  << ": the context lent neither a command buffer nor an encoder";
    }
    EmuLaunch launch = LaunchFromPlan(plan);
    {
      std::lock_guard<std::mutex> lock(mu_);
      launch.order = order_;
      launch.seed = seed_;
    }
    RunKernel(launch);
  }

  const TesselMetalContext* DefaultContext(int32_t /*device_id*/) override {
    return &kDefaultContext;
  }

  void Configure(Order order, uint64_t seed) {
    std::lock_guard<std::mutex> lock(mu_);
    order_ = order;
    seed_ = seed;
  }

 private:
  std::mutex mu_;
  Order order_ = Order::kForward;
  uint64_t seed_ = 0;
};

Emulator& TheEmulator() {
  static Emulator e;
  return e;
}

std::mutex install_mu;
std::vector<MetalExecutor*> installed_over;  // what each install replaced

}  // namespace

EmuLaunch LaunchFromPlan(const MetalLaunchPlan& plan) {
  const runtime::MetalKernelInfo& info = plan.info();
  EmuLaunch launch;
  launch.source = &plan.module->source;
  launch.kernel = info.name;
  launch.grid = plan.grid;
  launch.group = plan.group;
  launch.dynamic_threadgroup_bytes = plan.threadgroup_dynamic_bytes;
  for (const runtime::MetalBufferBinding& b : plan.buffers) {
    if (b.buffer == nullptr) continue;
    launch.buffers.emplace_back(b.index, static_cast<char*>(b.buffer) + b.offset);
  }
  if (info.args_bytes > 0) {
    launch.arg_bytes = plan.arg_bytes;
    launch.args_index = info.args_index;
  }
  EmuKernelTable table;
  for (const runtime::MetalParamInfo& p : info.params) {
    if (p.kind == runtime::MetalParamKind::kBuffer) {
      table.buffer_slots.push_back(p.slot);
    } else {
      table.scalars.emplace_back(p.slot, (p.dtype.bits * p.dtype.lanes + 7) / 8);
    }
  }
  table.args_index = info.args_index;
  table.args_bytes = info.args_bytes;
  table.threadgroup_static_bytes = info.threadgroup_static_bytes;
  table.threadgroup_dynamic = info.threadgroup_dynamic;
  table.max_threads = info.max_threads;
  launch.table = std::move(table);
  launch.msl_version = plan.module->msl_version;
  return launch;
}

MetalExecutor* EmulatorExecutor() { return &TheEmulator(); }

void Install(Order order, uint64_t seed) {
  std::lock_guard<std::mutex> lock(install_mu);
  TheEmulator().Configure(order, seed);
  installed_over.push_back(runtime::SetMetalExecutor(&TheEmulator()));
}

void Uninstall() {
  std::lock_guard<std::mutex> lock(install_mu);
  if (installed_over.empty()) return;
  runtime::SetMetalExecutor(installed_over.back());
  installed_over.pop_back();
}

namespace {

// Keeps the source tensor alive and hands its memory to the view.
struct ViewAlloc {
  tvm::ffi::Tensor source;
  uint64_t extra_offset;
  void AllocData(DLTensor* t) {
    t->data = source.GetDLTensorPtr()->data;
    t->byte_offset = source.GetDLTensorPtr()->byte_offset + extra_offset;
  }
  void FreeData(DLTensor*) {}
};

tvm::ffi::Tensor AsMetal(tvm::ffi::Tensor tensor, int64_t byte_offset) {
  const DLTensor* source = tensor.GetDLTensorPtr();
  if (source->device.device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError)
        << "metal_emu.as_metal: the tensor must be on the CPU, got device type "
        << static_cast<int>(source->device.device_type);
  }
  if (byte_offset < 0) TVM_FFI_THROW(ValueError) << "metal_emu.as_metal: negative byte offset";
  std::vector<int64_t> shape(source->shape, source->shape + source->ndim);
  std::vector<int64_t> strides(source->ndim);
  if (source->strides != nullptr) {
    strides.assign(source->strides, source->strides + source->ndim);
  } else {
    int64_t s = 1;
    for (int i = source->ndim - 1; i >= 0; --i) {
      strides[i] = s;
      s *= shape[i];
    }
  }
  DLDataType dtype = source->dtype;
  return tvm::ffi::Tensor::FromNDAllocStrided(ViewAlloc{tensor, static_cast<uint64_t>(byte_offset)},
                                              tvm::ffi::ShapeView(shape.data(), shape.size()),
                                              tvm::ffi::ShapeView(strides.data(), strides.size()),
                                              dtype, DLDevice{kDLMetal, 0});
}

std::array<uint32_t, 3> Dims(const tvm::ffi::Array<int64_t>& v, const char* what) {
  if (v.size() != 3) TVM_FFI_THROW(ValueError) << "metal_emu.run: " << what << " needs 3 values";
  std::array<uint32_t, 3> out;
  for (int i = 0; i < 3; ++i) {
    if (v[i] < 1 || v[i] > 0xffffffffll)
      TVM_FFI_THROW(ValueError) << "metal_emu.run: " << what << " out of range";
    out[i] = static_cast<uint32_t>(v[i]);
  }
  return out;
}

void RunDirect(const tvm::ffi::String& source, const tvm::ffi::String& kernel,
               const tvm::ffi::Array<int64_t>& grid, const tvm::ffi::Array<int64_t>& group,
               int64_t dynamic_bytes, const tvm::ffi::Array<tvm::ffi::Any>& buffers,
               const tvm::ffi::Bytes& arg_bytes, const tvm::ffi::String& order, int64_t seed) {
  std::string src(source);
  EmuLaunch launch;
  launch.source = &src;
  launch.kernel = std::string(kernel);
  launch.grid = Dims(grid, "grid");
  launch.group = Dims(group, "group");
  if (dynamic_bytes < 0) TVM_FFI_THROW(ValueError) << "metal_emu.run: negative dyn_tg_bytes";
  launch.dynamic_threadgroup_bytes = static_cast<uint32_t>(dynamic_bytes);
  for (const tvm::ffi::Any& item : buffers) {
    auto pair = item.cast<tvm::ffi::Array<tvm::ffi::Any>>();
    if (pair.size() != 2)
      TVM_FFI_THROW(ValueError) << "metal_emu.run: buffers are (tensor, slot) pairs";
    auto slot = pair[1].cast<int64_t>();
    if (slot < 0 || slot >= TESSEL_METAL_EMU_MAX_BUFFERS)
      TVM_FFI_THROW(ValueError) << "metal_emu.run: buffer slot " << slot << " out of range";
    if (pair[0] == nullptr) continue;
    const DLTensor* t = pair[0].cast<tvm::ffi::Tensor>().GetDLTensorPtr();
    launch.buffers.emplace_back(static_cast<uint32_t>(slot),
                                static_cast<char*>(t->data) + t->byte_offset);
  }
  launch.arg_bytes.assign(arg_bytes.data(), arg_bytes.data() + arg_bytes.size());
  launch.order = ParseOrder(std::string(order));
  launch.seed = static_cast<uint64_t>(seed);
  RunKernel(launch);
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("tessel.testing.metal_emu.install",
           [](const tvm::ffi::String& order, int64_t seed) {
             Install(ParseOrder(std::string(order)), static_cast<uint64_t>(seed));
           })
      .def("tessel.testing.metal_emu.uninstall", []() { Uninstall(); })
      .def("tessel.testing.metal_emu.as_metal", &AsMetal)
      .def("tessel.testing.metal_emu.run", &RunDirect)
      .def("tessel.testing.metal_emu.translate",
           [](const tvm::ffi::String& source) {
             return tvm::ffi::String(TranslatedSource(std::string(source)));
           })
      .def("tessel.testing.metal_emu.stats", []() {
        EmuStats s = GetStats();
        tvm::ffi::Map<tvm::ffi::String, int64_t> m;
        m.Set("launches", s.launches);
        m.Set("groups", s.groups);
        m.Set("threads", s.threads);
        m.Set("threadgroup_barriers", s.threadgroup_barriers);
        m.Set("simd_rendezvous", s.simd_rendezvous);
        m.Set("compiles", s.compiles);
        m.Set("cache_hits", s.cache_hits);
        m.Set("errors", s.errors);
        return m;
      });
}

}  // namespace

}  // namespace metal_emu
}  // namespace tessel
