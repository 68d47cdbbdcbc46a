// The platform-independent half of a Metal launch (include/tessel/runtime/metal_module.h): the
// launch plan made from packed arguments, the executor registry, the framework context lookup and
// the call of the context's with_encoder. Only MetalExecutor::Encode touches Metal.
#include <tessel/runtime/metal_module.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <atomic>
#include <cstring>
#include <exception>

#include "runtime/launch_args.h"

namespace tessel {
namespace runtime {

namespace {

// Device ids a launch accepts; the runtime maps them onto MTLCopyAllDevices order.
constexpr int64_t kMaxMetalDevices = 64;

std::atomic<MetalExecutor*> g_executor{nullptr};
thread_local const TesselMetalContext* t_context = nullptr;

int64_t RoundUp16(int64_t v) { return (v + 15) / 16 * 16; }

DLTensor* TensorOf(const tvm::ffi::AnyView& v) {
  using tvm::ffi::TypeIndex;
  int32_t ti = v.type_index();
  const TVMFFIAny* raw = reinterpret_cast<const TVMFFIAny*>(&v);
  if (ti == TypeIndex::kTVMFFIDLTensorPtr) return static_cast<DLTensor*>(raw->v_ptr);
  if (ti == TypeIndex::kTVMFFITensor) return TVMFFITensorGetDLTensorPtr(raw->v_obj);
  return nullptr;
}

// The binding of buffer parameter `p` from argument `v`.
MetalBufferBinding BindBuffer(const tvm::ffi::AnyView& v, const MetalParamInfo& p,
                              int32_t device_id, ArgWhere where) {
  using tvm::ffi::TypeIndex;
  MetalBufferBinding b;
  b.index = p.slot;
  int32_t ti = v.type_index();
  if (ti == TypeIndex::kTVMFFINone) return b;
  if (ti == TypeIndex::kTVMFFIOpaquePtr) {
    const auto* ref = static_cast<const TesselMetalBufferRef*>(v.cast<void*>());
    if (ref != nullptr) {
      b.buffer = ref->buffer;
      b.offset = ref->offset;
    }
  } else if (DLTensor* t = TensorOf(v)) {
    if (t->device.device_type != kDLMetal || t->device.device_id != device_id) {
      TVM_FFI_THROW(ValueError) << where << ": expected a tensor on metal:" << device_id
                                << ", got one on device type " << int(t->device.device_type) << ":"
                                << t->device.device_id;
    }
    b.buffer = t->data;
    b.offset = t->byte_offset;
  } else {
    TVM_FFI_THROW(TypeError) << where
                             << ": expected a metal tensor or a TesselMetalBufferRef*, got "
                             << ArgTypeName(v);
  }
  int bytes = ScalarBytes(p.dtype);
  if (bytes > 1 && b.offset % bytes != 0) {
    TVM_FFI_THROW(ValueError) << where << ": byte offset " << b.offset << " is not a multiple of "
                              << bytes << " (the size of its " << DTypeName(p.dtype)
                              << " elements)";
  }
  return b;
}

struct EncodeCall {
  MetalExecutor* executor = nullptr;
  const MetalLaunchPlan* plan = nullptr;
  bool ran = false;
  std::exception_ptr error;
};

// Runs inside the framework's with_encoder: C frames (and Objective-C blocks) lie between here and
// LaunchMetal, so no exception may leave.
int EncodeBody(void* user, void* command_buffer, void* encoder) {
  auto* call = static_cast<EncodeCall*>(user);
  call->ran = true;
  try {
    call->executor->Encode(*call->plan, command_buffer, encoder);
    return 0;
  } catch (...) {
    call->error = std::current_exception();
    return 1;
  }
}

const TesselMetalContext* Checked(const TesselMetalContext* c, const char* where) {
  if (c == nullptr || c->magic != TESSEL_METAL_CONTEXT_MAGIC) return nullptr;
  if (c->abi_version != TESSEL_METAL_CONTEXT_ABI_VERSION) {
    TVM_FFI_THROW(ValueError) << "the Metal context " << (c->name ? c->name : "(unnamed)")
                              << " from " << where << " has ABI version " << c->abi_version
                              << "; this runtime reads version "
                              << TESSEL_METAL_CONTEXT_ABI_VERSION;
  }
  if (c->with_encoder == nullptr) {
    TVM_FFI_THROW(ValueError) << "the Metal context " << (c->name ? c->name : "(unnamed)")
                              << " from " << where << " has no with_encoder";
  }
  return c;
}

}  // namespace

MetalLaunchPlan MakeMetalLaunchPlan(std::shared_ptr<const MetalModuleData> module, size_t kernel,
                                    const tvm::ffi::AnyView* args, int32_t num_args) {
  const MetalKernelInfo& info = module->kernels.at(kernel);
  const char* name = info.name.c_str();
  const int nparams = static_cast<int>(info.params.size());
  if (num_args != kNumLaunchHeaderArgs + nparams) {
    TVM_FFI_THROW(TypeError) << name << ": expected " << kNumLaunchHeaderArgs + nparams
                             << " launch arguments (device_id, grid x/y/z, block x/y/z, "
                                "dyn_threadgroup_bytes, then "
                             << nparams << " kernel argument" << (nparams == 1 ? "" : "s")
                             << "), got " << num_args;
  }
  int64_t h[kNumLaunchHeaderArgs];
  ReadLaunchHeader(args, name, kMaxMetalDevices, "dyn_threadgroup_bytes", h);
  MetalLaunchPlan plan;
  plan.kernel = kernel;
  plan.device_id = static_cast<int32_t>(h[0]);
  for (int i = 0; i < 3; ++i) {
    plan.grid[i] = static_cast<uint32_t>(h[1 + i]);
    plan.group[i] = static_cast<uint32_t>(h[4 + i]);
  }
  int64_t threads = plan.threads();
  int64_t limit = info.max_threads ? std::min<int64_t>(info.max_threads, kMetalMaxThreadsPerGroup)
                                   : kMetalMaxThreadsPerGroup;
  if (threads > limit) {
    TVM_FFI_THROW(ValueError) << name << ": " << threads << " threads per threadgroup (" << h[4]
                              << " x " << h[5] << " x " << h[6] << ") exceed the "
                              << (info.max_threads ? "kernel's" : "Metal") << " limit of " << limit;
  }
  int64_t dyn = h[7];
  if (dyn < 0) {
    TVM_FFI_THROW(ValueError) << name << ": dyn_threadgroup_bytes = " << dyn
                              << " is not a valid threadgroup memory size";
  }
  if (dyn > 0 && !info.threadgroup_dynamic) {
    TVM_FFI_THROW(ValueError) << name << ": " << dyn
                              << " bytes of dynamic threadgroup memory for a kernel that takes "
                                 "none";
  }
  // Metal wants the length in multiples of 16 bytes.
  int64_t dyn16 = RoundUp16(dyn);
  if (dyn16 + info.threadgroup_static_bytes > kMetalMaxThreadgroupBytes) {
    TVM_FFI_THROW(ValueError) << name << ": needs " << dyn
                              << " bytes of dynamic threadgroup memory (+ "
                              << info.threadgroup_static_bytes << " static), more than the "
                              << kMetalMaxThreadgroupBytes << " bytes Metal allows a threadgroup";
  }
  plan.threadgroup_dynamic_bytes = static_cast<uint32_t>(dyn16);
  plan.arg_bytes.assign(info.args_bytes, 0);
  for (int i = 0; i < nparams; ++i) {
    const MetalParamInfo& p = info.params[i];
    const tvm::ffi::AnyView& v = args[kNumLaunchHeaderArgs + i];
    if (p.kind == MetalParamKind::kBuffer) {
      plan.buffers.push_back(BindBuffer(v, p, plan.device_id, ArgWhere{name, i}));
    } else {
      ConvertScalarArg(v, p.dtype, plan.arg_bytes.data() + p.slot, ArgWhere{name, i});
    }
  }
  plan.module = std::move(module);
  return plan;
}

MetalExecutor* SetMetalExecutor(MetalExecutor* executor) { return g_executor.exchange(executor); }

MetalExecutor* GetMetalExecutor() { return g_executor.load(); }

const char* MetalContextSourceName(MetalContextSource source) {
  switch (source) {
    case MetalContextSource::kThread:
      return "thread";
    case MetalContextSource::kStreamSlot:
      return "stream";
    case MetalContextSource::kDefault:
      return "default";
    default:
      return "none";
  }
}

const TesselMetalContext* FindMetalContext(int32_t device_id, MetalContextSource* source) {
  if (const TesselMetalContext* c = Checked(t_context, "the thread's context")) {
    *source = MetalContextSource::kThread;
    return c;
  }
  // Any non-NULL value in the slot must point at readable memory: the slot is for stream handles,
  // which are pointers to objects; only one that starts with the magic is taken.
  const auto* slot =
      static_cast<const TesselMetalContext*>(TVMFFIEnvGetStream(kDLMetal, device_id));
  if (const TesselMetalContext* c = Checked(slot, "the tvm-ffi stream slot of metal")) {
    *source = MetalContextSource::kStreamSlot;
    return c;
  }
  if (MetalExecutor* e = GetMetalExecutor()) {
    if (const TesselMetalContext* c = Checked(e->DefaultContext(device_id), "the runtime")) {
      *source = MetalContextSource::kDefault;
      return c;
    }
  }
  *source = MetalContextSource::kNone;
  return nullptr;
}

void LaunchMetal(const MetalLaunchPlan& plan) {
  const char* name = plan.info().name.c_str();
  MetalExecutor* executor = GetMetalExecutor();
  if (executor == nullptr) {
    TVM_FFI_THROW(RuntimeError)
        << name
        << ": the Metal runtime is not available on this platform (libtessel_runtime was built "
           "without Apple's Metal framework; the library loads and get_source(\"metal\") works, "
           "but its kernels run only on macOS)";
  }
  MetalContextSource source;
  const TesselMetalContext* ctx = FindMetalContext(plan.device_id, &source);
  if (ctx == nullptr) {
    TVM_FFI_THROW(RuntimeError) << name << ": no Metal context for device " << plan.device_id
                                << " (none set on this thread, none in the tvm-ffi stream slot, "
                                   "and the "
                                << executor->name() << " runtime offers no default)";
  }
  EncodeCall call;
  call.executor = executor;
  call.plan = &plan;
  int rc = ctx->with_encoder(ctx->self, plan.device_id, &EncodeBody, &call);
  if (call.error) std::rethrow_exception(call.error);
  const char* ctx_name = ctx->name ? ctx->name : "(unnamed)";
  if (rc != 0) {
    const char* msg = ctx->last_error ? ctx->last_error(ctx->self) : nullptr;
    TVM_FFI_THROW(RuntimeError) << name << ": the Metal context " << ctx_name << " ("
                                << MetalContextSourceName(source) << ") failed with code " << rc
                                << (msg ? ": " : "") << (msg ? msg : "");
  }
  if (!call.ran) {
    TVM_FFI_THROW(RuntimeError) << name << ": the Metal context " << ctx_name
                                << " returned without running the encoder";
  }
}

}  // namespace runtime
}  // namespace tessel

