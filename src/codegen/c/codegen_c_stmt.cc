// Statements to C, and the kernel function around them.
//
// Errors (a failed AssertStmt, an allocation that fails) are recorded in the kernel's tsl_err and
// control jumps forward to the innermost cleanup label: the one that frees the innermost heap
// allocation, or, inside a parallel loop, the end of the current iteration (a jump may not leave
// an OpenMP region). Each cleanup re-checks tsl_err and jumps on outwards, so every exit frees
// what was allocated and the first error reaches the caller.
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "codegen/c/codegen_c.h"
#include "codegen/c/launch_kernel.h"

namespace tessel {
namespace codegen {

namespace {

using namespace ir;  // NOLINT(build/namespaces)

// Allocations of at most this many bytes with a constant size live on the stack. 1 KiB covers the
// register tiles and small accumulators that lowering creates, and stays far below any thread's
// stack (OpenMP workers often get only a few MiB, and unrolled or nested code multiplies it).
constexpr int64_t kMaxStackBytes = 1024;
// A parallel loop forks threads only when it executes at least this many innermost statements:
// about 10 to 50 us of work, well above an OpenMP fork/join on an idle machine (1 to 5 us), so a
// small call stays on the caller's thread (see parallel_work.cc).
constexpr int64_t kMinParallelWork = 1 << 15;
// The largest allocation of constant size that the C backend will compile: 2^47 bytes (128 TiB),
// the user address space of x86-64 and AArch64 with 48-bit virtual addresses (Linux, macOS). No
// malloc of more can succeed on those machines, so such a size is a mistake known at build time;
// a smaller one that the machine cannot hold still fails at run time, through tsl_alloc.
constexpr int64_t kMaxAllocationBytes = int64_t{1} << 47;

class StmtEmitter : public StmtFunctor<void(const Stmt&)> {
 public:
  explicit StmtEmitter(CEmitter* cg) : cg_(cg) {}

  std::string Run(const Stmt& body) {
    exits_.push_back({"tsl_exit", false});
    PushBlock();
    VisitStmt(body);
    PopBlock();
    return os_.str();
  }
  bool exit_used() const { return exits_[0].used; }

  void VisitStmt_(const SeqStmtNode* op) override {
    for (const Stmt& s : op->seq) VisitStmt(s);
  }

  void VisitStmt_(const LetStmtNode* op) override {
    std::string value = cg_->Expr(op->value);
    cg_->BindLet(op->var, op->value);
    if (blocks_.back().declared.count(op->var.get())) {
      Line(cg_->VarRef(op->var) + " = " + value + ";");
    } else {
      Declare(op->var);
      Line(cg_->DeclType(op->var) + " " + cg_->VarRef(op->var) + " = " + value + ";");
    }
    VisitStmt(op->body);
  }

  void VisitStmt_(const AttrStmtNode* op) override { VisitStmt(op->body); }
  void VisitStmt_(const DeclBufferNode* op) override { VisitStmt(op->body); }

  void VisitStmt_(const AssertStmtNode* op) override {
    const auto* msg = op->message.as<StringImmNode>();
    if (!msg) Unsupported("an AssertStmt whose message is not a string", cg_->symbol());
    std::string text = cg_->symbol() + ": " + std::string(msg->value);
    std::string cond = cg_->Expr(op->condition);
    Line("if (!" + Paren(cond) + ") {");
    ++indent_;
    const auto* eq = op->condition.as<EQNode>();
    if (eq && eq->a.dtype().is_scalar()) {
      std::string ca, aa, cb, ab;
      PrintfArg(eq->a.dtype(), cg_->Expr(eq->a), &ca, &aa);
      PrintfArg(eq->b.dtype(), cg_->Expr(eq->b), &cb, &ab);
      Line("tsl_fail(&tsl_err, \"RuntimeError\", \"%s (%s = " + ca + ", %s = " + cb + ")\", " +
           CStringLiteral(text) + ", " + CStringLiteral(AsText(eq->a)) + ", " + aa + ", " +
           CStringLiteral(AsText(eq->b)) + ", " + ab + ");");
    } else {
      Line("tsl_fail(&tsl_err, \"RuntimeError\", \"%s\", " + CStringLiteral(text) + ");");
    }
    Jump();
    --indent_;
    Line("}");
    VisitStmt(op->body);
  }

  void VisitStmt_(const BufferStoreNode* op) override { Line(cg_->Store(op)); }

