// The Hopper builtins (include/tessel/ir/builtin_hopper.h) in CUDA: each call becomes a call of a
// device helper holding the inline PTX, and the helpers a module uses are written once before its
// kernels. Operands that PTX takes as immediates (group counts, register counts, the wgmma shape,
// its types and transposes) must be constants in the IR; anything else is refused here with the
// kernel's name.
#include <tessel/ir/builtin.h>
#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/functor.h>
#include <tessel/transform/split_host_device.h>
#include <tvm/ffi/error.h>

#include <map>
#include <set>

#include "codegen/cuda/codegen_cuda.h"

namespace tessel {
namespace codegen {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

const char* const kBase = R"TSL(
/* ---- Hopper builtins (inline PTX) ---- */
TSL_HELPER uint32_t tsl_smem_addr(const void* p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
)TSL";

// A CUtensorMap as the kernel receives it: 128 opaque bytes, 64-byte aligned (cuda.h's
// CUtensorMap), passed by value as a __grid_constant__ parameter so its address is the parameter's.
const char* const kTensorMapType = R"TSL(struct __align__(64) tsl_tensor_map_t {
  unsigned long long opaque[16];
};
)TSL";

// Helper text per builtin (those that take no shape-dependent form).
const std::map<std::string, const char*>& Fixed() {
  static const std::map<std::string, const char*> table = {
      {"ptx_mbarrier_init", R"TSL(TSL_HELPER void tsl_mbarrier_init(void* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(tsl_smem_addr(bar)), "r"(count) : "memory");
}
)TSL"},
      {"ptx_mbarrier_arrive", R"TSL(TSL_HELPER void tsl_mbarrier_arrive(void* bar) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}" :: "r"(tsl_smem_addr(bar)) : "memory");
}
)TSL"},
      {"ptx_mbarrier_arrive_expect_tx",
       R"TSL(TSL_HELPER void tsl_mbarrier_arrive_expect_tx(void* bar, uint32_t bytes) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}" :: "r"(tsl_smem_addr(bar)), "r"(bytes) : "memory");
}
)TSL"},
      {"ptx_mbarrier_try_wait",
       R"TSL(TSL_HELPER bool tsl_mbarrier_try_wait(void* bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(tsl_smem_addr(bar)), "r"(parity) : "memory");
  return done != 0;
}
)TSL"},
      {"ptx_mbarrier_wait", R"TSL(TSL_HELPER void tsl_mbarrier_wait(void* bar, uint32_t parity) {
  while (!tsl_mbarrier_try_wait(bar, parity)) {
  }
}
)TSL"},
      {"ptx_fence_mbarrier_init", R"TSL(TSL_HELPER void tsl_fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
)TSL"},
      {"ptx_cvt_pack", R"TSL(TSL_HELPER uint32_t tsl_cvt_pack_f16(float lo, float hi) {
  uint32_t d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
TSL_HELPER uint32_t tsl_cvt_pack_bf16(float lo, float hi) {
  uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
)TSL"},
      {"ptx_fence_proxy_async", R"TSL(TSL_HELPER void tsl_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
)TSL"},
      {"ptx_cp_async", R"TSL(template <int N>
TSL_HELPER void tsl_cp_async(void* dst, const void* src) {
  if (N == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(tsl_smem_addr(dst)), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" :: "r"(tsl_smem_addr(dst)), "l"(src), "n"(N) : "memory");
  }
}
// src-size 0 where !in_bounds: nothing is read and the N bytes at dst become zeros.
template <int N>
TSL_HELPER void tsl_cp_async_zfill(void* dst, const void* src, bool in_bounds) {
  unsigned src_size = in_bounds ? N : 0;
  if (N == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(tsl_smem_addr(dst)), "l"(src), "r"(src_size) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" :: "r"(tsl_smem_addr(dst)), "l"(src), "n"(N), "r"(src_size) : "memory");
  }
}
)TSL"},
      {"ptx_cp_async_commit_group", R"TSL(TSL_HELPER void tsl_cp_async_commit_group() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
)TSL"},
      {"ptx_cp_async_wait_group", R"TSL(template <int N>
TSL_HELPER void tsl_cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
)TSL"},
      {"ptx_named_barrier_sync",
       R"TSL(TSL_HELPER void tsl_named_barrier_sync(uint32_t id, uint32_t n) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n) : "memory");
}
)TSL"},
      {"ptx_named_barrier_arrive",
       R"TSL(TSL_HELPER void tsl_named_barrier_arrive(uint32_t id, uint32_t n) {
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(n) : "memory");
}
)TSL"},
      {"ptx_setmaxnreg_inc", R"TSL(template <int N>
TSL_HELPER void tsl_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(N));
}
)TSL"},
      {"ptx_setmaxnreg_dec", R"TSL(template <int N>
TSL_HELPER void tsl_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(N));
}
)TSL"},
      {"ptx_elect_one_sync", R"TSL(TSL_HELPER bool tsl_elect_one_sync() {
  uint32_t elected;
  asm volatile("{\n .reg .b32 r;\n .reg .pred p;\n elect.sync r|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(elected));
  return elected != 0;
}
)TSL"},
      {"ptx_wgmma_fence", R"TSL(TSL_HELPER void tsl_wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
)TSL"},
      {"ptx_wgmma_commit_group", R"TSL(TSL_HELPER void tsl_wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
)TSL"},
      {"ptx_wgmma_wait_group", R"TSL(template <int N>
TSL_HELPER void tsl_wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
/* Ties each accumulator register to this point: reads after a wait stay after it. */
template <int N>
TSL_HELPER void tsl_wgmma_fence_operand(float* acc) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}
)TSL"},
      {"ptx_ldmatrix", R"TSL(template <int N, int T>
TSL_HELPER void tsl_ldmatrix(uint32_t* r, const void* smem) {
  uint32_t a = tsl_smem_addr(smem);
  if (N == 1 && T == 0) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a));
  if (N == 1 && T == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a));
  if (N == 2 && T == 0) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
  if (N == 2 && T == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
  if (N == 4 && T == 0) asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  if (N == 4 && T == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
)TSL"},
      {"ptx_stmatrix", R"TSL(template <int N, int T>
TSL_HELPER void tsl_stmatrix(const uint32_t* r, void* smem) {
  uint32_t a = tsl_smem_addr(smem);
  if (N == 1 && T == 0) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(a), "r"(r[0]) : "memory");
  if (N == 1 && T == 1) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(a), "r"(r[0]) : "memory");
  if (N == 2 && T == 0) asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(a), "r"(r[0]), "r"(r[1]) : "memory");
  if (N == 2 && T == 1) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" :: "r"(a), "r"(r[0]), "r"(r[1]) : "memory");
  if (N == 4 && T == 0) asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  if (N == 4 && T == 1) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}
)TSL"},
      {"ptx_wgmma_desc",
       R"TSL(/* A wgmma shared-memory matrix descriptor: start address, leading and stride byte offsets
   (each >> 4, 14 bits), base offset 0, layout type in bits 62-63 (1: 128-byte swizzle,
   2: 64-byte, 3: 32-byte, 0: none). */
TSL_HELPER uint64_t tsl_wgmma_desc(const void* smem, uint32_t lbo, uint32_t sbo, uint32_t layout) {
  uint64_t d = (uint64_t)((tsl_smem_addr(smem) & 0x3FFFF) >> 4);
  d |= (uint64_t)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (uint64_t)((sbo & 0x3FFFF) >> 4) << 32;
  d |= (uint64_t)layout << 62;
  return d;
}
)TSL"},
      {"ptx_tma_store_commit_group", R"TSL(TSL_HELPER void tsl_tma_store_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
)TSL"},
      {"ptx_tma_store_wait_group", R"TSL(template <int N>
TSL_HELPER void tsl_tma_store_wait_group() {
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
}
)TSL"},
      {"ptx_prefetch_tensor_map", R"TSL(TSL_HELPER void tsl_prefetch_tensor_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];" :: "l"(map) : "memory");
}
)TSL"},
  };
  return table;
}

