// The table of environment switches (see env.h). Add a switch here before reading it anywhere.
#include <tessel/support/env.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

namespace tessel {
namespace support {

namespace {

#ifdef NDEBUG
constexpr char kVerifyEachDefault[] = "0";
#else
constexpr char kVerifyEachDefault[] = "1";
#endif

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

const std::vector<EnvVarInfo>& EnvVars() {
  static const std::vector<EnvVarInfo> vars = {
      {"TESSEL_DUMP_IR", "",
       "directory: every pass writes the IR before and after it there, as "
       "NNN_<pass>_before.py / NNN_<pass>_after.py (NNN: the pass's position in the run)"},
      {"TESSEL_DUMP_IR_CHANGED_ONLY", "0",
       "1: with TESSEL_DUMP_IR, write the two files of a pass only when it changed the IR"},
      {"TESSEL_PASS_TIMING", "0",
       "1: after each top-level pass or pipeline, print the time of every pass to stderr"},
      {"TESSEL_VERIFY_EACH_PASS", kVerifyEachDefault,
       "1: run VerifyWellFormed on the input of a pipeline and after every pass (default 1 in "
       "debug builds, 0 otherwise)"},
      {"TESSEL_LIBRARY_PATH", "",
       "the libtessel file, or a folder holding it, that the Python package loads first"},
      {"TESSEL_CC", "",
       "the C compiler command for generated code (split on blanks); unset: $CC, else cc"},
      {"CC", "cc", "the C compiler command when TESSEL_CC is unset (the make convention)"},
      {"TESSEL_TVM_FFI_INCLUDE", "",
       "the tvm-ffi header folder for compiling generated C (default: the include folder of the "
       "loaded libtvm_ffi's package)"},
      {"TESSEL_CUDA_DRIVER_LIBRARY", "libcuda.so.1",
       "the CUDA driver library that libtessel_runtime opens (dlopen) on the first kernel load or "
       "launch; read by the runtime directly"},
      {"TESSEL_MAX_SOURCE_LINES", "1000000",
       "the most lines the text parser reads from one source (a larger text is a ValueError "
       "before any parsing); 10^6 lines take about 30 s and 2 GiB"},
      {"TESSEL_CACHE_DIR", "",
       "folder of compiled kernel libraries, keyed by a hash of their C source and compiler "
       "command (default: <temp dir>/tessel-cache-<uid>)"},
  };
  return vars;
}

std::string GetEnv(const std::string& name) {
  const auto& vars = EnvVars();
  auto it =
      std::find_if(vars.begin(), vars.end(), [&](const EnvVarInfo& v) { return name == v.name; });
  if (it == vars.end()) {
    TVM_FFI_THROW(InternalError) << "environment switch " << name
                                 << " is not registered in src/support/env.cc";
  }
  const char* value = std::getenv(name.c_str());
  if (value == nullptr || value[0] == '\0') return it->default_value;
  return value;
}

bool GetEnvFlag(const std::string& name) {
  std::string value = Lower(GetEnv(name));
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  TVM_FFI_THROW(ValueError) << "environment variable " << name << "=" << GetEnv(name)
                            << " is not a flag: use 1 or 0";
  TVM_FFI_UNREACHABLE();
}

std::string FormatEnvVars() {
  std::ostringstream os;
  for (const EnvVarInfo& v : EnvVars()) {
    os << v.name << " (default: " << (v.default_value[0] ? v.default_value : "unset") << ")";
    const char* now = std::getenv(v.name);
    if (now != nullptr && now[0] != '\0') os << " [set: " << now << "]";
    os << "\n    " << v.doc << "\n";
  }
  return os.str();
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      // One map per switch: name, default, doc, and value (the effective value).
      .def("tessel.support.ListEnvVars",
           []() {
             tvm::ffi::Array<tvm::ffi::Map<tvm::ffi::String, tvm::ffi::String>> out;
             for (const EnvVarInfo& v : EnvVars()) {
               tvm::ffi::Map<tvm::ffi::String, tvm::ffi::String> m;
               m.Set("name", v.name);
               m.Set("default", v.default_value);
               m.Set("doc", v.doc);
               m.Set("value", GetEnv(v.name));
               out.push_back(m);
             }
             return out;
           })
      .def("tessel.support.FormatEnvVars", []() { return tvm::ffi::String(FormatEnvVars()); });
}

}  // namespace support
}  // namespace tessel
