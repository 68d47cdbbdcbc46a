// Feeds arbitrary bytes to the parser: it must return an object or throw a tvm-ffi error, never
// crash, hang or overflow its stack. Build with -DTESSEL_BUILD_FUZZERS=ON (clang), then run
// `parser_fuzzer tests/fuzz/corpus`.
#include <tessel/ir/parser.h>
#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    tessel::ir::ParseText(text, "fuzz.py");
  } catch (const tvm::ffi::Error&) {
  }
  return 0;
}
