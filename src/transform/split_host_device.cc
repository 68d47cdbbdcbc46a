// The SplitHostDevice pass and DynamicSharedLayout (contract in
// include/tessel/transform/split_host_device.h).
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/host_facts.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/split_host_device.h>
#include <tessel/transform/swizzle_layout.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

bool IsThreadExtent(const AttrStmtNode* op) {
  return op->attr_key == "thread_extent" && op->node.as<VarNode>() != nullptr;
}

// The variables a statement uses but does not bind, in the order first met, and the buffers it
// accesses without declaring them.
class FreeVarCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  std::vector<Var> free_vars;
  std::vector<Buffer> undeclared_buffers;

  void Collect(const Stmt& s) {
    VisitStmt(s);
    std::vector<Var> out;
    for (const Var& v : used_) {
      if (!bound_.count(v.get())) out.push_back(v);
    }
    free_vars = out;
  }

  void VisitExpr_(const VarNode* op) override { Use(GetRef<Var>(op)); }
  void VisitExpr_(const LetNode* op) override {
    bound_.insert(op->var.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitBufferUse(const Buffer& buf) override {
    if (declared_.count(buf.get()) || seen_buffers_.count(buf.get())) return;
    seen_buffers_.insert(buf.get());
    undeclared_buffers.push_back(buf);
    VisitBufferFields(buf);
  }
  void VisitStmt_(const ForNode* op) override {
    bound_.insert(op->loop_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    bound_.insert(op->var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    bound_.insert(op->buffer_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    if (IsThreadExtent(op)) bound_.insert(op->node.as<VarNode>());
    if (const auto* v = op->node.as<VarNode>(); v && !IsThreadExtent(op)) Use(GetRef<Var>(v));
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const DeclBufferNode* op) override {
    declared_.insert(op->buffer.get());
    VisitBufferFields(op->buffer);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  void Use(const Var& v) {
    if (used_set_.insert(v.get()).second) used_.push_back(v);
  }
  void VisitBufferFields(const Buffer& buf) {
    Use(buf->data);
    for (const PrimExpr& e : buf->shape) VisitExpr(e);
    for (const PrimExpr& e : buf->strides) VisitExpr(e);
    VisitExpr(buf->elem_offset);
  }

  std::vector<Var> used_;
  std::unordered_set<const VarNode*> used_set_, bound_;
  std::unordered_set<const BufferNode*> declared_, seen_buffers_;
};

int AxisIndex(const std::string& tag) {
  int base = tag.rfind("blockIdx", 0) == 0 ? 0 : 3;
  return base + (tag.back() - 'x');
}

bool CallsAny(const Stmt& s, std::initializer_list<Op> ops) {
  bool found = false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (const auto* call = n.as<CallNode>()) {
      for (const Op& op : ops) found = found || call->op.same_as(op);
    }
  });
  return found;
}

bool IsOnChipScope(const std::string& s) {
  return s == "shared" || s == "shared.dyn" || s == "local" || s == "warp";
}

// Renames variables (and the buffers over them) so that a kernel has variables of its own: a
// module whose functions shared Var objects would not equal its own printed text.
class VarRemapper : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  explicit VarRemapper(std::unordered_map<const VarNode*, PrimExpr> vmap)
      : vmap_(std::move(vmap)) {}

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef<PrimExpr>(op) : it->second;
  }
  Buffer VisitBufferUse(const Buffer& buf) override {
    auto it = buffers_.find(buf.get());
    if (it != buffers_.end()) return it->second;
    PrimExpr data = VisitExpr(buf->data);
    Array<PrimExpr> shape = VisitArray(buf->shape), strides = VisitArray(buf->strides);
    PrimExpr offset = VisitExpr(buf->elem_offset);
    Buffer out = buf;
    if (!data.same_as(buf->data) || !shape.same_as(buf->shape) || !strides.same_as(buf->strides) ||
        !offset.same_as(buf->elem_offset)) {
      out = Buffer(buf->name, data.as<Var>().value(), buf->dtype, shape, strides, offset,
                   buf->scope, buf->data_alignment, buf->offset_factor);
    }
    buffers_.emplace(buf.get(), out);
    return out;
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer buf = VisitBufferUse(op->buffer);
    Stmt body = VisitStmt(op->body);
    if (buf.same_as(op->buffer) && body.same_as(op->body)) return GetRef<Stmt>(op);
    return DeclBuffer(buf, body);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    const auto* v = op->node.as<VarNode>();
    auto it = v ? vmap_.find(v) : vmap_.end();
    if (it == vmap_.end()) return StmtExprMutator::VisitStmt_(op);
    return WithSpan(AttrStmt(it->second, op->attr_key, VisitExpr(op->value), VisitStmt(op->body)),
                    op->span);
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    Array<PrimExpr> extents = VisitArray(op->extents);
    PrimExpr cond = VisitExpr(op->condition);
    Stmt body = VisitStmt(op->body);
    if (extents.same_as(op->extents) && cond.same_as(op->condition) && body.same_as(op->body)) {
      return GetRef<Stmt>(op);
    }
    return WithSpan(Allocate(op->buffer_var, op->dtype, extents, cond, body, op->annotations),
                    op->span);
  }

 private:
  std::unordered_map<const VarNode*, PrimExpr> vmap_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

Var FreshCopy(const Var& v) {
  if (v->dtype.is_handle()) return Var::Pointer(v->name_hint, v->pointee, v->storage_scope);
  if (v.as<SizeVarNode>()) return SizeVar(v->name_hint, v->dtype);
  return Var(v->name_hint, v->dtype);
}

// Replaces each tma_descriptor call of a kernel region by a variable (one per structurally
// distinct call), refusing a call whose operands use a variable bound inside the region.
class TmaHoister : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  // `owned` keeps each new variable alive as long as `maps` keys it by pointer.
  TmaHoister(std::unordered_map<const VarNode*, PrimExpr>* maps, std::vector<Var>* owned,
             std::function<void(const std::string&)> fail, const VarNode* region_var)
      : maps_(maps), owned_(owned), fail_(std::move(fail)) {
    bound_.insert(region_var);
  }

  PrimExpr VisitExpr_(const CallNode* op) override {
    if (!IsTmaDescriptor(GetRef<PrimExpr>(op))) return StmtExprMutator::VisitExpr_(op);
    PrimExpr call = GetRef<PrimExpr>(op);
    std::string error = CheckHopperCall(op);
    if (!error.empty()) fail_(error);
    PostOrderVisit(call, [&](const ObjectRef& n) {
      if (const auto* v = n.as<VarNode>(); v && bound_.count(v)) {
        fail_("tma_descriptor uses '" + std::string(v->name_hint) +
              "', which is bound inside the kernel; a tensor map is made on the host at launch "
              "from host values");
      }
    });
    for (const auto& [var, value] : *maps_) {
      if (tvm::ffi::StructuralEqual::Equal(value, call)) return GetRef<Var>(var);
    }
    std::string base = "tmap";
    if (const auto* addr = op->args[2].as<VarNode>()) base = std::string(addr->name_hint) + "_tmap";
    Var v = Var::Pointer(base, DataType::Void(), "");
    owned_->push_back(v);
    (*maps_)[v.get()] = call;
    return v;
  }
  Stmt VisitStmt_(const ForNode* op) override { return Bound(op->loop_var, op); }
  Stmt VisitStmt_(const LetStmtNode* op) override { return Bound(op->var, op); }
  Stmt VisitStmt_(const AllocateNode* op) override { return Bound(op->buffer_var, op); }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (!IsThreadExtent(op)) return StmtExprMutator::VisitStmt_(op);
    return Bound(GetRef<Var>(op->node.as<VarNode>()), op);
  }
  PrimExpr VisitExpr_(const LetNode* op) override {
    bound_.insert(op->var.get());
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  template <typename T>
  Stmt Bound(const Var& v, const T* op) {
    bool fresh = bound_.insert(v.get()).second;
    Stmt out = StmtExprMutator::VisitStmt_(op);
    if (fresh) bound_.erase(v.get());
    return out;
  }

  std::unordered_map<const VarNode*, PrimExpr>* maps_;
  std::vector<Var>* owned_;
  std::function<void(const std::string&)> fail_;
  std::unordered_set<const VarNode*> bound_;
};

class Splitter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  Splitter(const PrimFunc& host, std::string symbol, const IRModule& mod)
      : host_(host), symbol_(std::move(symbol)), mod_(mod) {
    for (const Var& p : host->params) {
      auto buf = host->buffer_map.Get(p);
      Var data = buf ? (*buf)->data : p;
      param_data_.push_back(data);
    }
  }

  std::vector<std::pair<String, PrimFunc>> kernels;
  // Allocations moved into a kernel: they leave the host.
  std::unordered_set<const VarNode*> sunk;
  // Tensor maps by the variable that stands for them: bound by a host LetStmt (which leaves the
  // host) or made for a call written inside a kernel.
  std::unordered_map<const VarNode*, PrimExpr> maps;
  std::vector<Var> map_vars;

  Stmt VisitStmt_(const LetStmtNode* op) override {
    if (!IsTmaDescriptor(op->value)) return StmtExprMutator::VisitStmt_(op);
    std::string error = CheckHopperCall(op->value.as<CallNode>());
    if (!error.empty()) Fail(error);
    maps[op->var.get()] = op->value;
    map_vars.push_back(op->var);
    return VisitStmt(op->body);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    allocs_[op->buffer_var.get()] = op;
    Stmt out = StmtExprMutator::VisitStmt_(op);
    allocs_.erase(op->buffer_var.get());
    return out;
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (!IsThreadExtent(op)) return StmtExprMutator::VisitStmt_(op);
    return MakeKernel(op);
  }

 private:
  [[noreturn]] void Fail(const std::string& msg) const {
    TVM_FFI_THROW(ValueError) << "SplitHostDevice: function '" << symbol_ << "': " << msg;
    TVM_FFI_UNREACHABLE();
  }

  Stmt MakeKernel(const AttrStmtNode* region) {
    std::string name = symbol_ + "_kernel";
    if (!kernels.empty()) name += "_" + std::to_string(kernels.size());
    if (mod_->functions.count(name)) {
      Fail("the kernel name '" + name + "' is taken by a function of the module");
    }
    Stmt region_body = TmaHoister(
                           &maps, &hoisted_vars_,
                           [&](const std::string& msg) { Fail("kernel '" + name + "': " + msg); },
                           region->node.as<VarNode>())
                           .VisitStmt(region->body);
    // What the region needs from outside.
    FreeVarCollector outer;
    outer.Collect(region_body);
    std::vector<const AllocateNode*> moved;
    for (const Var& v : outer.free_vars) {
      auto it = allocs_.find(v.get());
      if (it == allocs_.end()) continue;
      const AllocateNode* alloc = it->second;
      std::string scope = alloc->buffer_var->storage_scope;
      if (!IsOnChipScope(scope)) {
        Fail("buffer '" + std::string(v->name_hint) + "' is allocated outside kernel '" + name +
             "' (scope \"" + (scope.empty() ? "global" : scope) +
             "\") and used inside it; allocate it inside the thread_extent region or pass it "
             "as a parameter");
      }
      if (!sunk.insert(v.get()).second) {
        Fail("on-chip buffer '" + std::string(v->name_hint) + "' is used by two kernels");
      }
      moved.push_back(alloc);
    }
    // Declared in the host's parameter order, then in the order the region uses them.
    std::stable_sort(
        outer.undeclared_buffers.begin(), outer.undeclared_buffers.end(),
        [&](const Buffer& a, const Buffer& b) { return ParamRank(a->data) < ParamRank(b->data); });
    Stmt inner = region_body;
    for (auto it = outer.undeclared_buffers.rbegin(); it != outer.undeclared_buffers.rend(); ++it) {
      inner = DeclBuffer(*it, inner);
    }
    for (auto it = moved.rbegin(); it != moved.rend(); ++it) {
      const AllocateNode* a = *it;
      inner = WithSpan(
          Allocate(a->buffer_var, a->dtype, a->extents, a->condition, inner, a->annotations),
          a->span);
    }
    Stmt body =
        WithSpan(AttrStmt(region->node, region->attr_key, region->value, inner), region->span);

    FreeVarCollector uses;
    uses.Collect(body);
    std::unordered_set<const VarNode*> free_set;
    for (const Var& v : uses.free_vars) free_set.insert(v.get());
    Array<Var> params;
    std::unordered_set<const VarNode*> taken;
    for (const Var& d : param_data_) {
      if (free_set.count(d.get()) && taken.insert(d.get()).second) params.push_back(d);
    }
    std::vector<Var> rest;
    for (const Var& v : uses.free_vars) {
      if (!taken.count(v.get())) rest.push_back(v);
    }
    std::stable_sort(rest.begin(), rest.end(), [](const Var& a, const Var& b) {
      return std::string(a->name_hint) < std::string(b->name_hint);
    });
    for (const Var& v : rest) params.push_back(v);

    Array<PrimExpr> dims = LaunchDims(body, free_set, name);
    // The kernel's own parameters; `back` maps them to the host's variables again.
    std::unordered_map<const VarNode*, PrimExpr> to_kernel, back;
    Array<Var> kernel_params;
    for (const Var& p : params) {
      Var fresh = FreshCopy(p);
      to_kernel[p.get()] = fresh;
      back[fresh.get()] = p;
      kernel_params.push_back(fresh);
    }
    // Thread variables too: sibling kernels of the host may share one.
    std::vector<const AttrStmtNode*> thread_attrs;
    CollectThreadAttrs(body, &thread_attrs);
    for (const AttrStmtNode* a : thread_attrs) {
      Var v = GetRef<Var>(a->node.as<VarNode>());
      if (!to_kernel.count(v.get())) to_kernel[v.get()] = FreshCopy(v);
    }
    body = VarRemapper(to_kernel).VisitStmt(body);
    Map<String, Any> attrs;
    attrs.Set("global_symbol", String(name));
    attrs.Set("tessel.device_kernel", true);
    VarRemapper remap(to_kernel);
    Array<PrimExpr> kernel_dims;
    for (const PrimExpr& d : dims) kernel_dims.push_back(remap.VisitExpr(d));
    attrs.Set("tessel.launch_dims", kernel_dims);
    attrs.Set("tessel.use_pdl", CallsAny(body, {builtin::pdl_sync(), builtin::pdl_trigger()}));
    attrs.Set("tessel.use_grid_sync", CallsAny(body, {builtin::grid_sync()}));
    if (auto cluster = host_->attrs.Get("tessel.cluster_dims")) {
      attrs.Set("tessel.cluster_dims", *cluster);
    }
    // What the host wrapper checked, over the variables this kernel receives.
    std::unordered_set<const VarNode*> passed_vars;
    for (const Var& p : params) passed_vars.insert(p.get());
    Array<PrimExpr> facts;
    for (const PrimExpr& fact : HostCheckedFacts(host_)) {
      bool passed = true;
      PostOrderVisit(fact, [&](const ObjectRef& n) {
        if (const auto* v = n.as<VarNode>()) passed = passed && passed_vars.count(v);
      });
      if (passed) facts.push_back(remap.VisitExpr(fact));
    }
    if (!facts.empty()) attrs.Set(kHostFactsAttr, facts);
    Array<Any> tensor_maps;
    for (size_t i = 0; i < params.size(); ++i) {
      auto it = maps.find(params[i].get());
      if (it == maps.end()) continue;
      const auto* call = it->second.as<CallNode>();
      int rank = TmaDescriptorRank(call);
      Array<Any> box;
      for (int d = 0; d < rank; ++d) box.push_back(*AsConstInt(call->args[3 + 2 * rank + d]));
      const auto* addr = call->args[2].as<VarNode>();
      tensor_maps.push_back(Array<Any>{
          static_cast<int64_t>(i), call->args[0].as<StringImmNode>()->value,
          *AsConstInt(call->args[1]), box, String(addr ? std::string(addr->name_hint) : "tensor")});
    }
    if (!tensor_maps.empty()) attrs.Set(kTensorMapsAttr, tensor_maps);
    PrimFunc kernel(kernel_params, body, {}, attrs);
    PrimExpr kernel_dyn = DynamicSharedLayout(kernel).total_bytes;
    kernel.CopyOnWrite()->attrs.Set("tessel.dyn_shared_bytes", kernel_dyn);
    PrimExpr dyn = VarRemapper(back).VisitExpr(kernel_dyn);
    kernels.emplace_back(name, kernel);

    Array<PrimExpr> args{StringImm(name)};
    for (const PrimExpr& d : dims) args.push_back(d);
    args.push_back(dyn);
    for (const Var& p : params) {
      auto it = maps.find(p.get());
      args.push_back(it == maps.end() ? PrimExpr(p) : it->second);
    }
    return Evaluate(Call(DataType::Int(32), builtin::launch_kernel(), args));
  }

  size_t ParamRank(const Var& data) const {
    auto it = std::find_if(param_data_.begin(), param_data_.end(),
                           [&](const Var& d) { return d.same_as(data); });
    return static_cast<size_t>(it - param_data_.begin());
  }

  Array<PrimExpr> LaunchDims(const Stmt& body, const std::unordered_set<const VarNode*>& host_vars,
                             const std::string& name) {
    std::vector<PrimExpr> dims(6);
    std::vector<const AttrStmtNode*> attrs;
    CollectThreadAttrs(body, &attrs);
    for (const AttrStmtNode* a : attrs) {
      Var v = GetRef<Var>(a->node.as<VarNode>());
      auto tag = ThreadTagOf(v);
      if (!tag) {
        Fail("thread_extent variable '" + std::string(v->name_hint) + "' in kernel '" + name +
             "' does not name a thread axis (expected blockIdx_x ... threadIdx_z)");
      }
      PostOrderVisit(a->value, [&](const ObjectRef& n) {
        if (const auto* u = n.as<VarNode>(); u && !host_vars.count(u)) {
          Fail("the extent of " + *tag + " in kernel '" + name + "' uses '" +
               std::string(u->name_hint) + "', which is bound inside the kernel");
        }
      });
      PrimExpr& slot = dims[AxisIndex(*tag)];
      if (!slot.defined()) {
        slot = a->value;
      } else if (!analyzer_.CanProveEqual(slot, a->value)) {
        Fail(*tag + " of kernel '" + name + "' has two extents: " + AsText(slot) + " and " +
             AsText(a->value));
      }
    }
    Array<PrimExpr> out;
    for (const PrimExpr& d : dims) out.push_back(d.defined() ? d : PrimExpr(Int32(1)));
    return out;
  }

  static void CollectThreadAttrs(const Stmt& s, std::vector<const AttrStmtNode*>* out) {
    struct V : StmtExprVisitor {
      std::vector<const AttrStmtNode*>* out;
      void VisitStmt_(const AttrStmtNode* op) override {
        if (IsThreadExtent(op)) out->push_back(op);
        StmtExprVisitor::VisitStmt_(op);
      }
    } v;
    v.out = out;
    v.VisitStmt(s);
  }

  PrimFunc host_;
  std::string symbol_;
  IRModule mod_;
  std::vector<Var> param_data_;
  std::unordered_map<const VarNode*, const AllocateNode*> allocs_;
  std::vector<Var> hoisted_vars_;  // made for tma_descriptor calls in kernels; `maps` keys them
  arith::Analyzer analyzer_;
};

