// The "tessel_metal" tvm-ffi module: the MSL source of a library's Metal kernels, the table that
// says how to bind each kernel's parameters, and the launch functions it hands out. The launch
// path is plain C++ up to the encoding of one dispatch, which a MetalExecutor does: the Objective-C
// runtime on Apple (src/runtime/metal/*.mm), an emulator in the tests; with none installed a
// launch raises "the Metal runtime is not available on this platform".
//
// A kernel library built for target metal carries one such module as an import of its host
// library (tvm-ffi's __tvm_ffi__library_bin); the host C code finds a kernel's launch function
// through TVMFFIEnvModLookupFromImports and calls it like the CUDA one:
//
//   (device_id: int, gx, gy, gz, bx, by, bz: int, dyn_threadgroup_bytes: int, kernel args...)
//
// grid in threadgroups, block in threads. Kernel args follow the kernel's parameters: a buffer
// parameter takes a TesselMetalBufferRef* (opaque pointer; what generated host code passes), a
// tensor of a metal device (its data handle and byte_offset), or None (no buffer bound); a scalar
// parameter takes int/bool or float, converted to its dtype and written into the argument struct.
//
// Bytes format (SaveMetalModuleBytes; loaded by "ffi.Module.load_from_bytes.tessel_metal"), all
// integers little endian, strings as <u64 length><bytes>:
//
//   magic      8 bytes  "TSLMETAL"
//   version    u32      kMetalModuleFormatVersion (a loader refuses any other version)
//   source     string   the MSL of all kernels (one library per device, compiled on first launch)
//   msl        string   the language version the source needs, "2.4" .. "4.0"
//   flags      u32      bit 0: fast math (otherwise safe math); other bits must be 0
//   nkernels   u32
//   kernel * nkernels:
//     name         string  the `kernel void` function
//     nparams      u32
//     param * nparams:    kind u8 (0 buffer, 1 scalar), dtype (u8 code, u8 bits, u16 lanes),
//                         u32 slot (buffer: its [[buffer(slot)]]; scalar: byte offset in the
//                         argument struct)
//     args_index   u32     [[buffer(args_index)]] of the constant argument struct
//     args_bytes   u32     size of the argument struct (0: the kernel has no scalars)
//     tg_static    u32     bytes of threadgroup arrays the kernel declares
//     tg_dynamic   u8      1: the kernel takes dynamic threadgroup memory at [[threadgroup(0)]]
//     max_threads  u32     threads per threadgroup when constant (0: decided at launch)
//
// The bytes end exactly after the last kernel; trailing bytes are an error.
#ifndef TESSEL_RUNTIME_METAL_MODULE_H_
#define TESSEL_RUNTIME_METAL_MODULE_H_

#include <dlpack/dlpack.h>
#include <tessel/runtime/metal_context.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/string.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel {
namespace runtime {

constexpr uint32_t kMetalModuleFormatVersion = 1;
constexpr const char* kMetalModuleKind = "tessel_metal";

// Limits of Apple GPUs that code generation and launches enforce (docs/metal.md "Limits").
constexpr int64_t kMetalMaxThreadsPerGroup = 1024;
constexpr int64_t kMetalMaxThreadgroupBytes = 32768;
constexpr int64_t kMetalMaxBufferArguments = 31;  // the argument table, argument struct included
constexpr int64_t kMetalMaxSetBytes = 4096;       // setBytes:length:
constexpr int kMetalSimdWidth = 32;

enum class MetalParamKind : uint8_t { kBuffer = 0, kScalar = 1 };

struct MetalParamInfo {
  MetalParamKind kind = MetalParamKind::kBuffer;
  // Buffer: the element type; scalar: the value type (int8..int64, uint8..uint64, bool as
  // {kDLBool, 8, 1}, float16/32, bfloat16).
  DLDataType dtype{kDLFloat, 32, 1};
  // Buffer: the [[buffer(slot)]] index; scalar: the byte offset in the argument struct.
  uint32_t slot = 0;

  bool operator==(const MetalParamInfo& o) const;
};

struct MetalKernelInfo {
  std::string name;
  std::vector<MetalParamInfo> params;  // in launch-argument order
  uint32_t args_index = 0;             // [[buffer(args_index)]] of the argument struct
  uint32_t args_bytes = 0;             // 0: no argument struct
  uint32_t threadgroup_static_bytes = 0;
  bool threadgroup_dynamic = false;
  uint32_t max_threads = 0;  // 0: not constant

