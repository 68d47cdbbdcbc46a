// Internals of the C code generator: C names and types, the vector helper library, and the emitter
// that turns one lowered PrimFunc into a C kernel. The host wrapper (host_wrapper.cc) and the entry
// point (generate_c.cc) use them; nothing outside src/codegen/c includes this header.
//
// Determinism: every name is handed out in IR traversal order, helpers are kept in ordered maps,
// and no pointer value reaches the output, so one module always gives the same text.
#ifndef TESSEL_SRC_CODEGEN_C_CODEGEN_C_H_
#define TESSEL_SRC_CODEGEN_C_CODEGEN_C_H_

#include <tessel/arith/analyzer.h>
#include <tessel/ir/function.h>
#include <tessel/ir/node_list.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessel {
namespace codegen {

using ir::DataType;
using ir::PrimExpr;
using ir::Var;

// "codegen c: <what> in <function>" as a ValueError.
[[noreturn]] void Unsupported(const std::string& what, const std::string& function);

// ---- types ----
// The C type of a value of `t`: int32_t, float, uint16_t (float16/bfloat16 bits), _Bool, void*,
// or a vector typedef tsl_<suffix>x<lanes> (bool vectors are int32 masks of -1/0).
std::string CType(DataType t);
// How an element of `t` is stored in memory: like CType, but bool is uint8_t.
std::string StorageCType(DataType elem);
// A short name of a scalar type for helper names: i32, u8, f32, f16, bf16, b (bool).
std::string TypeSuffix(DataType elem);
// The element type that holds one lane of a vector of `elem` (bool: int32 mask lanes).
DataType LaneType(DataType elem);
// A C string literal for `text` (escaped), e.g. "a\"b".
std::string CStringLiteral(const std::string& text);
// `text` as a printf format fragment: % doubled, then escaped as a C literal's contents.
std::string FormatEscape(const std::string& text);
// printf conversion and argument for a scalar value of `t` held in C expression `c`.
void PrintfArg(DataType t, const std::string& c, std::string* conv, std::string* arg);

// ---- scalar expressions (shared with the CUDA code generator) ----
// One BinOp per two-operand expression node of ir/node_list.h (Add -> kAdd ...), so the C and
// CUDA expression emitters visit the same list: X(Name) for each.
#define TESSEL_CODEGEN_FOR_EACH_BINOP(X) \
  TESSEL_FOR_EACH_BINARY_NODE(X)         \
  TESSEL_FOR_EACH_CMP_NODE(X)            \
  TESSEL_FOR_EACH_LOGICAL_NODE(X)
#define TESSEL_BINOP_ENUMERATOR(Name) k##Name,
enum class BinOp { TESSEL_CODEGEN_FOR_EACH_BINOP(TESSEL_BINOP_ENUMERATOR) };
#undef TESSEL_BINOP_ENUMERATOR
// `a op b` on scalars of type `t` (the operands' type), with the prelude's tsl_* helpers where C
// operators differ from the IR (wrap-around, floor division, float16 in float).
std::string ScalarBinary(BinOp op, DataType t, const std::string& a, const std::string& b,
                         const std::string& function);
// floordiv / floormod of a signed 32- or 64-bit `a` by a constant positive power of two `b`, as an
// arithmetic shift or a mask (exact for every sign of a in two's complement); nullopt otherwise.
std::optional<std::string> PowerOfTwoFloor(BinOp op, DataType t, const std::string& a,
                                           const PrimExpr& b);
// A scalar conversion of C expression `s` from `from` to `to`.
std::string CastScalar(DataType to, DataType from, const std::string& s);
// Literals of a scalar type (float16/bfloat16 through tsl_f64_to_f16/bf16, NAN, INFINITY).
std::string IntLiteral(DataType t, int64_t v);
std::string FloatLiteral(DataType t, double v);

// ---- names ----
// C identifiers for IR variables: sanitized name_hint, suffixed _1, _2... on collision, never a C
// keyword, a libc/libm name, or the reserved tsl_ prefix.
class NameTable {
 public:
  NameTable();
  // The name of `v`, assigned on first request.
  const std::string& Get(const Var& v);
  bool Has(const Var& v) const { return names_.count(v.get()) != 0; }
  // A fresh identifier from `hint` that no variable will get.
  std::string Fresh(const std::string& hint);
  // Makes `alias` print as the name of `target`.
  void Alias(const Var& alias, const Var& target) { names_[alias.get()] = Get(target); }
  void Reserve(const std::string& name) { used_.insert(name); }

