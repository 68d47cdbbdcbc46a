// DataType: text forms, parsing, predicates and integer ranges.
#include <gtest/gtest.h>
#include <tessel/ir/dtype.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tessel {
namespace ir {
namespace {

TEST(DType, TextForms) {
  EXPECT_EQ(DataType::Int(32).str(), "int32");
  EXPECT_EQ(DataType::Int(64).str(), "int64");
  EXPECT_EQ(DataType::UInt(8).str(), "uint8");
  EXPECT_EQ(DataType::Float(16, 4).str(), "float16x4");
  EXPECT_EQ(DataType::BFloat(16).str(), "bfloat16");
  EXPECT_EQ(DataType::Bool().str(), "bool");
  EXPECT_EQ(DataType::Bool(8).str(), "boolx8");
  EXPECT_EQ(DataType::Handle().str(), "handle");
  EXPECT_EQ(DataType::Void().str(), "void");
}

TEST(DType, ParseIsInverseOfStr) {
  for (DataType t : {DataType::Int(8), DataType::Int(16), DataType::Int(32), DataType::Int(64),
                     DataType::UInt(8), DataType::UInt(32), DataType::UInt(64), DataType::Float(16),
                     DataType::Float(32), DataType::Float(64), DataType::BFloat(16),
                     DataType::Bool(), DataType::Float(32, 8), DataType::Int(32, 4),
                     DataType::Bool(4), DataType::Handle(), DataType::Void()}) {
    auto parsed = DataType::Parse(t.str());
    ASSERT_TRUE(parsed.has_value()) << t.str();
    EXPECT_EQ(*parsed, t) << t.str();
  }
}

TEST(DType, ParseShorthands) {
  // A bare "int" / "float" / "uint" means 32 bits, as in TVM.
  EXPECT_EQ(DataType::Parse("int"), DataType::Int(32));
  EXPECT_EQ(DataType::Parse("float"), DataType::Float(32));
  EXPECT_EQ(DataType::Parse("uint"), DataType::UInt(32));
  EXPECT_EQ(DataType::Parse("float32x65535"), DataType::Float(32, 65535));
}

TEST(DType, ParseRejects) {
  for (const char* bad : {"", "int7", "int1", "float8", "float128", "bfloat32", "handlex4",
                          "int32x", "int32x0", "int32x65536", "int32x4x2", "foo32", "int32y4",
                          "bool8", "Int32", " int32", "int32 ", "int0000000032"}) {
    EXPECT_FALSE(DataType::Parse(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(DType, Predicates) {
  EXPECT_TRUE(DataType::Int(32).is_int());
  EXPECT_FALSE(DataType::Int(32).is_uint());
  EXPECT_TRUE(DataType::UInt(8).is_uint());
  EXPECT_TRUE(DataType::Bool().is_bool());
  EXPECT_FALSE(DataType::Bool().is_uint()) << "bool is uint1 but not an arithmetic uint";
  EXPECT_FALSE(DataType::Bool().is_int_or_uint());
  EXPECT_TRUE(DataType::BFloat(16).is_floating());
  EXPECT_FALSE(DataType::BFloat(16).is_float());
  EXPECT_TRUE(DataType::Handle().is_handle());
  EXPECT_FALSE(DataType::Handle().is_void());
  EXPECT_TRUE(DataType::Void().is_void());
  EXPECT_FALSE(DataType::Void().is_handle());
  EXPECT_TRUE(DataType::Float(32, 4).is_vector());
  EXPECT_EQ(DataType::Float(32, 4).element_of(), DataType::Float(32));
  EXPECT_EQ(DataType::Int(8).with_lanes(16), DataType::Int(8, 16));
  EXPECT_EQ(DataType::Int(8).with_bits(64), DataType::Int(64));
  EXPECT_EQ(DataType::Bool().bytes(), 1);
  EXPECT_EQ(DataType::Float(16).bytes(), 2);
  EXPECT_NE(DataType::Int(32), DataType::UInt(32));
}

TEST(DType, IntegerRanges) {
  EXPECT_EQ(DataType::Int(8).min_int(), -128);
  EXPECT_EQ(DataType::Int(8).max_int(), 127);
  EXPECT_EQ(DataType::UInt(8).min_int(), 0);
  EXPECT_EQ(DataType::UInt(8).max_int(), 255);
  EXPECT_EQ(DataType::Int(16).min_int(), -32768);
  EXPECT_EQ(DataType::UInt(16).max_int(), 65535);
  EXPECT_EQ(DataType::Int(32).min_int(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(DataType::Int(32).max_int(), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(DataType::UInt(32).max_int(), int64_t{4294967295});
  EXPECT_EQ(DataType::Int(64).min_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(DataType::Int(64).max_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(DataType::UInt(64).max_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(DataType::Bool().min_int(), 0);
  EXPECT_EQ(DataType::Bool().max_int(), 1);
}

}  // namespace
}  // namespace ir
}  // namespace tessel
