// Helpers for pass tests written as text: parse a function, run a pass, compare with the expected
// text structurally (printing both and the first difference on failure), and check that the
// verifier accepts the result.
#ifndef TESSEL_TESTS_TRANSFORM_EXPECT_PASS_H_
#define TESSEL_TESTS_TRANSFORM_EXPECT_PASS_H_

#include <gtest/gtest.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/verify_well_formed.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <functional>
#include <string>

namespace tessel {
namespace testing {

// "<root>.body.seq[2].value": where two objects first differ.
inline std::string MismatchPath(const tvm::ffi::reflection::AccessPath& path) {
  using tvm::ffi::reflection::AccessKind;
  std::string out = "<root>";
  for (const auto& step : path->ToSteps()) {
    if (step->kind == AccessKind::kAttr || step->kind == AccessKind::kAttrMissing) {
      out += "." + step->key.cast<std::string>();
    } else if (step->kind == AccessKind::kArrayItem ||
               step->kind == AccessKind::kArrayItemMissing) {
      out += "[" + std::to_string(step->key.cast<int64_t>()) + "]";
    } else {
      out += "[" + step->key.GetTypeKey() + " key]";
    }
  }
  return out;
}

inline ir::PrimFunc ParseFunc(const std::string& text) {
  ir::ObjectRef parsed = ir::ParseText(text);
  auto f = parsed.as<ir::PrimFunc>();
  if (!f) ADD_FAILURE() << "not a function:\n" << text;
  return f ? *f : ir::PrimFunc();
}

// The verifier's errors, one per line (empty when it accepts the function).
inline std::string VerifyText(const ir::PrimFunc& f) {
  std::string out;
  for (const auto& e : transform::VerifyWellFormed(f)) out += e.ToString() + "\n";
  return out;
}

// pass(before) must equal expected (free variables mapped onto each other) and verify.
inline void ExpectPass(const std::function<ir::PrimFunc(const ir::PrimFunc&)>& pass,
                       const std::string& before, const std::string& expected) {
  ir::PrimFunc in = ParseFunc(before), want = ParseFunc(expected);
  ir::PrimFunc got = pass(in);
  auto mismatch = tvm::ffi::StructuralEqual::GetFirstMismatch(got, want, /*map_free_vars=*/true);
  EXPECT_FALSE(mismatch.has_value())
      << "first difference at " << MismatchPath((*mismatch).get<0>()) << "\ngot:\n"
      << ir::AsText(got) << "\nexpected:\n"
      << ir::AsText(want);
  EXPECT_EQ(VerifyText(got), "") << ir::AsText(got);
}

// pass(text) returns its input object.
inline void ExpectUnchanged(const std::function<ir::PrimFunc(const ir::PrimFunc&)>& pass,
                            const std::string& text) {
  ir::PrimFunc in = ParseFunc(text);
  ir::PrimFunc got = pass(in);
  EXPECT_TRUE(got.same_as(in)) << "changed into:\n" << ir::AsText(got);
}

}  // namespace testing
}  // namespace tessel

#endif  // TESSEL_TESTS_TRANSFORM_EXPECT_PASS_H_
