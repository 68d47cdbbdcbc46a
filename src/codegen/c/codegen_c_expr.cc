// Expressions to C. Scalars are written with C operators where C's semantics equal the IR's
// (expr.h) and with prelude helpers where they do not (signed wrap-around, floor division, min/max,
// float16/bfloat16 arithmetic done in float). Vectors: see vector_lib.cc.
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tvm/ffi/error.h>

#include <cmath>
#include <cstdio>

#include "codegen/c/codegen_c.h"

namespace tessel {
namespace codegen {

namespace {

using namespace ir;  // NOLINT(build/namespaces)

const char* BinOpName(BinOp op) {
  static const char* names[] = {"add",      "sub", "mul", "truncdiv", "truncmod", "floordiv",
                                "floormod", "min", "max", "eq",       "ne",       "lt",
                                "le",       "gt",  "ge",  "and",      "or"};
  return names[static_cast<int>(op)];
}
const char* BinOpSymbol(BinOp op) {
  static const char* syms[] = {"+",  "-",  "*", "/",  "%", "",   "",   "",  "",
                               "==", "!=", "<", "<=", ">", ">=", "&&", "||"};
  return syms[static_cast<int>(op)];
}
bool IsCompare(BinOp op) { return op >= BinOp::kEQ && op <= BinOp::kGE; }
bool IsSmallFloat(DataType t) { return t.is_floating() && t.bits() == 16; }

std::string ToF32(DataType t, const std::string& s) {
  return std::string(t.is_bfloat() ? "tsl_bf16_to_f32(" : "tsl_f16_to_f32(") + s + ")";
}
std::string FromF32(DataType t, const std::string& s) {
  return std::string(t.is_bfloat() ? "tsl_f32_to_bf16(" : "tsl_f32_to_f16(") + s + ")";
}
std::string Call2(const std::string& f, const std::string& a, const std::string& b) {
  return f + "(" + a + ", " + b + ")";
}
std::string VecSuffix(DataType t) {
  return TypeSuffix(t.element_of()) + "x" + std::to_string(t.lanes());
}

}  // namespace

// `a op b` on scalars of type t (the operands' type).
std::string ScalarBinary(BinOp op, DataType t, const std::string& a, const std::string& b,
                         const std::string& fn) {
  if (IsSmallFloat(t)) {
    std::string r = ScalarBinary(op, DataType::Float(32), ToF32(t, a), ToF32(t, b), fn);
    return IsCompare(op) ? r : FromF32(t, r);
  }
  if (IsCompare(op) || op == BinOp::kAnd || op == BinOp::kOr) {
    return "(" + a + " " + BinOpSymbol(op) + " " + b + ")";
  }
  if (t.is_bool() || t.is_handle()) {
    Unsupported(std::string(BinOpName(op)) + " of " + t.str() + " values", fn);
  }
  if (t.is_float()) {
    bool f = t.bits() == 32;
    switch (op) {
      case BinOp::kAdd:
      case BinOp::kSub:
      case BinOp::kMul:
      case BinOp::kDiv:
        return "(" + a + " " + BinOpSymbol(op) + " " + b + ")";
      case BinOp::kMod:
        return Call2(f ? "fmodf" : "fmod", a, b);
      case BinOp::kFloorDiv:
        return Call2(f ? "tsl_floordiv_f32" : "tsl_floordiv_f64", a, b);
      case BinOp::kFloorMod:
        return Call2(f ? "tsl_floormod_f32" : "tsl_floormod_f64", a, b);
      case BinOp::kMin:
        return Call2(f ? "tsl_min_f32" : "tsl_min_f64", a, b);
      case BinOp::kMax:
        return Call2(f ? "tsl_max_f32" : "tsl_max_f64", a, b);
      default:
        break;
    }
  }
  std::string s = TypeSuffix(t);
  bool wide_unsigned = t.is_uint() && t.bits() >= 32;
  switch (op) {
    case BinOp::kAdd:
    case BinOp::kSub:
    case BinOp::kMul:
      if (wide_unsigned) return "(" + a + " " + BinOpSymbol(op) + " " + b + ")";
      return Call2("tsl_" + std::string(BinOpName(op)) + "_" + s, a, b);
    default:
      return Call2("tsl_" + std::string(BinOpName(op)) + "_" + s, a, b);
  }
}

std::optional<std::string> PowerOfTwoFloor(BinOp op, DataType t, const std::string& a,
                                           const PrimExpr& b) {
  if ((op != BinOp::kFloorDiv && op != BinOp::kFloorMod) || !t.is_int() || !t.is_scalar() ||
      (t.bits() != 32 && t.bits() != 64)) {
    return std::nullopt;
  }
  const auto* c = b.as<IntImmNode>();
  if (!c || c->value <= 0 || (c->value & (c->value - 1)) != 0) return std::nullopt;
  if (op == BinOp::kFloorMod) return "(" + a + " & " + IntLiteral(t, c->value - 1) + ")";
  int shift = 0;
  while ((int64_t{1} << shift) < c->value) ++shift;
  return "(" + a + " >> " + std::to_string(shift) + ")";
}

// A scalar conversion with C semantics; float16/bfloat16 go through float (exact) and come back
// with one round-to-nearest-even step.
std::string CastScalar(DataType to, DataType from, const std::string& s) {
  if (to == from) return s;
  if (IsSmallFloat(from)) {
    if (IsSmallFloat(to)) return FromF32(to, ToF32(from, s));
    return CastScalar(to, DataType::Float(32), ToF32(from, s));
  }
  if (to.is_bool()) return "(" + s + " != 0)";
  if (IsSmallFloat(to)) {
    if (from.is_float() && from.bits() == 32) return FromF32(to, s);
    return std::string(to.is_bfloat() ? "tsl_f64_to_bf16" : "tsl_f64_to_f16") + "((double)(" + s +
           "))";
  }
  return "((" + CType(to) + ")(" + s + "))";
}

std::string IntLiteral(DataType t, int64_t v) {
  if (t.is_bool()) return v ? "1" : "0";
  if (t.is_int() && t.bits() == 32) {
    if (v == INT32_MIN) return "(-2147483647 - 1)";
    return std::to_string(v);
  }
  if (t.is_int() && t.bits() == 64) {
    if (v == INT64_MIN) return "INT64_MIN";
    return "INT64_C(" + std::to_string(v) + ")";
  }
  if (t.is_uint() && t.bits() == 64) {
    return "UINT64_C(" + std::to_string(static_cast<uint64_t>(v)) + ")";
  }
  if (t.is_uint() && t.bits() == 32) return std::to_string(v) + "u";
  return "((" + CType(t) + ")" + std::to_string(v) + ")";
}

static std::string DoubleText(double v, int digits) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string FloatLiteral(DataType t, double v) {
  if (t.is_float() && t.bits() == 32) {
    std::string s = DoubleText(v, 9);
    if (s[0] == 'N' || s[0] == 'I' || s[0] == '(') return s;
    return s + "f";
  }
  if (t.is_float() && t.bits() == 64) return DoubleText(v, 17);
  return std::string(t.is_bfloat() ? "tsl_f64_to_bf16(" : "tsl_f64_to_f16(") + DoubleText(v, 17) +
         ")";
}

namespace {

// Functions that an included header declares; any other extern gets a prototype.
bool DeclaredByHeaders(const std::string& name) {
  static const std::set<std::string> known = {
      "exp",    "expf",    "exp2",   "exp2f",   "expm1",    "expm1f",    "log",       "logf",
      "log2",   "log2f",   "log10",  "log10f",  "log1p",    "log1pf",    "sqrt",      "sqrtf",
      "cbrt",   "cbrtf",   "sin",    "sinf",    "cos",      "cosf",      "tan",       "tanf",
      "asin",   "asinf",   "acos",   "acosf",   "atan",     "atanf",     "atan2",     "atan2f",
      "sinh",   "sinhf",   "cosh",   "coshf",   "tanh",     "tanhf",     "asinh",     "asinhf",
      "acosh",  "acoshf",  "atanh",  "atanhf",  "erf",      "erff",      "erfc",      "erfcf",
      "tgamma", "tgammaf", "lgamma", "lgammaf", "pow",      "powf",      "floor",     "floorf",
      "ceil",   "ceilf",   "round",  "roundf",  "trunc",    "truncf",    "nearbyint", "nearbyintf",
      "rint",   "rintf",   "fabs",   "fabsf",   "fmod",     "fmodf",     "fmin",      "fminf",
      "fmax",   "fmaxf",   "hypot",  "hypotf",  "copysign", "copysignf", "ldexp",     "ldexpf",
      "fma",    "fmaf",    "isnan",  "isinf",   "isfinite", "signbit",   "memcpy",    "memset",
      "abs",    "labs",    "llabs"};
  return known.count(name) != 0;
}

class ExprEmitter : public ExprFunctor<std::string(const PrimExpr&)> {
 public:
  explicit ExprEmitter(CEmitter* cg) : cg_(cg) {}

