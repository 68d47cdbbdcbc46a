// The emulator as a tessel::runtime::MetalExecutor: Encode runs the whole dispatch synchronously
// on the calling thread, in the thread order of the last Install; DefaultContext is a static
// context ("emulator.default") that lends a fake command buffer.
#ifndef TESSEL_METAL_EMU_EXECUTOR_H_
#define TESSEL_METAL_EMU_EXECUTOR_H_

#include <tessel/runtime/metal_module.h>

#include <cstdint>

#include "emulator.h"
#include "scheduler.h"

namespace tessel {
namespace metal_emu {

// The process's one emulator executor (not installed by this call).
runtime::MetalExecutor* EmulatorExecutor();

// Installs the emulator as tessel's Metal executor with this thread order; Uninstall restores
// whatever the matching Install replaced. Nested pairs work like a stack.
void Install(Order order, uint64_t seed);
void Uninstall();

// The emulated launch of `plan` (buffers at their host addresses plus offsets).
EmuLaunch LaunchFromPlan(const runtime::MetalLaunchPlan& plan);

}  // namespace metal_emu
}  // namespace tessel

#endif  // TESSEL_METAL_EMU_EXECUTOR_H_
