#include "msl_source.h"

#include <tvm/ffi/error.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace tessel {
namespace metal_emu {

namespace {

// ---- tokens of the source with comments, string and character literals blanked ----

struct Token {
  enum Kind { kIdent, kNumber, kPunct } kind;
  size_t begin, end;  // offsets in the source
  int line;
  std::string text;
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The source with every comment and literal replaced by spaces (newlines kept), so that a scan
// for code never matches inside them.
std::string CodeMask(const std::string& s) {
  std::string m = s;
  size_t i = 0, n = s.size();
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < n; ++k)
      if (m[k] != '\n') m[k] = ' ';
  };
  while (i < n) {
    if (s.compare(i, 2, "//") == 0) {
      size_t e = s.find('\n', i);
      e = e == std::string::npos ? n : e;
      blank(i, e);
      i = e;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t e = s.find("*/", i + 2);
      e = e == std::string::npos ? n : e + 2;
      blank(i, e);
      i = e;
    } else if (s[i] == '"' || (s[i] == '\'' && (i == 0 || !IsIdentChar(s[i - 1])))) {
      char q = s[i];
      size_t e = i + 1;
      while (e < n && s[e] != q && s[e] != '\n') e += s[e] == '\\' ? 2 : 1;
      blank(i + 1, std::min(e, n));
      i = std::min(e + 1, n);
    } else {
      ++i;
    }
  }
  return m;
}

std::vector<Token> Tokenize(const std::string& m) {
  std::vector<Token> out;
  int line = 1;
  size_t i = 0, n = m.size();
  bool line_start = true;
  while (i < n) {
    char c = m[i];
    if (c == '\n') {
      ++line;
      ++i;
      line_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '#' && line_start) {  // a preprocessor directive, continuation lines included
      while (i < n && m[i] != '\n') {
        if (m[i] == '\\' && i + 1 < n && m[i + 1] == '\n') {
          ++line;
          ++i;
        }
        ++i;
      }
      continue;
    }
    line_start = false;
    size_t b = i;
    Token::Kind kind;
    if (IsIdentStart(c)) {
      while (i < n && IsIdentChar(m[i])) ++i;
      kind = Token::kIdent;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(m[i + 1])))) {
      while (i < n && (IsIdentChar(m[i]) || m[i] == '.' ||
                       ((m[i] == '+' || m[i] == '-') && std::strchr("eEpP", m[i - 1])))) {
        ++i;
      }
      kind = Token::kNumber;
    } else if (c == ':' && i + 1 < n && m[i + 1] == ':') {
      i += 2;
      kind = Token::kPunct;
    } else {
      ++i;
      kind = Token::kPunct;
    }
    out.push_back(Token{kind, b, i, line, m.substr(b, i - b)});
  }
  return out;
}

[[noreturn]] void Fail(int line, const std::string& message) {
  TVM_FFI_THROW(RuntimeError) << "MSL line " << line << ": " << message;
}

const std::set<std::string>& AddressSpaces() {
  static const std::set<std::string> kWords = {
      "device",   "constant",   "threadgroup", "thread", "threadgroup_imageblock",
      "ray_data", "object_data"};
  return kWords;
}

