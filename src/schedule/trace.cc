// The trace of a schedule: as Python that replays it, as versioned JSON, and replayed from JSON
// onto a fresh schedule. One table (kPrimitives) says, per primitive, how its inputs print and how
// a recorded call is applied again, so the three stay in step.
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/json.h>

#include <functional>
#include <map>
#include <sstream>

#include "schedule/buffer_access.h"
#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

namespace json = tvm::ffi::json;
using ir::PrimExpr;

namespace {

// A string literal that Python and JSON both read back to `s`. JSON's optional escape of '/' is
// undone: Python would keep the backslash (i \/\/ 4 for i // 4).
std::string Quote(const std::string& s) {
  std::string q = json::Stringify(tvm::ffi::String(s));
  std::string out;
  for (size_t i = 0; i < q.size(); ++i) {
    if (q[i] == '\\' && i + 1 < q.size() && q[i + 1] == '/') continue;
    if (q[i] == '\\' && i + 1 < q.size()) out += q[i++];
    out += q[i];
  }
  return out;
}

// A value as Python source.
std::string Py(const Any& v) {
  if (v == nullptr) return "None";
  if (auto rv = v.try_cast<RV>()) return (*rv)->Name();
  if (v.type_index() == tvm::ffi::TypeIndex::kTVMFFIBool) return v.cast<bool>() ? "True" : "False";
  if (auto i = v.try_cast<int64_t>()) return std::to_string(*i);
  if (v.type_index() == tvm::ffi::TypeIndex::kTVMFFIFloat) {
    std::ostringstream os;
    os.precision(17);
    os << v.cast<double>();
    return os.str();
  }
  if (auto s = v.try_cast<String>()) return Quote(*s);
  if (auto arr = v.try_cast<Array<Any>>()) {
    std::string out = "[";
    for (size_t i = 0; i < arr->size(); ++i) out += (i ? ", " : "") + Py((*arr)[i]);
    return out + "]";
  }
  if (auto e = v.try_cast<PrimExpr>()) return Quote(ir::AsText(*e));
  return "<" + std::string(v.GetTypeKey()) + ">";
}

// A value as JSON: RVs as {"rv": name}, expressions as {"expr": text}.
json::Value Js(const Any& v) {
  if (v == nullptr) return nullptr;
  if (auto rv = v.try_cast<RV>()) {
    json::Object o;
    o.Set(String("rv"), String((*rv)->Name()));
    return o;
  }
  if (auto arr = v.try_cast<Array<Any>>()) {
    json::Array out;
    for (const Any& a : *arr) out.push_back(Js(a));
    return out;
  }
  if (auto e = v.try_cast<PrimExpr>()) {
    if (!e->as<ir::IntImmNode>()) {
      json::Object o;
      o.Set(String("expr"), String(ir::AsText(*e)));
      return o;
    }
    return ir::AsConstInt(*e).value();
  }
  return v;
}

// How each primitive prints (its Python parameter names) and replays.
struct Primitive {
  std::vector<std::string> params;  // keyword names; "*" = the one input is spread positionally
  std::function<std::vector<RV>(ScheduleNode*, const std::vector<Any>&)> apply;
};

std::vector<RV> ToVector(const Array<RV>& a) { return std::vector<RV>(a.begin(), a.end()); }

Array<RV> RVs(const Any& a) {
  Array<RV> out;
  for (const Any& x : a.cast<Array<Any>>()) out.push_back(x.cast<RV>());
  return out;
}

const std::map<std::string, Primitive>& Primitives() {
  static const std::map<std::string, Primitive> table = {
      {"get_block",
       {{"name", "func_name"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          std::optional<String> func;
          if (in[1] != nullptr) func = in[1].cast<String>();
          return std::vector<RV>{s->GetBlock(in[0].cast<String>(), func)};
        }}},
      {"sample_perfect_tile",
       {{"loop", "n", "max_innermost_factor", "decision"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          std::vector<int64_t> d;
          for (const Any& x : in[3].cast<Array<Any>>()) d.push_back(x.cast<int64_t>());
          return ToVector(s->SamplePerfectTile(in[0].cast<RV>(), in[1].cast<int64_t>(),
                                               in[2].cast<int64_t>(), d));
        }}},
      {"sample_categorical",
       {{"candidates", "probs", "decision"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          std::vector<int64_t> c;
          std::vector<double> p;
          for (const Any& x : in[0].cast<Array<Any>>()) c.push_back(x.cast<int64_t>());
          for (const Any& x : in[1].cast<Array<Any>>()) p.push_back(x.cast<double>());
          return std::vector<RV>{s->SampleCategorical(c, p, in[2].cast<int64_t>())};
        }}},
      {"get_loops",
       {{"block"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return ToVector(s->GetLoops(in[0].cast<RV>()));
        }}},
      {"get_child_blocks",
       {{"block_or_loop"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return ToVector(s->GetChildBlocks(in[0].cast<RV>()));
        }}},
      {"get_producers",
       {{"block"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return ToVector(s->GetProducers(in[0].cast<RV>()));
        }}},
      {"get_consumers",
       {{"block"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return ToVector(s->GetConsumers(in[0].cast<RV>()));
        }}},
      {"split",
       {{"loop", "factors"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return ToVector(s->Split(in[0].cast<RV>(), in[1].cast<Array<Any>>()));
        }}},
      {"fuse",
       {{"*"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return std::vector<RV>{s->Fuse(RVs(in[0]))};
        }}},
      {"reorder",
       {{"*"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->Reorder(RVs(in[0]));
          return std::vector<RV>{};
        }}},
      {"compute_inline",
       {{"block"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->ComputeInline(in[0].cast<RV>());
          return std::vector<RV>{};
        }}},
      {"decompose_reduction",
       {{"block", "loop"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return std::vector<RV>{s->DecomposeReduction(in[0].cast<RV>(), in[1].cast<RV>())};
        }}},
      {"reverse_compute_inline",
       {{"block"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->ReverseComputeInline(in[0].cast<RV>());
          return std::vector<RV>{};
        }}},
      {"compute_at",
       {{"block", "loop", "preserve_unit_loops", "index"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->ComputeAt(in[0].cast<RV>(), in[1].cast<RV>(), in[2].cast<bool>(),
                       in[3].cast<int64_t>());
          return std::vector<RV>{};
        }}},
      {"reverse_compute_at",
       {{"block", "loop", "preserve_unit_loops", "index"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->ReverseComputeAt(in[0].cast<RV>(), in[1].cast<RV>(), in[2].cast<bool>(),
                              in[3].cast<int64_t>());
          return std::vector<RV>{};
        }}},
      {"cache_read",
       {{"block", "read_buffer_index", "storage_scope", "consumer_blocks"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          Array<RV> consumers = in[3] == nullptr ? Array<RV>() : RVs(in[3]);
          return std::vector<RV>{s->CacheRead(in[0].cast<RV>(), in[1].cast<int64_t>(),
                                              in[2].cast<String>(), consumers)};
        }}},
      {"cache_write",
       {{"block", "write_buffer_index", "storage_scope", "consumer_blocks"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          Array<RV> consumers = in[3] == nullptr ? Array<RV>() : RVs(in[3]);
          return std::vector<RV>{s->CacheWrite(in[0].cast<RV>(), in[1].cast<int64_t>(),
                                               in[2].cast<String>(), consumers)};
        }}},
      {"set_scope",
       {{"block", "buffer_index", "storage_scope"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->SetScope(in[0].cast<RV>(), in[1].cast<int64_t>(), in[2].cast<String>());
          return std::vector<RV>{};
        }}},
      {"storage_align",
       {{"block", "buffer_index", "axis", "factor", "offset"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->StorageAlign(in[0].cast<RV>(), in[1].cast<int64_t>(), in[2].cast<int64_t>(),
                          in[3].cast<int64_t>(), in[4].cast<int64_t>());
          return std::vector<RV>{};
        }}},
      {"reindex",
       {{"block", "buffer", "skip_simplify"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          Array<Any> buffer = in[1].cast<Array<Any>>();
          return std::vector<RV>{s->Reindex(in[0].cast<RV>(), buffer[0].cast<String>(),
                                            buffer[1].cast<int64_t>(), in[2].cast<bool>())};
        }}},
      {"transform_layout",
       {{"block", "buffer", "index_map", "pad_value"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          Array<Any> buffer = in[1].cast<Array<Any>>();
          auto map = ParseIndexMap(in[2].cast<String>());
          std::optional<PrimExpr> pad;
          // JSON keeps an integer constant as a number.
          if (auto e = in[3].try_cast<PrimExpr>()) {
            pad = *e;
          } else if (auto i = in[3].try_cast<int64_t>()) {
            pad = ir::MakeConst(ir::DataType::Int(32), *i);
          }
          s->TransformLayout(in[0].cast<RV>(), buffer[0].cast<String>(), buffer[1].cast<int64_t>(),
                             map.first, map.second, pad);
          return std::vector<RV>{};
        }}},
      {"blockize",
       {{"target", "preserve_unit_iters"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return std::vector<RV>{s->Blockize(in[0].cast<RV>(), in[1].cast<bool>())};
        }}},
      {"rfactor",
       {{"loop", "factor_axis"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          return std::vector<RV>{s->RFactor(in[0].cast<RV>(), in[1].cast<int64_t>())};
        }}},
      {"parallel",
       {{"loop"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->Parallel(in[0].cast<RV>());
          return std::vector<RV>{};
        }}},
      {"vectorize",
       {{"loop"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->Vectorize(in[0].cast<RV>());
          return std::vector<RV>{};
        }}},
      {"unroll",
       {{"loop"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->Unroll(in[0].cast<RV>());
          return std::vector<RV>{};
        }}},
      {"bind",
       {{"loop", "thread_axis"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->Bind(in[0].cast<RV>(), in[1].cast<String>());
          return std::vector<RV>{};
        }}},
      {"annotate",
       {{"block_or_loop", "ann_key", "ann_val"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->Annotate(in[0].cast<RV>(), in[1].cast<String>(), in[2]);
          return std::vector<RV>{};
        }}},
      {"unannotate",
       {{"block_or_loop", "ann_key"},
        [](ScheduleNode* s, const std::vector<Any>& in) {
          s->Unannotate(in[0].cast<RV>(), in[1].cast<String>());
          return std::vector<RV>{};
        }}},
  };
  return table;
}

[[noreturn]] void BadJSON(size_t index, const std::string& what) {
  TVM_FFI_THROW(ValueError) << "schedule trace JSON: instruction " << index << ": " << what;
  TVM_FFI_UNREACHABLE();
}

}  // namespace