// The TMA copy helper of rank `rank`: tsl_tma_load_<r>d(dst, map, bar, c_0..) and
// tsl_tma_store_<r>d(map, src, c_0..), coordinates outermost first as in the IR; PTX lists them
// innermost first.
std::string TmaHelper(bool load, int rank) {
  std::string params, coords;
  int first = load ? 3 : 2;  // asm operand number of the innermost coordinate
  for (int i = 0; i < rank; ++i) params += ", int32_t c" + std::to_string(i);
  for (int i = 0; i < rank; ++i) {
    coords += (i ? ", %" : "%") + std::to_string(first + i);
  }
  std::string ins;
  for (int i = rank - 1; i >= 0; --i) ins += ", \"r\"(c" + std::to_string(i) + ")";
  std::string r = std::to_string(rank);
  if (load) {
    return "TSL_HELPER void tsl_tma_load_" + r + "d(void* dst, const void* map, void* bar" +
           params + ") {\n  asm volatile(\"cp.async.bulk.tensor." + r +
           "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {" + coords +
           "}], [%2];\"\n      :: \"r\"(tsl_smem_addr(dst)), \"l\"(map), "
           "\"r\"(tsl_smem_addr(bar))" +
           ins + " : \"memory\");\n}\n";
  }
  return "TSL_HELPER void tsl_tma_store_" + r + "d(const void* map, const void* src" + params +
         ") {\n  asm volatile(\"cp.async.bulk.tensor." + r +
         "d.global.shared::cta.tile.bulk_group [%0, {" + coords +
         "}], [%1];\"\n      :: \"l\"(map), \"r\"(tsl_smem_addr(src))" + ins +
         " : \"memory\");\n}\n";
}

