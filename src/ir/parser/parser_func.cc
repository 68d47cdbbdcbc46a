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

Parser::Parser(const Source& source, const ParseOptions* options) : Syntax(source) {
  if (!options) return;
  python_def_ = options->python_def;
  private_def_ = options->private_def;
  for (const auto& kv : options->values) values_[std::string(kv.first)] = kv.second;
}

void Parser::SkipImports() {
  // `from tvm.script import tir as T` / `import tvm`: harmless in a file that also runs as Python.
  // TVM also prints `n = TypeVar("n")` above a function for a symbolic dim of its signature; the
  // shape that names n declares it here.
  auto is_type_var = [&] {
    return Peek().kind == Tok::kName && IsOp("=", 1) && IsKeyword("TypeVar", 2) && IsOp("(", 3);
  };
  while (IsKeyword("from") || IsKeyword("import") || is_type_var()) {
    while (Peek().kind != Tok::kNewline && Peek().kind != Tok::kEnd) Next();
    if (Peek().kind == Tok::kNewline) Next();
  }
}

NodePtr Parser::ParseDecorator() {
  Expect("@", "to start a decorator");
  NodePtr d = ParseExpr();
  const Node* callee = d->kind == NodeKind::kCall ? d->callee() : d.get();
  if (DottedName(callee).empty()) Fail(d->loc, "expected a decorator such as @T.prim_func");
  ExpectNewline("after the decorator");
  return d;
}

bool Parser::PrimFuncDecoratorIsPrivate(const Node* decorator) {
  if (decorator->kind != NodeKind::kCall) return false;
  // s_tir / check_well_formed: TVM 0.25 and later print them; they change nothing here.
  CheckArgs(decorator, "T.prim_func", 0, 0, {"private", "s_tir", "check_well_formed"});
  for (const char* flag : {"s_tir", "check_well_formed"}) {
    if (const Node* v = decorator->keyword(flag)) EvalBoolConst(v, flag);
  }
  const Node* p = decorator->keyword("private");
  return p && EvalBoolConst(p, "private");
}

IRModule Parser::ParseModuleBody() {
  if (Peek().kind != Tok::kIndent) Fail(Peek().loc, "expected an indented block");
  Next();
  Map<String, PrimFunc> functions;
  while (Peek().kind != Tok::kDedent && Peek().kind != Tok::kEnd) {
    Loc loc = Peek().loc;
    if (Peek().kind == Tok::kString) {  // a docstring
      Next();
      ExpectNewline("after the string");
      continue;
    }
    if (!IsOp("@")) Fail(loc, "expected @T.prim_func in the module");
    NodePtr fdeco = ParseDecorator();
    const Node* callee = fdeco->kind == NodeKind::kCall ? fdeco->callee() : fdeco.get();
    std::string fname = DottedName(callee);
    if (fname != "T.prim_func") Fail(loc, "expected @T.prim_func, found @" + fname);
    bool is_private = PrimFuncDecoratorIsPrivate(fdeco.get());
    Loc name_loc = Peek(1).loc;
    std::string name;
    PrimFunc f = ParseFunction(&name, is_private);
    if (functions.count(name)) Fail(name_loc, "function '" + name + "' is defined twice");
    functions.Set(name, f);
  }
  if (Peek().kind == Tok::kDedent) Next();
  return IRModule(functions);
}

ObjectRef Parser::ParseFile(std::string* lone_name) {
  if (python_def_) return ParsePythonDef(lone_name);
  SkipImports();
  if (Peek().kind == Tok::kIndent) Fail(Peek().loc, "unexpected indent");
  if (!IsOp("@")) Fail(Peek().loc, "expected @I.ir_module or @T.prim_func");
  Loc deco_loc = Peek().loc;
  NodePtr deco = ParseDecorator();
  std::string name = DottedName(deco->kind == NodeKind::kCall ? deco->callee() : deco.get());
  ObjectRef result;
  if (name == "T.prim_func") {
    result = ParseFunction(lone_name, PrimFuncDecoratorIsPrivate(deco.get()));
  } else if (name == "I.ir_module") {
    if (deco->kind == NodeKind::kCall) CheckArgs(deco.get(), name, 0, 0, {"check_well_formed"});
    ExpectKeyword("class", "after @I.ir_module");
    ExpectName("for the module");
    if (Accept("(")) Expect(")", "after '('");
    Expect(":", "after the class name");
    ExpectNewline("after ':'");
    result = ParseModuleBody();
  } else {
    Fail(deco_loc, "expected @I.ir_module or @T.prim_func, found @" + name);
  }
  if (Peek().kind != Tok::kEnd)
    Fail(Peek().loc, "unexpected " + Describe(Peek()) + " after the end");
  return result;
}

