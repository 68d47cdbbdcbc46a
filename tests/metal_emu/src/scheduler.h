// Runs the threads of one threadgroup as cooperatively scheduled fibers that meet at
// rendezvous: threadgroup barriers (the whole group) and SIMD-group operations (the 32 threads of
// consecutive linear ids that form a SIMD group; the last one may be partial).
//
// A round runs every runnable thread, in the chosen order, until it waits at a rendezvous or
// finishes. When none is runnable, the rendezvous are resolved: a SIMD group whose running
// threads all wait at one SIMD site is released (threads that finished take no part); otherwise,
// when no SIMD operation is pending, a threadgroup barrier at which every thread of the group waits
// at one site is released. Anything else is divergence, reported with where each thread is. The
// orders: forward (linear id ascending), reverse, random (seeded, reshuffled every round).
//
// Not thread-safe; one Scheduler per host thread. Errors never cross a fiber boundary as C++
// exceptions: a fiber records the error and switches back, and RunGroup returns the message.
#ifndef TESSEL_METAL_EMU_SCHEDULER_H_
#define TESSEL_METAL_EMU_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fiber.h"
#include "metal_emu/abi.h"

namespace tessel {
namespace metal_emu {

enum class Order { kForward, kReverse, kRandom };
// "forward", "reverse", "random"; ValueError otherwise.
Order ParseOrder(const std::string& name);
const char* OrderName(Order order);

struct SchedulerCounters {
  uint64_t groups = 0;
  uint64_t threadgroup_barriers = 0;  // barriers released
  uint64_t simd_rendezvous = 0;       // SIMD-group rendezvous released
};

class Scheduler {
 public:
  // The body each thread runs; `thread` is its linear id in the group.
  using Body = void (*)(void* user, uint32_t thread);

  explicit Scheduler(size_t stack_bytes = 256 * 1024);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // The order of the following groups; the random order's generator restarts from `seed`.
  void SetOrder(Order order, uint64_t seed);

  // Runs body(user, t) for t in [0, threads) to completion. Returns "" or what went wrong
  // (divergence, or an error a thread raised through Fail). Threads are named by linear id; the
  // caller adds the kernel and group.
  std::string RunGroup(uint32_t threads, Body body, void* user);

  // ---- called from inside a running thread ----
  void ThreadgroupBarrier(const TslEmuSite& site);
  const unsigned char* SimdGather(const void* value, uint32_t size, const TslEmuSite& site,
                                  uint32_t* active, uint32_t* lane);
  [[noreturn]] void Fail(std::string message);

  // The scheduler whose group is running on this host thread (NULL outside RunGroup).
  static Scheduler* Current();
  // The linear id of the thread running now, or -1 when none (the scheduler itself runs).
  int64_t running_thread() const { return current_; }
  // The thread whose Fail ended the last group, or -1 (divergence names no single thread).
  int64_t failed_thread() const { return failed_thread_; }
  // Whether `addr` is in the guard page of a fiber stack (a stack overflow).
  bool InStackGuard(const void* addr) const;
  // Forgets the group that a fault interrupted (its fibers are abandoned where they stood).
  void AbandonGroup();

  const SchedulerCounters& counters() const { return counters_; }

 private:
  enum class State : uint8_t { kRunnable, kAtBarrier, kAtSimd, kDone, kFailed };
  struct Thread {
    FiberContext context;
    State state = State::kRunnable;
    TslEmuSite site{nullptr, 0, nullptr};
    const unsigned char* result = nullptr;
    uint32_t result_active = 0;
  };
  struct SimdGroup {
    uint32_t generation = 0;            // rendezvous released so far
    std::vector<unsigned char> buffer;  // two generations x 32 lanes x the largest value
  };

  static void Entry(void* arg);
  void Suspend(State state, const TslEmuSite& site);
  void RunRound();
  // Releases every SIMD group whose rendezvous is complete; false when none was pending.
  bool ResolveSimd();
  // Releases the group barrier, or records the divergence.
  void ResolveBarrier();
  std::string Describe(uint32_t begin, uint32_t end) const;
  void MakeOrder();
  uint64_t Random();

  size_t stack_bytes_;
  std::vector<std::unique_ptr<FiberStack>> stacks_;
  std::vector<Thread> threads_;
  std::vector<SimdGroup> simd_;
  std::vector<uint32_t> order_;
  FiberContext main_;
  Body body_ = nullptr;
  void* user_ = nullptr;
  uint32_t count_ = 0;
  int64_t current_ = -1;
  int64_t failed_thread_ = -1;
  bool failed_ = false;
  std::string error_;
  Order order_kind_ = Order::kForward;
  uint64_t rng_ = 0;
  Scheduler* previous_ = nullptr;
  SchedulerCounters counters_;
};

}  // namespace metal_emu
}  // namespace tessel

#endif  // TESSEL_METAL_EMU_SCHEDULER_H_
