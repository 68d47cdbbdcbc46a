// The fiber scheduler of the MSL execution harness, driven by plain C++ thread bodies: the three
// orders, barrier release, SIMD-group rendezvous, divergence reports, errors raised by a thread.
#include "scheduler.h"

#include <gtest/gtest.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace tessel {
namespace metal_emu {
namespace {

TslEmuSite Site(const char* what, uint32_t line) { return TslEmuSite{what, line, "test"}; }

// A trace of (thread, phase) in execution order, around one barrier.
struct Trace {
  std::vector<std::pair<uint32_t, int>> events;
};

void TwoPhases(void* user, uint32_t t) {
  auto* trace = static_cast<Trace*>(user);
  trace->events.emplace_back(t, 0);
  Scheduler::Current()->ThreadgroupBarrier(Site("threadgroup_barrier", 1));
  trace->events.emplace_back(t, 1);
}

std::vector<uint32_t> Phase(const Trace& trace, int phase) {
  std::vector<uint32_t> out;
  for (const auto& [t, p] : trace.events)
    if (p == phase) out.push_back(t);
  return out;
}

TEST(MetalEmuScheduler, ForwardAndReverseOrders) {
  Scheduler s;
  for (Order order : {Order::kForward, Order::kReverse}) {
    Trace trace;
    s.SetOrder(order, 0);
    ASSERT_EQ(s.RunGroup(5, &TwoPhases, &trace), "");
    std::vector<uint32_t> expect = {0, 1, 2, 3, 4};
    if (order == Order::kReverse) expect = {4, 3, 2, 1, 0};
    // No thread passes the barrier before all reached it.
    ASSERT_EQ(trace.events.size(), 10u);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(trace.events[i].second, 0);
    EXPECT_EQ(Phase(trace, 0), expect);
    EXPECT_EQ(Phase(trace, 1), expect);
  }
  EXPECT_EQ(s.counters().threadgroup_barriers, 2u);
  EXPECT_EQ(s.counters().groups, 2u);
}

TEST(MetalEmuScheduler, RandomOrderIsSeededAndReshuffledAtEveryRendezvous) {
  auto run = [](uint64_t seed) {
    Scheduler s;
    s.SetOrder(Order::kRandom, seed);
    Trace trace;
    EXPECT_EQ(s.RunGroup(32, &TwoPhases, &trace), "");
    return std::make_pair(Phase(trace, 0), Phase(trace, 1));
  };
  auto a = run(1), b = run(1), c = run(2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a.first, a.second);
  std::vector<uint32_t> sorted = a.first;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(sorted[i], i);
}

void HalfBarrier(void*, uint32_t t) {
  if (t < 3) Scheduler::Current()->ThreadgroupBarrier(Site("threadgroup_barrier", 7));
}

TEST(MetalEmuScheduler, ThreadsThatFinishWhileOthersWaitAreDivergence) {
  Scheduler s;
  std::string error = s.RunGroup(8, &HalfBarrier, nullptr);
  EXPECT_EQ(
      error,
      "divergent threadgroup_barrier: threads [0-2] at threadgroup_barrier (line 7, in test); "
      "threads [3-7] finished");
}

void SplitBarrier(void*, uint32_t t) {
  Scheduler::Current()->ThreadgroupBarrier(Site("threadgroup_barrier", t % 2 ? 10 : 12));
}

TEST(MetalEmuScheduler, BarriersAtDifferentSitesAreDivergence) {
  Scheduler s;
  std::string error = s.RunGroup(4, &SplitBarrier, nullptr);
  EXPECT_EQ(
      error,
      "divergent threadgroup_barrier: threads [0, 2] at threadgroup_barrier (line 12, in test); "
      "threads [1, 3] at threadgroup_barrier (line 10, in test)");
}

// Each lane deposits its id + 100 and records what every lane sees.
struct Gathered {
  std::vector<std::vector<uint32_t>> seen;
  std::vector<uint32_t> active, lanes;
};

void Gather(void* user, uint32_t t) {
  auto* g = static_cast<Gathered*>(user);
  uint32_t value = t + 100, active = 0, lane = 0;
  if (t % 32 >= 30) return;  // two lanes of every SIMD group leave early
  const unsigned char* data =
      Scheduler::Current()->SimdGather(&value, sizeof(value), Site("simd_sum", 3), &active, &lane);
  std::vector<uint32_t> values(32);
  std::memcpy(values.data(), data, sizeof(uint32_t) * 32);
  g->seen[t] = values;
  g->active[t] = active;
  g->lanes[t] = lane;
}

TEST(MetalEmuScheduler, SimdGatherExchangesTheLiveLanesOfEachSimdGroup) {
  Scheduler s;
  Gathered g;
  g.seen.resize(40);
  g.active.resize(40);
  g.lanes.resize(40);
  ASSERT_EQ(s.RunGroup(40, &Gather, &g), "");
  EXPECT_EQ(s.counters().simd_rendezvous, 2u);
  // SIMD group 0: lanes 0..29 live; lanes 30, 31 finished and read as poison.
  EXPECT_EQ(g.active[5], 0x3fffffffu);
  EXPECT_EQ(g.lanes[5], 5u);
  EXPECT_EQ(g.seen[5][29], 129u);
  EXPECT_EQ(g.seen[5][30], 0xffffffffu);
  // SIMD group 1 is partial: threads 32..39 are lanes 0..7.
  EXPECT_EQ(g.active[33], 0xffu);
  EXPECT_EQ(g.lanes[33], 1u);
  EXPECT_EQ(g.seen[33][7], 139u);
  EXPECT_EQ(g.seen[33][8], 0xffffffffu);
}

void SimdThenBarrier(void*, uint32_t t) {
  uint32_t active, lane, v = t;
  if (t < 16) Scheduler::Current()->SimdGather(&v, 4, Site("simd_shuffle_xor", 4), &active, &lane);
  Scheduler::Current()->ThreadgroupBarrier(Site("threadgroup_barrier", 5));
}

TEST(MetalEmuScheduler, SimdOperationWhileOtherLanesWaitElsewhereIsDivergence) {
  Scheduler s;
  std::string error = s.RunGroup(32, &SimdThenBarrier, nullptr);
  EXPECT_EQ(
      error,
      "divergent simd_shuffle_xor in SIMD group 0: threads [0-15] at simd_shuffle_xor (line 4, "
      "in test); threads [16-31] at threadgroup_barrier (line 5, in test)");
}

void FailAtFive(void*, uint32_t t) {
  Scheduler::Current()->ThreadgroupBarrier(Site("threadgroup_barrier", 1));
  if (t == 5) Scheduler::Current()->Fail("lane index out of range");
}

TEST(MetalEmuScheduler, AThreadsErrorEndsTheGroupAndNamesTheThread) {
  Scheduler s;
  EXPECT_EQ(s.RunGroup(8, &FailAtFive, nullptr), "lane index out of range");
  EXPECT_EQ(s.failed_thread(), 5);
  // The scheduler is reusable afterwards, with another thread count.
  Trace trace;
  EXPECT_EQ(s.RunGroup(3, &TwoPhases, &trace), "");
  EXPECT_EQ(s.failed_thread(), -1);
  EXPECT_EQ(trace.events.size(), 6u);
}

TEST(MetalEmuScheduler, OrderNames) {
  EXPECT_EQ(ParseOrder("forward"), Order::kForward);
  EXPECT_EQ(ParseOrder("reverse"), Order::kReverse);
  EXPECT_EQ(ParseOrder("random"), Order::kRandom);
  EXPECT_STREQ(OrderName(Order::kRandom), "random");
  EXPECT_THROW(ParseOrder("sideways"), tvm::ffi::Error);
}

}  // namespace
}  // namespace metal_emu
}  // namespace tessel