ObjectRef Parser::ParsePythonDef(std::string* lone_name) {
  ObjectRef result;
  if (IsKeyword("class")) {
    Next();
    ExpectName("for the module");
    if (Accept("(")) Expect(")", "after '(': a module class has no bases");
    Expect(":", "after the class name");
    ExpectNewline("after ':'");
    result = ParseModuleBody();
  } else if (IsKeyword("def")) {
    result = ParseFunction(lone_name, private_def_);
  } else {
    Fail(Peek().loc, "expected 'def' or 'class'");
  }
  if (Peek().kind != Tok::kEnd)
    Fail(Peek().loc, "unexpected " + Describe(Peek()) + " after the end");
  return result;
}

void Parser::PrescanDeclarations() {
  later_decls_.clear();
  size_t i = pos_;
  auto tok = [&](size_t k) -> const Token& {
    return k < tokens_.size() ? tokens_[k] : tokens_.back();
  };
  auto is_op = [&](size_t k, const char* op) {
    return tok(k).kind == Tok::kOp && tok(k).text == op;
  };
  // `T.<dtype>()` or `T.<dtype>(is_size_var=True)` starting at k; the index after it, or 0.
  auto declaration = [&](size_t k, std::pair<DataType, bool>* out) -> size_t {
    if (tok(k).kind != Tok::kName || tok(k).text != "T" || !is_op(k + 1, ".") ||
        tok(k + 2).kind != Tok::kName || !is_op(k + 3, "(")) {
      return 0;
    }
    auto t = DataType::Parse(tok(k + 2).text);
    if (!t || t->is_void() || t->is_handle()) return 0;
    *out = {*t, false};
    if (is_op(k + 4, ")")) return k + 5;
    if (tok(k + 4).kind == Tok::kName && tok(k + 4).text == "is_size_var" && is_op(k + 5, "=") &&
        tok(k + 6).kind == Tok::kName && is_op(k + 7, ")")) {
      out->second = tok(k + 6).text == "True";
      return k + 8;
    }
    return 0;
  };
  auto statement = [&](size_t k) {
    std::vector<std::string> names;
    while (tok(k).kind == Tok::kName && !IsReserved(tok(k).text)) {
      names.push_back(tok(k).text);
      if (!is_op(k + 1, ",")) break;
      k += 2;
    }
    if (names.empty() || !is_op(k + 1, "=")) return;
    k += 2;
    std::vector<std::pair<DataType, bool>> decls;
    for (size_t n = 0; n < names.size(); ++n) {
      std::pair<DataType, bool> d;
      size_t after = declaration(k, &d);
      if (!after) return;
      decls.push_back(d);
      k = after;
      if (n + 1 < names.size()) {
        if (!is_op(k, ",")) return;
        ++k;
      }
    }
    if (tok(k).kind != Tok::kNewline) return;
    for (size_t n = 0; n < names.size(); ++n) later_decls_.emplace(names[n], decls[n]);
  };
  while (tok(i).kind != Tok::kIndent && tok(i).kind != Tok::kEnd) ++i;
  int level = 0;
  bool at_start = true;
  for (; tok(i).kind != Tok::kEnd; ++i) {
    Tok kind = tok(i).kind;
    if (kind == Tok::kIndent || kind == Tok::kDedent || kind == Tok::kNewline) {
      level += kind == Tok::kIndent ? 1 : kind == Tok::kDedent ? -1 : 0;
      if (level == 0) return;
      at_start = true;
      continue;
    }
    if (at_start && level == 1) statement(i);
    at_start = false;
  }
}

PrimFunc Parser::ParseFunction(std::string* name, bool private_def) {
  ExpectKeyword("def", "after the decorator");
  Loc loc = Peek().loc;
  *name = ExpectName("for the function").text;
  PushScope();
  FuncFrame frame;
  PrescanDeclarations();
  shape_declared_.clear();
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
  later_decls_.clear();
  shape_declared_.clear();
  if (!frame.root_allocs.empty()) {
    // The implied root block is where the function is named.
    Span span = src_.SpanAt(loc);
    body = Guard(loc, [&] {
      Block root(Array<IterVar>(), Array<BufferRegion>(), Array<BufferRegion>(), "root", body,
                 Optional<Stmt>(), frame.root_allocs, Array<MatchBufferRegion>(),
                 Map<String, Any>());
      root.CopyOnWrite()->span = span;
      BlockRealize realize(Array<PrimExpr>(), PrimExpr(), root);
      realize.CopyOnWrite()->span = span;
      return realize;
    });
  }
  // TVMScript's rule: a function that is not private is exported under its own name.
  if (!private_def && !frame.attrs.count("global_symbol")) {
    frame.attrs.Set("global_symbol", String(*name));
  }
  return Guard(
      loc, [&] { return PrimFunc(frame.params, body, frame.buffer_map, frame.attrs, ret_type); });
}

