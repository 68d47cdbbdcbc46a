// Expressions and attribute values in the text format (docs/text_format.md, "Expressions").
//
// Parentheses: an operand is parenthesized exactly when its own binding strength is weaker than
// its position requires: a left operand needs the operator's strength, a right operand one more
// (left associativity), and both operands of a comparison one more (comparisons never chain).
#include <tessel/ir/builtin.h>
#include <tessel/ir/builtin_tile.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "ir/printer_impl.h"

namespace tessel {
namespace ir {
namespace printer {
namespace {

enum class CallForm { kInfix, kPrefix, kCall };

CallForm FormOf(const CallNode* call) {
  const auto* op = call->op.as<OpNode>();
  if (op == nullptr || !call->annotations.empty()) return CallForm::kCall;
  if (op->print_style == OpPrintStyle::kInfix && call->args.size() == 2 &&
      call->args[0].dtype() == call->args[1].dtype() && call->dtype == call->args[0].dtype()) {
    return CallForm::kInfix;
  }
  if (op->print_style == OpPrintStyle::kPrefix && call->args.size() == 1 &&
      call->dtype == call->args[0].dtype()) {
    return CallForm::kPrefix;
  }
  return CallForm::kCall;
}

// The result dtype the parser infers for `T.<op>(args)` without a dtype keyword.
std::optional<DataType> ImpliedDType(const OpNode* op, const Array<PrimExpr>& args) {
  // The parser types a call without arguments (T.pdl_sync()) int32.
  if (args.empty()) return DataType::Int(32);
  if (op->name == "if_then_else") {
    if (args.size() < 2) return std::nullopt;
    return args[1].dtype();
  }
  if (op->name == "isnan" || op->name == "isinf") return DataType::Bool(args[0].dtype().lanes());
  if (op->name == "address_of" || op->name == "tile_region") return DataType::Handle();
  if (IsTileOp(op->name) || op->name == "atomic_add_at") return DataType::Int(32);
  return args[0].dtype();
}

bool IsInt32Imm(const PrimExpr& e) {
  const auto* imm = e.as<IntImmNode>();
  return imm != nullptr && imm->dtype == DataType::Int(32);
}

bool SameExpr(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return true;
  const auto* x = a.as<IntImmNode>();
  const auto* y = b.as<IntImmNode>();
  if (x != nullptr || y != nullptr) {
    return x != nullptr && y != nullptr && x->value == y->value && x->dtype == y->dtype;
  }
  return tvm::ffi::StructuralEqual::Equal(a, b);
}

void AppendDType(std::string* out, DataType t) {
  out->push_back('"');
  out->append(t.str());
  out->push_back('"');
}

}  // namespace

int Printer::PrecOf(const PrimExpr& e) const {
  switch (KindOf(e.get())) {
    case ExprKind::kIntImm: {
      const auto* imm = static_cast<const IntImmNode*>(e.get());
      return imm->dtype == DataType::Int(32) && imm->value < 0 ? kPrecUnary : kPrecAtom;
    }
    case ExprKind::kAdd:
    case ExprKind::kSub:
      return kPrecAdd;
    case ExprKind::kMul:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
      return kPrecMul;
    case ExprKind::kDiv:
      return e.dtype().is_floating() ? kPrecMul : kPrecAtom;
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE:
      return kPrecCmp;
    case ExprKind::kAnd:
      return kPrecAnd;
    case ExprKind::kOr:
      return kPrecOr;
    case ExprKind::kNot:
      return kPrecNot;
    case ExprKind::kCall: {
      const auto* call = static_cast<const CallNode*>(e.get());
      switch (FormOf(call)) {
        case CallForm::kInfix:
          return call->op.as<OpNode>()->print_precedence;
        case CallForm::kPrefix:
          return kPrecUnary;
        case CallForm::kCall:
          return kPrecAtom;
      }
      return kPrecAtom;
    }
    default:
      return kPrecAtom;
  }
}

void Printer::PrintOperand(const PrimExpr& e, int min_prec, bool typed_int) {
  if (typed_int && IsInt32Imm(e)) {
    out.append("T.int32(");
    out.append(std::to_string(e.as<IntImmNode>()->value));
    out.push_back(')');
    return;
  }
  if (PrecOf(e) < min_prec) {
    out.push_back('(');
    VisitExpr(e);
    out.push_back(')');
  } else {
    VisitExpr(e);
  }
}

void Printer::PrintBinary(const PrimExpr& a, const PrimExpr& b, const char* symbol, int prec) {
  bool non_assoc = prec == kPrecCmp;
  PrintOperand(a, non_assoc ? prec + 1 : prec);
  out.push_back(' ');
  out.append(symbol);
  out.push_back(' ');
  PrintOperand(b, prec + 1);
}

void Printer::PrintExprList(const Array<PrimExpr>& list) {
  bool first = true;
  for (const PrimExpr& e : list) {
    if (!first) out.append(", ");
    first = false;
    PrintExpr(e);
  }
}

void Printer::PrintTuple(const Array<PrimExpr>& list) {
  out.push_back('(');
  PrintExprList(list);
  if (list.size() == 1) out.push_back(',');
  out.push_back(')');
}

// The parser recovers the extent of `begin:end` (and of range / T.axis bounds) as: `end` when
// begin is the constant 0; the folded difference when both are constants; `y` when end is
// `x + y` or `y + x` with x structurally equal to begin; `end - begin` otherwise. This picks an
// end that gives back exactly `extent` under that rule.
PrimExpr Printer::RangeEnd(const PrimExpr& begin, const PrimExpr& extent) {
  if (IsConstInt(begin, 0)) return extent;
  const auto* b = begin.as<IntImmNode>();
  const auto* e = extent.as<IntImmNode>();
  if (b != nullptr && e != nullptr && b->dtype == e->dtype) {
    __int128 sum = static_cast<__int128>(b->value) + e->value;
    if (FitsInDType(b->dtype, sum)) return IntImm(b->dtype, static_cast<int64_t>(sum));
  }
  if (const auto* sub = extent.as<SubNode>()) {
    const auto* add = sub->a.as<AddNode>();
    bool reads_as_add = add != nullptr && (SameExpr(add->a, begin) || SameExpr(add->b, begin));
    bool reads_as_const = b != nullptr && sub->a.as<IntImmNode>() != nullptr;
    if (!reads_as_add && !reads_as_const && SameExpr(sub->b, begin)) return sub->a;
  }
  return Add(begin, extent);
}

void Printer::PrintSlice(const PrimExpr& begin, const PrimExpr& extent) {
  PrintExpr(begin);
  out.push_back(':');
  PrintExpr(RangeEnd(begin, extent));
}

void Printer::PrintVarRef(const VarNode* var) {
  const std::string* name = names_.Find(var);
  out.append(name != nullptr ? *name : names_.Get(var, var->name_hint));
  if (in_function_ && !defined_.count(var) && recorded_free_.insert(var).second) {
    free_vars_.push_back(GetRef<Var>(var));
  }
}

void Printer::PrintBufferRef(const BufferNode* buffer) {
  out.append(names_.Get(buffer, buffer->name));
  if (in_function_ && !defined_.count(buffer) && recorded_free_.insert(buffer).second) {
    free_buffers_.push_back(GetRef<Buffer>(buffer));
  }
}

void Printer::PrintRegion(const BufferRegion& region) {
  PrintBufferRef(region->buffer.get());
  out.push_back('[');
  if (region->region.empty()) out.append("()");  // a zero-dimensional buffer, as in indices
  bool first = true;
  for (const Range& r : region->region) {
    if (!first) out.append(", ");
    first = false;
    if (IsConstInt(r->extent, 1)) {
      PrintExpr(r->min);
    } else {
      PrintSlice(r->min, r->extent);
    }
  }
  out.push_back(']');
}

void Printer::PrintTypeAnnotation(DataType t) {
  out.append("T.");
  out.append(t.str());
}

// ---- leaves ----

void Printer::VisitExpr_(const IntImmNode* op) {
  if (op->dtype == DataType::Int(32)) {
    out.append(std::to_string(op->value));
  } else if (op->dtype.is_bool()) {
    out.append(op->value ? "T.bool(True)" : "T.bool(False)");
  } else {
    PrintTypeAnnotation(op->dtype);
    out.push_back('(');
    out.append(std::to_string(op->value));
    out.push_back(')');
  }
}

void Printer::VisitExpr_(const FloatImmNode* op) {
  PrintTypeAnnotation(op->dtype);
  out.push_back('(');
  std::string text = FloatRepr(op->value);
  if (std::isnan(op->value) || std::isinf(op->value)) {
    AppendStringLiteral(&out, text);
  } else {
    // Integral values print as integers (T.float32(1)); "-0.0" keeps its point to keep its sign.
    size_t n = text.size();
    if (n > 2 && text.compare(n - 2, 2, ".0") == 0 && text != "-0.0") text.resize(n - 2);
    out.append(text);
  }
  out.push_back(')');
}

void Printer::VisitExpr_(const StringImmNode* op) { AppendStringLiteral(&out, op->value); }

void Printer::VisitExpr_(const VarNode* op) { PrintVarRef(op); }
void Printer::VisitExpr_(const SizeVarNode* op) { PrintVarRef(op); }

void Printer::VisitExpr_(const CastNode* op) {
  out.append("T.Cast(");
  AppendDType(&out, op->dtype);
  out.append(", ");
  PrintExpr(op->value);
  out.push_back(')');
}

// ---- arithmetic, comparisons, logic ----

void Printer::VisitExpr_(const AddNode* op) { PrintBinary(op->a, op->b, "+", kPrecAdd); }
void Printer::VisitExpr_(const SubNode* op) { PrintBinary(op->a, op->b, "-", kPrecAdd); }
void Printer::VisitExpr_(const MulNode* op) { PrintBinary(op->a, op->b, "*", kPrecMul); }
void Printer::VisitExpr_(const FloorDivNode* op) { PrintBinary(op->a, op->b, "//", kPrecMul); }
void Printer::VisitExpr_(const FloorModNode* op) { PrintBinary(op->a, op->b, "%", kPrecMul); }

void Printer::VisitExpr_(const DivNode* op) {
  if (op->dtype.is_floating()) {
    PrintBinary(op->a, op->b, "/", kPrecMul);
    return;
  }
  out.append("T.truncdiv(");
  PrintExpr(op->a);
  out.append(", ");
  PrintExpr(op->b);
  out.push_back(')');
}

void Printer::VisitExpr_(const ModNode* op) {
  out.append("T.truncmod(");
  PrintExpr(op->a);
  out.append(", ");
  PrintExpr(op->b);
  out.push_back(')');
}

void Printer::VisitExpr_(const MinNode* op) {
  out.append("T.min(");
  PrintExpr(op->a);
  out.append(", ");
  PrintExpr(op->b);
  out.push_back(')');
}

void Printer::VisitExpr_(const MaxNode* op) {
  out.append("T.max(");
  PrintExpr(op->a);
  out.append(", ");
  PrintExpr(op->b);
  out.push_back(')');
}

void Printer::VisitExpr_(const EQNode* op) { PrintBinary(op->a, op->b, "==", kPrecCmp); }
void Printer::VisitExpr_(const NENode* op) { PrintBinary(op->a, op->b, "!=", kPrecCmp); }
void Printer::VisitExpr_(const LTNode* op) { PrintBinary(op->a, op->b, "<", kPrecCmp); }
void Printer::VisitExpr_(const LENode* op) { PrintBinary(op->a, op->b, "<=", kPrecCmp); }
void Printer::VisitExpr_(const GTNode* op) { PrintBinary(op->a, op->b, ">", kPrecCmp); }
void Printer::VisitExpr_(const GENode* op) { PrintBinary(op->a, op->b, ">=", kPrecCmp); }
void Printer::VisitExpr_(const AndNode* op) { PrintBinary(op->a, op->b, "and", kPrecAnd); }
void Printer::VisitExpr_(const OrNode* op) { PrintBinary(op->a, op->b, "or", kPrecOr); }

void Printer::VisitExpr_(const NotNode* op) {
  out.append("not ");
  PrintOperand(op->a, kPrecNot);
}

// ---- vectors, selection, let, loads ----

void Printer::VisitExpr_(const SelectNode* op) {
  out.append("T.Select(");
  PrintExpr(op->condition);
  out.append(", ");
  PrintExpr(op->true_value);
  out.append(", ");
  PrintExpr(op->false_value);
  out.push_back(')');
}

void Printer::VisitExpr_(const RampNode* op) {
  out.append("T.Ramp(");
  PrintExpr(op->base);
  out.append(", ");
  PrintExpr(op->stride);
  out.append(", ");
  out.append(std::to_string(op->lanes));
  out.push_back(')');
}

void Printer::VisitExpr_(const BroadcastNode* op) {
  out.append("T.Broadcast(");
  PrintExpr(op->value);
  out.append(", ");
  out.append(std::to_string(op->lanes));
  out.push_back(')');
}

void Printer::VisitExpr_(const ShuffleNode* op) {
  out.append("T.Shuffle([");
  PrintExprList(op->vectors);
  out.append("], [");
  PrintExprList(op->indices);
  out.append("])");
}

void Printer::VisitExpr_(const LetNode* op) {
  // The variable is bound for the body, which prints first.
  DefineVar(op->var);
  out.append("T.Let(");
  PrintExpr(op->body);
  out.append(", where={");
  PrintVarRef(op->var.get());
  out.append(": ");
  PrintExpr(op->value);
  out.append("})");
}

void Printer::PrintIndices(const Array<PrimExpr>& indices) {
  out.push_back('[');
  if (indices.empty()) out.append("()");
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i != 0) out.append(", ");
    const PrimExpr& index = indices[i];
    const auto* ramp = index.as<RampNode>();
    if (ramp != nullptr && IsConstInt(ramp->stride, 1)) {
      PrintSlice(ramp->base, IntImm(ramp->base.dtype(), ramp->lanes));
    } else {
      PrintExpr(index);
    }
  }
  out.push_back(']');
}

void Printer::VisitExpr_(const BufferLoadNode* op) {
  PrintBufferRef(op->buffer.get());
  PrintIndices(op->indices);
}

// ---- calls ----

void Printer::VisitExpr_(const CallNode* op) { PrintCall(op); }

void Printer::PrintCall(const CallNode* call) {
  CallForm form = FormOf(call);
  const auto* op = call->op.as<OpNode>();
  if (form == CallForm::kInfix) {
    PrintBinary(call->args[0], call->args[1], op->print_symbol.c_str(), op->print_precedence);
    return;
  }
  if (form == CallForm::kPrefix) {
    out.append(op->print_symbol);
    PrintOperand(call->args[0], kPrecUnary);
    return;
  }
  bool need_sep = false;
  auto sep = [&]() {
    if (need_sep) out.append(", ");
    need_sep = true;
  };
  bool implied = false;
  // Operand positions where the parser retypes a bare int32 literal to match its partner.
  size_t typed_from = call->args.size();
  if (op == nullptr) {
    const auto* gv = call->op.as<GlobalVarNode>();
    out.append("T.call_global(");
    AppendStringLiteral(&out, gv->name_hint);
    out.append(", ");
    AppendDType(&out, call->dtype);
    need_sep = true;
    implied = true;
  } else {
    out.append("T.");
    out.append(op->name);
    out.push_back('(');
    if (op->print_style == OpPrintStyle::kCallWithDType) {
      AppendDType(&out, call->dtype);
      need_sep = true;
      implied = true;
    } else {
      auto dt = ImpliedDType(op, call->args);
      implied = dt.has_value() && *dt == call->dtype;
    }
    bool is_ite = call->op.same_as(builtin::if_then_else()) && call->args.size() == 3;
    if (is_ite && call->args[1].dtype() != call->args[2].dtype()) typed_from = 1;
    if (op->print_style == OpPrintStyle::kInfix && call->args.size() == 2 &&
        call->args[0].dtype() != call->args[1].dtype()) {
      typed_from = 0;
    }
  }
  for (size_t i = 0; i < call->args.size(); ++i) {
    sep();
    PrintOperand(call->args[i], 0, i >= typed_from);
  }
  if (!implied) {
    sep();
    out.append("dtype=");
    AppendDType(&out, call->dtype);
  }
  if (!call->annotations.empty()) {
    sep();
    out.append("annotations=");
    PrintDict(call->annotations, "call annotations");
  }
  out.push_back(')');
}

// ---- attribute values ----

void Printer::PrintDict(const Map<String, Any>& dict, const char* where) {
  PrintValue(Any(dict), where);
}

void Printer::PrintValue(const Any& value, const char* where) {
  switch (value.type_index()) {
    case tvm::ffi::TypeIndex::kTVMFFINone:
      out.append("None");
      return;
    case tvm::ffi::TypeIndex::kTVMFFIBool:
      out.append(value.cast<bool>() ? "True" : "False");
      return;
    case tvm::ffi::TypeIndex::kTVMFFIInt:
      out.append(std::to_string(value.cast<int64_t>()));
      return;
    case tvm::ffi::TypeIndex::kTVMFFIFloat: {
      double v = value.cast<double>();
      if (std::isnan(v) || std::isinf(v)) {
        out.append("float(");
        AppendStringLiteral(&out, FloatRepr(v));
        out.push_back(')');
      } else {
        out.append(FloatRepr(v));
      }
      return;
    }
    default:
      break;
  }
  if (auto s = value.as<String>()) {
    AppendStringLiteral(&out, *s);
    return;
  }
  if (auto arr = value.as<Array<Any>>()) {
    out.push_back('[');
    bool first = true;
    for (const Any& item : *arr) {
      if (!first) out.append(", ");
      first = false;
      PrintValue(item, where);
    }
    out.push_back(']');
    return;
  }
  if (auto map = value.as<Map<Any, Any>>()) {
    std::vector<std::pair<std::string, std::string>> entries;
    std::string saved;
    std::swap(saved, out);
    for (const auto& kv : *map) {
      out.clear();
      PrintValue(kv.first, where);
      std::string key = out;
      out.clear();
      PrintValue(kv.second, where);
      entries.emplace_back(std::move(key), out);
    }
    std::swap(saved, out);
    std::sort(entries.begin(), entries.end());
    out.push_back('{');
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i != 0) out.append(", ");
      out.append(entries[i].first);
      out.append(": ");
      out.append(entries[i].second);
    }
    out.push_back('}');
    return;
  }
  if (auto expr = value.as<PrimExpr>()) {
    // A bare integer would read back as a plain int, not an IntImm.
    PrintOperand(*expr, 0, /*typed_int=*/true);
    return;
  }
  if (const auto* buffer = value.as<BufferNode>()) {
    PrintBufferRef(buffer);
    return;
  }
  TVM_FFI_THROW(TypeError) << "AsText: " << where << " holds a value of type " << value.GetTypeKey()
                           << ", which the text format cannot express";
}

}  // namespace printer
}  // namespace ir
}  // namespace tessel
