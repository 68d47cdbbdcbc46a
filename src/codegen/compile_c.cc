// The system C compiler as a subprocess (see compile_c.h). The compiler runs without a shell, with
// its working directory set to a private temporary directory holding `kernel.c`, so no path of the
// caller's (which may contain spaces or shell characters) is ever parsed, and no temporary path
// can reach the library's bytes.
#include <tessel/codegen/compile_c.h>
#include <tessel/support/env.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/error.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#ifndef _WIN32
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace tessel {
namespace codegen {

namespace fs = std::filesystem;

namespace {

constexpr char kSourceName[] = "kernel.c";
constexpr char kLibraryName[] = "lib.so";
constexpr char kPrefixMapPlaceholder[] = "-ffile-prefix-map=<tmpdir>=.";

std::vector<std::string> CompilerArgv() {
  std::string cc = support::GetEnv("TESSEL_CC");
  if (cc.empty()) cc = support::GetEnv("CC");
  std::vector<std::string> argv;
  std::istringstream words(cc);
  for (std::string w; words >> w;) argv.push_back(w);
  if (argv.empty()) argv.push_back("cc");
  return argv;
}

std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

#ifndef _WIN32

// The folder of the libtvm_ffi this process has loaded.
fs::path TvmFfiLibDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&TVMFFIErrorSetRaisedFromCStr), &info) == 0 ||
      info.dli_fname == nullptr) {
    TVM_FFI_THROW(RuntimeError) << "compile C: cannot find the loaded libtvm_ffi (dladdr failed)";
  }
  std::error_code ec;
  fs::path lib = fs::canonical(info.dli_fname, ec);
  if (ec) lib = fs::absolute(info.dli_fname);
  return lib.parent_path();
}

// A private temporary directory, removed by the destructor unless kept.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tessel-cc-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) {
      TVM_FFI_THROW(RuntimeError) << "compile C: cannot create a temporary directory from " << tmpl
                                  << ": " << std::strerror(errno);
    }
    path_ = buf.data();
  }
  ~TempDir() {
    if (keep_) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  void Keep() { keep_ = true; }

 private:
  fs::path path_;
  bool keep_ = false;
};

void WriteFile(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) {
    TVM_FFI_THROW(RuntimeError) << "compile C: cannot write " << path.string() << ": "
                                << std::strerror(errno);
  }
}

struct ProcessResult {
  int status = 0;      // exit status, or 128 + signal number
  std::string output;  // stdout and stderr, interleaved
};

// A pipe whose ends close on exec, so that a process another thread spawns meanwhile cannot hold
// the write end open (the reader would wait for that process to end).
bool CloexecPipe(int fds[2]) {
#ifdef __linux__
  return pipe2(fds, O_CLOEXEC) == 0;
#else
  if (pipe(fds) != 0) return false;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return true;
#endif
}

