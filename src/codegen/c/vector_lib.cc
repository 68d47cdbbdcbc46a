// Vector values in the generated C are GCC/Clang vector extensions (`vector_size`), which both
// compilers lower to the host's SIMD registers. Only what maps one-to-one onto C semantics is
// written with vector operators (float arithmetic, unsigned wrapping arithmetic, bitwise ops,
// comparisons); everything else goes through a per-lane helper whose lane expression is the very
// scalar code the emitter writes for scalars, so scalar and vector semantics cannot drift apart.
#include <tvm/ffi/error.h>

#include "codegen/c/codegen_c.h"

namespace tessel {
namespace codegen {

std::string VectorLib::Type(DataType t) {
  TVM_FFI_ICHECK(t.is_vector());
  int lanes = t.lanes();
  if ((lanes & (lanes - 1)) != 0) {
    TVM_FFI_THROW(ValueError) << "codegen c: a vector of " << lanes
                              << " lanes (not a power of two) has no C vector type: " << t.str();
  }
  DataType lane = LaneType(t.element_of());
  std::string name = CType(t);
  if (!typedefs_.count(name)) {
    typedefs_[name] = "typedef " + CType(lane) + " " + name + " __attribute__((vector_size(" +
                      std::to_string(lane.bytes() * lanes) + ")));\n";
  }
  return name;
}

std::string VectorLib::LaneOf(int i, DataType t) {
  std::string a(1, static_cast<char>('a' + i));
  if (t.is_scalar()) return a;
  if (t.is_bool()) return "(" + a + "[k] != 0)";
  return a + "[k]";
}

std::string VectorLib::PerLane(const std::string& name, DataType result,
                               const std::vector<DataType>& arg_types,
                               const std::string& lane_expr) {
  if (helpers_.count(name)) return name;
  std::string rt = Type(result);
  std::ostringstream os;
  os << "TSL_HELPER " << rt << " " << name << "(";
  for (size_t i = 0; i < arg_types.size(); ++i) {
    if (i) os << ", ";
    std::string at = arg_types[i].is_vector() ? Type(arg_types[i]) : CType(arg_types[i]);
    os << at << " " << static_cast<char>('a' + i);
  }
  os << ") {\n  " << rt << " r;\n  for (int k = 0; k < " << result.lanes() << "; ++k) ";
  if (result.is_bool()) {
    os << "r[k] = (" << lane_expr << ") ? -1 : 0;\n";
  } else {
    os << "r[k] = " << lane_expr << ";\n";
  }
  os << "  return r;\n}\n";
  helpers_[name] = os.str();
  return name;
}

void VectorLib::Helper(const std::string& name, const std::string& text) {
  auto it = helpers_.find(name);
  if (it != helpers_.end()) {
    TVM_FFI_ICHECK(it->second == text) << "two vector helpers named " << name;
    return;
  }
  helpers_[name] = text;
}

std::string VectorLib::Text() const {
  std::string out;
  if (typedefs_.empty() && helpers_.empty()) return out;
  out += "/* ---- vector types and per-lane helpers used by this module ---- */\n";
  for (const auto& kv : typedefs_) out += kv.second;
  for (const auto& kv : helpers_) out += kv.second;
  return out + "\n";
}

}  // namespace codegen
}  // namespace tessel
