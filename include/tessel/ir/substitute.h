// Replacing variables by expressions in an expression or a statement: the one substitution the
// passes, the schedule primitives and the tile lowering share.
#ifndef TESSEL_IR_SUBSTITUTE_H_
#define TESSEL_IR_SUBSTITUTE_H_

#include <tessel/ir/functor.h>

#include <unordered_map>
#include <utility>

namespace tessel {
namespace ir {

using VarMap = std::unordered_map<const VarNode*, PrimExpr>;

// Every use of a variable of the map becomes its expression; binders are left as they are.
// Subclass it to substitute and rewrite in one walk.
class VarSubstituter : public StmtExprMutator {
 public:
  explicit VarSubstituter(VarMap vmap) : vmap_(std::move(vmap)) {}
  using StmtExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef<PrimExpr>(op) : it->second;
  }

 private:
  VarMap vmap_;
};

inline PrimExpr Substitute(const PrimExpr& e, const VarMap& vmap) {
  return VarSubstituter(vmap).VisitExpr(e);
}
inline Stmt Substitute(const Stmt& s, const VarMap& vmap) {
  return VarSubstituter(vmap).VisitStmt(s);
}

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_SUBSTITUTE_H_