// Drops the moved allocations (and their declarations) from the host.
class SunkRemover : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;
  explicit SunkRemover(const std::unordered_set<const VarNode*>& sunk) : sunk_(sunk) {}
  Stmt VisitStmt_(const AllocateNode* op) override {
    if (sunk_.count(op->buffer_var.get())) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    if (sunk_.count(op->buffer->data.get())) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }

 private:
  const std::unordered_set<const VarNode*>& sunk_;
};

bool HasThreadExtent(const Stmt& s) {
  bool found = false;
  struct V : StmtExprVisitor {
    bool* found;
    void VisitStmt_(const AttrStmtNode* op) override {
      if (IsThreadExtent(op)) *found = true;
      StmtExprVisitor::VisitStmt_(op);
    }
  } v;
  v.found = &found;
  v.VisitStmt(s);
  return found;
}

}  // namespace

bool IsDynamicSharedAllocation(const AllocateNode* alloc) {
  std::string scope = alloc->buffer_var->storage_scope;
  if (scope == "shared.dyn") return true;
  if (scope != "shared") return false;
  for (const PrimExpr& e : alloc->extents) {
    if (!e.as<IntImmNode>()) return true;
  }
  return false;
}

DynamicSharedLayoutInfo DynamicSharedLayout(const PrimFunc& device_func) {
  std::unordered_set<const VarNode*> params;
  for (const Var& p : device_func->params) params.insert(p.get());
  arith::Analyzer analyzer;
  DynamicSharedLayoutInfo info;
  PrimExpr end = Int32(0);
  // 16 bytes, or a swizzled buffer's atom (8 rows of its swizzle).
  auto align = [&](const PrimExpr& e, int64_t to) {
    PrimExpr up = MakeConst(e.dtype(), to - 1), a = MakeConst(e.dtype(), to);
    return analyzer.Simplify(mul(floordiv(add(e, up), a), a));
  };
  struct V : StmtExprVisitor {
    std::vector<const AllocateNode*> allocs;
    void VisitStmt_(const AllocateNode* op) override {
      if (IsDynamicSharedAllocation(op)) allocs.push_back(op);
      StmtExprVisitor::VisitStmt_(op);
    }
  } v;
  v.VisitStmt(device_func->body);
  for (const AllocateNode* a : v.allocs) {
    PrimExpr n = MakeConst(a->extents.empty() ? DataType::Int(32) : a->extents[0].dtype(), 1);
    for (const PrimExpr& e : a->extents) n = mul(n, e);
    PrimExpr bytes =
        analyzer.Simplify(mul(n, MakeConst(n.dtype(), a->dtype.bytes() * a->dtype.lanes())));
    PostOrderVisit(bytes, [&](const ObjectRef& node) {
      if (const auto* u = node.as<VarNode>(); u && !params.count(u)) {
        TVM_FFI_THROW(ValueError) << "DynamicSharedLayout: the size of shared buffer '"
                                  << a->buffer_var->name_hint << "' (" << AsText(bytes)
                                  << " bytes) uses '" << u->name_hint
                                  << "', which is not a parameter of the kernel; a dynamic shared "
                                     "size must be known at launch";
      }
    });
    PrimExpr offset = align(end, std::max<int64_t>(16, 8 * SwizzleBytes(a)));
    if (offset.dtype() != bytes.dtype()) {
      DataType t = offset.dtype().bits() >= bytes.dtype().bits() ? offset.dtype() : bytes.dtype();
      offset = cast(t, offset);
      bytes = cast(t, bytes);
    }
    info.allocations.push_back({a->buffer_var, offset, bytes});
    end = analyzer.Simplify(add(offset, bytes));
  }
  info.total_bytes = align(end, 16);
  return info;
}

