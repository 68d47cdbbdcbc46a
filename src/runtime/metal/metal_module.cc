// The tessel_metal module kind: its bytes format, the table's validation, the ModuleObj whose
// functions launch kernels, and the loader registered for tvm-ffi's library binaries (format in
// include/tessel/runtime/metal_module.h).
#include "tessel/runtime/metal_module.h"

#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstring>
#include <set>

#include "runtime/byte_io.h"
#include "runtime/launch_args.h"

namespace tessel {
namespace runtime {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'L', 'M', 'E', 'T', 'A', 'L'};
constexpr uint32_t kFlagFastMath = 1u << 0;
constexpr const char* kFormat = "tessel_metal module bytes";

bool SameType(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

bool ScalarTypeOK(DLDataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLInt:
    case kDLUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLBool:
      return t.bits == 8;
    case kDLFloat:
      return t.bits == 16 || t.bits == 32;  // Metal has no float64
    case kDLBfloat:
      return t.bits == 16;
    default:
      return false;
  }
}

bool VersionOK(const std::string& v) {
  for (const char* known : {"2.4", "3.0", "3.1", "3.2", "4.0"}) {
    if (v == known) return true;
  }
  return false;
}

void Validate(const MetalModuleData& data) {
  if (!VersionOK(data.msl_version)) {
    TVM_FFI_THROW(ValueError) << "tessel_metal module: unknown MSL version '" << data.msl_version
                              << "' (known: 2.4, 3.0, 3.1, 3.2, 4.0)";
  }
  std::set<std::string> names;
  for (const MetalKernelInfo& k : data.kernels) {
    if (k.name.empty()) TVM_FFI_THROW(ValueError) << "tessel_metal module: a kernel has no name";
    if (!names.insert(k.name).second) {
      TVM_FFI_THROW(ValueError) << "tessel_metal module: kernel " << k.name << " listed twice";
    }
    std::set<uint32_t> slots;
    for (size_t i = 0; i < k.params.size(); ++i) {
      const MetalParamInfo& p = k.params[i];
      if (!ScalarTypeOK(p.dtype)) {
        TVM_FFI_THROW(ValueError) << "tessel_metal module: kernel " << k.name << ": parameter " << i
                                  << " has an unsupported type (code " << int(p.dtype.code)
                                  << ", bits " << int(p.dtype.bits) << ", lanes " << p.dtype.lanes
                                  << ")";
      }
      if (p.kind == MetalParamKind::kBuffer) {
        if (p.slot >= kMetalMaxBufferArguments || !slots.insert(p.slot).second) {
          TVM_FFI_THROW(ValueError) << "tessel_metal module: kernel " << k.name << ": parameter "
                                    << i << " binds buffer slot " << p.slot
                                    << ", which is taken or not below " << kMetalMaxBufferArguments;
        }
      } else if (p.kind == MetalParamKind::kScalar) {
        int64_t bytes = p.dtype.code == kDLBool ? 1 : p.dtype.bits / 8;
        if (p.slot % bytes != 0 || p.slot + bytes > k.args_bytes) {
          TVM_FFI_THROW(ValueError)
              << "tessel_metal module: kernel " << k.name << ": scalar "
              << "parameter " << i << " at byte " << p.slot << " is misaligned or outside the "
              << k.args_bytes << "-byte argument struct";
        }
      } else {
        TVM_FFI_THROW(ValueError) << "tessel_metal module: kernel " << k.name << ": parameter " << i
                                  << " has an unknown kind";
      }
    }
    if (k.args_bytes > 0 &&
        (k.args_index >= kMetalMaxBufferArguments || slots.count(k.args_index))) {
      TVM_FFI_THROW(ValueError) << "tessel_metal module: kernel " << k.name
                                << ": the argument struct's slot " << k.args_index
                                << " is taken or not below " << kMetalMaxBufferArguments;
    }
    if (k.args_bytes > kMetalMaxSetBytes) {
      TVM_FFI_THROW(ValueError) << "tessel_metal module: kernel " << k.name << ": " << k.args_bytes
                                << " bytes of scalar arguments exceed the " << kMetalMaxSetBytes
                                << " bytes setBytes takes";
    }
    if (k.threadgroup_static_bytes > kMetalMaxThreadgroupBytes) {
      TVM_FFI_THROW(ValueError) << "tessel_metal module: kernel " << k.name << ": "
                                << k.threadgroup_static_bytes
                                << " bytes of threadgroup memory exceed "
                                << kMetalMaxThreadgroupBytes;
    }
    if (k.max_threads > kMetalMaxThreadsPerGroup) {
      TVM_FFI_THROW(ValueError) << "tessel_metal module: kernel " << k.name << ": " << k.max_threads
                                << " threads per threadgroup exceed " << kMetalMaxThreadsPerGroup;
    }
  }
}

tvm::ffi::Function LaunchFunction(std::shared_ptr<const MetalModuleData> data, size_t index) {
  return tvm::ffi::Function::FromPacked(
      [data, index](tvm::ffi::PackedArgs args, tvm::ffi::Any* rv) {
        LaunchMetal(MakeMetalLaunchPlan(data, index, args.data(), args.size()));
      });
}

class MetalModuleObj final : public tvm::ffi::ModuleObj {
 public:
  explicit MetalModuleObj(std::shared_ptr<const MetalModuleData> data) : data_(std::move(data)) {}

