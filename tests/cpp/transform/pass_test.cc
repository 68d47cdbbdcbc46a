// The pass infrastructure: registry, Sequential order and filtering, IR dumps, timing, verify-each,
// and the environment switch registry.
#include <gtest/gtest.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/support/env.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/verify_well_formed.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)
namespace fs = std::filesystem;

IRModule Kernel() {
  return ParseModule(R"(
@T.prim_func
def add(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i] + T.float32(1)
)");
}

// A pass that tags every function with attrs[key] = 1 (a visible change in the text).
Pass Tag(const std::string& key, int64_t opt_level = 0) {
  return CreatePrimFuncPass(
      [key](PrimFunc f) {
        f.CopyOnWrite()->attrs.Set(key, int64_t(1));
        return f;
      },
      opt_level, "Tag_" + key);
}

// A pass that changes nothing and records that it ran.
Pass Noop(const std::string& name, std::vector<std::string>* log) {
  return CreateModulePass(
      [name, log](IRModule mod) {
        log->push_back(name);
        return mod;
      },
      0, name);
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> ListDir(const fs::path& dir) {
  std::set<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// A fresh, empty directory under the system temp directory, removed at the end of the test.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() /
              ("tessel_pass_test_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A context with every instrument off, whatever the environment says.
PassContext QuietContext() {
  PassContext ctx;
  auto* n = const_cast<PassContextNode*>(ctx.get());
  n->dump_dir = "";
  n->dump_changed_only = false;
  n->print_timing = false;
  n->verify_each = false;
  return ctx;
}

PassContextNode* Edit(const PassContext& ctx) { return const_cast<PassContextNode*>(ctx.get()); }

TEST(PassRegistry, BuiltInsAreListedAndBuiltFresh) {
  std::vector<String> names = ListPasses();
  EXPECT_NE(std::find(names.begin(), names.end(), "VerifyWellFormed"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  Pass a = GetPass("VerifyWellFormed");
  EXPECT_EQ(a->name, "VerifyWellFormed");
  EXPECT_FALSE(a.same_as(GetPass("VerifyWellFormed")));
}

TEST(PassRegistry, RegisterLookUpAndRefuseDuplicates) {
  RegisterPass("test.TagX", [] { return Tag("x"); });
  EXPECT_EQ(GetPass("test.TagX")->name, "Tag_x");
  EXPECT_THROW(RegisterPass("test.TagX", [] { return Tag("x"); }), tvm::ffi::Error);
  try {
    GetPass("NoSuchPass");
    FAIL() << "expected a KeyError";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "KeyError");
    EXPECT_NE(e.message().find("no pass named NoSuchPass; registered:"), std::string::npos);
    EXPECT_NE(e.message().find("VerifyWellFormed"), std::string::npos) << e.message();
  }
}

TEST(PassRegistry, SimplifyRunsByName) {
  IRModule mod = ParseModule(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in range(16):
        if i < 16:
            A[i] = T.float32(0)
)");
  PassContext ctx = QuietContext();
  ctx->verify_each = true;
  IRModule out = GetPass("Simplify")(mod, ctx);
  EXPECT_EQ(AsText(out).find("if "), std::string::npos) << AsText(out);
  EXPECT_TRUE(GetPass("Simplify")(out, ctx).same_as(out));
}

TEST(Pass, UnchangedModuleIsTheSameObject) {
  IRModule mod = Kernel();
  std::vector<std::string> log;
  TempDir dir("same");
  PassContext ctx = QuietContext();
  Edit(ctx)->dump_dir = dir.path().string();
  Edit(ctx)->verify_each = true;
  Pass seq =
      Sequential({Noop("A", &log), CreatePrimFuncPass([](PrimFunc f) { return f; }, 0, "B")});
  EXPECT_TRUE(seq(mod, ctx).same_as(mod));
}

TEST(Pass, PrimFuncPassChangesEveryFunction) {
  IRModule out = Tag("k")(Kernel(), QuietContext());
  EXPECT_TRUE(out->functions.at("add")->attrs.count("k"));
}

TEST(Sequential, RunsInOrderAndSkipsByOptLevelAndName) {
  std::vector<std::string> log;
  Pass high = CreateModulePass(
      [&log](IRModule m) {
        log.push_back("high");
        return m;
      },
      3, "High");
  Pass seq = Sequential({Noop("first", &log), high, Noop("second", &log),
                         Sequential({Noop("inner", &log)}, "Inner"), Noop("off", &log)});
  PassContext ctx = QuietContext();
  Edit(ctx)->disabled_passes = {"off"};
  seq(Kernel(), ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"first", "second", "inner"}));
  log.clear();
  Edit(ctx)->opt_level = 3;
  Edit(ctx)->disabled_passes = {};
  seq(Kernel(), ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"first", "high", "second", "inner", "off"}));
}