// The MSL type names the address-space check knows (plus the source's own structs).
std::set<std::string> KnownTypes() {
  std::set<std::string> t = {"void",        "int8_t",      "int16_t",      "int32_t",
                             "int64_t",     "uint8_t",     "uint16_t",     "uint32_t",
                             "uint64_t",    "size_t",      "ptrdiff_t",    "atomic_int",
                             "atomic_uint", "atomic_bool", "atomic_float", "atomic_ulong"};
  for (const char* s : {"bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                        "half", "bfloat", "float"}) {
    t.insert(s);
    for (const char* n : {"2", "3", "4"}) {
      t.insert(std::string(s) + n);
      t.insert(std::string("packed_") + s + n);
    }
  }
  return t;
}

// The trampoline's argument for a built-in attribute ("" for an unknown one).
std::string BuiltinExpr(const std::string& what) {
  static const std::vector<std::pair<std::string, std::string>> kTable = {
      {"threadgroup_position_in_grid", "P:group_id"},
      {"threadgroups_per_grid", "P:groups"},
      {"thread_position_in_threadgroup", "P:thread_id"},
      {"threads_per_threadgroup", "P:group_size"},
      {"dispatch_threads_per_threadgroup", "P:group_size"},
      {"thread_position_in_grid", "P:grid_thread"},
      {"threads_per_grid", "P:grid_size"},
      {"thread_index_in_threadgroup", "I:thread_index"},
      {"thread_index_in_simdgroup", "I:simd_lane"},
      {"simdgroup_index_in_threadgroup", "I:simd_group"},
      {"simdgroups_per_threadgroup", "I:simd_groups"},
      {"dispatch_simdgroups_per_threadgroup", "I:simd_groups"},
      {"threads_per_simdgroup", "I:simd_width"},
      {"thread_execution_width", "I:simd_width"},
      {"thread_index_in_quadgroup", "I:thread_index % 4"},
      {"quadgroup_index_in_threadgroup", "I:thread_index / 4"},
  };
  for (const auto& [name, expr] : kTable)
    if (name == what) return expr;
  return std::string();
}

// ---- the translator ----

class Translator {
 public:
  Translator(const std::string& source, std::string file_name)
      : src_(source), file_(std::move(file_name)), toks_(Tokenize(CodeMask(source))) {}

  MslTranslation Run() {
    CollectStructs();
    Lint();
    for (size_t i = 0; i + 3 < toks_.size(); ++i) {
      if (Is(i, "kernel") && Is(i + 1, "void") && toks_[i + 2].kind == Token::kIdent &&
          Is(i + 3, "(")) {
        i = ParseKernel(i);
      }
    }
    CheckStrayThreadgroupDecls();
    MslTranslation out;
    out.cxx = ApplyEdits() + Trampolines();
    out.kernels = std::move(kernels_);
    for (const Token& t : toks_)
      out.uses_bfloat |= t.kind == Token::kIdent && t.text.rfind("bfloat", 0) == 0;
    return out;
  }

 private:
  struct Edit {
    size_t begin, end;
    std::string text;
  };

  bool Is(size_t i, const char* text) const { return i < toks_.size() && toks_[i].text == text; }

  // The index of the token that closes the bracket opened at `open`.
  size_t Match(size_t open) const {
    const std::string& o = toks_[open].text;
    std::string c = o == "(" ? ")" : o == "[" ? "]" : o == "{" ? "}" : ">";
    int depth = 0;
    for (size_t k = open; k < toks_.size(); ++k) {
      if (toks_[k].text == o) ++depth;
      if (toks_[k].text == c && --depth == 0) return k;
    }
    Fail(toks_[open].line, "unbalanced '" + o + "'");
  }

  std::string Text(size_t first, size_t last) const {  // tokens [first, last], as written
    return src_.substr(toks_[first].begin, toks_[last].end - toks_[first].begin);
  }

  void Blank(size_t first, size_t last) {
    std::string text = src_.substr(toks_[first].begin, toks_[last].end - toks_[first].begin);
    for (char& ch : text)
      if (ch != '\n') ch = ' ';
    edits_.push_back(Edit{toks_[first].begin, toks_[last].end, text});
  }

  // The source's struct names (types for the address-space check) and the data members of each
  // struct definition (for the argument struct's layout table).
  void CollectStructs() {
    types_ = KnownTypes();
    for (size_t i = 0; i + 1 < toks_.size(); ++i) {
      if (!(Is(i, "struct") || Is(i, "union")) || toks_[i + 1].kind != Token::kIdent) continue;
      types_.insert(toks_[i + 1].text);
      if (!Is(i + 2, "{")) continue;
      size_t close = Match(i + 2);
      std::vector<std::string>& fields = struct_fields_[toks_[i + 1].text];
      size_t start = i + 3;
      int depth = 0;
      bool method = false;
      for (size_t k = i + 3; k < close; ++k) {
        const std::string& t = toks_[k].text;
        if (t == "(" || t == "{") {
          ++depth;
          method = true;
        }
        if (t == ")" || t == "}") --depth;
        if (t == ";" && depth == 0) {
          // `T name;`, `T name[N];`: the last identifier before any '[' or ':'.
          std::string name;
          for (size_t m = start; m < k && !Is(m, "[") && !Is(m, ":"); ++m)
            if (toks_[m].kind == Token::kIdent) name = toks_[m].text;
          if (!method && !name.empty() && !Is(start, "static") && !Is(start, "using") &&
              !Is(start, "typedef"))
            fields.push_back(name);
          start = k + 1;
          method = false;
        }
      }
    }
  }

  // double, and pointer / reference types without an address space ("pointer type must have
  // explicit address space qualifier" in the Metal compiler).
  void Lint() {
    static const std::set<std::string> kQualifiers = {"const", "volatile", "unsigned", "signed",
                                                      "__restrict"};
    for (size_t i = 0; i < toks_.size(); ++i) {
      const Token& t = toks_[i];
      if (t.kind != Token::kIdent) continue;
      if (t.text == "double") Fail(t.line, "double is not a Metal type");
      if (!types_.count(t.text)) continue;
      size_t k = i + 1;
      while (k < toks_.size() && kQualifiers.count(toks_[k].text)) ++k;
      if (!(Is(k, "*") || (Is(k, "&") && !Is(k + 1, "&")))) continue;
      size_t j = i;
      while (j > 0) {
        const std::string& p = toks_[j - 1].text;
        if (kQualifiers.count(p) || p == "::" || p == "metal") {
          --j;
        } else {
          break;
        }
      }
      if (j > 0 && AddressSpaces().count(toks_[j - 1].text)) continue;
      Fail(t.line, std::string(toks_[k].text == "*" ? "pointer" : "reference") + " type '" +
                       Text(j, k) + "' has no address space (MSL needs device, constant, " +
                       "threadgroup or thread)");
    }
  }

  // Parses the kernel whose `kernel` token is at i; returns the index of its closing brace.
  size_t ParseKernel(size_t i) {
    MslKernel k;
    k.name = toks_[i + 2].text;
    k.line = toks_[i].line;
    // [[max_total_threads_per_threadgroup(N)]] right before `kernel`.
    if (i >= 2 && Is(i - 1, "]") && Is(i - 2, "]")) {
      size_t open = i - 2;
      while (open > 0 && !(Is(open, "[") && Is(open + 1, "["))) --open;
      for (size_t a = open + 2; a + 3 < i; ++a) {
        if (Is(a, "max_total_threads_per_threadgroup") && Is(a + 1, "(") &&
            toks_[a + 2].kind == Token::kNumber) {
          k.max_threads = static_cast<uint32_t>(std::stoul(toks_[a + 2].text));
        }
      }
      Blank(open, i - 1);
    }
    size_t open = i + 3, close = Match(open);
    // Parameters: split at commas outside brackets.
    size_t start = open + 1;
    int depth = 0;
    for (size_t p = open + 1; p <= close; ++p) {
      const std::string& s = toks_[p].text;
      if (s == "(" || s == "[" || s == "<") ++depth;
      if (s == ")" || s == "]" || s == ">") --depth;
      if ((s == "," && depth == 0) || p == close) {
        if (p > start) k.params.push_back(ParseParam(k, start, p - 1));
        start = p + 1;
      }
    }
    if (!Is(close + 1, "{")) Fail(toks_[close].line, "kernel " + k.name + " has no body");
    size_t body_end = Match(close + 1);
    for (size_t p = close + 2; p < body_end; ++p) {
      if (Is(p, "threadgroup")) {
        in_kernel_.insert(p);
        MslThreadgroupDecl d;
        size_t end = 0;
        if (ReadThreadgroupDecl(p, &d, &end)) {
          RewriteThreadgroupDecl(k.threadgroup.size(), p, end, d);
          k.threadgroup.push_back(d);
          p = end;
        }
      }
    }
    for (const MslParam& prm : k.params)
      k.dynamic_threadgroup |= prm.kind == ParamKind::kThreadgroup;
    for (const MslKernel& other : kernels_)
      if (other.name == k.name) Fail(k.line, "kernel " + k.name + " is defined twice");
    kernels_.push_back(std::move(k));
    return body_end;
  }

  MslParam ParseParam(const MslKernel& k, size_t first, size_t last) {
    MslParam p;
    p.line = toks_[first].line;
    size_t attr = first;
    while (attr < last && !(Is(attr, "[") && Is(attr + 1, "["))) ++attr;
    if (attr >= last)
      Fail(p.line,
           "kernel " + k.name + ": parameter '" + Text(first, last) + "' has no [[...]] attribute");
    size_t attr_end = Match(attr);  // the outer '[' matches the final ']'
    if (attr_end != last)
      Fail(p.line, "kernel " + k.name + ": parameter '" + Text(first, last) +
                       "' must end with exactly one attribute");
    if (attr == first || toks_[attr - 1].kind != Token::kIdent)
      Fail(p.line, "kernel " + k.name + ": cannot read the parameter '" + Text(first, last) + "'");
    p.name = toks_[attr - 1].text;
    if (attr - 1 == first)
      Fail(p.line, "kernel " + k.name + ": parameter " + toks_[first].text + " has no type");
    p.type = Text(first, attr - 2);
    p.attribute = Text(attr + 2, attr_end - 2);
    Blank(attr, attr_end);
    std::string what = toks_[attr + 2].text;
    bool has_index =
        Is(attr + 3, "(") && attr + 4 < attr_end && toks_[attr + 4].kind == Token::kNumber;
    std::string where = "kernel " + k.name + ", parameter " + p.name + ": ";
    bool pointer = false, reference = false;
    std::set<std::string> words;
    for (size_t t = first; t < attr - 1; ++t) {
      pointer |= Is(t, "*");
      reference |= Is(t, "&");
      words.insert(toks_[t].text);
    }
    if (what == "buffer" || what == "threadgroup") {
      if (!has_index) Fail(p.line, where + "[[" + what + "(index)]] needs an index");
      p.index = static_cast<uint32_t>(std::stoul(toks_[attr + 4].text));
    }
    if (what == "buffer") {
      if (!pointer && !reference) Fail(p.line, where + "a buffer is a pointer or a reference");
      if (!words.count("device") && !words.count("constant"))
        Fail(p.line, where + "a buffer needs the device or constant address space");
      if (p.index >= 31) Fail(p.line, where + "buffer index " + std::to_string(p.index) + " >= 31");
      p.kind = pointer ? ParamKind::kBuffer : ParamKind::kBufferReference;
      if (reference) {
        for (size_t t = first; t < attr - 1; ++t)
          if (struct_fields_.count(toks_[t].text)) p.struct_name = toks_[t].text;
      }
    } else if (what == "threadgroup") {
      if (!pointer || !words.count("threadgroup"))
        Fail(p.line, where + "[[threadgroup(i)]] takes a threadgroup pointer");
      if (p.index != 0)
        Fail(p.line, where + "only [[threadgroup(0)]] is supported (one dynamic block)");
      p.kind = ParamKind::kThreadgroup;
    } else if (BuiltinExpr(what).empty()) {
      Fail(p.line, where + "unsupported attribute [[" + p.attribute + "]]");
    } else {
      if (pointer || reference) Fail(p.line, where + "[[" + what + "]] is a value, not a pointer");
      p.kind = ParamKind::kBuiltin;
    }
    for (const MslParam& other : k.params) {
      if (other.kind == p.kind && p.kind != ParamKind::kBuiltin && other.index == p.index)
        Fail(p.line, where + "[[" + p.attribute + "]] is bound twice");
    }
    return p;
  }

 private:
  // Reads `threadgroup TYPE NAME DIMS;` starting at token p. False when the word starts a pointer
  // or reference type (a cast or a pointer declaration), not a variable; errors for forms the
  // harness cannot give memory to.
  bool ReadThreadgroupDecl(size_t p, MslThreadgroupDecl* d, size_t* end) {
    size_t k = p + 1;
    std::vector<size_t> words;
    while (k < toks_.size()) {
      if (toks_[k].kind == Token::kIdent || Is(k, "::")) {
        if (toks_[k].kind == Token::kIdent) words.push_back(k);
        ++k;
      } else if (Is(k, "<")) {
        k = Match(k) + 1;
      } else {
        break;
      }
    }
    if (k >= toks_.size() || Is(k, "*") || Is(k, "&") || Is(k, ")") || Is(k, ",") || Is(k, ">"))
      return false;
    int line = toks_[p].line;
    if (words.size() < 2 || !(Is(k, "[") || Is(k, ";") || Is(k, "=")))
      Fail(line, "cannot read the threadgroup declaration '" +
                     Text(p, std::min(k, toks_.size() - 1)) + "'");
    size_t name = words.back();
    d->type = Text(p + 1, name - 1);
    d->name = toks_[name].text;
    d->line = line;
    while (Is(k, "[")) {
      if (!(toks_[k + 1].kind == Token::kNumber && Is(k + 2, "]")))
        Fail(line, "threadgroup array " + d->name + ": sizes must be integer literals here");
      d->dims += "[" + toks_[k + 1].text + "]";
      k += 3;
    }
    if (Is(k, "=") || Is(k, "{"))
      Fail(line, "threadgroup variable " + d->name + " cannot have an initializer");
    if (Is(k, ",")) Fail(line, "declare one threadgroup variable per statement (" + d->name + ")");
    if (!Is(k, ";")) Fail(line, "cannot read the threadgroup declaration of " + d->name);
    *end = k;
    return true;
  }

  // `threadgroup float red_buf[64];` -> a reference to the harness's memory of the same type.
  void RewriteThreadgroupDecl(size_t slot, size_t p, size_t end, const MslThreadgroupDecl& d) {
    std::ostringstream os;
    std::string ptr = d.dims.empty() ? d.type + "*" : d.type + "(*)" + d.dims;
    std::string ref =
        d.dims.empty() ? d.type + "& " + d.name : d.type + " (&" + d.name + ")" + d.dims;
    os << "threadgroup " << ref << " = *reinterpret_cast<" << ptr
       << ">(::metal_emu::threadgroup_slot(" << slot << "));";
    std::string original = Text(p, end);
    os << std::string(std::count(original.begin(), original.end(), '\n'), '\n');
    edits_.push_back(Edit{toks_[p].begin, toks_[end].end, os.str()});
  }

  void CheckStrayThreadgroupDecls() {
    for (size_t p = 0; p < toks_.size(); ++p) {
      if (!Is(p, "threadgroup") || in_kernel_.count(p)) continue;
      if (p + 1 < toks_.size() && Is(p + 1, "(")) continue;  // [[threadgroup(0)]]
      MslThreadgroupDecl d;
      size_t end;
      if (ReadThreadgroupDecl(p, &d, &end))
        Fail(d.line, "threadgroup variable " + d.name + " outside a kernel function");
    }
  }

  std::string ApplyEdits() const {
    std::vector<Edit> edits = edits_;
    std::sort(edits.begin(), edits.end(),
              [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string out;
    size_t at = 0;
    for (const Edit& e : edits) {
      out.append(src_, at, e.begin - at);
      out += e.text;
      at = e.end;
    }
    out.append(src_, at, std::string::npos);
    return out;
  }

  std::string Trampolines() {
    std::ostringstream os;
    os << "\n\n// ---- metal_emu: one trampoline per kernel, binding parameters by attribute ----\n"
       << "namespace {\n";
    for (size_t ki = 0; ki < kernels_.size(); ++ki) {
      const MslKernel& k = kernels_[ki];
      os << "void tsl_emu_entry_" << ki << "(const TslEmuThreadArgs* tsl_t) {\n  " << k.name << "(";
      for (size_t pi = 0; pi < k.params.size(); ++pi) {
        const MslParam& p = k.params[pi];
        os << (pi ? "," : "") << "\n#line " << p.line << " \"" << file_ << "\"\n      ";
        switch (p.kind) {
          case ParamKind::kBuffer:
            os << "::metal_emu::bind_pointer<" << p.type << ">(tsl_t->buffers[" << p.index << "])";
            break;
          case ParamKind::kBufferReference:
            os << "::metal_emu::bind_reference<" << p.type << ">(tsl_t->buffers[" << p.index
               << "])";
            break;
          case ParamKind::kThreadgroup:
            os << "::metal_emu::bind_pointer<" << p.type << ">(tsl_t->dynamic_threadgroup)";
            break;
          case ParamKind::kBuiltin: {
            std::string expr = BuiltinExpr(p.attribute);
            os << (expr[0] == 'P' ? "::metal_emu::bind_position<" : "::metal_emu::bind_index<")
               << p.type << ">(tsl_t->" << expr.substr(2) << ")";
            break;
          }
        }
      }
      os << ");\n#line 1 \"metal_emu_trampolines\"\n}\n";
      os << "const uint32_t tsl_emu_refs_" << ki << "[] = {";
      for (size_t pi = 0; pi < k.params.size(); ++pi) {
        os << "\n#line " << k.params[pi].line << " \"" << file_
           << "\"\n    ::metal_emu::reference_bytes<" << k.params[pi].type << ">(),";
      }
      os << " 0};\n";
      os << "const TslEmuThreadgroupDecl tsl_emu_tg_" << ki << "[] = {";
      for (const MslThreadgroupDecl& d : k.threadgroup) {
        os << "\n#line " << d.line << " \"" << file_ << "\"\n    {\"" << d.name << "\", sizeof("
           << d.type << d.dims << "), alignof(" << d.type << ")},";
      }
      os << " {nullptr, 0, 0}};\n#line 1 \"metal_emu_trampolines\"\n";
      size_t nfields = 0;
      os << "const TslEmuField tsl_emu_fields_" << ki << "[] = {";
      for (size_t pi = 0; pi < k.params.size(); ++pi) {
        const std::string& s = k.params[pi].struct_name;
        if (s.empty()) continue;
        for (const std::string& f : struct_fields_.at(s)) {
          os << "\n    {" << pi << ", \"" << f << "\", __builtin_offsetof(" << s << ", " << f
             << "), sizeof(static_cast<" << s << "*>(nullptr)->" << f << ")},";
          ++nfields;
        }
      }
      os << " {0, nullptr, 0, 0}};\n";
      nfields_.push_back(nfields);
    }
    os << "const TslEmuKernel tsl_emu_kernel_table[] = {";
    for (size_t ki = 0; ki < kernels_.size(); ++ki) {
      const MslKernel& k = kernels_[ki];
      os << "\n    {\"" << k.name << "\", &tsl_emu_entry_" << ki << ", tsl_emu_refs_" << ki << ", "
         << k.params.size() << ", tsl_emu_tg_" << ki << ", " << k.threadgroup.size()
         << ", tsl_emu_fields_" << ki << ", " << nfields_[ki] << "},";
    }
    os << "\n    {nullptr, nullptr, nullptr, 0, nullptr, 0, nullptr, 0}};\n}  // namespace\n"
       << "extern \"C\" __attribute__((visibility(\"default\"))) const TslEmuKernel* "
       << "tessel_metal_emu_kernels(uint32_t abi, const TslEmuHost* host, uint32_t* count) {\n"
       << "  if (abi != TESSEL_METAL_EMU_ABI_VERSION) return nullptr;\n"
       << "  ::metal_emu::g_host = host;\n"
       << "  *count = " << kernels_.size() << ";\n"
       << "  return tsl_emu_kernel_table;\n}\n";
    return os.str();
  }

  const std::string& src_;
  std::string file_;
  std::vector<Token> toks_;
  std::set<std::string> types_;
  std::map<std::string, std::vector<std::string>> struct_fields_;
  std::vector<size_t> nfields_;  // per kernel, set by Trampolines
  std::set<size_t> in_kernel_;   // `threadgroup` tokens inside kernel bodies
  std::vector<Edit> edits_;
  std::vector<MslKernel> kernels_;
};

}  // namespace

MslTranslation TranslateMsl(const std::string& source, const std::string& file_name) {
  if (source.find("<metal_stdlib>") == std::string::npos)
    Fail(1, "the source does not include <metal_stdlib>");
  return Translator(source, file_name).Run();
}

}  // namespace metal_emu
}  // namespace tessel