  void VisitStmt_(const EvaluateNode* op) override {
    if (const auto* call = op->value.as<CallNode>()) {
      if (call->op.same_as(builtin::assume())) return;
      if (call->op.same_as(Op::Get("ret"))) {
        Return(call->args[0]);
        return;
      }
      if (IsLaunchCall(op->value)) {
        Launch(call);
        return;
      }
      Line(cg_->Expr(op->value) + ";");
      return;
    }
    if (op->value.as<IntImmNode>() || op->value.as<FloatImmNode>()) return;
    Line("(void)" + Paren(cg_->Expr(op->value)) + ";");
  }

  void VisitStmt_(const IfThenElseNode* op) override {
    Line("if " + Paren(cg_->Expr(op->condition)) + " {");
    Body(op->then_case);
    if (op->else_case) {
      Line("} else {");
      Body(*op->else_case);
    }
    Line("}");
  }

  void VisitStmt_(const WhileNode* op) override {
    Line("while " + Paren(cg_->Expr(op->condition)) + " {");
    Body(op->body);
    Line("}");
  }

  void VisitStmt_(const ForNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;

  void VisitStmt_(const BlockNode* op) override {
    Unsupported("Block '" + std::string(op->name_hint) + "' (not lowered: run LowerBlocks)",
                cg_->symbol());
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    Unsupported(
        "BlockRealize '" + std::string(op->block->name_hint) + "' (not lowered: run LowerBlocks)",
        cg_->symbol());
  }

 private:
  struct Exit {
    std::string label;
    bool used;
  };
  struct CBlock {
    // Variables declared in this C block, and whether each was defined before (shadowing).
    std::unordered_map<const Object*, bool> declared;
    std::vector<Var> vars;
  };

  static std::string Paren(const std::string& s) {
    if (s.size() >= 2 && s.front() == '(' && s.back() == ')') {
      // Only when the outer parentheses match each other.
      int depth = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
        if (depth == 0 && i + 1 < s.size()) return "(" + s + ")";
      }
      return s;
    }
    return "(" + s + ")";
  }

  void Launch(const CallNode* call) {
    LaunchCode code = EmitLaunch(cg_, call);
    Line("{");
    ++indent_;
    for (const std::string& s : code.setup) Line(s);
    Line("if (" + code.call + " != 0) {");
    ++indent_;
    Jump();
    --indent_;
    Line("}");
    --indent_;
    Line("}");
  }

  // ret(v): store the value for the wrapper and leave through the cleanup chain like an error.
  void Return(const PrimExpr& value) {
    const std::string& fn = cg_->symbol();
    if (cg_->func_->ret_type.is_void()) Unsupported("ret in a function without a return type", fn);
    if (parallel_depth_ > 0) Unsupported("ret inside a parallel loop", fn);
    Line("*tsl_ret_value = " + cg_->Expr(value) + ";");
    Line("tsl_done = 1;");
    Jump();
  }
  std::string StopCondition() const {
    return cg_->func_->ret_type.is_void() ? "tsl_err.failed" : "tsl_err.failed || tsl_done";
  }

  void Line(const std::string& s) { os_ << std::string(2 * indent_, ' ') << s << "\n"; }
  void Jump() {
    exits_.back().used = true;
    Line("goto " + exits_.back().label + ";");
  }
  void PushBlock() { blocks_.emplace_back(); }
  void PopBlock() {
    for (const Var& v : blocks_.back().vars) {
      if (!blocks_.back().declared.at(v.get())) cg_->Undefine(v);
    }
    blocks_.pop_back();
  }
  void Declare(const Var& v, DataType elem = DataType::Void()) {
    blocks_.back().declared[v.get()] = cg_->IsDefined(v);
    blocks_.back().vars.push_back(v);
    cg_->Define(v, elem);
  }
  // `s` as the indented contents of a { } block the caller opened and closes.
  void Body(const Stmt& s) {
    ++indent_;
    PushBlock();
    VisitStmt(s);
    PopBlock();
    --indent_;
  }
  std::string Label(const std::string& hint) {
    return "tsl_" + hint + "_" + std::to_string(++labels_);
  }

