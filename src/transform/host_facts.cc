// Host-checked facts about parameter buffers (contract in include/tessel/transform/host_facts.h).
#include <tessel/arith/product_bounds.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/host_facts.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <limits>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

BufferSizeLimit SizeLimitOf(const Buffer& buf) {
  bool wide = false;
  auto look = [&](const PrimExpr& e) {
    if (e.defined() && e.dtype().is_int_or_uint() && e.dtype().bits() >= 64) wide = true;
  };
  for (const PrimExpr& e : buf->shape) look(e);
  for (const PrimExpr& e : buf->strides) look(e);
  look(buf->elem_offset);
  BufferSizeLimit out;
  out.index_dtype = DataType::Int(wide ? 64 : 32);
  out.max_elements = out.index_dtype.max_int();
  int64_t lane_bytes = buf->dtype.is_bool() ? 1 : buf->dtype.bytes();
  out.elem_bytes = std::max<int64_t>(1, lane_bytes * buf->dtype.lanes());
  out.max_bytes = std::numeric_limits<int64_t>::max();
  return out;
}

std::vector<PrimExpr> BufferSizeFacts(const Buffer& buf) {
  std::vector<PrimExpr> facts;
  std::vector<Var> vars;
  bool exact = true;
  // The product of the constant entries; past the limit it stays above it.
  int64_t constants = 1;
  BufferSizeLimit lim = SizeLimitOf(buf);
  int64_t limit = std::min(lim.max_elements, lim.max_bytes / lim.elem_bytes);
  for (const PrimExpr& e : buf->shape) {
    if (const auto* v = e.as<VarNode>()) {
      if (v->dtype.is_int() && v->dtype.is_scalar()) {
        Var var = GetRef<Var>(v);
        facts.push_back(GE(var, MakeConst(v->dtype, 0)));
        vars.push_back(var);
        continue;
      }
    } else if (auto c = AsConstInt(e)) {
      if (*c >= 0) {
        constants = *c == 0 ? 0 : (constants > limit / *c ? limit + 1 : constants * *c);
        continue;
      }
    }
    exact = false;
  }
  if (!exact || constants == 0 || vars.empty()) return facts;
  // The constants alone exceed the limit: every call but a zero-size one is refused.
  int64_t bound = constants > limit ? 0 : limit / constants;
  // One variable: `v <= bound`, unless its dtype says as much already.
  if (vars.size() == 1 && bound >= vars[0].dtype().max_int()) return facts;
  PrimExpr product = arith::MakeProductBound(vars, bound);
  if (product.defined()) facts.push_back(product);
  return facts;
}

std::vector<PrimExpr> HostCheckedFacts(const PrimFunc& func) {
  std::vector<PrimExpr> facts;
  bool device = false;
  if (auto v = func->attrs.Get("tessel.device_kernel")) {
    if (auto b = v->try_cast<bool>()) device = *b;
  }
  if (device) {
    if (auto v = func->attrs.Get(kHostFactsAttr)) {
      if (auto list = v->try_cast<Array<PrimExpr>>()) {
        for (const PrimExpr& f : *list) facts.push_back(f);
      }
    }
    return facts;
  }
  for (const Var& p : func->params) {
    if (auto buf = func->buffer_map.Get(p)) {
      for (const PrimExpr& f : BufferSizeFacts(*buf)) {
        // Buffers of one shape state the same facts once.
        bool seen = false;
        for (const PrimExpr& g : facts) seen = seen || tvm::ffi::StructuralEqual::Equal(f, g);
        if (!seen) facts.push_back(f);
      }
    }
  }
  return facts;
}

}  // namespace transform
}  // namespace tessel
