// The intrinsic-op registry. An Op is a named intrinsic (if_then_else, shift_left, exp, ...) with
// attributes that passes and the printer consult: arity, side-effect kind, and how it prints.
// Ops are registered once at library load; each name has exactly one Op object, so Ops compare by
// identity.
#ifndef TESSEL_IR_OP_H_
#define TESSEL_IR_OP_H_

#include <tessel/ir/prim_expr.h>

#include <string>
#include <vector>

namespace tessel {
namespace ir {

// What evaluating a call may do, ordered from least to most effect.
enum class CallEffectKind : int32_t {
  kPure = 0,         // a function of its arguments; may be reordered, duplicated, eliminated
  kReadState = 1,    // reads memory or state; may be eliminated, not moved across writes
  kUpdateState = 2,  // writes state; must run exactly as written
  kOpaque = 3,       // unknown: treated as kUpdateState
  kEmbedding = 4,    // a compile-time marker (e.g. assume); never emitted as a call
};

// How the text format writes a call to the op.
enum class OpPrintStyle : int32_t {
  kCall = 0,           // T.name(args...)
  kInfix = 1,          // a <symbol> b, e.g. a << b (the parser reads both forms)
  kPrefix = 2,         // <symbol>a, e.g. ~a
  kCallWithDType = 3,  // T.name("dtype", args...): ops whose result type is not implied by args
};

class OpNode : public Object {
 public:
  String name;
  // Number of arguments, or -1 when variadic.
  int32_t num_inputs = -1;
  CallEffectKind effect = CallEffectKind::kPure;
  OpPrintStyle print_style = OpPrintStyle::kCall;
  // The operator symbol for kInfix / kPrefix ("<<", "&", "~").
  String print_symbol;
  // Binding strength for kInfix, in the text format's precedence scale (see printer).
  int32_t print_precedence = 0;
  // Data of later layers (e.g. a C function name per target), by key.
  Map<String, Any> attrs;

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindUniqueInstance;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Op", OpNode, Object);
};

class Op : public ObjectRef {
 public:
  // The registered op `name`; fails (ValueError) with the name when none is registered.
  static Op Get(const std::string& name);
  // The registered op, or nullopt.
  static Optional<Op> Find(const std::string& name);
  // All registered op names, sorted.
  static std::vector<std::string> ListNames();
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(Op, ObjectRef, OpNode);
};

// Builder used by registrations: TESSEL_REGISTER_OP("shift_left").NumInputs(2).Infix("<<", 9);
class OpRegEntry {
 public:
  explicit OpRegEntry(const std::string& name);
  OpRegEntry& NumInputs(int32_t n);
  OpRegEntry& Effect(CallEffectKind kind);
  OpRegEntry& Infix(const std::string& symbol, int32_t precedence);
  OpRegEntry& Prefix(const std::string& symbol);
  OpRegEntry& CallWithDType();
  OpRegEntry& Attr(const std::string& key, Any value);

 private:
  OpNode* node_;
};

#define TESSEL_OP_CONCAT_(a, b) a##b
#define TESSEL_OP_CONCAT(a, b) TESSEL_OP_CONCAT_(a, b)
#define TESSEL_REGISTER_OP(Name)                                      \
  [[maybe_unused]] static ::tessel::ir::OpRegEntry& TESSEL_OP_CONCAT( \
      __tessel_op_reg_, __COUNTER__) = (*new ::tessel::ir::OpRegEntry(Name))

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_OP_H_
