// The schedule's C++ face: primitives on a parsed block program, the ScheduleError kind and
// message, and the JSON trace replayed to a structurally equal module.
#include <gtest/gtest.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/schedule/schedule.h>
#include <tvm/ffi/extra/structural_equal.h>

#include "../ir/expect_error.h"

namespace tessel {
namespace schedule {
namespace {

using testing::ExpectError;

const char* kMatmul = R"PY(
@T.prim_func
def matmul(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
           C: T.Buffer((32, 32), "float32")):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)PY";

TEST(Schedule, SplitFuseReorderAndReplay) {
  ir::IRModule mod = ir::ParseModule(kMatmul);
  Schedule sch(mod);
  RV block = sch.mut()->GetBlock("C");
  Array<RV> loops = sch.mut()->GetLoops(block);
  ASSERT_EQ(loops.size(), 3u);
  Array<RV> parts = sch.mut()->Split(loops[0], Array<Any>{nullptr, int64_t{8}});
  ASSERT_EQ(parts.size(), 2u);
  sch.mut()->Reorder(Array<RV>{parts[0], loops[1], parts[1]});
  RV fused = sch.mut()->Fuse(Array<RV>{parts[0], loops[1]});
  sch.mut()->Parallel(fused);
  std::string text = ir::AsText(sch->mod());
  EXPECT_NE(text.find("for i_0_j_fused in T.parallel(128):"), std::string::npos) << text;
  EXPECT_EQ(sch->trace().size(), 6u);

  Schedule again = Schedule::FromJSON(mod, sch->TraceAsJSON());
  EXPECT_TRUE(tvm::ffi::StructuralEqual()(again->mod(), sch->mod()));
  EXPECT_EQ(again->TraceAsPython(), sch->TraceAsPython());
}

TEST(Schedule, ErrorsAreScheduleErrorsWithTheFunction) {
  Schedule sch(ir::ParseModule(kMatmul));
  Array<RV> loops = sch.mut()->GetLoops(sch.mut()->GetBlock("C"));
  ExpectError(
      [&] { sch.mut()->Vectorize(loops[2]); }, "ScheduleError",
      {"vectorize: the loop k feeds the reduce iterator vk", "for k in range(32):", "^^^^"});
  ExpectError([&] { sch.mut()->GetBlock("missing"); }, "ScheduleError",
              {"get_block: no block named \"missing\""});
  ExpectError([&] { Schedule::FromJSON(ir::ParseModule(kMatmul), "[1, 2"); }, "ValueError",
              {"schedule trace JSON: not JSON"});
}

}  // namespace
}  // namespace schedule
}  // namespace tessel
