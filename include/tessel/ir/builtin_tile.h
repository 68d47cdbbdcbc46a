// Tile operations (issue 16): whole-tile data movement and arithmetic on buffers of constant shape,
// written as IR calls that print and parse like any other. A tile operand is a region:
//
//   tile_region(buf[s_0, ..., s_r-1], e_0, ..., e_r-1)   handle: buf's box at starts s, extents e
//   tile_copy(src, dst)                  dst = src elementwise (cast to dst's dtype); equal
//   extents.
//                                        Elements of a parameter buffer outside its shape read as
//                                        0 and are not written (ragged edges).
//   tile_fill(dst, value)                every element of dst = value
//   tile_gemm(A, B, C, trans_a, trans_b, clear)
//                                        C (M x N) += A (M x K, or K x M if trans_a) times B (K x
//                                        N, or N x K if trans_b), in C's dtype; clear (0/1) zeroes
//                                        C first. trans_a, trans_b and clear are literals.
//   tile_reduce(src, dst, kind, dim, clear)
//                                        dst = the "sum", "max" or "min" of src over axis dim
//                                        (dst has src's other axes); clear 0 combines with dst.
//   tile_atomic_add(dst, src)            dst += src elementwise, each element one atomic add
//                                        (several blocks may add into one dst, as split-K does);
//                                        src a region of dst's extents or a scalar value added to
//                                        every element. dst is a tensor or a shared tile, not a
//                                        fragment; elements of dst outside its shape are skipped.
//
// The front end writes them as TileLang does (`T.copy(A[by * 128, k * 32], A_s)`, `T.gemm(A_s,
// B_s, C_f, transpose_B=True)`, `T.fill`, `T.clear`, `T.reduce_max(src, dst, dim=1)`,
// `T.reduce_sum`, `T.reduce_min`, `T.atomic_add(C[by * 64, bx * 64], C_f)`);
// src/ir/parser/parser_tile.cc turns those into these calls, and the LowerTileOps pass into loops
// (include/tessel/transform/lower_tile_ops.h).
#ifndef TESSEL_IR_BUILTIN_TILE_H_
#define TESSEL_IR_BUILTIN_TILE_H_

#include <tessel/ir/expr.h>

#include <string>

namespace tessel {
namespace ir {

// Whether `name` is tile_copy, tile_fill, tile_gemm, tile_reduce or tile_atomic_add.
bool IsTileOp(const std::string& name);

// A region operand, unpacked: nullopt unless `e` is a well-formed tile_region call.
struct TileRegion {
  Buffer buffer;
  Array<PrimExpr> starts;
  Array<PrimExpr> extents;
};
std::optional<TileRegion> AsTileRegion(const PrimExpr& e);
PrimExpr MakeTileRegion(const Buffer& buffer, Array<PrimExpr> starts, Array<PrimExpr> extents);

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_BUILTIN_TILE_H_
