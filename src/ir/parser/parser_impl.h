// The parser proper: statements and functions read straight into IR, expressions read into syntax
// trees (syntax.h) and then evaluated here against the lexical scope. Split by concern over
// parser_expr.cc (operators, names, literals), parser_call.cc (T.* calls), parser_buffer.cc
// (buffer declarations and regions), parser_stmt.cc (statements, blocks) and parser_func.cc
// (functions, modules, the public entry points).
#ifndef TESSEL_SRC_IR_PARSER_PARSER_IMPL_H_
#define TESSEL_SRC_IR_PARSER_PARSER_IMPL_H_

#include <tessel/ir/module.h>
#include <tessel/ir/parser.h>
#include <tvm/ffi/cast.h>
#include <tvm/ffi/error.h>

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/parser/syntax.h"

namespace tessel {
namespace ir {
namespace parser {

// What a name stands for: a variable or a buffer (exactly one is defined).
struct Binding {
  Var var;
  Buffer buffer;
};

// The value of an expression. A bare numeric literal stays unmaterialized so that it can adopt the
// dtype of the other operand of a binary operator (docs/text_format.md, "Literals").
struct Operand {
  enum Lit { kNone, kInt, kFloat };
  PrimExpr expr;  // undefined while lit != kNone
  Lit lit = kNone;
  uint64_t magnitude = 0;  // kInt: |value|
  bool negative = false;   // kInt
  double float_value = 0;  // kFloat
  // A value given from Python (a captured name or a T.constexpr), or arithmetic on one: Python
  // computes such arithmetic before TVMScript sees it, so the parser folds it too.
  bool given = false;
  Loc loc;
};

// Function-level state collected while its body is read.
struct FuncFrame {
  Array<Var> params;
  Map<Var, Buffer> buffer_map;
  Map<String, Any> attrs;
  bool attrs_seen = false;
  // `T.alloc_buffer` right under `def`: the allocations of the function's implied root block.
  Array<Buffer> root_allocs;
};

// The parts of a block written as statements directly under `with T.block(...)`.
struct BlockFrame {
  Array<IterVar> iter_vars;
  Array<PrimExpr> iter_values;
  PrimExpr predicate;
  Array<BufferRegion> reads;
  Array<BufferRegion> writes;
  Array<Buffer> alloc_buffers;
  Array<MatchBufferRegion> match_buffers;
  Optional<Stmt> init;
  Map<String, Any> annotations;
  bool seen_where = false, seen_reads = false, seen_writes = false, seen_attr = false;
};

// Where a suite of statements sits: directly in a function body or a block, or elsewhere.
struct SuiteContext {
  FuncFrame* func = nullptr;
  BlockFrame* block = nullptr;
};

// One parsed statement. A binder (LetStmt, AssertStmt, Allocate, DeclBuffer) takes the rest of its
// suite as body: `wrap` builds it once that body is known.
struct Item {
  Stmt stmt;
  std::function<Stmt(Stmt)> wrap;
};

class Parser : public Syntax {
 public:
  explicit Parser(const Source& source, const ParseOptions* options = nullptr);

  // A module or a lone function, up to the end of the input; for a lone function, its name goes
  // to *lone_name.
  ObjectRef ParseFile(std::string* lone_name);
  // The same for a Python `def` or `class` whose decorators were read by the caller.
  ObjectRef ParsePythonDef(std::string* lone_name);
  // One expression up to the end of the input, over the given variables.
  PrimExpr ParseStandaloneExpr(const Map<String, Any>& vars);

  // `stmt` with the span of loc, the position of its first token (in place: a node the parser has
  // just built is referenced by `stmt` alone).
  Stmt At(Loc loc, Stmt stmt) const { return WithSpan(std::move(stmt), src_.SpanAt(loc)); }

  // Runs f; a tvm-ffi error from a node constructor becomes a parse error at loc.
  template <typename F>
  auto Guard(Loc loc, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const tvm::ffi::Error& e) {
      Fail(loc, e.message());
    }
  }

 private:
  // ---- scopes ----
  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }
  void Bind(const std::string& name, Binding b) { scopes_.back()[name] = std::move(b); }
  void BindVar(const std::string& name, Var v) { Bind(name, Binding{std::move(v), Buffer()}); }
  void BindBuffer(const std::string& name, Buffer b) { Bind(name, Binding{Var(), std::move(b)}); }
  const Binding* Lookup(const std::string& name) const;

