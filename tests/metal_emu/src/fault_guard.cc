#include "fault_guard.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cstdlib>
#include <mutex>

namespace tessel {
namespace metal_emu {

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE};
constexpr size_t kAltStackBytes = 64 * 1024;

struct GuardState {
  sigjmp_buf env;
  volatile sig_atomic_t armed = 0;
  FaultInfo info;
};

thread_local GuardState* tls_guard = nullptr;

// The handlers are process-wide; installed while at least one thread runs guarded.
std::mutex install_mu;
int install_count = 0;
struct sigaction previous[3];

int SignalSlot(int sig) { return sig == SIGSEGV ? 0 : sig == SIGBUS ? 1 : 2; }

void Handler(int sig, siginfo_t* si, void* uc) {
  GuardState* g = tls_guard;
  if (g != nullptr && g->armed) {
    g->armed = 0;
    g->info.signal = sig;
    g->info.code = si->si_code;
    g->info.address = si->si_addr;
#if defined(__x86_64__)
    auto* ctx = static_cast<ucontext_t*>(uc);
    g->info.pc = reinterpret_cast<const void*>(ctx->uc_mcontext.gregs[REG_RIP]);
    // Page-fault error code: bit 1 set for a write.
    if (sig == SIGSEGV) g->info.access = (ctx->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#endif
    siglongjmp(g->env, 1);
  }
  // Not ours: give the signal back to whoever had it. A synchronous fault repeats when this
  // handler returns, now reaching the previous handler; a sent signal is raised again.
  sigaction(sig, &previous[SignalSlot(sig)], nullptr);
  if (si->si_code <= 0) raise(sig);
}

void Install() {
  std::lock_guard<std::mutex> lock(install_mu);
  if (install_count++ > 0) return;
  struct sigaction sa {};
  sa.sa_sigaction = &Handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (int sig : kSignals) sigaction(sig, &sa, &previous[SignalSlot(sig)]);
}

void Uninstall() {
  std::lock_guard<std::mutex> lock(install_mu);
  if (--install_count > 0) return;
  for (int sig : kSignals) sigaction(sig, &previous[SignalSlot(sig)], nullptr);
}

// An alternate signal stack for the calling thread unless it has one (Python's faulthandler sets
// one on the main thread); restored on destruction.
class AltStack {
 public:
  AltStack() {
    stack_t current{};
    sigaltstack(nullptr, &current);
    if (!(current.ss_flags & SS_DISABLE)) return;
    memory_ =
        mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory_ == MAP_FAILED) {
      memory_ = nullptr;
      return;
    }
    stack_t ours{};
    ours.ss_sp = memory_;
    ours.ss_size = kAltStackBytes;
    sigaltstack(&ours, &old_);
  }
  ~AltStack() {
    if (memory_ == nullptr) return;
    sigaltstack(&old_, nullptr);
    munmap(memory_, kAltStackBytes);
  }

 private:
  void* memory_ = nullptr;
  stack_t old_{};
};

// The frame that sigsetjmp saves: nothing here may need a destructor after the jump.
__attribute__((noinline)) bool Guarded(GuardState* g, void (*fn)(void*), void* arg) {
  if (sigsetjmp(g->env, 1) != 0) return false;
  g->armed = 1;
  fn(arg);
  g->armed = 0;
  return true;
}

}  // namespace

bool RunGuarded(void (*fn)(void*), void* arg, FaultInfo* fault) {
  GuardState state;
  GuardState* outer = tls_guard;
  tls_guard = &state;
  Install();
  bool ok;
  {
    AltStack alt;
    ok = Guarded(&state, fn, arg);
  }
  Uninstall();
  tls_guard = outer;
  if (!ok) *fault = state.info;
  return ok;
}

}  // namespace metal_emu
}  // namespace tessel
