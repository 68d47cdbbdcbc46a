// The op registry: lookup by name, one object per name, sorted listing, builtin accessors.
#include <gtest/gtest.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/op.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tessel {
namespace ir {
namespace {

TEST(OpRegistry, GetAndFind) {
  Op exp = Op::Get("exp");
  EXPECT_EQ(exp->name, "exp");
  EXPECT_EQ(exp->num_inputs, 1);
  EXPECT_TRUE(Op::Get("exp").same_as(exp)) << "one object per name";
  auto found = Op::Find("exp");
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(found.value().same_as(exp));
  EXPECT_FALSE(Op::Find("no_such_op").has_value());
}

TEST(OpRegistry, UnknownOpIsAnError) {
  try {
    Op::Get("no_such_op");
    ADD_FAILURE() << "expected an error";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_NE(e.message().find("no_such_op"), std::string::npos) << e.message();
  }
}

TEST(OpRegistry, ListNamesIsSortedAndComplete) {
  std::vector<std::string> names = Op::ListNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "names are unique";
  for (const char* expected : {"if_then_else", "shift_left", "bitwise_not", "call_extern", "exp",
                               "tanh", "sqrt", "popcount", "tvm_storage_sync"}) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), expected)) << expected;
  }
  for (const std::string& n : names) EXPECT_TRUE(Op::Find(n).has_value()) << n;
}

TEST(OpRegistry, BuiltinAccessors) {
#define TESSEL_X(Name)                                  \
  EXPECT_TRUE(builtin::Name().same_as(Op::Get(#Name))); \
  EXPECT_EQ(builtin::Name()->name, #Name);
  TESSEL_FOR_EACH_BUILTIN_ACCESSOR(TESSEL_X)
#undef TESSEL_X
}

TEST(OpRegistry, Attributes) {
  const Op& shl = builtin::shift_left();
  EXPECT_EQ(shl->print_style, OpPrintStyle::kInfix);
  EXPECT_EQ(shl->print_symbol, "<<");
  EXPECT_EQ(shl->num_inputs, 2);
  // Python's precedence: | binds weaker than ^, which is weaker than &, weaker than shifts.
  EXPECT_LT(builtin::bitwise_or()->print_precedence, builtin::bitwise_xor()->print_precedence);
  EXPECT_LT(builtin::bitwise_xor()->print_precedence, builtin::bitwise_and()->print_precedence);
  EXPECT_LT(builtin::bitwise_and()->print_precedence, builtin::shift_right()->print_precedence);
  EXPECT_EQ(builtin::bitwise_not()->print_style, OpPrintStyle::kPrefix);
  EXPECT_EQ(builtin::bitwise_not()->print_symbol, "~");
  EXPECT_EQ(builtin::call_extern()->print_style, OpPrintStyle::kCallWithDType);
  EXPECT_EQ(builtin::call_extern()->num_inputs, -1) << "variadic";
  EXPECT_EQ(builtin::call_extern()->effect, CallEffectKind::kOpaque);
  EXPECT_EQ(builtin::assume()->effect, CallEffectKind::kEmbedding);
  EXPECT_EQ(builtin::if_then_else()->effect, CallEffectKind::kPure);
  EXPECT_EQ(builtin::reinterpret()->print_style, OpPrintStyle::kCallWithDType);
}

TEST(OpRegistry, RegisteringANameTwiceIsAnError) {
  try {
    OpRegEntry dup("exp");
    ADD_FAILURE() << "expected an error";
  } catch (const tvm::ffi::Error& e) {
    EXPECT_NE(e.message().find("exp"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("twice"), std::string::npos) << e.message();
  }
  EXPECT_EQ(Op::Get("exp")->num_inputs, 1) << "the original registration is intact";
}

}  // namespace
}  // namespace ir
}  // namespace tessel