struct WgmmaForm {
  int64_t n = 0;
  std::string dtype;
  int64_t trans_a = 0, trans_b = 0;
  bool rs = false;  // A from registers
  std::string Name() const {
    return std::string(rs ? "tsl_wgmma_rs_m64n" : "tsl_wgmma_m64n") + std::to_string(n) + "k16_" +
           dtype + "_" + std::to_string(trans_a) + std::to_string(trans_b);
  }
};

// The form of a wgmma call whose operands CheckHopperCall accepted.
WgmmaForm Wgmma(const CallNode* op) {
  WgmmaForm w;
  w.rs = (*op->op.as<Op>())->name == "ptx_wgmma_mma_async_rs";
  w.n = WgmmaN(op->args[4].as<StringImmNode>()->value);
  w.dtype = op->args[5].as<StringImmNode>()->value;
  w.trans_a = w.rs ? 0 : *AsConstInt(op->args[6]);
  w.trans_b = *AsConstInt(op->args[w.rs ? 6 : 7]);
  return w;
}

// The accumulator operands of a wgmma asm: "%0, .., %regs-1" and their "+f" bindings.
std::string AccList(int64_t regs) {
  std::string list;
  for (int64_t i = 0; i < regs; ++i) list += (i ? ", %" : "%") + std::to_string(i);
  return list;
}
std::string AccOutputs(int64_t regs) {
  std::string outs;
  for (int64_t i = 0; i < regs; ++i)
    outs += (i ? ", " : "") + std::string("\"+f\"(acc[") + std::to_string(i) + "])";
  return outs;
}

