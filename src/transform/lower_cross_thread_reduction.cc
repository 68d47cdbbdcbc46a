// The LowerCrossThreadReduction pass (contract in
// include/tessel/transform/lower_cross_thread_reduction.h).
//
// A mutator keeps the stack of enclosing loops; at a BlockRealize whose reduce iterators use a
// threadIdx loop, Match() checks the supported form and Build() writes the shared-memory tree.
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/span.h>
#include <tessel/ir/substitute.h>
#include <tessel/transform/lower_cross_thread_reduction.h>
#include <tessel/transform/pass.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

enum class Reducer { kAdd, kMul, kMax, kMin };

PrimExpr Combine(Reducer f, PrimExpr a, PrimExpr b) {
  switch (f) {
    case Reducer::kAdd:
      return add(std::move(a), std::move(b));
    case Reducer::kMul:
      return mul(std::move(a), std::move(b));
    case Reducer::kMax:
      return max(std::move(a), std::move(b));
    case Reducer::kMin:
      return min(std::move(a), std::move(b));
  }
  TVM_FFI_UNREACHABLE();
}

// The identity of f over dtype t (t an int, uint or float scalar).
PrimExpr Identity(Reducer f, DataType t) {
  if (f == Reducer::kAdd) return MakeConst(t, 0);
  if (f == Reducer::kMul) return MakeConst(t, 1);
  bool lowest = f == Reducer::kMax;
  if (t.is_floating()) {
    double inf = std::numeric_limits<double>::infinity();
    return FloatImm(t, lowest ? -inf : inf);
  }
  __int128 one = 1;
  if (t.is_uint()) return IntImm(t, WrapToDType(t, lowest ? 0 : (one << t.bits()) - 1));
  __int128 high = (one << (t.bits() - 1)) - 1;
  return IntImm(t, WrapToDType(t, lowest ? -high - 1 : high));
}

bool IsConstant(const PrimExpr& e, const PrimExpr& c) {
  if (e.dtype() != c.dtype()) return false;
  if (const auto* a = e.as<FloatImmNode>()) {
    const auto* b = c.as<FloatImmNode>();
    return b && a->value == b->value && std::signbit(a->value) == std::signbit(b->value);
  }
  const auto* a = e.as<IntImmNode>();
  const auto* b = c.as<IntImmNode>();
  return a && b && a->value == b->value;
}

bool Uses(const ObjectRef& node, const std::unordered_set<const VarNode*>& vars) {
  bool found = false;
  auto visit = [&](const ObjectRef& n) {
    if (const auto* v = n.as<VarNode>()) found = found || vars.count(v);
  };
  if (auto e = node.as<PrimExpr>()) {
    PostOrderVisit(*e, visit);
  } else if (auto s = node.as<Stmt>()) {
    PostOrderVisit(*s, visit);
  }
  return found;
}

bool ReadsBuffer(const PrimExpr& e, const Buffer& buf) {
  bool found = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (const auto* load = n.as<BufferLoadNode>()) {
      found = found || load->buffer.same_as(buf) || load->buffer->data.same_as(buf->data);
    }
  });
  return found;
}

bool SameIndices(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
  return tvm::ffi::StructuralEqual::Equal(a, b);
}

// A supported reduction block, with the block's iteration variables already substituted.
struct Reduction {
  Reducer f;
  Buffer buffer;
  Array<PrimExpr> indices;
  PrimExpr value;                                         // the contribution of one thread
  std::optional<PrimExpr> init;                           // the init's value
  std::vector<const ForNode*> reduce_loops, other_loops;  // threadIdx loops, outermost first
  std::vector<const ForNode*> serial;  // serial loops each thread reduces first, outermost first
};

Stmt MakeBarrier() {
  StringImm scope("shared");
  return Evaluate(Call(scope.dtype(), builtin::tvm_storage_sync(), {scope}));
}

bool IsThreadIdxLoop(const ForNode* loop) {
  return loop->kind == ForKind::kThreadBinding &&
         std::string(loop->thread_tag).rfind("threadIdx.", 0) == 0;
}

