// The GPU-only builtins (PDL, grid sync, warp shuffles) have no C meaning: the C backend
// refuses each with its usual unsupported-op error, naming the op and the function.
#include <gtest/gtest.h>
#include <tessel/codegen/codegen_c.h>
#include <tessel/ir/parser.h>

#include <string>

#include "../ir/expect_error.h"

namespace tessel {
namespace {

void ExpectRejected(const std::string& stmt, const std::string& op) {
  std::string text = R"(
@T.prim_func
def g(A: T.Buffer((32,), "float32")):
    for i in range(32):
        )" + stmt + "\n";
  SCOPED_TRACE(stmt);
  testing::ExpectError([&] { codegen::GenerateC(ir::ParseModule(text)); }, "ValueError",
                       {"codegen c: unsupported op " + op + " in g"});
}

TEST(CodegenCGpuOps, GpuBuiltinsAreRefused) {
  ExpectRejected("T.pdl_trigger()", "pdl_trigger");
  ExpectRejected("T.pdl_sync()", "pdl_sync");
  ExpectRejected("T.grid_sync()", "grid_sync");
  ExpectRejected("A[i] = T.shfl_xor(A[i], 16, 32)", "shfl_xor");
  ExpectRejected("A[i] = T.shfl_down(A[i], 1, 32)", "shfl_down");
  ExpectRejected("A[i] = T.shfl_sync(A[i], 0, 32)", "shfl_sync");
}

}  // namespace
}  // namespace tessel