// Runs argv (looked up on PATH) in `cwd`; throws RuntimeError when it cannot be started.
ProcessResult RunProcess(const std::vector<std::string>& argv, const fs::path& cwd) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const std::string dir = cwd.string();
  int out_pipe[2];
  int err_pipe[2];  // carries errno from the child when exec fails; closed by a successful exec
  if (!CloexecPipe(out_pipe)) {
    TVM_FFI_THROW(RuntimeError) << "compile C: pipe: " << std::strerror(errno);
  }
  if (!CloexecPipe(err_pipe)) {
    int e = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    TVM_FFI_THROW(RuntimeError) << "compile C: pipe: " << std::strerror(e);
  }
  pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec: the parent may have other threads. dup2 clears
    // close-on-exec on stdout and stderr only.
    int fail = 0;
    if (chdir(dir.c_str()) != 0) {
      fail = errno;
    } else if (dup2(out_pipe[1], 1) < 0 || dup2(out_pipe[1], 2) < 0) {
      fail = errno;
    } else {
      int devnull = open("/dev/null", O_RDONLY);
      if (devnull >= 0) dup2(devnull, 0);
      execvp(cargv[0], cargv.data());
      fail = errno;
    }
    ssize_t ignored = write(err_pipe[1], &fail, sizeof(fail));
    (void)ignored;
    _exit(127);
  }
  int fork_errno = errno;
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    TVM_FFI_THROW(RuntimeError) << "compile C: fork: " << std::strerror(fork_errno);
  }
  ProcessResult result;
  char buf[4096];
  for (;;) {
    ssize_t n = read(out_pipe[0], buf, sizeof(buf));
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out_pipe[0]);
  int child_errno = 0;
  ssize_t got;
  do {
    got = read(err_pipe[0], &child_errno, sizeof(child_errno));
  } while (got < 0 && errno == EINTR);
  close(err_pipe[0]);
  int wstatus = 0;
  pid_t waited;
  do {
    waited = waitpid(pid, &wstatus, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited < 0) {
    // ECHILD: the process ignores SIGCHLD, so the exit status is lost; guessing it could take a
    // failed compile for a success.
    TVM_FFI_THROW(RuntimeError) << "compile C: cannot get the exit status of '" << argv[0]
                                << "': " << std::strerror(errno)
                                << " (is SIGCHLD ignored in this process?)";
  }
  if (got == static_cast<ssize_t>(sizeof(child_errno))) {
    TVM_FFI_THROW(RuntimeError) << "compile C: cannot run the C compiler '" << argv[0]
                                << "': " << std::strerror(child_errno)
                                << " (set TESSEL_CC or CC to a C compiler)";
  }
  result.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return result;
}

// Whether the compiler accepts -fopenmp and finds omp.h (probed once per compiler command);
// warns once on stderr when it does not.
bool CompilerHasOpenMP(const std::vector<std::string>& cc) {
  static std::mutex mu;
  static std::map<std::vector<std::string>, bool> known;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(cc);
  if (it != known.end()) return it->second;
  TempDir dir;
  WriteFile(dir.path() / "probe.c",
            "#include <omp.h>\nint tessel_probe(void) { return omp_get_max_threads(); }\n");
  std::vector<std::string> argv = cc;
  for (const char* f : {"-fPIC", "-shared", "-fopenmp", "-o", "probe.so", "probe.c"}) {
    argv.push_back(f);
  }
  bool ok = RunProcess(argv, dir.path()).status == 0;
  if (!ok) {
    std::cerr << "tessel: warning: the C compiler '" << JoinCommand(cc)
              << "' does not support -fopenmp; parallel loops will run on one thread\n";
  }
  known.emplace(cc, ok);
  return ok;
}

#endif  // _WIN32

}  // namespace

std::string TvmFfiIncludeDir() {
  std::string env = support::GetEnv("TESSEL_TVM_FFI_INCLUDE");
  std::vector<fs::path> tried;
  if (!env.empty()) {
    tried.push_back(env);
  } else {
#ifndef _WIN32
    tried.push_back(TvmFfiLibDir().parent_path() / "include");
#endif
  }
  for (const fs::path& dir : tried) {
    if (fs::exists(dir / "tvm" / "ffi" / "c_api.h") && fs::exists(dir / "dlpack" / "dlpack.h")) {
      return dir.string();
    }
  }
  std::ostringstream os;
  for (const fs::path& dir : tried) os << " " << dir.string();
  TVM_FFI_THROW(RuntimeError) << "compile C: no tvm-ffi headers (tvm/ffi/c_api.h and "
                                 "dlpack/dlpack.h) in:"
                              << os.str()
                              << "; set TESSEL_TVM_FFI_INCLUDE to the folder holding them";
  TVM_FFI_UNREACHABLE();
}

