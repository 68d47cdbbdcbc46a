// SpecializeDivisible (see tile_divisible.h).
#include "transform/tile_divisible.h"

#include <tessel/ir/fresh_copy.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/substitute.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "transform/tile_lowering.h"

namespace tessel {
namespace transform {
namespace tile_lowering {

namespace {

constexpr int64_t kVectorBytes = 16;

// The variables that are a symbolic innermost extent, or a symbolic stride other than the
// innermost, of a tensor the kernel reads or writes, each with the most elements of a 16-byte
// vector among those tensors; by name, so the condition reads the same in every build. Only
// variables free in the kernel qualify.
std::map<std::string, std::pair<Var, int64_t>> SymbolicRowLengths(const Stmt& body) {
  std::map<std::string, std::pair<Var, int64_t>> out;
  auto note = [&](const PrimExpr& e, DataType t) {
    const auto* v = e.as<VarNode>();
    int64_t bytes = t.bytes() * t.lanes();
    if (!v || !v->dtype.is_int() || bytes <= 0 || bytes >= kVectorBytes ||
        kVectorBytes % bytes != 0) {
      return;
    }
    auto [it, fresh] = out.emplace(std::string(v->name_hint), std::make_pair(GetRef<Var>(v), 0));
    // Two variables of one name: leave both alone rather than test the wrong one.
    if (!fresh && !it->second.first.same_as(GetRef<Var>(v))) {
      it->second.second = -1;
      return;
    }
    if (it->second.second >= 0)
      it->second.second = std::max(it->second.second, kVectorBytes / bytes);
  };
  auto use = [&](const Buffer& b) {
    if (IsTileScope(b->scope) || b->shape.empty()) return;
    note(b->shape[b->shape.size() - 1], b->dtype);
    for (size_t d = 0; d + 1 < b->strides.size(); ++d) note(b->strides[d], b->dtype);
  };
  // The host tests the variables, so one bound inside the kernel cannot be among them.
  std::unordered_set<const VarNode*> bound;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) use(l->buffer);
    if (const auto* s = n.as<BufferStoreNode>()) use(s->buffer);
    if (const auto* f = n.as<ForNode>()) bound.insert(f->loop_var.get());
    if (const auto* l = n.as<LetStmtNode>()) bound.insert(l->var.get());
    if (const auto* l = n.as<LetNode>()) bound.insert(l->var.get());
  });
  for (auto it = out.begin(); it != out.end();) {
    bool keep = it->second.second > 1 && !bound.count(it->second.first.get());
    it = keep ? std::next(it) : out.erase(it);
  }
  return out;
}

// Substitutes the variables, and does the same in the shapes and strides of the tensors it
// meets (one new buffer per old one, over the same data), so that the lowering's vector guards,
// which read a tensor's shape, see the multiples too.
class Specializer : public VarSubstituter {
 public:
  explicit Specializer(VarMap vmap) : VarSubstituter(std::move(vmap)) {}
  using VarSubstituter::VisitExpr_;

  Buffer VisitBufferUse(const Buffer& b) override {
    if (IsTileScope(b->scope)) return b;
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    Array<PrimExpr> shape = VisitArray(b->shape), strides = VisitArray(b->strides);
    Buffer out = b;
    if (!shape.same_as(b->shape) || !strides.same_as(b->strides)) {
      out = Buffer(b->name, b->data, b->dtype, shape, strides, b->elem_offset, b->scope,
                   b->data_alignment, b->offset_factor);
    }
    buffers_.emplace(b.get(), out);
    if (!out.same_as(b)) declared_.push_back(out);
    return out;
  }

  // The new buffers, in order of first use: the copy declares them (DeclBuffer).
  const std::vector<Buffer>& declared() const { return declared_; }

 private:
  std::vector<Buffer> declared_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

}  // namespace

Stmt SpecializeDivisible(const ForNode* kernel) {
  Stmt general = GetRef<Stmt>(kernel);
  auto lengths = SymbolicRowLengths(kernel->body);
  if (lengths.empty()) return general;
  VarMap vmap;
  PrimExpr cond;
  std::string text;
  for (const auto& [name, entry] : lengths) {
    const auto& [var, v] = entry;
    PrimExpr vv = MakeConst(var.dtype(), v);
    vmap[var.get()] = mul(floordiv(var, vv), vv);
    PrimExpr c = eq(floormod(var, vv), MakeConst(var.dtype(), 0));
    cond = cond.defined() ? logical_and(cond, c) : c;
    text += (text.empty() ? "" : ", ") + name + " % " + std::to_string(v) + " == 0";
  }
  Specializer specializer(vmap);
  Stmt body = specializer.VisitStmt(kernel->body);
  Map<String, Any> ann = kernel->annotations;
  ann.Set("tessel.tile_specialized",
          String(text + ": every 16-byte vector of a row whole and aligned with its row (the "
                        "else branch is the general kernel)"));
  Stmt fast =
      WithSpan(For(kernel->loop_var, Substitute(kernel->min, vmap),
                   Substitute(kernel->extent, vmap), kernel->kind, body, kernel->thread_tag, ann),
               kernel->span);
  const std::vector<Buffer>& declared = specializer.declared();
  for (auto it = declared.rbegin(); it != declared.rend(); ++it) fast = DeclBuffer(*it, fast);
  return WithSpan(IfThenElse(cond, fast, FreshCopy(general)), kernel->span);
}

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel
