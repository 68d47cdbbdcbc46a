// AsText: the entry point of the printer, and the parts that frame a body: modules, function
// signatures, and the declarations of free variables and buffers at the top of a function body.
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <utility>

#include "ir/printer_impl.h"

namespace tessel {
namespace ir {
namespace {

using printer::Printer;

constexpr const char* kFileHeader =
    "# from tvm.script import ir as I\n"
    "# from tvm.script import tirx as T\n"
    "\n";

void AppendIndent(std::string* out, int indent) {
  out->append(static_cast<size_t>(indent) * 4, ' ');
}

// `n = T.int32()`, `n = T.int32(is_size_var=True)`, `p = T.handle("float32", "shared")`.
void AppendVarDeclaration(Printer* p, const Var& var) {
  std::string& out = p->out;
  AppendIndent(&out, p->indent);
  out.append(p->names().Get(var.get(), var->name_hint));
  out.append(" = ");
  p->PrintTypeAnnotation(var.dtype());
  out.push_back('(');
  if (var.as<SizeVarNode>() != nullptr) {
    out.append("is_size_var=True");
  } else if (var.dtype().is_handle() && !var->pointee.is_void()) {
    printer::AppendStringLiteral(&out, var->pointee.str());
    out.append(", ");
    printer::AppendStringLiteral(&out, var->storage_scope);
  }
  out.append(")\n");
}

// Prints `f` as `@T.prim_func def name(...):` at `indent` levels into `out`.
void PrintFunction(const PrimFunc& f, const std::string& name, int indent, std::string* out) {
  Printer p(/*in_function=*/true);
  p.indent = indent;
  AppendIndent(&p.out, indent);
  // Without a global symbol the function is private: the parser gives a function that is not
  // its name as global symbol (TVMScript's rule).
  // s_tir=True: TVM 0.25 and later parse T.sblock only in such functions.
  bool has_block = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (n.as<BlockRealizeNode>() || n.as<BlockNode>()) has_block = true;
  });
  bool is_private = !f.GetGlobalSymbol();
  p.out.append(is_private && has_block ? "@T.prim_func(private=True, s_tir=True)\n"
               : is_private            ? "@T.prim_func(private=True)\n"
               : has_block             ? "@T.prim_func(s_tir=True)\n"
                                       : "@T.prim_func\n");
  AppendIndent(&p.out, indent);
  p.out.append("def ");
  p.out.append(name);
  p.out.push_back('(');
  // Scalar parameters are in scope for the whole signature, so a buffer shape may name one that
  // is listed after it.
  for (const Var& param : f->params) {
    if (!f->buffer_map.count(param)) p.MarkDefined(param.get());
  }
  bool first = true;
  for (const Var& param : f->params) {
    if (!first) p.out.append(", ");
    first = false;
    auto it = f->buffer_map.find(param);
    if (it != f->buffer_map.end()) {
      const Buffer& buffer = (*it).second;
      std::string buffer_name = p.DefineBuffer(buffer);
      p.names().SetAlias(param.get(), buffer_name);
      p.MarkDefined(param.get());
      p.out.append(buffer_name);
      p.out.append(": T.Buffer(");
      p.PrintBufferArgs(buffer, /*is_param=*/true);
      p.out.push_back(')');
      continue;
    }
    p.out.append(p.DefineVar(param));
    p.out.append(": ");
    p.PrintTypeAnnotation(param.dtype());
    if (param.dtype().is_handle() && !param->pointee.is_void()) {
      p.out.push_back('(');
      printer::AppendStringLiteral(&p.out, param->pointee.str());
      p.out.append(", ");
      printer::AppendStringLiteral(&p.out, param->storage_scope);
      p.out.push_back(')');
    }
  }
  p.out.push_back(')');
  if (!f->ret_type.is_void()) {
    p.out.append(" -> ");
    p.PrintTypeAnnotation(f->ret_type);
  }
  p.out.append(":\n");
  p.indent = indent + 1;
  for (const Var& var : p.signature_vars()) AppendVarDeclaration(&p, var);
  if (!f->attrs.empty()) {
    AppendIndent(&p.out, p.indent);
    p.out.append("T.func_attr(");
    p.PrintDict(f->attrs, "function attributes");
    p.out.append(")\n");
  }
  std::string head;
  std::swap(head, p.out);
  p.PrintStmt(f->body);
  std::string body;
  std::swap(body, p.out);
  // Declaring a free buffer can reveal more free variables (in its shape), so buffers print
  // first and variables are declared above them.
  for (size_t i = 0; i < p.free_buffers().size(); ++i) {
    Buffer buffer = p.free_buffers()[i];
    p.MarkDefined(buffer.get());
    AppendIndent(&p.out, p.indent);
    p.out.append(p.names().Get(buffer.get(), buffer->name));
    p.out.append(" = T.Buffer(");
    p.PrintBufferArgs(buffer, /*is_param=*/false);
    p.out.append(")\n");
  }
  std::string buffer_decls;
  std::swap(buffer_decls, p.out);
  for (const Var& var : p.free_vars()) AppendVarDeclaration(&p, var);
  out->append(head);
  out->append(p.out);
  out->append(buffer_decls);
  out->append(body);
}

std::string FunctionName(const PrimFunc& f) {
  if (auto symbol = f.GetGlobalSymbol()) return printer::SanitizeName(*symbol);
  return "main";
}

std::string PrintModule(const IRModule& mod) {
  std::string out = kFileHeader;
  out.append("@I.ir_module\nclass Module:\n");
  bool empty = true;
  if (!mod->attrs.empty()) {
    Printer p(/*in_function=*/false);
    p.out.append("    I.module_attrs(");
    p.PrintDict(mod->attrs, "module attributes");
    p.out.append(")\n");
    out.append(p.out);
    empty = false;
  }
  for (const String& name : mod.FunctionNames()) {
    if (!empty) out.push_back('\n');
    empty = false;
    PrintFunction(mod->functions.at(name), printer::SanitizeName(name), 1, &out);
  }
  if (empty) out.append("    pass\n");
  return out;
}

}  // namespace

