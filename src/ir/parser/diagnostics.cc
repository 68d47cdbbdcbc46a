// Formatting of parser errors.
#include "ir/parser/diagnostics.h"

#include <tessel/support/env.h>
#include <tvm/ffi/error.h>

#include <cstdlib>
#include <string>

namespace tessel {
namespace ir {
namespace parser {

int64_t MaxSourceLines() {
  std::string value = support::GetEnv("TESSEL_MAX_SOURCE_LINES");
  char* end = nullptr;
  long long n = std::strtoll(value.c_str(), &end, 10);
  if (end == value.c_str() || *end != '\0' || n <= 0) {
    TVM_FFI_THROW(ValueError) << "environment variable TESSEL_MAX_SOURCE_LINES=" << value
                              << " is not a positive number of lines";
  }
  return n;
}

Source::Source(std::string name, const std::string& text, int line_offset, int col_offset)
    : name_(std::move(name)),
      span_name_(name_),
      text_(text),
      line_offset_(line_offset),
      col_offset_(col_offset) {
  int64_t limit = MaxSourceLines();
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] != '\n') continue;
    // A last line without its newline counts too, so a text ending in '\n' is the edge case.
    if (static_cast<int64_t>(line_starts_.size()) >= limit && i + 1 < text_.size()) {
      throw ParseError{name_ + ": error: the text has more than " + std::to_string(limit) +
                       " lines, the parser's limit (TESSEL_MAX_SOURCE_LINES, default " +
                       std::to_string(kDefaultMaxSourceLines) + ")"};
    }
    line_starts_.push_back(i + 1);
  }
}

std::string Source::Format(Loc loc, const std::string& message) const {
  std::string out = name_ + ":" + std::to_string(loc.line + line_offset_) + ":" +
                    std::to_string(loc.col + col_offset_) + ": error: " + message + "\n";
  std::string line;
  if (loc.line >= 1 && static_cast<size_t>(loc.line) <= line_starts_.size()) {
    size_t begin = line_starts_[loc.line - 1];
    size_t end = text_.find('\n', begin);
    if (end == std::string::npos) end = text_.size();
    line = text_.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }
  // The dedented part is put back, so the line reads as in the user's file.
  out += std::string(col_offset_, ' ') + line + "\n";
  out += std::string(col_offset_ + (loc.col > 1 ? loc.col - 1 : 0), ' ') + "^";
  return out;
}

Span Source::SpanAt(Loc loc) const {
  return Span(span_name_, loc.line + line_offset_, loc.col + col_offset_);
}

void Source::Fail(Loc loc, const std::string& message) const {
  throw ParseError{Format(loc, message)};
}

}  // namespace parser
}  // namespace ir
}  // namespace tessel
