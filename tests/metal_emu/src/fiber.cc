#include "fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace tessel {
namespace metal_emu {

FiberStack::FiberStack(size_t bytes) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  guard_ = page;
  mapped_ = guard_ + (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<char*>(p);
  mprotect(base_, guard_, PROT_NONE);
}

FiberStack::~FiberStack() { munmap(base_, mapped_); }

#if defined(__x86_64__) && !defined(TESSEL_METAL_EMU_USE_UCONTEXT)

extern "C" {
// tessel_metal_emu_switch(void** save_sp, void* load_sp): pushes the callee-saved registers and
// the MXCSR / x87 control words, stores the stack pointer in *save_sp, loads load_sp and pops the
// same from there. tessel_metal_emu_start is where a new fiber's first switch returns to: it calls
// entry (r13) with arg (r12) on a 16-byte aligned stack.
void tessel_metal_emu_switch(void** save_sp, void* load_sp);
void tessel_metal_emu_start();
}

asm(R"(
  .text
  .p2align 4
  .globl tessel_metal_emu_switch
  .hidden tessel_metal_emu_switch
  .type tessel_metal_emu_switch, @function
tessel_metal_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr 8(%rsp)
  fnstcw (%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr 8(%rsp)
  fldcw (%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tessel_metal_emu_switch, .-tessel_metal_emu_switch

  .p2align 4
  .globl tessel_metal_emu_start
  .hidden tessel_metal_emu_start
  .type tessel_metal_emu_start, @function
tessel_metal_emu_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size tessel_metal_emu_start, .-tessel_metal_emu_start
)");

void FiberInit(FiberContext* ctx, const FiberStack& stack, void (*entry)(void*), void* arg) {
  // The frame tessel_metal_emu_switch pops: control words (16 bytes), r15 r14 r13 r12 rbx rbp,
  // then the return address. 88 bytes below a 16-byte aligned top leaves the stack 16-byte aligned
  // where tessel_metal_emu_start makes its call.
  auto top = reinterpret_cast<uintptr_t>(stack.top()) & ~uintptr_t{15};
  auto* frame = reinterpret_cast<uint64_t*>(top - 88);
  uint32_t mxcsr;
  uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  std::memset(frame, 0, 88);
  std::memcpy(reinterpret_cast<char*>(frame), &fpucw, sizeof(fpucw));
  std::memcpy(reinterpret_cast<char*>(frame) + 8, &mxcsr, sizeof(mxcsr));
  frame[2] = 0;                                  // r15
  frame[3] = 0;                                  // r14
  frame[4] = reinterpret_cast<uint64_t>(entry);  // r13
  frame[5] = reinterpret_cast<uint64_t>(arg);    // r12
  frame[6] = 0;                                  // rbx
  frame[7] = 0;                                  // rbp
  frame[8] = reinterpret_cast<uint64_t>(&tessel_metal_emu_start);
  ctx->sp = frame;
}

void FiberSwitch(FiberContext* from, FiberContext* to) {
  tessel_metal_emu_switch(&from->sp, to->sp);
}

#else

namespace {
// makecontext passes int arguments only: the pointers travel split in two.
void Trampoline(unsigned entry_hi, unsigned entry_lo, unsigned arg_hi, unsigned arg_lo) {
  auto entry = reinterpret_cast<void (*)(void*)>((uintptr_t{entry_hi} << 32) | entry_lo);
  auto arg = reinterpret_cast<void*>((uintptr_t{arg_hi} << 32) | arg_lo);
  entry(arg);
  std::abort();  // entry never returns
}
}  // namespace

void FiberInit(FiberContext* ctx, const FiberStack& stack, void (*entry)(void*), void* arg) {
  getcontext(&ctx->uc);
  ctx->uc.uc_stack.ss_sp = stack.bottom();
  ctx->uc.uc_stack.ss_size = stack.size();
  ctx->uc.uc_link = nullptr;
  auto e = reinterpret_cast<uintptr_t>(entry), a = reinterpret_cast<uintptr_t>(arg);
  makecontext(&ctx->uc, reinterpret_cast<void (*)()>(&Trampoline), 4,
              static_cast<unsigned>(uint64_t{e} >> 32), static_cast<unsigned>(e),
              static_cast<unsigned>(uint64_t{a} >> 32), static_cast<unsigned>(a));
}

void FiberSwitch(FiberContext* from, FiberContext* to) { swapcontext(&from->uc, &to->uc); }

#endif

}  // namespace metal_emu
}  // namespace tessel
