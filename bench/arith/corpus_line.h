// Reading one line of a bench corpus (bench/arith/*.txt): fields separated by " ; ", blank lines
// and `#` comments skipped by the caller when SplitCorpusLine returns no fields.
#ifndef TESSEL_BENCH_ARITH_CORPUS_LINE_H_
#define TESSEL_BENCH_ARITH_CORPUS_LINE_H_

#include <string>
#include <vector>

namespace tessel {
namespace bench {

inline std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The trimmed " ; "-separated fields of a line; empty for a blank line or a comment.
inline std::vector<std::string> SplitCorpusLine(const std::string& raw) {
  std::string line = Trim(raw);
  std::vector<std::string> fields;
  if (line.empty() || line[0] == '#') return fields;
  for (size_t pos = 0;;) {
    size_t sep = line.find(" ; ", pos);
    fields.push_back(Trim(line.substr(pos, sep == std::string::npos ? sep : sep - pos)));
    if (sep == std::string::npos) break;
    pos = sep + 3;
  }
  return fields;
}

}  // namespace bench
}  // namespace tessel

#endif  // TESSEL_BENCH_ARITH_CORPUS_LINE_H_
