// The tessel_cuda module kind: its bytes format, the ModuleObj, and the loader registered for
// tvm-ffi's library binaries (format in include/tessel/runtime/cuda_module.h).
#include "tessel/runtime/cuda_module.h"

#include <tvm/ffi/error.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstring>
#include <set>
#include <sstream>

#include "cuda_launcher.h"
#include "runtime/byte_io.h"

namespace tessel {
namespace runtime {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'L', 'C', 'U', 'D', 'A', '\0'};
constexpr uint32_t kFlagPDL = 1u << 0;
constexpr uint32_t kFlagGridSync = 1u << 1;

bool SupportedArgType(DLDataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLOpaqueHandle:
      return true;
    case kDLInt:
    case kDLUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64 ||
             (t.code == kDLUInt && t.bits == 1);
    case kDLBool:
      return t.bits == 8 || t.bits == 1;
    case kDLFloat:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLBfloat:
      return t.bits == 16;
    default:
      return false;
  }
}

void ValidateTable(const std::vector<CUDAKernelInfo>& kernels) {
  std::set<std::string> names;
  for (const CUDAKernelInfo& k : kernels) {
    if (k.name.empty()) TVM_FFI_THROW(ValueError) << "tessel_cuda module: a kernel has no name";
    if (!names.insert(k.name).second) {
      TVM_FFI_THROW(ValueError) << "tessel_cuda module: kernel " << k.name << " listed twice";
    }
    for (size_t i = 0; i < k.arg_types.size(); ++i) {
      DLDataType t = k.arg_types[i];
      if (!SupportedArgType(t)) {
        TVM_FFI_THROW(ValueError) << "tessel_cuda module: kernel " << k.name << ": parameter " << i
                                  << " has unsupported type (code " << int(t.code) << ", bits "
                                  << int(t.bits) << ", lanes " << t.lanes << ")";
      }
    }
    uint32_t last = 0;
    for (size_t m = 0; m < k.tensor_maps.size(); ++m) {
      const CUDATensorMapParam& t = k.tensor_maps[m];
      if (t.param >= k.arg_types.size() || (m > 0 && t.param <= last) ||
          k.arg_types[t.param].code != kDLOpaqueHandle) {
        TVM_FFI_THROW(ValueError) << "tessel_cuda module: kernel " << k.name << ": tensor map of "
                                  << t.tensor << " names parameter " << t.param
                                  << ", not a later handle parameter";
      }
      last = t.param;
      if (t.box.empty() || t.box.size() > 5 ||
          (t.swizzle != 0 && t.swizzle != 32 && t.swizzle != 64 && t.swizzle != 128)) {
        TVM_FFI_THROW(ValueError) << "tessel_cuda module: kernel " << k.name << ": tensor map of "
                                  << t.tensor << " has rank " << t.box.size() << " and swizzle "
                                  << t.swizzle << " (rank 1..5, swizzle 0/32/64/128)";
      }
    }
    if (!k.aligned_variant.empty()) {
      const CUDAKernelInfo* v = nullptr;
      for (const CUDAKernelInfo& o : kernels) {
        if (o.name == k.aligned_variant) v = &o;
      }
      // The launch converts the arguments by this kernel's table entry and runs the variant
      // with them: it must take the same parameters, tensor maps included.
      CUDAKernelInfo same;
      if (v != nullptr) {
        same = *v;
        same.name = k.name;
        same.aligned_variant = k.aligned_variant;
        same.aligned_params = k.aligned_params;
      }
      if (v == nullptr || v == &k || !v->aligned_variant.empty() || same != k ||
          k.aligned_params.empty()) {
        TVM_FFI_THROW(ValueError) << "tessel_cuda module: kernel " << k.name
                                  << ": its aligned variant " << k.aligned_variant
                                  << " is not another kernel of the table with the same "
                                     "parameters and launch attributes and no variant of its "
                                     "own, or no parameter is listed";
      }
    }
    last = 0;
    for (size_t a = 0; a < k.aligned_params.size(); ++a) {
      auto [param, bytes] = k.aligned_params[a];
      bool map = false;
      for (const CUDATensorMapParam& t : k.tensor_maps) map = map || t.param == param;
      if (k.aligned_variant.empty() || param >= k.arg_types.size() || (a > 0 && param <= last) ||
          k.arg_types[param].code != kDLOpaqueHandle || map ||
          (bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16)) {
        TVM_FFI_THROW(ValueError) << "tessel_cuda module: kernel " << k.name
                                  << ": aligned parameter " << param << " (" << bytes
                                  << " bytes) is not a later pointer parameter aligned to 2, 4, "
                                     "8 or 16 bytes, or the kernel has no aligned variant";
      }
      last = param;
    }
    const auto& c = k.cluster_dims;
    bool none = c[0] == 0 && c[1] == 0 && c[2] == 0;
    if (!none && (c[0] == 0 || c[1] == 0 || c[2] == 0)) {
      TVM_FFI_THROW(ValueError) << "tessel_cuda module: kernel " << k.name << ": cluster dims ("
                                << c[0] << ", " << c[1] << ", " << c[2]
                                << ") mix 0 and non-zero (all 0 = no cluster)";
    }
  }
}