  // ---- expressions (parser_expr.cc) ----
  Operand Eval(const Node* n);
  PrimExpr EvalPrim(const Node* n) { return Materialize(Eval(n)); }
  // An expression where a literal takes dtype t when it can (see AdoptOrDefault).
  PrimExpr EvalPrimAs(const Node* n, DataType t) { return AdoptOrDefault(Eval(n), t); }
  static Operand Of(PrimExpr e, Loc loc);
  // A literal as its default dtype (int32 / float32); other operands unchanged.
  PrimExpr Materialize(const Operand& op);
  // A literal as dtype t when t is a scalar numeric type it fits; otherwise Materialize.
  PrimExpr AdoptOrDefault(const Operand& op, DataType t);
  // Applies literal adoption between two operands and checks that their dtypes agree.
  void Unify(Operand* a, Operand* b, Loc loc, const std::string& what);
  Operand EvalBinary(const Node* n);
  // a op b computed as Python would, when both are literals and one is given from Python.
  std::optional<Operand> FoldGiven(const Operand& a, const Operand& b, const std::string& op,
                                   Loc loc) const;
  Operand EvalCompare(const Node* n);
  Operand EvalUnary(const Node* n);
  Operand EvalName(const Node* n);
  // A name by its text (also a string shape dim such as "n"); unknown names fail at loc.
  Operand EvalNamed(const std::string& name, Loc loc);
  // The value given for a name by ParseOptions::values or a T.constexpr parameter, if any.
  const Any* GivenValue(const std::string& name) const;
  Operand OperandOfValue(const std::string& name, const Any& value, Loc loc);
  Operand EvalAttr(const Node* n);
  Operand EvalSubscript(const Node* n);
  // end - begin, with the two forms a printer writes for `begin:begin + extent` undone exactly.
  PrimExpr Extent(const PrimExpr& begin, const PrimExpr& end, Loc loc);
  // Python-ish data for annotations and attributes.
  Any EvalAny(const Node* n);
  Map<String, Any> EvalDict(const Node* n, const char* what);
  std::string EvalString(const Node* n, const char* what);
  DataType EvalDType(const Node* n);
  int64_t EvalConstInt(const Node* n, const char* what);
  bool EvalBoolConst(const Node* n, const char* what);
  std::optional<int64_t> LiteralValue(const Operand& op) const;

  // ---- calls (parser_call.cc) ----
  Operand EvalCall(const Node* n);
  Operand EvalTypedConst(const Node* n, DataType t);
  Operand EvalOpCall(const Node* n, const std::string& name);
  Operand EvalLet(const Node* n);
  // Fails unless the call has between min and max positional arguments and only allowed keywords.
  void CheckArgs(const Node* call, const std::string& name, size_t min_pos, size_t max_pos,
                 std::initializer_list<const char*> keywords = {});

  // ---- buffers (parser_buffer.cc) ----
  // A buffer from T.Buffer / T.match_buffer / T.decl_buffer / T.alloc_buffer arguments: shape,
  // dtype and keywords start at positional argument `first`. When declare_names, unknown names in
  // shape, strides and elem_offset declare new variables of the index dtype.
  Buffer EvalBufferDecl(const Node* call, const std::string& name, size_t first, bool declare_names,
                        const char* what);
  Buffer EvalBufferRef(const Node* n, const char* what);
  Array<PrimExpr> EvalIndices(const Buffer& buffer, const Node* subscript);
  BufferRegion EvalRegion(const Node* n);
  Array<BufferRegion> EvalRegions(const Node* call, const std::string& name);

