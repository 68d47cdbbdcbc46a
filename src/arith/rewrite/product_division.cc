// Common factors of a division's operands cancelled (see product_division.h).
#include "arith/rewrite/product_division.h"

#include <tessel/arith/int_interval.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>

#include <vector>

#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// A product as its non-constant factors and one constant coefficient.
struct Product {
  std::vector<const PrimExprNode*> factors;
  i128 coeff = 1;
};

constexpr size_t kMaxFactors = 16;

bool Flatten(const PrimExprNode* e, Product* p) {
  if (const auto* imm = e->IsInstance<IntImmNode>() ? static_cast<const IntImmNode*>(e) : nullptr) {
    p->coeff *= ConstValue(imm);
    // Past any dtype: such a product is not index arithmetic worth the trouble.
    return p->coeff > -(static_cast<i128>(1) << 64) && p->coeff < (static_cast<i128>(1) << 64);
  }
  if (e->IsInstance<MulNode>()) {
    const auto* m = static_cast<const MulNode*>(e);
    return Flatten(m->a.get(), p) && Flatten(m->b.get(), p);
  }
  if (p->factors.size() >= kMaxFactors) return false;
  p->factors.push_back(e);
  return true;
}

i128 Gcd(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// The exact interval of a product of these factors and coefficient.
IntInterval ExactProduct(const std::vector<const PrimExprNode*>& factors, i128 coeff,
                         const ConstIntBoundAnalyzer& bounds) {
  IntInterval r{coeff, coeff};
  for (const PrimExprNode* f : factors) r = MulInterval(r, bounds.Eval(f));
  return r;
}

PrimExpr Build(const std::vector<const PrimExprNode*>& factors, i128 coeff, DataType t) {
  PrimExpr r;
  for (const PrimExprNode* f : factors) {
    PrimExpr fe = GetRef<PrimExpr>(f);
    r = r.defined() ? Mul(r, fe) : fe;
  }
  if (coeff != 1 || !r.defined()) {
    PrimExpr c = IntImm(t, static_cast<int64_t>(coeff));
    r = r.defined() ? Mul(r, c) : c;
  }
  return r;
}

}  // namespace

std::optional<PrimExpr> CancelCommonFactors(const PrimExprNode* e, Analyzer* analyzer) {
  ExprKind k = KindOf(e);
  bool quotient = k == ExprKind::kDiv || k == ExprKind::kFloorDiv;
  if (!quotient && k != ExprKind::kMod && k != ExprKind::kFloorMod) return std::nullopt;
  const PrimExprNode* kids[3];
  KidsOf(e, k, kids);
  const PrimExprNode *a = kids[0], *b = kids[1];
  DataType t = e->dtype;
  if (!t.is_scalar() || !t.is_int_or_uint()) return std::nullopt;
  // One side may be a single factor (`x * 32 * x % x`); two non-products have nothing to cancel
  // that the rules do not already see.
  if (!a->IsInstance<MulNode>() && !b->IsInstance<MulNode>()) return std::nullopt;
  Product pa, pb;
  if (!Flatten(a, &pa) || !Flatten(b, &pb)) return std::nullopt;
  if (pa.coeff == 0 || pb.coeff == 0) return std::nullopt;
  // Common factors: each divisor factor matched with one equal dividend factor.
  std::vector<const PrimExprNode*> common, rest_a = pa.factors, rest_b;
  for (const PrimExprNode* f : pb.factors) {
    bool matched = false;
    for (size_t i = 0; i < rest_a.size(); ++i) {
      if (SameExpr(rest_a[i], f)) {
        common.push_back(f);
        rest_a.erase(rest_a.begin() + static_cast<std::ptrdiff_t>(i));
        matched = true;
        break;
      }
    }
    if (!matched) rest_b.push_back(f);
  }
  i128 g = Gcd(pa.coeff, pb.coeff);
  // Keep the divisor's constant positive where its sign is the only one cancelled.
  if (pb.coeff < 0) g = -g;
  if (common.empty() && (g == 1 || g == -1)) return std::nullopt;
  // A remainder by a constant keeps its form (`x * 8 % 64`, as index code and TVM write it; the
  // canonical stage has its own view of it).
  if (!quotient && common.empty() && pb.factors.empty()) return std::nullopt;
  i128 ca = pa.coeff / g, cb = pb.coeff / g;
  // No product of the input or of the result may wrap around (their mathematical values are
  // what the identities are about).
  const ConstIntBoundAnalyzer& bounds = analyzer->const_int_bound_analyzer();
  bool assume = analyzer->assume_no_overflow();
  auto fits = [&](const std::vector<const PrimExprNode*>& fs, i128 c) {
    return FitsOrAssumed(ExactProduct(fs, c, bounds), t, assume) && FitsInDType(t, c);
  };
  if (!fits(pa.factors, pa.coeff) || !fits(pb.factors, pb.coeff) || !fits(rest_a, ca) ||
      !fits(rest_b, cb) || !fits(common, g)) {
    return std::nullopt;
  }
  bool divisor_one = rest_b.empty() && cb == 1;
  PrimExpr num = Build(rest_a, ca, t);
  if (quotient) {
    if (divisor_one) return num;
    PrimExpr den = Build(rest_b, cb, t);
    return k == ExprKind::kDiv ? PrimExpr(Div(num, den)) : PrimExpr(FloorDiv(num, den));
  }
  if (divisor_one) return IntImm(t, 0);
  PrimExpr den = Build(rest_b, cb, t);
  PrimExpr rem = k == ExprKind::kMod ? PrimExpr(Mod(num, den)) : PrimExpr(FloorMod(num, den));
  // |a' % b'| < |b'|, so the product with k stays within |b' * k| = |b|, which fits.
  return Mul(rem, Build(common, g, t));
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
