// Fibers for the emulated threads of a threadgroup: a stack each and a context switch. On x86-64
// the switch saves the callee-saved registers and the floating-point control words on the stack
// and swaps stack pointers (no system call, unlike swapcontext, which also saves the signal mask);
// elsewhere (or with TESSEL_METAL_EMU_USE_UCONTEXT defined) it is ucontext.
#ifndef TESSEL_METAL_EMU_FIBER_H_
#define TESSEL_METAL_EMU_FIBER_H_

#include <cstddef>
#include <cstdint>

#if !defined(__x86_64__) || defined(TESSEL_METAL_EMU_USE_UCONTEXT)
#include <ucontext.h>
#endif

namespace tessel {
namespace metal_emu {

// A fiber's stack: mmap'd, with a PROT_NONE guard page below it so that an overflow faults (the
// fault guard names it) instead of writing into the neighbouring stack.
class FiberStack {
 public:
  explicit FiberStack(size_t bytes);
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  char* bottom() const { return base_ + guard_; }
  char* top() const { return base_ + mapped_; }
  size_t size() const { return mapped_ - guard_; }
  // Whether `addr` lies in the guard page.
  bool InGuard(const void* addr) const {
    auto a = reinterpret_cast<uintptr_t>(addr), b = reinterpret_cast<uintptr_t>(base_);
    return a >= b && a < b + guard_;
  }

 private:
  char* base_ = nullptr;
  size_t mapped_ = 0;
  size_t guard_ = 0;
};

// A suspended execution context.
struct FiberContext {
#if defined(__x86_64__) && !defined(TESSEL_METAL_EMU_USE_UCONTEXT)
  void* sp = nullptr;
#else
  ucontext_t uc;
#endif
};

// Prepares `ctx` so that the next switch into it runs entry(arg) on `stack`. entry must never
// return: it ends by switching away for good.
void FiberInit(FiberContext* ctx, const FiberStack& stack, void (*entry)(void*), void* arg);

// Saves the running context into *from and resumes *to.
void FiberSwitch(FiberContext* from, FiberContext* to);

}  // namespace metal_emu
}  // namespace tessel

#endif  // TESSEL_METAL_EMU_FIBER_H_