class CUDAModuleObj final : public tvm::ffi::ModuleObj {
 public:
  explicit CUDAModuleObj(std::shared_ptr<CUDALauncher> launcher) : launcher_(std::move(launcher)) {}

  const char* kind() const final { return kCUDAModuleKind; }

  int GetPropertyMask() const final {
    return tvm::ffi::Module::kBinarySerializable | tvm::ffi::Module::kRunnable;
  }

  tvm::ffi::Optional<tvm::ffi::Function> GetFunction(const tvm::ffi::String& name) final {
    const auto& kernels = launcher_->data().kernels;
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (kernels[i].name == name.c_str()) return launcher_->LaunchFunction(i);
    }
    return std::nullopt;
  }

  tvm::ffi::Bytes SaveToBytes() const final { return SaveCUDAModuleBytes(launcher_->data()); }

  tvm::ffi::String InspectSource(const tvm::ffi::String& format) const final {
    if (format == "cubin" || format == "ptx") return tvm::ffi::String(launcher_->data().image);
    return tvm::ffi::String(launcher_->data().source);
  }

 private:
  std::shared_ptr<CUDALauncher> launcher_;
};

}  // namespace

bool CUDATensorMapParam::operator==(const CUDATensorMapParam& o) const {
  return param == o.param && dtype.code == o.dtype.code && dtype.bits == o.dtype.bits &&
         dtype.lanes == o.dtype.lanes && swizzle == o.swizzle && box == o.box && tensor == o.tensor;
}

bool CUDAKernelInfo::operator==(const CUDAKernelInfo& o) const {
  if (name != o.name || use_pdl != o.use_pdl || use_grid_sync != o.use_grid_sync ||
      cluster_dims != o.cluster_dims || arg_types.size() != o.arg_types.size() ||
      tensor_maps != o.tensor_maps || aligned_variant != o.aligned_variant ||
      aligned_params != o.aligned_params) {
    return false;
  }
  for (size_t i = 0; i < arg_types.size(); ++i) {
    const DLDataType& a = arg_types[i];
    const DLDataType& b = o.arg_types[i];
    if (a.code != b.code || a.bits != b.bits || a.lanes != b.lanes) return false;
  }
  return true;
}

