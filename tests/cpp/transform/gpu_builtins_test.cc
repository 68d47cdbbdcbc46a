// The GPU builtins in the text format and under Simplify: they print as written, and Simplify
// neither drops a barrier nor merges or cancels two warp shuffles (every lane must run each one).
#include <gtest/gtest.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/simplify.h>

#include <string>

#include "expect_pass.h"

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)

constexpr char kKernel[] = R"(@T.prim_func
def f(A: T.Buffer((32,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 32):
        T.pdl_sync()
        A[threadIdx_x] = T.shfl_xor(A[threadIdx_x], 16, 32) - T.shfl_xor(A[threadIdx_x], 16, 32)
        A[threadIdx_x] = T.shfl_down(A[threadIdx_x], 1, 32) + T.shfl_sync(A[threadIdx_x], 0, 32)
        T.grid_sync()
        T.pdl_trigger()
)";

TEST(GpuBuiltins, PrintAsWritten) {
  std::string text = AsText(testing::ParseFunc(kKernel));
  for (const char* s :
       {"T.pdl_sync()", "T.grid_sync()", "T.pdl_trigger()", "T.shfl_xor(A[threadIdx_x], 16, 32)",
        "T.shfl_down(A[threadIdx_x], 1, 32)", "T.shfl_sync(A[threadIdx_x], 0, 32)"}) {
    EXPECT_NE(text.find(s), std::string::npos) << s << " not in\n" << text;
  }
}

TEST(GpuBuiltins, SimplifyKeepsBarriersAndShuffles) {
  testing::ExpectUnchanged([](const PrimFunc& f) { return Simplify(f); }, kKernel);
}

TEST(GpuBuiltins, EffectKinds) {
  for (const Op& op : {builtin::pdl_sync(), builtin::pdl_trigger(), builtin::grid_sync(),
                       builtin::launch_kernel()}) {
    EXPECT_EQ(op->effect, CallEffectKind::kOpaque) << op->name;
  }
  for (const Op& op : {builtin::shfl_xor(), builtin::shfl_down(), builtin::shfl_sync()}) {
    EXPECT_EQ(op->effect, CallEffectKind::kUpdateState) << op->name;
    EXPECT_EQ(op->num_inputs, 3) << op->name;
  }
}

}  // namespace
}  // namespace transform
}  // namespace tessel
