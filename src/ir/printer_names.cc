// Lexical pieces of the printer: names (sanitized, de-duplicated), float and string literals.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "ir/printer_impl.h"

namespace tessel {
namespace ir {
namespace printer {
namespace {

// Python keywords, plus the names the text format itself uses at statement level.
const std::unordered_set<std::string>& ReservedNames() {
  static const std::unordered_set<std::string> kNames = {
      "False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
      "while",   "with",     "yield",    "T",      "I",    "range"};
  return kNames;
}

}  // namespace

std::string FloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest digits that round-trip, then laid out as Python's repr does: positional notation
  // for decimal exponents in [-4, 16), scientific with a signed two-digit exponent otherwise.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool negative = !sci.empty() && sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  int exp = std::atoi(sci.c_str() + e_pos + 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits.push_back(c);
  }
  std::string text = negative ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      text += "0.";
      text.append(static_cast<size_t>(-exp - 1), '0');
      text += digits;
    } else if (static_cast<int>(digits.size()) <= exp + 1) {
      text += digits;
      text.append(static_cast<size_t>(exp + 1) - digits.size(), '0');
      text += ".0";
    } else {
      text += digits.substr(0, exp + 1);
      text += '.';
      text += digits.substr(exp + 1);
    }
  } else {
    text += digits.substr(0, 1);
    if (digits.size() > 1) {
      text += '.';
      text += digits.substr(1);
    }
    text += exp < 0 ? "e-" : "e+";
    int mag = exp < 0 ? -exp : exp;
    if (mag < 10) text += '0';
    text += std::to_string(mag);
  }
  return text;
}

void AppendStringLiteral(std::string* out, const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '"':
        out->append("\\\"");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        // Bytes >= 0x80 pass through: the text is UTF-8, as Python source is.
        if (c < 0x20 || c == 0x7f) {
          out->append("\\x");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

std::string SanitizeName(const std::string& name) {
  std::string s;
  s.reserve(name.size() + 1);
  for (char ch : name) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s.push_back(ok ? ch : '_');
  }
  if (s.empty()) return "v";
  if (s[0] >= '0' && s[0] <= '9') s.insert(s.begin(), '_');
  return s;
}

const std::string& NameTable::Get(const Object* obj, const std::string& hint) {
  auto it = names_.find(obj);
  if (it != names_.end()) return it->second;
  std::string base = SanitizeName(hint);
  std::string name = base;
  if (used_.count(name) || ReservedNames().count(name)) {
    // The per-base counter keeps a run of equal hints linear rather than quadratic.
    int& next = next_suffix_[base];
    do {
      name = base + "_" + std::to_string(++next);
    } while (used_.count(name) || ReservedNames().count(name));
  }
  used_.insert(name);
  return names_.emplace(obj, std::move(name)).first->second;
}

void NameTable::SetAlias(const Object* obj, std::string text) { names_[obj] = std::move(text); }

const std::string* NameTable::Find(const Object* obj) const {
  auto it = names_.find(obj);
  return it == names_.end() ? nullptr : &it->second;
}

}  // namespace printer
}  // namespace ir
}  // namespace tessel
