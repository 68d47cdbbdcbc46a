// CompileCUDA (compile_cuda.h): NVRTC through dlopen, nvcc as the fallback.
#include <dlfcn.h>
#include <tessel/codegen/compile_cuda.h>
#include <tessel/runtime/cuda_driver.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace tessel {
namespace codegen {

namespace fs = std::filesystem;

namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// The NVRTC entry points tessel uses (their C ABI: nvrtcResult is an int enum, nvrtcProgram a
// pointer).
struct Nvrtc {
  using Program = void*;
  int (*CreateProgram)(Program*, const char*, const char*, int, const char* const*,
                       const char* const*) = nullptr;
  int (*CompileProgram)(Program, int, const char* const*) = nullptr;
  int (*GetProgramLogSize)(Program, size_t*) = nullptr;
  int (*GetProgramLog)(Program, char*) = nullptr;
  int (*GetCUBINSize)(Program, size_t*) = nullptr;
  int (*GetCUBIN)(Program, char*) = nullptr;
  int (*GetPTXSize)(Program, size_t*) = nullptr;
  int (*GetPTX)(Program, char*) = nullptr;
  int (*DestroyProgram)(Program*) = nullptr;
  const char* (*GetErrorString)(int) = nullptr;
  int (*Version)(int*, int*) = nullptr;
  std::string path;
  std::string error;  // why it did not load ("" when loaded)
};

const Nvrtc& LoadNvrtc() {
  static Nvrtc nvrtc;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* lib = Env("TESSEL_NVRTC_LIBRARY")) {
      candidates.push_back(lib);
    } else {
      std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
      candidates = names;
      std::vector<std::string> dirs;
      if (const char* home = Env("CUDA_HOME")) dirs.push_back(std::string(home) + "/lib64");
      dirs.push_back("/usr/local/cuda/lib64");
      for (const std::string& d : dirs) {
        for (const std::string& n : names) candidates.push_back(d + "/" + n);
      }
    }
    void* handle = nullptr;
    std::string tried;
    for (const std::string& c : candidates) {
      handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        nvrtc.path = c;
        break;
      }
      tried += (tried.empty() ? "" : ", ") + c;
    }
    if (!handle) {
      nvrtc.error = "NVRTC not found (tried " + tried + ")";
      return;
    }
    auto sym = [&](const char* name, auto** fn) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(handle, name));
      if (!*fn && nvrtc.error.empty()) {
        nvrtc.error = nvrtc.path + " lacks " + name;
      }
    };
    sym("nvrtcCreateProgram", &nvrtc.CreateProgram);
    sym("nvrtcCompileProgram", &nvrtc.CompileProgram);
    sym("nvrtcGetProgramLogSize", &nvrtc.GetProgramLogSize);
    sym("nvrtcGetProgramLog", &nvrtc.GetProgramLog);
    sym("nvrtcGetCUBINSize", &nvrtc.GetCUBINSize);
    sym("nvrtcGetCUBIN", &nvrtc.GetCUBIN);
    sym("nvrtcGetPTXSize", &nvrtc.GetPTXSize);
    sym("nvrtcGetPTX", &nvrtc.GetPTX);
    sym("nvrtcDestroyProgram", &nvrtc.DestroyProgram);
    sym("nvrtcGetErrorString", &nvrtc.GetErrorString);
    sym("nvrtcVersion", &nvrtc.Version);
  });
  return nvrtc;
}

bool IsExecutable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

