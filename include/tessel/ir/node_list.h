// The one list of IR node kinds. Functor dispatch, the printer, the verifier and the Z3 encoder
// expand these lists, so a node kind added here is added everywhere (or fails to compile).
// Order is "by strength", as in TVM's and Halide's canonical operand order: constants first.
#ifndef TESSEL_IR_NODE_LIST_H_
#define TESSEL_IR_NODE_LIST_H_

// Binary arithmetic nodes: fields a, b of equal dtype; result has that dtype.
#define TESSEL_FOR_EACH_BINARY_NODE(X) \
  X(Add)                               \
  X(Sub)                               \
  X(Mul)                               \
  X(Div)                               \
  X(Mod)                               \
  X(FloorDiv)                          \
  X(FloorMod)                          \
  X(Min)                               \
  X(Max)

// Comparison nodes: fields a, b of equal dtype; result is bool with the operands' lanes.
#define TESSEL_FOR_EACH_CMP_NODE(X) \
  X(EQ)                             \
  X(NE)                             \
  X(LT)                             \
  X(LE)                             \
  X(GT)                             \
  X(GE)

// Logical nodes over bool operands.
#define TESSEL_FOR_EACH_LOGICAL_NODE(X) \
  X(And)                                \
  X(Or)

#define TESSEL_FOR_EACH_EXPR_NODE(X) \
  X(IntImm)                          \
  X(FloatImm)                        \
  X(StringImm)                       \
  X(Var)                             \
  X(SizeVar)                         \
  X(Cast)                            \
  TESSEL_FOR_EACH_BINARY_NODE(X)     \
  TESSEL_FOR_EACH_CMP_NODE(X)        \
  TESSEL_FOR_EACH_LOGICAL_NODE(X)    \
  X(Not)                             \
  X(Select)                          \
  X(Ramp)                            \
  X(Broadcast)                       \
  X(Shuffle)                         \
  X(Let)                             \
  X(BufferLoad)                      \
  X(Call)

#define TESSEL_FOR_EACH_STMT_NODE(X) \
  X(LetStmt)                         \
  X(AttrStmt)                        \
  X(AssertStmt)                      \
  X(BufferStore)                     \
  X(Allocate)                        \
  X(DeclBuffer)                      \
  X(For)                             \
  X(While)                           \
  X(IfThenElse)                      \
  X(SeqStmt)                         \
  X(Evaluate)                        \
  X(Block)                           \
  X(BlockRealize)

#endif  // TESSEL_IR_NODE_LIST_H_