std::string ScheduleNode::TraceAsPython() const {
  std::ostringstream os;
  for (const Instruction& inst : trace_) {
    const Primitive& p = Primitives().at(inst.kind);
    for (size_t i = 0; i < inst.outputs.size(); ++i) {
      os << (i ? ", " : "") << inst.outputs[i]->Name();
    }
    // A primitive that returns a list binds a single element with a trailing comma.
    bool list = inst.kind == "get_loops" || inst.kind == "get_child_blocks" ||
                inst.kind == "get_producers" || inst.kind == "get_consumers" ||
                inst.kind == "split" || inst.kind == "sample_perfect_tile";
    if (list && inst.outputs.size() == 1) os << ",";
    if (!inst.outputs.empty()) os << " = ";
    os << "sch." << inst.kind << "(";
    if (p.params.size() == 1 && p.params[0] == "*") {
      Array<Any> spread = inst.inputs[0].cast<Array<Any>>();
      for (size_t i = 0; i < spread.size(); ++i) os << (i ? ", " : "") << Py(spread[i]);
    } else {
      for (size_t i = 0; i < inst.inputs.size(); ++i) {
        if (inst.inputs[i] == nullptr && i > 0) continue;  // an optional argument left out
        os << (i ? ", " : "") << p.params[i] << "=" << Py(inst.inputs[i]);
      }
    }
    os << ")\n";
  }
  return os.str();
}

