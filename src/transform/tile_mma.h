// Internal to src/transform: T.gemm on tensor cores through mma.sync m16n8k16 (CUDA sm_80 and
// later), for the SIMT lowering (src/transform/lower_tile_ops_gpu.cc) and the plan it reports.
//
// The accumulator C (M x N, float32) is spread over the kernel's warps as a wm x wn grid: warp w
// (lane l) takes the WM x WN block at rows (w / wn) WM, columns (w % wn) WN, as MI x NI tiles of
// 16 x 8, each the m16n8 accumulator: pair h of tile (mi, ni) is row 16 mi + 8 h + l / 4, columns
// 8 ni + 2 (l % 4) + {0, 1}. In the SIMT lowering's terms a thread holds MI NI 2 vectors of 2
// elements: vector j = 2 (mi NI + ni) + h, registers 2j and 2j + 1. Every spread fragment of C's
// shape (and every T.Parallel nest over it) takes that distribution.
//
// A and B are 16-bit tiles in shared memory (or fragments, which the lowering stages into shared
// scratch tiles first), read by ldmatrix (.trans where the tile is stored K-major for A, N-major
// for B) into uint32 registers; each k-step of 16 loads the warp's MI A and NI B fragments and
// issues MI NI mma.sync.
#ifndef TESSEL_SRC_TRANSFORM_TILE_MMA_H_
#define TESSEL_SRC_TRANSFORM_TILE_MMA_H_

#include <tessel/ir/builtin_tile.h>
#include <tessel/ir/stmt.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace tessel {
namespace transform {
namespace tile_lowering {

struct MmaGrid {
  int64_t m = 0, n = 0;    // the accumulator's shape
  int64_t wm = 0, wn = 0;  // warps along M and N
  int64_t WarpRows() const { return m / wm; }
  int64_t WarpCols() const { return n / wn; }
  int64_t Mi() const { return WarpRows() / 16; }
  int64_t Ni() const { return WarpCols() / 8; }
  // The vectors of 2 (and half the registers) each thread holds.
  int64_t Vectors() const { return Mi() * Ni() * 2; }
  std::string Text() const;
};

// Whether CUDA `arch` ("sm_80", "sm_90a", ...) has mma.sync m16n8k16 for 16-bit inputs.
bool HasMmaSync(const std::string& arch);

// The warp grid for an M x N float32 accumulator over `threads` threads: every warp a block of
// whole 16 x 8 tiles, the blocks as square as the shape allows (least A and B loaded per warp);
// none when no grid fits (threads not a multiple of 32, M or N not divisible).
std::optional<MmaGrid> ChooseMmaGrid(int64_t m, int64_t n, int64_t threads);

// Why tile_gemm `call` cannot run as mma.sync ("" when it can), given the kernel's fragments and
// which of them are replicated; `grid` is then its accumulator's grid.
std::string MmaGemmWhyNot(const ir::CallNode* call, const std::vector<ir::Buffer>& fragments,
                          const std::unordered_set<const ir::VarNode*>& replicated, int64_t threads,
                          MmaGrid* grid);

// The fragment shapes of kernel body `body` that get the mma accumulator distribution: those of
// the accumulators of its T.gemm calls when every T.gemm into a fragment of that shape can run
// as mma.sync on `arch`. Empty when `arch` has no mma.sync. `why_not`, when given, gets for each
// other accumulator shape why one of its T.gemm calls cannot.
std::map<std::vector<int64_t>, MmaGrid> MmaAccumulatorShapes(
    const ir::Stmt& body, const std::vector<ir::Buffer>& fragments,
    const std::unordered_set<const ir::VarNode*>& replicated, int64_t threads,
    const std::string& arch, std::map<std::vector<int64_t>, std::string>* why_not = nullptr);

// The shared tiles that T.gemm calls on mma.sync (accumulators of a shape in `mma`) read as A or
// B, by their data variable, with the swizzle they are stored with (SwizzleLayoutLate, see
// include/tessel/transform/swizzle_layout.h): 2-D 16-bit tiles with rows of 32 or 64 bytes or a
// multiple of 128 get that swizzle (128 for the wider), when the tile is a whole number of its
// 8-row atoms. The 8 rows one ldmatrix phase reads at one 16-byte column then lie in 8
// different bank groups (2 ways for rows of 256 bytes and more, read transposed).
std::map<const ir::VarNode*, int64_t> MmaSwizzledTiles(
    const ir::Stmt& body, const std::vector<ir::Buffer>& fragments,
    const std::map<std::vector<int64_t>, MmaGrid>& mma);

// The tile indices (row, column) of lane l of vector j of thread tx.
ir::Array<ir::PrimExpr> MmaElement(const MmaGrid& g, const ir::PrimExpr& tx, const ir::PrimExpr& j,
                                   const ir::PrimExpr& l);

// C += A B (A^T / B^T where asked) as ldmatrix + mma.sync steps for thread tx, C the thread's
// registers `acc` (float32, 2 Vectors()); `a_regs` (4 Mi()) and `b_regs` (2 Ni()) are uint32
// "local" buffers for the operand fragments. A and B are the 16-bit shared-tile regions that
// MmaGemmWhyNot accepted (fragments already staged into shared scratch tiles), K their common
// extent. Clears acc first when `clear`.
ir::Stmt MmaGemm(const MmaGrid& g, const ir::TileRegion& a, const ir::TileRegion& b, bool trans_a,
                 bool trans_b, int64_t k, bool clear, const ir::Buffer& acc,
                 const ir::Buffer& a_regs, const ir::Buffer& b_regs, const ir::PrimExpr& tx);

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_SRC_TRANSFORM_TILE_MMA_H_
