// The nesting limit of the analyzer's recursive walks. Each walk (bounds, modular sets, interval
// sets, the constant pass, the rewrite and canonical simplifiers, the transitive folder, the Z3
// encoder) holds a DepthGuard per level it descends, and all of them count on one
// per-thread counter, so walks that call each other (a simplifier asking for a bound) share the
// limit: an expression nested deeper than kMaxExprDepth is a RecursionError naming the limit,
// never a stack overflow. The cost is an increment and a compare per node descended into (cache
// and memo hits and leaves skip it). AnyNode (expr_walk.h) is not counted: its ~50-byte frames
// reach past 100,000 levels, and it is always followed by a counted walk.
#ifndef TESSEL_SRC_ARITH_DEPTH_GUARD_H_
#define TESSEL_SRC_ARITH_DEPTH_GUARD_H_

namespace tessel {
namespace arith {

// The deepest walk measured (modular sets) needs about 1 KiB of stack per level: 5,000 levels take
// about 5.3 MiB of the usual 8 MiB main-thread stack.
inline constexpr int kMaxExprDepth = 5000;

namespace detail {
// The walks' nesting on this thread. initial-exec: a plain thread-pointer-relative access (the
// library is loaded at startup or by Python's dlopen, and one int fits the static TLS reserve).
extern thread_local int expr_depth __attribute__((tls_model("initial-exec")));
// Undoes the failed increment and throws the RecursionError.
[[noreturn]] void ThrowTooDeep();
}  // namespace detail

// One level of a recursive walk: `DepthGuard level;` first thing in each recursive entry point.
class DepthGuard {
 public:
  DepthGuard() {
    if (++detail::expr_depth > kMaxExprDepth) detail::ThrowTooDeep();
  }
  ~DepthGuard() { --detail::expr_depth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_DEPTH_GUARD_H_