  std::string VisitExpr_(const IntImmNode* op) override { return IntLiteral(op->dtype, op->value); }
  std::string VisitExpr_(const FloatImmNode* op) override {
    return FloatLiteral(op->dtype, op->value);
  }
  std::string VisitExpr_(const StringImmNode* op) override {
    Unsupported("a string constant outside a call", cg_->symbol());
  }
  std::string VisitExpr_(const VarNode* op) override { return cg_->VarRef(GetRef<Var>(op)); }
  std::string VisitExpr_(const CastNode* op) override {
    std::string v = VisitExpr(op->value);
    DataType from = op->value.dtype(), to = op->dtype;
    if (to.is_scalar()) return CastScalar(to, from, v);
    std::string name = "tsl_vcast_" + VecSuffix(to) + "_" + VecSuffix(from);
    cg_->vec_->PerLane(name, to, {from},
                       CastScalar(to.element_of(), from.element_of(), VectorLib::LaneOf(0, from)));
    return name + "(" + v + ")";
  }

#define TESSEL_BINARY(Name)                                 \
  std::string VisitExpr_(const Name##Node* op) override {   \
    return Binary(BinOp::k##Name, op->a, op->b, op->dtype); \
  }
  TESSEL_CODEGEN_FOR_EACH_BINOP(TESSEL_BINARY)
#undef TESSEL_BINARY

  std::string VisitExpr_(const NotNode* op) override {
    std::string a = VisitExpr(op->a);
    if (op->dtype.is_vector()) return "(~" + a + ")";
    return "(!" + a + ")";
  }

  std::string VisitExpr_(const SelectNode* op) override {
    std::string c = VisitExpr(op->condition), t = VisitExpr(op->true_value),
                f = VisitExpr(op->false_value);
    if (op->dtype.is_scalar()) return "(" + c + " ? " + t + " : " + f + ")";
    DataType ct = op->condition.dtype();
    std::string name =
        "tsl_vselect_" + VecSuffix(op->dtype) + (ct.is_vector() ? "" : std::string("_s"));
    cg_->vec_->PerLane(name, op->dtype, {ct, op->dtype, op->dtype},
                       "(" + VectorLib::LaneOf(0, ct) + " ? " + VectorLib::LaneOf(1, op->dtype) +
                           " : " + VectorLib::LaneOf(2, op->dtype) + ")");
    return name + "(" + c + ", " + t + ", " + f + ")";
  }

  std::string VisitExpr_(const RampNode* op) override {
    DataType elem = op->base.dtype();
    std::string name = "tsl_ramp_" + VecSuffix(op->dtype);
    std::string k = "(" + CType(elem) + ")k";
    cg_->vec_->PerLane(
        name, op->dtype, {elem, elem},
        ScalarBinary(BinOp::kAdd, elem, "a", ScalarBinary(BinOp::kMul, elem, k, "b", cg_->symbol()),
                     cg_->symbol()));
    return name + "(" + VisitExpr(op->base) + ", " + VisitExpr(op->stride) + ")";
  }

  std::string VisitExpr_(const BroadcastNode* op) override {
    DataType elem = op->value.dtype();
    std::string name = "tsl_bcast_" + VecSuffix(op->dtype);
    if (op->dtype.is_bool()) {
      cg_->vec_->PerLane(name, op->dtype, {elem}, "a");
    } else {
      // One initializer, not a per-lane loop: GCC turns the loop into one masked broadcast per
      // lane, the initializer into a single vbroadcastss.
      std::string vt = cg_->vec_->Type(op->dtype);
      std::string init;
      for (int k = 0; k < op->dtype.lanes(); ++k) init += k ? ", a" : "a";
      cg_->vec_->Helper(name, "TSL_HELPER " + vt + " " + name + "(" + CType(elem) +
                                  " a) {\n  return (" + vt + "){" + init + "};\n}\n");
    }
    return name + "(" + VisitExpr(op->value) + ")";
  }

  std::string VisitExpr_(const ShuffleNode* op) override { Unsupported("Shuffle", cg_->symbol()); }

  std::string VisitExpr_(const LetNode* op) override {
    std::string value = VisitExpr(op->value);
    bool was_defined = cg_->IsDefined(op->var);
    cg_->Define(op->var);
    std::string decl = cg_->DeclType(op->var) + " " + cg_->VarRef(op->var);
    std::string body = VisitExpr(op->body);
    if (!was_defined) cg_->Undefine(op->var);
    return "({ " + decl + " = " + value + "; " + body + "; })";
  }

  std::string VisitExpr_(const BufferLoadNode* op) override {
    if (op->indices.size() != 1) {
      Unsupported("a BufferLoad of " + std::string(op->buffer->name) + " with " +
                      std::to_string(op->indices.size()) + " indices (not flattened)",
                  cg_->symbol());
    }
    DataType t = op->dtype;
    const PrimExpr& index = op->indices[0];
    std::string ptr = Pointer(op->buffer->data, t.element_of());
    if (t.is_scalar()) return ptr + "[" + VisitExpr(index) + "]";
    std::string sfx = VecSuffix(t), vt = cg_->vec_->Type(t);
    std::string st = StorageCType(t);
    if (const auto* ramp = index.as<RampNode>()) {
      auto stride = AsConstInt(ramp->stride);
      if (stride && *stride == 1 && !t.is_bool()) {
        std::string name = "tsl_vload_" + sfx;
        cg_->vec_->Helper(name, "TSL_HELPER " + vt + " " + name + "(const " + st + "* p) {\n  " +
                                    vt + " r;\n  memcpy(&r, p, sizeof r);\n  return r;\n}\n");
        return name + "(" + ptr + " + " + VisitExpr(ramp->base) + ")";
      }
    }
    DataType it = index.dtype();
    std::string name = "tsl_vgather_" + sfx + "_" + VecSuffix(it);
    std::string lane = t.is_bool() ? "(p[i[k]] ? -1 : 0)" : "p[i[k]]";
    cg_->vec_->Helper(name, "TSL_HELPER " + vt + " " + name + "(const " + st + "* p, " +
                                cg_->vec_->Type(it) + " i) {\n  " + vt +
                                " r;\n  for (int k = 0; k < " + std::to_string(t.lanes()) +
                                "; ++k) r[k] = " + lane + ";\n  return r;\n}\n");
    return name + "(" + ptr + ", " + VisitExpr(index) + ")";
  }

  std::string VisitExpr_(const CallNode* op) override;

  // The C pointer to elements of `elem` for handle `data`.
  std::string Pointer(const Var& data, DataType elem) {
    std::string name = cg_->VarRef(data);
    std::string want = StorageCType(elem);
    if (cg_->defined_.at(data.get()) == want) return name;
    return "((" + want + "*)" + name + ")";
  }

 private:
  std::string Binary(BinOp op, const PrimExpr& ea, const PrimExpr& eb, DataType result) {
    std::string a = VisitExpr(ea), b = VisitExpr(eb);
    DataType t = ea.dtype();
    if (t.is_scalar()) {
      if (cg_->COperatorExact(op, ea, eb)) {
        return "(" + a + " " +
               (op == BinOp::kFloorDiv   ? "/"
                : op == BinOp::kFloorMod ? "%"
                                         : BinOpSymbol(op)) +
               " " + b + ")";
      }
      if (auto shifted = PowerOfTwoFloor(op, t, a, eb)) return *shifted;
      return ScalarBinary(op, t, a, b, cg_->symbol());
    }
    DataType elem = t.element_of();
    cg_->vec_->Type(t);
    if (IsCompare(op) && !IsSmallFloat(elem)) {
      cg_->vec_->Type(result);
      std::string r = "(" + a + " " + BinOpSymbol(op) + " " + b + ")";
      DataType lane = LaneType(elem);
      if (lane.bits() == 32) return r;
      return "__builtin_convertvector(" + r + ", " + cg_->vec_->Type(result) + ")";
    }
    if (op == BinOp::kAnd) return "(" + a + " & " + b + ")";
    if (op == BinOp::kOr) return "(" + a + " | " + b + ")";
    bool arith = op == BinOp::kAdd || op == BinOp::kSub || op == BinOp::kMul;
    if (elem.is_float() && elem.bits() >= 32 && (arith || op == BinOp::kDiv)) {
      return "(" + a + " " + BinOpSymbol(op) + " " + b + ")";
    }
    if (elem.is_int_or_uint() && arith) {
      std::string r;
      if (elem.is_uint()) return "(" + a + " " + BinOpSymbol(op) + " " + b + ")";
      std::string ut = cg_->vec_->Type(DataType::UInt(elem.bits(), t.lanes()));
      return "((" + CType(t) + ")((" + ut + ")" + a + " " + BinOpSymbol(op) + " (" + ut + ")" + b +
             "))";
    }
    std::string name = "tsl_v" + std::string(BinOpName(op)) + "_" + VecSuffix(t);
    cg_->vec_->PerLane(
        name, result, {t, t},
        ScalarBinary(op, elem, VectorLib::LaneOf(0, t), VectorLib::LaneOf(1, t), cg_->symbol()));
    return Call2(name, a, b);
  }

  std::string ScalarCall(const CallNode* op, const std::string& name,
                         const std::vector<std::string>& args);

  CEmitter* cg_;
};

std::string ExprEmitter::VisitExpr_(const CallNode* op) {
  const std::string& fn = cg_->symbol();
  auto opref = op->op.as<Op>();
  if (!opref) Unsupported("a call of another function", fn);
  std::string name = (*opref)->name;
  bool is_extern = name == "call_extern" || name == "call_pure_extern";
  size_t first = is_extern ? 1 : 0;
  std::string callee;
  if (is_extern) {
    const auto* s = op->args.size() ? op->args[0].as<StringImmNode>() : nullptr;
    if (!s) Unsupported(name + " without a function name", fn);
    callee = s->value;
  }
  if (name == "address_of") {
    const auto* load = op->args[0].as<BufferLoadNode>();
    if (!load || load->indices.size() != 1) Unsupported("address_of of a non-flat load", fn);
    return "((void*)(" + Pointer(load->buffer->data, load->dtype.element_of()) + " + " +
           VisitExpr(load->indices[0]) + "))";
  }
  if (name == "assume") return "1";
  std::vector<std::string> args;
  for (size_t i = first; i < op->args.size(); ++i) args.push_back(VisitExpr(op->args[i]));
  if (op->dtype.is_scalar() || name == "reinterpret") {
    if (is_extern) name = callee;
    return ScalarCall(op, name, args);
  }
  // Vectors: lane-wise application of the scalar code.
  if (name == "if_then_else") {
    Unsupported("a vector if_then_else (only the chosen side may be evaluated)", fn);
  }
  if (name == "likely") return args[0];
  if (name == "bitwise_and" || name == "bitwise_or" || name == "bitwise_xor") {
    const char* sym = name == "bitwise_and" ? " & " : name == "bitwise_or" ? " | " : " ^ ";
    return "(" + args[0] + sym + args[1] + ")";
  }
  if (name == "bitwise_not") return "(~" + args[0] + ")";
  std::vector<DataType> types;
  std::vector<std::string> lanes;
  for (size_t i = first; i < op->args.size(); ++i) {
    DataType at = op->args[i].dtype();
    lanes.push_back(VectorLib::LaneOf(static_cast<int>(types.size()), at));
    types.push_back(at);
  }
  std::string helper =
      "tsl_v" + std::string(is_extern ? callee : name) + "_" + VecSuffix(op->dtype);
  for (DataType at : types) helper += "_" + (at.is_vector() ? VecSuffix(at) : TypeSuffix(at));
  // The scalar form of this call, applied to lane k.
  auto scalar_call = ScalarCall(op, is_extern ? callee : name, lanes);
  cg_->vec_->PerLane(helper, op->dtype, types, scalar_call);
  std::string out = helper + "(";
  for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
  return out + ")";
}

std::string ExprEmitter::ScalarCall(const CallNode* op, const std::string& name,
                                    const std::vector<std::string>& args) {
  const std::string& fn = cg_->symbol();
  DataType t = op->dtype.element_of();
  std::string opname = op->op.as<Op>().value()->name;
  if (opname == "call_extern" || opname == "call_pure_extern") {
    if (!DeclaredByHeaders(name) && cg_->externs_ != nullptr) {
      std::string proto = "extern " + CType(t) + " " + name + "(";
      for (size_t i = 1; i < op->args.size(); ++i) {
        proto += (i > 1 ? ", " : "") + CType(op->args[i].dtype().element_of());
      }
      proto += std::string(op->args.size() == 1 ? "void" : "") + ");\n";
      auto it = cg_->externs_->find(name);
      if (it != cg_->externs_->end() && it->second != proto) {
        Unsupported("calls of extern " + name + " with two different signatures", fn);
      }
      (*cg_->externs_)[name] = proto;
    }
    std::string out = name + "(";
    for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
    return out + ")";
  }
  if (opname == "atomic_add_at") {
    DataType vt = op->args[1].dtype();
    if (vt.is_int_or_uint() && (vt.bits() == 32 || vt.bits() == 64)) {
      return "((void)__atomic_fetch_add((" + CType(vt) + "*)" + args[0] + ", " + args[1] +
             ", __ATOMIC_RELAXED))";
    }
    std::string helper = vt.is_bfloat() && vt.bits() == 16 ? "bf16"
                         : !vt.is_float()                  ? ""
                         : vt.bits() == 16                 ? "f16"
                         : vt.bits() == 32                 ? "f32"
                         : vt.bits() == 64                 ? "f64"
                                                           : "";
    if (helper.empty() || !vt.is_scalar()) {
      Unsupported("atomic_add_at of " + vt.str() +
                      " (the C backend adds int/uint of 32 or 64 bits, float16, bfloat16, float32 "
                      "and float64)",
                  fn);
    }
    return "tsl_atomic_add_" + helper + "(" + args[0] + ", " + args[1] + ")";
  }
  DataType at = op->args.size() ? op->args[0].dtype().element_of() : t;
  std::string c = CType(t);
  if (opname == "if_then_else") return "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")";
  if (opname == "likely") return "__builtin_expect(!!(" + args[0] + "), 1)";
  if (opname == "shift_left") {
    if (t.is_uint() && t.bits() >= 32) return "(" + args[0] + " << " + args[1] + ")";
    return Call2("tsl_shl_" + TypeSuffix(t), args[0], args[1]);
  }
  if (opname == "shift_right") return "((" + c + ")(" + args[0] + " >> " + args[1] + "))";
  if (opname == "bitwise_and") return "((" + c + ")(" + args[0] + " & " + args[1] + "))";
  if (opname == "bitwise_or") return "((" + c + ")(" + args[0] + " | " + args[1] + "))";
  if (opname == "bitwise_xor") return "((" + c + ")(" + args[0] + " ^ " + args[1] + "))";
  if (opname == "bitwise_not") {
    if (t.is_bool()) return "(!" + args[0] + ")";
    return "((" + c + ")(~" + args[0] + "))";
  }
  if (opname == "reinterpret") {
    DataType from = op->args[0].dtype();
    if (from.bits() * from.lanes() != op->dtype.bits() * op->dtype.lanes()) {
      Unsupported("reinterpret from " + from.str() + " to " + op->dtype.str() + " (sizes differ)",
                  fn);
    }
    std::string ft = from.is_vector() ? cg_->vec_->Type(from) : CType(from);
    std::string tt = op->dtype.is_vector() ? cg_->vec_->Type(op->dtype) : CType(op->dtype);
    return "({ " + ft + " tsl_s = " + args[0] + "; " + tt +
           " tsl_r; memcpy(&tsl_r, &tsl_s, sizeof tsl_r); tsl_r; })";
  }
  if (opname == "popcount" || opname == "clz") {
    if (!at.is_int_or_uint()) Unsupported(opname + " of " + at.str(), fn);
    int bits = at.bits();
    std::string u = "(uint" + std::to_string(bits) + "_t)(" + args[0] + ")";
    if (opname == "popcount") {
      if (bits == 64) return "((" + c + ")__builtin_popcountll(" + u + "))";
      return "((" + c + ")__builtin_popcount((uint32_t)" + u + "))";
    }
    if (bits == 64) {
      return "({ uint64_t tsl_u = " + u + "; (" + c +
             ")(tsl_u == 0 ? 64 : __builtin_clzll(tsl_u)); })";
    }
    return "({ uint32_t tsl_u = (uint32_t)" + u + "; (" + c + ")(tsl_u == 0 ? " +
           std::to_string(bits) + " : __builtin_clz(tsl_u) - " + std::to_string(32 - bits) +
           "); })";
  }
  if (opname == "abs") {
    if (IsSmallFloat(t)) return "((uint16_t)(" + args[0] + " & 0x7FFFu))";
    if (t.is_float()) return std::string(t.bits() == 32 ? "fabsf(" : "fabs(") + args[0] + ")";
    if (t.is_int_or_uint()) return "tsl_abs_" + TypeSuffix(t) + "(" + args[0] + ")";
  }
  if (opname == "ret") Unsupported("op ret inside an expression", fn);
  Unsupported("unsupported op " + opname, fn);
}

}  // namespace

std::string CEmitter::Expr(const PrimExpr& e) { return ExprEmitter(this)(e); }

std::string CEmitter::DeclType(const Var& v) {
  if (v.dtype().is_vector()) return vec_->Type(v.dtype());
  if (v.dtype().is_handle() && !v->pointee.is_void()) return StorageCType(v->pointee) + "*";
  return CType(v.dtype());
}

std::string CEmitter::VarRef(const Var& v) {
  if (!defined_.count(v.get())) {
    Unsupported("variable '" + std::string(v->name_hint) + "' used where it is not defined",
                symbol_);
  }
  return names_->Get(v);
}

std::string CEmitter::Store(const BufferStoreNode* op) {
  if (op->indices.size() != 1) {
    Unsupported("a BufferStore to " + std::string(op->buffer->name) + " with " +
                    std::to_string(op->indices.size()) + " indices (not flattened)",
                symbol_);
  }
  ExprEmitter ex(this);
  DataType t = op->value.dtype();
  std::string ptr = ex.Pointer(op->buffer->data, t.element_of());
  std::string value = ex(op->value);
  const PrimExpr& index = op->indices[0];
  if (t.is_scalar()) return ptr + "[" + ex(index) + "] = " + value + ";";
  std::string sfx = VecSuffix(t), vt = vec_->Type(t), st = StorageCType(t);
  if (const auto* ramp = index.as<ir::RampNode>()) {
    auto stride = ir::AsConstInt(ramp->stride);
    if (stride && *stride == 1 && !t.is_bool()) {
      std::string name = "tsl_vstore_" + sfx;
      vec_->Helper(name, "TSL_HELPER void " + name + "(" + st + "* p, " + vt +
                             " v) {\n  memcpy(p, &v, sizeof v);\n}\n");
      return name + "(" + ptr + " + " + ex(ramp->base) + ", " + value + ");";
    }
  }
  DataType it = index.dtype();
  std::string name = "tsl_vscatter_" + sfx + "_" + VecSuffix(it);
  std::string lane = t.is_bool() ? "(uint8_t)(v[k] != 0)" : "v[k]";
  vec_->Helper(name, "TSL_HELPER void " + name + "(" + st + "* p, " + vec_->Type(it) + " i, " + vt +
                         " v) {\n  for (int k = 0; k < " + std::to_string(t.lanes()) +
                         "; ++k) p[i[k]] = " + lane + ";\n}\n");
  return name + "(" + ptr + ", " + ex(index) + ", " + value + ");";
}

}  // namespace codegen
}  // namespace tessel