// The register-A form: the thread's 8 16-bit elements of A, packed in pairs into 4 b32
// registers before the wgmma fence (packing after it would make ptxas insert warpgroup arrives
// and serialize the wgmmas).
std::string WgmmaRsHelper(const WgmmaForm& w) {
  int64_t regs = w.n / 2;
  std::string list = AccList(regs), outs = AccOutputs(regs);
  auto op = [&](int64_t i) { return "%" + std::to_string(regs + i); };
  return "TSL_HELPER void " + w.Name() +
         "(float* acc, const uint32_t* a, uint64_t desc_b, uint32_t scale_d) {\n"
         "  asm volatile(\"{\\n .reg .pred p;\\n setp.ne.b32 p, " +
         op(5) + ", 0;\\n wgmma.mma_async.sync.aligned.m64n" + std::to_string(w.n) + "k16.f32." +
         w.dtype + "." + w.dtype + " {" + list + "}, {" + op(0) + ", " + op(1) + ", " + op(2) +
         ", " + op(3) + "}, " + op(4) + ", p, 1, 1, " + std::to_string(w.trans_b) +
         ";\\n}\"\n      : " + outs +
         "\n      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b), "
         "\"r\"(scale_d));\n}\n";
}

std::string WgmmaHelper(const WgmmaForm& w) {
  if (w.rs) return WgmmaRsHelper(w);
  int64_t regs = w.n / 2;
  std::string list = AccList(regs), outs = AccOutputs(regs);
  std::string da = "%" + std::to_string(regs), db = "%" + std::to_string(regs + 1),
              sd = "%" + std::to_string(regs + 2);
  return "TSL_HELPER void " + w.Name() +
         "(float* acc, uint64_t desc_a, uint64_t desc_b, uint32_t scale_d) {\n"
         "  asm volatile(\"{\\n .reg .pred p;\\n setp.ne.b32 p, " +
         sd + ", 0;\\n wgmma.mma_async.sync.aligned.m64n" + std::to_string(w.n) + "k16.f32." +
         w.dtype + "." + w.dtype + " {" + list + "}, " + da + ", " + db + ", p, 1, 1, " +
         std::to_string(w.trans_a) + ", " + std::to_string(w.trans_b) + ";\\n}\"\n      : " + outs +
         "\n      : \"l\"(desc_a), \"l\"(desc_b), \"r\"(scale_d));\n}\n";
}

// The bytes of an element of what pointer `p` points at: a buffer's data variable or
// T.address_of(buf[i]).
int64_t PointeeBytes(const PrimExpr& p) {
  if (const auto* v = p.as<VarNode>()) {
    if (v->pointee.bits() > 0) return v->pointee.bytes() * v->pointee.lanes();
  }
  const auto* call = p.as<CallNode>();
  if (call && call->op.same_as(builtin::address_of()) && call->args.size() == 1) {
    DataType t = call->args[0].dtype();
    return t.bytes() * t.lanes();
  }
  return 1;
}

// mma.sync m16n8k16 of 16-bit A and B (dtype "fp16" or "bf16") into float32, in place. Not
// volatile: it reads only its operands, so the compiler may schedule it among the ldmatrix loads.
std::string MmaName(const CallNode* op) {
  std::string t = op->args[3].as<StringImmNode>()->value;
  return "tsl_mma_m16n8k16_" + std::string(t == "fp16" ? "f16" : "bf16");
}

std::string MmaHelper(const CallNode* op) {
  std::string t = op->args[3].as<StringImmNode>()->value == "fp16" ? "f16" : "bf16";
  return "TSL_HELPER void " + MmaName(op) +
         "(float* d, const uint32_t* a, const uint32_t* b) {\n"
         "  asm(\"mma.sync.aligned.m16n8k16.row.col.f32." +
         t + "." + t +
         ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
         "      : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
         "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), "
         "\"r\"(b[1]));\n}\n";
}

}  // namespace

