// One device kernel to CUDA C++.
//
// Scalar expressions use the C generator's text (ScalarBinary, CastScalar, literals), so both
// backends agree bit for bit. Vector expressions (lanes > 1, from VectorizeLoop) have no CUDA type
// in general, so they are emitted lane by lane: `Lane(e, k)` is the scalar C++ for lane k of e.
// Loads and stores of a contiguous Ramp whose bytes (8 or 16) are provably aligned become one
// 64/128-bit access (float4, int4, uint2 ...): the load is hoisted into a temporary before the
// statement that uses it, the store collects its lanes into one. A vector store computes all lanes
// before writing any, as the vector semantics require.
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/split_host_device.h>
#include <tessel/transform/swizzle_layout.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "codegen/cuda/codegen_cuda.h"
#include "codegen/gpu_kernel.h"

namespace tessel {
namespace codegen {

namespace {

using namespace ir;  // NOLINT(build/namespaces)

// Identifiers of CUDA C++ that the C name table does not already keep away from IR variables.
const char* const kCudaReserved[] = {
    "threadIdx", "blockIdx",  "blockDim", "gridDim",     "warpSize",  "new",
    "delete",    "class",     "this",     "template",    "operator",  "private",
    "public",    "protected", "virtual",  "friend",      "using",     "typename",
    "try",       "catch",     "throw",    "nullptr",     "namespace", "mutable",
    "explicit",  "export",    "dim3",     "float2",      "float4",    "int2",
    "int4",      "uint2",     "uint4",    "half",        "printf",    "cooperative_groups",
    "asm",       "constexpr", "decltype", "static_cast", "noexcept"};

bool IsSharedScope(const std::string& s) { return s == "shared" || s == "shared.dyn"; }

// CUDA's own limits on a kernel's memory, checked here because past them NVRTC fails with the
// reason buried under its warnings (static shared memory), or compiles a kernel that can never
// launch (dynamic shared, local arrays): a constant size over a limit is known at build time.
//
// Statically sized __shared__ arrays of one kernel: 48 KiB on every architecture.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

// All shared memory of one block, with the opt-in past 48 KiB, by compute capability (10 * major
// + minor): the CUDA C++ Programming Guide's "maximum amount of shared memory per thread block"
// (Technical Specifications per Compute Capability). The values are NVIDIA's own
// `cuda::arch_traits<>().max_shared_memory_per_block_optin` (CCCL,
// libcudacxx/include/cuda/__device/arch_traits.h): the SM's shared memory less the 1 KiB the
// driver reserves per block from 8.0 on (Ampere tuning guide, "Unified Shared Memory/L1/Texture
// Cache": 164 KB per SM on 8.0, 100 KB on 8.6). 7.2 (Xavier) is not in that header: 96 KiB like
// 7.0, Volta's. 10.1 is 11.0's name before CUDA 13. Before 7.0 there is no opt-in: 48 KiB.
struct ArchSharedLimit {
  int cc;
  int64_t bytes;
};
constexpr ArchSharedLimit kMaxSharedBytesByArch[] = {
    {70, 96 * 1024},   {72, 96 * 1024},   {75, 64 * 1024},   {80, 163 * 1024}, {86, 99 * 1024},
    {87, 163 * 1024},  {88, 99 * 1024},   {89, 99 * 1024},   {90, 227 * 1024}, {100, 227 * 1024},
    {101, 227 * 1024}, {103, 227 * 1024}, {110, 227 * 1024}, {120, 99 * 1024}, {121, 99 * 1024}};
// The most of any architecture above, for an architecture the table does not know (a newer one
// most likely) and for code generated without one: a size past it fails on every GPU.
constexpr int64_t kMaxSharedBytes = 227 * 1024;

// The shared memory limit of one block on `arch` ("sm_86", "sm_90a"; "" when not known), with
// the words an error puts after the limit to say where it comes from.
struct SharedLimit {
  int64_t bytes;
  std::string source;
};
SharedLimit SharedLimitOf(const std::string& arch) {
  if (arch.empty()) {
    return {kMaxSharedBytes,
            "kMaxSharedBytes: the most of any architecture, as no -arch was given"};
  }
  int cc = arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0;
  if (cc > 0 && cc < 70) {
    return {kMaxStaticSharedBytes, "kMaxStaticSharedBytes: " + arch + " has no opt-in past it"};
  }
  for (const ArchSharedLimit& a : kMaxSharedBytesByArch) {
    if (a.cc == cc)
      return {a.bytes, "kMaxSharedBytesByArch: the opt-in maximum per block on " + arch};
  }
  return {kMaxSharedBytes, "kMaxSharedBytes: the most of any known architecture, as " + arch +
                               " is not in kMaxSharedBytesByArch"};
}

// Local memory (a thread's own arrays): 512 KiB per thread since sm_20.
constexpr int64_t kMaxLocalBytes = 512 * 1024;

// `extent` elements of `t` in bytes, saturated so that a huge extent does not wrap.
int64_t AllocationBytes(int64_t extent, DataType t) {
  int64_t elem = t.is_bool() ? 1 : t.bytes();
  if (extent > INT64_MAX / elem) return INT64_MAX;
  return extent * elem;
}

[[noreturn]] void OverLimit(const std::string& what, int64_t bytes, const std::string& limit_name,
                            int64_t limit, const std::string& advice, const std::string& kernel) {
  CudaUnsupported(what + " needs " +
                      (bytes == INT64_MAX ? "more than 2^63" : std::to_string(bytes)) +
                      " bytes, more than the limit of " + std::to_string(limit) + " bytes (" +
                      limit_name + ")" + advice,
                  kernel);
}

// A 64/128-bit access type for `lanes` elements of `elem`, and whether lanes are its .x/.y/.z/.w
// members (else they are read through a pointer to the element type).
bool WideType(DataType elem, int lanes, std::string* type, bool* members) {
  int64_t bytes = static_cast<int64_t>(elem.bytes()) * lanes;
  if (elem.is_bool() || (bytes != 8 && bytes != 16)) return false;
  const char* n = bytes == 8 ? "2" : "4";
  *members = elem.bits() == 32 && !elem.is_bfloat();
  if (*members && elem.is_float()) {
    *type = std::string("float") + n;
  } else if (*members && elem.is_int()) {
    *type = std::string("int") + n;
  } else {
    *members = *members && elem.is_uint();
    *type = std::string("uint") + (bytes == 8 ? "2" : "4");
  }
  return true;
}

std::string Member(int k) { return std::string(".") + "xyzw"[k]; }

class Kernel;

// Expression text for one lane (lane < 0: a scalar expression), in CUDA C++.
class LaneEmitter : public GpuLaneEmitter {
 public:
  LaneEmitter(Kernel* k, int lane);

