// The LowerIntrinsics pass (contract in include/tessel/transform/lower_intrinsics.h).
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/lower_intrinsics.h>
#include <tessel/transform/pass.h>

#include <limits>
#include <string>
#include <unordered_map>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// The math ops that map one to one onto a libm function, by op name: the float64 name (float32
// adds the `f` suffix).
const std::unordered_map<std::string, std::string>& LibmNames() {
  static const std::unordered_map<std::string, std::string> names = {
      {"exp", "exp"},     {"exp2", "exp2"},   {"log", "log"},   {"log2", "log2"},
      {"sqrt", "sqrt"},   {"sin", "sin"},     {"cos", "cos"},   {"tanh", "tanh"},
      {"erf", "erf"},     {"floor", "floor"}, {"ceil", "ceil"}, {"round", "nearbyint"},
      {"trunc", "trunc"}, {"fabs", "fabs"},   {"pow", "pow"},   {"fmod", "fmod"},
  };
  return names;
}

bool IsExpanded(const std::string& name) {
  return name == "rsqrt" || name == "sigmoid" || name == "isnan" || name == "isinf";
}

class IntrinsicLowerer : public ExprMutator {
 public:
  explicit IntrinsicLowerer(std::string where) : where_(std::move(where)) {}

  using ExprMutator::VisitExpr_;

  PrimExpr VisitExpr_(const CallNode* op) override {
    PrimExpr visited = ExprMutator::VisitExpr_(op);
    const auto* call = visited.as<CallNode>();
    if (!call) return visited;
    const auto* opnode = call->op.as<OpNode>();
    if (!opnode) return visited;
    std::string name = opnode->name;
    bool is_abs = name == "abs";
    if (!LibmNames().count(name) && !IsExpanded(name) && !is_abs) return visited;
    // The dtype that decides the computation: the argument's for predicates, else the result's.
    bool predicate = name == "isnan" || name == "isinf";
    DataType t = predicate ? call->args[0].dtype() : call->dtype;
    bool vector = call->dtype.is_vector();
    for (const PrimExpr& a : call->args) vector = vector || a.dtype().is_vector();
    if (is_abs && !t.is_floating()) return visited;
    if (vector) {
      TVM_FFI_THROW(ValueError) << "LowerIntrinsics: vector call " << AsText(visited) << " ("
                                << call->dtype << ") in " << where_
                                << ": math ops are lowered for scalars only";
    }
    if (predicate && !t.is_floating()) return Bool(false);
    if (!t.is_floating()) {
      TVM_FFI_THROW(ValueError) << "LowerIntrinsics: " << name << " of " << t << " in " << where_
                                << " (" << AsText(visited) << "): needs a float dtype";
    }
    if (is_abs) name = "fabs";
    // float16/bfloat16 have no libm: compute in float32.
    DataType ct = t.bits() == 64 ? DataType::Float(64) : DataType::Float(32);
    Array<PrimExpr> args;
    for (const PrimExpr& a : call->args) args.push_back(a.dtype() == ct ? a : Cast(ct, a));
    PrimExpr result;
    if (name == "rsqrt") {
      result = Div(FloatImm(ct, 1.0), Libm("sqrt", ct, args));
    } else if (name == "sigmoid") {
      PrimExpr e = Libm("exp", ct, {Sub(FloatImm(ct, 0.0), args[0])});
      result = Div(FloatImm(ct, 1.0), Add(FloatImm(ct, 1.0), e));
    } else if (name == "isnan") {
      return SelfNotEqual(args[0]);
    } else if (name == "isinf") {
      return EQ(Libm("fabs", ct, args), FloatImm(ct, std::numeric_limits<double>::infinity()));
    } else {
      result = Libm(name, ct, args);
    }
    return result.dtype() == call->dtype ? result : Cast(call->dtype, result);
  }

 private:
  static PrimExpr Libm(const std::string& name, DataType ct, Array<PrimExpr> args) {
    std::string c_name = LibmNames().at(name);
    if (ct.bits() == 32) c_name += "f";
    Array<PrimExpr> call_args{StringImm(c_name)};
    for (const PrimExpr& a : args) call_args.push_back(a);
    return Call(ct, builtin::call_pure_extern(), call_args);
  }

  // x != x, with x bound once when evaluating it twice could cost or differ.
  PrimExpr SelfNotEqual(const PrimExpr& x) {
    if (x.as<VarNode>() || x.as<FloatImmNode>() || x.as<BufferLoadNode>()) return NE(x, x);
    Var v("isnan_arg", x.dtype());
    return Let(v, x, NE(v, v));
  }

  std::string where_;
};

std::string FunctionName(const PrimFunc& func) {
  if (auto sym = func.GetGlobalSymbol()) return "function '" + std::string(*sym) + "'";
  return "function <unnamed>";
}

class StmtLowerer : public StmtExprMutator {
 public:
  explicit StmtLowerer(std::string where) : lowerer_(std::move(where)) {}
  using StmtExprMutator::VisitExpr;
  PrimExpr VisitExpr(const PrimExpr& e) override { return lowerer_(e); }

 private:
  IntrinsicLowerer lowerer_;
};

PrimFunc LowerFunc(const PrimFunc& func, const std::string& where) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "LowerIntrinsics: undefined function";
  Stmt body = StmtLowerer(where).VisitStmt(func->body);
  return WithBody(func, body);
}

}  // namespace

PrimExpr LowerIntrinsics(const PrimExpr& expr) { return IntrinsicLowerer("an expression")(expr); }

PrimFunc LowerIntrinsics(const PrimFunc& func) { return LowerFunc(func, FunctionName(func)); }

IRModule LowerIntrinsics(const IRModule& mod) {
  return MapFunctions(mod, [](const String& name, const PrimFunc& f) {
    return LowerFunc(f, "function '" + std::string(name) + "'");
  });
}

Pass LowerIntrinsicsPass() {
  return CreateModulePass([](IRModule mod) { return LowerIntrinsics(mod); }, 0, "LowerIntrinsics");
}

}  // namespace transform
}  // namespace tessel
