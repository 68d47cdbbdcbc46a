// The SwizzleLayout pass (contract in include/tessel/transform/swizzle_layout.h).
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/swizzle_layout.h>
#include <tvm/ffi/error.h>

#include <string>
#include <unordered_map>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

int64_t SwizzleBytes(const AllocateNode* alloc) {
  auto it = alloc->annotations.find("tessel.swizzle_bytes");
  if (it == alloc->annotations.end()) return 0;
  auto v = (*it).second.try_cast<int64_t>();
  return v ? *v : -1;
}

namespace {

bool IsLate(const AllocateNode* alloc) {
  auto it = alloc->annotations.find(kSwizzleLateAttr);
  if (it == alloc->annotations.end()) return false;
  auto v = (*it).second.try_cast<bool>();
  return v && *v;
}

int Log2(int64_t v) {
  int k = 0;
  while ((int64_t{1} << k) < v) ++k;
  return k;
}

}  // namespace

// f ^ (((f >> (7 - log2 e)) & mask) << (4 - log2 e)) for the element index f.
PrimExpr SwizzledElement(const PrimExpr& f, int64_t elem_bytes, int64_t swizzle_bytes) {
  DataType t = f.dtype();
  int le = Log2(elem_bytes);
  PrimExpr row = bitwise_and(shift_right(f, MakeConst(t, int64_t{7 - le})),
                             MakeConst(t, swizzle_bytes / 16 - 1));
  return bitwise_xor(f, shift_left(row, MakeConst(t, int64_t{4 - le})));
}

namespace {

class Swizzler : public StmtExprMutator {
 public:
  Swizzler(std::string function, bool late) : function_(std::move(function)), late_(late) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override {
    int64_t bytes = SwizzleBytes(op);
    if (bytes != 0) declared_[op->buffer_var.get()] = bytes;
    if (bytes == 0 || IsLate(op) != late_) return StmtExprMutator::VisitStmt_(op);
    std::string name = op->buffer_var->name_hint;
    if (bytes != 32 && bytes != 64 && bytes != 128) {
      Fail("allocation " + name + ": tessel.swizzle_bytes must be 32, 64 or 128");
    }
    int64_t e = op->dtype.bytes();
    if (op->dtype.lanes() != 1 || e > 16 || (e & (e - 1)) != 0) {
      Fail("allocation " + name + " of " + op->dtype.str() +
           ": a swizzled layout needs scalar elements of at most 16 bytes");
    }
    swizzle_[op->buffer_var.get()] = bytes;
    return StmtExprMutator::VisitStmt_(op);
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr e = StmtExprMutator::VisitExpr_(op);
    const auto* l = e.as<BufferLoadNode>();
    auto it = swizzle_.find(l->buffer->data.get());
    if (it == swizzle_.end()) return e;
    return BufferLoad(l->buffer, {Index(l->buffer, l->indices, it->second)});
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    const auto* st = s.as<BufferStoreNode>();
    auto it = swizzle_.find(st->buffer->data.get());
    if (it == swizzle_.end()) return s;
    return WithSpan(
        BufferStore(st->buffer, st->value, {Index(st->buffer, st->indices, it->second)}), op->span);
  }

  PrimExpr VisitExpr_(const CallNode* op) override {
    auto o = op->op.as<Op>();
    if (o && (*o)->name == "ptx_wgmma_desc" && op->args.size() == 4) {
      const auto* addr = op->args[0].as<CallNode>();
      const BufferLoadNode* load = nullptr;
      if (addr && addr->op.same_as(builtin::address_of()) && addr->args.size() == 1) {
        load = addr->args[0].as<BufferLoadNode>();
      }
      auto mode = AsConstInt(op->args[3]);
      if (load && mode) {
        auto it = declared_.find(load->buffer->data.get());
        int64_t layout = it == declared_.end() ? 0 : it->second;
        if (layout != *mode) {
          Fail("ptx_wgmma_desc of " + std::string(load->buffer->name) + " says swizzle " +
               std::to_string(*mode) + ", but the buffer is allocated with " +
               (layout ? "tessel.swizzle_bytes " + std::to_string(layout) : "no swizzle"));
        }
      }
    }
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    TVM_FFI_THROW(ValueError) << "SwizzleLayout: function '" << function_ << "': " << what;
    TVM_FFI_UNREACHABLE();
  }

