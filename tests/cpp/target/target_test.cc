// Target strings: kinds, options, and the errors for everything else.
#include <gtest/gtest.h>
#include <tessel/target/target.h>

#include "../ir/expect_error.h"

namespace tessel {
namespace target {
namespace {

using testing::ExpectError;

TEST(Target, ParsesKindsAndOptions) {
  Target c = Target::Parse("c");
  EXPECT_EQ(c->kind, "c");
  EXPECT_EQ(c->attrs.size(), 0u);
  EXPECT_EQ(c->str, "c");
  Target cuda = Target::Parse("cuda -arch=sm_90");
  EXPECT_EQ(cuda->kind, "cuda");
  EXPECT_EQ(cuda->GetAttr("arch"), "sm_90");
  EXPECT_EQ(cuda->GetAttr("missing", "dflt"), "dflt");
  EXPECT_EQ(cuda->str, "cuda -arch=sm_90");
  EXPECT_EQ(Target::Parse("  cuda   -arch=sm_90a ")->GetAttr("arch"), "sm_90a");
  EXPECT_EQ(Target::Parse("metal")->kind, "metal");
  EXPECT_EQ(TargetKinds().size(), 3u);
}

TEST(Target, UnknownKindListsTheKinds) {
  ExpectError([] { Target::Parse("rocm"); }, "ValueError",
              {"unknown kind 'rocm'", "c, cuda, metal"});
  ExpectError([] { Target::Parse(""); }, "ValueError", {"empty target string", "c, cuda, metal"});
}

TEST(Target, BadOptionsAreNamed) {
  ExpectError([] { Target::Parse("cuda arch=sm_90"); }, "ValueError",
              {"malformed option 'arch=sm_90'"});
  ExpectError([] { Target::Parse("cuda -arch="); }, "ValueError", {"malformed option '-arch='"});
  ExpectError([] { Target::Parse("cuda -=x"); }, "ValueError", {"malformed option '-=x'"});
  ExpectError([] { Target::Parse("cuda --arch=sm_90"); }, "ValueError", {"malformed option"});
  ExpectError([] { Target::Parse("cuda -arhc=sm_90"); }, "ValueError",
              {"unknown option '-arhc' for kind cuda", "-arch"});
  ExpectError([] { Target::Parse("c -arch=sm_90"); }, "ValueError",
              {"unknown option '-arch' for kind c", "takes no options"});
  ExpectError([] { Target::Parse("cuda -arch=90"); }, "ValueError",
              {"-arch=90 is not valid", "sm_90"});
  ExpectError([] { Target::Parse("cuda -arch=sm_80 -arch=sm_90"); }, "ValueError",
              {"'-arch' given twice"});
}

}  // namespace
}  // namespace target
}  // namespace tessel
