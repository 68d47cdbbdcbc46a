// Registration of the Hopper (sm_90/sm_90a) PTX builtins. Their meaning, operand by operand, is in
// include/tessel/ir/builtin_hopper.h; the CUDA generator emits each as inline PTX
// (src/codegen/cuda/cuda_hopper.cc). All order memory or talk to asynchronous units, so none may
// be moved, merged or dropped: they are opaque.
#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/expr.h>
#include <tessel/ir/op.h>

#include <set>

namespace tessel {
namespace ir {

using K = CallEffectKind;

TESSEL_REGISTER_OP("ptx_mbarrier_init").NumInputs(2).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_mbarrier_arrive").NumInputs(1).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_mbarrier_arrive_expect_tx").NumInputs(2).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_mbarrier_try_wait").NumInputs(2).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_mbarrier_wait").NumInputs(2).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_fence_mbarrier_init").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_fence_proxy_async").NumInputs(0).Effect(K::kOpaque);
// (dst, src, bytes) or (dst, src, bytes, in_bounds): zeros where in_bounds is false.
TESSEL_REGISTER_OP("ptx_cp_async").Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_cp_async_commit_group").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_cp_async_wait_group").NumInputs(1).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_named_barrier_sync").NumInputs(2).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_named_barrier_arrive").NumInputs(2).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_setmaxnreg_inc").NumInputs(1).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_setmaxnreg_dec").NumInputs(1).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_elect_one_sync").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_wgmma_fence").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_wgmma_commit_group").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_wgmma_wait_group").NumInputs(1).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_wgmma_desc").NumInputs(4);
TESSEL_REGISTER_OP("ptx_wgmma_mma_async").NumInputs(8).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_wgmma_mma_async_rs").NumInputs(7).Effect(K::kOpaque);
// ptx_ldmatrix and ptx_mma are TVM's ops, registered with the other builtins (builtin_ops.cc).
TESSEL_REGISTER_OP("ptx_stmatrix").NumInputs(6).Effect(K::kOpaque);
// Pure: a conversion, as free to move or merge as any cast.
TESSEL_REGISTER_OP("ptx_cvt_pack").NumInputs(3).Effect(K::kPure);
// Pure: the descriptor is a function of its operands, evaluated once per launch on the host.
TESSEL_REGISTER_OP("tma_descriptor").Effect(K::kPure);
TESSEL_REGISTER_OP("ptx_tma_load").Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_tma_store").Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_tma_store_commit_group").NumInputs(0).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_tma_store_wait_group").NumInputs(1).Effect(K::kOpaque);
TESSEL_REGISTER_OP("ptx_prefetch_tensor_map").NumInputs(1).Effect(K::kOpaque);

bool IsHopperBuiltin(const std::string& name) {
  return name.rfind("ptx_mbarrier_", 0) == 0 || name.rfind("ptx_fence_", 0) == 0 ||
         name.rfind("ptx_cp_async", 0) == 0 || name.rfind("ptx_named_barrier_", 0) == 0 ||
         name.rfind("ptx_setmaxnreg_", 0) == 0 || name == "ptx_elect_one_sync" ||
         name.rfind("ptx_wgmma_", 0) == 0 || name == "ptx_ldmatrix" || name == "ptx_stmatrix" ||
         name == "ptx_mma" || name.rfind("ptx_tma_", 0) == 0 || name == "ptx_prefetch_tensor_map" ||
         name == "ptx_cvt_pack";
}

int TmaDescriptorRank(const CallNode* op) {
  size_t n = op->args.size();
  if (n < 6 || (n - 3) % 3 != 0 || (n - 3) / 3 > 5) return 0;
  return static_cast<int>((n - 3) / 3);
}

bool IsTmaDescriptor(const PrimExpr& e) {
  const auto* call = e.as<CallNode>();
  if (call == nullptr) return false;
  auto op = call->op.as<Op>();
  return op && (*op)->name == "tma_descriptor";
}

