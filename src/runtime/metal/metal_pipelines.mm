// Compute pipelines of tessel_metal modules on Apple GPUs: the MSL of a module is compiled once per
// MTLDevice (newLibraryWithSource with the module's language version and math mode), each kernel's
// pipeline is made on its first launch, and both stay cached for the process.
//
// Two caches behind one mutex: by content (device registryID, MSL version, math mode, source) for
// compiled libraries, so that two module objects with the same MSL share one compile; and by
// module object (a weak_ptr proves the object is still the one cached at that address), so that a
// launch finds its pipeline without hashing the source. Compiling happens under the mutex: the
// first launch of a module blocks other threads' launches for the length of the compile.
//
// NOTE: written without a Mac; not compiled or run (docs/metal.md, "Testing on a Mac").
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "metal_apple.h"

namespace tessel {
namespace runtime {
namespace metal_apple {

namespace {

// The MTLLanguageVersion for the module's "2.4" .. "4.0", if this SDK, OS and device offer it.
MTLLanguageVersion LanguageVersion(const std::string& v, id<MTLDevice> device) {
  if (v == "2.4") {
    if (@available(macOS 12.0, iOS 15.0, *)) return MTLLanguageVersion2_4;
  } else if (v == "3.0") {
    if (@available(macOS 13.0, iOS 16.0, *)) return MTLLanguageVersion3_0;
  } else if (v == "3.1") {
    if (@available(macOS 14.0, iOS 17.0, *)) return MTLLanguageVersion3_1;
  } else if (v == "3.2") {
#if TESSEL_METAL_SDK_MACOS_15
    if (@available(macOS 15.0, iOS 18.0, *)) return MTLLanguageVersion3_2;
#endif
  } else if (v == "4.0") {
#if TESSEL_METAL_SDK_MACOS_26
    if (@available(macOS 26.0, iOS 26.0, *)) {
      if ([device supportsFamily:MTLGPUFamilyMetal4]) return MTLLanguageVersion4_0;
      TVM_FFI_THROW(RuntimeError) << "the module needs MSL 4.0, which " << ToStd(device.name)
                                  << " does not support (no MTLGPUFamilyMetal4)";
    }
#endif
  }
  TVM_FFI_THROW(RuntimeError) << "the module needs MSL " << v
                              << ", which this macOS or the SDK tessel was built with does not "
                                 "offer (2.4: macOS 12, 3.0: 13, 3.1: 14, 3.2: 15 and SDK 15, "
                                 "4.0: macOS 26 and SDK 26)";
}

// Safe math (IEEE inf/NaN kept, precise single-precision functions) unless the module asks for
// fast math. mathMode replaces fastMathEnabled from macOS 15 on; fastMathEnabled = NO sets the
// same pair on older systems.
void SetMathMode(MTLCompileOptions* options, bool fast) {
#if TESSEL_METAL_SDK_MACOS_15
  if (@available(macOS 15.0, iOS 18.0, *)) {
    options.mathMode = fast ? MTLMathModeFast : MTLMathModeSafe;
    options.mathFloatingPointFunctions =
        fast ? MTLMathFloatingPointFunctionsFast : MTLMathFloatingPointFunctionsPrecise;
    return;
  }
#endif
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
  options.fastMathEnabled = fast ? YES : NO;
#pragma clang diagnostic pop
}

std::string KernelNames(const MetalModuleData& m) {
  std::string names;
  for (const MetalKernelInfo& k : m.kernels) names += (names.empty() ? "" : ", ") + k.name;
  return names;
}

id<MTLLibrary> CompileLibrary(const MetalModuleData& m, id<MTLDevice> device) {
  MTLCompileOptions* options = [[MTLCompileOptions alloc] init];
  options.languageVersion = LanguageVersion(m.msl_version, device);
  SetMathMode(options, m.fast_math);
  NSString* source = [[NSString alloc] initWithBytes:m.source.data()
                                              length:m.source.size()
                                            encoding:NSUTF8StringEncoding];
  if (source == nil) {
    TVM_FFI_THROW(ValueError) << "the MSL of kernels " << KernelNames(m) << " is not UTF-8";
  }
  NSError* error = nil;
  id<MTLLibrary> library = [device newLibraryWithSource:source options:options error:&error];
  if (library == nil) {
    std::string message = error != nil ? ToStd(error.localizedDescription) : "no message";
    std::string quoted = QuoteSourceLines(message, m.source);
    TVM_FFI_THROW(RuntimeError) << "Metal could not compile the MSL of kernels " << KernelNames(m)
                                << " (MSL " << m.msl_version << ", "
                                << (m.fast_math ? "fast" : "safe") << " math) on "
                                << ToStd(device.name) << ":\n"
                                << message << (quoted.empty() ? "" : "\nthe MSL lines named:\n")
                                << quoted;
  }
  // A non-nil error with a library holds warnings only; they are not reported.
  return library;
}

id<MTLComputePipelineState> MakePipeline(id<MTLLibrary> library, const std::string& name,
                                         id<MTLDevice> device) {
  NSString* ns_name = [NSString stringWithUTF8String:name.c_str()];
  id<MTLFunction> function = ns_name != nil ? [library newFunctionWithName:ns_name] : nil;
  if (function == nil) {
    TVM_FFI_THROW(RuntimeError) << "kernel " << name
                                << ": no such kernel function in the compiled MSL (the module's "
                                   "kernel table and its source disagree)";
  }
  NSError* error = nil;
  id<MTLComputePipelineState> pipeline = [device newComputePipelineStateWithFunction:function
                                                                               error:&error];
  if (pipeline == nil) {
    TVM_FFI_THROW(RuntimeError) << "kernel " << name << ": Metal could not make its compute "
                                << "pipeline on " << ToStd(device.name) << ": "
                                << (error != nil ? ToStd(error.localizedDescription)
                                                 : "no message");
  }
  return pipeline;
}

class PipelineCache {
 public:
  id<MTLComputePipelineState> Get(const MetalLaunchPlan& plan, id<MTLDevice> device) {
    const MetalModuleData* module = plan.module.get();
    const uint64_t registry = device.registryID;
    std::lock_guard<std::mutex> lock(mu_);
    ModuleEntry& entry = modules_[{module, registry}];
    if (entry.module.expired()) {  // new, or an earlier module that lived at this address
      entry = ModuleEntry{plan.module, LibraryFor(*module, device, registry), {}};
      entry.pipelines.resize(module->kernels.size());
      SweepExpired();
    }
    id<MTLComputePipelineState> pipeline = entry.pipelines.at(plan.kernel);
    if (pipeline == nil) {
      const std::string& name = plan.info().name;
      Library& library = *entry.library;
      auto it = library.pipelines.find(name);
      if (it == library.pipelines.end()) {
        it = library.pipelines.emplace(name, MakePipeline(library.library, name, device)).first;
      }
      pipeline = it->second;
      entry.pipelines[plan.kernel] = pipeline;
    }
    return pipeline;
  }