std::string AsText(const ObjectRef& node) {
  if (!node.defined()) return "None";
  if (const auto* mod = node.as<IRModuleNode>()) return PrintModule(GetRef<IRModule>(mod));
  if (const auto* func = node.as<PrimFuncNode>()) {
    PrimFunc f = GetRef<PrimFunc>(func);
    std::string out = kFileHeader;
    PrintFunction(f, FunctionName(f), 0, &out);
    return out;
  }
  Printer p(/*in_function=*/false);
  if (const auto* expr = node.as<PrimExprNode>()) {
    p.PrintExpr(GetRef<PrimExpr>(expr));
  } else if (const auto* stmt = node.as<StmtNode>()) {
    p.PrintStmt(GetRef<Stmt>(stmt));
  } else if (const auto* buffer = node.as<BufferNode>()) {
    p.out.append(p.DefineBuffer(GetRef<Buffer>(buffer)));
    p.out.append(" = T.Buffer(");
    p.PrintBufferArgs(GetRef<Buffer>(buffer), /*is_param=*/false);
    p.out.push_back(')');
  } else if (const auto* region = node.as<BufferRegionNode>()) {
    p.PrintRegion(GetRef<BufferRegion>(region));
  } else if (const auto* match = node.as<MatchBufferRegionNode>()) {
    p.out.append(p.DefineBuffer(match->buffer));
    p.out.append(" = T.match_buffer(");
    p.PrintRegion(match->source);
    p.out.append(", ");
    p.PrintBufferArgs(match->buffer, /*is_param=*/false);
    p.out.push_back(')');
  } else if (const auto* range = node.as<RangeNode>()) {
    p.PrintSlice(range->min, range->extent);
  } else if (const auto* iv = node.as<IterVarNode>()) {
    p.out.append(p.DefineVar(iv->var));
    p.out.append(" = T.axis.");
    p.out.append(IterVarTypeName(iv->iter_type));
    p.out.push_back('(');
    if (printer::IsConstInt(iv->dom->min, 0)) {
      p.PrintExpr(iv->dom->extent);
    } else {
      p.out.push_back('(');
      p.PrintExpr(iv->dom->min);
      p.out.append(", ");
      p.PrintExpr(p.RangeEnd(iv->dom->min, iv->dom->extent));
      p.out.push_back(')');
    }
    p.out.push_back(')');
  } else if (const auto* op = node.as<OpNode>()) {
    p.out.append("T.");
    p.out.append(op->name);
  } else if (const auto* gv = node.as<GlobalVarNode>()) {
    p.out.append("I.GlobalVar(");
    printer::AppendStringLiteral(&p.out, gv->name_hint);
    p.out.push_back(')');
  } else {
    TVM_FFI_THROW(TypeError) << "AsText: cannot print an object of type " << node->GetTypeKey();
  }
  return std::move(p.out);
}

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("tessel.ir.AsText",
                                        [](ObjectRef node) { return String(AsText(node)); });
}

}  // namespace ir
}  // namespace tessel