int MinSmVersion(const std::string& name) {
  if (name.rfind("ptx_cp_async", 0) == 0 || name == "ptx_cvt_pack" || name == "ptx_mma") return 80;
  if (name == "ptx_ldmatrix") return 75;
  if (name.rfind("ptx_named_barrier_", 0) == 0) return 0;
  return 90;
}

bool NeedsSm90a(const std::string& name) {
  return name.rfind("ptx_wgmma_", 0) == 0 || name.rfind("ptx_setmaxnreg_", 0) == 0;
}

namespace {

std::string Constant(const CallNode* op, size_t i, const std::string& what,
                     const std::set<int64_t>& allowed, const std::string& allowed_text) {
  auto v = AsConstInt(op->args[i]);
  std::string name = (*op->op.as<Op>())->name;
  if (!v) return name + ": " + what + " must be a literal constant";
  if (!allowed.empty() && !allowed.count(*v)) {
    return name + ": " + what + " " + std::to_string(*v) + " (" + allowed_text + ")";
  }
  return "";
}

std::string Pointer(const CallNode* op, size_t i, const std::string& what) {
  if (op->args[i].dtype().is_handle()) return "";
  return (*op->op.as<Op>())->name + ": " + what +
         " must be a pointer (T.address_of(buf[i]) or a "
         "buffer's data), not " +
         op->args[i].dtype().str();
}

std::string StringOf(const CallNode* op, size_t i, const std::string& what, std::string* value) {
  const auto* s = op->args[i].as<StringImmNode>();
  if (s == nullptr) {
    return (*op->op.as<Op>())->name + ": " + what + " must be a string literal";
  }
  *value = s->value;
  return "";
}

std::set<int64_t> Values(int64_t lo, int64_t hi, int64_t step) {
  std::set<int64_t> out;
  for (int64_t v = lo; v <= hi; v += step) out.insert(v);
  return out;
}

}  // namespace

