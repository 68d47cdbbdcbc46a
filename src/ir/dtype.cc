// Text forms and ranges of data types.
#include <tessel/ir/dtype.h>

#include <cctype>
#include <limits>

namespace tessel {
namespace ir {

int64_t DataType::min_int() const {
  if (is_bool()) return 0;
  if (code() == kUInt) return 0;
  if (bits() >= 64) return std::numeric_limits<int64_t>::min();
  return -(int64_t{1} << (bits() - 1));
}

int64_t DataType::max_int() const {
  if (is_bool()) return 1;
  if (code() == kUInt) {
    if (bits() >= 64) return std::numeric_limits<int64_t>::max();
    return static_cast<int64_t>((uint64_t{1} << bits()) - 1);
  }
  if (bits() >= 64) return std::numeric_limits<int64_t>::max();
  return (int64_t{1} << (bits() - 1)) - 1;
}

std::string DataType::str() const {
  if (is_void()) return "void";
  std::string base;
  if (is_bool()) {
    base = "bool";
  } else if (is_handle()) {
    base = "handle";
  } else {
    switch (code()) {
      case kInt:
        base = "int";
        break;
      case kUInt:
        base = "uint";
        break;
      case kFloat:
        base = "float";
        break;
      case kBFloat:
        base = "bfloat";
        break;
      default:
        // Formats tessel does not name (fp8 variants, ...) keep tvm-ffi's spelling.
        return std::string(tvm::ffi::DLDataTypeToString(*this));
    }
    base += std::to_string(bits());
  }
  if (lanes() != 1) base += "x" + std::to_string(lanes());
  return base;
}

std::optional<DataType> DataType::Parse(const std::string& text) {
  if (text == "void") return DataType::Void();
  // Split "<name><bits>x<lanes>".
  size_t i = 0;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
  // "bool" has no bits, so its lanes suffix ("boolx4") would otherwise read as part of the name.
  if (text.compare(0, 5, "boolx") == 0) i = 4;
  std::string name = text.substr(0, i);
  size_t j = i;
  while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
  std::string bits_text = text.substr(i, j - i);
  int lanes = 1;
  if (j < text.size()) {
    if (text[j] != 'x' || j + 1 == text.size()) return std::nullopt;
    std::string lanes_text = text.substr(j + 1);
    for (char c : lanes_text) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    }
    if (lanes_text.size() > 5) return std::nullopt;
    lanes = std::stoi(lanes_text);
    if (lanes < 1 || lanes > 65535) return std::nullopt;
  }
  auto bits_or = [&](int dflt) -> int {
    if (bits_text.empty()) return dflt;
    if (bits_text.size() > 3) return -1;
    return std::stoi(bits_text);
  };
  if (name == "bool" && bits_text.empty()) return DataType::Bool(lanes);
  if (name == "handle" && bits_text.empty() && lanes == 1) return DataType::Handle();
  int bits = bits_or(32);
  auto valid_int = [](int b) { return b == 1 || b == 8 || b == 16 || b == 32 || b == 64; };
  if (name == "int" && valid_int(bits) && bits != 1) return DataType::Int(bits, lanes);
  if (name == "uint" && valid_int(bits)) return DataType::UInt(bits, lanes);
  if (name == "float" && (bits == 16 || bits == 32 || bits == 64)) {
    return DataType::Float(bits, lanes);
  }
  if (name == "bfloat" && bits == 16) return DataType::BFloat(bits, lanes);
  return std::nullopt;
}

}  // namespace ir
}  // namespace tessel