// nvcc's path, or "" when there is none.
std::string FindNvcc() {
  if (const char* n = Env("TESSEL_NVCC")) return n;
  if (const char* path = Env("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      if (!dir.empty() && IsExecutable(dir + "/nvcc")) return dir + "/nvcc";
    }
  }
  if (IsExecutable("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "";
}

std::string ChosenCompiler(const CUDACompileOptions& options) {
  std::string c = options.compiler;
  if (c.empty()) {
    if (const char* e = Env("TESSEL_CUDA_COMPILER")) c = e;
  }
  if (!c.empty() && c != "nvrtc" && c != "nvcc") {
    TVM_FFI_THROW(ValueError) << "compile CUDA: unknown compiler '" << c
                              << "' (expected nvrtc or nvcc; from the option or "
                                 "TESSEL_CUDA_COMPILER)";
  }
  if (c.empty()) c = LoadNvrtc().error.empty() ? "nvrtc" : "nvcc";
  return c;
}

void CheckArch(const std::string& arch) {
  static const std::regex re("sm_[0-9]+[a-z]?");
  if (!std::regex_match(arch, re)) {
    TVM_FFI_THROW(ValueError) << "compile CUDA: bad architecture '" << arch
                              << "' (expected sm_<digits>[letter], e.g. sm_90)";
  }
}

// The compiler's log, then every generated line it names, quoted.
std::string DescribeError(const std::string& source, const std::string& log) {
  std::vector<std::string> lines;
  std::stringstream ss(source);
  std::string l;
  while (std::getline(ss, l)) lines.push_back(l);
  std::ostringstream os;
  os << log;
  if (!log.empty() && log.back() != '\n') os << "\n";
  static const std::regex where("kernel\\.cu\\(([0-9]+)\\)");
  std::set<long> seen;
  bool header = false;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), where); it != std::sregex_iterator();
       ++it) {
    long n = std::stol((*it)[1].str());
    if (n < 1 || n > static_cast<long>(lines.size()) || !seen.insert(n).second) continue;
    if (!header) {
      os << "generated lines named above:\n";
      header = true;
    }
    os << "  kernel.cu(" << n << "): " << lines[n - 1] << "\n";
  }
  return os.str();
}

std::vector<std::string> IncludeFlags() {
  std::string inc = CUDAIncludeDir();
  std::vector<std::string> flags = {"-I" + inc};
  // CUDA 13 keeps libcu++ (cuda/std/...) under include/cccl; nvcc adds it itself, NVRTC does not.
  if (fs::exists(inc + "/cccl")) flags.push_back("-I" + inc + "/cccl");
  return flags;
}

// The cubin of `source` for `arch` (sm_XX), or with `ptx` its PTX for the virtual compute_XX.
std::string CompileNvrtc(const std::string& source, const std::string& arch, std::string* log,
                         bool fast_math, bool ptx = false) {
  const Nvrtc& n = LoadNvrtc();
  if (!n.error.empty()) TVM_FFI_THROW(RuntimeError) << "compile CUDA: " << n.error;
  Nvrtc::Program prog = nullptr;
  int rc = n.CreateProgram(&prog, source.c_str(), "kernel.cu", 0, nullptr, nullptr);
  if (rc != 0) {
    TVM_FFI_THROW(RuntimeError) << "compile CUDA: nvrtcCreateProgram: " << n.GetErrorString(rc);
  }
  std::string target = ptx ? "compute_" + arch.substr(3) : arch;
  std::vector<std::string> opts = {"-arch=" + target, "-std=c++17"};
  if (fast_math) opts.push_back("--use_fast_math");
  for (const std::string& f : IncludeFlags()) opts.push_back(f);
  std::vector<const char*> copts;
  for (const std::string& o : opts) copts.push_back(o.c_str());
  rc = n.CompileProgram(prog, static_cast<int>(copts.size()), copts.data());
  size_t size = 0;
  std::string text;
  if (n.GetProgramLogSize(prog, &size) == 0 && size > 1) {
    text.resize(size);
    n.GetProgramLog(prog, &text[0]);
    text.resize(size - 1);
  }
  if (log) *log = text;
  if (rc != 0) {
    n.DestroyProgram(&prog);
    TVM_FFI_THROW(RuntimeError) << "compile CUDA (NVRTC " << n.path << ", " << arch
                                << "): " << n.GetErrorString(rc) << "\n"
                                << DescribeError(source, text);
  }
  std::string out;
  if (ptx) {
    if (n.GetPTXSize(prog, &size) == 0 && size > 1) {
      out.resize(size);
      n.GetPTX(prog, &out[0]);
      out.resize(size - 1);
    }
  } else if (n.GetCUBINSize(prog, &size) == 0) {
    out.resize(size);
    if (size) n.GetCUBIN(prog, &out[0]);
  }
  n.DestroyProgram(&prog);
  if (out.empty()) {
    TVM_FFI_THROW(RuntimeError) << "compile CUDA: NVRTC gave no " << (ptx ? "PTX" : "cubin")
                                << " for " << target;
  }
  return out;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string CompileNvcc(const std::string& source, const std::string& arch, std::string* log,
                        bool fast_math) {
  std::string nvcc = FindNvcc();
  if (nvcc.empty()) {
    TVM_FFI_THROW(RuntimeError) << "compile CUDA: neither NVRTC nor nvcc found ("
                                << LoadNvrtc().error
                                << "; nvcc: not in TESSEL_NVCC, PATH or /usr/local/cuda/bin)";
  }
  char tmpl[] = "/tmp/tessel-nvcc-XXXXXX";
  if (!mkdtemp(tmpl)) {
    TVM_FFI_THROW(RuntimeError) << "compile CUDA: cannot make a temporary folder";
  }
  fs::path dir(tmpl);
  {
    std::ofstream out(dir / "kernel.cu", std::ios::binary);
    out << source;
  }
  std::string cmd = "cd " + ShellQuote(dir.string()) + " && " + ShellQuote(nvcc) +
                    " -cubin -std=c++17 -arch=" + arch + (fast_math ? " --use_fast_math" : "") +
                    " -o kernel.cubin kernel.cu 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    fs::remove_all(dir);
    TVM_FFI_THROW(RuntimeError) << "compile CUDA: cannot run " << nvcc;
  }
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, got);
  int status = pclose(p);
  std::string cubin;
  if (fs::exists(dir / "kernel.cubin")) cubin = ReadFile(dir / "kernel.cubin");
  fs::remove_all(dir);
  if (log) *log = out;
  // A lost exit status (-1, SIGCHLD ignored) counts as success only with a cubin written.
  if ((status != 0 && status != -1) || cubin.empty()) {
    TVM_FFI_THROW(RuntimeError) << "compile CUDA (nvcc " << nvcc << ", " << arch
                                << "): exit status " << status << "\n"
                                << DescribeError(source, out);
  }
  return cubin;
}

}  // namespace