  CEmitter* cg_;
  std::ostringstream os_;
  int indent_ = 1;
  int labels_ = 0;
  int parallel_depth_ = 0;
  std::vector<Exit> exits_;
  std::vector<CBlock> blocks_;
};

void StmtEmitter::VisitStmt_(const ForNode* op) {
  const std::string& fn = cg_->symbol();
  if (op->kind == ForKind::kThreadBinding) {
    Unsupported("a thread_binding loop over " + std::string(op->loop_var->name_hint) +
                    " (thread bindings need a GPU target)",
                fn);
  }
  std::string min = cg_->Expr(op->min);
  std::string end;
  auto min_c = AsConstInt(op->min);
  if (min_c && *min_c == 0) {
    end = cg_->Expr(op->extent);
  } else {
    end = cg_->Expr(Add(op->min, op->extent));
  }
  auto extent_c = AsConstInt(op->extent);
  bool parallel = op->kind == ForKind::kParallel;
  if (parallel) {
    PrimExpr work = ParallelWork(op);
    auto work_c = AsConstInt(work);
    if (!work_c) {
      Line("#pragma omp parallel for if(" +
           cg_->Expr(ge(work, MakeConst(DataType::Int(64), kMinParallelWork))) + ")");
    } else if (*work_c >= kMinParallelWork) {
      Line("#pragma omp parallel for");
    } else {
      parallel = false;
    }
  } else if (op->kind == ForKind::kUnrolled && extent_c && *extent_c > 0 && *extent_c <= 1024) {
    Line("#pragma GCC unroll " + std::to_string(*extent_c));
  }
  PushBlock();
  Declare(op->loop_var);
  cg_->BindLoop(op->loop_var, op->min, op->extent);
  std::string i = cg_->VarRef(op->loop_var);
  Line("for (" + cg_->DeclType(op->loop_var) + " " + i + " = " + min + "; " + i + " < " + end +
       "; ++" + i + ") {");
  if (parallel) {
    exits_.push_back({Label("next"), false});
    ++parallel_depth_;
  }
  Body(op->body);
  if (parallel) {
    --parallel_depth_;
    Exit next = exits_.back();
    exits_.pop_back();
    if (next.used) {
      ++indent_;
      Line(next.label + ":;");
      --indent_;
    }
    Line("}");
    if (next.used) {
      Line("if (tsl_err.failed) {");
      ++indent_;
      Jump();
      --indent_;
      Line("}");
    }
  } else {
    Line("}");
  }
  PopBlock();
}

void StmtEmitter::VisitStmt_(const AllocateNode* op) {
  const std::string& fn = cg_->symbol();
  if (op->extents.size() != 1) {
    Unsupported("an Allocate of " + std::string(op->buffer_var->name_hint) + " with " +
                    std::to_string(op->extents.size()) + " extents (not flattened)",
                fn);
  }
  auto cond = AsConstInt(op->condition);
  if (!cond || *cond != 1) {
    Unsupported("an Allocate of " + std::string(op->buffer_var->name_hint) + " with a condition",
                fn);
  }
  if (op->dtype.is_vector()) {
    Unsupported("an Allocate of vector dtype " + op->dtype.str(), fn);
  }
  std::string st = StorageCType(op->dtype);
  int64_t elem_bytes = op->dtype.is_bool() ? 1 : op->dtype.bytes();
  auto extent = AsConstInt(op->extents[0]);
  // In 128 bits: an extent near 2^63 times the element size must not wrap to a small size.
  __int128 total = extent ? static_cast<__int128>(*extent) * elem_bytes : 0;
  if (total > kMaxAllocationBytes) {
    std::string size = total > INT64_MAX ? "more than 2^63" : std::to_string(int64_t(total));
    TVM_FFI_THROW(ValueError) << fn << ": the allocation of " << op->buffer_var->name_hint
                              << " needs " << size << " bytes (" << *extent << " x " << op->dtype
                              << "), more than the limit of " << kMaxAllocationBytes
                              << " bytes (kMaxAllocationBytes: a 48-bit address space)";
  }
  Line("{");
  ++indent_;
  PushBlock();
  Declare(op->buffer_var, op->dtype);
  std::string name = cg_->VarRef(op->buffer_var);
  if (extent && *extent > 0 && total <= kMaxStackBytes) {
    Line(st + " " + name + "[" + std::to_string(*extent) + "] __attribute__((aligned(64)));");
    VisitStmt(op->body);
    PopBlock();
    --indent_;
    Line("}");
    return;
  }
  std::string bytes =
      "(int64_t)" + Paren(cg_->Expr(op->extents[0])) + " * " + std::to_string(elem_bytes);
  Line(st + "* " + name + " = (" + st + "*)tsl_alloc(" + bytes + ");");
  Line("if (" + name + " == NULL) {");
  ++indent_;
  Line("tsl_fail(&tsl_err, \"RuntimeError\", \"%s%lld%s\", " +
       CStringLiteral(fn + ": out of memory allocating ") + ", (long long)(" + bytes + "), " +
       CStringLiteral(" bytes for " + std::string(op->buffer_var->name_hint)) + ");");
  Jump();
  --indent_;
  Line("}");
  exits_.push_back({Label("free_" + name), false});
  VisitStmt(op->body);
  Exit free_label = exits_.back();
  exits_.pop_back();
  if (free_label.used) Line(free_label.label + ":");
  Line("free(" + name + ");");
  if (free_label.used) {
    Line("if (" + StopCondition() + ") {");
    ++indent_;
    Jump();
    --indent_;
    Line("}");
  }
  PopBlock();
  --indent_;
  Line("}");
}

}  // namespace

CEmitter::CEmitter(const ir::PrimFunc& func, std::string symbol, NameTable* names, VectorLib* vec)
    : func_(func),
      symbol_(std::move(symbol)),
      names_(names),
      vec_(vec),
      analyzer_(std::make_unique<arith::Analyzer>()) {}

void CEmitter::BindLoop(const Var& v, const PrimExpr& min, const PrimExpr& extent) {
  if (!v.dtype().is_int() || !v.dtype().is_scalar()) return;
  Range r(min, extent);
  // A loop that may not run binds nothing (its body never runs with any value).
  if (analyzer_->MayBeNonEmpty(r)) analyzer_->Bind(v, r, /*allow_override=*/true);
}

void CEmitter::BindLet(const Var& v, const PrimExpr& value) {
  if (!v.dtype().is_int() || !v.dtype().is_scalar()) return;
  bool self = false;
  PostOrderVisit(value, [&](const tvm::ffi::ObjectRef& n) { self |= n.get() == v.get(); });
  if (!self) analyzer_->Bind(v, value, /*allow_override=*/true);
}

bool CEmitter::COperatorExact(BinOp op, const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (!t.is_int() || !t.is_scalar() || (t.bits() != 32 && t.bits() != 64)) return false;
  using i128 = __int128;
  arith::ConstIntBound ba = analyzer_->ConstIntBound(a), bb = analyzer_->ConstIntBound(b);
  i128 alo = ba->min_value, ahi = ba->max_value, blo = bb->min_value, bhi = bb->max_value;
  if (alo > ahi || blo > bhi) return false;  // unreachable code: no reason to bother
  i128 lo, hi;
  switch (op) {
    case BinOp::kAdd:
      lo = alo + blo;
      hi = ahi + bhi;
      break;
    case BinOp::kSub:
      lo = alo - bhi;
      hi = ahi - blo;
      break;
    case BinOp::kMul: {
      i128 c[4] = {alo * blo, alo * bhi, ahi * blo, ahi * bhi};
      lo = std::min(std::min(c[0], c[1]), std::min(c[2], c[3]));
      hi = std::max(std::max(c[0], c[1]), std::max(c[2], c[3]));
      break;
    }
    case BinOp::kFloorDiv:
    case BinOp::kFloorMod:
      return alo >= 0 && blo > 0;
    case BinOp::kDiv:
    case BinOp::kMod:
      return blo > -1 || bhi < -1;
    default:
      return false;
  }
  return lo >= static_cast<i128>(t.min_int()) && hi <= static_cast<i128>(t.max_int());
}

void CEmitter::Define(const Var& v, DataType elem) {
  if (elem.is_void() && v.dtype().is_handle() && !v->pointee.is_void()) elem = v->pointee;
  defined_[v.get()] = elem.is_void() ? std::string() : StorageCType(elem);
  names_->Get(v);
}

std::string CEmitter::Kernel(const std::string& kernel_name,
                             const std::vector<std::string>& params) {
  StmtEmitter body(this);
  std::string text = body.Run(func_->body);
  std::ostringstream os;
  os << "static int32_t " << kernel_name << "(";
  if (params.empty()) os << "void";
  for (size_t i = 0; i < params.size(); ++i) os << (i ? ", " : "") << params[i];
  os << ") {\n  tsl_error_t tsl_err;\n  tsl_err.failed = 0;\n";
  if (!func_->ret_type.is_void()) os << "  int tsl_done = 0;\n  (void)tsl_done;\n";
  os << text;
  if (body.exit_used()) os << "tsl_exit:\n";
  os << "  return tsl_finish(&tsl_err);\n}\n";
  return os.str();
}

}  // namespace codegen
}  // namespace tessel
