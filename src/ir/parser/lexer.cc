// The tokenizer. One pass over the text; indentation follows Python: a stack of indentation
// widths, INDENT when a logical line starts deeper, one DEDENT per level it leaves. Newlines
// inside brackets and after a backslash join lines.
#include "ir/parser/lexer.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace tessel {
namespace ir {
namespace parser {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Operators, longest first so that "//" wins over "/".
const char* const kOperators[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->",
                                  "+=", "-=", "*=", "/=", "(",  ")",  "[",  "]",  "{",
                                  "}",  ",",  ":",  ".",  ";",  "@",  "=",  "+",  "-",
                                  "*",  "/",  "%",  "<",  ">",  "&",  "|",  "^",  "~"};

class Lexer {
 public:
  explicit Lexer(const Source& source) : src_(source), text_(source.text()) {}

  std::vector<Token> Run() {
    indents_.push_back(0);
    bool at_line_start = true;
    while (pos_ < text_.size()) {
      if (at_line_start && brackets_.empty()) {
        if (!HandleLineStart()) break;
        at_line_start = false;
        continue;
      }
      char c = text_[pos_];
      if (c == '\n') {
        if (brackets_.empty()) Emit(Tok::kNewline, "\n", Here());
        Advance();
        at_line_start = brackets_.empty();
        continue;
      }
      if (c == ' ' || c == '\r' || c == '\f') {
        Advance();
        continue;
      }
      if (c == '\t') src_.Fail(Here(), "tab character; indent and separate with spaces");
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') Advance();
        continue;
      }
      if (c == '\\') {
        Loc loc = Here();
        Advance();
        if (pos_ < text_.size() && text_[pos_] == '\r') Advance();
        if (pos_ >= text_.size() || text_[pos_] != '\n') {
          src_.Fail(loc, "a backslash must end the line");
        }
        Advance();
        continue;
      }
      if (IsIdentStart(c)) {
        LexName();
      } else if (IsDigit(c) || (c == '.' && pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
        LexNumber();
      } else if (c == '"' || c == '\'') {
        LexString();
      } else {
        LexOperator();
      }
    }
    if (!brackets_.empty()) {
      src_.Fail(brackets_.back().loc, "'" + brackets_.back().text + "' is never closed");
    }
    Loc end = Here();
    if (!tokens_.empty() && tokens_.back().kind != Tok::kNewline) Emit(Tok::kNewline, "\n", end);
    while (indents_.size() > 1) {
      indents_.pop_back();
      Emit(Tok::kDedent, "", end);
    }
    Emit(Tok::kEnd, "", end);
    return std::move(tokens_);
  }

 private:
  Loc Here() const { return Loc{line_, col_}; }

  void Advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  Token& Emit(Tok kind, std::string text, Loc loc) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.loc = loc;
    tokens_.push_back(std::move(t));
    return tokens_.back();
  }

