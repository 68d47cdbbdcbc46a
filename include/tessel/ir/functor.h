// Visitors and mutators over expressions and statements, dispatched on the node kind lists in
// node_list.h. A mutator returns the very same object for a subtree it did not change, so callers
// can test `result.same_as(input)` and passes return their input untouched when nothing applies.
// A statement that StmtExprMutator rebuilds keeps the span of the statement it replaces.
//
// StmtFunctor::VisitStmt also notes where an error comes from: when an exception propagates out of
// the visit of a statement that has a span, that span becomes the error's location (span.h),
// unless an inner statement gave one already.
//
// Every dispatch through VisitExpr/VisitStmt counts one level of nesting on a per-thread counter
// shared by all functors, so walks that call each other (a pass asking the analyzer) share one
// limit: IR nested deeper than kMaxIRDepth is a RecursionError naming the limit, never a stack
// overflow (docs/reliability.md, "Deep IR"). The cost is an increment and a compare per node.
#ifndef TESSEL_IR_FUNCTOR_H_
#define TESSEL_IR_FUNCTOR_H_

#include <tessel/ir/function.h>
#include <tvm/ffi/cast.h>
#include <tvm/ffi/error.h>

#include <functional>
#include <utility>

namespace tessel {
namespace ir {

using tvm::ffi::GetRef;

enum class ExprKind : uint8_t {
#define TESSEL_X(Name) k##Name,
  TESSEL_FOR_EACH_EXPR_NODE(TESSEL_X)
#undef TESSEL_X
      kUnknown
};
enum class StmtKind : uint8_t {
#define TESSEL_X(Name) k##Name,
  TESSEL_FOR_EACH_STMT_NODE(TESSEL_X)
#undef TESSEL_X
      kUnknown
};
// The deepest nesting any functor walk descends. The lowering pipeline stops at 10,000 levels
// within a 2 MiB stack (measured), a quarter of the 8 MiB stack of a main or Python thread: the
// rest is room for the analyzer's walks (up to their own limit) running inside a pass.
inline constexpr int kMaxIRDepth = 10000;

namespace detail {
// The functors' nesting on this thread. initial-exec: a thread-pointer-relative access without a
// call (libtessel is loaded at startup or by Python's dlopen, and one int fits the static TLS
// reserve).
extern thread_local int ir_walk_depth __attribute__((tls_model("initial-exec")));
// Undoes the failed increment and throws the RecursionError.
[[noreturn]] void ThrowIRTooDeep();
// One level of a functor walk.
class WalkLevel {
 public:
  WalkLevel() {
    if (++ir_walk_depth > kMaxIRDepth) ThrowIRTooDeep();
  }
  ~WalkLevel() { --ir_walk_depth; }
  WalkLevel(const WalkLevel&) = delete;
  WalkLevel& operator=(const WalkLevel&) = delete;
};

// Runtime type index -> kind, built once (type indices are small dense integers).
template <typename Kind>
struct KindTable {
  const Kind* data;
  int32_t size;
};
const KindTable<ExprKind>& ExprKindTable();
const KindTable<StmtKind>& StmtKindTable();

// Records the span of `stmt`, if it has one, as the location of the error unwinding through its
// visit (span.h: an inner statement's span, recorded first, wins).
void NoteErrorAt(const StmtNode* stmt) noexcept;
}  // namespace detail

// The kind of a node, by its runtime type index (a table lookup). Inline: the simplifiers ask it
// for every node they look at.
inline ExprKind KindOf(const PrimExprNode* node) {
  static const detail::KindTable<ExprKind>& t = detail::ExprKindTable();
  int32_t i = node->type_index();
  return i < t.size ? t.data[i] : ExprKind::kUnknown;
}
inline StmtKind KindOf(const StmtNode* node) {
  static const detail::KindTable<StmtKind>& t = detail::StmtKindTable();
  int32_t i = node->type_index();
  return i < t.size ? t.data[i] : StmtKind::kUnknown;
}

template <typename FType>
class ExprFunctor;

template <typename R, typename... Args>
class ExprFunctor<R(const PrimExpr&, Args...)> {
 public:
  virtual ~ExprFunctor() = default;
  R operator()(const PrimExpr& e, Args... args) {
    return VisitExpr(e, std::forward<Args>(args)...);
  }
  virtual R VisitExpr(const PrimExpr& e, Args... args) {
    const PrimExprNode* n = e.get();
    detail::WalkLevel level;
    switch (KindOf(n)) {
#define TESSEL_X(Name)    \
  case ExprKind::k##Name: \
    return VisitExpr_(static_cast<const Name##Node*>(n), std::forward<Args>(args)...);
      TESSEL_FOR_EACH_EXPR_NODE(TESSEL_X)
#undef TESSEL_X
      default:
        return VisitExprDefault_(n, std::forward<Args>(args)...);
    }
  }
#define TESSEL_X(Name)                                       \
  virtual R VisitExpr_(const Name##Node* op, Args... args) { \
    return DefaultFor_(op, std::forward<Args>(args)...);     \
  }
  TESSEL_FOR_EACH_EXPR_NODE(TESSEL_X)
#undef TESSEL_X
  virtual R VisitExprDefault_(const Object* op, Args...) {
    TVM_FFI_THROW(InternalError) << "expression functor does not handle " << op->GetTypeKey();
    TVM_FFI_UNREACHABLE();
  }

 private:
  template <typename T>
  R DefaultFor_(const T* op, Args... args) {
    return VisitExprDefault_(op, std::forward<Args>(args)...);
  }
  // A SizeVar is a Var: unless a functor says otherwise it is visited as one.
  R DefaultFor_(const SizeVarNode* op, Args... args) {
    return VisitExpr_(static_cast<const VarNode*>(op), std::forward<Args>(args)...);
  }
};

class ExprVisitor : public ExprFunctor<void(const PrimExpr&)> {
 public:
  using ExprFunctor::VisitExpr_;
#define TESSEL_X(Name) void VisitExpr_(const Name##Node* op) override;
  TESSEL_FOR_EACH_EXPR_NODE(TESSEL_X)
#undef TESSEL_X
  // Statements inside expressions do not exist; buffers do: visit their shape expressions only
  // when a subclass asks for it.
  virtual void VisitBufferUse(const Buffer& buffer) {}
};

class ExprMutator : public ExprFunctor<PrimExpr(const PrimExpr&)> {
 public:
  using ExprFunctor::VisitExpr_;
#define TESSEL_X(Name) PrimExpr VisitExpr_(const Name##Node* op) override;
  TESSEL_FOR_EACH_EXPR_NODE(TESSEL_X)
#undef TESSEL_X
  // Maps a buffer used by a load; the default keeps it.
  virtual Buffer VisitBufferUse(const Buffer& buffer) { return buffer; }