  const char* kind() const final { return kMetalModuleKind; }

  int GetPropertyMask() const final {
    return tvm::ffi::Module::kBinarySerializable | tvm::ffi::Module::kRunnable;
  }

  tvm::ffi::Optional<tvm::ffi::Function> GetFunction(const tvm::ffi::String& name) final {
    for (size_t i = 0; i < data_->kernels.size(); ++i) {
      if (data_->kernels[i].name == name.c_str()) return LaunchFunction(data_, i);
    }
    return std::nullopt;
  }

  tvm::ffi::Bytes SaveToBytes() const final { return SaveMetalModuleBytes(*data_); }

  tvm::ffi::String InspectSource(const tvm::ffi::String& format) const final {
    return tvm::ffi::String(data_->source);
  }

 private:
  std::shared_ptr<const MetalModuleData> data_;
};

}  // namespace

bool MetalParamInfo::operator==(const MetalParamInfo& o) const {
  return kind == o.kind && SameType(dtype, o.dtype) && slot == o.slot;
}

bool MetalKernelInfo::operator==(const MetalKernelInfo& o) const {
  return name == o.name && params == o.params && args_index == o.args_index &&
         args_bytes == o.args_bytes && threadgroup_static_bytes == o.threadgroup_static_bytes &&
         threadgroup_dynamic == o.threadgroup_dynamic && max_threads == o.max_threads;
}

tvm::ffi::Bytes SaveMetalModuleBytes(const MetalModuleData& data) {
  Validate(data);
  ByteWriter w;
  w.Raw(kMagic, sizeof(kMagic));
  w.U32(kMetalModuleFormatVersion);
  w.Str(data.source);
  w.Str(data.msl_version);
  w.U32(data.fast_math ? kFlagFastMath : 0);
  w.U32(static_cast<uint32_t>(data.kernels.size()));
  for (const MetalKernelInfo& k : data.kernels) {
    w.Str(k.name);
    w.U32(static_cast<uint32_t>(k.params.size()));
    for (const MetalParamInfo& p : k.params) {
      w.U8(static_cast<uint8_t>(p.kind));
      w.U8(p.dtype.code);
      w.U8(p.dtype.bits);
      w.U16(p.dtype.lanes);
      w.U32(p.slot);
    }
    w.U32(k.args_index);
    w.U32(k.args_bytes);
    w.U32(k.threadgroup_static_bytes);
    w.U8(k.threadgroup_dynamic ? 1 : 0);
    w.U32(k.max_threads);
  }
  return tvm::ffi::Bytes(w.out());
}

