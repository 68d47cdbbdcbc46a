// ExpectError: the check the IR tests use for constructors and helpers that must refuse input.
#ifndef TESSEL_TESTS_CPP_IR_EXPECT_ERROR_H_
#define TESSEL_TESTS_CPP_IR_EXPECT_ERROR_H_

#include <gtest/gtest.h>
#include <tvm/ffi/error.h>

#include <functional>
#include <initializer_list>
#include <string>

namespace tessel {
namespace testing {

// Runs `f`, which must throw a tvm-ffi error of `kind` whose message contains every `fact`.
inline void ExpectError(const std::function<void()>& f, const std::string& kind,
                        std::initializer_list<std::string> facts) {
  try {
    f();
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.message();
    for (const std::string& fact : facts) {
      EXPECT_NE(e.message().find(fact), std::string::npos)
          << "message '" << e.message() << "' lacks '" << fact << "'";
    }
    return;
  }
  ADD_FAILURE() << "expected a " << kind << " error";
}

}  // namespace testing
}  // namespace tessel

#endif  // TESSEL_TESTS_CPP_IR_EXPECT_ERROR_H_