 protected:
  // Mutates each element; returns `arr` itself when no element changed.
  Array<PrimExpr> VisitArray(const Array<PrimExpr>& arr);
};

template <typename FType>
class StmtFunctor;

template <typename R, typename... Args>
class StmtFunctor<R(const Stmt&, Args...)> {
 public:
  virtual ~StmtFunctor() = default;
  R operator()(const Stmt& s, Args... args) { return VisitStmt(s, std::forward<Args>(args)...); }
  virtual R VisitStmt(const Stmt& s, Args... args) {
    const StmtNode* n = s.get();
    // A handler, not an RAII guard that asks std::uncaught_exceptions(): it costs nothing until
    // something throws (a guard measured about 5 ns a statement on a bare visitor walk).
    try {
      detail::WalkLevel level;
      switch (KindOf(n)) {
#define TESSEL_X(Name)    \
  case StmtKind::k##Name: \
    return VisitStmt_(static_cast<const Name##Node*>(n), std::forward<Args>(args)...);
        TESSEL_FOR_EACH_STMT_NODE(TESSEL_X)
#undef TESSEL_X
        default:
          return VisitStmtDefault_(n, std::forward<Args>(args)...);
      }
    } catch (...) {
      detail::NoteErrorAt(n);
      throw;
    }
  }
#define TESSEL_X(Name)                                         \
  virtual R VisitStmt_(const Name##Node* op, Args... args) {   \
    return VisitStmtDefault_(op, std::forward<Args>(args)...); \
  }
  TESSEL_FOR_EACH_STMT_NODE(TESSEL_X)
#undef TESSEL_X
  virtual R VisitStmtDefault_(const Object* op, Args...) {
    TVM_FFI_THROW(InternalError) << "statement functor does not handle " << op->GetTypeKey();
    TVM_FFI_UNREACHABLE();
  }
};

// Visits every statement and, through VisitExpr, every expression (including buffer shapes of
// allocated and matched buffers, and region bounds).
class StmtExprVisitor : public StmtFunctor<void(const Stmt&)>, public ExprVisitor {
 public:
  using ExprVisitor::VisitExpr;
  using ExprVisitor::VisitExpr_;
  using StmtFunctor::VisitStmt;
  using StmtFunctor::VisitStmt_;
#define TESSEL_X(Name) void VisitStmt_(const Name##Node* op) override;
  TESSEL_FOR_EACH_STMT_NODE(TESSEL_X)
#undef TESSEL_X
 protected:
  void VisitRegion(const BufferRegion& region);
};

// Rewrites statements and, through VisitExpr, the expressions in them.
class StmtExprMutator : public StmtFunctor<Stmt(const Stmt&)>, public ExprMutator {
 public:
  using ExprMutator::VisitExpr;
  using ExprMutator::VisitExpr_;
  using StmtFunctor::VisitStmt;
  using StmtFunctor::VisitStmt_;
#define TESSEL_X(Name) Stmt VisitStmt_(const Name##Node* op) override;
  TESSEL_FOR_EACH_STMT_NODE(TESSEL_X)
#undef TESSEL_X
 protected:
  BufferRegion VisitRegion(const BufferRegion& region);
};

// Calls f on every expression node of `stmt` (post-order).
void PostOrderVisit(const Stmt& stmt, std::function<void(const ObjectRef&)> f);
void PostOrderVisit(const PrimExpr& expr, std::function<void(const ObjectRef&)> f);

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_FUNCTOR_H_
