// SplitHostDevice: every GPU kernel becomes a device function of its own. Afterwards each
// outermost `thread_extent` attribute region of a function is replaced, in the host function, by
// `T.evaluate(T.launch_kernel("<name>", gx, gy, gz, bx, by, bz, dyn_shared_bytes, args...))`, and
// the module holds a device PrimFunc `<name>` whose body is that region:
//
// - name: `<symbol>_kernel` for a function's first kernel, `<symbol>_kernel_1`, ... for the next
//   ones (symbol: the host's global_symbol, else its module key); a clash with an existing
//   function is a ValueError;
// - params: the data variables of the buffers it uses, in the host's parameter order (a param
//   with a buffer_map buffer stands for that buffer's data), then every other variable it uses
//   from the host (sizes, scalars, let-bound values), sorted by name. The host passes the very same
//   variables as launch arguments, and the device function uses the same Var objects;
// - every buffer it uses that was declared outside the region is declared again (DeclBuffer) at
//   the top of the region's body, so accesses go through the kernel's data parameters. An
//   allocation made outside the region in a "shared", "shared.dyn", "local" or "warp" scope, used
//   by this kernel only, moves into it (an Allocate block's root alloc_buffers leave there);
//   anything else allocated outside and used inside is a ValueError;
// - attrs: "global_symbol" (its name), "tessel.device_kernel": True, "tessel.launch_dims": [gx, gy,
//   gz, bx, by, bz] (the thread_extent values per axis: blockIdx.x/y/z, threadIdx.x/y/z; 1 where
//   unbound; an axis bound twice with extents not provably equal, or an extent that uses a
//   variable bound inside the kernel, is a ValueError), "tessel.dyn_shared_bytes" (the total of
//   DynamicSharedLayout, 0 when none), "tessel.use_pdl" (it calls pdl_sync or pdl_trigger),
//   "tessel.use_grid_sync" (it calls grid_sync), "tessel.cluster_dims" copied from the host
//   function when present, and "tessel.tensor_maps" (see KernelTensorMaps) when it has any;
// - tensor maps: every `tma_descriptor(...)` call the region uses, written inline or bound on the
//   host by a LetStmt outside the region, becomes one kernel parameter (a handle, deduplicated by
//   structural equality) and the launch passes the call itself, which the host evaluates at
//   launch. Its operands must be host values (a variable bound in the kernel is a ValueError), and
//   a LetStmt-bound map used on the host outside a kernel is a ValueError; such LetStmts leave the
//   host.
// Each thread_extent variable names its axis (see ThreadTagOf). Functions without thread_extent
// attributes are unchanged; a module without any is returned as is (the very input object).
#ifndef TESSEL_TRANSFORM_SPLIT_HOST_DEVICE_H_
#define TESSEL_TRANSFORM_SPLIT_HOST_DEVICE_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

#include <string>
#include <vector>

namespace tessel {
namespace transform {

ir::IRModule SplitHostDevice(const ir::IRModule& mod);

inline constexpr const char* kTensorMapsAttr = "tessel.tensor_maps";

// A kernel parameter that is a TMA tensor map (include/tessel/ir/builtin_hopper.h).
struct KernelTensorMap {
  size_t param = 0;  // index in the kernel's params
  ir::DataType dtype;
  int64_t swizzle = 0;
  std::vector<int64_t> box;  // outermost first
  std::string tensor;        // the name of the tensor's address variable
};

// The tensor-map parameters of a device kernel (its "tessel.tensor_maps" attribute), by increasing
// param index; empty when it has none.
std::vector<KernelTensorMap> KernelTensorMaps(const ir::PrimFunc& kernel);
Pass SplitHostDevicePass();

// One allocation in a kernel's dynamic shared memory.
struct DynamicSharedAllocation {
  // The Allocate's buffer variable.
  ir::Var buffer_var;
  // Byte offset in the dynamic shared memory (a multiple of 16).
  ir::PrimExpr offset;
  // Size in bytes (extent * element bytes).
  ir::PrimExpr bytes;
};

struct DynamicSharedLayoutInfo {
  // In the order the allocations appear in the kernel body.
  std::vector<DynamicSharedAllocation> allocations;
  // The bytes to launch with: the end of the last allocation rounded up to 16 (int32 0 if none).
  ir::PrimExpr total_bytes;
};

// Whether `alloc` lives in dynamic shared memory: its buffer variable's scope is "shared.dyn", or
// "shared" with an extent that is not a constant.
bool IsDynamicSharedAllocation(const ir::AllocateNode* alloc);

// The dynamic shared memory layout of a device function: allocations packed one after the other,
// each at a 16-byte aligned offset, no reuse. Offsets and sizes are simplified PrimExprs over the
// function's parameters; a size that uses any other variable is a ValueError.
DynamicSharedLayoutInfo DynamicSharedLayout(const ir::PrimFunc& device_func);

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_SPLIT_HOST_DEVICE_H_