  std::string VisitExpr_(const IntImmNode* op) override { return IntLiteral(op->dtype, op->value); }
  std::string VisitExpr_(const FloatImmNode* op) override {
    return FloatLiteral(op->dtype, op->value);
  }
  std::string VisitExpr_(const CastNode* op) override {
    std::string packed;
    if (op->dtype.element_of() == DataType::Float(32) && PackedBf16(op->value, &packed)) {
      return packed;
    }
    return CastScalar(op->dtype.element_of(), op->value.dtype().element_of(), Sub(op->value));
  }
  std::string VisitExpr_(const RampNode* op) override;
  std::string VisitExpr_(const LetNode* op) override;
  std::string VisitExpr_(const CallNode* op) override;

 private:
  std::string Binary(BinOp op, const PrimExpr& a, const PrimExpr& b) override;
  bool PackedBf16(const PrimExpr& value, std::string* out);
  Kernel* kernel_;
};

class Kernel : public GpuKernel {
 public:
  Kernel(const PrimFunc& func, std::string name, const std::string& arch, bool aligned_params)
      : GpuKernel(func, std::move(name)),
        shared_limit_(SharedLimitOf(arch)),
        aligned_params_(aligned_params) {
    for (const char* r : kCudaReserved) names_.Reserve(r);
    names_.Reserve("tsl_dyn_smem");
    for (size_t i = 0; i < func->params.size(); ++i) param_index_[func->params[i].get()] = i;
  }

  // The pointer parameters whose wide loads test their alignment at run time, with the most
  // bytes one load needs, by increasing parameter index (all of them in the aligned variant too).
  const std::map<uint32_t, uint32_t>& checked_loads() const { return checked_loads_; }

  std::string Run(bool* uses_grid_sync);

  [[noreturn]] void Fail(const std::string& what) const override { CudaUnsupported(what, name_); }
  std::string Scalar(const PrimExpr& e) override { return LaneEmitter(this, -1)(e); }
  std::string Lane(const PrimExpr& e, int lane) override { return LaneEmitter(this, lane).Sub(e); }
  std::string ElemType(DataType elem) override { return StorageCType(elem); }
  std::string ValueType(DataType t) override { return CType(t.element_of()); }
  VarInfo InfoOf(const Var& v) override {
    std::string pointee;
    if (v.dtype().is_handle() && !v->pointee.is_void()) pointee = StorageCType(v->pointee);
    return VarInfo{pointee, "", false};
  }
  std::string DeclType(const Var& v) override {
    if (v.dtype().is_handle()) {
      return v->pointee.is_void() ? "void*" : StorageCType(v->pointee) + "*";
    }
    return CType(v.dtype().element_of());
  }
  // A hoisted wide load, if `op` has one: the lane's text.
  bool HoistedLane(const BufferLoadNode* op, int lane, std::string* out) override {
    auto it = hoisted_.find(op);
    if (it == hoisted_.end() || lane < 0) return false;
    const Hoisted& h = it->second;
    if (h.members) {
      *out = h.name + Member(lane);
    } else {
      *out = "((const " + StorageCType(op->dtype.element_of()) + "*)&" + h.name + ")[" +
             std::to_string(lane) + "]";
    }
    return true;
  }
  // Hoists the wide loads of `e` into temporaries before the current statement.
  void Prepare(const PrimExpr& e) override;
  void Done() override { hoisted_.clear(); }

  // Defines `v` for the duration of an expression Let; returns whether it was defined before.
  bool DefineScalar(const Var& v) {
    bool was = defined_.count(v.get()) != 0;
    defined_[v.get()] = VarInfo{"", "", false};
    names_.Get(v);
    return was;
  }
  void Undefine(const Var& v) { defined_.erase(v.get()); }
  void NoteGridSync() { grid_sync_ = true; }
  // Whether `data` is a bfloat16 register array held two to a 32-bit word (see the Allocate).
  bool PackedBf16(const VarNode* data) const { return packed_bf16_.count(data) != 0; }
  // After a wgmma wait: a compiler fence on every accumulator array in scope, so that no read of
  // an accumulator register moves above the wait (the registers are written asynchronously).
  std::string AccFences() const {
    std::string out;
    for (const auto& [name, n] : live_accs_) {
      out += ", tsl_wgmma_fence_operand<" + std::to_string(n) + ">(" + name + ")";
    }
    return out;
  }
  std::string DeclName(const Var& v) { return names_.Get(v); }

