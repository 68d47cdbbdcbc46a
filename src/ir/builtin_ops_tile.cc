// Registration of the tile operations and their region operand (include/tessel/ir/builtin_tile.h).
#include <tessel/ir/builtin_tile.h>
#include <tessel/ir/expr.h>
#include <tessel/ir/op.h>

namespace tessel {
namespace ir {

using K = CallEffectKind;

// A region reads nothing by itself: it names the box an operation then reads or writes.
TESSEL_REGISTER_OP("tile_region").Effect(K::kPure);
TESSEL_REGISTER_OP("tile_copy").NumInputs(2).Effect(K::kOpaque);
TESSEL_REGISTER_OP("tile_fill").NumInputs(2).Effect(K::kOpaque);
TESSEL_REGISTER_OP("tile_gemm").NumInputs(6).Effect(K::kOpaque);
TESSEL_REGISTER_OP("tile_reduce").NumInputs(5).Effect(K::kOpaque);
TESSEL_REGISTER_OP("tile_atomic_add").NumInputs(2).Effect(K::kOpaque);

bool IsTileOp(const std::string& name) {
  return name == "tile_copy" || name == "tile_fill" || name == "tile_gemm" ||
         name == "tile_reduce" || name == "tile_atomic_add";
}

std::optional<TileRegion> AsTileRegion(const PrimExpr& e) {
  const auto* call = e.as<CallNode>();
  auto op = call ? call->op.as<Op>() : std::nullopt;
  if (!op || (*op)->name != "tile_region" || call->args.empty()) return std::nullopt;
  const auto* load = call->args[0].as<BufferLoadNode>();
  if (!load || load->indices.size() + 1 != call->args.size()) return std::nullopt;
  TileRegion r;
  r.buffer = load->buffer;
  r.starts = load->indices;
  for (size_t i = 1; i < call->args.size(); ++i) r.extents.push_back(call->args[i]);
  return r;
}

PrimExpr MakeTileRegion(const Buffer& buffer, Array<PrimExpr> starts, Array<PrimExpr> extents) {
  Array<PrimExpr> args{BufferLoad(buffer, std::move(starts))};
  for (const PrimExpr& e : extents) args.push_back(e);
  return Call(DataType::Handle(), Op::Get("tile_region"), args);
}

}  // namespace ir
}  // namespace tessel
