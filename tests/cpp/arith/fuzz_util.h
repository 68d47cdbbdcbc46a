// Small helpers shared by the analyzer's fuzz and rule-check tests.
#ifndef TESSEL_TESTS_CPP_ARITH_FUZZ_UTIL_H_
#define TESSEL_TESTS_CPP_ARITH_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <string>

#include "eval.h"

namespace tessel {
namespace testing {

// Decimal text of a 128-bit value (iostreams do not print __int128).
inline std::string Str(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

// An integer environment variable (TESSEL_FUZZ_ITERS, TESSEL_FUZZ_SEED), or dflt when unset.
inline int64_t EnvInt(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : dflt;
}

}  // namespace testing
}  // namespace tessel

#endif  // TESSEL_TESTS_CPP_ARITH_FUZZ_UTIL_H_
