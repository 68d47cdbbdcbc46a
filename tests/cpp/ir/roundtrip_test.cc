// Every kernel in examples/ survives the text format: parse -> print -> parse gives a structurally
// equal object, and printing is a fixed point (print(parse(print(x))) == print(x)).
//
// The parser and printer are reached through their registered global functions, so this test
// builds whether or not they are linked in; without them it is skipped with the reason.
#include <gtest/gtest.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/access_path.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tessel {
namespace ir {
namespace {

namespace fs = std::filesystem;
using tvm::ffi::Any;
using tvm::ffi::Function;

std::vector<fs::path> ExampleFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(TESSEL_SOURCE_DIR) / "examples")) {
    if (entry.is_regular_file() && entry.path().extension() == ".py") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// "<root>.body.seq[2].value": where two objects first differ.
std::string PathText(const tvm::ffi::reflection::AccessPath& path) {
  using tvm::ffi::reflection::AccessKind;
  std::string out = "<root>";
  for (const auto& step : path->ToSteps()) {
    switch (step->kind) {
      case AccessKind::kAttr:
      case AccessKind::kAttrMissing:
        out += "." + step->key.cast<std::string>();
        break;
      case AccessKind::kArrayItem:
      case AccessKind::kArrayItemMissing:
        out += "[" + std::to_string(step->key.cast<int64_t>()) + "]";
        break;
      default:
        out += "[" + step->key.GetTypeKey() + " key]";
        break;
    }
  }
  return out;
}

struct TextFunctions {
  Function parse;
  Function print;
};

std::optional<TextFunctions> FindTextFunctions() {
  auto parse = Function::GetGlobal("tessel.ir.ParseText");
  auto print = Function::GetGlobal("tessel.ir.AsText");
  if (!parse || !print) return std::nullopt;
  return TextFunctions{*parse, *print};
}

TEST(RoundTrip, ExamplesExist) {
  // The examples are the corpus of this test: fewer than 30 means files went missing.
  EXPECT_GE(ExampleFiles().size(), 30u);
}

TEST(RoundTrip, EveryExample) {
  auto fns = FindTextFunctions();
  if (!fns) GTEST_SKIP() << "tessel.ir.ParseText / tessel.ir.AsText are not registered";
  for (const fs::path& path : ExampleFiles()) {
    SCOPED_TRACE(path.filename().string());
    const std::string name = path.filename().string();
    try {
      Any first = fns->parse(ReadFile(path), name);
      std::string text1 = fns->print(first).cast<std::string>();
      Any second = fns->parse(text1, name + " (printed)");
      // Each parse creates its own free variables (`n = T.int32()`): map them onto each other.
      auto mismatch =
          tvm::ffi::StructuralEqual::GetFirstMismatch(first, second, /*map_free_vars=*/true);
      EXPECT_FALSE(mismatch.has_value()) << "parse(print(x)) differs from x at "
                                         << PathText((*mismatch).get<0>()) << "\nprinted:\n"
                                         << text1;
      std::string text2 = fns->print(second).cast<std::string>();
      EXPECT_EQ(text1, text2) << "printing is not a fixed point";
    } catch (const tvm::ffi::Error& e) {
      ADD_FAILURE() << e.kind() << ": " << e.message();
    }
  }
}

}  // namespace
}  // namespace ir
}  // namespace tessel