std::string ScheduleNode::TraceAsJSON() const {
  json::Array insts;
  for (const Instruction& inst : trace_) {
    json::Array inputs, outputs;
    for (const Any& a : inst.inputs) inputs.push_back(Js(a));
    for (const RV& r : inst.outputs) outputs.push_back(String(r->Name()));
    insts.push_back(json::Array{String(inst.kind), inputs, outputs});
  }
  json::Object root;
  root.Set(String("version"), kTraceFormatVersion);
  root.Set(String("insts"), insts);
  return std::string(json::Stringify(root));
}

Schedule Schedule::FromJSON(ir::IRModule mod, const std::string& text) {
  String error;
  json::Value root = json::Parse(text, &error);
  if (!error.empty()) {
    TVM_FFI_THROW(ValueError) << "schedule trace JSON: not JSON: " << error;
  }
  auto obj = root.try_cast<json::Object>();
  if (!obj || !obj->count(String("version")) || !obj->count(String("insts"))) {
    TVM_FFI_THROW(ValueError) << "schedule trace JSON: expected an object with version and insts";
  }
  auto version = obj->at(String("version")).try_cast<int64_t>();
  if (!version || *version != kTraceFormatVersion) {
    TVM_FFI_THROW(ValueError) << "schedule trace JSON: format version "
                              << (version ? std::to_string(*version) : "?")
                              << " is not supported (this build reads version "
                              << kTraceFormatVersion << ")";
  }
  Schedule sch(std::move(mod));
  std::map<std::string, RV> rvs;
  // JSON values back to primitive inputs: {"rv": n} to the RV replayed under that name.
  std::function<Any(const json::Value&, size_t)> decode = [&](const json::Value& v,
                                                              size_t index) -> Any {
    if (auto o = v.try_cast<json::Object>()) {
      if (o->count(String("rv"))) {
        std::string name = o->at(String("rv")).cast<String>();
        auto it = rvs.find(name);
        if (it == rvs.end()) BadJSON(index, "uses " + name + " before any instruction makes it");
        return it->second;
      }
      if (o->count(String("expr"))) {
        return ir::ParseExpr(o->at(String("expr")).cast<String>(), {});
      }
      BadJSON(index, "an object input that is neither {\"rv\": ...} nor {\"expr\": ...}");
    }
    if (auto a = v.try_cast<json::Array>()) {
      Array<Any> out;
      for (const json::Value& x : *a) out.push_back(decode(x, index));
      return out;
    }
    return v;
  };
  json::Array insts = obj->at(String("insts")).cast<json::Array>();
  for (size_t i = 0; i < insts.size(); ++i) {
    auto inst = insts[i].try_cast<json::Array>();
    if (!inst || inst->size() != 3) BadJSON(i, "expected [kind, inputs, outputs]");
    std::string kind = (*inst)[0].cast<String>();
    auto p = Primitives().find(kind);
    if (p == Primitives().end()) BadJSON(i, "unknown primitive '" + kind + "'");
    std::vector<Any> inputs;
    for (const json::Value& v : (*inst)[1].cast<json::Array>()) inputs.push_back(decode(v, i));
    size_t want = p->second.params[0] == "*" ? 1 : p->second.params.size();
    if (inputs.size() != want) {
      BadJSON(i, kind + " takes " + std::to_string(want) + " inputs, got " +
                     std::to_string(inputs.size()));
    }
    std::vector<RV> outs = p->second.apply(sch.mut(), inputs);
    json::Array names = (*inst)[2].cast<json::Array>();
    if (names.size() != outs.size()) {
      BadJSON(i, kind + " returned " + std::to_string(outs.size()) + " RVs, the trace names " +
                     std::to_string(names.size()));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      rvs.insert_or_assign(std::string(names[k].cast<String>()), outs[k]);
    }
  }
  return sch;
}

}  // namespace schedule
}  // namespace tessel
