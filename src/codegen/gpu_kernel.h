// What the CUDA and Metal kernel emitters share: the declaration scopes of the C-like text they
// write, variables and pointers, the statements both write the same way, and a lane emitter base
// for vector expressions computed lane by lane. Each dialect (src/codegen/cuda/cuda_kernel.cc,
// src/codegen/metal/metal_kernel.cc) supplies its types, literals, casts, arithmetic, calls,
// allocations and thread indices.
#ifndef TESSEL_SRC_CODEGEN_GPU_KERNEL_H_
#define TESSEL_SRC_CODEGEN_GPU_KERNEL_H_

#include <tessel/ir/functor.h>

#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/c/codegen_c.h"

namespace tessel {
namespace codegen {

class GpuKernel;

// Expression text for one lane of a vector expression (lane < 0: a scalar expression). Variables,
// negation, selects, broadcasts and loads are written alike; the dialect writes the rest.
class GpuLaneEmitter : public ir::ExprFunctor<std::string(const ir::PrimExpr&)> {
 public:
  GpuLaneEmitter(GpuKernel* k, int lane) : k_(k), lane_(lane) {}

  // `e` as a scalar (when it is one) or as this emitter's lane.
  std::string Sub(const ir::PrimExpr& e);

  std::string VisitExpr_(const ir::StringImmNode* op) override;
  std::string VisitExpr_(const ir::ShuffleNode* op) override;
  std::string VisitExpr_(const ir::VarNode* op) override;
  std::string VisitExpr_(const ir::NotNode* op) override { return "(!" + Sub(op->a) + ")"; }
  std::string VisitExpr_(const ir::SelectNode* op) override {
    return "(" + Sub(op->condition) + " ? " + Sub(op->true_value) + " : " + Sub(op->false_value) +
           ")";
  }
  std::string VisitExpr_(const ir::BroadcastNode* op) override { return Sub(op->value); }
  std::string VisitExpr_(const ir::BufferLoadNode* op) override;

#define TESSEL_GPU_BINARY(Name)                               \
  std::string VisitExpr_(const ir::Name##Node* op) override { \
    return Binary(BinOp::k##Name, op->a, op->b);              \
  }
  TESSEL_CODEGEN_FOR_EACH_BINOP(TESSEL_GPU_BINARY)
#undef TESSEL_GPU_BINARY

 protected:
  virtual std::string Binary(BinOp op, const ir::PrimExpr& a, const ir::PrimExpr& b) = 0;
  // The calls both dialects write alike: shifts and bitwise ops (the C helpers where C's operators
  // differ from the IR), if_then_else, integer abs. nullopt for any other call.
  std::optional<std::string> CommonCall(const ir::CallNode* op);

  GpuKernel* k_;
  int lane_;
};

class GpuKernel : public ir::StmtFunctor<void(const ir::Stmt&)> {
 public:
  struct VarInfo {
    std::string pointee;      // element type a handle points at, in the dialect; "" = untyped
    std::string space;        // its address space word ("" where the dialect has none)
    bool lane_array = false;  // a vector variable held as an array of lanes
  };

  GpuKernel(const ir::PrimFunc& func, std::string name) : func_(func), name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  // ---- what a dialect supplies ----
  // "codegen <dialect>: <what> in <kernel>" as a ValueError.
  [[noreturn]] virtual void Fail(const std::string& what) const = 0;
  // The dialect's text of `e`, as a scalar or for one lane.
  virtual std::string Scalar(const ir::PrimExpr& e) = 0;
  virtual std::string Lane(const ir::PrimExpr& e, int lane) = 0;
  // The dialect's element type of memory holding `elem`, and its type of a scalar value of `t`.
  virtual std::string ElemType(ir::DataType elem) = 0;
  virtual std::string ValueType(ir::DataType t) = 0;
  // How a variable bound by a Let or a loop is declared (its pointee and address space).
  virtual VarInfo InfoOf(const ir::Var& v) = 0;
  // The declared type of variable `v`.
  virtual std::string DeclType(const ir::Var& v) = 0;
  // The lane of a load hoisted before the current statement, if `op` was.
  virtual bool HoistedLane(const ir::BufferLoadNode* op, int lane, std::string* out) = 0;
  // Binds what the statement about to be written needs first (hoisted loads, expression Lets)
  // and forgets it after (Done).
  virtual void Prepare(const ir::PrimExpr& e) = 0;
  virtual void Done() = 0;

  // ---- shared ----
  // The name of a defined variable (its lane, for a vector held as lanes).
  std::string VarRef(const ir::Var& v, int lane);
  // A pointer to elements of `elem` through handle `data` (cast when it points at another type).
  std::string Pointer(const ir::Var& data, ir::DataType elem);

  void VisitStmt_(const ir::SeqStmtNode* op) override {
    for (const ir::Stmt& s : op->seq) VisitStmt(s);
  }
  void VisitStmt_(const ir::DeclBufferNode* op) override { VisitStmt(op->body); }
  void VisitStmt_(const ir::BlockNode* op) override;
  void VisitStmt_(const ir::BlockRealizeNode* op) override;
  void VisitStmt_(const ir::LetStmtNode* op) override;
  void VisitStmt_(const ir::EvaluateNode* op) override;
  void VisitStmt_(const ir::ForNode* op) override;

 protected:
  void Line(const std::string& s) { os_ << std::string(2 * indent_, ' ') << s << "\n"; }
  // `s` one level deeper, its declarations forgotten after it.
  void Body(const ir::Stmt& s);
  // `{` with a new declaration scope, and its `}`.
  void OpenScope();
  void CloseScope();
  // Declares `v` in the current scope; false when the scope already declares it (assign).
  bool Declare(const ir::Var& v, VarInfo info);
  // The body of a loop, its variable declared (Metal tracks whether the trip count varies
  // between threads).
  virtual void LoopBody(const ir::ForNode* op) { Body(op->body); }
  // After a LetStmt's variable is bound, before its body.
  virtual void NoteLet(const ir::LetStmtNode* op) {}

  const ir::PrimFunc& func_;
  std::string name_;
  NameTable names_;
  std::unordered_map<const tvm::ffi::Object*, VarInfo> defined_;
  std::vector<const tvm::ffi::Object*> block_vars_;
  std::vector<std::vector<const tvm::ffi::Object*>> saved_scopes_;
  std::ostringstream os_;
  int indent_ = 1;
  int temps_ = 0;
};

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_SRC_CODEGEN_GPU_KERNEL_H_
