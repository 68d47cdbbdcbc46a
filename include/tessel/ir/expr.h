// Expression nodes. Semantics, which the simplifier, the Z3 encoder and every backend follow:
//
// - Integer +, -, * wrap modulo 2^bits of the dtype (two's complement for signed types). Every
//   pass and the default arith::Analyzer reason under exactly this. An Analyzer made with
//   assume_no_overflow (docs/arith.md, "Two overflow semantics") instead treats signed 32/64-bit
//   + - * / % as the mathematical operations, as TVM does; its answers hold wherever the input
//   does not overflow, and lowering never uses it.
// - Div and Mod truncate toward zero (C semantics): Div(-7, 2) = -3, Mod(-7, 2) = -1.
// - FloorDiv and FloorMod round toward negative infinity: FloorDiv(-7, 2) = -4, FloorMod(-7, 2) =
// 1;
//   FloorMod takes the sign of the divisor. Division by zero is undefined behaviour: nothing may be
//   assumed about its result, and no transformation may introduce one.
// - Min/Max are the usual on integers. On floats Max(a, b) is `a > b ? a : b` and Min(a, b) is
//   `a < b ? a : b`, on every target: when either operand is NaN, and for Max(+0, -0), the result
//   is b, the second operand (as TVM's LLVM backend and x86 maxps/minps compute; unlike C's
//   fmax/fmin, which return the number). So Max/Min of floats are not commutative.
// - Comparisons give bool (with the operands' lanes). And/Or/Not take and give bool.
// - Select(c, t, f) evaluates both t and f (it is a value choice, not control flow); use the
//   if_then_else intrinsic when only the chosen side may be evaluated.
// - Cast converts with C semantics; an integer narrowing keeps the low bits (wraps).
// - Ramp(base, stride, lanes) is the vector [base, base + stride, ..., base + (lanes-1)*stride].
// - Broadcast(value, lanes) repeats a scalar. Shuffle concatenates vectors and picks lanes.
// - Let(var, value, body) binds var to value within body.
// - Call(op, args, annotations): op is an Op from the registry or a GlobalVar; annotations are
//   free-form data that every pass carries along unchanged.
#ifndef TESSEL_IR_EXPR_H_
#define TESSEL_IR_EXPR_H_

#include <tessel/ir/buffer.h>
#include <tessel/ir/node_list.h>
#include <tessel/ir/prim_expr.h>

namespace tessel {
namespace ir {

class CastNode : public PrimExprNode {
 public:
  PrimExpr value;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Cast", CastNode, PrimExprNode);
};
class Cast : public PrimExpr {
 public:
  // Fails when lanes of dtype and value differ.
  Cast(DataType dtype, PrimExpr value);
  TESSEL_DEFINE_NODE_REF(Cast, PrimExpr);
};

// Binary arithmetic (a op b) and comparisons. Constructors check that a and b have the same dtype
// (and, for arithmetic, that it is not bool/handle); they do not fold: use the helpers in ops.h.
#define TESSEL_DECLARE_BINARY_NODE(Name)                                             \
  class Name##Node : public PrimExprNode {                                           \
   public:                                                                           \
    PrimExpr a;                                                                      \
    PrimExpr b;                                                                      \
    TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir." #Name, Name##Node, PrimExprNode); \
  };                                                                                 \
  class Name : public PrimExpr {                                                     \
   public:                                                                           \
    Name(PrimExpr a, PrimExpr b);                                                    \
    TESSEL_DEFINE_NODE_REF(Name, PrimExpr);                                          \
  };
TESSEL_FOR_EACH_BINARY_NODE(TESSEL_DECLARE_BINARY_NODE)
TESSEL_FOR_EACH_CMP_NODE(TESSEL_DECLARE_BINARY_NODE)
TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_DECLARE_BINARY_NODE)
#undef TESSEL_DECLARE_BINARY_NODE

class NotNode : public PrimExprNode {
 public:
  PrimExpr a;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Not", NotNode, PrimExprNode);
};
class Not : public PrimExpr {
 public:
  explicit Not(PrimExpr a);
  TESSEL_DEFINE_NODE_REF(Not, PrimExpr);
};

class SelectNode : public PrimExprNode {
 public:
  PrimExpr condition;
  PrimExpr true_value;
  PrimExpr false_value;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Select", SelectNode, PrimExprNode);
};
class Select : public PrimExpr {
 public:
  Select(PrimExpr condition, PrimExpr true_value, PrimExpr false_value);
  TESSEL_DEFINE_NODE_REF(Select, PrimExpr);
};

class RampNode : public PrimExprNode {
 public:
  PrimExpr base;
  PrimExpr stride;
  int64_t lanes;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Ramp", RampNode, PrimExprNode);
};
class Ramp : public PrimExpr {
 public:
  Ramp(PrimExpr base, PrimExpr stride, int64_t lanes);
  TESSEL_DEFINE_NODE_REF(Ramp, PrimExpr);
};

class BroadcastNode : public PrimExprNode {
 public:
  PrimExpr value;
  int64_t lanes;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Broadcast", BroadcastNode, PrimExprNode);
};
class Broadcast : public PrimExpr {
 public:
  Broadcast(PrimExpr value, int64_t lanes);
  TESSEL_DEFINE_NODE_REF(Broadcast, PrimExpr);
};

// Concatenates `vectors` and picks the lanes listed in `indices` (constants).
class ShuffleNode : public PrimExprNode {
 public:
  Array<PrimExpr> vectors;
  Array<PrimExpr> indices;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Shuffle", ShuffleNode, PrimExprNode);
};
class Shuffle : public PrimExpr {
 public:
  Shuffle(Array<PrimExpr> vectors, Array<PrimExpr> indices);
  TESSEL_DEFINE_NODE_REF(Shuffle, PrimExpr);
};

class LetNode : public PrimExprNode {
 public:
  Var var;
  PrimExpr value;
  PrimExpr body;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Let", LetNode, PrimExprNode);
};
class Let : public PrimExpr {
 public:
  Let(Var var, PrimExpr value, PrimExpr body);
  TESSEL_DEFINE_NODE_REF(Let, PrimExpr);
};

// buffer[indices]; only the last index may be a vector, and its lanes give the result's lanes.
class BufferLoadNode : public PrimExprNode {
 public:
  Buffer buffer;
  Array<PrimExpr> indices;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.BufferLoad", BufferLoadNode, PrimExprNode);
};
class BufferLoad : public PrimExpr {
 public:
  // Fails when the number of indices differs from the buffer's dimensions or an index is not an
  // integer.
  BufferLoad(Buffer buffer, Array<PrimExpr> indices);
  TESSEL_DEFINE_NODE_REF(BufferLoad, PrimExpr);
};

class CallNode : public PrimExprNode {
 public:
  // An Op (see op.h) or a GlobalVar (see module.h).
  ObjectRef op;
  Array<PrimExpr> args;
  Map<String, Any> annotations;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Call", CallNode, PrimExprNode);
};
class Call : public PrimExpr {
 public:
  // Fails when op is neither an Op nor a GlobalVar, or the op's registered arity disagrees.
  Call(DataType dtype, ObjectRef op, Array<PrimExpr> args, Map<String, Any> annotations = {});
  TESSEL_DEFINE_NODE_REF(Call, PrimExpr);
};

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_EXPR_H_