  // ---- statements ----
  void VisitStmt_(const AttrStmtNode* op) override;
  void VisitStmt_(const AssertStmtNode* op) override;
  void VisitStmt_(const BufferStoreNode* op) override;
  void VisitStmt_(const IfThenElseNode* op) override {
    // SoftwarePipelineAsync's run-time test of a pointer parameter's alignment before a cp.async:
    // listed with the wide loads' tests, and known to hold in the aligned variant.
    if (auto test = ParamAlignmentTest(op->condition)) {
      uint32_t& bytes = checked_loads_[test->first];
      bytes = std::max(bytes, test->second);
      if (aligned_params_) {
        Line("{");
        Body(op->then_case);
        Line("}");
        return;
      }
    }
    Line("if (" + Scalar(op->condition) + ") {");
    Body(op->then_case);
    if (op->else_case) {
      Line("} else {");
      Body(*op->else_case);
    }
    Line("}");
  }
  void VisitStmt_(const WhileNode* op) override {
    Line("while (" + Scalar(op->condition) + ") {");
    Body(op->body);
    Line("}");
  }
  void VisitStmt_(const AllocateNode* op) override;

 private:
  struct Hoisted {
    std::string name;
    bool members;
  };

  // Whether the base address of `buf` is known to be 16-byte aligned: memory this kernel declares
  // (__align__(16)). Parameter buffers come from callers, whom the host wrapper holds only to
  // element alignment, so their wide accesses test the address at run time (tsl_wide_load/store;
  // the test is warp-uniform when the index is aligned, which WideAligned requires).
  static bool KnownAligned(const Buffer& buf) {
    std::string scope = buf->data->storage_scope;
    return IsSharedScope(scope) || scope == "local";
  }
  // Whether a `lanes`-wide contiguous access at `base` of buffer `buf` is aligned to its size
  // relative to the buffer's start.
  bool WideAligned(const Buffer& buf, const PrimExpr& base, DataType t) {
    int64_t bytes = static_cast<int64_t>(t.bytes()) * t.lanes();
    auto m = analyzer_.ModularSet(base);
    int64_t elems = bytes / t.bytes();
    return m->coeff % elems == 0 && m->base % elems == 0;
  }
  void ThreadExtent(const AttrStmtNode* op);

  std::unordered_map<const BufferLoadNode*, Hoisted> hoisted_;
  std::map<std::string, int64_t> thread_extent_;  // constant threadIdx extents seen
  std::set<std::string> open_tags_;
  std::unordered_map<const Object*, PrimExpr> dyn_offsets_;
  arith::Analyzer analyzer_;
  bool grid_sync_ = false;
  bool block_size_known_ = true;
  int64_t static_shared_bytes_ = 0;  // the constant __shared__ arrays declared so far
  SharedLimit shared_limit_;
  // Buffers that wgmma accumulates into, and those of them allocated around the current statement
  // (C name, element count).
  std::unordered_set<const VarNode*> wgmma_accs_;
  std::unordered_set<const VarNode*> packed_bf16_;
  // {parameter index, bytes} for `T.reinterpret("uint64", p) % bytes == 0` of a pointer
  // parameter p.
  std::optional<std::pair<uint32_t, uint32_t>> ParamAlignmentTest(const PrimExpr& cond) const {
    const auto* eq = cond.as<EQNode>();
    const auto* mod = eq ? eq->a.as<FloorModNode>() : nullptr;
    const auto* call = mod ? mod->a.as<CallNode>() : nullptr;
    auto bytes = mod ? AsConstInt(mod->b) : std::nullopt;
    auto zero = eq ? AsConstInt(eq->b) : std::nullopt;
    if (!call || !call->op.same_as(builtin::reinterpret()) || call->args.size() != 1 || !bytes ||
        !zero || *zero != 0 || *bytes <= 0 || *bytes > 16) {
      return std::nullopt;
    }
    const auto* var = call->args[0].as<VarNode>();
    auto param = var ? param_index_.find(var) : param_index_.end();
    if (param == param_index_.end() || !var->dtype.is_handle()) return std::nullopt;
    return std::make_pair(static_cast<uint32_t>(param->second), static_cast<uint32_t>(*bytes));
  }