  // The formula reads and changes only the bits of f below its atom (8 rows of `bytes`), so the
  // terms of f that are multiples of the atom (a pipeline stage's offset) are added outside it:
  // the swizzled part then no longer depends on the stage, and the compiler computes it once.
  PrimExpr Swizzle(const PrimExpr& f, int64_t elem_bytes, int64_t bytes) {
    DataType t = f.dtype();
    PrimExpr atom = MakeConst(t, 8 * bytes / elem_bytes), zero = MakeConst(t, int64_t{0});
    auto [outer, inner] = PartitionTerms(
        f, [&](const PrimExpr& e) { return analyzer_.CanProve(EQ(floormod(e, atom), zero)); });
    if (!outer.defined() || !inner.defined()) return SwizzledElement(f, elem_bytes, bytes);
    return add(outer, SwizzledElement(inner, elem_bytes, bytes));
  }

  PrimExpr Index(const Buffer& buf, const Array<PrimExpr>& indices, int64_t bytes) {
    if (indices.size() != 1) Fail(std::string(buf->name) + " is not flat (run FlattenBuffer)");
    const PrimExpr& idx = indices[0];
    int64_t e = buf->dtype.bytes();
    if (idx.dtype().lanes() == 1) return Swizzle(idx, e, bytes);
    const auto* ramp = idx.as<RampNode>();
    auto stride = ramp ? AsConstInt(ramp->stride) : std::nullopt;
    // Lanes that divide the chunk, from a multiple of their count, stay in one chunk.
    int64_t chunk = 16 / e;
    if (ramp && stride && *stride == 1 && ramp->lanes * e <= 16 && chunk % ramp->lanes == 0 &&
        analyzer_.CanProve(EQ(floormod(ramp->base, MakeConst(ramp->base.dtype(), ramp->lanes)),
                              MakeConst(ramp->base.dtype(), int64_t{0})))) {
      return Ramp(Swizzle(ramp->base, e, bytes), ramp->stride, ramp->lanes);
    }
    Fail("a vector access of " + std::string(buf->name) +
         " that does not lie in one 16-byte chunk of its swizzled layout");
  }

  std::string function_;
  bool late_;
  std::unordered_map<const VarNode*, int64_t> swizzle_;   // rewritten by this run
  std::unordered_map<const VarNode*, int64_t> declared_;  // every swizzled allocation
  arith::Analyzer analyzer_;
};

bool HasSwizzle(const PrimFunc& f, bool late) {
  bool found = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* a = n.as<AllocateNode>()) {
      found = found || (SwizzleBytes(a) != 0 && IsLate(a) == late);
    }
  });
  return found;
}

}  // namespace

PrimFunc SwizzleLayout(const PrimFunc& func, bool late) {
  if (!HasSwizzle(func, late)) return func;
  std::string name = func.GetGlobalSymbol().value_or("<unnamed>");
  Swizzler s(name, late);
  return WithBody(func, s.VisitStmt(func->body));
}

IRModule SwizzleLayout(const IRModule& mod) {
  return MapFunctions(mod, [](const String&, const PrimFunc& f) { return SwizzleLayout(f); });
}

Pass SwizzleLayoutPass() {
  return CreatePrimFuncPass([](PrimFunc f) { return SwizzleLayout(f); }, 0, "SwizzleLayout");
}

Pass SwizzleLayoutLatePass() {
  return CreatePrimFuncPass([](PrimFunc f) { return SwizzleLayout(f, true); }, 0,
                            "SwizzleLayoutLate");
}

}  // namespace transform
}  // namespace tessel
