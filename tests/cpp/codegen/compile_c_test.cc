// CompileCSource: a hand-written C library speaking the tvm-ffi safe-call ABI is compiled, loaded
// through tvm-ffi and called; compiler failures explain themselves; output is byte-reproducible.
#include <gtest/gtest.h>
#include <signal.h>
#include <tessel/codegen/compile_c.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "../ir/expect_error.h"

namespace tessel {
namespace codegen {
namespace {

namespace fs = std::filesystem;
using testing::ExpectError;

// add_one(x): x + 1 for an int; TypeError otherwise. sum_to(n): 0 + 1 + ... + (n - 1) through an
// OpenMP reduction, so the OpenMP runtime must link and load too.
constexpr char kSource[] = R"(#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_add_one(void* self, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one: expected one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}
TVM_FFI_DLL_EXPORT int __tvm_ffi_sum_to(void* self, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result) {
  int64_t n = args[0].v_int64, total = 0;
#pragma omp parallel for reduction(+ : total)
  for (int64_t i = 0; i < n; ++i) total += i;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = total;
  return 0;
}
)";

// A fresh directory under the system temp dir, removed at the end of the test.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tessel-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

using CompileC = TempDirTest;

TEST_F(CompileC, CompilesLoadsAndCalls) {
  // A folder with a space: the compiler is run without a shell.
  fs::path out = dir_ / "my libs" / "add.so";
  EXPECT_EQ(CompileCSource(kSource, out.string()), out.string());
  ASSERT_TRUE(fs::exists(out));
  tvm::ffi::Module mod = tvm::ffi::Module::LoadFromFile(out.string());
  tvm::ffi::Function add_one = mod->GetFunction("add_one").value();
  EXPECT_EQ(add_one(41).cast<int64_t>(), 42);
  ExpectError([&] { add_one(1.5); }, "TypeError", {"add_one: expected one int"});
  tvm::ffi::Function sum_to = mod->GetFunction("sum_to").value();
  EXPECT_EQ(sum_to(100000).cast<int64_t>(), int64_t{100000} * 99999 / 2);
  // No temporary file is left next to the library.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(out.parent_path())) entries += e.exists();
  EXPECT_EQ(entries, 1);
}

TEST_F(CompileC, LibraryOutlivesItsModule) {
  // tvm-ffi dlcloses a library when its Module dies; the OpenMP runtime's idle workers must not
  // lose their code under them (the library is linked -z nodelete).
  for (int i = 0; i < 3; ++i) {
    fs::path out = dir_ / ("lib" + std::to_string(i) + ".so");
    CompileCSource(kSource, out.string());
    tvm::ffi::Module mod = tvm::ffi::Module::LoadFromFile(out.string());
    EXPECT_EQ(mod->GetFunction("sum_to").value()(1000).cast<int64_t>(), 499500);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(fs::path(TvmFfiIncludeDir()).filename(), "include");
}

TEST_F(CompileC, CommandHasTheFixedFlags) {
  std::vector<std::string> cmd = CompileCommand();
  std::string joined;
  for (const std::string& a : cmd) joined += a + " ";
  for (const char* flag : {"-std=c11 ", "-O3 ", "-fPIC ", "-shared ",
                           "-ffile-prefix-map=<tmpdir>=. ", "-o lib.so kernel.c"}) {
    EXPECT_NE(joined.find(flag), std::string::npos) << joined;
  }
  EXPECT_NE(joined.find("-I" + TvmFfiIncludeDir()), std::string::npos) << joined;
  EXPECT_TRUE(fs::exists(fs::path(TvmFfiIncludeDir()) / "tvm" / "ffi" / "c_api.h"));
  CompileOptions no_omp;
  no_omp.openmp = false;
  no_omp.extra_flags = {"-DTESSEL_TEST=1"};
  std::string plain;
  for (const std::string& a : CompileCommand(no_omp)) plain += a + " ";
  EXPECT_EQ(plain.find("-fopenmp"), std::string::npos) << plain;
  EXPECT_NE(plain.find("-DTESSEL_TEST=1"), std::string::npos) << plain;
}

TEST_F(CompileC, IdentityNamesTheCompilerAndTheHeaders) {
  std::string id = CompilerIdentity();
  // The compiler's --version text comes first (gcc says "cc (Debian 12.2.0...) 12.2.0").
  size_t header = id.find("c_api.h: ");
  ASSERT_NE(header, std::string::npos) << id;
  EXPECT_GT(header, 10u) << id;
  EXPECT_EQ(CompilerIdentity(), id);
}

TEST_F(CompileC, CompilerErrorNamesTheCommandAndTheDiagnostic) {
  fs::path out = dir_ / "bad.so";
  ExpectError([&] { CompileCSource("int f(void) { return undeclared_name; }\n", out.string()); },
              "RuntimeError", {"the C compiler failed", "-std=c11", "kernel.c", "undeclared_name"});
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CompileC, MissingCompilerIsNamed) {
  ScopedEnv cc("TESSEL_CC", "/nonexistent/tessel-cc");
  ExpectError([&] { CompileCSource(kSource, (dir_ / "x.so").string()); }, "RuntimeError",
              {"cannot run the C compiler '/nonexistent/tessel-cc'", "TESSEL_CC"});
}

TEST_F(CompileC, CompilerComesFromTesselCcThenCc) {
  // A compiler command of several words ("env cc"), the make convention for CC.
  ScopedEnv cc("CC", "env cc");
  fs::path out = dir_ / "cc.so";
  CompileCSource(kSource, out.string());
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(CompileCommand().front(), "env");
  ScopedEnv tessel_cc("TESSEL_CC", "cc");
  EXPECT_EQ(CompileCommand().front(), "cc");
}

TEST_F(CompileC, IgnoredSigchldIsAnErrorNotAGuess) {
  // With SIGCHLD ignored the kernel reaps the compiler and its exit status is lost.
  CompileCommand();  // the OpenMP probe runs before SIGCHLD is ignored
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGCHLD, &ignore, &old), 0);
  std::string error;
  try {
    CompileCSource(kSource, (dir_ / "x.so").string());
  } catch (const tvm::ffi::Error& e) {
    error = e.message();
  }
  sigaction(SIGCHLD, &old, nullptr);
  EXPECT_NE(error.find("is SIGCHLD ignored in this process?"), std::string::npos) << error;
}

TEST_F(CompileC, CompilerWithoutOpenMPDropsTheFlagAndWarnsOnce) {
  // A compiler that refuses -fopenmp: a script in front of cc.
  fs::path script = dir_ / "noompcc";
  std::ofstream(script) << "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -fopenmp ] && exit 1; done\n"
                           "exec cc \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  ScopedEnv cc("TESSEL_CC", script.c_str());
  ::testing::internal::CaptureStderr();
  std::vector<std::string> cmd = CompileCommand();
  fs::path out = dir_ / "serial.so";
  CompileCSource(kSource, out.string());
  CompileCSource(kSource, out.string());
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(cmd.begin(), cmd.end(), "-fopenmp"), 0);
  size_t first = err.find("does not support -fopenmp");
  EXPECT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("does not support -fopenmp", first + 1), std::string::npos) << err;
  // Without OpenMP the parallel loop runs on one thread, with the same result.
  tvm::ffi::Module mod = tvm::ffi::Module::LoadFromFile(out.string());
  EXPECT_EQ(mod->GetFunction("sum_to").value()(1000).cast<int64_t>(), 499500);
}

TEST_F(CompileC, SameSourceGivesByteIdenticalLibraries) {
  fs::path a = dir_ / "a" / "lib.so";
  fs::path b = dir_ / "b" / "other name.so";
  CompileCSource(kSource, a.string());
  CompileCSource(kSource, b.string());
  std::string bytes_a = ReadBytes(a);
  EXPECT_GT(bytes_a.size(), 1000u);
  EXPECT_TRUE(bytes_a == ReadBytes(b)) << "libraries differ: " << a << " " << b;
}

}  // namespace
}  // namespace codegen
}  // namespace tessel
