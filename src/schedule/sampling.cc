// Sampling primitives: integer RVs drawn from the schedule's seeded generator, each draw recorded
// as the instruction's decision, so that replaying a trace takes the same values and an autotuner
// can change a decision and replay.
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <cmath>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// splitmix64: a small generator whose whole state is one word in the schedule.
uint64_t Next(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Every ordered factorization of `extent` into `n` factors with the last at most `max_inner`
// (0: any); at most `limit` of them.
void Factorizations(int64_t extent, int64_t n, int64_t max_inner, size_t limit,
                    std::vector<int64_t>* prefix, std::vector<std::vector<int64_t>>* out) {
  if (out->size() >= limit) return;
  if (n == 1) {
    if (max_inner > 0 && extent > max_inner) return;
    prefix->push_back(extent);
    out->push_back(*prefix);
    prefix->pop_back();
    return;
  }
  for (int64_t d = 1; d <= extent; ++d) {
    if (extent % d != 0) continue;
    prefix->push_back(d);
    Factorizations(extent / d, n - 1, max_inner, limit, prefix, out);
    prefix->pop_back();
  }
}

Array<Any> Ints(const std::vector<int64_t>& v) {
  Array<Any> out;
  for (int64_t x : v) out.push_back(x);
  return out;
}

}  // namespace

Array<RV> ScheduleNode::SamplePerfectTile(const RV& loop, int64_t n, int64_t max_innermost_factor,
                                          const std::optional<std::vector<int64_t>>& decision) {
  Impl impl(this, "sample_perfect_tile");
  LoopSite site = impl.FindLoop(loop);
  PrimFunc f = impl.Func(rvs_[loop->id]);
  auto extent = AsConstInt(site.loop->extent);
  std::string mark = LoopMark(site.loop->loop_var);
  if (!extent || *extent < 1) {
    impl.Fail("the loop's extent " + AsText(site.loop->extent) + " is not a positive constant", f,
              mark);
  }
  if (n < 1) impl.Fail("n = " + std::to_string(n) + " is not positive", f, mark);
  std::vector<int64_t> chosen;
  if (decision) {
    chosen = *decision;
    int64_t product = 1;
    for (int64_t x : chosen) product *= x;
    if (static_cast<int64_t>(chosen.size()) != n || product != *extent ||
        (max_innermost_factor > 0 && chosen.back() > max_innermost_factor)) {
      std::string text;
      for (int64_t x : chosen) text += (text.empty() ? "" : ", ") + std::to_string(x);
      impl.Fail("the decision [" + text + "] is not " + std::to_string(n) + " factors of " +
                    std::to_string(*extent) + " with the innermost at most " +
                    std::to_string(max_innermost_factor),
                f, mark);
    }
  } else {
    std::vector<std::vector<int64_t>> all;
    std::vector<int64_t> prefix;
    Factorizations(*extent, n, max_innermost_factor, 1 << 16, &prefix, &all);
    if (all.empty()) {
      impl.Fail("no factorization of " + std::to_string(*extent) + " into " + std::to_string(n) +
                    " factors has its innermost at most " + std::to_string(max_innermost_factor),
                f, mark);
    }
    chosen = all[Next(&rng_state_) % all.size()];
  }
  Array<RV> out;
  std::vector<RV> outs;
  for (int64_t x : chosen) {
    RV v = impl.NewValue(x);
    out.push_back(v);
    outs.push_back(v);
  }
  impl.Record({loop, n, max_innermost_factor, Ints(chosen)}, outs);
  return out;
}

RV ScheduleNode::SampleCategorical(const std::vector<int64_t>& candidates,
                                   const std::vector<double>& probs,
                                   const std::optional<int64_t>& decision) {
  Impl impl(this, "sample_categorical");
  if (candidates.empty() || candidates.size() != probs.size()) {
    impl.Fail(std::to_string(candidates.size()) + " candidates and " +
                  std::to_string(probs.size()) + " probabilities (expected as many, at least one)",
              PrimFunc(), "");
  }
  double total = 0;
  for (double p : probs) {
    if (!(p >= 0) || std::isinf(p))
      impl.Fail("a probability is negative or not finite", PrimFunc(), "");
    total += p;
  }
  if (!(total > 0)) impl.Fail("the probabilities sum to 0", PrimFunc(), "");
  int64_t index = 0;
  if (decision) {
    if (*decision < 0 || *decision >= static_cast<int64_t>(candidates.size())) {
      impl.Fail("the decision " + std::to_string(*decision) + " is not an index of the " +
                    std::to_string(candidates.size()) + " candidates",
                PrimFunc(), "");
    }
    index = *decision;
  } else {
    double u = static_cast<double>(Next(&rng_state_) >> 11) * 0x1.0p-53 * total;
    index = static_cast<int64_t>(candidates.size()) - 1;
    for (size_t i = 0; i < probs.size(); ++i) {
      if (u < probs[i]) {
        index = static_cast<int64_t>(i);
        break;
      }
      u -= probs[i];
    }
  }
  RV v = impl.NewValue(candidates[index]);
  Array<Any> ps;
  for (double p : probs) ps.push_back(p);
  impl.Record({Ints(candidates), ps, index}, {v});
  return v;
}

int64_t ScheduleNode::Get(const RV& value) const {
  if (value->id < 0 || value->id >= static_cast<int64_t>(rvs_.size()) ||
      rvs_[value->id].kind != RVNode::kExpr) {
    TVM_FFI_THROW(ScheduleError) << "get: " << value->Name()
                                 << " is not an integer of this schedule";
  }
  return rvs_[value->id].value;
}

}  // namespace schedule
}  // namespace tessel
