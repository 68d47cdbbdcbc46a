// Files: a module (`@I.ir_module class M:`) or a lone `@T.prim_func`; function headers and
// parameters; the public entry points and their tvm-ffi registrations.
#include <tessel/ir/parser.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <unordered_set>

#include "ir/parser/parser_impl.h"

namespace tessel {
namespace ir {
namespace parser {

void Parser::SkipImports() {
  // `from tvm.script import tir as T` / `import tvm`: harmless in a file that also runs as Python.
  while (IsKeyword("from") || IsKeyword("import")) {
    while (Peek().kind != Tok::kNewline && Peek().kind != Tok::kEnd) Next();
    if (Peek().kind == Tok::kNewline) Next();
  }
}

std::string Parser::ParseDecorator() {
  Expect("@", "to start a decorator");
  NodePtr d = ParseExpr();
  const Node* callee = d->kind == NodeKind::kCall ? d->callee() : d.get();
  std::string name = DottedName(callee);
  if (name.empty()) Fail(d->loc, "expected a decorator such as @T.prim_func");
  ExpectNewline("after the decorator");
  return name;
}

ObjectRef Parser::ParseFile(std::string* lone_name) {
  SkipImports();
  if (Peek().kind == Tok::kIndent) Fail(Peek().loc, "unexpected indent");
  if (!IsOp("@")) Fail(Peek().loc, "expected @I.ir_module or @T.prim_func");
  Loc deco_loc = Peek().loc;
  std::string deco = ParseDecorator();
  ObjectRef result;
  if (deco == "T.prim_func") {
    result = ParseFunction(lone_name);
  } else if (deco == "I.ir_module") {
    ExpectKeyword("class", "after @I.ir_module");
    ExpectName("for the module");
    if (Accept("(")) Expect(")", "after '('");
    Expect(":", "after the class name");
    ExpectNewline("after ':'");
    if (Peek().kind != Tok::kIndent) Fail(Peek().loc, "expected an indented block");
    Next();
    Map<String, PrimFunc> functions;
    while (Peek().kind != Tok::kDedent && Peek().kind != Tok::kEnd) {
      Loc loc = Peek().loc;
      if (!IsOp("@")) Fail(loc, "expected @T.prim_func in the module");
      std::string fdeco = ParseDecorator();
      if (fdeco != "T.prim_func") Fail(loc, "expected @T.prim_func, found @" + fdeco);
      Loc name_loc = Peek(1).loc;
      std::string name;
      PrimFunc f = ParseFunction(&name);
      if (functions.count(name)) Fail(name_loc, "function '" + name + "' is defined twice");
      functions.Set(name, f);
    }
    if (Peek().kind == Tok::kDedent) Next();
    result = IRModule(functions);
  } else {
    Fail(deco_loc, "expected @I.ir_module or @T.prim_func, found @" + deco);
  }
  if (Peek().kind != Tok::kEnd)
    Fail(Peek().loc, "unexpected " + Describe(Peek()) + " after the end");
  return result;
}

PrimFunc Parser::ParseFunction(std::string* name) {
  ExpectKeyword("def", "after the decorator");
  Loc loc = Peek().loc;
  *name = ExpectName("for the function").text;
  PushScope();
  FuncFrame frame;
  ParseParams(&frame);
  DataType ret_type = DataType::Void();
  if (Accept("->")) {
    NodePtr ret = ParseExpr();
    if (ret->kind != NodeKind::kNone) ret_type = EvalDType(ret.get());
  }
  Expect(":", "after the function signature");
  ExpectNewline("after ':'");
  Stmt body = ParseSuite(SuiteContext{&frame, nullptr});
  PopScope();
  return Guard(
      loc, [&] { return PrimFunc(frame.params, body, frame.buffer_map, frame.attrs, ret_type); });
}

void Parser::ParseParams(FuncFrame* frame) {
  Expect("(", "to start the parameters");
  struct Param {
    Token name;
    NodePtr annotation;
  };
  std::vector<Param> params;
  std::unordered_set<std::string> seen;
  while (!IsOp(")")) {
    const Token& name = ExpectName("for a parameter");
    if (!seen.insert(name.text).second) Fail(name.loc, "duplicate parameter '" + name.text + "'");
    Param p{name, nullptr};
    if (!IsOp(":")) Fail(Peek().loc, "parameter '" + name.text + "' needs a type annotation");
    Next();
    p.annotation = ParseExpr();
    params.push_back(std::move(p));
    if (!Accept(",")) break;
  }
  Expect(")", "to close the parameters");
  auto is_buffer = [](const Node* a) {
    return a->kind == NodeKind::kCall && DottedName(a->callee()) == "T.Buffer";
  };
  // Scalars and handles first, so that a buffer shape can use a later scalar parameter.
  std::vector<Var> vars(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Node* a = params[i].annotation.get();
    const std::string& n = params[i].name.text;
    if (is_buffer(a)) continue;
    if (a->kind == NodeKind::kCall && DottedName(a->callee()) == "T.handle") {
      CheckArgs(a, "T.handle", 0, 2);
      if (a->num_pos == 0) {
        vars[i] = Var(n, DataType::Handle());
      } else {
        std::string scope =
            a->num_pos > 1 ? EvalString(a->arg(1), "the storage scope") : std::string("global");
        vars[i] = Var::Pointer(n, EvalDType(a->arg(0)), scope);
      }
    } else {
      DataType t = EvalDType(a);
      if (t.is_void()) Fail(a->loc, "a parameter cannot be void");
      vars[i] = t.is_handle() ? Var(n, t) : Var(n, t);
    }
    BindVar(n, vars[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Node* a = params[i].annotation.get();
    if (!is_buffer(a)) continue;
    const std::string& n = params[i].name.text;
    vars[i] = Var(n, DataType::Handle());
    Buffer buf = EvalBufferDecl(a, n, 0, true, "T.Buffer");
    frame->buffer_map.Set(vars[i], buf);
    BindBuffer(n, buf);
  }
  for (const Var& v : vars) frame->params.push_back(v);
}

PrimExpr Parser::ParseStandaloneExpr(const Map<String, Any>& vars) {
  PushScope();
  for (const auto& kv : vars) {
    std::string name = kv.first;
    if (auto v = kv.second.try_cast<Var>()) {
      BindVar(name, *v);
    } else if (auto s = kv.second.try_cast<String>()) {
      auto t = DataType::Parse(*s);
      if (!t || t->is_void()) {
        throw ParseError{"unknown dtype '" + std::string(*s) + "' for variable '" + name + "'"};
      }
      BindVar(name, Var(name, *t));
    } else if (auto t = kv.second.try_cast<DataType>()) {
      BindVar(name, Var(name, *t));
    } else {
      throw ParseError{"variable '" + name + "' must map to a dtype string or a Var"};
    }
  }
  while (Peek().kind == Tok::kIndent) Next();
  if (Peek().kind == Tok::kNewline || Peek().kind == Tok::kEnd) {
    Fail(Peek().loc, "expected an expression");
  }
  NodePtr e = ParseExpr();
  while (Peek().kind == Tok::kNewline || Peek().kind == Tok::kDedent) Next();
  if (Peek().kind != Tok::kEnd)
    Fail(Peek().loc, "unexpected " + Describe(Peek()) + " after the expression");
  PrimExpr result = EvalPrim(e.get());
  PopScope();
  return result;
}

}  // namespace parser

ObjectRef ParseText(const std::string& text, const std::string& source_name) {
  parser::Source src(source_name, text);
  try {
    parser::Parser p(src);
    std::string name;
    return p.ParseFile(&name);
  } catch (const parser::ParseError& e) {
    TVM_FFI_THROW(ValueError) << e.message;
  }
  TVM_FFI_UNREACHABLE();
}

IRModule ParseModule(const std::string& text, const std::string& source_name) {
  parser::Source src(source_name, text);
  try {
    parser::Parser p(src);
    std::string name;
    ObjectRef r = p.ParseFile(&name);
    if (auto m = r.as<IRModule>()) return *m;
    Map<String, PrimFunc> fns;
    fns.Set(name, tvm::ffi::GetRef<PrimFunc>(r.as<PrimFuncNode>()));
    return IRModule(fns);
  } catch (const parser::ParseError& e) {
    TVM_FFI_THROW(ValueError) << e.message;
  }
  TVM_FFI_UNREACHABLE();
}

PrimExpr ParseExpr(const std::string& text, const Map<String, Any>& vars,
                   const std::string& source_name) {
  parser::Source src(source_name, text);
  try {
    parser::Parser p(src);
    return p.ParseStandaloneExpr(vars);
  } catch (const parser::ParseError& e) {
    TVM_FFI_THROW(ValueError) << e.message;
  }
  TVM_FFI_UNREACHABLE();
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("tessel.ir.ParseText",
           [](String text, String source_name) { return ParseText(text, source_name); })
      .def("tessel.ir.ParseModule",
           [](String text, String source_name) { return ParseModule(text, source_name); })
      .def("tessel.ir.ParseExpr",
           [](String text, Map<String, Any> vars) { return ParseExpr(text, vars); });
}

}  // namespace ir
}  // namespace tessel