std::string CheckHopperCall(const CallNode* op) {
  std::string name = (*op->op.as<Op>())->name;
  std::string e;
  auto first = [&](std::initializer_list<std::string> checks) {
    for (const std::string& c : checks) {
      if (!c.empty()) return c;
    }
    return std::string();
  };
  if (name.rfind("ptx_mbarrier_", 0) == 0) return Pointer(op, 0, "the barrier");
  if (name == "ptx_cvt_pack") {
    std::string t;
    if (std::string bad = StringOf(op, 0, "the type", &t); !bad.empty()) return bad;
    if (t != "f16" && t != "bf16") return name + ": type '" + t + "' (f16 or bf16)";
    for (size_t i : {1, 2}) {
      if (op->args[i].dtype() != DataType::Float(32)) {
        return name + ": operand " + std::to_string(i) + " must be float32, not " +
               op->args[i].dtype().str();
      }
    }
    return "";
  }
  if (name == "ptx_cp_async") {
    if (op->args.size() != 3 && op->args.size() != 4) {
      return name + ": takes (dst, src, bytes) or (dst, src, bytes, in_bounds), not " +
             std::to_string(op->args.size()) + " operands";
    }
    e = first({Pointer(op, 0, "the destination"), Pointer(op, 1, "the source"),
               Constant(op, 2, "the byte count", {4, 8, 16}, "4, 8 or 16")});
    if (e.empty() && op->args.size() == 4 && !op->args[3].dtype().is_bool()) {
      return name + ": in_bounds must be a boolean, not " + op->args[3].dtype().str();
    }
    return e;
  }
  if (name == "ptx_cp_async_wait_group" || name == "ptx_wgmma_wait_group") {
    return Constant(op, 0, "the group count", Values(0, 7, 1), "0..7");
  }
  if (name == "ptx_named_barrier_sync" || name == "ptx_named_barrier_arrive") {
    if (auto id = AsConstInt(op->args[0]); id && (*id < 1 || *id > 15)) {
      return name + ": barrier id " + std::to_string(*id) +
             " (1..15; 0 is the one __syncthreads uses)";
    }
    if (auto n = AsConstInt(op->args[1]); n && (*n <= 0 || *n % 32 != 0)) {
      return name + ": thread count " + std::to_string(*n) + " (a multiple of 32)";
    }
    return "";
  }
  if (name == "ptx_setmaxnreg_inc" || name == "ptx_setmaxnreg_dec") {
    return Constant(op, 0, "the register count", Values(24, 256, 8),
                    "a multiple of 8 in [24, 256]");
  }
  if (name == "ptx_ldmatrix") {
    // TVM's operands: dtype, trans, num, type, local_ptr, local_offset, smem_ptr, smem_offset.
    if (op->args.size() != 8) {
      return name +
             ": 8 operands (dtype, trans, num, \".b16\", local_ptr, local_offset, smem_ptr, "
             "smem_offset), got " +
             std::to_string(op->args.size());
    }
    std::string type;
    return first({Constant(op, 1, "trans", {0, 1}, "0 or 1"),
                  Constant(op, 2, "num", {1, 2, 4}, "1, 2 or 4"),
                  StringOf(op, 3, "the type", &type), Pointer(op, 4, "the local pointer"),
                  Pointer(op, 6, "the shared pointer"),
                  type == ".b16" || type.empty() ? "" : name + ": type " + type + " (only .b16)"});
  }
  if (name == "ptx_mma") {
    if (op->args.size() != 13) {
      return name +
             ": 13 operands (shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, a, a_offset, "
             "b, b_offset, c, c_offset, saturate), got " +
             std::to_string(op->args.size());
    }
    std::string shape, la, lb, ta, tb, tc;
    e = first({StringOf(op, 0, "the shape", &shape), StringOf(op, 1, "A_layout", &la),
               StringOf(op, 2, "B_layout", &lb), StringOf(op, 3, "A_dtype", &ta),
               StringOf(op, 4, "B_dtype", &tb), StringOf(op, 5, "C_dtype", &tc),
               Pointer(op, 6, "a"), Pointer(op, 8, "b"), Pointer(op, 10, "c"),
               Constant(op, 12, "saturate", {0}, "only false")});
    if (!e.empty()) return e;
    if (shape != "m16n8k16") return name + ": shape \"" + shape + "\" (only m16n8k16)";
    if (la != "row" || lb != "col") {
      return name + ": layouts " + la + "." + lb + " (only row.col)";
    }
    if ((ta != "fp16" && ta != "bf16") || tb != ta) {
      return name + ": A and B dtypes " + ta + ", " + tb + " (both fp16 or both bf16)";
    }
    if (tc != "fp32") return name + ": C_dtype " + tc + " (only fp32)";
    if (op->dtype != DataType::Float(32)) {
      return name + ": the call's dtype is " + op->dtype.str() + " (float32, the accumulator's)";
    }
    return "";
  }
  if (name == "ptx_stmatrix") {
    return first({Constant(op, 0, "trans", {0, 1}, "0 or 1"),
                  Constant(op, 1, "num", {1, 2, 4}, "1, 2 or 4"),
                  Pointer(op, 2, "the shared pointer"), Pointer(op, 4, "the local pointer")});
  }
  if (name == "tma_descriptor") {
    int rank = TmaDescriptorRank(op);
    if (rank == 0) {
      return name + ": " + std::to_string(op->args.size()) +
             " operands (expected dtype, swizzle, address, then rank dims, rank strides and "
             "rank box sizes, rank 1..5)";
    }
    std::string dtype;
    e = first({StringOf(op, 0, "the element dtype", &dtype),
               Constant(op, 1, "the swizzle", {0, 32, 64, 128}, "0, 32, 64 or 128 bytes"),
               Pointer(op, 2, "the tensor address")});
    if (!e.empty()) return e;
    auto t = DataType::Parse(dtype);
    if (!t || !t->is_scalar() || t->bits() % 8 != 0 || t->is_bool() || t->is_handle()) {
      return name + ": element dtype \"" + dtype + "\" (expected an integer or float type)";
    }
    for (int i = 0; i < rank; ++i) {
      e = Constant(op, 3 + 2 * rank + i, "box size " + std::to_string(i), Values(1, 256, 1),
                   "1..256");
      if (!e.empty()) return e;
    }
    if (auto s = AsConstInt(op->args[3 + 2 * rank - 1]); s && *s != 1) {
      return name + ": the innermost stride is " + std::to_string(*s) +
             " (TMA needs the innermost axis contiguous: stride 1)";
    }
    return "";
  }
  if (name == "ptx_tma_load" || name == "ptx_tma_store") {
    bool load = name == "ptx_tma_load";
    size_t coords = op->args.size() - (load ? 3 : 2);
    if (op->args.size() < (load ? 4u : 3u) || coords > 5) {
      return name + ": " + std::to_string(op->args.size()) + " operands (expected " +
             (load ? "dst, map, barrier" : "map, src") + ", then 1..5 coordinates)";
    }
    e = load ? first({Pointer(op, 0, "the destination"), Pointer(op, 1, "the tensor map"),
                      Pointer(op, 2, "the barrier")})
             : first({Pointer(op, 0, "the tensor map"), Pointer(op, 1, "the source")});
    if (!e.empty()) return e;
    for (size_t i = op->args.size() - coords; i < op->args.size(); ++i) {
      DataType t = op->args[i].dtype();
      if (!t.is_scalar() || !t.is_int() || t.bits() > 32) {
        return name + ": coordinate " + std::to_string(i - (op->args.size() - coords)) +
               " must be an int32, not " + t.str();
      }
    }
    return "";
  }
  if (name == "ptx_tma_store_wait_group") {
    return Constant(op, 0, "the group count", Values(0, 7, 1), "0..7");
  }
  if (name == "ptx_prefetch_tensor_map") return Pointer(op, 0, "the tensor map");
  if (name == "ptx_wgmma_desc") {
    return first({Pointer(op, 0, "the shared-memory matrix"),
                  Constant(op, 3, "the swizzle", {0, 32, 64, 128}, "0, 32, 64 or 128 bytes")});
  }
  if (name == "ptx_wgmma_mma_async" || name == "ptx_wgmma_mma_async_rs") {
    std::string shape, dtype;
    bool rs = name == "ptx_wgmma_mma_async_rs";
    e = rs ? first({Pointer(op, 0, "the accumulator"), Pointer(op, 1, "the A registers"),
                    StringOf(op, 4, "the shape", &shape),
                    StringOf(op, 5, "the input dtype", &dtype),
                    Constant(op, 6, "trans_b", {0, 1}, "0 or 1")})
           : first({Pointer(op, 0, "the accumulator"), StringOf(op, 4, "the shape", &shape),
                    StringOf(op, 5, "the input dtype", &dtype),
                    Constant(op, 6, "trans_a", {0, 1}, "0 or 1"),
                    Constant(op, 7, "trans_b", {0, 1}, "0 or 1")});
    if (!e.empty()) return e;
    int64_t n = WgmmaN(shape);
    if (n == 0) {
      return name + ": shape \"" + shape +
             "\" (expected m64n<N>k16, N a multiple of 8 in [8, 256])";
    }
    if (dtype != "f16" && dtype != "bf16") {
      return name + ": input dtype \"" + dtype + "\" (expected f16 or bf16)";
    }
    return "";
  }
  return "";
}

int64_t WgmmaN(const std::string& shape) {
  const std::string prefix = "m64n", suffix = "k16";
  if (shape.size() <= prefix.size() + suffix.size() || shape.rfind(prefix, 0) != 0 ||
      shape.compare(shape.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return 0;
  }
  std::string n = shape.substr(prefix.size(), shape.size() - prefix.size() - suffix.size());
  if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos) return 0;
  int64_t v = std::stoll(n);
  return v >= 8 && v <= 256 && v % 8 == 0 ? v : 0;
}

}  // namespace ir
}  // namespace tessel