extern "C" {

const TesselMetalContext* tessel_metal_set_thread_context(const TesselMetalContext* context) {
  const TesselMetalContext* previous = tessel::runtime::t_context;
  tessel::runtime::t_context = context;
  return previous;
}

const TesselMetalContext* tessel_metal_get_thread_context(void) {
  return tessel::runtime::t_context;
}

}  // extern "C"

namespace tessel {
namespace runtime {

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  auto address = [](const void* p) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(p)); };
  refl::GlobalDef()
      .def("tessel.runtime.metal_set_thread_context",
           [address](int64_t context) {
             auto* c = reinterpret_cast<const TesselMetalContext*>(static_cast<intptr_t>(context));
             return address(tessel_metal_set_thread_context(c));
           })
      .def("tessel.runtime.metal_get_thread_context",
           [address]() { return address(tessel_metal_get_thread_context()); })
      .def("tessel.runtime.metal_find_context",
           [](int32_t device_id) {
             MetalContextSource source;
             const TesselMetalContext* c = FindMetalContext(device_id, &source);
             return tvm::ffi::Array<tvm::ffi::String>{
                 MetalContextSourceName(source),
                 c == nullptr ? "" : (c->name ? c->name : "(unnamed)")};
           })
      .def("tessel.runtime.metal_executor_name",
           []() {
             MetalExecutor* e = GetMetalExecutor();
             return tvm::ffi::String(e ? e->name() : "");
           })
      .def("tessel.runtime.metal_commit", [](int32_t device_id, bool wait) {
        MetalContextSource source;
        const TesselMetalContext* c = FindMetalContext(device_id, &source);
        if (c == nullptr) {
          TVM_FFI_THROW(RuntimeError) << "metal_commit: no Metal context for device " << device_id
                                      << (GetMetalExecutor() ? ""
                                                             : " (the Metal runtime is not "
                                                               "available on this platform)");
        }
        const char* n = c->name ? c->name : "(unnamed)";
        if (c->commit == nullptr) {
          TVM_FFI_THROW(RuntimeError)
              << "metal_commit: the Metal context " << n << " (" << MetalContextSourceName(source)
              << ") offers no commit; its framework submits the work";
        }
        int rc = c->commit(c->self, device_id, wait ? 1 : 0);
        if (rc != 0) {
          const char* msg = c->last_error ? c->last_error(c->self) : nullptr;
          TVM_FFI_THROW(RuntimeError)
              << "metal_commit: the Metal context " << n << " failed with code " << rc
              << (msg ? ": " : "") << (msg ? msg : "");
        }
      });
}

}  // namespace runtime
}  // namespace tessel
