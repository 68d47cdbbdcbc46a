// The shared parts of the GPU kernel emitters (gpu_kernel.h).
#include "codegen/gpu_kernel.h"

#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>

namespace tessel {
namespace codegen {

using namespace ir;  // NOLINT(build/namespaces)

// ---- lanes ----

std::string GpuLaneEmitter::Sub(const PrimExpr& e) {
  if (e.dtype().is_scalar()) return k_->Scalar(e);
  return VisitExpr(e);
}

std::string GpuLaneEmitter::VisitExpr_(const StringImmNode* op) {
  k_->Fail("a string constant outside a call");
  TVM_FFI_UNREACHABLE();
}

std::string GpuLaneEmitter::VisitExpr_(const ShuffleNode* op) {
  k_->Fail("Shuffle");
  TVM_FFI_UNREACHABLE();
}

std::string GpuLaneEmitter::VisitExpr_(const VarNode* op) {
  return k_->VarRef(GetRef<Var>(op), lane_);
}

std::string GpuLaneEmitter::VisitExpr_(const BufferLoadNode* op) {
  if (op->indices.size() != 1) {
    k_->Fail("a BufferLoad of " + std::string(op->buffer->name) + " with " +
             std::to_string(op->indices.size()) + " indices (not flattened)");
  }
  std::string hoisted;
  if (k_->HoistedLane(op, lane_, &hoisted)) return hoisted;
  std::string ptr = k_->Pointer(op->buffer->data, op->dtype.element_of());
  return ptr + "[" + Sub(op->indices[0]) + "]";
}

std::optional<std::string> GpuLaneEmitter::CommonCall(const CallNode* op) {
  auto opref = op->op.as<Op>();
  if (!opref) return std::nullopt;
  const std::string& name = (*opref)->name;
  DataType t = op->dtype.element_of();
  auto arg = [&](size_t i) { return Sub(op->args[i]); };
  if (name == "if_then_else") return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
  if (name == "shift_left") {
    if (t.is_uint() && t.bits() >= 32) return "(" + arg(0) + " << " + arg(1) + ")";
    return "tsl_shl_" + TypeSuffix(t) + "(" + arg(0) + ", " + arg(1) + ")";
  }
  static const std::pair<const char*, const char*> kBitwise[] = {{"shift_right", " >> "},
                                                                 {"bitwise_and", " & "},
                                                                 {"bitwise_or", " | "},
                                                                 {"bitwise_xor", " ^ "}};
  for (const auto& [op_name, symbol] : kBitwise) {
    if (name == op_name) {
      return "((" + k_->ValueType(t) + ")(" + arg(0) + symbol + arg(1) + "))";
    }
  }
  if (name == "bitwise_not") {
    if (t.is_bool()) return "(!" + arg(0) + ")";
    return "((" + k_->ValueType(t) + ")(~" + arg(0) + "))";
  }
  if (name == "abs" && t.is_int_or_uint()) return "tsl_abs_" + TypeSuffix(t) + "(" + arg(0) + ")";
  return std::nullopt;
}

// ---- variables and scopes ----

std::string GpuKernel::VarRef(const Var& v, int lane) {
  auto it = defined_.find(v.get());
  if (it == defined_.end()) {
    Fail("variable '" + std::string(v->name_hint) + "' used where it is not defined");
  }
  const std::string& n = names_.Get(v);
  if (v.dtype().is_vector() && it->second.lane_array) {
    if (lane < 0) Fail("vector variable " + n + " used as a scalar");
    return n + "[" + std::to_string(lane) + "]";
  }
  return n;
}

std::string GpuKernel::Pointer(const Var& data, DataType elem) {
  std::string n = VarRef(data, -1);
  const VarInfo& info = defined_.at(data.get());
  std::string want = ElemType(elem.element_of());
  if (info.pointee == want) return n;
  return "((" + (info.space.empty() ? "" : info.space + " ") + want + "*)" + n + ")";
}

void GpuKernel::Body(const Stmt& s) {
  ++indent_;
  std::vector<const Object*> saved = std::move(block_vars_);
  block_vars_.clear();
  VisitStmt(s);
  for (const Object* v : block_vars_) defined_.erase(v);
  block_vars_ = std::move(saved);
  --indent_;
}

void GpuKernel::OpenScope() {
  Line("{");
  ++indent_;
  saved_scopes_.push_back(std::move(block_vars_));
  block_vars_.clear();
}

void GpuKernel::CloseScope() {
  for (const Object* v : block_vars_) defined_.erase(v);
  block_vars_ = std::move(saved_scopes_.back());
  saved_scopes_.pop_back();
  --indent_;
  Line("}");
}

bool GpuKernel::Declare(const Var& v, VarInfo info) {
  for (const Object* o : block_vars_) {
    if (o == v.get()) return false;
  }
  if (defined_.count(v.get())) {
    Fail("variable '" + std::string(v->name_hint) + "' bound again inside its scope");
  }
  defined_[v.get()] = info;
  block_vars_.push_back(v.get());
  names_.Get(v);
  return true;
}

// ---- statements ----

void GpuKernel::VisitStmt_(const BlockNode* op) {
  Fail("Block '" + std::string(op->name_hint) + "' (not lowered: run LowerBlocks)");
}

void GpuKernel::VisitStmt_(const BlockRealizeNode* op) {
  Fail("BlockRealize (not lowered: run LowerBlocks)");
}

void GpuKernel::VisitStmt_(const LetStmtNode* op) {
  Prepare(op->value);
  DataType t = op->value.dtype();
  if (t.is_vector()) {
    std::vector<std::string> lanes;
    for (int k = 0; k < t.lanes(); ++k) lanes.push_back(Lane(op->value, k));
    bool fresh = Declare(op->var, VarInfo{"", "", true});
    std::string n = names_.Get(op->var);
    if (fresh) Line(ValueType(t.element_of()) + " " + n + "[" + std::to_string(t.lanes()) + "];");
    for (int k = 0; k < t.lanes(); ++k) {
      Line(n + "[" + std::to_string(k) + "] = " + lanes[k] + ";");
    }
  } else {
    std::string value = Scalar(op->value);
    if (Declare(op->var, InfoOf(op->var))) {
      Line(DeclType(op->var) + " " + names_.Get(op->var) + " = " + value + ";");
    } else {
      Line(names_.Get(op->var) + " = " + value + ";");
    }
  }
  Done();
  NoteLet(op);
  VisitStmt(op->body);
}

void GpuKernel::VisitStmt_(const EvaluateNode* op) {
  if (const auto* call = op->value.as<CallNode>()) {
    if (call->op.same_as(builtin::assume())) return;
    if (call->op.same_as(Op::Get("ret"))) Fail("ret in a device kernel");
    Prepare(op->value);
    Line(Scalar(op->value) + ";");
    Done();
    return;
  }
  if (op->value.as<IntImmNode>() || op->value.as<FloatImmNode>()) return;
  Prepare(op->value);
  Line("(void)(" + Scalar(op->value) + ");");
  Done();
}

void GpuKernel::VisitStmt_(const ForNode* op) {
  if (op->kind == ForKind::kThreadBinding) {
    Fail("a thread_binding loop over " + std::string(op->loop_var->name_hint) +
         " (not lowered: run LowerThreadBinding)");
  }
  if (op->kind == ForKind::kParallel) {
    Fail("a parallel loop over " + std::string(op->loop_var->name_hint) +
         " (bind it to GPU threads instead)");
  }
  std::string min = Scalar(op->min);
  auto min_c = AsConstInt(op->min);
  std::string end = Scalar(min_c && *min_c == 0 ? op->extent : Add(op->min, op->extent));
  OpenScope();
  Declare(op->loop_var, VarInfo{"", "", false});
  std::string i = names_.Get(op->loop_var);
  if (op->kind == ForKind::kUnrolled) Line("#pragma unroll");
  Line("for (" + DeclType(op->loop_var) + " " + i + " = " + min + "; " + i + " < " + end + "; ++" +
       i + ") {");
  LoopBody(op);
  Line("}");
  CloseScope();
}

}  // namespace codegen
}  // namespace tessel