TEST(PassDump, BeforeAndAfterEveryPassInOrder) {
  TempDir dir("dump");
  std::vector<std::string> log;
  PassContext ctx = QuietContext();
  Edit(ctx)->dump_dir = dir.path().string();
  IRModule in = Kernel();
  IRModule out = Sequential({Tag("x"), Noop("Same", &log)})(in, ctx);
  EXPECT_EQ(ListDir(dir.path()),
            (std::set<std::string>{"000_Tag_x_before.py", "000_Tag_x_after.py",
                                   "001_Same_before.py", "001_Same_after.py"}));
  EXPECT_EQ(ReadFile(dir.path() / "000_Tag_x_before.py"), AsText(in));
  EXPECT_EQ(ReadFile(dir.path() / "000_Tag_x_after.py"), AsText(out));
  EXPECT_NE(AsText(in), AsText(out));
  EXPECT_EQ(ReadFile(dir.path() / "001_Same_after.py"), AsText(out));
  // The numbering continues across runs under one context.
  Tag("y")(out, ctx);
  EXPECT_TRUE(ListDir(dir.path()).count("002_Tag_y_after.py"));
  // A dump parses back to the module it shows.
  IRModule reparsed = ParseModule(ReadFile(dir.path() / "000_Tag_x_after.py"));
  EXPECT_EQ(AsText(reparsed), AsText(out));
}

TEST(PassDump, ChangedOnlyKeepsNumbersAndSkipsUnchanged) {
  TempDir dir("changed");
  std::vector<std::string> log;
  PassContext ctx = QuietContext();
  Edit(ctx)->dump_dir = dir.path().string();
  Edit(ctx)->dump_changed_only = true;
  Sequential({Noop("Same", &log), Tag("x")})(Kernel(), ctx);
  EXPECT_EQ(ListDir(dir.path()),
            (std::set<std::string>{"001_Tag_x_before.py", "001_Tag_x_after.py"}));
}

TEST(PassDump, DirectoryFromTheEnvironment) {
  TempDir dir("env");
  ::setenv("TESSEL_DUMP_IR", dir.path().c_str(), 1);
  ::setenv("TESSEL_DUMP_IR_CHANGED_ONLY", "0", 1);
  PassContext ctx;
  ::unsetenv("TESSEL_DUMP_IR");
  ::unsetenv("TESSEL_DUMP_IR_CHANGED_ONLY");
  EXPECT_EQ(std::string(ctx->dump_dir), dir.path().string());
  Edit(ctx)->verify_each = false;
  Edit(ctx)->print_timing = false;
  Tag("x")(Kernel(), ctx);
  EXPECT_TRUE(ListDir(dir.path()).count("000_Tag_x_before.py"));
}

TEST(PassDump, PassesRunWithoutAContextUseTheEnvironment) {
  TempDir dir("default");
  ::setenv("TESSEL_DUMP_IR", dir.path().c_str(), 1);
  Tag("x")(Kernel());
  Tag("y")(Kernel());
  ::unsetenv("TESSEL_DUMP_IR");
  std::set<std::string> files = ListDir(dir.path());
  EXPECT_TRUE(files.count("000_Tag_x_after.py")) << files.size();
  EXPECT_TRUE(files.count("001_Tag_y_after.py")) << files.size();
}

TEST(PassTiming, RecordsEveryPassWithNesting) {
  std::vector<std::string> log;
  PassContext ctx = QuietContext();
  Sequential({Noop("a", &log), Sequential({Noop("b", &log)}, "Inner")}, "Outer")(Kernel(), ctx);
  const std::vector<PassTiming>& t = ctx->timings;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "Outer");
  EXPECT_EQ(t[0].depth, 0);
  EXPECT_EQ(t[1].name, "a");
  EXPECT_EQ(t[1].depth, 1);
  EXPECT_EQ(t[2].name, "Inner");
  EXPECT_EQ(t[3].name, "b");
  EXPECT_EQ(t[3].depth, 2);
  for (const PassTiming& r : t) EXPECT_GE(r.seconds, 0.0);
  EXPECT_GE(t[0].seconds, t[1].seconds + t[2].seconds);
  std::string table = ctx->FormatTimings();
  EXPECT_NE(table.find("pass timing:"), std::string::npos) << table;
  EXPECT_NE(table.find("    b\n"), std::string::npos) << table;
}

