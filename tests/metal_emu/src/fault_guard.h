// Turns a hardware fault of emulated kernel code into an error instead of the death of the
// process (the pytest process included): while RunGuarded runs on a host thread, SIGSEGV, SIGBUS
// and SIGFPE raised by that thread jump back to RunGuarded (siglongjmp), which reports what
// faulted where. The handler runs on an alternate signal stack, so a fiber's stack overflow is
// caught too. Faults of other threads, or outside RunGuarded, go to the handler that was there
// before.
//
// What was running is abandoned where it stood: fn must own nothing that needs a destructor
// between its frame and the fault (the scheduler's fibers qualify: their state lives in the
// Scheduler object).
#ifndef TESSEL_METAL_EMU_FAULT_GUARD_H_
#define TESSEL_METAL_EMU_FAULT_GUARD_H_

#include <cstdint>

namespace tessel {
namespace metal_emu {

struct FaultInfo {
  int signal = 0;
  int code = 0;                   // si_code
  const void* address = nullptr;  // the faulting data address (SIGSEGV / SIGBUS)
  const void* pc = nullptr;       // the faulting instruction
  int access = -1;                // 0 read, 1 write, -1 unknown
};

// Runs fn(arg). Returns true when it returned, false (and *fault) when it faulted.
bool RunGuarded(void (*fn)(void*), void* arg, FaultInfo* fault);

}  // namespace metal_emu
}  // namespace tessel

#endif  // TESSEL_METAL_EMU_FAULT_GUARD_H_
