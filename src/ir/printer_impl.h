// The printer's internals, shared by printer.cc (functions, modules), printer_expr.cc (expressions,
// attribute values) and printer_stmt.cc (statements, blocks, buffers).
//
// One Printer prints one top-level object (per function for a module) into one std::string, in a
// single pass: names are assigned at first print, and the variables and buffers used before any
// binding site are collected on the way so that the caller can declare them at the top of the body.
// Everything is appended to `out`, so printing is linear in the size of the output.
#ifndef TESSEL_SRC_IR_PRINTER_IMPL_H_
#define TESSEL_SRC_IR_PRINTER_IMPL_H_

#include <tessel/ir/functor.h>
#include <tessel/ir/module.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tessel {
namespace ir {
namespace printer {

// Binding strength of a printed expression, Python's order (weakest first). kInfix ops registered
// in builtin_ops.cc use the same scale (| 5, ^ 6, & 7, << >> 8).
enum Prec : int {
  kPrecOr = 1,
  kPrecAnd = 2,
  kPrecNot = 3,
  kPrecCmp = 4,
  kPrecBitOr = 5,
  kPrecBitXor = 6,
  kPrecBitAnd = 7,
  kPrecShift = 8,
  kPrecAdd = 9,
  kPrecMul = 10,
  kPrecUnary = 11,
  kPrecAtom = 12,
};

inline bool IsConstInt(const PrimExpr& e, int64_t value) {
  const auto* imm = e.as<IntImmNode>();
  return imm != nullptr && imm->value == value;
}

// Python's repr of a double ("1.5", "1e-09", "100.0", "inf", "nan").
std::string FloatRepr(double v);
// A Python string literal in double quotes, with Python escapes.
void AppendStringLiteral(std::string* out, const std::string& s);
// `name` made a Python identifier: other characters become '_', a leading digit gets a '_' prefix.
std::string SanitizeName(const std::string& name);

// Printed names, unique within one printer: the first object to ask for "i" gets "i", the next
// "i_1", then "i_2". Python keywords and names the format reserves ("T", "I", "range") are never
// handed out.
class NameTable {
 public:
  // The name of `obj`, assigned from `hint` on first request.
  const std::string& Get(const Object* obj, const std::string& hint);
  // Gives `obj` a fixed printed text that is not a plain name (e.g. "A.data").
  void SetAlias(const Object* obj, std::string text);
  const std::string* Find(const Object* obj) const;

 private:
  std::unordered_map<const Object*, std::string> names_;
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int> next_suffix_;
};

class Printer : public ExprFunctor<void(const PrimExpr&)> {
 public:
  // In a function, uses of unbound variables and buffers are recorded for declaration.
  explicit Printer(bool in_function) : in_function_(in_function) {}

  std::string out;

  // ---- expressions (printer_expr.cc) ----
  void PrintExpr(const PrimExpr& e) { VisitExpr(e); }
  // Prints `e`, parenthesized when it binds less tightly than `min_prec`. With `typed_int`, an
  // int32 constant prints as T.int32(v) so that the parser does not retype it.
  void PrintOperand(const PrimExpr& e, int min_prec, bool typed_int = false);
  int PrecOf(const PrimExpr& e) const;
  // An attribute / annotation value (ints, floats, strings, bools, arrays, maps, expressions).
  // `where` names the value in the error thrown for a value that has no text form.
  void PrintValue(const Any& value, const char* where);
  // `{"k": v, ...}` with keys sorted by their printed text.
  void PrintDict(const Map<String, Any>& dict, const char* where);
  void PrintExprList(const Array<PrimExpr>& list);
  // "(a,)", "(a, b)", "()".
  void PrintTuple(const Array<PrimExpr>& list);
  // `begin:end` of a range (or of `base` and `extent`), end printed the way the parser inverts.
  void PrintSlice(const PrimExpr& begin, const PrimExpr& extent);
  // The end of [begin, begin + extent) as the parser reads it back (see printer_expr.cc).
  PrimExpr RangeEnd(const PrimExpr& begin, const PrimExpr& extent);
  void PrintVarRef(const VarNode* var);
  void PrintBufferRef(const BufferNode* buffer);
  void PrintRegion(const BufferRegion& region);
  // `[i, j]` of a load or store; a stride-1 Ramp prints as the slice `b:b + lanes`.
  void PrintIndices(const Array<PrimExpr>& indices);
  // "T.int32", "T.float16x4", "T.handle".
  void PrintTypeAnnotation(DataType t);

  // ---- statements (printer_stmt.cc) ----
  void PrintStmt(const Stmt& s);
  // `(shape), "dtype", keywords...` of a buffer declaration. The data variable is printed as
  // `data=` unless it is implicit (not yet named, and pointing at the buffer's dtype and scope),
  // in which case it becomes "<buffer>.data".
  void PrintBufferArgs(const Buffer& buffer, bool is_param);
  // A parameter buffer's shape or strides: a variable seen here first prints as its name in
  // quotes and joins signature_vars().
  void PrintSignatureTuple(const Array<PrimExpr>& list);
  // Binds `var` (a loop, let, allocate, iter var, param): its name is assigned now.
  const std::string& DefineVar(const Var& var);
  const std::string& DefineBuffer(const Buffer& buffer);

  // ---- per-function state (printer.cc) ----
  bool in_function() const { return in_function_; }
  const std::vector<Var>& free_vars() const { return free_vars_; }
  // Variables a parameter's annotation declares, printed there as strings ("n"): the body
  // declares them first (`n = T.int32()`), as TVM prints and parses them.
  const std::vector<Var>& signature_vars() const { return signature_vars_; }
  const std::vector<Buffer>& free_buffers() const { return free_buffers_; }
  void MarkDefined(const Object* obj) { defined_.insert(obj); }
  bool IsDefined(const Object* obj) const { return defined_.count(obj) != 0; }
  NameTable& names() { return names_; }
  int indent = 0;

 protected:
  using ExprFunctor::VisitExpr_;
#define TESSEL_X(Name) void VisitExpr_(const Name##Node* op) override;
  TESSEL_FOR_EACH_EXPR_NODE(TESSEL_X)
#undef TESSEL_X

 private:
  void StartLine() { out.append(static_cast<size_t>(indent) * 4, ' '); }
  void PrintBody(const Stmt& body) {
    ++indent;
    PrintStmt(body);
    --indent;
  }
  void PrintBinary(const PrimExpr& a, const PrimExpr& b, const char* symbol, int prec);
  void PrintCall(const CallNode* call);
  void PrintForHeader(const ForNode* loop);
  void PrintBlock(const BlockNode* block, const BlockRealizeNode* realize);
  bool TryPrintRemap(const BlockNode* block, const BlockRealizeNode* realize);
  void PrintEvaluate(const EvaluateNode* op);
  void PrintIf(const IfThenElseNode* op, bool is_elif);
  // The statements of a body one after another, flattening nested SeqStmts.
  void PrintSeq(const Stmt& s);

  bool in_function_;
  NameTable names_;
  std::unordered_set<const Object*> defined_;
  std::unordered_set<const Object*> recorded_free_;
  std::vector<Var> free_vars_;
  std::vector<Var> signature_vars_;
  std::vector<Buffer> free_buffers_;
  // Enclosing loops by loop variable, for T.axis.remap.
  std::unordered_map<const Object*, const ForNode*> loops_;
};

}  // namespace printer
}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_SRC_IR_PRINTER_IMPL_H_