  // Measures the indentation of a line; skips blank and comment-only lines. Returns false at the
  // end of the text.
  bool HandleLineStart() {
    while (true) {
      int width = 0;
      while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\f')) {
        Advance();
        ++width;
      }
      if (pos_ >= text_.size()) return false;
      char c = text_[pos_];
      if (c == '\t') src_.Fail(Here(), "tab in indentation; indent with spaces");
      if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
        Advance();
        c = '\n';
      }
      if (c == '\n' || c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') Advance();
        if (pos_ < text_.size()) Advance();
        continue;
      }
      Loc loc = Here();
      if (width > indents_.back()) {
        if (static_cast<int>(indents_.size()) > kMaxNesting) {
          src_.Fail(loc, "blocks nested deeper than " + std::to_string(kMaxNesting) + " levels");
        }
        indents_.push_back(width);
        Emit(Tok::kIndent, "", loc);
      } else {
        while (width < indents_.back()) {
          indents_.pop_back();
          Emit(Tok::kDedent, "", loc);
        }
        if (width != indents_.back()) {
          src_.Fail(loc, "unindent does not match any outer indentation level");
        }
      }
      return true;
    }
  }

  void LexName() {
    Loc loc = Here();
    size_t start = pos_;
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) Advance();
    Emit(Tok::kName, text_.substr(start, pos_ - start), loc);
  }

  void LexNumber() {
    Loc loc = Here();
    size_t start = pos_;
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X')) {
      Advance();
      Advance();
      uint64_t value = 0;
      bool any = false;
      while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
        char c = text_[pos_];
        int digit = IsDigit(c) ? c - '0' : (std::tolower(c) - 'a' + 10);
        if (value > (UINT64_MAX >> 4)) src_.Fail(loc, "integer literal is too large");
        value = value * 16 + digit;
        any = true;
        Advance();
      }
      if (!any) src_.Fail(loc, "hexadecimal literal without digits");
      CheckNumberEnd(loc);
      Emit(Tok::kInt, text_.substr(start, pos_ - start), loc).int_value = value;
      return;
    }
    bool is_float = false;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) Advance();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      Advance();
      while (pos_ < text_.size() && IsDigit(text_[pos_])) Advance();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_float = true;
      Advance();
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) Advance();
      if (pos_ >= text_.size() || !IsDigit(text_[pos_])) {
        src_.Fail(loc, "malformed exponent in number");
      }
      while (pos_ < text_.size() && IsDigit(text_[pos_])) Advance();
    }
    CheckNumberEnd(loc);
    std::string spelling = text_.substr(start, pos_ - start);
    if (is_float) {
      Emit(Tok::kFloat, spelling, loc).float_value = std::strtod(spelling.c_str(), nullptr);
      return;
    }
    uint64_t value = 0;
    for (char c : spelling) {
      uint64_t digit = static_cast<uint64_t>(c - '0');
      if (value > (UINT64_MAX - digit) / 10) src_.Fail(loc, "integer literal is too large");
      value = value * 10 + digit;
    }
    Emit(Tok::kInt, spelling, loc).int_value = value;
  }

  void CheckNumberEnd(Loc loc) {
    if (pos_ < text_.size() && IsIdentChar(text_[pos_])) {
      src_.Fail(loc, "invalid number literal");
    }
  }

  void LexString() {
    Loc loc = Here();
    char quote = text_[pos_];
    Advance();
    std::string value;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') {
        src_.Fail(loc, "unterminated string literal");
      }
      char c = text_[pos_];
      if (c == quote) {
        Advance();
        break;
      }
      if (c != '\\') {
        value.push_back(c);
        Advance();
        continue;
      }
      Loc esc = Here();
      Advance();
      if (pos_ >= text_.size()) src_.Fail(loc, "unterminated string literal");
      char e = text_[pos_];
      Advance();
      switch (e) {
        case 'n':
          value.push_back('\n');
          break;
        case 't':
          value.push_back('\t');
          break;
        case 'r':
          value.push_back('\r');
          break;
        case '0':
          value.push_back('\0');
          break;
        case 'a':
          value.push_back('\a');
          break;
        case 'b':
          value.push_back('\b');
          break;
        case 'f':
          value.push_back('\f');
          break;
        case 'v':
          value.push_back('\v');
          break;
        case '\\':
        case '\'':
        case '"':
          value.push_back(e);
          break;
        case '\n':
          break;  // line continuation inside a string
        case 'x':
          AppendUtf8(&value, ReadHex(2, esc));
          break;
        case 'u':
          AppendUtf8(&value, ReadHex(4, esc));
          break;
        case 'U': {
          uint32_t cp = ReadHex(8, esc);
          if (cp > 0x10FFFF) src_.Fail(esc, "invalid \\U escape");
          AppendUtf8(&value, cp);
          break;
        }
        default:
          src_.Fail(esc, "unknown escape sequence '\\" + CharText(pos_ - 1) + "'");
      }
    }
    Emit(Tok::kString, std::move(value), loc);
  }

  // The character starting at byte `at` as text for a message: its whole UTF-8 sequence, or \xNN
  // for a byte that does not start a valid one (a message must stay valid UTF-8).
  std::string CharText(size_t at) const {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(text_[i]); };
    unsigned char c = byte(at);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = n > 0 && at + n <= text_.size();
    for (size_t i = 1; ok && i < n; ++i) ok = (byte(at + i) >> 6) == 2;
    if (ok) return text_.substr(at, n);
    static const char* hex = "0123456789abcdef";
    return std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }

  uint32_t ReadHex(int digits, Loc esc) {
    uint32_t cp = 0;
    for (int i = 0; i < digits; ++i) {
      if (pos_ >= text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
        src_.Fail(esc, "truncated escape sequence");
      }
      char c = text_[pos_];
      cp = cp * 16 + static_cast<uint32_t>(IsDigit(c) ? c - '0' : std::tolower(c) - 'a' + 10);
      Advance();
    }
    return cp;
  }

  void LexOperator() {
    Loc loc = Here();
    for (const char* op : kOperators) {
      size_t n = std::strlen(op);
      if (text_.compare(pos_, n, op) != 0) continue;
      for (size_t i = 0; i < n; ++i) Advance();
      std::string s(op);
      if (s == "(" || s == "[" || s == "{") {
        if (static_cast<int>(brackets_.size()) >= kMaxNesting) {
          src_.Fail(loc, "brackets nested deeper than " + std::to_string(kMaxNesting) + " levels");
        }
        Token open;
        open.text = s;
        open.loc = loc;
        brackets_.push_back(open);
      } else if (s == ")" || s == "]" || s == "}") {
        const char* match = s == ")" ? "(" : s == "]" ? "[" : "{";
        if (brackets_.empty() || brackets_.back().text != match) {
          src_.Fail(loc, "unmatched '" + s + "'");
        }
        brackets_.pop_back();
      }
      Emit(Tok::kOp, s, loc);
      return;
    }
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c >= 0x20 && c < 0x7F) {
      src_.Fail(loc, "unexpected character '" + CharText(pos_) + "'");
    }
    char buf[8];
    std::snprintf(buf, sizeof(buf), "0x%02X", c);
    src_.Fail(loc, std::string("unexpected byte ") + buf + " outside a string or comment");
  }

  const Source& src_;
  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  std::vector<int> indents_;
  std::vector<Token> brackets_;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> Lex(const Source& source) { return Lexer(source).Run(); }

std::string Describe(const Token& token) {
  switch (token.kind) {
    case Tok::kEnd:
      return "end of input";
    case Tok::kNewline:
      return "end of line";
    case Tok::kIndent:
      return "indent";
    case Tok::kDedent:
      return "dedent";
    case Tok::kString:
      return "string literal";
    default:
      return "'" + token.text + "'";
  }
}

}  // namespace parser
}  // namespace ir
}  // namespace tessel
