// Source positions and error reports of the text-format parser. Every parser error becomes one
// message `source:line:col: error: message`, the source line, and a caret under the column.
#ifndef TESSEL_SRC_IR_PARSER_DIAGNOSTICS_H_
#define TESSEL_SRC_IR_PARSER_DIAGNOSTICS_H_

#include <tessel/ir/span.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {
namespace ir {
namespace parser {

// 1-based line and column (columns count bytes).
struct Loc {
  int line = 1;
  int col = 1;
};

// Thrown inside the parser; the entry points turn it into a tvm-ffi ValueError. A distinct type
// keeps parser errors apart from node-constructor errors, which get a location attached.
struct ParseError {
  std::string message;
};

// How deep statements, brackets and unary operators may nest; deeper input is an error rather than
// a stack overflow.
constexpr int kMaxNesting = 256;

// The most lines one source may have unless TESSEL_MAX_SOURCE_LINES says otherwise. Parsing keeps
// every token and syntax node at once: 10^6 lines of statements take about 30 s and 2 GiB, so 10^7
// would take minutes and tens of GiB. A larger text is refused before the lexer runs.
constexpr int64_t kDefaultMaxSourceLines = 1000000;
// The limit in force: TESSEL_MAX_SOURCE_LINES when set (a positive integer), else the default.
int64_t MaxSourceLines();

// The text being parsed and how its positions are reported. A Python function's source arrives
// dedented and cut at its `def`: line_offset and col_offset map positions back to the user's file.
class Source {
 public:
  // Throws ParseError when `text` has more lines than the limit (see kDefaultMaxSourceLines).
  Source(std::string name, const std::string& text, int line_offset = 0, int col_offset = 0);

  const std::string& text() const { return text_; }
  // The formatted report for `message` at `loc`.
  std::string Format(Loc loc, const std::string& message) const;
  [[noreturn]] void Fail(Loc loc, const std::string& message) const;
  // The span of `loc` in the user's coordinates (the position an error at loc reports).
  Span SpanAt(Loc loc) const;

 private:
  std::string name_;
  String span_name_;  // name_, shared by every span
  const std::string& text_;
  int line_offset_ = 0;
  int col_offset_ = 0;
  std::vector<size_t> line_starts_;
};

}  // namespace parser
}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_SRC_IR_PARSER_DIAGNOSTICS_H_