void Parser::ParseParams(FuncFrame* frame) {
  Expect("(", "to start the parameters");
  struct Param {
    Token name;
    NodePtr annotation;
    NodePtr default_value;
    bool keyword_only = false;
  };
  std::vector<Param> params;
  std::unordered_set<std::string> seen;
  bool keyword_only = false;
  while (!IsOp(")")) {
    if (IsOp("*")) {
      // Python's marker of keyword-only parameters: the T.constexpr ones of a jit kernel.
      Loc star = Next().loc;
      if (keyword_only) Fail(star, "'*' is given twice");
      keyword_only = true;
      if (!Accept(",")) break;
      continue;
    }
    const Token& name = ExpectName("for a parameter");
    if (!seen.insert(name.text).second) Fail(name.loc, "duplicate parameter '" + name.text + "'");
    Param p{name, nullptr, nullptr, keyword_only};
    if (!IsOp(":")) Fail(Peek().loc, "parameter '" + name.text + "' needs a type annotation");
    Next();
    p.annotation = ParseExpr();
    if (Accept("=")) p.default_value = ParseExpr();
    params.push_back(std::move(p));
    if (!Accept(",")) break;
  }
  Expect(")", "to close the parameters");
  // Compile-time parameters are not parameters of the PrimFunc: each name stands for its value,
  // given by the caller (ParseOptions::values) or else by its default.
  for (size_t i = 0; i < params.size();) {
    const Param& p = params[i];
    bool is_constexpr = DottedName(p.annotation.get()) == "T.constexpr";
    if (!is_constexpr) {
      if (p.keyword_only) {
        Fail(p.name.loc, "keyword-only parameter '" + p.name.text +
                             "' must be annotated T.constexpr (a compile-time value)");
      }
      if (p.default_value) {
        Fail(p.default_value->loc, "only a T.constexpr parameter can have a default value");
      }
      ++i;
      continue;
    }
    if (!GivenValue(p.name.text)) {
      if (!p.default_value) {
        Fail(p.name.loc, "compile-time parameter '" + p.name.text +
                             "' has no value; give it one (" + p.name.text + "=...) or a default");
      }
      values_[p.name.text] = EvalAny(p.default_value.get());
    }
    params.erase(params.begin() + static_cast<std::ptrdiff_t>(i));
  }
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

ObjectRef ParseSource(const std::string& text, const ParseOptions& options) {
  try {
    parser::Source src(options.source_name, text, options.line_offset, options.col_offset);
    parser::Parser p(src, &options);
    std::string name;
    return p.ParseFile(&name);
  } catch (const parser::ParseError& e) {
    TVM_FFI_THROW(ValueError) << e.message;
  }
  TVM_FFI_UNREACHABLE();
}

ObjectRef ParseText(const std::string& text, const std::string& source_name) {
  ParseOptions options;
  options.source_name = source_name;
  return ParseSource(text, options);
}

IRModule ParseModule(const std::string& text, const std::string& source_name) {
  try {
    parser::Source src(source_name, text);
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
  try {
    parser::Source src(source_name, text);
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
      .def("tessel.ir.ParseSource",
           [](String text, String source_name, int64_t line_offset, int64_t col_offset,
              bool python_def, bool private_def, Map<String, Any> values) {
             ParseOptions o;
             o.source_name = source_name;
             o.line_offset = static_cast<int>(line_offset);
             o.col_offset = static_cast<int>(col_offset);
             o.python_def = python_def;
             o.private_def = private_def;
             o.values = values;
             return ParseSource(text, o);
           })
      .def("tessel.ir.ParseModule",
           [](String text, String source_name) { return ParseModule(text, source_name); })
      .def("tessel.ir.ParseExpr",
           [](String text, Map<String, Any> vars) { return ParseExpr(text, vars); });
}

}  // namespace ir
}  // namespace tessel