  // ---- tile operations (parser_tile.cc) ----
  // An operand of T.copy / T.gemm / T.fill: a buffer, a region, or (start_only) a start whose
  // extents come from the other operand.
  struct TileOperand {
    Buffer buffer;
    Array<PrimExpr> starts, extents;
    bool start_only = false;
    Loc loc;
  };
  TileOperand EvalTileOperand(const Node* n, const std::string& what);
  PrimExpr TileRegionOf(const TileOperand& o);
  // T.copy, T.gemm, T.fill, T.clear (name without "T.").
  Operand EvalTileOp(const Node* n, const std::string& name);
  // T.atomic_add(dst, src): a tile_atomic_add call.
  Operand EvalAtomicAdd(const Node* n);
  // `name = T.alloc_shared / alloc_fragment / alloc_local(...)`; false for any other fn.
  bool ParseTileAlloc(Loc first, const std::string& name, const Node* value, const std::string& fn,
                      std::vector<Item>* items);
  // `with T.Kernel(...) as ...:` after the call was read.
  void ParseTileKernel(Loc loc, const Node* call, std::vector<Item>* items);

  // ---- statements (parser_stmt.cc) ----
  // Reads INDENT, statements, DEDENT; returns the statements folded into one.
  Stmt ParseSuite(SuiteContext ctx);
  // Folds items, last first, so long chains of binders build without recursion.
  Stmt FoldItems(std::vector<Item>* items, Loc loc);
  void ParseStatement(SuiteContext ctx, std::vector<Item>* items);
  void ParseStatementUnguarded(SuiteContext ctx, std::vector<Item>* items);
  Stmt ParseFor();
  Stmt ParseWhile();
  Stmt ParseIf();
  void ParseWith(SuiteContext ctx, std::vector<Item>* items);
  // `with` at loc, then T.block(...) as `call`.
  Stmt ParseBlock(Loc loc, const Node* call);
  void ParseAssert(std::vector<Item>* items);
  // The statement forms below start at `first`, the position of the statement's first token.
  void ParseAssignment(SuiteContext ctx, Loc first, NodePtr target, std::vector<Item>* items);
  void ParseAnnotatedLet(Loc first, NodePtr target, std::vector<Item>* items);
  void ParseExprStatement(SuiteContext ctx, Loc first, NodePtr expr, std::vector<Item>* items);
  bool ParseDeclaration(const std::string& name, const Node* call);
  // `name = B.view(d0, d1, ...)`: a DeclBuffer over B's data with the given shape.
  void ParseBufferView(Loc first, const std::string& name, const Buffer& src, const Node* call,
                       std::vector<Item>* items);
  void ParseAxisRemap(SuiteContext ctx, const Node* target, const Node* call);
  void ParseAxis(SuiteContext ctx, const std::string& name, const Node* call,
                 const std::string& kind);

  // ---- functions (parser_func.cc) ----
  // After the decorator: `def name(params) [-> T.dtype]:` and the body. A function that is not
  // private gets its name as its global symbol unless T.func_attr gives one.
  PrimFunc ParseFunction(std::string* name, bool private_def);
  void ParseParams(FuncFrame* frame);
  // `@<dotted>` or `@<dotted>(...)` on its own line; returns the decorator (a name or a call).
  NodePtr ParseDecorator();
  // `private=True` of `@T.prim_func(...)` (the other keywords TVM prints are accepted and ignored).
  bool PrimFuncDecoratorIsPrivate(const Node* decorator);
  // After `class Name:` of a module: its functions.
  IRModule ParseModuleBody();
  void SkipImports();
  // Reads ahead over the function body (from the current token, the start of the parameters)
  // for top-level declarations `n = T.int32()` / `n, k = T.int64(), T.int64()`, so that a shape
  // naming n before its declaration gets the declared dtype.
  void PrescanDeclarations();

  std::vector<std::unordered_map<std::string, Binding>> scopes_;
  // ParseOptions::values, then T.constexpr parameter values over them.
  std::unordered_map<std::string, Any> values_;
  bool python_def_ = false;
  bool private_def_ = false;
  // Top-level declarations of the current function found by PrescanDeclarations: dtype and
  // whether it is a size variable.
  std::unordered_map<std::string, std::pair<DataType, bool>> later_decls_;
  // Variables a buffer shape declared by naming them, which a later declaration may restate.
  std::unordered_set<const Object*> shape_declared_;
  // While set, an unknown name declares a variable of this dtype (buffer shapes of parameters).
  std::optional<DataType> declare_unknown_as_;
  // Extents of the loops around the current statement, for T.axis.remap.
  std::unordered_map<const Object*, PrimExpr> loop_extents_;
};

}  // namespace parser
}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_SRC_IR_PARSER_PARSER_IMPL_H_
