// The buffer primitives' C++ face: storage_align lowered to padded strides, reindex keeping a
// unit-extent dimension, transform_layout from a parsed index map, and their JSON replay.
#include <gtest/gtest.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/schedule/schedule.h>
#include <tessel/transform/lower_blocks.h>
#include <tvm/ffi/extra/structural_equal.h>

#include "../ir/expect_error.h"
#include "schedule/buffer_access.h"

namespace tessel {
namespace schedule {
namespace {

using testing::ExpectError;

const char* kTwo = R"PY(
@T.prim_func
def two(A: T.Buffer((8, 1, 6), "float32"), C: T.Buffer((8, 1, 6), "float32")):
    B = T.alloc_buffer((8, 1, 6), "float32")
    for i, u, j in T.grid(8, 1, 6):
        with T.block("B"):
            vi, vu, vj = T.axis.remap("SSS", [i, u, j])
            B[vi, vu, vj] = A[vi, vu, vj] * T.float32(2)
    for i, u, j in T.grid(8, 1, 6):
        with T.block("C"):
            vi, vu, vj = T.axis.remap("SSS", [i, u, j])
            C[vi, vu, vj] = B[vi, vu, vj] + T.float32(1)
)PY";

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(BufferPrimitives, StorageAlignPadsTheLoweredStride) {
  ir::IRModule mod = ir::ParseModule(kTwo);
  Schedule sch(mod);
  RV b = sch.mut()->GetBlock("B");
  sch.mut()->StorageAlign(b, 0, 1, 8, 1);  // stride of dim 1: 6 -> 9
  sch.mut()->SetScope(b, 0, "local");
  std::string lowered = ir::AsText(transform::LowerBlocks(sch->mod()));
  EXPECT_TRUE(Has(lowered, "strides=(9, 9, 1)")) << lowered;
  ExpectError([&] { sch.mut()->StorageAlign(b, 0, 3, 8, 1); }, "ScheduleError",
              {"storage_align: axis 3 is out of range: B has 3 dimensions"});
  Schedule again = Schedule::FromJSON(mod, sch->TraceAsJSON());
  EXPECT_TRUE(tvm::ffi::StructuralEqual()(again->mod(), sch->mod()));
}

TEST(BufferPrimitives, ReindexKeepsAUnitExtentDimension) {
  ir::IRModule mod = ir::ParseModule(kTwo);
  Schedule sch(mod);
  sch.mut()->Reindex(sch.mut()->GetBlock("C"), "read", 0);
  std::string text = ir::AsText(sch->mod());
  EXPECT_TRUE(Has(text, "B_reindex = T.sblock_alloc_buffer((8, 1, 6)")) << text;
  Schedule again = Schedule::FromJSON(mod, sch->TraceAsJSON());
  EXPECT_TRUE(tvm::ffi::StructuralEqual()(again->mod(), sch->mod()));
}

TEST(BufferPrimitives, TransformLayoutFromText) {
  ir::IRModule mod = ir::ParseModule(kTwo);
  Schedule sch(mod);
  auto map = ParseIndexMap("lambda i, u, j: (j // 2, i, j % 2 + u)");
  sch.mut()->TransformLayout(sch.mut()->GetBlock("B"), "write", 0, map.first, map.second);
  std::string text = ir::AsText(sch->mod());
  EXPECT_TRUE(Has(text, "B = T.sblock_alloc_buffer((3, 8, 2)")) << text;
  EXPECT_TRUE(Has(sch->TraceAsPython(), "index_map=\"lambda i, u, j: (j // 2, i, j % 2 + u)\""))
      << sch->TraceAsPython();
  Schedule again = Schedule::FromJSON(mod, sch->TraceAsJSON());
  EXPECT_TRUE(tvm::ffi::StructuralEqual()(again->mod(), sch->mod()));
  auto bad = ParseIndexMap("lambda i, u, j: (i, j // 3)");
  ExpectError(
      [&] {
        sch.mut()->TransformLayout(sch.mut()->GetBlock("C"), "read", 0, bad.first, bad.second);
      },
      "ScheduleError", {"is not one-to-one over B's shape"});
  ExpectError([&] { ParseIndexMap("i, j: (j, i)"); }, "ValueError", {"does not start with lambda"});
}

}  // namespace
}  // namespace schedule
}  // namespace tessel