  // Whether this is the variant that assumes aligned pointer parameters (EmitCudaKernel).
  bool aligned_params_;
  std::unordered_map<const Object*, uint32_t> param_index_;
  std::map<uint32_t, uint32_t> checked_loads_;
  std::vector<std::pair<std::string, int64_t>> live_accs_;
};

// ---- expressions ----

LaneEmitter::LaneEmitter(Kernel* k, int lane) : GpuLaneEmitter(k, lane), kernel_(k) {}

std::string LaneEmitter::Binary(BinOp op, const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype().element_of();
  if (a.dtype().is_scalar()) {
    if (auto shifted = PowerOfTwoFloor(op, t, Sub(a), b)) return *shifted;
  }
  return ScalarBinary(op, t, Sub(a), Sub(b), kernel_->name());
}

std::string LaneEmitter::VisitExpr_(const RampNode* op) {
  if (lane_ < 0) CudaUnsupported("a Ramp used as a scalar", kernel_->name());
  DataType t = op->base.dtype();
  if (lane_ == 0) return Sub(op->base);
  // Constant strides (the common case) fold into one literal when it fits the type.
  auto stride = AsConstInt(op->stride), base = AsConstInt(op->base);
  auto fits = [&](int64_t v) {
    if (t.bits() >= 64) return true;
    int64_t lo = t.is_uint() ? 0 : -(int64_t{1} << (t.bits() - 1));
    int64_t hi = t.is_uint() ? (int64_t{1} << t.bits()) - 1 : (int64_t{1} << (t.bits() - 1)) - 1;
    return v >= lo && v <= hi;
  };
  if (stride && *stride >= -(1 << 20) && *stride <= (1 << 20)) {
    int64_t step = lane_ * *stride;
    if (base && fits(*base + step)) return IntLiteral(t, *base + step);
    if (fits(step)) return ScalarBinary(BinOp::kAdd, t, Sub(op->base), IntLiteral(t, step), "");
  }
  std::string step = ScalarBinary(BinOp::kMul, t, IntLiteral(t, lane_), Sub(op->stride), "");
  return ScalarBinary(BinOp::kAdd, t, Sub(op->base), step, kernel_->name());
}

// Element k of a packed bfloat16 array as a float, when k is a constant: the high half of word
// k/2 is the float's bits already, the low half shifts into place. The conversion is asm volatile
// so that each use converts again from the word, instead of LLVM keeping the float (and whatever
// was computed from it, such as an exp2 used in two passes) live in a register of its own.
bool LaneEmitter::PackedBf16(const PrimExpr& value, std::string* out) {
  const auto* load = value.as<BufferLoadNode>();
  if (!load || load->dtype.element_of() != DataType::BFloat(16) || load->indices.size() != 1 ||
      !kernel_->PackedBf16(load->buffer->data.get())) {
    return false;
  }
  std::string hoisted;
  if (kernel_->HoistedLane(load, lane_, &hoisted)) return false;
  std::optional<int64_t> k;
  const PrimExpr& index = load->indices[0];
  if (lane_ < 0) {
    k = AsConstInt(index);
  } else if (const auto* ramp = index.as<RampNode>()) {
    auto base = AsConstInt(ramp->base), stride = AsConstInt(ramp->stride);
    if (base && stride) k = *base + lane_ * *stride;
  } else if (const auto* b = index.as<BroadcastNode>()) {
    k = AsConstInt(b->value);
  }
  if (!k || *k < 0) return false;
  std::string word = kernel_->VarRef(load->buffer->data, -1) + "[" + std::to_string(*k / 2) + "]";
  *out = std::string(*k % 2 ? "tsl_bf16_hi_to_f32(" : "tsl_bf16_lo_to_f32(") + word + ")";
  return true;
}

// A Let inside an expression: an immediately called lambda binds the value (per lane for vectors).
std::string LaneEmitter::VisitExpr_(const LetNode* op) {
  std::string value = Sub(op->value);
  bool was = kernel_->DefineScalar(op->var);
  std::string name = kernel_->DeclName(op->var);
  std::string body = Sub(op->body);
  if (!was) kernel_->Undefine(op->var);
  return "([&]() { " + CType(op->var.dtype().element_of()) + " " + name + " = " + value +
         "; return " + body + "; }())";
}

std::string LaneEmitter::VisitExpr_(const CallNode* op) {
  const std::string& fn = kernel_->name();
  auto opref = op->op.as<Op>();
  if (!opref) CudaUnsupported("a call of another function", fn);
  std::string name = (*opref)->name;
  DataType t = op->dtype.element_of();
  auto args = [&](size_t first) {
    std::string out;
    for (size_t i = first; i < op->args.size(); ++i)
      out += (i > first ? ", " : "") + Sub(op->args[i]);
    return out;
  };
  auto arg = [&](size_t i) { return Sub(op->args[i]); };
  if (name == "call_extern" || name == "call_pure_extern") {
    const auto* s = op->args.size() ? op->args[0].as<StringImmNode>() : nullptr;
    if (!s) CudaUnsupported(name + " without a function name", fn);
    return std::string(s->value) + "(" + args(1) + ")";
  }
  if (name == "tvm_storage_sync") {
    const auto* s = op->args.size() ? op->args[0].as<StringImmNode>() : nullptr;
    std::string scope = s ? std::string(s->value) : "";
    if (scope == "shared" || scope == "shared.dyn") return "__syncthreads()";
    if (scope == "warp") return "__syncwarp()";
    CudaUnsupported("tvm_storage_sync(\"" + scope + "\") (only shared and warp)", fn);
  }
  if (name == "ptx_wgmma_wait_group") return EmitHopperCall(op, arg, fn) + kernel_->AccFences();
  if (ir::IsHopperBuiltin(name)) return EmitHopperCall(op, arg, fn);
  if (name == "pdl_sync") return "tsl_pdl_wait()";
  if (name == "pdl_trigger") return "tsl_pdl_launch_dependents()";
  if (name == "grid_sync") {
    kernel_->NoteGridSync();
    return "cooperative_groups::this_grid().sync()";
  }
  if (name == "shfl_xor" || name == "shfl_down" || name == "shfl_sync") {
    if (op->args.size() != 3)
      CudaUnsupported(name + " with " + std::to_string(op->args.size()) +
                          " arguments (expected value, lane, width)",
                      fn);
    std::string f = name == "shfl_xor"    ? "__shfl_xor_sync"
                    : name == "shfl_down" ? "__shfl_down_sync"
                                          : "__shfl_sync";
    return "((" + CType(t) + ")" + f + "(0xffffffffu, " + arg(0) + ", " + arg(1) + ", " + arg(2) +
           "))";
  }
  if (name == "atomic_add_at") {
    // float16/bfloat16 values are their bits; atomicAdd takes them as __half (sm_70) and
    // __nv_bfloat16 (sm_80). A 64-bit signed add is the unsigned one on two's-complement bits.
    DataType vt = op->args[1].dtype();
    std::string ptr = arg(0), v = arg(1);
    std::string call;
    if (vt.is_float() && vt.bits() == 16) {
      call = "atomicAdd((__half*)" + ptr + ", __ushort_as_half(" + v + "))";
    } else if (vt.is_bfloat() && vt.bits() == 16) {
      call = "atomicAdd((__nv_bfloat16*)" + ptr + ", __ushort_as_bfloat16(" + v + "))";
    } else if (vt.is_float() && (vt.bits() == 32 || vt.bits() == 64)) {
      call = "atomicAdd((" + CType(vt) + "*)" + ptr + ", " + v + ")";
    } else if (vt.is_int_or_uint() && vt.bits() == 32) {
      std::string u = vt.is_int() ? "int" : "unsigned int";
      call = "atomicAdd((" + u + "*)" + ptr + ", (" + u + ")" + v + ")";
    } else if (vt.is_int_or_uint() && vt.bits() == 64) {
      call = "atomicAdd((unsigned long long*)" + ptr + ", (unsigned long long)" + v + ")";
    } else {
      CudaUnsupported("atomic_add_at of " + vt.str() +
                          " (atomicAdd takes int/uint of 32 or 64 bits and float16, bfloat16, "
                          "float32, float64)",
                      fn);
    }
    return "((void)" + call + ")";
  }
  if (name == "assume") return "1";
  if (name == "likely") return "__builtin_expect(!!(" + arg(0) + "), 1)";
  if (auto common = CommonCall(op)) return *common;
  std::string c = CType(t);
  if (name == "reinterpret") {
    DataType from = op->args[0].dtype().element_of();
    if (from.bits() != t.bits()) {
      CudaUnsupported("reinterpret from " + from.str() + " to " + t.str() + " (sizes differ)", fn);
    }
    return "tsl_bitcast<" + c + ">(" + arg(0) + ")";
  }
  if (name == "popcount" || name == "clz") {
    DataType at = op->args[0].dtype().element_of();
    if (!at.is_int_or_uint()) CudaUnsupported(name + " of " + at.str(), fn);
    int bits = at.bits();
    std::string u = "(uint" + std::to_string(bits) + "_t)(" + arg(0) + ")";
    if (name == "popcount") {
      if (bits == 64) return "((" + c + ")__popcll(" + u + "))";
      return "((" + c + ")__popc((uint32_t)" + u + "))";
    }
    // __clz(0) is 32 and __clzll(0) is 64, so narrow types subtract the padding bits.
    if (bits == 64) return "((" + c + ")__clzll((long long)" + u + "))";
    return "((" + c + ")(__clz((int)(uint32_t)" + u + ") - " + std::to_string(32 - bits) + "))";
  }
  if (name == "abs") {
    if (t.is_floating() && t.bits() == 16) return "((uint16_t)(" + arg(0) + " & 0x7FFFu))";
    if (t.is_float()) return std::string(t.bits() == 32 ? "fabsf(" : "fabs(") + arg(0) + ")";
  }
  if (name == "address_of") {
    const auto* load = op->args[0].as<BufferLoadNode>();
    if (!load || load->indices.size() != 1) CudaUnsupported("address_of of a non-flat load", fn);
    return "((void*)(" + kernel_->Pointer(load->buffer->data, load->dtype.element_of()) + " + " +
           kernel_->Scalar(load->indices[0]) + "))";
  }
  if (name == "launch_kernel") CudaUnsupported("launch_kernel inside a device kernel", fn);
  CudaUnsupported("unsupported op " + name, fn);
}

// ---- statements ----

class LoadCollector : public ExprVisitor {
 public:
  std::vector<const BufferLoadNode*> loads;
  void VisitExpr_(const BufferLoadNode* op) override {
    if (op->dtype.is_vector() && op->indices.size() == 1) loads.push_back(op);
    ExprVisitor::VisitExpr_(op);
  }
  // Neither a Let body (its index may use the Let variable) nor a branch of if_then_else (it may
  // be out of bounds when not chosen) is hoisted.
  void VisitExpr_(const LetNode* op) override { VisitExpr(op->value); }
  void VisitExpr_(const CallNode* op) override {
    if (op->op.same_as(builtin::if_then_else())) {
      VisitExpr(op->args[0]);
      return;
    }
    ExprVisitor::VisitExpr_(op);
  }
};

void Kernel::Prepare(const PrimExpr& e) {
  LoadCollector c;
  c(e);
  for (const BufferLoadNode* load : c.loads) {
    if (hoisted_.count(load)) continue;
    const auto* ramp = load->indices[0].as<RampNode>();
    auto stride = ramp ? AsConstInt(ramp->stride) : std::nullopt;
    if (!stride || *stride != 1) continue;
    std::string type;
    bool members = false;
    if (!WideType(load->dtype.element_of(), load->dtype.lanes(), &type, &members)) continue;
    if (!WideAligned(load->buffer, ramp->base, load->dtype)) continue;
    std::string tmp = "tsl_v" + std::to_string(++temps_);
    std::string ptr = Pointer(load->buffer->data, load->dtype.element_of());
    std::string addr = ptr + " + " + Scalar(ramp->base);
    auto param = param_index_.find(load->buffer->data.get());
    bool is_param = param != param_index_.end();
    bool known = KnownAligned(load->buffer);
    if (is_param && !known) {
      uint32_t& bytes = checked_loads_[param->second];
      bytes = std::max<uint32_t>(bytes, load->dtype.bytes() * load->dtype.lanes());
    }
    if (known || (is_param && aligned_params_)) {
      Line("const " + type + " " + tmp + " = *(const " + type + "*)(" + addr + ");");
    } else {
      Line("const " + type + " " + tmp + " = tsl_wide_load<" + type + ">(" + addr + ");");
    }
    hoisted_[load] = Hoisted{tmp, members};
  }
}

void Kernel::ThreadExtent(const AttrStmtNode* op) {
  auto var = op->node.as<Var>();
  if (!var) CudaUnsupported("a thread_extent attribute whose node is not a variable", name_);
  std::string tag = transform::ThreadTagOf(*var).value_or("");
  if (tag.empty()) {
    CudaUnsupported("thread_extent of variable '" + std::string((*var)->name_hint) +
                        "' (its name must be a thread tag: threadIdx.x/y/z or blockIdx.x/y/z, "
                        "or threadIdx_x ...)",
                    name_);
  }
  if (open_tags_.count(tag)) {
    CudaUnsupported("the thread tag " + tag + " bound twice in nested scopes", name_);
  }
  auto ext = AsConstInt(op->value);
  if (tag.rfind("threadIdx", 0) == 0) {
    if (ext) {
      thread_extent_[tag] = std::max(thread_extent_[tag], *ext);
    } else {
      block_size_known_ = false;
    }
  }
  if (ext && *ext >= 1) analyzer_.Bind(*var, Range(MakeConst(var->dtype(), 0), op->value), true);
  OpenScope();
  Declare(*var, VarInfo{"", "", false});
  Line(DeclType(*var) + " " + names_.Get(*var) + " = (" + DeclType(*var) + ")" + tag + ";");
  open_tags_.insert(tag);
  VisitStmt(op->body);
  open_tags_.erase(tag);
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
  const auto* msg = op->message.as<StringImmNode>();
  if (!msg) CudaUnsupported("an AssertStmt whose message is not a string", name_);
  Line("if (!(" + Scalar(op->condition) + ")) tsl_device_fail(" +
       CStringLiteral(name_ + ": " + std::string(msg->value)) + ");");
  VisitStmt(op->body);
}

void Kernel::VisitStmt_(const BufferStoreNode* op) {
  if (op->indices.size() != 1) {
    CudaUnsupported("a BufferStore to " + std::string(op->buffer->name) + " with " +
                        std::to_string(op->indices.size()) + " indices (not flattened)",
                    name_);
  }
  DataType t = op->value.dtype();
  const PrimExpr& index = op->indices[0];
  Prepare(op->value);
  Prepare(index);
  std::string ptr = Pointer(op->buffer->data, t.element_of());
  if (t.is_scalar()) {
    auto k = AsConstInt(index);
    if (k && *k >= 0 && PackedBf16(op->buffer->data.get())) {
      // A whole-word update: a 16-bit store into the word keeps ptxas from packing the array
      // (73 registers instead of 64 for a LayerNorm row of 64 bfloat16 a thread).
      std::string word = VarRef(op->buffer->data, -1) + "[" + std::to_string(*k / 2) + "]";
      std::string bits = "(uint32_t)(" + Scalar(op->value) + ")";
      Line(word + " = " +
           (*k % 2 ? "(" + word + " & 0xffffu) | (" + bits + " << 16);"
                   : "(" + word + " & 0xffff0000u) | " + bits + ";"));
    } else {
      Line(ptr + "[" + Scalar(index) + "] = " + Scalar(op->value) + ";");
    }
    Done();
    return;
  }
  int lanes = t.lanes();
  std::string st = StorageCType(t.element_of());
  const auto* ramp = index.as<RampNode>();
  auto stride = ramp ? AsConstInt(ramp->stride) : std::nullopt;
  std::string type;
  bool members = false;
  Line("{");
  ++indent_;
  if (stride && *stride == 1 && WideType(t.element_of(), lanes, &type, &members) &&
      WideAligned(op->buffer, ramp->base, t)) {
    std::string tmp = "tsl_s" + std::to_string(++temps_);
    Line(type + " " + tmp + ";");
    for (int k = 0; k < lanes; ++k) {
      std::string v = Lane(op->value, k);
      if (members) {
        Line(tmp + Member(k) + " = " + v + ";");
      } else {
        Line("((" + st + "*)&" + tmp + ")[" + std::to_string(k) + "] = " + v + ";");
      }
    }
    std::string addr = ptr + " + " + Scalar(ramp->base);
    if (KnownAligned(op->buffer)) {
      Line("*(" + type + "*)(" + addr + ") = " + tmp + ";");
    } else {
      Line("tsl_wide_store(" + addr + ", " + tmp + ");");
    }
  } else {
    std::string tmp = "tsl_s" + std::to_string(++temps_);
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
  if (op->extents.size() != 1) {
    CudaUnsupported("an Allocate of " + std::string(op->buffer_var->name_hint) + " with " +
                        std::to_string(op->extents.size()) + " extents (not flattened)",
                    name_);
  }
  auto cond = AsConstInt(op->condition);
  if (!cond || *cond != 1) {
    CudaUnsupported(
        "an Allocate of " + std::string(op->buffer_var->name_hint) + " with a condition", name_);
  }
  if (op->dtype.is_vector())
    CudaUnsupported("an Allocate of vector dtype " + op->dtype.str(), name_);
  std::string scope = op->buffer_var->storage_scope;
  std::string st = StorageCType(op->dtype);
  auto extent = AsConstInt(op->extents[0]);
  // ptxas keeps each bfloat16 of a uint16_t register array in a 32-bit register of its own (a
  // float16 array it packs two to a register): a row of 64 bfloat16 a thread took 94-98 registers
  // where float16 took 64. Declared as 32-bit words, two to a register again. Accesses other than
  // the conversions of PackedBf16 go through a uint16_t pointer, as before.
  int64_t count = extent ? *extent : 0;
  if (scope == "local" && op->dtype == DataType::BFloat(16) && count > 0 && count % 2 == 0 &&
      !dyn_offsets_.count(op->buffer_var.get())) {
    packed_bf16_.insert(op->buffer_var.get());
    st = "uint32_t";
    count /= 2;
  }
  OpenScope();
  Declare(op->buffer_var, VarInfo{st, "", false});
  std::string n = names_.Get(op->buffer_var);
  bool acc = wgmma_accs_.count(op->buffer_var.get()) && extent && op->dtype == DataType::Float(32);
  if (acc) live_accs_.emplace_back(n, *extent);
  auto dyn = dyn_offsets_.find(op->buffer_var.get());
  if (dyn != dyn_offsets_.end()) {
    if (int64_t swizzle = transform::SwizzleBytes(op); swizzle > 0) {
      auto offset = AsConstInt(dyn->second);
      if (!offset || *offset % (8 * swizzle) != 0) {
        CudaUnsupported("the swizzled dynamic shared buffer " +
                            std::string(op->buffer_var->name_hint) + " at byte offset " +
                            Scalar(dyn->second) + " (a multiple of " + std::to_string(8 * swizzle) +
                            " is needed)",
                        name_);
      }
    }
    Line(st + "* " + n + " = (" + st + "*)(tsl_dyn_smem + " + Scalar(dyn->second) + ");");
  } else if (extent && *extent > 0) {
    int64_t bytes = AllocationBytes(*extent, op->dtype);
    std::string what = "the " + scope + " allocation of " + std::string(op->buffer_var->name_hint) +
                       " (" + std::to_string(*extent) + " x " + op->dtype.str() + ")";
    if (scope == "shared") {
      static_shared_bytes_ = std::min(INT64_MAX - bytes, static_shared_bytes_) + bytes;
      if (static_shared_bytes_ > kMaxStaticSharedBytes) {
        OverLimit(what + " with the kernel's other static shared memory", static_shared_bytes_,
                  "kMaxStaticSharedBytes", kMaxStaticSharedBytes,
                  "; scope shared.dyn allows up to " + std::to_string(shared_limit_.bytes) + " (" +
                      shared_limit_.source + ")",
                  name_);
      }
    } else if (bytes > kMaxLocalBytes) {
      OverLimit(what, bytes, "kMaxLocalBytes, per thread", kMaxLocalBytes, "", name_);
    }
    std::string prefix = scope == "shared" ? "__shared__ " : "";
    // A swizzled layout repeats every 8 rows of its swizzle width: its base must be that aligned.
    int64_t align = std::max<int64_t>(16, 8 * transform::SwizzleBytes(op));
    Line(prefix + "__align__(" + std::to_string(align) + ") " + st + " " + n + "[" +
         std::to_string(count) + "];");
  } else {
    CudaUnsupported("an allocation of " + std::string(op->buffer_var->name_hint) + " in scope '" +
                        scope +
                        "' without a constant positive size (only shared memory may be "
                        "sized at launch)",
                    name_);
  }
  VisitStmt(op->body);
  if (acc) live_accs_.pop_back();
  CloseScope();
}

std::string Kernel::Run(bool* uses_grid_sync) {
  PostOrderVisit(func_->body, [&](const ObjectRef& n) {
    const auto* call = n.as<CallNode>();
    auto op = call ? call->op.as<Op>() : std::nullopt;
    if (!op || call->args.empty() ||
        ((*op)->name != "ptx_wgmma_mma_async" && (*op)->name != "ptx_wgmma_mma_async_rs")) {
      return;
    }
    const auto* addr = call->args[0].as<CallNode>();
    const auto* load =
        addr && addr->args.size() == 1 ? addr->args[0].as<BufferLoadNode>() : nullptr;
    if (load) wgmma_accs_.insert(load->buffer->data.get());
    if (const auto* v = call->args[0].as<VarNode>()) wgmma_accs_.insert(v);
  });
  transform::DynamicSharedLayoutInfo dyn_layout = transform::DynamicSharedLayout(func_);
  for (const auto& a : dyn_layout.allocations) {
    dyn_offsets_[a.buffer_var.get()] = a.offset;
  }
  // -1: not a constant (sized at launch).
  int64_t dyn_bytes = -1;
  if (dyn_layout.total_bytes.defined()) dyn_bytes = AsConstInt(dyn_layout.total_bytes).value_or(-1);
  if (dyn_bytes > shared_limit_.bytes) {
    OverLimit("the dynamic shared memory (shared.dyn allocations)", dyn_bytes, shared_limit_.source,
              shared_limit_.bytes, "", name_);
  }
  std::vector<std::string> params;
  std::vector<transform::KernelTensorMap> maps = transform::KernelTensorMaps(func_);
  std::vector<std::string> map_lines;
  for (size_t i = 0; i < func_->params.size(); ++i) {
    const Var& p = func_->params[i];
    bool is_map = std::any_of(maps.begin(), maps.end(),
                              [&](const transform::KernelTensorMap& m) { return m.param == i; });
    if (is_map) {
      // Passed by value; the kernel uses its address, which __grid_constant__ makes the
      // parameter's own (no local copy), as TMA requires.
      Declare(p, VarInfo{"", "", false});
      std::string n = names_.Get(p);
      params.push_back("const __grid_constant__ tsl_tensor_map_t " + n + "_desc");
      map_lines.push_back("const void* const " + n + " = &" + n + "_desc;");
      continue;
    }
    std::string pointee;
    if (p.dtype().is_handle() && !p->pointee.is_void()) pointee = StorageCType(p->pointee);
    if (p.dtype().is_vector())
      CudaUnsupported("a vector parameter " + std::string(p->name_hint), name_);
    Declare(p, VarInfo{pointee, "", false});
    params.push_back(DeclType(p) + " " + names_.Get(p));
    // A parameter with a buffer_map entry (hand-written kernels) stands for that buffer's data.
    auto buf = func_->buffer_map.find(p);
    if (buf != func_->buffer_map.end() && !(*buf).second->data.same_as(p)) {
      const Var& data = (*buf).second->data;
      names_.Alias(data, p);
      defined_[data.get()] = VarInfo{pointee, "", false};
    }
  }
  if (!dyn_offsets_.empty()) {
    // 1024: the atom of the widest swizzle, so that a swizzled buffer at a multiple of its atom
    // is aligned too; TMA copies need 128 bytes, 1024 with the 128-byte swizzle.
    bool swizzled = false;
    PostOrderVisit(func_->body, [&](const ObjectRef& n) {
      if (const auto* a = n.as<AllocateNode>()) swizzled = swizzled || transform::SwizzleBytes(a);
      if (const auto* c = n.as<CallNode>()) {
        auto op = c->op.as<Op>();
        swizzled = swizzled || (op && std::string((*op)->name).rfind("ptx_tma_", 0) == 0);
      }
    });
    if (swizzled) {
      // Its own symbol: extern __shared__ arrays of one name share one alignment across the
      // kernels of a module, and a 16-byte one in another kernel (a fallback) left this one's
      // base 48 bytes past a 1024-byte boundary on the H200.
      Line("extern __shared__ __align__(1024) unsigned char tsl_dyn_smem_1024[];");
      Line("unsigned char* const tsl_dyn_smem = tsl_dyn_smem_1024;");
    } else {
      Line("extern __shared__ __align__(16) unsigned char tsl_dyn_smem[];");
    }
  }
  for (const std::string& line : map_lines) Line(line);
  VisitStmt(func_->body);
  *uses_grid_sync = grid_sync_;
  if (dyn_bytes >= 0 && dyn_bytes + static_shared_bytes_ > shared_limit_.bytes) {
    OverLimit("the static and dynamic shared memory together", dyn_bytes + static_shared_bytes_,
              shared_limit_.source, shared_limit_.bytes, "", name_);
  }

  std::ostringstream head;
  head << "extern \"C\" __global__ void ";
  int64_t block = 1;
  auto dims = func_->attrs.find("tessel.launch_dims");
  if (dims != func_->attrs.end()) {
    // The split's launch dims are authoritative when constant.
    auto arr = (*dims).second.try_cast<Array<PrimExpr>>();
    if (arr && arr->size() == 6) {
      for (int i = 3; i < 6; ++i) {
        auto c = AsConstInt((*arr)[i]);
        if (!c) {
          block = -1;
          break;
        }
        block *= *c;
      }
    }
  } else if (block_size_known_) {
    for (const auto& kv : thread_extent_) block *= kv.second;
  } else {
    block = -1;
  }
  if (block > 0 && block <= 1024) head << "__launch_bounds__(" << block << ") ";
  auto cluster = func_->attrs.find("tessel.cluster_dims");
  if (cluster != func_->attrs.end()) {
    auto arr = (*cluster).second.try_cast<Array<Any>>();
    std::vector<int64_t> c;
    if (arr) {
      for (const Any& a : *arr) {
        if (auto i = a.try_cast<int64_t>()) {
          c.push_back(*i);
        } else if (auto e = a.try_cast<PrimExpr>(); e && AsConstInt(*e)) {
          c.push_back(*AsConstInt(*e));
        }
      }
    }
    if (c.size() != 3 || c[0] < 1 || c[1] < 1 || c[2] < 1) {
      CudaUnsupported("attribute tessel.cluster_dims (expected three positive constants)", name_);
    }
    head << "__cluster_dims__(" << c[0] << ", " << c[1] << ", " << c[2] << ") ";
  }
  head << name_ << "(";
  for (size_t i = 0; i < params.size(); ++i) head << (i ? ", " : "") << params[i];
  head << ") {\n";
  return head.str() + os_.str() + "}\n";
}

}  // namespace

std::string EmitCudaKernel(const PrimFunc& func, const std::string& name, const std::string& arch,
                           bool* uses_grid_sync, bool aligned_params,
                           std::vector<std::pair<uint32_t, uint32_t>>* checked_loads) {
  Kernel k(func, name, arch, aligned_params);
  std::string text = k.Run(uses_grid_sync);
  if (checked_loads) checked_loads->assign(k.checked_loads().begin(), k.checked_loads().end());
  return text;
}

}  // namespace codegen
}  // namespace tessel