std::string EmitHopperCall(const CallNode* op, const std::function<std::string(size_t)>& arg,
                           const std::string& fn) {
  std::string name = (*op->op.as<Op>())->name;
  std::string error = CheckHopperCall(op);
  if (!error.empty()) CudaUnsupported(error, fn);
  auto imm = [&](size_t i) { return std::to_string(*AsConstInt(op->args[i])); };
  if (name == "ptx_mbarrier_init") return "tsl_mbarrier_init(" + arg(0) + ", " + arg(1) + ")";
  if (name == "ptx_mbarrier_arrive") return "tsl_mbarrier_arrive(" + arg(0) + ")";
  if (name == "ptx_mbarrier_arrive_expect_tx") {
    return "tsl_mbarrier_arrive_expect_tx(" + arg(0) + ", " + arg(1) + ")";
  }
  if (name == "ptx_mbarrier_try_wait") {
    return "tsl_mbarrier_try_wait(" + arg(0) + ", " + arg(1) + ")";
  }
  if (name == "ptx_mbarrier_wait") return "tsl_mbarrier_wait(" + arg(0) + ", " + arg(1) + ")";
  if (name == "ptx_fence_mbarrier_init") return "tsl_fence_mbarrier_init()";
  if (name == "ptx_fence_proxy_async") return "tsl_fence_proxy_async()";
  if (name == "ptx_cvt_pack") {
    return "tsl_cvt_pack_" + std::string(op->args[0].as<StringImmNode>()->value) + "(" + arg(1) +
           ", " + arg(2) + ")";
  }
  if (name == "ptx_cp_async" && op->args.size() == 4) {
    return "tsl_cp_async_zfill<" + imm(2) + ">(" + arg(0) + ", " + arg(1) + ", " + arg(3) + ")";
  }
  if (name == "ptx_cp_async") return "tsl_cp_async<" + imm(2) + ">(" + arg(0) + ", " + arg(1) + ")";
  if (name == "ptx_cp_async_commit_group") return "tsl_cp_async_commit_group()";
  if (name == "ptx_cp_async_wait_group") return "tsl_cp_async_wait_group<" + imm(0) + ">()";
  if (name == "ptx_named_barrier_sync") {
    return "tsl_named_barrier_sync(" + arg(0) + ", " + arg(1) + ")";
  }
  if (name == "ptx_named_barrier_arrive") {
    return "tsl_named_barrier_arrive(" + arg(0) + ", " + arg(1) + ")";
  }
  if (name == "ptx_setmaxnreg_inc") return "tsl_setmaxnreg_inc<" + imm(0) + ">()";
  if (name == "ptx_setmaxnreg_dec") return "tsl_setmaxnreg_dec<" + imm(0) + ">()";
  if (name == "ptx_elect_one_sync") return "tsl_elect_one_sync()";
  if (name == "ptx_wgmma_fence") return "tsl_wgmma_fence()";
  if (name == "ptx_wgmma_commit_group") return "tsl_wgmma_commit_group()";
  if (name == "ptx_wgmma_wait_group") return "tsl_wgmma_wait_group<" + imm(0) + ">()";
  if (name == "ptx_ldmatrix" || name == "ptx_stmatrix") {
    // Offsets count 16-bit elements, as in TVM.
    bool ld = name == "ptx_ldmatrix";
    size_t t = ld ? 1 : 0;
    std::string local = "(uint32_t*)((uint16_t*)(" + arg(4) + ") + " + arg(5) + ")";
    std::string smem = "(void*)((uint16_t*)(" + arg(ld ? 6 : 2) + ") + " + arg(ld ? 7 : 3) + ")";
    return std::string(ld ? "tsl_ldmatrix<" : "tsl_stmatrix<") + imm(t + 1) + ", " + imm(t) + ">(" +
           local + ", " + smem + ")";
  }
  if (name == "ptx_mma") {
    // Offsets count elements of each pointer's own type, as in TVM; in bytes here, since a
    // bfloat16 register array is declared as 32-bit words (cuda_kernel.cc).
    auto at = [&](size_t p) {
      return "((char*)(" + arg(p) + ") + (" + arg(p + 1) + ") * " +
             std::to_string(PointeeBytes(op->args[p])) + ")";
    };
    return MmaName(op) + "((float*)" + at(10) + ", (const uint32_t*)" + at(6) +
           ", (const uint32_t*)" + at(8) + ")";
  }
  if (name == "ptx_tma_load" || name == "ptx_tma_store") {
    bool load = name == "ptx_tma_load";
    size_t fixed = load ? 3 : 2;
    std::string out = std::string(load ? "tsl_tma_load_" : "tsl_tma_store_") +
                      std::to_string(op->args.size() - fixed) + "d(";
    for (size_t i = 0; i < op->args.size(); ++i) {
      out += (i ? ", " : "") + (i < fixed ? arg(i) : "(int32_t)(" + arg(i) + ")");
    }
    return out + ")";
  }
  if (name == "ptx_tma_store_commit_group") return "tsl_tma_store_commit_group()";
  if (name == "ptx_tma_store_wait_group") return "tsl_tma_store_wait_group<" + imm(0) + ">()";
  if (name == "ptx_prefetch_tensor_map") return "tsl_prefetch_tensor_map(" + arg(0) + ")";
  if (name == "ptx_wgmma_desc") {
    int64_t swizzle = *AsConstInt(op->args[3]);
    int layout = swizzle == 0 ? 0 : swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
    return "tsl_wgmma_desc(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ", " +
           std::to_string(layout) + "u)";
  }
  if (name == "ptx_wgmma_mma_async" || name == "ptx_wgmma_mma_async_rs") {
    WgmmaForm w = Wgmma(op);
    std::string a = w.rs ? "(const uint32_t*)(" + arg(1) + ")" : arg(1);
    return w.Name() + "((float*)(" + arg(0) + "), " + a + ", " + arg(2) + ", (uint32_t)(" + arg(3) +
           "))";
  }
  CudaUnsupported("unsupported Hopper builtin " + name, fn);
}

