// One emulated dispatch: compiles (or finds) the kernel, checks the launch against the kernel's
// signature and Metal's limits, then runs the threadgroups one after another in grid order on
// the calling thread, each group's threads as fibers (scheduler.h) over freshly poisoned,
// guarded threadgroup memory (threadgroup_memory.h), with hardware faults turned into errors
// (fault_guard.h). Every error is a RuntimeError naming the kernel, and where it can the
// threadgroup and thread.
#ifndef TESSEL_METAL_EMU_EMULATOR_H_
#define TESSEL_METAL_EMU_EMULATOR_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler.h"

namespace tessel {
namespace metal_emu {

// What a module's kernel table says about a kernel (include/tessel/runtime/metal_module.h), checked
// against its MSL: a disagreement is a code generation bug that a GPU shows as garbage or as a
// validation error, so it is an error here.
struct EmuKernelTable {
  std::vector<uint32_t> buffer_slots;  // [[buffer(i)]] of each buffer parameter
  std::vector<std::pair<uint32_t, uint32_t>>
      scalars;  // (byte offset, bytes) in the argument struct
  uint32_t args_index = 0;
  uint32_t args_bytes = 0;  // 0: no argument struct
  uint32_t threadgroup_static_bytes = 0;
  bool threadgroup_dynamic = false;
  uint32_t max_threads = 0;
};

struct EmuLaunch {
  const std::string* source = nullptr;  // MSL
  std::string kernel;
  std::array<uint32_t, 3> grid = {1, 1, 1};   // threadgroups
  std::array<uint32_t, 3> group = {1, 1, 1};  // threads per threadgroup
  uint32_t dynamic_threadgroup_bytes = 0;
  std::vector<std::pair<uint32_t, void*>> buffers;  // [[buffer(index)]] -> host address
  std::vector<uint8_t> arg_bytes;                   // the argument struct
  // [[buffer(i)]] of the argument struct; -1: the kernel's constant reference parameter that no
  // buffer binds.
  int64_t args_index = -1;
  Order order = Order::kForward;
  uint64_t seed = 0;
  std::optional<EmuKernelTable> table;  // checked when present
  std::string msl_version;              // the language version asked for ("" = any)
};

void RunKernel(const EmuLaunch& launch);

// Process-wide counters, so tests can prove that kernels really ran.
struct EmuStats {
  int64_t launches = 0;
  int64_t groups = 0;
  int64_t threads = 0;
  int64_t threadgroup_barriers = 0;
  int64_t simd_rendezvous = 0;
  int64_t compiles = 0;
  int64_t cache_hits = 0;
  int64_t errors = 0;
};
EmuStats GetStats();

}  // namespace metal_emu
}  // namespace tessel

#endif  // TESSEL_METAL_EMU_EMULATOR_H_