tvm::ffi::Bytes SaveCUDAModuleBytes(const CUDAModuleData& data) {
  ValidateTable(data.kernels);
  ByteWriter w;
  w.Raw(kMagic, sizeof(kMagic));
  w.U32(kCUDAModuleFormatVersion);
  w.Str(data.image);
  w.Str(data.arch);
  w.Str(data.source);
  w.U32(static_cast<uint32_t>(data.kernels.size()));
  for (const CUDAKernelInfo& k : data.kernels) {
    w.Str(k.name);
    w.U32(static_cast<uint32_t>(k.arg_types.size()));
    for (DLDataType t : k.arg_types) {
      w.U8(t.code);
      w.U8(t.bits);
      w.U16(t.lanes);
    }
    w.U32((k.use_pdl ? kFlagPDL : 0) | (k.use_grid_sync ? kFlagGridSync : 0));
    for (uint32_t c : k.cluster_dims) w.U32(c);
    w.U32(static_cast<uint32_t>(k.tensor_maps.size()));
    for (const CUDATensorMapParam& t : k.tensor_maps) {
      w.U32(t.param);
      w.U8(t.dtype.code);
      w.U8(t.dtype.bits);
      w.U16(t.dtype.lanes);
      w.U32(t.swizzle);
      w.U32(static_cast<uint32_t>(t.box.size()));
      for (uint32_t b : t.box) w.U32(b);
      w.Str(t.tensor);
    }
    w.Str(k.aligned_variant);
    w.U32(static_cast<uint32_t>(k.aligned_params.size()));
    for (auto [param, bytes] : k.aligned_params) {
      w.U32(param);
      w.U32(bytes);
    }
  }
  return tvm::ffi::Bytes(w.out());
}

tvm::ffi::Bytes SaveCUDAModuleBytes(const std::string& image,
                                    const std::vector<CUDAKernelInfo>& kernels) {
  CUDAModuleData data;
  data.image = image;
  data.kernels = kernels;
  return SaveCUDAModuleBytes(data);
}

CUDAModuleData ParseCUDAModuleBytes(const char* bytes, size_t size) {
  ByteReader r("tessel_cuda module bytes", bytes, size);
  char magic[sizeof(kMagic)];
  r.Raw(magic, sizeof(magic), "the magic");
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    TVM_FFI_THROW(ValueError) << "tessel_cuda module bytes: bad magic (not a tessel_cuda module)";
  }
  uint32_t version = r.U32("the version");
  if (version != kCUDAModuleFormatVersion) {
    TVM_FFI_THROW(ValueError) << "tessel_cuda module bytes: format version " << version
                              << " is not supported (this runtime reads version "
                              << kCUDAModuleFormatVersion << "; rebuild the library)";
  }
  CUDAModuleData data;
  data.image = r.Str("the image");
  data.arch = r.Str("the arch");
  data.source = r.Str("the source");
  uint32_t nkernels = r.U32("the kernel count");
  for (uint32_t i = 0; i < nkernels; ++i) {
    CUDAKernelInfo k;
    k.name = r.Str("a kernel name");
    uint32_t nargs = r.U32("a kernel's parameter count");
    // Each parameter takes 4 bytes: refuse a count the remaining bytes cannot hold before
    // reserving.
    if (nargs > r.left() / 4) {
      TVM_FFI_THROW(ValueError) << "tessel_cuda module bytes: truncated at the parameter types of "
                                << k.name << " (" << nargs << " parameters)";
    }
    k.arg_types.reserve(nargs);
    for (uint32_t j = 0; j < nargs; ++j) {
      DLDataType t;
      t.code = r.U8("a parameter type");
      t.bits = r.U8("a parameter type");
      t.lanes = r.U16("a parameter type");
      k.arg_types.push_back(t);
    }
    uint32_t flags = r.U32("kernel flags");
    if ((flags & ~(kFlagPDL | kFlagGridSync)) != 0) {
      TVM_FFI_THROW(ValueError) << "tessel_cuda module bytes: kernel " << k.name
                                << " has unknown flags 0x" << std::hex << flags;
    }
    k.use_pdl = (flags & kFlagPDL) != 0;
    k.use_grid_sync = (flags & kFlagGridSync) != 0;
    for (uint32_t& c : k.cluster_dims) c = r.U32("cluster dims");
    uint32_t nmaps = r.U32("the tensor-map count");
    if (nmaps > k.arg_types.size()) {
      TVM_FFI_THROW(ValueError) << "tessel_cuda module bytes: kernel " << k.name << " lists "
                                << nmaps << " tensor maps for " << k.arg_types.size()
                                << " parameters";
    }
    for (uint32_t j = 0; j < nmaps; ++j) {
      CUDATensorMapParam t;
      t.param = r.U32("a tensor map");
      t.dtype.code = r.U8("a tensor map");
      t.dtype.bits = r.U8("a tensor map");
      t.dtype.lanes = r.U16("a tensor map");
      t.swizzle = r.U32("a tensor map");
      uint32_t rank = r.U32("a tensor map");
      if (rank > 5) {
        TVM_FFI_THROW(ValueError) << "tessel_cuda module bytes: kernel " << k.name
                                  << ": a tensor map of rank " << rank << " (at most 5)";
      }
      for (uint32_t d = 0; d < rank; ++d) t.box.push_back(r.U32("a tensor map's box"));
      t.tensor = r.Str("a tensor map's tensor name");
      k.tensor_maps.push_back(std::move(t));
    }
    k.aligned_variant = r.Str("an aligned variant's name");
    uint32_t nalign = r.U32("the aligned parameter count");
    if (nalign > k.arg_types.size()) {
      TVM_FFI_THROW(ValueError) << "tessel_cuda module bytes: kernel " << k.name << " lists "
                                << nalign << " aligned parameters for " << k.arg_types.size()
                                << " parameters";
    }
    for (uint32_t j = 0; j < nalign; ++j) {
      uint32_t param = r.U32("an aligned parameter");
      k.aligned_params.emplace_back(param, r.U32("an aligned parameter"));
    }
    data.kernels.push_back(std::move(k));
  }
  if (r.left() != 0) {
    TVM_FFI_THROW(ValueError) << "tessel_cuda module bytes: " << r.left()
                              << " trailing bytes after the last kernel";
  }
  ValidateTable(data.kernels);
  return data;
}

