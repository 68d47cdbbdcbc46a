// Host-side kernel launches in generated C: `launch_kernel("name", gx, gy, gz, bx, by, bz,
// dyn_shared_bytes, args...)` becomes a call of the launch function that the library's imported
// tessel_cuda module exports under that name (include/tessel/runtime/cuda_module.h), found through
// tvm-ffi's import lookup and called through the tvm-ffi C ABI.
//
// The lookup happens once per launch site: its result is cached in a block-scope static. Two
// threads racing on the first call both look up (tvm-ffi's lookup is locked and returns the one
// function its module caches, which lives as long as the library), so the cache needs only an
// atomic store, no lock. A failed lookup or launch leaves a raised tvm-ffi error on the calling
// thread; tsl_launch moves it into the kernel's tsl_err (kind and message), so the cleanup chain
// runs and the caller gets that error.
#include "codegen/c/launch_kernel.h"

#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>
#include <tvm/ffi/error.h>

namespace tessel {
namespace codegen {

namespace {

using namespace ir;  // NOLINT(build/namespaces)

constexpr int kNumFixedLaunchArgs = 8;  // name, then gx gy gz bx by bz dyn_shared_bytes

const char* const kLaunchSection = R"TSL(/* ---- kernel launches ----
   The loader sets __tvm_ffi__library_ctx to this library's module; launch functions are looked
   up among its imports (the tessel_cuda module). */
#include <tvm/ffi/extra/c_env_api.h>

TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = NULL;

TSL_HELPER TVMFFIAny tsl_any_int(int64_t v) {
  TVMFFIAny a;
  a.type_index = kTVMFFIInt;
  a.zero_padding = 0;
  a.v_int64 = v;
  return a;
}

TSL_HELPER TVMFFIAny tsl_any_float(double v) {
  TVMFFIAny a;
  a.type_index = kTVMFFIFloat;
  a.zero_padding = 0;
  a.v_float64 = v;
  return a;
}

TSL_HELPER TVMFFIAny tsl_any_ptr(void* v) {
  TVMFFIAny a;
  a.type_index = kTVMFFIOpaquePtr;
  a.zero_padding = 0;
  a.v_int64 = 0;
  a.v_ptr = v;
  return a;
}

/* Moves the error raised on this thread into err. Its kind must outlive the error object, so it
   is mapped to a literal (an unusual kind becomes RuntimeError; the message keeps the text). */
TSL_HELPER void tsl_take_raised(tsl_error_t* err) {
  static const char* const kinds[] = {"RuntimeError", "ValueError", "TypeError", "IndexError",
                                      "KeyError", "AttributeError", "MemoryError",
                                      "NotImplementedError", "AssertionError", "InternalError"};
  TVMFFIObjectHandle e = NULL;
  TVMFFIErrorMoveFromRaised(&e);
  if (e == NULL) {
    tsl_fail(err, "RuntimeError", "kernel launch failed without an error message");
    return;
  }
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)e + sizeof(TVMFFIObject));
  const char* kind = "RuntimeError";
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    if (strlen(kinds[i]) == cell->kind.size &&
        memcmp(kinds[i], cell->kind.data, cell->kind.size) == 0) {
      kind = kinds[i];
    }
  }
  tsl_fail(err, kind, "%.*s", (int)cell->message.size, cell->message.data);
  TVMFFIObjectDecRef(e);
}

/* Calls the launch function `name` with args; *slot caches the looked-up function. Returns 0, or
   -1 with the error in err. */
TSL_HELPER int tsl_launch(TVMFFIObjectHandle* slot, const char* name, TVMFFIAny* args,
                          int32_t num_args, tsl_error_t* err) {
  /* A grid or block dimension of 0 (sized by an empty tensor) runs no thread, as the loops the
     thread indices stand for have no iterations; the launch functions refuse it (launch_args.h),
     so nothing is launched. */
  for (int i = 1; i <= 6; ++i) {
    if (args[i].v_int64 == 0) return 0;
  }
  TVMFFIObjectHandle fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (fn == NULL) {
    if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, &fn) != 0) {
      tsl_take_raised(err);
      return -1;
    }
    /* The lookup lends the function of the module loaded now; the static outlives that module
       when this library (kept loaded: -z nodelete) is loaded again after it was freed, so the
       cache owns a reference. A racing thread may add one more: a leak of one reference. */
    TVMFFIObjectIncRef(fn);
    __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
  }
  TVMFFIAny ret;
  ret.type_index = kTVMFFINone;
  ret.zero_padding = 0;
  ret.v_int64 = 0;
  if (TVMFFIFunctionCall(fn, args, num_args, &ret) != 0) {
    tsl_take_raised(err);
    return -1;
  }
  /* A launch function returns None; anything else would be an object this call owns. */
  if (ret.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(ret.v_obj);
  return 0;
}

)TSL";

}  // namespace

