// Constructors of the expression leaves and Range.
#include <tessel/ir/expr.h>
#include <tvm/ffi/error.h>

#include <cmath>

namespace tessel {
namespace ir {

PrimExpr::PrimExpr(int32_t value) : PrimExpr(IntImm(DataType::Int(32), value)) {}
PrimExpr::PrimExpr(float value) : PrimExpr(FloatImm(DataType::Float(32), value)) {}

IntImm::IntImm(DataType dtype, int64_t value) {
  if (!dtype.is_scalar() || !(dtype.is_int_or_uint() || dtype.is_bool())) {
    TVM_FFI_THROW(ValueError) << "IntImm: dtype must be a scalar integer or bool, got "
                              << dtype.str();
  }
  if (!(dtype.code() == DataType::kUInt && dtype.bits() == 64) &&
      (value < dtype.min_int() || value > dtype.max_int())) {
    TVM_FFI_THROW(ValueError) << "IntImm: value " << value << " does not fit in " << dtype.str()
                              << " [" << dtype.min_int() << ", " << dtype.max_int() << "]";
  }
  if (dtype.code() == DataType::kUInt && dtype.bits() == 64 && value < 0) {
    TVM_FFI_THROW(ValueError) << "IntImm: value " << value << " does not fit in uint64";
  }
  auto n = make_object<IntImmNode>();
  n->dtype = dtype;
  n->value = value;
  data_ = std::move(n);
}

FloatImm::FloatImm(DataType dtype, double value) {
  if (!dtype.is_scalar() || !dtype.is_floating()) {
    TVM_FFI_THROW(ValueError) << "FloatImm: dtype must be a scalar float, got " << dtype.str();
  }
  auto n = make_object<FloatImmNode>();
  n->dtype = dtype;
  n->value = value;
  data_ = std::move(n);
}

StringImm::StringImm(String value) {
  auto n = make_object<StringImmNode>();
  n->dtype = DataType::Handle();
  n->value = std::move(value);
  data_ = std::move(n);
}

Var::Var(String name_hint, DataType dtype) {
  if (dtype.is_void()) TVM_FFI_THROW(ValueError) << "Var " << name_hint << ": dtype is void";
  auto n = make_object<VarNode>();
  n->name_hint = std::move(name_hint);
  n->dtype = dtype;
  n->pointee = DataType::Void();
  data_ = std::move(n);
}

Var Var::Pointer(String name_hint, DataType pointee, String storage_scope) {
  auto n = make_object<VarNode>();
  n->name_hint = std::move(name_hint);
  n->dtype = DataType::Handle();
  n->pointee = pointee;
  n->storage_scope = std::move(storage_scope);
  return Var(std::move(n));
}

SizeVar::SizeVar(String name_hint, DataType dtype) : Var(tvm::ffi::UnsafeInit{}) {
  if (!dtype.is_scalar() || !dtype.is_int_or_uint()) {
    TVM_FFI_THROW(ValueError) << "SizeVar " << name_hint << ": dtype must be a scalar integer, got "
                              << dtype.str();
  }
  auto n = make_object<SizeVarNode>();
  n->name_hint = std::move(name_hint);
  n->dtype = dtype;
  n->pointee = DataType::Void();
  data_ = std::move(n);
}

Range::Range(PrimExpr min, PrimExpr extent) {
  if (!min.defined() || !extent.defined()) TVM_FFI_THROW(ValueError) << "Range: undefined bound";
  if (!min.dtype().is_int_or_uint() || !extent.dtype().is_int_or_uint() ||
      min.dtype() != extent.dtype()) {
    TVM_FFI_THROW(TypeError) << "Range: min and extent must be integers of one dtype, got "
                             << min.dtype() << " and " << extent.dtype();
  }
  auto n = make_object<RangeNode>();
  n->min = std::move(min);
  n->extent = std::move(extent);
  data_ = std::move(n);
}

PrimExpr MakeConst(DataType dtype, int64_t value) {
  if (dtype.is_vector()) return Broadcast(MakeConst(dtype.element_of(), value), dtype.lanes());
  if (dtype.is_floating()) return FloatImm(dtype, static_cast<double>(value));
  return IntImm(dtype, value);
}

PrimExpr MakeConst(DataType dtype, double value) {
  if (dtype.is_vector()) return Broadcast(MakeConst(dtype.element_of(), value), dtype.lanes());
  if (dtype.is_floating()) return FloatImm(dtype, value);
  if (std::trunc(value) != value) {
    TVM_FFI_THROW(ValueError) << "MakeConst: " << value << " is not an integer for " << dtype.str();
  }
  return IntImm(dtype, static_cast<int64_t>(value));
}

std::optional<int64_t> AsConstInt(const PrimExpr& e) {
  if (!e.defined()) return std::nullopt;
  if (const auto* imm = e.as<IntImmNode>()) return imm->value;
  if (const auto* b = e.as<BroadcastNode>()) return AsConstInt(b->value);
  return std::nullopt;
}

}  // namespace ir
}  // namespace tessel