tvm::ffi::Module CreateCUDAModule(CUDAModuleData data) {
  ValidateTable(data.kernels);
  auto launcher = std::make_shared<CUDALauncher>(std::move(data));
  return tvm::ffi::Module(tvm::ffi::make_object<CUDAModuleObj>(std::move(launcher)));
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("ffi.Module.load_from_bytes.tessel_cuda",
           [](const tvm::ffi::Bytes& bytes) {
             return CreateCUDAModule(ParseCUDAModuleBytes(bytes.data(), bytes.size()));
           })
      // The kernel table as [name, nargs, use_pdl, use_grid_sync, [cx, cy, cz], aligned_variant,
      // [[param, bytes]...]] lists, for tests and tools that inspect a module without a GPU.
      .def("tessel.runtime.cuda_module_kernels", [](const tvm::ffi::Bytes& bytes) {
        CUDAModuleData data = ParseCUDAModuleBytes(bytes.data(), bytes.size());
        tvm::ffi::Array<tvm::ffi::Any> out;
        for (const CUDAKernelInfo& k : data.kernels) {
          tvm::ffi::Array<tvm::ffi::Any> aligned;
          for (auto [param, bytes] : k.aligned_params) {
            aligned.push_back(tvm::ffi::Array<int64_t>{param, bytes});
          }
          out.push_back(tvm::ffi::Array<tvm::ffi::Any>{
              tvm::ffi::String(k.name), static_cast<int64_t>(k.arg_types.size()), k.use_pdl,
              k.use_grid_sync,
              tvm::ffi::Array<int64_t>{k.cluster_dims[0], k.cluster_dims[1], k.cluster_dims[2]},
              tvm::ffi::String(k.aligned_variant), aligned});
        }
        return out;
      });
}

}  // namespace runtime
}  // namespace tessel
