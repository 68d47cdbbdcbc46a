// Build: the content-addressed library cache, the target checks before lowering, and (once the
// lowering passes and the C code generator are in this build) the whole path from text to a
// loaded module.
#include <gtest/gtest.h>
#include <tessel/codegen/build.h>
#include <tessel/ir/parser.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../ir/expect_error.h"

namespace tessel {
namespace codegen {
namespace {

namespace fs = std::filesystem;
using testing::ExpectError;

constexpr char kSource[] = R"(#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_twice(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 2 * args[0].v_int64;
  return 0;
}
)";

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Each test gets a fresh build cache in TESSEL_CACHE_DIR.
class BuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tessel-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    const char* old = std::getenv("TESSEL_CACHE_DIR");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    ::setenv("TESSEL_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_old_) {
      ::setenv("TESSEL_CACHE_DIR", old_.c_str(), 1);
    } else {
      ::unsetenv("TESSEL_CACHE_DIR");
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  bool had_old_ = false;
  std::string old_;
};

// Why the whole pipeline cannot run in this build, or "" when it can.
std::string MissingPart() {
  for (const String& name : LowerPipeline(target::Target::Parse("c"))) {
    bool found = false;
    for (const String& n : transform::ListPasses()) found = found || n == name;
    if (!found) return "needs the " + std::string(name) + " pass";
  }
  if (!tvm::ffi::Function::GetGlobal("tessel.codegen.GenerateC").has_value()) {
    return "needs the C code generator";
  }
  return "";
}

std::string ReadExample(const std::string& name) {
  return ReadBytes(fs::path(TESSEL_SOURCE_DIR) / "examples" / name);
}

TEST_F(BuildTest, CacheReusesTheLibraryOfTheSameSource) {
  bool hit = true;
  std::string first = CompileCached(kSource, {}, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(fs::path(first).parent_path(), dir_);
  std::string bytes = ReadBytes(first);
  std::string second = CompileCached(kSource, {}, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(first, second);
  EXPECT_EQ(ReadBytes(second), bytes);
  // Another source, or another command line, is another library.
  std::string other = CompileCached(std::string(kSource) + "\n", {}, &hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(other, first);
  CompileOptions flagged;
  flagged.extra_flags = {"-DTESSEL_FLAG=1"};
  std::string with_flag = CompileCached(kSource, flagged, &hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(with_flag, first);
  tvm::ffi::Module mod = tvm::ffi::Module::LoadFromFile(first);
  EXPECT_EQ(mod->GetFunction("twice").value()(21).cast<int64_t>(), 42);
}

TEST_F(BuildTest, CacheKeyMismatchIsNotReused) {
  // A stored key that differs from ours (a hash collision, or a damaged entry) must not be
  // taken for our library.
  std::string first = CompileCached(kSource);
  fs::path key = fs::path(first).replace_extension(".key");
  ASSERT_TRUE(fs::exists(key));
  std::ofstream(key, std::ios::trunc) << "something else";
  bool hit = true;
  std::string again = CompileCached(kSource, {}, &hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(again, first);
  EXPECT_EQ(ReadBytes(again), ReadBytes(first));
}

TEST_F(BuildTest, ConcurrentBuildsOfOneSourceAgree) {
  const std::string source = std::string(kSource) + "// concurrent\n";
  std::vector<std::string> paths(4);
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      try {
        paths[i] = CompileCached(source);
      } catch (const tvm::ffi::Error& e) {
        errors[i] = e.message();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(errors[i], "");
    EXPECT_EQ(paths[i], paths[0]);
  }
  // Only the library and its key remain: every temporary name was renamed away.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.exists();
  EXPECT_EQ(entries, 2);
  EXPECT_EQ(
      tvm::ffi::Module::LoadFromFile(paths[0])->GetFunction("twice").value()(4).cast<int64_t>(), 8);
}

TEST_F(BuildTest, CpuTargetRejectsThreadBindings) {
  ir::IRModule mod = ir::ParseModule(ReadExample("loop_kinds.py"), "loop_kinds.py");
  ExpectError([&] { Build(mod, target::Target::Parse("c")); }, "ValueError",
              {"loop_kinds: thread bindings need a GPU target", "loop t is bound to threadIdx.x"});
  ir::IRModule launched = ir::ParseModule(ReadExample("attr_thread_extent.py"), "a.py");
  ExpectError([&] { Lower(launched, target::Target::Parse("c")); }, "ValueError",
              {"attr_thread_extent: thread bindings need a GPU target",
               "it has a thread_extent attribute"});
}

// Target cuda is built by BuildCUDA (build_cuda_test.cc).
TEST_F(BuildTest, MetalRefusesHostCodeThatTouchesBuffers) {
  // A CPU program has no kernel: its loops would read Metal buffers on the host.
  ir::IRModule mod = ir::ParseModule(ReadExample("vector_add.py"), "vector_add.py");
  ExpectError([&] { Build(mod, target::Target::Parse("metal")); }, "ValueError",
              {"vector_add: target metal: buffer", "is accessed outside a GPU kernel"});
}

TEST_F(BuildTest, MetalEmbedsTheKernelsAndTheirTable) {
  ir::IRModule mod = ir::ParseModule(ReadExample("vector_add_gpu.py"), "vector_add_gpu.py");
  CompiledModule built = Build(mod, target::Target::Parse("metal -msl=3.2"));
  std::string msl = built->metal_source;
  EXPECT_NE(msl.find("// Generated by tessel (target metal, MSL 3.2, safe math)."),
            std::string::npos);
  EXPECT_NE(msl.find("kernel void vector_add_gpu_kernel("), std::string::npos);
  EXPECT_TRUE(std::string(built->cuda_source).empty());
  // The host library imports one tessel_metal module with the same MSL.
  auto imports = built->module->imports();
  ASSERT_EQ(imports.size(), 1u);
  tvm::ffi::Module m = imports[0].cast<tvm::ffi::Module>();
  EXPECT_STREQ(m->kind(), "tessel_metal");
  EXPECT_EQ(std::string(m->InspectSource("metal")), msl);
}

TEST_F(BuildTest, PipelineIsTheContractsOrder) {
  std::vector<String> names = LowerPipeline(target::Target::Parse("c"));
  std::string joined;
  for (const String& n : names) joined += std::string(n) + " ";
  EXPECT_EQ(joined,
            "LowerTileOps VerifyWellFormed LowerBlocks CompactBufferAllocation FlattenBuffer "
            "SwizzleLayout Simplify "
            "SoftwarePipeline VectorizeLoop "
            "UnrollLoop LowerIntrinsics Simplify ");
}

TEST_F(BuildTest, VectorAddBuildsLoadsAndIsCached) {
  std::string missing = MissingPart();
  ASSERT_EQ(missing, "");  // every pass of the pipeline and the C generator are built in
  ir::IRModule mod = ir::ParseModule(ReadExample("vector_add.py"), "vector_add.py");
  CompiledModule built = Build(mod, target::Target::Parse("c"));
  EXPECT_FALSE(built->cache_hit);
  EXPECT_NE(std::string(built->source).find("__tvm_ffi_vector_add"), std::string::npos);
  EXPECT_TRUE(fs::exists(std::string(built->library_path)));
  EXPECT_EQ(built->function_names.size(), 1u);
  EXPECT_EQ(built->function_names[0], "vector_add");
  built->GetFunction("vector_add");
  ExpectError([&] { built->GetFunction("vector_sub"); }, "KeyError",
              {"no function 'vector_sub'", "its functions: vector_add"});
  EXPECT_GE(built->cc_seconds, 0.0);

  CompiledModule again = Build(mod, target::Target::Parse("c"));
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->source, built->source);
  EXPECT_EQ(again->library_path, built->library_path);

  fs::path exported = dir_ / "out dir" / "vector_add.so";
  built->ExportLibrary(exported.string());
  EXPECT_EQ(ReadBytes(exported), ReadBytes(std::string(built->library_path)));
}

}  // namespace
}  // namespace codegen
}  // namespace tessel
