// One device kernel to MSL.
//
// Integer expressions use the C generator's text (the wrapping helpers are in the MSL prelude),
// float16/bfloat16 are computed in float and rounded once like the C and CUDA backends, and
// vector expressions are emitted lane by lane (`Lane(e, k)` is the scalar MSL for lane k of e).
// Contiguous 2-4 lane loads and stores go through packed_<T><n> types, which need only element
// alignment, so no launch depends on a buffer's offset being a multiple of 16. MSL has no lambdas:
// an expression Let is bound by a statement before the one that uses it. Threadgroup arrays are
// declared at kernel scope, where MSL requires them.
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/split_host_device.h>
#include <tvm/ffi/error.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "codegen/c/codegen_c.h"
#include "codegen/gpu_kernel.h"
#include "codegen/metal/codegen_metal.h"
#include "runtime/launch_args.h"

namespace tessel {
namespace codegen {

namespace {

using namespace ir;  // NOLINT(build/namespaces)

// MSL words the C name table does not already keep away from IR variables.
const char* const kMslReserved[] = {
    "kernel",    "device",   "constant", "threadgroup", "thread",   "uint",    "ushort",
    "uchar",     "ulong",    "half",     "bfloat",      "float2",   "float3",  "float4",
    "int2",      "int3",     "int4",     "uint2",       "uint3",    "uint4",   "half2",
    "half4",     "metal",    "select",   "as_type",     "simd_sum", "new",     "delete",
    "class",     "this",     "template", "operator",    "private",  "public",  "protected",
    "virtual",   "friend",   "using",    "typename",    "try",      "catch",   "throw",
    "namespace", "mutable",  "explicit", "export",      "true",     "false",   "nullptr",
    "constexpr", "decltype", "noexcept", "static_cast", "sampler",  "texture", "vec",
    "fmin",      "fmax",     "rint",     "rsqrt",       "clamp",    "mix",     "step"};

bool IsSmallFloat(DataType t) { return t.is_floating() && t.bits() == 16; }

std::string MslScalarType(DataType t, const std::string& kernel, const MetalOptions& options) {
  if (t.is_bool()) return "bool";
  if (t.is_handle()) MetalUnsupported("a pointer value used as a scalar", kernel);
  if (t.is_int() || t.is_uint()) {
    const char* base = t.bits() == 8    ? "char"
                       : t.bits() == 16 ? "short"
                       : t.bits() == 32 ? "int"
                       : t.bits() == 64 ? "long"
                                        : nullptr;
    if (base == nullptr)
      MetalUnsupported("an integer of " + std::to_string(t.bits()) + " bits", kernel);
    return (t.is_uint() ? "u" : "") + std::string(base);
  }
  if (t.is_bfloat()) {
    if (options.msl_version < "3.1") {
      MetalUnsupported("bfloat16 (MSL's bfloat needs MSL 3.1 or later; the target asks for MSL " +
                           options.msl_version + ": use -msl=3.1)",
                       kernel);
    }
    return "bfloat";
  }
  if (t.is_float() && t.bits() == 16) return "half";
  if (t.is_float() && t.bits() == 32) return "float";
  if (t.is_float() && t.bits() == 64) {
    MetalUnsupported("a float64 value (Metal has no double; compute in float32)", kernel);
  }
  MetalUnsupported("a value of dtype " + t.str(), kernel);
}

// The address-space word of memory in storage scope `scope`.
std::string AddressSpace(const std::string& scope, const std::string& kernel) {
  if (scope.empty() || scope == "global") return "device";
  if (scope == "shared" || scope == "shared.dyn") return "threadgroup";
  if (scope == "local") return "thread";
  MetalUnsupported("memory in storage scope '" + scope + "'", kernel);
}

std::string FloatText(float f) {
  if (std::isnan(f)) return "NAN";
  if (std::isinf(f)) return f > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

class Kernel;

// Expression text for one lane (lane < 0: a scalar expression), in MSL.
class LaneEmitter : public GpuLaneEmitter {
 public:
  LaneEmitter(Kernel* k, int lane);

  std::string VisitExpr_(const IntImmNode* op) override;
  std::string VisitExpr_(const FloatImmNode* op) override;
  std::string VisitExpr_(const CastNode* op) override;
  std::string VisitExpr_(const RampNode* op) override;
  std::string VisitExpr_(const LetNode* op) override;
  std::string VisitExpr_(const CallNode* op) override;

 private:
  std::string Binary(BinOp op, const PrimExpr& a, const PrimExpr& b) override;
  Kernel* kernel_;
};

class Kernel : public GpuKernel {
 public:
  Kernel(const PrimFunc& func, std::string name, const MetalOptions& options)
      : GpuKernel(func, std::move(name)), options_(options) {
    for (const char* r : kMslReserved) names_.Reserve(r);
    for (const char* r :
         {"tsl_args", "tsl_dyn_tg", "tsl_group_id", "tsl_thread_id", "tsl_simd_lane"}) {
      names_.Reserve(r);
    }
  }

  std::string Run(runtime::MetalKernelInfo* info);

  [[noreturn]] void Fail(const std::string& what) const override { MetalUnsupported(what, name_); }
  std::string Scalar(const PrimExpr& e) override { return LaneEmitter(this, -1)(e); }
  std::string Lane(const PrimExpr& e, int lane) override { return LaneEmitter(this, lane).Sub(e); }
  std::string Type(DataType t) { return MslScalarType(t.element_of(), name_, options_); }
  std::string ElemType(DataType elem) override { return Type(elem); }
  std::string ValueType(DataType t) override { return Type(t); }
  VarInfo InfoOf(const Var& v) override {
    if (!v.dtype().is_handle()) return VarInfo{"", "", false};
    if (v->pointee.is_void()) {
      Fail("a pointer '" + std::string(v->name_hint) + "' without an element type");
    }
    return VarInfo{Type(v->pointee), AddressSpace(v->storage_scope, name_), false};
  }
  std::string DeclType(const Var& v) override {
    if (v.dtype().is_handle()) {
      VarInfo i = InfoOf(v);
      return i.space + " " + i.pointee + "*";
    }
    return Type(v.dtype());
  }
  bool HoistedLane(const BufferLoadNode* op, int lane, std::string* out) override {
    auto it = hoisted_.find(op);
    if (it == hoisted_.end() || lane < 0) return false;
    *out = it->second + "[" + std::to_string(lane) + "]";
    return true;
  }
  // Binds the expression Lets and hoists the wide loads of `e` before the current statement.
  void Prepare(const PrimExpr& e) override;
  // Forgets what Prepare bound (the statement that used it is written).
  void Done() override {
    hoisted_.clear();
    for (const auto& kv : let_vars_) defined_.erase(kv);
    let_vars_.clear();
    let_names_.clear();
  }
  bool HoistedLet(const LetNode* op, std::string* out) {
    auto it = let_names_.find(op);
    if (it == let_names_.end()) return false;
    *out = it->second;
    return true;
  }
  void NoteShuffle() { uses_simd_lane_ = true; }

  // ---- statements ----
  void VisitStmt_(const AttrStmtNode* op) override;
  void VisitStmt_(const AssertStmtNode* op) override;
  void VisitStmt_(const BufferStoreNode* op) override;
  void VisitStmt_(const IfThenElseNode* op) override {
    Prepare(op->condition);
    Line("if (" + Scalar(op->condition) + ") {");
    Done();
    Divergent scope(this, op->condition);
    Body(op->then_case);
    if (op->else_case) {
      Line("} else {");
      Body(*op->else_case);
    }
    Line("}");
  }
  void VisitStmt_(const WhileNode* op) override {
    if (HasLet(op->condition)) Fail("an expression Let in a while condition");
    Line("while (" + Scalar(op->condition) + ") {");
    Divergent scope(this, op->condition);
    Body(op->body);
    Line("}");
  }
  void VisitStmt_(const ForNode* op) override {
    if (HasLet(op->min) || HasLet(op->extent)) Fail("an expression Let in a loop bound");
    GpuKernel::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override;

  // Whether a barrier here is reached by every thread of the threadgroup: no enclosing condition
  // or loop bound depends on the thread (its index, or a value computed from one or from memory).
  void CheckUniform(const std::string& what) {
    if (!divergent_.empty()) {
      Fail(what + " under a condition that depends on the thread (" + divergent_.back() +
           "): Metal requires every thread of the threadgroup to reach it");
    }
  }

 private:
  // Marks the statements of its scope as divergent when `cond` varies between threads.
  class Divergent {
   public:
    Divergent(Kernel* k, const PrimExpr& cond) : k_(k) {
      if (k->Varies(cond)) {
        k->divergent_.push_back(AsTextShort(cond));
        pushed_ = true;
      }
    }
    ~Divergent() {
      if (pushed_) k_->divergent_.pop_back();
    }

   private:
    Kernel* k_;
    bool pushed_ = false;
  };
  static std::string AsTextShort(const PrimExpr& e);

  bool Varies(const PrimExpr& e) {
    bool varies = false;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (const auto* v = n.as<VarNode>()) varies = varies || varying_.count(v);
      if (n.as<BufferLoadNode>() || n.as<CallNode>()) {
        // A load or a call may differ between threads; constants folded away never reach here.
        if (const auto* c = n.as<CallNode>()) {
          auto op = c->op.as<Op>();
          if (op && ((*op)->name == "call_pure_extern" || (*op)->name == "if_then_else" ||
                     (*op)->name == "likely")) {
            return;
          }
        }
        varies = true;
      }
    });
    return varies;
  }

  bool HasLet(const PrimExpr& e) {
    bool found = false;
    PostOrderVisit(e, [&](const ObjectRef& n) { found = found || n.as<LetNode>() != nullptr; });
    return found;
  }
  void NoteLet(const LetStmtNode* op) override {
    if (Varies(op->value)) varying_.insert(op->var.get());
  }
  // A thread-dependent trip count makes the loop variable and the body divergent.
  void LoopBody(const ForNode* op) override {
    if (!(Varies(op->min) || Varies(op->extent))) {
      Body(op->body);
      return;
    }
    varying_.insert(op->loop_var.get());
    Divergent scope(this, Add(op->min, op->extent));
    Body(op->body);
  }
  void ThreadExtent(const AttrStmtNode* op);
  static bool WideType(DataType elem, int lanes) {
    if (lanes < 2 || lanes > 4 || elem.is_bool() || elem.is_bfloat()) return false;
    return elem.bits() == 16 || elem.bits() == 32;
  }

  const MetalOptions& options_;
  std::unordered_map<const BufferLoadNode*, std::string> hoisted_;
  std::unordered_map<const LetNode*, std::string> let_names_;
  std::vector<const Object*> let_vars_;
  std::set<const Object*> varying_;
  std::vector<std::string> divergent_;
  std::unordered_map<const Object*, PrimExpr> dyn_offsets_;
  std::vector<std::string> threadgroup_decls_;
  int64_t threadgroup_bytes_ = 0;
  std::map<std::string, int64_t> thread_extents_;  // the largest constant extent per threadIdx tag
  bool uses_simd_lane_ = false;
};

std::string Kernel::AsTextShort(const PrimExpr& e) {
  std::string s = AsText(e);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// ---- expressions ----

LaneEmitter::LaneEmitter(Kernel* k, int lane) : GpuLaneEmitter(k, lane), kernel_(k) {}

std::string LaneEmitter::VisitExpr_(const IntImmNode* op) {
  DataType t = op->dtype;
  int64_t v = op->value;
  if (t.is_bool()) return v ? "true" : "false";
  if (t.is_int() && t.bits() == 32) return v == INT32_MIN ? "(-2147483647 - 1)" : std::to_string(v);
  if (t.is_uint() && t.bits() == 32) return std::to_string(static_cast<uint32_t>(v)) + "u";
  if (t.is_int() && t.bits() == 64) {
    if (v == INT64_MIN) return "(-9223372036854775807L - 1L)";
    return "(" + std::to_string(v) + "L)";
  }
  if (t.is_uint() && t.bits() == 64) return "(" + std::to_string(static_cast<uint64_t>(v)) + "UL)";
  return "((" + kernel_->Type(t) + ")" + std::to_string(v) + ")";
}

std::string LaneEmitter::VisitExpr_(const FloatImmNode* op) {
  DataType t = op->dtype;
  if (t.is_float() && t.bits() == 32) return FloatText(static_cast<float>(op->value));
  if (IsSmallFloat(t)) {
    // Rounded once to the small type here, so the literal is exact in float and in it.
    uint16_t bits = t.is_bfloat() ? runtime::RoundToSmallFloat(op->value, 7, 8)
                                  : runtime::RoundToSmallFloat(op->value, 10, 5);
    float f;
    if (t.is_bfloat()) {
      uint32_t u = static_cast<uint32_t>(bits) << 16;
      std::memcpy(&f, &u, sizeof f);
    } else {
      int e = (bits >> 10) & 0x1F, m = bits & 0x3FF;
      f = e == 0x1F ? (m ? NAN : INFINITY)
          : e == 0  ? std::ldexp(static_cast<float>(m), -24)
                    : std::ldexp(static_cast<float>(m | 0x400), e - 25);
      if (bits & 0x8000) f = -f;
    }
    return "((" + kernel_->Type(t) + ")" + FloatText(f) + ")";
  }
  return kernel_->Type(t);  // float64: refused with its message
}

std::string LaneEmitter::VisitExpr_(const CastNode* op) {
  DataType to = op->dtype.element_of(), from = op->value.dtype().element_of();
  std::string s = Sub(op->value);
  if (to == from) return s;
  std::string type = kernel_->Type(to);
  kernel_->Type(from);  // refuses a float64 source with its message
  if (to.is_bool()) return "(" + s + " != 0)";
  // Small floats convert through float, as the C backend does: a small float never rounds twice,
  // and an integer rounds once (float holds exactly every integer a half or bfloat can tell apart;
  // larger ones overflow to infinity either way).
  bool to_f32 = to.is_float() && to.bits() == 32;
  bool from_f32 = from.is_float() && from.bits() == 32;
  if (IsSmallFloat(from) && !to_f32) s = "((float)" + s + ")";
  if (IsSmallFloat(to) && !from_f32 && from.is_int_or_uint()) s = "((float)" + s + ")";
  return "((" + type + ")" + s + ")";
}

std::string LaneEmitter::Binary(BinOp op, const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype().element_of();
  std::string x = Sub(a), y = Sub(b);
  const std::string& fn = kernel_->name();
  bool compare = op == BinOp::kEQ || op == BinOp::kNE || op == BinOp::kLT || op == BinOp::kLE ||
                 op == BinOp::kGT || op == BinOp::kGE;
  if (t.is_floating()) {
    std::string type = kernel_->Type(t);
    bool small = IsSmallFloat(t);
    if (small) {
      x = "((float)" + x + ")";
      y = "((float)" + y + ")";
    }
    std::string r;
    switch (op) {
      case BinOp::kAdd:
        r = "(" + x + " + " + y + ")";
        break;
      case BinOp::kSub:
        r = "(" + x + " - " + y + ")";
        break;
      case BinOp::kMul:
        r = "(" + x + " * " + y + ")";
        break;
      case BinOp::kDiv:
        r = "(" + x + " / " + y + ")";
        break;
      case BinOp::kMod:
        r = "fmod(" + x + ", " + y + ")";
        break;
      case BinOp::kFloorDiv:
        r = "tsl_floordiv_f32(" + x + ", " + y + ")";
        break;
      case BinOp::kFloorMod:
        r = "tsl_floormod_f32(" + x + ", " + y + ")";
        break;
      case BinOp::kMin:
        r = "tsl_min(" + x + ", " + y + ")";
        break;
      case BinOp::kMax:
        r = "tsl_max(" + x + ", " + y + ")";
        break;
      default:
        return ScalarBinary(op, DataType::Float(32), x, y, fn);  // comparisons, && and ||
    }
    return small ? "((" + type + ")" + r + ")" : r;
  }
  if (!compare && !t.is_bool()) kernel_->Type(t);
  return ScalarBinary(op, t, x, y, fn);
}

std::string LaneEmitter::VisitExpr_(const RampNode* op) {
  if (lane_ < 0) MetalUnsupported("a Ramp used as a scalar", kernel_->name());
  DataType t = op->base.dtype();
  if (lane_ == 0) return Sub(op->base);
  auto stride = AsConstInt(op->stride);
  std::string step = stride ? kernel_->Scalar(MakeConst(t, lane_ * *stride))
                            : ScalarBinary(BinOp::kMul, t, kernel_->Scalar(MakeConst(t, lane_)),
                                           Sub(op->stride), kernel_->name());
  return ScalarBinary(BinOp::kAdd, t, Sub(op->base), step, kernel_->name());
}

std::string LaneEmitter::VisitExpr_(const LetNode* op) {
  std::string name;
  if (lane_ < 0 && kernel_->HoistedLet(op, &name)) return Sub(op->body);
  MetalUnsupported(
      "an expression Let in a vector or a conditionally evaluated expression (MSL "
      "has no lambdas to bind it in place)",
      kernel_->name());
}

std::string LaneEmitter::VisitExpr_(const CallNode* op) {
  const std::string& fn = kernel_->name();
  auto opref = op->op.as<Op>();
  if (!opref) MetalUnsupported("a call of another function", fn);
  std::string name = (*opref)->name;
  DataType t = op->dtype.element_of();
  auto args = [&](size_t first) {
    std::string out;
    for (size_t i = first; i < op->args.size(); ++i)
      out += (i > first ? ", " : "") + Sub(op->args[i]);
    return out;
  };
  auto arg = [&](size_t i) { return Sub(op->args[i]); };
  if (name == "call_pure_extern" || name == "call_extern") {
    const auto* s = op->args.size() ? op->args[0].as<StringImmNode>() : nullptr;
    if (!s) MetalUnsupported(name + " without a function name", fn);
    std::string f = s->value;
    if (f.find("atomic") != std::string::npos) {
      MetalUnsupported("the atomic " + f + " (no atomics are supported on Metal yet)", fn);
    }
    // The libm names LowerIntrinsics writes (float32 with the f suffix) to MSL's overloads.
    static const std::map<std::string, std::string> kMsl = {
        {"expf", "exp"},     {"exp2f", "exp2"},   {"logf", "log"},     {"log2f", "log2"},
        {"sqrtf", "sqrt"},   {"sinf", "sin"},     {"cosf", "cos"},     {"tanhf", "tanh"},
        {"erff", "tsl_erf"}, {"floorf", "floor"}, {"ceilf", "ceil"},   {"nearbyintf", "rint"},
        {"truncf", "trunc"}, {"fabsf", "fabs"},   {"powf", "pow"},     {"fmodf", "fmod"},
        {"tanf", "tan"},     {"atan2f", "atan2"}, {"log10f", "log10"}, {"rsqrtf", "rsqrt"}};
    auto it = kMsl.find(f);
    if (it != kMsl.end()) return it->second + "(" + args(1) + ")";
    static const std::set<std::string> kDouble = {
        "exp",  "exp2", "log",  "log2",      "sqrt",  "sin",  "cos", "tanh",  "erf",  "floor",
        "ceil", "pow",  "fmod", "nearbyint", "trunc", "fabs", "tan", "atan2", "log10"};
    if (kDouble.count(f)) {
      MetalUnsupported("the float64 function " + f + " (Metal has no double)", fn);
    }
    return f + "(" + args(1) + ")";
  }
  if (name == "tvm_storage_sync") {
    const auto* s = op->args.size() ? op->args[0].as<StringImmNode>() : nullptr;
    std::string scope = s ? std::string(s->value) : "";
    if (scope == "shared" || scope == "shared.dyn") {
      kernel_->CheckUniform("threadgroup_barrier");
      return "threadgroup_barrier(mem_flags::mem_threadgroup)";
    }
    if (scope == "warp") return "simdgroup_barrier(mem_flags::mem_threadgroup)";
    MetalUnsupported(
        "tvm_storage_sync(\"" + scope + "\") (Metal has threadgroup and SIMD-group barriers only)",
        fn);
  }
  // A serial compute encoder runs dispatches in order: a kernel never starts before its
  // predecessor ends, so programmatic dependent launch needs nothing on Metal.
  if (name == "pdl_sync" || name == "pdl_trigger") return "((void)0)";
  if (name == "grid_sync") {
    MetalUnsupported("grid_sync (a grid-wide barrier; Metal has no cooperative launch)", fn);
  }
  if (name == "ptx_ldmatrix") MetalUnsupported("ptx_ldmatrix (a CUDA-only instruction)", fn);
  if (name == "shfl_xor" || name == "shfl_down" || name == "shfl_sync") {
    if (op->args.size() != 3) {
      MetalUnsupported(name + " with " + std::to_string(op->args.size()) +
                           " arguments (expected value, lane, width)",
                       fn);
    }
    kernel_->NoteShuffle();
    return "tsl_" + name + "(" + arg(0) + ", (int)" + arg(1) + ", (int)" + arg(2) +
           ", tsl_simd_lane)";
  }
  if (name == "atomic_add_at") {
    DataType vt = op->args[1].dtype();
    std::string atomic = vt == DataType::Float(32)  ? "atomic_float"
                         : vt == DataType::Int(32)  ? "atomic_int"
                         : vt == DataType::UInt(32) ? "atomic_uint"
                                                    : "";
    if (atomic.empty()) {
      MetalUnsupported("an atomic add of " + vt.str() +
                           " (Metal adds atomically float32, int32 and uint32 only)",
                       fn);
    }
    const auto* addr = op->args[0].as<CallNode>();
    const auto* load = addr && addr->op.same_as(builtin::address_of())
                           ? addr->args[0].as<BufferLoadNode>()
                           : nullptr;
    if (!load || load->indices.size() != 1) {
      MetalUnsupported("atomic_add_at of other than the address_of a flat load", fn);
    }
    std::string scope = load->buffer->scope;
    std::string space = scope == "shared" || scope == "shared.dyn" ? "threadgroup" : "device";
    std::string ptr =
        kernel_->Pointer(load->buffer->data, vt) + " + " + kernel_->Scalar(load->indices[0]);
    return "atomic_fetch_add_explicit((" + space + " " + atomic + "*)(" + ptr + "), " + arg(1) +
           ", memory_order_relaxed)";
  }
  if (name == "assume") return "true";
  if (name == "likely") return "(" + arg(0) + ")";
  if (auto common = CommonCall(op)) return *common;
  std::string c = kernel_->Type(t);
  if (name == "reinterpret") {
    DataType from = op->args[0].dtype().element_of();
    if (from.bits() != t.bits()) {
      MetalUnsupported("reinterpret from " + from.str() + " to " + t.str() + " (sizes differ)", fn);
    }
    return "as_type<" + c + ">(" + arg(0) + ")";
  }
  if (name == "popcount" || name == "clz") {
    DataType at = op->args[0].dtype().element_of();
    if (!at.is_int_or_uint()) MetalUnsupported(name + " of " + at.str(), fn);
    std::string u = "((" + kernel_->Type(DataType::UInt(at.bits())) + ")(" + arg(0) + "))";
    return "((" + c + ")" + name + "(" + u + "))";
  }
  if (name == "abs") {
    if (t.is_floating()) return "((" + c + ")fabs((float)" + arg(0) + "))";
  }
  if (name == "address_of") {
    const auto* load = op->args[0].as<BufferLoadNode>();
    if (!load || load->indices.size() != 1) MetalUnsupported("address_of of a non-flat load", fn);
    return "(" + kernel_->Pointer(load->buffer->data, load->dtype.element_of()) + " + " +
           kernel_->Scalar(load->indices[0]) + ")";
  }
  if (name == "launch_kernel") MetalUnsupported("launch_kernel inside a device kernel", fn);
  MetalUnsupported("unsupported op " + name, fn);
}

// ---- statements ----

// The vector loads a statement may hoist and the expression Lets it binds first: neither under a
// branch of if_then_else or Select (the other branch may be the only one in bounds) nor inside a
// Let body (its index may use the Let variable) for loads.
class Preparer : public ExprVisitor {
 public:
  std::vector<const BufferLoadNode*> loads;
  std::vector<const LetNode*> lets;
  bool guarded = false;
  std::vector<const LetNode*> guarded_lets;
  void VisitExpr_(const BufferLoadNode* op) override {
    if (!guarded && op->dtype.is_vector() && op->indices.size() == 1) loads.push_back(op);
    ExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const LetNode* op) override {
    VisitExpr(op->value);
    (guarded ? guarded_lets : lets).push_back(op);
    bool g = guarded;
    guarded = true;  // no hoisted loads inside the body
    std::vector<const BufferLoadNode*> saved = loads;
    VisitExpr(op->body);
    loads = saved;
    guarded = g;
  }
  void VisitExpr_(const CallNode* op) override {
    if (op->op.same_as(builtin::if_then_else()) && op->args.size() == 3) {
      VisitExpr(op->args[0]);
      Guarded(op->args[1]);
      Guarded(op->args[2]);
      return;
    }
    ExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const SelectNode* op) override { ExprVisitor::VisitExpr_(op); }

 private:
  void Guarded(const PrimExpr& e) {
    bool g = guarded;
    guarded = true;
    VisitExpr(e);
    guarded = g;
  }
};

void Kernel::Prepare(const PrimExpr& e) {
  Preparer p;
  p(e);
  if (!p.guarded_lets.empty()) {
    MetalUnsupported(
        "an expression Let under a branch of if_then_else (MSL has no lambdas to "
        "bind it in place)",
        name_);
  }
  // Lets innermost-first in the order found: a Let's value is visited before the Let itself.
  for (const LetNode* let : p.lets) {
    if (let->dtype.is_vector() || let->var.dtype().is_vector()) {
      Fail("a vector expression Let");
    }
    std::string value = Scalar(let->value);
    if (defined_.count(let->var.get())) {
      MetalUnsupported("variable '" + std::string(let->var->name_hint) + "' bound again", name_);
    }
    defined_[let->var.get()] = InfoOf(let->var);
    let_vars_.push_back(let->var.get());
    std::string n = names_.Get(let->var);
    Line("const " + DeclType(let->var) + " " + n + " = " + value + ";");
    let_names_[let] = n;
    if (Varies(let->value)) varying_.insert(let->var.get());
  }
  for (const BufferLoadNode* load : p.loads) {
    if (hoisted_.count(load)) continue;
    const auto* ramp = load->indices[0].as<RampNode>();
    auto stride = ramp ? AsConstInt(ramp->stride) : std::nullopt;
    DataType t = load->dtype;
    if (!stride || *stride != 1 || !WideType(t.element_of(), t.lanes())) continue;
    const VarInfo& info = defined_.at(load->buffer->data.get());
    std::string type = "packed_" + Type(t.element_of()) + std::to_string(t.lanes());
    std::string tmp = "tsl_v" + std::to_string(++temps_);
    std::string addr = Pointer(load->buffer->data, t.element_of()) + " + " + Scalar(ramp->base);
    Line("const " + type + " " + tmp + " = *(" + info.space + " const " + type + "*)(" + addr +
         ");");
    hoisted_[load] = tmp;
  }
}

void Kernel::ThreadExtent(const AttrStmtNode* op) {
  auto var = op->node.as<Var>();
  if (!var) MetalUnsupported("a thread_extent attribute whose node is not a variable", name_);
  std::string tag = transform::ThreadTagOf(*var).value_or("");
  if (tag.empty()) {
    MetalUnsupported("thread_extent of variable '" + std::string((*var)->name_hint) +
                         "' (its name must be a thread tag: threadIdx.x/y/z or blockIdx.x/y/z)",
                     name_);
  }
  bool thread = tag.rfind("threadIdx", 0) == 0;
  if (auto ext = AsConstInt(op->value); thread && ext) {
    // Checked here, where the statement names the line of the loop that binds the thread.
    int64_t& known = thread_extents_[tag];
    known = std::max(known, *ext);
    int64_t threads = 1;
    for (const auto& kv : thread_extents_) threads *= kv.second;
    if (threads > runtime::kMetalMaxThreadsPerGroup) {
      Fail(std::to_string(threads) + " threads per threadgroup (Metal allows " +
           std::to_string(runtime::kMetalMaxThreadsPerGroup) + ")");
    }
  }
  std::string source = (thread ? "tsl_thread_id." : "tsl_group_id.") + tag.substr(tag.size() - 1);
  OpenScope();
  Declare(*var, VarInfo{"", "", false});
  if (thread) varying_.insert(var->get());
  Line(DeclType(*var) + " " + names_.Get(*var) + " = (" + DeclType(*var) + ")" + source + ";");
  VisitStmt(op->body);
  CloseScope();
}

void Kernel::VisitStmt_(const AttrStmtNode* op) {
  if (op->attr_key == "thread_extent") {
    ThreadExtent(op);
    return;
  }
  VisitStmt(op->body);
}

void Kernel::VisitStmt_(const AssertStmtNode* op) {
  // A kernel cannot report to the host; a failed assertion ends the thread's work so no write
  // depends on a broken assumption (the host wrapper checks what the caller controls).
  Prepare(op->condition);
  Line("if (!(" + Scalar(op->condition) + ")) return;");
  Done();
  VisitStmt(op->body);
}

void Kernel::VisitStmt_(const BufferStoreNode* op) {
  if (op->indices.size() != 1) {
    MetalUnsupported("a BufferStore to " + std::string(op->buffer->name) + " with " +
                         std::to_string(op->indices.size()) + " indices (not flattened)",
                     name_);
  }
  DataType t = op->value.dtype();
  const PrimExpr& index = op->indices[0];
  Prepare(op->value);
  Prepare(index);
  std::string ptr = Pointer(op->buffer->data, t.element_of());
  if (t.is_scalar()) {
    Line(ptr + "[" + Scalar(index) + "] = " + Scalar(op->value) + ";");
    Done();
    return;
  }
  int lanes = t.lanes();
  std::string st = Type(t);
  const auto* ramp = index.as<RampNode>();
  auto stride = ramp ? AsConstInt(ramp->stride) : std::nullopt;
  std::string tmp = "tsl_s" + std::to_string(++temps_);
  Line("{");
  ++indent_;
  if (stride && *stride == 1 && WideType(t.element_of(), lanes)) {
    // All lanes are computed before the one wide write, as the vector semantics require.
    std::string type = "packed_" + st + std::to_string(lanes);
    Line(type + " " + tmp + ";");
    for (int k = 0; k < lanes; ++k) {
      Line(tmp + "[" + std::to_string(k) + "] = " + Lane(op->value, k) + ";");
    }
    const VarInfo& info = defined_.at(op->buffer->data.get());
    Line("*(" + info.space + " " + type + "*)(" + ptr + " + " + Scalar(ramp->base) + ") = " + tmp +
         ";");
  } else {
    Line(st + " " + tmp + "[" + std::to_string(lanes) + "];");
    for (int k = 0; k < lanes; ++k) {
      Line(tmp + "[" + std::to_string(k) + "] = " + Lane(op->value, k) + ";");
    }
    for (int k = 0; k < lanes; ++k) {
      Line(ptr + "[" + Lane(index, k) + "] = " + tmp + "[" + std::to_string(k) + "];");
    }
  }
  --indent_;
  Line("}");
  Done();
}

void Kernel::VisitStmt_(const AllocateNode* op) {
  std::string var_name = op->buffer_var->name_hint;
  if (op->extents.size() != 1) {
    MetalUnsupported("an Allocate of " + var_name + " with " + std::to_string(op->extents.size()) +
                         " extents (not flattened)",
                     name_);
  }
  auto cond = AsConstInt(op->condition);
  if (!cond || *cond != 1)
    MetalUnsupported("an Allocate of " + var_name + " with a condition", name_);
  if (op->dtype.is_vector())
    MetalUnsupported("an Allocate of vector dtype " + op->dtype.str(), name_);
  std::string scope = op->buffer_var->storage_scope;
  std::string space = AddressSpace(scope, name_);
  std::string st = Type(op->dtype);
  auto extent = AsConstInt(op->extents[0]);
  OpenScope();
  Declare(op->buffer_var, VarInfo{st, space, false});
  std::string n = names_.Get(op->buffer_var);
  auto dyn = dyn_offsets_.find(op->buffer_var.get());
  if (dyn != dyn_offsets_.end()) {
    Line("threadgroup " + st + "* " + n + " = (threadgroup " + st + "*)(tsl_dyn_tg + " +
         Scalar(dyn->second) + ");");
  } else if (extent && *extent > 0) {
    int64_t bytes = *extent * (op->dtype.is_bool() ? 1 : op->dtype.bytes());
    if (space == "threadgroup") {
      // MSL declares threadgroup memory at kernel scope; names are unique in the kernel.
      threadgroup_decls_.push_back("threadgroup " + st + " " + n + "[" + std::to_string(*extent) +
                                   "];");
      threadgroup_bytes_ += (bytes + 15) / 16 * 16;
      if (threadgroup_bytes_ > runtime::kMetalMaxThreadgroupBytes) {
        MetalUnsupported("threadgroup memory of " + std::to_string(threadgroup_bytes_) +
                             " bytes (with " + var_name + "; Metal allows " +
                             std::to_string(runtime::kMetalMaxThreadgroupBytes) + ")",
                         name_);
      }
    } else {
      Line(st + " " + n + "[" + std::to_string(*extent) + "];");
    }
  } else {
    MetalUnsupported("an allocation of " + var_name + " in scope '" + scope +
                         "' without a constant positive size (only threadgroup memory may be "
                         "sized at launch)",
                     name_);
  }
  VisitStmt(op->body);
  CloseScope();
}

std::string Kernel::Run(runtime::MetalKernelInfo* info) {
  using runtime::MetalParamInfo;
  using runtime::MetalParamKind;
  info->name = name_;
  auto layout = transform::DynamicSharedLayout(func_);
  for (const auto& a : layout.allocations) dyn_offsets_[a.buffer_var.get()] = a.offset;
  std::vector<std::string> params, struct_fields, scalar_reads;
  uint32_t offset = 0, struct_align = 1, buffer_slot = 0;
  for (const Var& p : func_->params) {
    if (p.dtype().is_vector()) {
      MetalUnsupported("a vector parameter " + std::string(p->name_hint), name_);
    }
    std::string n;
    MetalParamInfo pi;
    DataType pt = p.dtype().is_handle() ? p->pointee : p.dtype();
    if (auto buf = func_->buffer_map.find(p); buf != func_->buffer_map.end()) {
      pt = (*buf).second->dtype;
    }
    if (pt.is_float() && pt.bits() == 64) {
      MetalUnsupported("the float64 " + std::string(p.dtype().is_handle() ? "buffer " : "") +
                           "parameter '" + std::string(p->name_hint) +
                           "' (Metal has no double; compute in float32)",
                       name_);
    }
    if (p.dtype().is_handle()) {
      DataType elem = p->pointee;
      auto buf = func_->buffer_map.find(p);
      if (elem.is_void() && buf != func_->buffer_map.end()) elem = (*buf).second->dtype;
      if (elem.is_void()) {
        MetalUnsupported(
            "a pointer parameter '" + std::string(p->name_hint) + "' without an element type",
            name_);
      }
      std::string st = Type(elem);
      Declare(p, VarInfo{st, "device", false});
      n = names_.Get(p);
      params.push_back("device " + st + "* " + n + " [[buffer(" + std::to_string(buffer_slot) +
                       ")]]");
      pi.kind = MetalParamKind::kBuffer;
      pi.dtype = elem.element_of();
      pi.slot = buffer_slot++;
      // A parameter with a buffer_map entry (hand-written kernels) stands for that buffer's data.
      if (buf != func_->buffer_map.end() && !(*buf).second->data.same_as(p)) {
        const Var& data = (*buf).second->data;
        names_.Alias(data, p);
        defined_[data.get()] = VarInfo{st, "device", false};
      }
    } else {
      DataType t = p.dtype();
      std::string st = Type(t);
      Declare(p, VarInfo{"", "", false});
      n = names_.Get(p);
      uint32_t size = t.is_bool() ? 1 : t.bytes();
      offset = (offset + size - 1) / size * size;
      struct_align = std::max(struct_align, size);
      struct_fields.push_back("  " + st + " " + n + ";");
      scalar_reads.push_back("const " + st + " " + n + " = tsl_args." + n + ";");
      pi.kind = MetalParamKind::kScalar;
      pi.dtype = t;
      pi.slot = offset;
      offset += size;
    }
    info->params.push_back(pi);
  }
  bool has_args = !struct_fields.empty();
  info->args_bytes = has_args ? (offset + struct_align - 1) / struct_align * struct_align : 0;
  info->args_index = has_args ? buffer_slot : 0;
  if (buffer_slot + (has_args ? 1 : 0) > runtime::kMetalMaxBufferArguments) {
    MetalUnsupported(std::to_string(buffer_slot) + " buffers" +
                         (has_args ? " and the argument struct" : std::string()) +
                         " (Metal binds at most " +
                         std::to_string(runtime::kMetalMaxBufferArguments) + " buffers per kernel)",
                     name_);
  }
  if (info->args_bytes > runtime::kMetalMaxSetBytes) {
    MetalUnsupported(std::to_string(info->args_bytes) + " bytes of scalar parameters (setBytes " +
                         "takes at most " + std::to_string(runtime::kMetalMaxSetBytes) + ")",
                     name_);
  }
  VisitStmt(func_->body);
  // Threads per threadgroup, when the split's launch dims say so.
  int64_t threads = 0;
  auto dims = func_->attrs.find("tessel.launch_dims");
  if (dims != func_->attrs.end()) {
    threads = 1;
    auto arr = (*dims).second.try_cast<Array<PrimExpr>>();
    if (arr && arr->size() == 6) {
      for (int i = 3; i < 6; ++i) {
        auto c = AsConstInt((*arr)[i]);
        if (!c) {
          threads = 0;
          break;
        }
        threads *= *c;
      }
    }
  }
  if (threads > runtime::kMetalMaxThreadsPerGroup) {
    MetalUnsupported(std::to_string(threads) + " threads per threadgroup (Metal allows " +
                         std::to_string(runtime::kMetalMaxThreadsPerGroup) + ")",
                     name_);
  }
  info->max_threads = static_cast<uint32_t>(threads);

  info->threadgroup_static_bytes = static_cast<uint32_t>(threadgroup_bytes_);
  info->threadgroup_dynamic = !dyn_offsets_.empty();

  if (has_args) {
    params.push_back("constant " + name_ + "_args_t& tsl_args [[buffer(" +
                     std::to_string(info->args_index) + ")]]");
  }
  if (info->threadgroup_dynamic)
    params.push_back("threadgroup uchar* tsl_dyn_tg [[threadgroup(0)]]");
  params.push_back("uint3 tsl_group_id [[threadgroup_position_in_grid]]");
  params.push_back("uint3 tsl_thread_id [[thread_position_in_threadgroup]]");
  if (uses_simd_lane_) params.push_back("ushort tsl_simd_lane [[thread_index_in_simdgroup]]");

  std::ostringstream out;
  if (has_args) {
    out << "struct " << name_ << "_args_t {\n";
    for (const std::string& f : struct_fields) out << f << "\n";
    out << "};\n\n";
  }
  // Lets the compiler size registers for the threads it will get (the attribute precedes `kernel`,
  // as Dawn's MSL writer emits it); the runtime never sets a different pipeline limit.
  if (info->max_threads > 0) {
    out << "[[max_total_threads_per_threadgroup(" << info->max_threads << ")]]\n";
  }
  out << "kernel void " << name_ << "(\n";
  for (size_t i = 0; i < params.size(); ++i) {
    out << "    " << params[i] << (i + 1 < params.size() ? ",\n" : ") {\n");
  }
  for (const std::string& d : threadgroup_decls_) out << "  " << d << "\n";
  for (const std::string& r : scalar_reads) out << "  " << r << "\n";
  out << os_.str() << "}\n";
  return out.str();
}

}  // namespace

std::string EmitMetalKernel(const PrimFunc& func, const std::string& name,
                            const MetalOptions& options, runtime::MetalKernelInfo* info) {
  Kernel k(func, name, options);
  return k.Run(info);
}

}  // namespace codegen
}  // namespace tessel