 private:
  struct Library {
    id<MTLLibrary> library;
    std::unordered_map<std::string, id<MTLComputePipelineState>> pipelines;  // by kernel name
  };
  struct ModuleEntry {
    std::weak_ptr<const MetalModuleData> module;
    std::shared_ptr<Library> library;
    std::vector<id<MTLComputePipelineState>> pipelines;  // by kernel index; nil until made
  };
  using LibraryKey = std::tuple<uint64_t, std::string, bool, std::string>;

  std::shared_ptr<Library> LibraryFor(const MetalModuleData& m, id<MTLDevice> device,
                                      uint64_t registry) {
    LibraryKey key{registry, m.msl_version, m.fast_math, m.source};
    auto it = libraries_.find(key);
    if (it != libraries_.end()) return it->second;
    auto library = std::make_shared<Library>();
    library->library = CompileLibrary(m, device);  // throws: nothing is cached
    libraries_.emplace(std::move(key), library);
    return library;
  }

  // Drops entries of modules that no longer exist (their libraries stay cached by content).
  void SweepExpired() {
    if (modules_.size() < sweep_at_) return;
    for (auto it = modules_.begin(); it != modules_.end();) {
      it = it->second.module.expired() ? modules_.erase(it) : std::next(it);
    }
    sweep_at_ = 2 * modules_.size() + 16;
  }

  std::mutex mu_;
  std::map<std::pair<const MetalModuleData*, uint64_t>, ModuleEntry> modules_;
  std::map<LibraryKey, std::shared_ptr<Library>> libraries_;
  size_t sweep_at_ = 16;
};

}  // namespace

std::string QuoteSourceLines(const std::string& message, const std::string& source) {
  static const std::string kTag = "program_source:";
  std::vector<size_t> lines;
  for (size_t at = message.find(kTag); at != std::string::npos; at = message.find(kTag, at + 1)) {
    size_t p = at + kTag.size();
    size_t line = 0;
    size_t digits = 0;
    while (p < message.size() && message[p] >= '0' && message[p] <= '9' && digits < 9) {
      line = line * 10 + static_cast<size_t>(message[p++] - '0');
      ++digits;
    }
    if (digits == 0 || p >= message.size() || message[p] != ':' || line == 0) continue;
    bool seen = false;
    for (size_t l : lines) seen = seen || l == line;
    if (!seen && lines.size() < 8) lines.push_back(line);
  }
  std::vector<std::pair<size_t, size_t>> spans;  // [begin, end) of each source line
  for (size_t begin = 0; begin <= source.size();) {
    size_t end = source.find('\n', begin);
    if (end == std::string::npos) end = source.size();
    spans.emplace_back(begin, end);
    begin = end + 1;
  }
  std::ostringstream os;
  for (size_t line : lines) {
    if (line > spans.size()) continue;
    const auto& span = spans[line - 1];
    os << "  " << line << " | " << source.substr(span.first, span.second - span.first) << "\n";
  }
  return os.str();
}

id<MTLComputePipelineState> GetPipeline(const MetalLaunchPlan& plan, id<MTLDevice> device) {
  static PipelineCache* cache = new PipelineCache();  // never destroyed: launches may run at exit
  return cache->Get(plan, device);
}

}  // namespace metal_apple
}  // namespace runtime
}  // namespace tessel
