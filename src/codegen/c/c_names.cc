// C spellings shared by the kernel emitter and the host wrapper: types, identifiers, literals.
#include <tvm/ffi/error.h>

#include <cstdio>

#include "codegen/c/codegen_c.h"

namespace tessel {
namespace codegen {

void Unsupported(const std::string& what, const std::string& function) {
  TVM_FFI_THROW(ValueError) << "codegen c: " << what << " in " << function;
  TVM_FFI_UNREACHABLE();
}

std::string TypeSuffix(DataType t) {
  if (t.is_bool()) return "b";
  switch (t.code()) {
    case DataType::kInt:
      return "i" + std::to_string(t.bits());
    case DataType::kUInt:
      return "u" + std::to_string(t.bits());
    case DataType::kFloat:
      return "f" + std::to_string(t.bits());
    case DataType::kBFloat:
      return "bf" + std::to_string(t.bits());
    default:
      break;
  }
  TVM_FFI_THROW(ValueError) << "codegen c: no C type for " << t.str();
  TVM_FFI_UNREACHABLE();
}

DataType LaneType(DataType elem) {
  elem = elem.element_of();
  if (elem.is_bool()) return DataType::Int(32);
  if (elem.bits() == 16 && elem.is_floating()) return DataType::UInt(16);
  return elem;
}

static bool Supported(DataType t) {
  if (t.is_bool()) return true;
  if (t.is_int_or_uint())
    return t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  if (t.is_float()) return t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  if (t.is_bfloat()) return t.bits() == 16;
  return false;
}

std::string CType(DataType t) {
  if (t.is_handle()) return "void*";
  if (t.is_void()) return "void";
  if (!Supported(t.element_of())) {
    TVM_FFI_THROW(ValueError) << "codegen c: no C type for " << t.str();
  }
  if (t.is_vector()) {
    return "tsl_" + TypeSuffix(LaneType(t.element_of())) + "x" + std::to_string(t.lanes());
  }
  if (t.is_bool()) return "_Bool";
  if (t.is_floating() && t.bits() == 16) return "uint16_t";
  if (t.is_float()) return t.bits() == 32 ? "float" : "double";
  return std::string(t.is_int() ? "int" : "uint") + std::to_string(t.bits()) + "_t";
}

std::string StorageCType(DataType elem) {
  elem = elem.element_of();
  if (elem.is_bool()) return "uint8_t";
  return CType(elem);
}

std::string FormatEscape(const std::string& text) {
  std::string doubled;
  for (char c : text) {
    doubled += c;
    if (c == '%') doubled += '%';
  }
  std::string lit = CStringLiteral(doubled);
  return lit.substr(1, lit.size() - 2);
}

std::string CStringLiteral(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '?':
        // Avoids trigraphs.
        out += "\\?";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void PrintfArg(DataType t, const std::string& c, std::string* conv, std::string* arg) {
  if (t.is_bool()) {
    *conv = "%d";
    *arg = "(int)(" + c + ")";
  } else if (t.is_int()) {
    *conv = "%lld";
    *arg = "(long long)(" + c + ")";
  } else if (t.is_uint()) {
    *conv = "%llu";
    *arg = "(unsigned long long)(" + c + ")";
  } else if (t.is_floating() && t.bits() == 16) {
    *conv = "%.17g";
    *arg =
        "(double)" + std::string(t.is_bfloat() ? "tsl_bf16_to_f32(" : "tsl_f16_to_f32(") + c + ")";
  } else if (t.is_float()) {
    *conv = "%.17g";
    *arg = "(double)(" + c + ")";
  } else {
    *conv = "%p";
    *arg = "(void*)(" + c + ")";
  }
}

// ---- names ----

static const char* const kReserved[] = {
    // C11 keywords and common macros
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "asm", "typeof", "bool", "true", "false", "NULL",
    "NAN", "INFINITY", "errno", "assert", "main",
    // names of the wrapper's signature
    "self", "args", "num_args", "result",
    // libc / libm functions the generated code calls
    "memcpy", "memset", "malloc", "free", "aligned_alloc", "abort", "printf", "snprintf",
    "vsnprintf", "ldexpf", "floor", "floorf", "fmin", "fminf", "fmax", "fmaxf", "fmod", "fmodf",
    "fabs", "fabsf", "exp", "expf", "exp2", "exp2f", "log", "logf", "log2", "log2f", "log10",
    "log10f", "sqrt", "sqrtf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "tanh", "tanhf", "erf",
    "erff", "pow", "powf", "ceil", "ceilf", "round", "roundf", "trunc", "truncf", "isnan", "isinf",
    "nearbyint", "nearbyintf", "atan2", "atan2f", "asin", "acos", "atan", "sinh", "cosh", "expm1",
    "log1p", "cbrt", "hypot", "copysign", "lround"};

NameTable::NameTable() {
  for (const char* r : kReserved) used_.insert(r);
}

static std::string Sanitize(const std::string& hint) {
  std::string s;
  for (char c : hint) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty()) s = "v";
  if (s[0] >= '0' && s[0] <= '9') s = "v" + s;
  // tsl_/TSL_ belong to the prelude and __ / _X to the implementation.
  if (s.rfind("tsl_", 0) == 0 || s.rfind("TSL_", 0) == 0 || s[0] == '_') s = "v" + s;
  if (s.size() > 8 && s.rfind("int", 0) == 0 && s.substr(s.size() - 2) == "_t") s = "v" + s;
  return s;
}

std::string NameTable::Fresh(const std::string& hint) {
  std::string base = Sanitize(hint);
  std::string name = base;
  for (int k = 1; used_.count(name) || (name.size() > 2 && name.substr(name.size() - 2) == "_t");
       ++k) {
    name = base + "_" + std::to_string(k);
  }
  used_.insert(name);
  return name;
}

const std::string& NameTable::Get(const Var& v) {
  auto it = names_.find(v.get());
  if (it != names_.end()) return it->second;
  return names_[v.get()] = Fresh(std::string(v->name_hint));
}

}  // namespace codegen
}  // namespace tessel
