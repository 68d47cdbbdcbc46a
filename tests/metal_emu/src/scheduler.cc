#include "scheduler.h"

#include <tvm/ffi/error.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

namespace tessel {
namespace metal_emu {

namespace {

constexpr uint32_t kWidth = TESSEL_METAL_EMU_SIMD_WIDTH;
constexpr uint32_t kBlock = kWidth * TESSEL_METAL_EMU_MAX_SIMD_BYTES;  // one generation's values

thread_local Scheduler* tls_current = nullptr;

bool SameSite(const TslEmuSite& a, const TslEmuSite& b) {
  return a.line == b.line && std::strcmp(a.what, b.what) == 0 &&
         std::strcmp(a.function, b.function) == 0;
}

std::string SiteText(const TslEmuSite& s) {
  std::ostringstream os;
  os << s.what << " (line " << s.line << ", in " << s.function << ")";
  return os.str();
}

}  // namespace

Order ParseOrder(const std::string& name) {
  if (name == "forward") return Order::kForward;
  if (name == "reverse") return Order::kReverse;
  if (name == "random") return Order::kRandom;
  TVM_FFI_THROW(ValueError) << "metal_emu: unknown thread order '" << name
                            << "' (forward, reverse or random)";
}

const char* OrderName(Order order) {
  switch (order) {
    case Order::kForward:
      return "forward";
    case Order::kReverse:
      return "reverse";
    case Order::kRandom:
      return "random";
  }
  return "?";
}

Scheduler::Scheduler(size_t stack_bytes) : stack_bytes_(stack_bytes) {}
Scheduler::~Scheduler() = default;

Scheduler* Scheduler::Current() { return tls_current; }

void Scheduler::SetOrder(Order order, uint64_t seed) {
  order_kind_ = order;
  rng_ = seed;
}

// splitmix64: a fixed generator, so that a seed means the same order on every platform.
uint64_t Scheduler::Random() {
  uint64_t z = (rng_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void Scheduler::MakeOrder() {
  order_.clear();
  for (uint32_t t = 0; t < count_; ++t)
    if (threads_[t].state == State::kRunnable) order_.push_back(t);
  if (order_kind_ == Order::kReverse) {
    std::reverse(order_.begin(), order_.end());
  } else if (order_kind_ == Order::kRandom) {
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[Random() % i]);
  }
}

// Where each fiber starts. The thread's index is its position in threads_.
void Scheduler::Entry(void* arg) {
  Scheduler* self = tls_current;
  auto t = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(arg));
  self->body_(self->user_, t);
  Thread& th = self->threads_[t];
  th.state = State::kDone;
  FiberSwitch(&th.context, &self->main_);
  std::abort();  // a finished fiber is never resumed
}

std::string Scheduler::RunGroup(uint32_t threads, Body body, void* user) {
  while (stacks_.size() < threads) stacks_.push_back(std::make_unique<FiberStack>(stack_bytes_));
  if (threads_.size() < threads) threads_.resize(threads);
  uint32_t simd_groups = (threads + kWidth - 1) / kWidth;
  if (simd_.size() < simd_groups) simd_.resize(simd_groups);
  for (uint32_t s = 0; s < simd_groups; ++s) {
    simd_[s].generation = 0;
    simd_[s].buffer.assign(2 * kBlock, 0xFF);
  }
  count_ = threads;
  body_ = body;
  user_ = user;
  failed_ = false;
  failed_thread_ = -1;
  error_.clear();
  for (uint32_t t = 0; t < threads; ++t) {
    Thread& th = threads_[t];
    th.state = State::kRunnable;
    th.result = nullptr;
    FiberInit(&th.context, *stacks_[t], &Scheduler::Entry, reinterpret_cast<void*>(uintptr_t{t}));
  }
  previous_ = tls_current;
  tls_current = this;
  while (true) {
    RunRound();
    if (failed_) break;
    if (ResolveSimd()) continue;
    if (failed_) break;
    bool all_done = true;
    for (uint32_t t = 0; t < count_ && all_done; ++t) all_done = threads_[t].state == State::kDone;
    if (all_done) break;
    ResolveBarrier();
    if (failed_) break;
  }
  tls_current = previous_;
  ++counters_.groups;
  return failed_ ? error_ : std::string();
}

void Scheduler::AbandonGroup() {
  tls_current = previous_;
  current_ = -1;
  ++counters_.groups;
}

void Scheduler::RunRound() {
  MakeOrder();
  for (uint32_t t : order_) {
    if (threads_[t].state != State::kRunnable) continue;
    current_ = t;
    FiberSwitch(&main_, &threads_[t].context);
    current_ = -1;
    if (failed_) return;
  }
}

void Scheduler::Suspend(State state, const TslEmuSite& site) {
  Thread& th = threads_[current_];
  th.state = state;
  th.site = site;
  FiberSwitch(&th.context, &main_);
}

void Scheduler::ThreadgroupBarrier(const TslEmuSite& site) { Suspend(State::kAtBarrier, site); }

const unsigned char* Scheduler::SimdGather(const void* value, uint32_t size, const TslEmuSite& site,
                                           uint32_t* active, uint32_t* lane) {
  auto t = static_cast<uint32_t>(current_);
  SimdGroup& g = simd_[t / kWidth];
  uint32_t l = t % kWidth;
  if (size > TESSEL_METAL_EMU_MAX_SIMD_BYTES) Fail("a simd operand is larger than 64 bytes");
  if (size > 0) std::memcpy(g.buffer.data() + (g.generation & 1) * kBlock + l * size, value, size);
  Suspend(State::kAtSimd, site);
  Thread& th = threads_[t];
  *active = th.result_active;
  *lane = l;
  return th.result;
}

void Scheduler::Fail(std::string message) {
  if (current_ < 0) std::abort();  // only kernel code calls Fail, always on a fiber
  failed_ = true;
  failed_thread_ = current_;
  error_ = std::move(message);
  Thread& th = threads_[current_];
  th.state = State::kFailed;
  FiberSwitch(&th.context, &main_);
  std::abort();  // a failed fiber is never resumed
}

bool Scheduler::ResolveSimd() {
  bool progress = false;
  for (uint32_t s = 0; s * kWidth < count_; ++s) {
    uint32_t begin = s * kWidth, end = std::min(begin + kWidth, count_);
    int64_t first = -1;
    for (uint32_t t = begin; t < end && first < 0; ++t)
      if (threads_[t].state == State::kAtSimd) first = t;
    if (first < 0) continue;
    const TslEmuSite& site = threads_[first].site;
    uint32_t active = 0;
    bool together = true;
    for (uint32_t t = begin; t < end; ++t) {
      const Thread& th = threads_[t];
      if (th.state == State::kDone) continue;
      if (th.state != State::kAtSimd || !SameSite(th.site, site)) together = false;
      active |= 1u << (t - begin);
    }
    if (!together) {
      std::ostringstream os;
      os << "divergent " << site.what << " in SIMD group " << s << ": " << Describe(begin, end);
      failed_ = true;
      error_ = os.str();
      return false;
    }
    SimdGroup& g = simd_[s];
    const unsigned char* result = g.buffer.data() + (g.generation & 1) * kBlock;
    for (uint32_t t = begin; t < end; ++t) {
      Thread& th = threads_[t];
      if (th.state != State::kAtSimd) continue;
      th.state = State::kRunnable;
      th.result = result;
      th.result_active = active;
    }
    ++g.generation;
    // The block the next rendezvous fills held the previous one's values, which every lane has
    // read by now (all of them took part in this one).
    std::memset(g.buffer.data() + (g.generation & 1) * kBlock, 0xFF, kBlock);
    ++counters_.simd_rendezvous;
    progress = true;
  }
  return progress;
}

void Scheduler::ResolveBarrier() {
  int64_t first = -1;
  bool together = true;
  for (uint32_t t = 0; t < count_; ++t) {
    const Thread& th = threads_[t];
    if (th.state == State::kAtBarrier) {
      if (first < 0) {
        first = t;
      } else if (!SameSite(th.site, threads_[first].site)) {
        together = false;
      }
    } else {
      together = false;  // finished while others wait
    }
  }
  if (!together) {
    failed_ = true;
    error_ = "divergent threadgroup_barrier: " + Describe(0, count_);
    return;
  }
  for (uint32_t t = 0; t < count_; ++t) threads_[t].state = State::kRunnable;
  ++counters_.threadgroup_barriers;
}

// "threads 0-15, 32 at threadgroup_barrier (line 12, in k); threads 16-31 finished".
std::string Scheduler::Describe(uint32_t begin, uint32_t end) const {
  std::vector<std::pair<std::string, std::string>> groups;  // where -> id ranges
  for (uint32_t t = begin; t < end;) {
    const Thread& th = threads_[t];
    std::string where;
    switch (th.state) {
      case State::kDone:
        where = "finished";
        break;
      case State::kAtBarrier:
      case State::kAtSimd:
        where = "at " + SiteText(th.site);
        break;
      default:
        where = "running";
        break;
    }
    uint32_t u = t + 1;
    while (u < end && threads_[u].state == th.state &&
           ((th.state != State::kAtBarrier && th.state != State::kAtSimd) ||
            SameSite(threads_[u].site, th.site)))
      ++u;
    std::string range =
        u - t == 1 ? std::to_string(t) : std::to_string(t) + "-" + std::to_string(u - 1);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == where; });
    if (it == groups.end()) {
      groups.emplace_back(where, range);
    } else {
      it->second += ", " + range;
    }
    t = u;
  }
  std::string out;
  for (const auto& [where, ranges] : groups) {
    if (!out.empty()) out += "; ";
    out += "threads [" + ranges + "] " + where;
  }
  return out;
}

bool Scheduler::InStackGuard(const void* addr) const {
  for (const auto& s : stacks_)
    if (s->InGuard(addr)) return true;
  return false;
}

}  // namespace metal_emu
}  // namespace tessel
