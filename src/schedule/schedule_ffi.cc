// The schedule's tvm-ffi globals (python/tessel/schedule.py wraps them).
#include <tessel/ir/function.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include "schedule/buffer_access.h"
#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<RVNode>(refl::init(false))
      .def_ro("id", &RVNode::id)
      .def_ro("kind", &RVNode::kind);
  refl::ObjectDef<ScheduleNode>(refl::init(false));
  using S = Schedule;
  refl::GlobalDef()
      .def("tessel.schedule.Schedule",
           [](ir::IRModule mod, int64_t seed) {
             return Schedule(std::move(mod), static_cast<uint64_t>(seed));
           })
      .def("tessel.schedule.FromJSON",
           [](ir::IRModule mod, const String& json) { return Schedule::FromJSON(mod, json); })
      .def("tessel.schedule.Mod", [](const S& s) { return s.mut()->mod(); })
      .def("tessel.schedule.RVName", [](const RV& rv) { return String(rv->Name()); })
      .def("tessel.schedule.GetBlock",
           [](const S& s, const String& name, tvm::ffi::Optional<String> func) {
             std::optional<String> f;
             if (func) f = *func;
             return s.mut()->GetBlock(name, f);
           })
      .def("tessel.schedule.GetLoops", [](const S& s, const RV& b) { return s.mut()->GetLoops(b); })
      .def("tessel.schedule.GetChildBlocks",
           [](const S& s, const RV& b) { return s.mut()->GetChildBlocks(b); })
      .def("tessel.schedule.GetProducers",
           [](const S& s, const RV& b) { return s.mut()->GetProducers(b); })
      .def("tessel.schedule.GetConsumers",
           [](const S& s, const RV& b) { return s.mut()->GetConsumers(b); })
      .def("tessel.schedule.BlockFacts",
           [](const S& s, const RV& b) {
             BlockFacts f = s.mut()->GetBlockFacts(b);
             tvm::ffi::Map<String, String> out;
             out.Set("affine_binding", FactName(f.affine_binding));
             out.Set("region_cover", FactName(f.region_cover));
             out.Set("stage_pipeline", FactName(f.stage_pipeline));
             out.Set("why_not", f.why_not);
             return out;
           })
      .def("tessel.schedule.BlockFactsComputed",
           [](const S& s) { return s->block_facts_computed_; })
      .def("tessel.schedule.Split",
           [](const S& s, const RV& l, const Array<Any>& f) { return s.mut()->Split(l, f); })
      .def("tessel.schedule.Fuse", [](const S& s, const Array<RV>& l) { return s.mut()->Fuse(l); })
      .def("tessel.schedule.Reorder", [](const S& s, const Array<RV>& l) { s.mut()->Reorder(l); })
      .def("tessel.schedule.ComputeInline",
           [](const S& s, const RV& b) { s.mut()->ComputeInline(b); })
      .def("tessel.schedule.DecomposeReduction",
           [](const S& s, const RV& b, const RV& l) { return s.mut()->DecomposeReduction(b, l); })
      .def("tessel.schedule.ReverseComputeInline",
           [](const S& s, const RV& b) { s.mut()->ReverseComputeInline(b); })
      .def("tessel.schedule.ComputeAt",
           [](const S& s, const RV& b, const RV& l, bool preserve, int64_t index) {
             s.mut()->ComputeAt(b, l, preserve, index);
           })
      .def("tessel.schedule.ReverseComputeAt",
           [](const S& s, const RV& b, const RV& l, bool preserve, int64_t index) {
             s.mut()->ReverseComputeAt(b, l, preserve, index);
           })
      .def("tessel.schedule.CacheRead",
           [](const S& s, const RV& b, int64_t i, const String& scope, const Array<RV>& consumers) {
             return s.mut()->CacheRead(b, i, scope, consumers);
           })
      .def("tessel.schedule.CacheWrite",
           [](const S& s, const RV& b, int64_t i, const String& scope, const Array<RV>& consumers) {
             return s.mut()->CacheWrite(b, i, scope, consumers);
           })
      .def("tessel.schedule.SetScope", [](const S& s, const RV& b, int64_t i,
                                          const String& scope) { s.mut()->SetScope(b, i, scope); })
      .def("tessel.schedule.StorageAlign",
           [](const S& s, const RV& b, int64_t i, int64_t axis, int64_t factor, int64_t offset) {
             s.mut()->StorageAlign(b, i, axis, factor, offset);
           })
      .def("tessel.schedule.Reindex",
           [](const S& s, const RV& b, const String& type, int64_t i, bool skip_simplify) {
             return s.mut()->Reindex(b, type, i, skip_simplify);
           })
      .def("tessel.schedule.TransformLayout",
           [](const S& s, const RV& b, const String& type, int64_t i, const Array<ir::Var>& vars,
              const Array<ir::PrimExpr>& indices, tvm::ffi::Optional<ir::PrimExpr> pad) {
             std::optional<ir::PrimExpr> p;
             if (pad) p = *pad;
             s.mut()->TransformLayout(b, type, i, vars, indices, p);
           })
      .def("tessel.schedule.BufferIndexOf",
           [](const S& s, const RV& b, const String& name) {
             return BufferIndexOf(s.mut(), "transform_layout", b, name);
           })
      .def("tessel.schedule.ParseIndexMap",
           [](const String& text) {
             auto parsed = ParseIndexMap(text);
             return Array<Any>{parsed.first, parsed.second};
           })
      .def("tessel.schedule.Blockize",
           [](const S& s, const RV& l, bool preserve) { return s.mut()->Blockize(l, preserve); })
      .def("tessel.schedule.RFactor",
           [](const S& s, const RV& l, int64_t axis) { return s.mut()->RFactor(l, axis); })
      .def("tessel.schedule.Parallel", [](const S& s, const RV& l) { s.mut()->Parallel(l); })
      .def("tessel.schedule.Vectorize", [](const S& s, const RV& l) { s.mut()->Vectorize(l); })
      .def("tessel.schedule.Unroll", [](const S& s, const RV& l) { s.mut()->Unroll(l); })
      .def("tessel.schedule.Bind",
           [](const S& s, const RV& l, const String& t) { s.mut()->Bind(l, t); })
      .def("tessel.schedule.Annotate", [](const S& s, const RV& r, const String& k,
                                          const Any& v) { s.mut()->Annotate(r, k, v); })
      .def("tessel.schedule.Unannotate",
           [](const S& s, const RV& r, const String& k) { s.mut()->Unannotate(r, k); })
      .def("tessel.schedule.SamplePerfectTile",
           [](const S& s, const RV& l, int64_t n, int64_t max_inner,
              tvm::ffi::Optional<Array<int64_t>> decision) {
             std::optional<std::vector<int64_t>> d;
             if (decision) {
               d = std::vector<int64_t>();
               for (size_t i = 0; i < decision->size(); ++i) d->push_back((*decision)[i]);
             }
             return s.mut()->SamplePerfectTile(l, n, max_inner, d);
           })
      .def("tessel.schedule.SampleCategorical",
           [](const S& s, const Array<int64_t>& candidates, const Array<double>& probs,
              tvm::ffi::Optional<int64_t> decision) {
             std::optional<int64_t> d;
             if (decision) d = *decision;
             std::vector<int64_t> c;
             std::vector<double> p;
             for (size_t i = 0; i < candidates.size(); ++i) c.push_back(candidates[i]);
             for (size_t i = 0; i < probs.size(); ++i) p.push_back(probs[i]);
             return s.mut()->SampleCategorical(c, p, d);
           })
      .def("tessel.schedule.Get", [](const S& s, const RV& v) { return s->Get(v); })
      .def("tessel.schedule.TraceAsPython",
           [](const S& s) { return String(s.mut()->TraceAsPython()); })
      .def("tessel.schedule.TraceAsJSON",
           [](const S& s) { return String(s.mut()->TraceAsJSON()); });
}

}  // namespace schedule
}  // namespace tessel