std::vector<KernelTensorMap> KernelTensorMaps(const PrimFunc& kernel) {
  std::vector<KernelTensorMap> out;
  auto attr = kernel->attrs.Get(kTensorMapsAttr);
  if (!attr) return out;
  auto bad = [&]() {
    TVM_FFI_THROW(ValueError) << "kernel " << kernel.GetGlobalSymbol().value_or("?") << ": "
                              << kTensorMapsAttr
                              << " must list [param, dtype, swizzle, box, tensor] entries";
  };
  auto list = attr->try_cast<Array<Any>>();
  if (!list) bad();
  for (const Any& entry : *list) {
    auto e = entry.try_cast<Array<Any>>();
    if (!e || e->size() != 5) bad();
    KernelTensorMap m;
    auto param = (*e)[0].try_cast<int64_t>();
    auto dtype = (*e)[1].try_cast<String>();
    auto swizzle = (*e)[2].try_cast<int64_t>();
    auto box = (*e)[3].try_cast<Array<int64_t>>();
    auto tensor = (*e)[4].try_cast<String>();
    if (!param || !dtype || !swizzle || !box || !tensor || *param < 0 ||
        static_cast<size_t>(*param) >= kernel->params.size()) {
      bad();
    }
    m.param = static_cast<size_t>(*param);
    auto parsed = DataType::Parse(std::string(*dtype));
    if (!parsed) bad();
    m.dtype = *parsed;
    m.swizzle = *swizzle;
    m.box.assign(box->begin(), box->end());
    m.tensor = *tensor;
    out.push_back(std::move(m));
  }
  return out;
}