class CrossThreadReductionLowerer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  // `tags`: every threadIdx tag the function binds.
  explicit CrossThreadReductionLowerer(std::unordered_set<std::string> tags)
      : tags_(std::move(tags)) {}

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->kind == ForKind::kSerial) {
      if (auto lowered = LowerSerialNest(op)) return *lowered;
    }
    loops_.push_back(op);
    Stmt out = StmtExprMutator::VisitStmt_(op);
    loops_.pop_back();
    return out;
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    if (!BindsReduceToThreads(op)) return StmtExprMutator::VisitStmt_(op);
    std::optional<Reduction> red = Match(op, {});
    if (!red) return GetRef<Stmt>(op);  // LowerBlocks refuses it with its own message.
    return Build(op, *red);
  }

 private:
  // `for ... (serial, perfectly nested): block` inside threadIdx loops, where the block's reduce
  // iterators use both threads and these serial loops: each thread reduces its serial part into a
  // local accumulator first. nullopt when this is not such a nest (or not a supported one).
  std::optional<Stmt> LowerSerialNest(const ForNode* op) {
    bool in_threads = false;
    for (const ForNode* loop : loops_) in_threads = in_threads || IsThreadIdxLoop(loop);
    if (!in_threads) return std::nullopt;
    std::vector<const ForNode*> chain;
    Stmt s = GetRef<Stmt>(op);
    while (const auto* loop = s.as<ForNode>()) {
      if (loop->kind != ForKind::kSerial) return std::nullopt;
      chain.push_back(loop);
      s = loop->body;
    }
    const auto* realize = s.as<BlockRealizeNode>();
    if (!realize) return std::nullopt;
    std::unordered_set<const VarNode*> chain_vars;
    for (const ForNode* loop : chain) chain_vars.insert(loop->loop_var.get());
    bool uses_chain = false;
    const BlockNode* block = realize->block.get();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i]->iter_type == IterVarType::kCommReduce) {
        uses_chain = uses_chain || Uses(realize->iter_values[i], chain_vars);
      }
    }
    if (!uses_chain || !BindsReduceToThreads(realize)) return std::nullopt;
    std::optional<Reduction> red = Match(realize, chain);
    if (!red) return std::nullopt;
    return Build(realize, *red);
  }

  // Whether a reduce iterator's value uses an enclosing threadIdx loop's variable.
  bool BindsReduceToThreads(const BlockRealizeNode* op) const {
    std::unordered_set<const VarNode*> threads;
    for (const ForNode* loop : loops_) {
      if (IsThreadIdxLoop(loop)) threads.insert(loop->loop_var.get());
    }
    const BlockNode* block = op->block.get();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i]->iter_type == IterVarType::kCommReduce &&
          Uses(op->iter_values[i], threads)) {
        return true;
      }
    }
    return false;
  }

  std::optional<Reduction> Match(const BlockRealizeNode* op,
                                 const std::vector<const ForNode*>& serial) const {
    const BlockNode* block = op->block.get();
    if (!block->alloc_buffers.empty() || !block->match_buffers.empty()) return std::nullopt;

    // Split the enclosing threadIdx loops by whether a reduce iterator uses them.
    std::unordered_set<const VarNode*> all_loops, reduce_vars, reduce_threads, allowed;
    for (const ForNode* loop : loops_) all_loops.insert(loop->loop_var.get());
    // A threadIdx axis launched but not around the block would run the tree once per thread of
    // that axis, racing on the slots.
    std::unordered_set<std::string> enclosing;
    for (const ForNode* loop : loops_) {
      if (IsThreadIdxLoop(loop)) enclosing.insert(loop->thread_tag);
    }
    if (enclosing != tags_) return std::nullopt;
    Reduction red;
    red.serial = serial;
    std::unordered_set<const VarNode*> serial_vars;
    for (const ForNode* loop : serial) serial_vars.insert(loop->loop_var.get());
    for (const ForNode* loop : loops_) {
      if (!IsThreadIdxLoop(loop)) continue;
      if (!loop->extent.as<IntImmNode>() || !loop->min.as<IntImmNode>()) return std::nullopt;
      bool reduce = false;
      for (size_t i = 0; i < block->iter_vars.size(); ++i) {
        if (block->iter_vars[i]->iter_type == IterVarType::kCommReduce &&
            Uses(op->iter_values[i], {loop->loop_var.get()})) {
          reduce = true;
        }
      }
      (reduce ? red.reduce_loops : red.other_loops).push_back(loop);
      if (reduce) reduce_threads.insert(loop->loop_var.get());
    }
    std::unordered_map<const VarNode*, PrimExpr> vmap;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      const PrimExpr& value = op->iter_values[i];
      vmap[iv->var.get()] = value;
      if (iv->iter_type == IterVarType::kCommReduce) {
        reduce_vars.insert(iv->var.get());
        // Only reduce threads and the serial nest: each thread contributes one value.
        bool ok = true;
        PostOrderVisit(value, [&](const ObjectRef& n) {
          if (const auto* v = n.as<VarNode>()) {
            ok = ok && (reduce_threads.count(v) || serial_vars.count(v));
          }
        });
        if (!ok) return std::nullopt;
      } else if (iv->iter_type == IterVarType::kDataPar) {
        if (Uses(value, reduce_threads) || Uses(value, serial_vars)) return std::nullopt;
      } else {
        return std::nullopt;
      }
    }

    const auto* store = block->body.as<BufferStoreNode>();
    if (!store || store->value.dtype().lanes() != 1) return std::nullopt;
    DataType t = store->value.dtype();
    if (!(t.is_int() || t.is_uint() || t.is_floating())) return std::nullopt;
    PrimExpr a, b;
    if (const auto* n = store->value.as<AddNode>()) {
      red.f = Reducer::kAdd, a = n->a, b = n->b;
    } else if (const auto* n = store->value.as<MulNode>()) {
      red.f = Reducer::kMul, a = n->a, b = n->b;
    } else if (const auto* n = store->value.as<MaxNode>()) {
      red.f = Reducer::kMax, a = n->a, b = n->b;
    } else if (const auto* n = store->value.as<MinNode>()) {
      red.f = Reducer::kMin, a = n->a, b = n->b;
    } else {
      return std::nullopt;
    }
    auto is_self = [&](const PrimExpr& e) {
      const auto* load = e.as<BufferLoadNode>();
      return load && load->buffer.same_as(store->buffer) &&
             SameIndices(load->indices, store->indices);
    };
    PrimExpr value;
    if (is_self(a)) {
      value = b;
    } else if (is_self(b)) {
      value = a;
    } else {
      return std::nullopt;
    }
    if (ReadsBuffer(value, store->buffer)) return std::nullopt;
    for (const PrimExpr& i : store->indices) {
      if (Uses(i, reduce_vars) || Uses(i, reduce_threads) || Uses(i, serial_vars)) {
        return std::nullopt;
      }
    }
    if (block->init) {
      const auto* init = block->init.value().as<BufferStoreNode>();
      if (!init || !init->buffer.same_as(store->buffer) ||
          !SameIndices(init->indices, store->indices) || init->value.dtype() != t ||
          ReadsBuffer(init->value, store->buffer) || Uses(init->value, reduce_vars) ||
          Uses(init->value, reduce_threads) || Uses(init->value, serial_vars)) {
        return std::nullopt;
      }
      red.init = Substitute(init->value, vmap);
    }
    red.buffer = store->buffer;
    red.indices = Array<PrimExpr>();
    for (const PrimExpr& i : store->indices) red.indices.push_back(Substitute(i, vmap));
    red.value = Substitute(value, vmap);
    return red;
  }

  // The flattened index of `loops` (innermost fastest) and the product of their extents.
  static std::pair<PrimExpr, int64_t> Flatten(const std::vector<const ForNode*>& loops) {
    PrimExpr index;
    int64_t stride = 1;
    for (size_t k = loops.size(); k-- > 0;) {
      const ForNode* loop = loops[k];
      PrimExpr local = sub(loop->loop_var, loop->min);
      PrimExpr term = mul(local, MakeConst(loop->loop_var->dtype, stride));
      index = index.defined() ? add(term, index) : term;
      stride *= loop->extent.as<IntImmNode>()->value;
    }
    if (!index.defined()) index = MakeConst(DataType::Int(32), 0);
    return {index, stride};
  }

  Stmt Build(const BlockRealizeNode* op, const Reduction& red) const {
    DataType t = red.buffer->dtype;
    auto [r, nr] = Flatten(red.reduce_loops);
    auto [g, ng] = Flatten(red.other_loops);
    PrimExpr base = mul(g, MakeConst(g.dtype(), nr));
    PrimExpr slot = add(base, r);
    Buffer buf = MakeBuffer(std::string(op->block->name_hint) + "_red", t,
                            {MakeConst(DataType::Int(32), ng * nr)}, "shared");
    PrimExpr identity = Identity(red.f, t);

    std::vector<Stmt> seq;
    Optional<Buffer> acc;
    if (!red.serial.empty()) {
      // Each thread's serial part, into a local accumulator that then takes the value's place.
      acc = MakeBuffer(std::string(op->block->name_hint) + "_acc", t,
                       {MakeConst(DataType::Int(32), 1)}, "local");
      PrimExpr zero = MakeConst(DataType::Int(32), 0);
      seq.push_back(BufferStore(*acc, identity, {zero}));
      Stmt update = BufferStore(*acc, Combine(red.f, BufferLoad(*acc, {zero}), red.value), {zero});
      if (!IsConstTrue(op->predicate)) update = IfThenElse(op->predicate, update);
      for (size_t k = red.serial.size(); k-- > 0;) {
        const ForNode* loop = red.serial[k];
        update = For(loop->loop_var, loop->min, loop->extent, loop->kind, update, loop->thread_tag,
                     loop->annotations);
      }
      seq.push_back(update);
      seq.push_back(BufferStore(buf, BufferLoad(*acc, {zero}), {slot}));
    } else if (IsConstTrue(op->predicate)) {
      seq.push_back(BufferStore(buf, red.value, {slot}));
    } else {
      seq.push_back(IfThenElse(op->predicate, BufferStore(buf, red.value, {slot}),
                               BufferStore(buf, identity, {slot})));
    }
    seq.push_back(MakeBarrier());
    for (int64_t n = nr; n > 1;) {
      int64_t h = (n + 1) / 2;
      PrimExpr partner = add(slot, MakeConst(slot.dtype(), h));
      PrimExpr step = Combine(red.f, BufferLoad(buf, {slot}), BufferLoad(buf, {partner}));
      seq.push_back(IfThenElse(lt(r, MakeConst(r.dtype(), n - h)), BufferStore(buf, step, {slot})));
      seq.push_back(MakeBarrier());
      n = h;
    }
    PrimExpr total = BufferLoad(buf, {base});
    PrimExpr result;
    if (!red.init) {
      result = Combine(red.f, BufferLoad(red.buffer, red.indices), total);
    } else if (IsConstant(*red.init, identity)) {
      result = total;
    } else {
      result = Combine(red.f, *red.init, total);
    }
    seq.push_back(
        IfThenElse(eq(r, MakeConst(r.dtype(), 0)), BufferStore(red.buffer, result, red.indices)));
    seq.push_back(MakeBarrier());
    // Every new statement points at the block's source position.
    for (Stmt& s : seq) s = WithSpan(s, op->span);
    Stmt body = SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
    for (const Buffer& b : acc ? std::vector<Buffer>{*acc, buf} : std::vector<Buffer>{buf}) {
      body = WithSpan(DeclBuffer(b, body), op->span);
      body = WithSpan(Allocate(b->data, t, b->shape, Bool(true), body), op->span);
    }
    return body;
  }

  static bool IsConstTrue(const PrimExpr& e) {
    const auto* imm = e.as<IntImmNode>();
    return imm && imm->value != 0;
  }

  std::unordered_set<std::string> tags_;
  std::vector<const ForNode*> loops_;
};

PrimFunc Lower(const PrimFunc& func) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "LowerCrossThreadReduction: undefined function";
  std::unordered_set<std::string> tags;
  PostOrderVisit(func->body, [&](const ObjectRef& n) {
    if (const auto* f = n.as<ForNode>(); f && IsThreadIdxLoop(f)) tags.insert(f->thread_tag);
  });
  if (tags.empty()) return func;
  Stmt body = CrossThreadReductionLowerer(std::move(tags)).VisitStmt(func->body);
  if (body.same_as(func->body)) return func;
  return WithBody(func, body);
}

}  // namespace

PrimFunc LowerCrossThreadReduction(const PrimFunc& func) { return Lower(func); }

IRModule LowerCrossThreadReduction(const IRModule& mod) {
  return MapFunctions(mod, [](const String&, const PrimFunc& f) { return Lower(f); });
}

Pass LowerCrossThreadReductionPass() {
  return CreateModulePass([](IRModule m) { return LowerCrossThreadReduction(m); }, 0,
                          "LowerCrossThreadReduction");
}

}  // namespace transform
}  // namespace tessel