TEST(PassTiming, PrintedToStderrWhenAsked) {
  PassContext ctx = QuietContext();
  Edit(ctx)->print_timing = true;
  testing::internal::CaptureStderr();
  Tag("x")(Kernel(), ctx);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pass timing:"), std::string::npos) << err;
  EXPECT_NE(err.find("Tag_x"), std::string::npos) << err;
}

// Replaces every function body with a store that uses an unbound variable.
Pass Breaker() {
  return CreatePrimFuncPass(
      [](PrimFunc f) {
        Buffer b = (*f->buffer_map.begin()).second;
        f.CopyOnWrite()->body = BufferStore(b, FloatImm(DataType::Float(32), 0), {Var("ghost")});
        return f;
      },
      0, "Breaker");
}

TEST(VerifyEach, NamesThePassThatBrokeTheIR) {
  PassContext ctx = QuietContext();
  Edit(ctx)->verify_each = true;
  std::vector<std::string> log;
  try {
    Sequential({Noop("fine", &log), Breaker(), Noop("later", &log)})(Kernel(), ctx);
    FAIL() << "expected an InternalError";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "InternalError");
    EXPECT_NE(e.message().find("pass Breaker produced IR that is not well-formed"),
              std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("[free_var]"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("'ghost'"), std::string::npos) << e.message();
  }
  EXPECT_EQ(log, std::vector<std::string>{"fine"});
  EXPECT_EQ(ctx->DepthOnThisThread(), 0);  // restored after the throw
  // Without verification the broken module goes through.
  Edit(ctx)->verify_each = false;
  EXPECT_NO_THROW(Breaker()(Kernel(), ctx));
}

TEST(VerifyEach, RejectsAnIllFormedInput) {
  PassContext ctx = QuietContext();
  Edit(ctx)->verify_each = true;
  IRModule broken = Breaker()(Kernel(), QuietContext());
  std::vector<std::string> log;
  try {
    Noop("first", &log)(broken, ctx);
    FAIL() << "expected a ValueError";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_NE(e.message().find("the input of pass first is not well-formed"), std::string::npos)
        << e.message();
  }
  EXPECT_TRUE(log.empty());
}

TEST(PassContextScope, CurrentIsTheInnermost) {
  PassContext outer = QuietContext();
  PassContext inner = QuietContext();
  {
    PassContext::Scope a(outer);
    EXPECT_TRUE(PassContext::Current().same_as(outer));
    {
      PassContext::Scope b(inner);
      EXPECT_TRUE(PassContext::Current().same_as(inner));
      EXPECT_THROW(PassContext::Exit(outer), tvm::ffi::Error);
    }
    EXPECT_TRUE(PassContext::Current().same_as(outer));
  }
  EXPECT_FALSE(PassContext::Current().same_as(outer));
}

TEST(Env, EverySwitchIsDocumentedAndUnlistedNamesAreRefused) {
  std::set<std::string> names;
  for (const support::EnvVarInfo& v : support::EnvVars()) {
    names.insert(v.name);
    EXPECT_GT(std::string(v.doc).size(), 10u) << v.name;
  }
  for (const char* n : {"TESSEL_DUMP_IR", "TESSEL_DUMP_IR_CHANGED_ONLY", "TESSEL_PASS_TIMING",
                        "TESSEL_VERIFY_EACH_PASS"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  EXPECT_THROW(support::GetEnv("TESSEL_NOT_A_SWITCH"), tvm::ffi::Error);
  ::setenv("TESSEL_PASS_TIMING", "maybe", 1);
  try {
    support::GetEnvFlag("TESSEL_PASS_TIMING");
    ADD_FAILURE() << "expected a ValueError";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_NE(e.message().find("TESSEL_PASS_TIMING=maybe"), std::string::npos) << e.message();
  }
  ::setenv("TESSEL_PASS_TIMING", "On", 1);
  EXPECT_TRUE(support::GetEnvFlag("TESSEL_PASS_TIMING"));
  ::unsetenv("TESSEL_PASS_TIMING");
  EXPECT_FALSE(support::GetEnvFlag("TESSEL_PASS_TIMING"));
  EXPECT_NE(support::FormatEnvVars().find("TESSEL_DUMP_IR (default: unset)"), std::string::npos);
}

}  // namespace
}  // namespace transform
}  // namespace tessel