IRModule SplitHostDevice(const IRModule& mod) {
  Map<String, PrimFunc> functions = mod->functions;
  bool changed = false;
  for (const auto& kv : mod->functions) {
    const PrimFunc& f = kv.second;
    PostOrderVisit(f->body, [&](const ObjectRef& n) {
      const auto* loop = n.as<ForNode>();
      if (loop && loop->kind == ForKind::kThreadBinding) {
        TVM_FFI_THROW(ValueError) << "SplitHostDevice: function '" << kv.first << "' still has the "
                                  << "thread_binding loop '" << loop->loop_var->name_hint
                                  << "'; run LowerThreadBinding first";
      }
    });
    if (!HasThreadExtent(f->body)) continue;
    if (f->attrs.count("tessel.device_kernel")) continue;
    std::string symbol = kv.first;
    if (auto sym = f.GetGlobalSymbol()) symbol = *sym;
    Splitter splitter(f, symbol, IRModule(functions));
    Stmt body = splitter.VisitStmt(f->body);
    if (!splitter.sunk.empty()) {
      body = SunkRemover(splitter.sunk).VisitStmt(body);
      struct V : StmtExprVisitor {
        const std::unordered_set<const VarNode*>* sunk;
        const VarNode* found = nullptr;
        void VisitExpr_(const VarNode* op) override {
          if (sunk->count(op)) found = op;
        }
        void VisitBufferUse(const Buffer& b) override {
          if (sunk->count(b->data.get())) found = b->data.get();
        }
      } v;
      v.sunk = &splitter.sunk;
      v.VisitStmt(body);
      if (v.found) {
        TVM_FFI_THROW(ValueError) << "SplitHostDevice: function '" << symbol
                                  << "': on-chip buffer '" << v.found->name_hint
                                  << "' is used both on the host and in a kernel";
      }
    }
    for (const Var& v : splitter.map_vars) {
      bool used = false;
      PostOrderVisit(body, [&](const ObjectRef& n) { used = used || n.same_as(v); });
      if (used) {
        TVM_FFI_THROW(ValueError) << "SplitHostDevice: function '" << symbol << "': tensor map '"
                                  << v->name_hint
                                  << "' is used on the host; only a kernel can use a "
                                     "tma_descriptor";
      }
    }
    PrimFunc host = f;
    host.CopyOnWrite()->body = body;
    functions.Set(kv.first, host);
    for (const auto& [name, kernel] : splitter.kernels) functions.Set(name, kernel);
    changed = true;
  }
  if (!changed) return mod;
  IRModule out = mod;
  out.CopyOnWrite()->functions = functions;
  return out;
}

Pass SplitHostDevicePass() {
  return CreateModulePass([](IRModule m) { return SplitHostDevice(m); }, 0, "SplitHostDevice");
}

}  // namespace transform
}  // namespace tessel