std::string CUDAIncludeDir() {
  if (const char* home = Env("CUDA_HOME")) return std::string(home) + "/include";
  return "/usr/local/cuda/include";
}

std::string CompileCUDA(const std::string& source, const std::string& arch, std::string* log,
                        const CUDACompileOptions& options) {
  CheckArch(arch);
  if (ChosenCompiler(options) == "nvrtc") return CompileNvrtc(source, arch, log, options.fast_math);
  return CompileNvcc(source, arch, log, options.fast_math);
}

std::string CUDACompilerIdentity(const CUDACompileOptions& options) {
  if (ChosenCompiler(options) == "nvrtc") {
    const Nvrtc& n = LoadNvrtc();
    if (!n.error.empty()) TVM_FFI_THROW(RuntimeError) << "compile CUDA: " << n.error;
    int major = 0, minor = 0;
    n.Version(&major, &minor);
    return "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + " " + n.path;
  }
  std::string nvcc = FindNvcc();
  if (nvcc.empty()) TVM_FFI_THROW(RuntimeError) << "compile CUDA: nvcc not found";
  // The binary's size and time stand in for its version: an upgrade in place changes them.
  std::error_code ec;
  auto size = fs::file_size(nvcc, ec);
  auto time = fs::last_write_time(nvcc, ec).time_since_epoch().count();
  return "nvcc " + nvcc + " " + std::to_string(size) + " " + std::to_string(time);
}

std::string CUDAArch(const target::Target& target) {
  std::string arch = target->GetAttr("arch");
  if (!arch.empty()) {
    CheckArch(arch);
    return arch;
  }
  if (runtime::cu::DeviceCount() > 0) {
    return "sm_" + std::to_string(runtime::cu::DeviceComputeCapability(0));
  }
  TVM_FFI_THROW(ValueError) << "target cuda: no -arch given and no GPU to ask";
  TVM_FFI_UNREACHABLE();
}

std::string CompileCUDAToPTX(const std::string& source, const std::string& arch) {
  CheckArch(arch);
  return CompileNvrtc(source, arch, nullptr, /*fast_math=*/false, /*ptx=*/true);
}

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("tessel.codegen.CompileCUDAToPTX",
                                        [](tvm::ffi::String source, tvm::ffi::String arch) {
                                          return tvm::ffi::String(CompileCUDAToPTX(source, arch));
                                        });
  tvm::ffi::reflection::GlobalDef().def(
      "tessel.codegen.CompileCUDA",
      [](tvm::ffi::String source, tvm::ffi::String arch, tvm::ffi::String compiler) {
        CUDACompileOptions o;
        o.compiler = compiler;
        std::string cubin = CompileCUDA(source, arch, nullptr, o);
        return tvm::ffi::Bytes(cubin.data(), cubin.size());
      });
}

}  // namespace codegen
}  // namespace tessel
