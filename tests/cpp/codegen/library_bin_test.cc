// The __tvm_ffi__library_bin blob: byte-exact layout (tvm-ffi ProcessLibraryBin) and parsed back.
#include <gtest/gtest.h>
#include <tessel/codegen/library_bin.h>

#include <string>

#include "../ir/expect_error.h"

namespace tessel {
namespace {

using testing::ExpectError;

std::string U64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

TEST(LibraryBin, ByteExactLayout) {
  codegen::LibraryBinModule cuda;
  cuda.kind = "tessel_cuda";
  cuda.bytes = std::string("ab\0c", 4);
  std::string blob = codegen::LibraryBinImporting({cuda});
  std::string body = U64(3) + U64(0) + U64(1) + U64(1) +  // indptr [0, 1, 1]
                     U64(1) + U64(1) +                    // child_indices [1]
                     U64(4) + "_lib" +                    // module 0: the library itself
                     U64(11) + "tessel_cuda" + U64(4) + std::string("ab\0c", 4);
  EXPECT_EQ(blob, U64(body.size()) + body);

  auto parsed = codegen::ParseLibraryBin(blob);
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].kind, "_lib");
  EXPECT_EQ(parsed[0].imports, std::vector<uint64_t>{1});
  EXPECT_EQ(parsed[1].kind, "tessel_cuda");
  EXPECT_EQ(parsed[1].bytes, cuda.bytes);
  EXPECT_TRUE(parsed[1].imports.empty());
  EXPECT_EQ(codegen::MakeLibraryBin(parsed), blob);
}

TEST(LibraryBin, CDefinition) {
  std::string c = codegen::LibraryBinCDefinition(std::string("\x01\xff", 2));
  EXPECT_NE(c.find("TVM_FFI_DLL_EXPORT const unsigned char __tvm_ffi__library_bin[2] = {"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find(" 1, 255,"), std::string::npos) << c;
}

TEST(LibraryBin, Errors) {
  codegen::LibraryBinModule lib;
  lib.kind = "_lib";
  lib.imports = {3};
  ExpectError([&] { codegen::MakeLibraryBin({lib}); }, "ValueError", {"imports index 3"});
  std::string blob = codegen::LibraryBinImporting({{"tessel_cuda", "xyz", {}}});
  ExpectError([&] { codegen::ParseLibraryBin(blob.substr(0, blob.size() - 1)); }, "ValueError",
              {"nbytes says"});
  std::string cut = blob.substr(0, blob.size() - 1);
  cut.replace(0, 8, U64(cut.size() - 8));
  ExpectError([&] { codegen::ParseLibraryBin(cut); }, "ValueError", {"truncated at module bytes"});
}

}  // namespace
}  // namespace tessel