std::string HopperPrelude(const IRModule& mod) {
  std::set<std::string> fixed;
  // Helpers whose text depends on the call's form (wgmma shape, TMA rank), by a key per form.
  std::map<std::string, std::string> shaped;
  for (const auto& kv : mod->functions) {
    PostOrderVisit(kv.second->body, [&](const ObjectRef& n) {
      const auto* call = n.as<CallNode>();
      if (call == nullptr) return;
      auto op = call->op.as<Op>();
      if (!op || !IsHopperBuiltin((*op)->name)) return;
      std::string name = (*op)->name;
      if (name == "ptx_mbarrier_wait") fixed.insert("ptx_mbarrier_try_wait");
      if (name == "ptx_tma_load" || name == "ptx_tma_store") {
        std::string error = CheckHopperCall(call);
        if (!error.empty()) CudaUnsupported(error, kv.first);
        bool load = name == "ptx_tma_load";
        int rank = static_cast<int>(call->args.size()) - (load ? 3 : 2);
        shaped.emplace(std::string(load ? "~tma_load" : "~tma_store") + std::to_string(rank),
                       TmaHelper(load, rank));
        return;
      }
      if (name == "ptx_mma") {
        std::string error = CheckHopperCall(call);
        if (!error.empty()) CudaUnsupported(error, kv.first);
        shaped.emplace(MmaName(call), MmaHelper(call));
        return;
      }
      if (name == "ptx_wgmma_mma_async" || name == "ptx_wgmma_mma_async_rs") {
        std::string error = CheckHopperCall(call);
        if (!error.empty()) CudaUnsupported(error, kv.first);
        WgmmaForm w = Wgmma(call);
        shaped.emplace(w.Name(), WgmmaHelper(w));
        return;
      }
      fixed.insert(name);
    });
  }
  bool maps = false;
  for (const auto& kv : mod->functions)
    maps = maps || kv.second->attrs.count(transform::kTensorMapsAttr);
  if (fixed.empty() && shaped.empty() && !maps) return "";
  std::string out = kBase;
  for (const std::string& name : fixed) out += Fixed().at(name);
  for (const auto& kv : shaped) out += kv.second;
  if (maps) out += kTensorMapType;
  return out + "\n";
}

}  // namespace codegen
}  // namespace tessel
