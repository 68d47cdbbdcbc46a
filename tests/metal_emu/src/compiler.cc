#include "compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <tvm/ffi/error.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <unordered_map>

extern char** environ;

namespace tessel {
namespace metal_emu {

namespace {

constexpr const char* kFileName = "kernel.metal";
constexpr size_t kMaxQuotedLog = 6000;

std::vector<std::string> CompilerCommand() {
  const char* env = std::getenv("TESSEL_METAL_EMU_CXX");
  std::string cmd = env != nullptr && *env ? env : TESSEL_METAL_EMU_DEFAULT_CXX;
  std::vector<std::string> words;
  std::istringstream is(cmd);
  for (std::string w; is >> w;) words.push_back(w);
  return words;
}

std::vector<std::string> CompilerFlags() {
  // -O1: fast to compile, and it keeps locals in registers across the fiber switches like -O2
  // would. -g1: line tables, so a fault names its MSL line. No strict aliasing: MSL code
  // reinterprets buffers freely (packed vectors over float arrays).
  return {"-x",
          "c++",
          "-std=c++17",
          "-O1",
          "-g1",
          "-fPIC",
          "-shared",
          "-fvisibility=hidden",
          "-fno-strict-aliasing",
          "-fno-exceptions",
          "-Wno-attributes",
          "-I" TESSEL_METAL_EMU_INCLUDE_DIR};
}

// The private directory for this process's files.
class WorkDir {
 public:
  WorkDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tessel-metal-emu-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr)
      TVM_FFI_THROW(RuntimeError) << "metal_emu: cannot create " << pattern << ": "
                                  << std::strerror(errno);
    path_ = buf.data();
    keep_ = std::getenv("TESSEL_METAL_EMU_KEEP") != nullptr;
    if (keep_)
      std::fprintf(stderr, "metal_emu: keeping the generated files in %s\n", path_.c_str());
  }
  ~WorkDir() {
    if (keep_) return;
    // Depth first, so directories are empty when removed; at exit, errors leave files behind.
    nftw(
        path_.c_str(),
        [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool keep_ = false;
};

const std::string& WorkDirPath() {
  static WorkDir dir;
  return dir.path();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) TVM_FFI_THROW(RuntimeError) << "metal_emu: cannot write " << path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// Runs argv in `dir` with stdout and stderr into `log`; returns the exit status (-1: not run).
int Spawn(const std::vector<std::string>& argv, const std::string& dir, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::shared_ptr<const KernelLibrary> Build(const std::string& source, const TslEmuHost* host) {
  MslTranslation translation;
  try {
    translation = TranslateMsl(source, kFileName);
  } catch (const tvm::ffi::Error& e) {
    TVM_FFI_THROW(RuntimeError) << "metal_emu: the MSL source is not valid Metal: " << e.message();
  }
  static std::atomic<uint64_t> counter{0};
  std::string dir = WorkDirPath() + "/k" + std::to_string(counter++);
  if (mkdir(dir.c_str(), 0700) != 0)
    TVM_FFI_THROW(RuntimeError) << "metal_emu: cannot create " << dir << ": "
                                << std::strerror(errno);
  WriteFile(dir + "/source.metal", source);
  WriteFile(dir + "/" + kFileName, translation.cxx);
  std::vector<std::string> argv = CompilerCommand();
  std::vector<std::string> flags = CompilerFlags();
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {kFileName, "-o", "kernel.so", "-lm"});
  int rc = Spawn(argv, dir, dir + "/compile.log");
  if (rc != 0) {
    std::string log = ReadFile(dir + "/compile.log");
    if (log.size() > kMaxQuotedLog) log = log.substr(0, kMaxQuotedLog) + "\n[... truncated]";
    TVM_FFI_THROW(RuntimeError) << "metal_emu: the MSL source does not compile as C++ against the "
                                   "stand-in <metal_stdlib> ("
                                << (rc < 0 ? "could not run " : "") << Join(argv) << " in " << dir
                                << ", exit " << rc << "):\n"
                                << log;
  }
  std::string path = dir + "/kernel.so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    TVM_FFI_THROW(RuntimeError) << "metal_emu: dlopen " << path << ": " << dlerror();
  auto fn = reinterpret_cast<TslEmuKernelsFn>(dlsym(handle, TESSEL_METAL_EMU_KERNELS_SYMBOL));
  uint32_t count = 0;
  const TslEmuKernel* table = fn ? fn(TESSEL_METAL_EMU_ABI_VERSION, host, &count) : nullptr;
  if (table == nullptr)
    TVM_FFI_THROW(RuntimeError) << "metal_emu: " << path << " has no kernel table of ABI version "
                                << TESSEL_METAL_EMU_ABI_VERSION;
  return std::make_shared<KernelLibrary>(std::move(translation), path, handle, table, count);
}

// Cached results: the library, or the error a build raised, rethrown on the next request.
struct Entry {
  std::shared_ptr<const KernelLibrary> library;
  std::string error;
};

}  // namespace

KernelLibrary::KernelLibrary(MslTranslation translation, std::string path, void* handle,
                             const TslEmuKernel* table, uint32_t count)
    : translation_(std::move(translation)), path_(std::move(path)), handle_(handle) {
  for (uint32_t i = 0; i < count; ++i) {
    kernels_.push_back(Kernel{&translation_.kernels.at(i), &table[i]});
  }
}

const KernelLibrary::Kernel* KernelLibrary::Find(const std::string& name) const {
  for (const Kernel& k : kernels_)
    if (k.signature->name == name) return &k;
  return nullptr;
}

std::string KernelLibrary::SourceLine(const void* pc) const {
  Dl_info info;
  if (dladdr(pc, &info) == 0 || info.dli_fname == nullptr || path_ != info.dli_fname) return "";
  auto offset = reinterpret_cast<uintptr_t>(pc) - reinterpret_cast<uintptr_t>(info.dli_fbase);
  char cmd[1024];
  std::snprintf(cmd, sizeof(cmd), "addr2line -e '%s' 0x%lx 2>/dev/null", path_.c_str(),
                static_cast<unsigned long>(offset));
  FILE* f = popen(cmd, "r");
  if (f == nullptr) return "";
  char line[1024] = {0};
  bool got = std::fgets(line, sizeof(line), f) != nullptr;
  pclose(f);
  if (!got) return "";
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  size_t slash = s.rfind('/');
  if (slash != std::string::npos) s = s.substr(slash + 1);
  size_t paren = s.find(" (");
  if (paren != std::string::npos) s = s.substr(0, paren);
  return s.rfind("??", 0) == 0 ? "" : s;
}

std::shared_ptr<const KernelLibrary> LoadKernelLibrary(const std::string& source,
                                                       const TslEmuHost* host, bool* cache_hit) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_future<Entry>> cache;
  std::string key = Join(CompilerCommand()) + '\0' + source;
  std::promise<Entry> promise;
  std::shared_future<Entry> future;
  bool build = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it == cache.end()) {
      future = promise.get_future().share();
      cache.emplace(key, future);
      build = true;
    } else {
      future = it->second;
    }
  }
  *cache_hit = !build;
  if (build) {
    Entry e;
    try {
      e.library = Build(source, host);
    } catch (const tvm::ffi::Error& err) {
      e.error = err.message();
    }
    promise.set_value(e);
  }
  const Entry& e = future.get();
  if (!e.error.empty()) TVM_FFI_THROW(RuntimeError) << e.error;
  return e.library;
}

std::string TranslatedSource(const std::string& source) {
  return TranslateMsl(source, kFileName).cxx;
}

}  // namespace metal_emu
}  // namespace tessel
