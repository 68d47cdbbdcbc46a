// Registration of the Hopper (sm_90/sm_90a) PTX builtins. Their meaning, operand by operand, is in
// include/tessel/ir/builtin_hopper.h; the CUDA generator emits each as inline PTX
// (src/codegen/cuda/cuda_hopper.cc). All order memory or talk to asynchronous units, so none may
// be moved, merged or dropped: they are opaque.
#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/op.h>

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
TESSEL_REGISTER_OP("ptx_cp_async").NumInputs(3).Effect(K::kOpaque);
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

bool IsHopperBuiltin(const std::string& name) {
  return name.rfind("ptx_mbarrier_", 0) == 0 || name.rfind("ptx_fence_", 0) == 0 ||
         name.rfind("ptx_cp_async", 0) == 0 || name.rfind("ptx_named_barrier_", 0) == 0 ||
         name.rfind("ptx_setmaxnreg_", 0) == 0 || name == "ptx_elect_one_sync" ||
         name.rfind("ptx_wgmma_", 0) == 0;
}

int MinSmVersion(const std::string& name) {
  if (name.rfind("ptx_cp_async", 0) == 0) return 80;
  if (name.rfind("ptx_named_barrier_", 0) == 0) return 0;
  return 90;
}

bool NeedsSm90a(const std::string& name) {
  return name.rfind("ptx_wgmma_", 0) == 0 || name.rfind("ptx_setmaxnreg_", 0) == 0;
}

}  // namespace ir
}  // namespace tessel