MetalModuleData ParseMetalModuleBytes(const char* bytes, size_t size) {
  ByteReader r(kFormat, bytes, size);
  char magic[sizeof(kMagic)];
  r.Raw(magic, sizeof(magic), "the magic");
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    TVM_FFI_THROW(ValueError) << kFormat << ": bad magic (not a tessel_metal module)";
  }
  uint32_t version = r.U32("the version");
  if (version != kMetalModuleFormatVersion) {
    TVM_FFI_THROW(ValueError) << kFormat << ": format version " << version
                              << " is not supported (this runtime reads version "
                              << kMetalModuleFormatVersion << "; rebuild the library)";
  }
  MetalModuleData data;
  data.source = r.Str("the source");
  data.msl_version = r.Str("the MSL version");
  uint32_t flags = r.U32("the flags");
  if ((flags & ~kFlagFastMath) != 0) {
    TVM_FFI_THROW(ValueError) << kFormat << ": unknown flags 0x" << std::hex << flags;
  }
  data.fast_math = (flags & kFlagFastMath) != 0;
  uint32_t nkernels = r.U32("the kernel count");
  for (uint32_t i = 0; i < nkernels; ++i) {
    MetalKernelInfo k;
    k.name = r.Str("a kernel name");
    uint32_t nparams = r.U32("a kernel's parameter count");
    // Each parameter takes 9 bytes: refuse a count the remaining bytes cannot hold.
    if (nparams > r.left() / 9) {
      TVM_FFI_THROW(ValueError) << kFormat << ": truncated at the parameters of " << k.name << " ("
                                << nparams << " parameters)";
    }
    for (uint32_t j = 0; j < nparams; ++j) {
      MetalParamInfo p;
      uint8_t kind = r.U8("a parameter kind");
      if (kind > 1) {
        TVM_FFI_THROW(ValueError) << kFormat << ": kernel " << k.name << ": parameter " << j
                                  << " has unknown kind " << int(kind);
      }
      p.kind = static_cast<MetalParamKind>(kind);
      p.dtype.code = r.U8("a parameter type");
      p.dtype.bits = r.U8("a parameter type");
      p.dtype.lanes = r.U16("a parameter type");
      p.slot = r.U32("a parameter slot");
      k.params.push_back(p);
    }
    k.args_index = r.U32("the argument struct slot");
    k.args_bytes = r.U32("the argument struct size");
    k.threadgroup_static_bytes = r.U32("the threadgroup memory size");
    uint8_t dyn = r.U8("the dynamic threadgroup flag");
    if (dyn > 1) {
      TVM_FFI_THROW(ValueError) << kFormat << ": kernel " << k.name
                                << ": bad dynamic threadgroup flag " << int(dyn);
    }
    k.threadgroup_dynamic = dyn == 1;
    k.max_threads = r.U32("the thread count");
    data.kernels.push_back(std::move(k));
  }
  if (r.left() != 0) {
    TVM_FFI_THROW(ValueError) << kFormat << ": " << r.left()
                              << " trailing bytes after the last kernel";
  }
  Validate(data);
  return data;
}

tvm::ffi::Module CreateMetalModule(MetalModuleData data) {
  Validate(data);
  auto shared = std::make_shared<const MetalModuleData>(std::move(data));
  return tvm::ffi::Module(tvm::ffi::make_object<MetalModuleObj>(std::move(shared)));
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("ffi.Module.load_from_bytes.tessel_metal",
           [](const tvm::ffi::Bytes& bytes) {
             return CreateMetalModule(ParseMetalModuleBytes(bytes.data(), bytes.size()));
           })
      // The kernel table as {name, params: [[kind, dtype, slot]], args_index, args_bytes,
      // threadgroup_static_bytes, threadgroup_dynamic, max_threads} maps plus the module's
      // msl_version and fast_math, for tests and tools that inspect a library without Metal.
      .def("tessel.runtime.metal_module_info", [](const tvm::ffi::Bytes& bytes) {
        MetalModuleData data = ParseMetalModuleBytes(bytes.data(), bytes.size());
        tvm::ffi::Array<tvm::ffi::Any> kernels;
        for (const MetalKernelInfo& k : data.kernels) {
          tvm::ffi::Array<tvm::ffi::Any> params;
          for (const MetalParamInfo& p : k.params) {
            tvm::ffi::Array<tvm::ffi::Any> entry;
            entry.push_back(
                tvm::ffi::String(p.kind == MetalParamKind::kBuffer ? "buffer" : "scalar"));
            entry.push_back(tvm::ffi::String(DTypeName(p.dtype)));
            entry.push_back(static_cast<int64_t>(p.slot));
            params.push_back(entry);
          }
          tvm::ffi::Map<tvm::ffi::String, tvm::ffi::Any> m;
          m.Set("name", tvm::ffi::String(k.name));
          m.Set("params", params);
          m.Set("args_index", static_cast<int64_t>(k.args_index));
          m.Set("args_bytes", static_cast<int64_t>(k.args_bytes));
          m.Set("threadgroup_static_bytes", static_cast<int64_t>(k.threadgroup_static_bytes));
          m.Set("threadgroup_dynamic", k.threadgroup_dynamic);
          m.Set("max_threads", static_cast<int64_t>(k.max_threads));
          kernels.push_back(m);
        }
        tvm::ffi::Map<tvm::ffi::String, tvm::ffi::Any> out;
        out.Set("msl_version", tvm::ffi::String(data.msl_version));
        out.Set("fast_math", data.fast_math);
        out.Set("kernels", kernels);
        return out;
      });
}

}  // namespace runtime
}  // namespace tessel
