// Statements, blocks and buffer declarations in the text format (docs/text_format.md,
// "Statements" and "Blocks"). Every statement ends its own lines with '\n'; statements that bind
// for the rest of a body (LetStmt, AssertStmt, Allocate, DeclBuffer) print their body after them
// at the same indentation.
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>

#include "ir/printer_impl.h"

namespace tessel {
namespace ir {
namespace printer {
namespace {

bool IsTrue(const PrimExpr& e) { return e.dtype().is_bool() && IsConstInt(e, 1); }

// int64 when any dimension is int64: the dtype the parser gives to names a shape declares.
DataType IndexDType(const BufferNode* buffer) {
  for (const PrimExpr& s : buffer->shape) {
    if (s.dtype() == DataType::Int(64)) return DataType::Int(64);
  }
  return DataType::Int(32);
}

}  // namespace

const std::string& Printer::DefineVar(const Var& var) {
  defined_.insert(var.get());
  return names_.Get(var.get(), var->name_hint);
}

const std::string& Printer::DefineBuffer(const Buffer& buffer) {
  defined_.insert(buffer.get());
  return names_.Get(buffer.get(), buffer->name);
}

void Printer::PrintSignatureTuple(const Array<PrimExpr>& list) {
  out.push_back('(');
  for (size_t i = 0; i < list.size(); ++i) {
    if (i != 0) out.append(", ");
    const auto* v = list[i].as<VarNode>();
    if (v != nullptr && !defined_.count(v) && !recorded_free_.count(v)) {
      Var var = GetRef<Var>(v);
      AppendStringLiteral(&out, DefineVar(var));
      signature_vars_.push_back(var);
    } else {
      PrintExpr(list[i]);
    }
  }
  if (list.size() == 1) out.push_back(',');
  out.push_back(')');
}

void Printer::PrintBufferArgs(const Buffer& buffer, bool is_param) {
  const BufferNode* b = buffer.get();
  DataType index_dtype = IndexDType(b);
  // index_dtype matters to the parser only for a name first seen inside a larger expression of
  // a parameter's shape (a bare name is declared in the body with its dtype).
  bool needs_index_dtype = false;
  if (is_param) {
    auto bare_first = [this](const PrimExpr& e) {
      const auto* v = e.as<VarNode>();
      return v != nullptr && !defined_.count(v) && !recorded_free_.count(v);
    };
    auto declare = [this, &needs_index_dtype](const ObjectRef& node) {
      if (const auto* v = node.as<VarNode>()) {
        if (!defined_.count(v) && !recorded_free_.count(v)) {
          defined_.insert(v);
          needs_index_dtype = true;
        }
      }
    };
    for (const Array<PrimExpr>* list : {&b->shape, &b->strides}) {
      for (const PrimExpr& s : *list) {
        if (!bare_first(s)) PostOrderVisit(s, declare);
      }
    }
    PostOrderVisit(b->elem_offset, declare);
    PrintSignatureTuple(b->shape);
  } else {
    PrintTuple(b->shape);
  }
  out.append(", \"");
  out.append(b->dtype.str());
  out.push_back('"');
  const VarNode* data = b->data.get();
  bool implicit = names_.Find(data) == nullptr && !recorded_free_.count(data) &&
                  (is_param || (data->pointee == b->dtype && data->storage_scope == b->scope));
  if (implicit) {
    names_.SetAlias(data, names_.Get(b, b->name) + ".data");
    defined_.insert(data);
  } else {
    out.append(", data=");
    PrintVarRef(data);
  }
  if (!b->strides.empty()) {
    out.append(", strides=");
    if (is_param) {
      PrintSignatureTuple(b->strides);
    } else {
      PrintTuple(b->strides);
    }
  }
  // The default is the Buffer constructor's: an int32 zero, whatever the index dtype.
  if (!(IsConstInt(b->elem_offset, 0) && b->elem_offset.dtype() == DataType::Int(32))) {
    out.append(", elem_offset=");
    PrintExpr(b->elem_offset);
  }
  if (b->scope != "global") {
    out.append(", scope=");
    AppendStringLiteral(&out, b->scope);
  }
  if (b->data_alignment != kDefaultBufferAlignment) {
    out.append(", align=");
    out.append(std::to_string(b->data_alignment));
  }
  if (b->offset_factor != 1) {
    out.append(", offset_factor=");
    out.append(std::to_string(b->offset_factor));
  }
  if (index_dtype == DataType::Int(64) && (needs_index_dtype || !is_param)) {
    out.append(", index_dtype=\"int64\"");
  }
}

void Printer::PrintSeq(const Stmt& s) {
  if (const auto* seq = s.as<SeqStmtNode>()) {
    if (seq->seq.empty()) {
      StartLine();
      out.append("pass\n");
    }
    for (const Stmt& item : seq->seq) PrintSeq(item);
  } else {
    PrintStmt(s);
  }
}

void Printer::PrintStmt(const Stmt& s) {
  const StmtNode* node = s.get();
  switch (KindOf(node)) {
    case StmtKind::kSeqStmt:
      PrintSeq(s);
      return;
    case StmtKind::kBufferStore: {
      const auto* op = static_cast<const BufferStoreNode*>(node);
      StartLine();
      PrintBufferRef(op->buffer.get());
      PrintIndices(op->indices);
      out.append(" = ");
      PrintExpr(op->value);
      out.push_back('\n');
      return;
    }
    case StmtKind::kLetStmt: {
      const auto* op = static_cast<const LetStmtNode*>(node);
      StartLine();
      out.append(names_.Get(op->var.get(), op->var->name_hint));
      out.append(": ");
      PrintTypeAnnotation(op->var.dtype());
      out.append(" = ");
      PrintExpr(op->value);
      out.push_back('\n');
      DefineVar(op->var);
      PrintStmt(op->body);
      return;
    }
    case StmtKind::kAssertStmt: {
      const auto* op = static_cast<const AssertStmtNode*>(node);
      StartLine();
      out.append("assert ");
      PrintExpr(op->condition);
      out.append(", ");
      PrintExpr(op->message);
      out.push_back('\n');
      PrintStmt(op->body);
      return;
    }
    case StmtKind::kAllocate: {
      const auto* op = static_cast<const AllocateNode*>(node);
      StartLine();
      out.append(DefineVar(op->buffer_var));
      out.append(" = T.allocate([");
      PrintExprList(op->extents);
      out.append("], \"");
      out.append(op->dtype.str());
      out.append("\", ");
      const String& scope = op->buffer_var->storage_scope;
      AppendStringLiteral(&out, scope.empty() ? std::string("global") : std::string(scope));
      if (!IsTrue(op->condition)) {
        out.append(", ");
        PrintExpr(op->condition);
      }
      if (!op->annotations.empty()) {
        out.append(", annotations=");
        PrintDict(op->annotations, "Allocate annotations");
      }
      out.append(")\n");
      PrintStmt(op->body);
      return;
    }
    case StmtKind::kDeclBuffer: {
      const auto* op = static_cast<const DeclBufferNode*>(node);
      StartLine();
      out.append(DefineBuffer(op->buffer));
      out.append(" = T.decl_buffer(");
      PrintBufferArgs(op->buffer, /*is_param=*/false);
      out.append(")\n");
      PrintStmt(op->body);
      return;
    }
    case StmtKind::kAttrStmt: {
      const auto* op = static_cast<const AttrStmtNode*>(node);
      StartLine();
      out.append("with T.attr(");
      if (op->node == nullptr) {
        out.append("None");
      } else if (const auto* iv = op->node.as<IterVarNode>()) {
        PrintVarRef(iv->var.get());
      } else {
        PrintValue(op->node, "AttrStmt node");
      }
      out.append(", ");
      AppendStringLiteral(&out, op->attr_key);
      out.append(", ");
      PrintExpr(op->value);
      out.append("):\n");
      PrintBody(op->body);
      return;
    }
    case StmtKind::kFor: {
      const auto* op = static_cast<const ForNode*>(node);
      PrintForHeader(op);
      const Object* var = op->loop_var.get();
      auto it = loops_.find(var);
      const ForNode* shadowed = it == loops_.end() ? nullptr : it->second;
      loops_[var] = op;
      PrintBody(op->body);
      if (shadowed != nullptr) {
        loops_[var] = shadowed;
      } else {
        loops_.erase(var);
      }
      return;
    }
    case StmtKind::kWhile: {
      const auto* op = static_cast<const WhileNode*>(node);
      StartLine();
      out.append("while ");
      PrintExpr(op->condition);
      out.append(":\n");
      PrintBody(op->body);
      return;
    }
    case StmtKind::kIfThenElse:
      PrintIf(static_cast<const IfThenElseNode*>(node), /*is_elif=*/false);
      return;
    case StmtKind::kEvaluate:
      PrintEvaluate(static_cast<const EvaluateNode*>(node));
      return;
    case StmtKind::kBlockRealize: {
      const auto* op = static_cast<const BlockRealizeNode*>(node);
      PrintBlock(op->block.get(), op);
      return;
    }
    case StmtKind::kBlock:
      PrintBlock(static_cast<const BlockNode*>(node), nullptr);
      return;
    default:
      TVM_FFI_THROW(TypeError) << "AsText: unknown statement type " << node->GetTypeKey();
  }
}

void Printer::PrintForHeader(const ForNode* loop) {
  StartLine();
  out.append("for ");
  out.append(DefineVar(loop->loop_var));
  out.append(" in ");
  if (loop->kind == ForKind::kSerial && loop->annotations.empty()) {
    out.append("range(");
  } else {
    out.append("T.");
    out.append(ForKindName(loop->kind));
    out.push_back('(');
  }
  if (IsConstInt(loop->min, 0)) {
    PrintExpr(loop->extent);
  } else {
    PrintExpr(loop->min);
    out.append(", ");
    PrintExpr(RangeEnd(loop->min, loop->extent));
  }
  if (loop->kind == ForKind::kThreadBinding) {
    out.append(", thread=");
    AppendStringLiteral(&out, loop->thread_tag);
  }
  if (!loop->annotations.empty()) {
    out.append(", annotations=");
    PrintDict(loop->annotations, "For annotations");
  }
  out.append("):\n");
}

void Printer::PrintIf(const IfThenElseNode* op, bool is_elif) {
  StartLine();
  out.append(is_elif ? "elif " : "if ");
  PrintExpr(op->condition);
  out.append(":\n");
  PrintBody(op->then_case);
  if (!op->else_case.has_value()) return;
  const Stmt& else_case = *op->else_case;
  if (const auto* nested = else_case.as<IfThenElseNode>()) {
    PrintIf(nested, /*is_elif=*/true);
    return;
  }
  StartLine();
  out.append("else:\n");
  PrintBody(else_case);
}

void Printer::PrintEvaluate(const EvaluateNode* op) {
  StartLine();
  // Only a call written as a call reads back as one on its own line.
  if (op->value.as<CallNode>() != nullptr && PrecOf(op->value) == kPrecAtom) {
    PrintExpr(op->value);
  } else {
    out.append("T.evaluate(");
    PrintExpr(op->value);
    out.push_back(')');
  }
  out.push_back('\n');
}

bool Printer::TryPrintRemap(const BlockNode* block, const BlockRealizeNode* realize) {
  if (block->iter_vars.empty()) return false;
  std::string kinds;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    const PrimExpr& value = realize->iter_values[i];
    if (iv->iter_type == IterVarType::kDataPar) {
      kinds.push_back('S');
    } else if (iv->iter_type == IterVarType::kCommReduce) {
      kinds.push_back('R');
    } else {
      return false;
    }
    const auto* var = value.as<VarNode>();
    if (var == nullptr || iv->var.dtype() != value.dtype()) return false;
    auto it = loops_.find(var);
    if (it == loops_.end() || !IsConstInt(iv->dom->min, 0)) return false;
    const PrimExpr& loop_extent = it->second->extent;
    if (!iv->dom->extent.same_as(loop_extent) &&
        !tvm::ffi::StructuralEqual::Equal(iv->dom->extent, loop_extent)) {
      return false;
    }
  }
  StartLine();
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (i != 0) out.append(", ");
    out.append(DefineVar(block->iter_vars[i]->var));
  }
  out.append(" = T.axis.remap(\"");
  out.append(kinds);
  out.append("\", [");
  PrintExprList(realize->iter_values);
  out.append("])\n");
  return true;
}

void Printer::PrintBlock(const BlockNode* block, const BlockRealizeNode* realize) {
  StartLine();
  out.append("with T.sblock(");
  AppendStringLiteral(&out, block->name_hint);
  out.append("):\n");
  ++indent;
  if (realize == nullptr || !TryPrintRemap(block, realize)) {
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      StartLine();
      out.append(DefineVar(iv->var));
      out.append(" = T.axis.");
      out.append(IterVarTypeName(iv->iter_type));
      out.push_back('(');
      if (IsConstInt(iv->dom->min, 0)) {
        PrintExpr(iv->dom->extent);
      } else {
        out.push_back('(');
        PrintExpr(iv->dom->min);
        out.append(", ");
        PrintExpr(RangeEnd(iv->dom->min, iv->dom->extent));
        out.push_back(')');
      }
      if (realize != nullptr) {
        out.append(", ");
        PrintExpr(realize->iter_values[i]);
      }
      out.append(")\n");
    }
  }
  if (realize != nullptr && !IsTrue(realize->predicate)) {
    StartLine();
    out.append("T.where(");
    PrintExpr(realize->predicate);
    out.append(")\n");
  }
  const char* region_kinds[2] = {"T.reads(", "T.writes("};
  const Array<BufferRegion>* regions[2] = {&block->reads, &block->writes};
  for (int k = 0; k < 2; ++k) {
    // Left out when empty: TVM's parser takes a missing T.reads / T.writes as "infer them from
    // the body", but an empty one as "accesses nothing", which would be wrong for a block whose
    // regions were simply not declared. tessel's parser reads a missing one as empty.
    if (regions[k]->empty()) continue;
    StartLine();
    out.append(region_kinds[k]);
    bool first = true;
    for (const BufferRegion& r : *regions[k]) {
      if (!first) out.append(", ");
      first = false;
      PrintRegion(r);
    }
    out.append(")\n");
  }
  if (!block->annotations.empty()) {
    StartLine();
    out.append("T.sblock_attr(");
    PrintDict(block->annotations, "block annotations");
    out.append(")\n");
  }
  for (const Buffer& buffer : block->alloc_buffers) {
    StartLine();
    out.append(DefineBuffer(buffer));
    out.append(" = T.sblock_alloc_buffer(");
    PrintBufferArgs(buffer, /*is_param=*/false);
    out.append(")\n");
  }
  for (const MatchBufferRegion& match : block->match_buffers) {
    StartLine();
    out.append(DefineBuffer(match->buffer));
    out.append(" = T.match_buffer(");
    PrintRegion(match->source);
    out.append(", ");
    PrintBufferArgs(match->buffer, /*is_param=*/false);
    out.append(")\n");
  }
  if (block->init.has_value()) {
    StartLine();
    out.append("with T.init():\n");
    PrintBody(*block->init);
  }
  PrintStmt(block->body);
  --indent;
}

}  // namespace printer
}  // namespace ir
}  // namespace tessel