bool IsLaunchCall(const ObjectRef& node) {
  const auto* call = node.as<ir::CallNode>();
  if (call == nullptr) return false;
  auto op = call->op.as<ir::Op>();
  return op && (*op)->name == "launch_kernel";
}

bool LaunchesKernels(const ir::PrimFunc& func) {
  bool found = false;
  ir::PostOrderVisit(func->body,
                     [&](const ObjectRef& node) { found = found || IsLaunchCall(node); });
  return found;
}

std::string TargetGPU(const ir::PrimFunc& func) {
  if (auto target = func->attrs.Get("target")) {
    if (auto s = target->try_cast<tvm::ffi::String>()) {
      std::string text = *s;
      for (const char* gpu : {"cuda", "metal"}) {
        if (text == gpu || text.rfind(std::string(gpu) + " ", 0) == 0) return gpu;
      }
    }
  }
  return LaunchesKernels(func) ? "cuda" : "";
}

const char* LaunchSection() { return kLaunchSection; }

LaunchCode EmitLaunch(CEmitter* cg, const ir::CallNode* call) {
  const std::string& fn = cg->symbol();
  const auto* name = call->args.size() ? call->args[0].as<ir::StringImmNode>() : nullptr;
  if (name == nullptr || call->args.size() < static_cast<size_t>(kNumFixedLaunchArgs)) {
    Unsupported("a launch_kernel call without a kernel name and 7 launch dimensions", fn);
  }
  std::vector<std::string> packed = {"tsl_any_int((int64_t)tsl_device_id)"};
  for (int i = 1; i < kNumFixedLaunchArgs; ++i) {
    DataType t = call->args[i].dtype();
    if (!t.is_scalar() || !(t.is_int_or_uint() || t.is_bool())) {
      Unsupported("launch_kernel " + std::string(name->value) + ": launch dimension " +
                      std::to_string(i) + " of dtype " + t.str() + " (expected an integer)",
                  fn);
    }
    packed.push_back("tsl_any_int((int64_t)(" + cg->Expr(call->args[i]) + "))");
  }
  for (size_t i = kNumFixedLaunchArgs; i < call->args.size(); ++i) {
    const ir::PrimExpr& arg = call->args[i];
    DataType t = arg.dtype();
    if (const auto* map = arg.as<ir::CallNode>(); map && ir::IsTmaDescriptor(arg)) {
      // A tensor map: its tensor's address, dims and strides; the launch encodes it
      // (include/tessel/runtime/cuda_module.h).
      int rank = ir::TmaDescriptorRank(map);
      packed.push_back("tsl_any_ptr((void*)(" + cg->Expr(map->args[2]) + "))");
      for (int d = 0; d < 2 * rank; ++d) {
        packed.push_back("tsl_any_int((int64_t)(" + cg->Expr(map->args[3 + d]) + "))");
      }
      continue;
    }
    std::string c = cg->Expr(arg);
    if (!t.is_scalar()) {
      Unsupported("launch_kernel " + std::string(name->value) + ": a vector kernel argument", fn);
    }
    if (t.is_handle()) {
      packed.push_back("tsl_any_ptr((void*)(" + c + "))");
    } else if (t.is_int_or_uint() || t.is_bool()) {
      packed.push_back("tsl_any_int((int64_t)(" + c + "))");
    } else if (t.is_floating() && t.bits() == 16) {
      packed.push_back(std::string("tsl_any_float((double)") +
                       (t.is_bfloat() ? "tsl_bf16_to_f32(" : "tsl_f16_to_f32(") + c + "))");
    } else if (t.is_floating()) {
      packed.push_back("tsl_any_float((double)(" + c + "))");
    } else {
      Unsupported(
          "launch_kernel " + std::string(name->value) + ": a kernel argument of dtype " + t.str(),
          fn);
    }
  }
  LaunchCode out;
  std::string n = std::to_string(packed.size());
  out.setup.push_back("static TVMFFIObjectHandle tsl_launch_fn = NULL;");
  // One packed value a line: device id, grid, block, shared bytes, then the kernel arguments.
  out.setup.push_back("TVMFFIAny tsl_launch_args[" + n + "] = {");
  for (size_t i = 0; i < packed.size(); ++i) {
    out.setup.push_back("    " + packed[i] + (i + 1 < packed.size() ? "," : ""));
  }
  out.setup.push_back("};");
  out.call = "tsl_launch(&tsl_launch_fn, " + CStringLiteral(name->value) + ", tsl_launch_args, " +
             n + ", &tsl_err)";
  return out;
}

}  // namespace codegen
}  // namespace tessel