  bool operator==(const MetalKernelInfo& o) const;
  bool operator!=(const MetalKernelInfo& o) const { return !(*this == o); }
};

struct MetalModuleData {
  std::string source;               // MSL
  std::string msl_version = "3.1";  // the language version to compile with
  bool fast_math = false;           // false: safe math (IEEE inf/NaN), the default
  std::vector<MetalKernelInfo> kernels;
};

// Serializes to the bytes format above. ValueError on an invalid table (empty or duplicate kernel
// name, a buffer slot used twice or >= 31, a scalar outside the argument struct, limits exceeded).
tvm::ffi::Bytes SaveMetalModuleBytes(const MetalModuleData& data);
// Parses the bytes format; ValueError naming what is wrong (bad magic, unsupported version,
// truncated at <field>, trailing bytes, invalid flags or table).
MetalModuleData ParseMetalModuleBytes(const char* data, size_t size);
// A module of kind "tessel_metal" (validated like SaveMetalModuleBytes). Creating it touches no
// Metal API; InspectSource returns the MSL.
tvm::ffi::Module CreateMetalModule(MetalModuleData data);

// ---- one launch, as plain data ----

struct MetalBufferBinding {
  uint32_t index = 0;      // [[buffer(index)]]
  void* buffer = nullptr;  // id<MTLBuffer> (NULL: nothing bound)
  uint64_t offset = 0;     // setBuffer:offset:
};

struct MetalLaunchPlan {
  // The module's data; valid for the duration of the launch (the module owns it).
  std::shared_ptr<const MetalModuleData> module;
  size_t kernel = 0;  // index into module->kernels
  int32_t device_id = 0;
  std::array<uint32_t, 3> grid = {1, 1, 1};   // threadgroups per grid
  std::array<uint32_t, 3> group = {1, 1, 1};  // threads per threadgroup
  uint32_t threadgroup_dynamic_bytes = 0;     // setThreadgroupMemoryLength:atIndex:0
  std::vector<MetalBufferBinding> buffers;    // one per buffer parameter, in parameter order
  std::vector<uint8_t> arg_bytes;             // the argument struct (empty: none)

  const MetalKernelInfo& info() const { return module->kernels[kernel]; }
  // Threads per threadgroup.
  int64_t threads() const { return int64_t{group[0]} * group[1] * group[2]; }
};

// The plan of a call of kernel `kernel` of `module` with the packed launch arguments above
// (device id, grid, block, dynamic threadgroup bytes, then the kernel's arguments). ValueError /
// TypeError naming the kernel and the argument for a wrong count, a wrong type, a value out of
// its dtype's range, a tensor not on a metal device, a misaligned byte offset, a launch dimension
// < 1 or > 2^32-1, more threads than the kernel or Metal allows, or more threadgroup memory than
// 32 KB. Nothing here touches Metal.
MetalLaunchPlan MakeMetalLaunchPlan(std::shared_ptr<const MetalModuleData> module, size_t kernel,
                                    const tvm::ffi::AnyView* args, int32_t num_args);

// ---- executors and contexts ----

// Where a plan is encoded. The Apple runtime installs one when libtessel_runtime loads; the MSL
// emulator of the tests installs its own.
class MetalExecutor {
 public:
  virtual ~MetalExecutor() = default;
  // "metal" (Apple), "emulator" (tests).
  virtual const char* name() const = 0;
  // Encodes `plan` into the compute encoder (or, when it is NULL, a new encoder on the command
  // buffer, ended before returning). Throws (tvm-ffi errors) on failure.
  virtual void Encode(const MetalLaunchPlan& plan, void* command_buffer, void* encoder) = 0;
  // The context used when neither the thread nor the tvm-ffi stream slot lends one (step 3 of
  // metal_context.h). May be NULL: a launch then fails naming the lookup order.
  virtual const TesselMetalContext* DefaultContext(int32_t device_id) = 0;
};

// Installs `executor` (not owned; NULL uninstalls) and returns the previous one. Thread-safe.
MetalExecutor* SetMetalExecutor(MetalExecutor* executor);
MetalExecutor* GetMetalExecutor();

// Where FindMetalContext found the context.
enum class MetalContextSource { kThread, kStreamSlot, kDefault, kNone };
const char* MetalContextSourceName(MetalContextSource source);

// The context a launch on `device_id` uses, in the order of metal_context.h; *source says which
// step gave it. NULL (kNone) when no step did. A thread or stream-slot context with a known magic
// but an unknown abi_version is a ValueError naming both versions.
const TesselMetalContext* FindMetalContext(int32_t device_id, MetalContextSource* source);

// Launches `plan`: finds the context, runs its with_encoder, and in the body asks the installed
// executor to encode. RuntimeError "the Metal runtime is not available on this platform" when no
// executor is installed; errors of the context or the executor reach the caller.
void LaunchMetal(const MetalLaunchPlan& plan);

// Sets the calling thread's context for the scope's lifetime, restoring the previous one.
class MetalThreadContextScope {
 public:
  explicit MetalThreadContextScope(const TesselMetalContext* context)
      : previous_(tessel_metal_set_thread_context(context)) {}
  ~MetalThreadContextScope() { tessel_metal_set_thread_context(previous_); }
  MetalThreadContextScope(const MetalThreadContextScope&) = delete;
  MetalThreadContextScope& operator=(const MetalThreadContextScope&) = delete;

 private:
  const TesselMetalContext* previous_;
};

}  // namespace runtime
}  // namespace tessel

#endif  // TESSEL_RUNTIME_METAL_MODULE_H_