 private:
  std::unordered_map<const tvm::ffi::Object*, std::string> names_;
  std::set<std::string> used_;
};

// ---- vector helpers ----
// The vector typedefs and per-lane helper functions a module uses, emitted before the kernels.
class VectorLib {
 public:
  // Registers the typedef of a vector of `t` (vector dtype) and returns its name.
  std::string Type(DataType t);
  // A helper `name` computing, for k in [0, lanes), r[k] = lane_expr over arguments named a, b, c
  // ... of `arg_types` (vector or scalar). Mask lanes of bool vectors are -1/0: `lane_expr` sees
  // them through `args_as_lanes`, and a bool result lane is stored as -1/0.
  std::string PerLane(const std::string& name, DataType result,
                      const std::vector<DataType>& arg_types, const std::string& lane_expr);
  // Registers a helper whose full text the caller wrote.
  void Helper(const std::string& name, const std::string& text);
  // How lane k of argument `i` (0 = a) of type `t` reads as a scalar expression.
  static std::string LaneOf(int i, DataType t);
  std::string Text() const;

 private:
  std::map<std::string, std::string> typedefs_;
  std::map<std::string, std::string> helpers_;
};

// ---- the kernel emitter ----
// Emits C for expressions and statements of one function. The host wrapper uses Expr() for shape
// expressions of already bound variables.
class CEmitter {
 public:
  CEmitter(const ir::PrimFunc& func, std::string symbol, NameTable* names, VectorLib* vec);

  // Declares `v` as defined (a parameter, or a variable the wrapper binds); `elem` is the storage
  // element type a handle points at (void when unknown).
  void Define(const Var& v, DataType elem = DataType::Void());
  std::string Expr(const PrimExpr& e);
  // The C statement (without indentation) of a store.
  std::string Store(const ir::BufferStoreNode* op);
  // The C name of a defined variable; ValueError naming it when it is not defined here.
  std::string VarRef(const Var& v);
  void Undefine(const Var& v) { defined_.erase(v.get()); }
  bool IsDefined(const Var& v) const { return defined_.count(v.get()) != 0; }
  // The C type a declaration of `v` uses (typed pointer for handles with a known pointee).
  std::string DeclType(const Var& v);
  // The kernel: `static int32_t <kernel_name>(<params>) { body }`.
  std::string Kernel(const std::string& kernel_name, const std::vector<std::string>& params);

  const std::string& symbol() const { return symbol_; }

  // Facts for the expressions emitted next: a loop variable ranges over its loop's range inside
  // the loop, a LetStmt variable equals its value. Sound because C statements are emitted in
  // order, inside the scope the fact holds in (a later binding of the same variable replaces it).
  void BindLoop(const Var& v, const PrimExpr& min, const PrimExpr& extent);
  void BindLet(const Var& v, const PrimExpr& value);
  // Whether C's own operator computes the IR's `a op b` for signed 32/64-bit scalars a and b:
  // for + - *, the operands' constant bounds rule out overflow of the dtype; for // and %
  // (floor), a >= 0 and b > 0; for truncdiv/truncmod, b != -1. Never true for other types or ops.
  bool COperatorExact(BinOp op, const PrimExpr& a, const PrimExpr& b);

  // State shared with the expression and statement emitters (internal classes of their files).
  const ir::PrimFunc& func_;
  std::string symbol_;
  NameTable* names_;
  VectorLib* vec_;
  // Defined variables, with the element type a handle's C pointer points at ("" = void*).
  std::unordered_map<const tvm::ffi::Object*, std::string> defined_;
  // extern functions called that no included header declares: name -> prototype.
  std::map<std::string, std::string>* externs_ = nullptr;

  void set_externs(std::map<std::string, std::string>* externs) { externs_ = externs; }

 private:
  std::unique_ptr<arith::Analyzer> analyzer_;
};

// The number of innermost statements one run of a parallel loop executes (parallel_work.cc), as an
// int64 expression of variables defined outside the loop.
PrimExpr ParallelWork(const ir::ForNode* loop);

// The host wrapper `__tvm_ffi_<symbol>` of `func`, which calls `kernel_name`. It also decides the
// kernel's parameter list (returned in kernel_params, C declarations) and defines, in `emitter`,
// every variable the kernel receives.
std::string HostWrapper(const ir::PrimFunc& func, const std::string& symbol,
                        const std::string& kernel_name, NameTable* names, CEmitter* emitter,
                        std::vector<std::string>* kernel_params);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_SRC_CODEGEN_C_CODEGEN_C_H_
