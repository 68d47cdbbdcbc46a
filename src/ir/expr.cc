// Constructors of the non-leaf expression nodes, with the operand checks their semantics need.
#include <tessel/ir/expr.h>
#include <tessel/ir/module.h>
#include <tessel/ir/op.h>
#include <tvm/ffi/error.h>

namespace tessel {
namespace ir {
namespace {

void CheckDefined(const char* node, const char* field, const PrimExpr& e) {
  if (!e.defined()) TVM_FFI_THROW(ValueError) << node << ": " << field << " is undefined";
}

void CheckSameType(const char* node, const PrimExpr& a, const PrimExpr& b) {
  CheckDefined(node, "a", a);
  CheckDefined(node, "b", b);
  if (a.dtype() != b.dtype()) {
    TVM_FFI_THROW(TypeError) << node << ": operand types differ: " << a.dtype() << " vs "
                             << b.dtype();
  }
}

void CheckInteger(const char* node, const char* field, const PrimExpr& e) {
  CheckDefined(node, field, e);
  if (!e.dtype().is_int_or_uint()) {
    TVM_FFI_THROW(TypeError) << node << ": " << field << " must be an integer, got " << e.dtype();
  }
}

template <typename TNode>
ObjectPtr<TNode> MakeBinary(const char* name, PrimExpr a, PrimExpr b, DataType result) {
  auto n = make_object<TNode>();
  n->dtype = result;
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

}  // namespace

Cast::Cast(DataType dtype, PrimExpr value) {
  CheckDefined("Cast", "value", value);
  if (dtype.lanes() != value.dtype().lanes()) {
    TVM_FFI_THROW(TypeError) << "Cast: lanes differ: " << value.dtype() << " to " << dtype;
  }
  auto n = make_object<CastNode>();
  n->dtype = dtype;
  n->value = std::move(value);
  data_ = std::move(n);
}

#define TESSEL_DEFINE_ARITH(Name)                                                        \
  Name::Name(PrimExpr a, PrimExpr b) {                                                   \
    CheckSameType(#Name, a, b);                                                          \
    if (a.dtype().is_bool() || a.dtype().is_handle() || a.dtype().is_void()) {           \
      TVM_FFI_THROW(TypeError) << #Name ": operands must be numbers, got " << a.dtype(); \
    }                                                                                    \
    DataType t = a.dtype();                                                              \
    data_ = MakeBinary<Name##Node>(#Name, std::move(a), std::move(b), t);                \
  }
TESSEL_FOR_EACH_BINARY_NODE(TESSEL_DEFINE_ARITH)
#undef TESSEL_DEFINE_ARITH

#define TESSEL_DEFINE_CMP(Name)                                           \
  Name::Name(PrimExpr a, PrimExpr b) {                                    \
    CheckSameType(#Name, a, b);                                           \
    DataType t = DataType::Bool(a.dtype().lanes());                       \
    data_ = MakeBinary<Name##Node>(#Name, std::move(a), std::move(b), t); \
  }
TESSEL_FOR_EACH_CMP_NODE(TESSEL_DEFINE_CMP)
#undef TESSEL_DEFINE_CMP

#define TESSEL_DEFINE_LOGICAL(Name)                                                   \
  Name::Name(PrimExpr a, PrimExpr b) {                                                \
    CheckSameType(#Name, a, b);                                                       \
    if (!a.dtype().is_bool()) {                                                       \
      TVM_FFI_THROW(TypeError) << #Name ": operands must be bool, got " << a.dtype(); \
    }                                                                                 \
    DataType t = a.dtype();                                                           \
    data_ = MakeBinary<Name##Node>(#Name, std::move(a), std::move(b), t);             \
  }
TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_DEFINE_LOGICAL)
#undef TESSEL_DEFINE_LOGICAL

Not::Not(PrimExpr a) {
  CheckDefined("Not", "a", a);
  if (!a.dtype().is_bool()) {
    TVM_FFI_THROW(TypeError) << "Not: operand must be bool, got " << a.dtype();
  }
  auto n = make_object<NotNode>();
  n->dtype = a.dtype();
  n->a = std::move(a);
  data_ = std::move(n);
}

Select::Select(PrimExpr condition, PrimExpr true_value, PrimExpr false_value) {
  CheckDefined("Select", "condition", condition);
  CheckDefined("Select", "true_value", true_value);
  CheckDefined("Select", "false_value", false_value);
  if (!condition.dtype().is_bool()) {
    TVM_FFI_THROW(TypeError) << "Select: condition must be bool, got " << condition.dtype();
  }
  if (true_value.dtype() != false_value.dtype()) {
    TVM_FFI_THROW(TypeError) << "Select: branch types differ: " << true_value.dtype() << " vs "
                             << false_value.dtype();
  }
  if (condition.dtype().lanes() != 1 && condition.dtype().lanes() != true_value.dtype().lanes()) {
    TVM_FFI_THROW(TypeError) << "Select: condition lanes " << condition.dtype().lanes()
                             << " do not match value lanes " << true_value.dtype().lanes();
  }
  auto n = make_object<SelectNode>();
  n->dtype = true_value.dtype();
  n->condition = std::move(condition);
  n->true_value = std::move(true_value);
  n->false_value = std::move(false_value);
  data_ = std::move(n);
}

Ramp::Ramp(PrimExpr base, PrimExpr stride, int64_t lanes) {
  CheckInteger("Ramp", "base", base);
  CheckInteger("Ramp", "stride", stride);
  if (!base.dtype().is_scalar() || base.dtype() != stride.dtype()) {
    TVM_FFI_THROW(TypeError) << "Ramp: base and stride must be scalars of one dtype, got "
                             << base.dtype() << " and " << stride.dtype();
  }
  if (lanes < 2 || lanes > 65535) {
    TVM_FFI_THROW(ValueError) << "Ramp: lanes must be in [2, 65535], got " << lanes;
  }
  auto n = make_object<RampNode>();
  n->dtype = base.dtype().with_lanes(static_cast<int>(lanes));
  n->base = std::move(base);
  n->stride = std::move(stride);
  n->lanes = lanes;
  data_ = std::move(n);
}

Broadcast::Broadcast(PrimExpr value, int64_t lanes) {
  CheckDefined("Broadcast", "value", value);
  if (!value.dtype().is_scalar()) {
    TVM_FFI_THROW(TypeError) << "Broadcast: value must be a scalar, got " << value.dtype();
  }
  if (lanes < 2 || lanes > 65535) {
    TVM_FFI_THROW(ValueError) << "Broadcast: lanes must be in [2, 65535], got " << lanes;
  }
  auto n = make_object<BroadcastNode>();
  n->dtype = value.dtype().with_lanes(static_cast<int>(lanes));
  n->value = std::move(value);
  n->lanes = lanes;
  data_ = std::move(n);
}

Shuffle::Shuffle(Array<PrimExpr> vectors, Array<PrimExpr> indices) {
  if (vectors.empty()) TVM_FFI_THROW(ValueError) << "Shuffle: no vectors";
  if (indices.empty()) TVM_FFI_THROW(ValueError) << "Shuffle: no indices";
  DataType elem = vectors[0].dtype().element_of();
  int64_t total = 0;
  for (const PrimExpr& v : vectors) {
    CheckDefined("Shuffle", "vector", v);
    if (v.dtype().element_of() != elem) {
      TVM_FFI_THROW(TypeError) << "Shuffle: vectors have different element types: " << elem
                               << " vs " << v.dtype().element_of();
    }
    total += v.dtype().lanes();
  }
  for (const PrimExpr& i : indices) {
    auto c = AsConstInt(i);
    if (!c || *c < 0 || *c >= total) {
      TVM_FFI_THROW(ValueError) << "Shuffle: each index must be a constant in [0, " << total << ")";
    }
  }
  auto n = make_object<ShuffleNode>();
  n->dtype = elem.with_lanes(static_cast<int>(indices.size()));
  n->vectors = std::move(vectors);
  n->indices = std::move(indices);
  data_ = std::move(n);
}

Let::Let(Var var, PrimExpr value, PrimExpr body) {
  if (!var.defined()) TVM_FFI_THROW(ValueError) << "Let: var is undefined";
  CheckDefined("Let", "value", value);
  CheckDefined("Let", "body", body);
  if (var.dtype() != value.dtype()) {
    TVM_FFI_THROW(TypeError) << "Let: " << var->name_hint << " has dtype " << var.dtype()
                             << " but value has " << value.dtype();
  }
  auto n = make_object<LetNode>();
  n->dtype = body.dtype();
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  data_ = std::move(n);
}

BufferLoad::BufferLoad(Buffer buffer, Array<PrimExpr> indices) {
  if (!buffer.defined()) TVM_FFI_THROW(ValueError) << "BufferLoad: buffer is undefined";
  if (indices.size() != buffer->shape.size()) {
    TVM_FFI_THROW(ValueError) << "BufferLoad: " << buffer->name << " has " << buffer->shape.size()
                              << " dimensions but " << indices.size() << " indices were given";
  }
  int lanes = 1;
  for (size_t i = 0; i < indices.size(); ++i) {
    CheckInteger("BufferLoad", "index", indices[i]);
    if (indices[i].dtype().is_vector()) {
      if (i + 1 != indices.size()) {
        TVM_FFI_THROW(TypeError) << "BufferLoad: " << buffer->name
                                 << ": only the last index may be a vector (index " << i << ")";
      }
      lanes = indices[i].dtype().lanes();
    }
  }
  auto n = make_object<BufferLoadNode>();
  n->dtype = buffer->dtype.with_lanes(buffer->dtype.lanes() * lanes);
  n->buffer = std::move(buffer);
  n->indices = std::move(indices);
  data_ = std::move(n);
}

Call::Call(DataType dtype, ObjectRef op, Array<PrimExpr> args, Map<String, Any> annotations) {
  if (const auto* o = op.as<OpNode>()) {
    if (o->num_inputs >= 0 && static_cast<int64_t>(args.size()) != o->num_inputs) {
      TVM_FFI_THROW(ValueError) << "Call: " << o->name << " takes " << o->num_inputs
                                << " arguments, got " << args.size();
    }
  } else if (!op.as<GlobalVarNode>()) {
    TVM_FFI_THROW(TypeError) << "Call: op must be an Op or a GlobalVar, got "
                             << (op.defined() ? op->GetTypeKey() : "None");
  }
  for (const PrimExpr& a : args) CheckDefined("Call", "argument", a);
  auto n = make_object<CallNode>();
  n->dtype = dtype;
  n->op = std::move(op);
  n->args = std::move(args);
  n->annotations = std::move(annotations);
  data_ = std::move(n);
}

}  // namespace ir
}  // namespace tessel