std::string CompilerIdentity() {
#ifdef _WIN32
  return "";
#else
  static std::mutex mu;
  static std::map<std::vector<std::string>, std::string> known;
  std::vector<std::string> cc = CompilerArgv();
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(cc);
  if (it != known.end()) return it->second;
  std::vector<std::string> argv = cc;
  argv.push_back("--version");
  ProcessResult run = RunProcess(argv, fs::temp_directory_path());
  std::string header;
  std::ifstream in(fs::path(TvmFfiIncludeDir()) / "tvm" / "ffi" / "c_api.h", std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  header = buf.str();
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : header) h = (h ^ c) * 1099511628211ull;
  std::ostringstream id;
  id << run.output << "c_api.h: " << header.size() << " bytes, fnv1a " << std::hex << h << "\n";
  return known.emplace(cc, id.str()).first->second;
#endif
}

std::vector<std::string> CompileCommand(const CompileOptions& options) {
#ifdef _WIN32
  TVM_FFI_THROW(RuntimeError) << "compile C: Windows is not supported yet (tessel drives a "
                                 "GCC/Clang-style C compiler; MSVC needs its own command line)";
  TVM_FFI_UNREACHABLE();
#else
  std::vector<std::string> cc = CompilerArgv();
  std::vector<std::string> argv = cc;
  for (const char* f : {"-std=c11", "-O3", "-fPIC", "-shared"}) argv.push_back(f);
  if (options.openmp && CompilerHasOpenMP(cc)) argv.push_back("-fopenmp");
  // The compiler runs in the temporary directory: this maps it to "." in anything recorded.
  argv.push_back(kPrefixMapPlaceholder);
  argv.push_back("-I" + TvmFfiIncludeDir());
  for (const std::string& f : options.extra_flags) argv.push_back(f);
  argv.push_back("-o");
  argv.push_back(kLibraryName);
  argv.push_back(kSourceName);
#ifdef __APPLE__
  argv.push_back("-undefined");
  argv.push_back("dynamic_lookup");
#else
  // By soname, without rpath: the process that loads the library has libtvm_ffi loaded already.
  argv.push_back("-L" + TvmFfiLibDir().string());
  argv.push_back("-ltvm_ffi");
  // Never unloaded: tvm-ffi dlcloses a library when its Module dies, which would unload the
  // OpenMP runtime it brought in under the feet of that runtime's idle worker threads.
  argv.push_back("-Wl,-z,nodelete");
#endif
  return argv;
#endif
}

std::string CompileCSource(const std::string& source, const std::string& out_path,
                           const CompileOptions& options) {
#ifdef _WIN32
  CompileCommand(options);  // throws: unsupported
  return out_path;
#else
  TempDir dir;
  std::vector<std::string> argv = CompileCommand(options);
  // The prefix map names the real temporary directory (CompileCommand cannot know it).
  for (std::string& a : argv) {
    if (a == kPrefixMapPlaceholder) a = "-ffile-prefix-map=" + dir.path().string() + "=.";
  }
  WriteFile(dir.path() / kSourceName, source);
  ProcessResult run = RunProcess(argv, dir.path());
  if (run.status != 0) {
    dir.Keep();
    TVM_FFI_THROW(RuntimeError) << "compile C: the C compiler failed (exit status " << run.status
                                << ")\ncommand (in " << dir.path().string()
                                << ", which is kept): " << JoinCommand(argv) << "\n"
                                << run.output;
  }
  fs::path out = fs::absolute(out_path);
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  // Copy next to the destination under a unique name, then rename: readers never see a partial
  // library, and two processes writing the same path both end with a complete one.
  static std::atomic<uint64_t> counter{0};
  fs::path tmp = out.parent_path() / ("." + out.filename().string() + ".tmp-" +
                                      std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::error_code ec;
  fs::copy_file(dir.path() / kLibraryName, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, out, ec);
  if (ec) {
    std::string why = ec.message();
    fs::remove(tmp, ec);
    TVM_FFI_THROW(RuntimeError) << "compile C: cannot write " << out.string() << ": " << why;
  }
  return out_path;
#endif
}

}  // namespace codegen
}  // namespace tessel
