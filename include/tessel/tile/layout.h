// Layouts of tiles, the vocabulary of tile-level programming (issue 16). A tile is a buffer of
// constant shape that a block works on as a whole. Where its elements live is a layout:
//
// - Layout: the logical indices of a shared-memory tile to its physical indices (one expression
//   per physical dimension): a swizzle, a padding, a transpose.
// - Fragment: the logical indices of a register tile spread over the threads of a block to the
//   thread that holds the element and the element's position among that thread's registers
//   (`local`). A fragment may replicate: with `replicate` = r > 1, the element is held by r
//   threads, `thread` being a function of the indices and of `rep` in [0, r).
//
// Both are written as expressions over their own index variables, so that they print, compose and
// can be reasoned about by the analyzer; for the constant shapes of tiles, CheckFragment and
// CheckLayout enumerate every point and so decide exactly whether a layout is what it claims.
#ifndef TESSEL_TILE_LAYOUT_H_
#define TESSEL_TILE_LAYOUT_H_

#include <tessel/ir/expr.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/object.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {
namespace tile {

class LayoutNode : public tvm::ffi::Object {
 public:
  tvm::ffi::Array<ir::Var> vars;        // the logical indices, one per dimension
  std::vector<int64_t> shape;           // the logical shape
  tvm::ffi::Array<ir::PrimExpr> index;  // the physical indices, over vars

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.tile.Layout", LayoutNode, tvm::ffi::Object);
};

class Layout : public tvm::ffi::ObjectRef {
 public:
  Layout(tvm::ffi::Array<ir::Var> vars, std::vector<int64_t> shape,
         tvm::ffi::Array<ir::PrimExpr> index);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Layout, tvm::ffi::ObjectRef, LayoutNode);
};

class FragmentNode : public tvm::ffi::Object {
 public:
  tvm::ffi::Array<ir::Var> vars;  // the logical indices, one per dimension
  std::vector<int64_t> shape;     // the logical shape
  ir::Var rep;                    // the replica, in [0, replicate)
  int64_t replicate = 1;
  ir::PrimExpr thread;  // over vars and rep: in [0, threads)
  ir::PrimExpr local;   // over vars: in [0, locals)
  int64_t threads = 0;  // the threads the fragment is spread over
  int64_t locals = 0;   // registers (elements) per thread

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.tile.Fragment", FragmentNode, tvm::ffi::Object);
};

class Fragment : public tvm::ffi::ObjectRef {
 public:
  Fragment(tvm::ffi::Array<ir::Var> vars, std::vector<int64_t> shape, ir::Var rep,
           int64_t replicate, ir::PrimExpr thread, ir::PrimExpr local, int64_t threads,
           int64_t locals);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Fragment, tvm::ffi::ObjectRef, FragmentNode);
};

// The accumulator of `wgmma.mma_async` m64nNk16 over a warpgroup (128 threads): element (i, j) of
// the 64 x n tile is register 4 (j / 8) + 2 (i % 16 / 8) + j % 2 of thread 32 (i / 16) +
// 4 (i % 8) + j % 8 / 2 (n a multiple of 8 in [8, 256]; PTX ISA, "wgmma .m64nNk16 register
// fragment layout for the accumulator").
Fragment WgmmaAccumulator(int64_t n);
// The accumulator of `mma.sync` m16n8 over a warp (32 threads, 4 registers): element (i, j) is
// register 2 (i / 8) + j % 2 of lane 4 (i % 8) + j / 2.
Fragment MmaAccumulator();
// `f` repeated `times` along dimension `dim` on new threads: the copy k holds rows k * extent ..
// of that dimension on threads k * f.threads .. (e.g. two warpgroups stacking their 64-row
// accumulators into 128 rows).
Fragment Distribute(const Fragment& f, int dim, int64_t times);
// `f` repeated `times` along dimension `dim` in more registers of the same threads.
Fragment Repeat(const Fragment& f, int dim, int64_t times);
// A tile held whole by each of `threads` threads (a broadcast value), row-major registers.
Fragment Replicated(std::vector<int64_t> shape, int64_t threads);

// The shared-memory layout of a rows x cols tile of `elem_bytes`-byte elements stored row-major
// with the `swizzle_bytes` (32, 64, 128) swizzle of wgmma and TMA: one physical index, the flat one
// SwizzleLayout stores element row * cols + col at.
Layout SwizzledLayout(int64_t rows, int64_t cols, int64_t elem_bytes, int64_t swizzle_bytes);

// What is wrong with `f` ("" when nothing), decided by visiting every point of its shape and every
// replica: a thread or register out of range, or two (point, replica) pairs on one register of one
// thread (named, with both points). `dense`: also every register of every thread is used.
std::string CheckFragment(const Fragment& f, bool dense);
// What is wrong with `l` as a permutation of the `size` physical elements ("" when nothing): an
// index out of [0, size), or two points on one element.
std::string CheckLayout(const Layout& l, int64_t size);

// f at one point (and replica): {thread, local}.
std::vector<int64_t> FragmentAt(const Fragment& f, const std::vector<int64_t>& point, int64_t rep);
// l at one point: its physical indices.
std::vector<int64_t> LayoutAt(const Layout& l, const std::vector<int64_t>& point);

}  // namespace tile
}  // namespace tessel

#endif  // TESSEL_TILE_LAYOUT_H_
