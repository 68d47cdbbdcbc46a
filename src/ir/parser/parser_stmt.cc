// Statements: suites and binders, loops, conditionals, `with` forms (blocks, T.init, T.attr),
// assignments (stores, lets, declarations, allocations), and the block header statements.
#include <limits>
#include <optional>

#include "ir/parser/parser_impl.h"

namespace tessel {
namespace ir {
namespace parser {
namespace {

Stmt SeqOf(std::vector<Stmt>* reversed) {
  if (reversed->empty()) return Evaluate(IntImm(DataType::Int(32), 0));
  if (reversed->size() == 1) return (*reversed)[0];
  Array<Stmt> seq(reversed->rbegin(), reversed->rend());
  return SeqStmt(seq);
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

Stmt Parser::FoldItems(std::vector<Item>* items, Loc loc) {
  std::vector<Stmt> acc;
  for (auto it = items->rbegin(); it != items->rend(); ++it) {
    if (it->wrap) {
      Stmt body = SeqOf(&acc);
      acc.clear();
      acc.push_back(it->wrap(body));
    } else {
      acc.push_back(it->stmt);
    }
  }
  return SeqOf(&acc);
}

Stmt Parser::ParseSuite(SuiteContext ctx) {
  if (Peek().kind != Tok::kIndent) Fail(Peek().loc, "expected an indented block");
  Loc loc = Next().loc;
  PushScope();
  std::vector<Item> items;
  while (Peek().kind != Tok::kDedent && Peek().kind != Tok::kEnd) ParseStatement(ctx, &items);
  if (Peek().kind == Tok::kDedent) Next();
  PopScope();
  return FoldItems(&items, loc);
}

void Parser::ParseStatement(SuiteContext ctx, std::vector<Item>* items) {
  // A safety net under the checks that name what is wrong: an error the IR's constructors raise
  // while this statement is built gets the statement's line and column (the innermost statement's,
  // as nested statements catch first). Depth limits keep their own kind.
  Loc loc = Peek().loc;
  try {
    ParseStatementUnguarded(ctx, items);
  } catch (const tvm::ffi::Error& e) {
    if (e.kind() == "RecursionError") throw;
    Fail(loc, e.message());
  }
}

void Parser::ParseStatementUnguarded(SuiteContext ctx, std::vector<Item>* items) {
  const Token& t = Peek();
  if (t.kind == Tok::kIndent) Fail(t.loc, "unexpected indent");
  if (t.kind == Tok::kName) {
    const std::string& w = t.text;
    if (w == "for") return items->push_back(Item{ParseFor(), nullptr});
    if (w == "while") return items->push_back(Item{ParseWhile(), nullptr});
    if (w == "if") return items->push_back(Item{ParseIf(), nullptr});
    if (w == "with") return ParseWith(ctx, items);
    if (w == "assert") return ParseAssert(items);
    if (w == "pass") {
      Next();
      return ExpectNewline("after 'pass'");
    }
    if (w == "elif" || w == "else") Fail(t.loc, "'" + w + "' without a matching 'if'");
    if (w == "return") Fail(t.loc, "'return' is not supported; use T.ret(value)");
    if (w == "def" || w == "class") Fail(t.loc, "'" + w + "' is only allowed at the top level");
  }
  if (IsOp("@")) Fail(t.loc, "a decorator is only allowed at the top level");
  Loc first = t.loc;
  NodePtr e = ParseExprList();
  if (e->kind == NodeKind::kString && Peek().kind == Tok::kNewline) {
    // A docstring, or a string used as a comment: Python evaluates and drops it.
    return ExpectNewline("after the string");
  }
  if (IsOp(":")) return ParseAnnotatedLet(first, std::move(e), items);
  if (IsOp("=")) return ParseAssignment(ctx, first, std::move(e), items);
  if (IsOp("+=") || IsOp("-=") || IsOp("*=") || IsOp("/=")) {
    Fail(Peek().loc, "augmented assignment is not supported; write A[i] = A[i] + x");
  }
  ParseExprStatement(ctx, first, std::move(e), items);
}

Stmt Parser::ParseFor() {
  Loc loc = Next().loc;
  std::vector<Token> targets;
  do {
    targets.push_back(ExpectName("as a loop variable"));
  } while (Accept(","));
  ExpectKeyword("in", "after the loop variables");
  NodePtr iter = ParseExpr();
  Expect(":", "after the loop header");
  ExpectNewline("after ':'");
  if (iter->kind != NodeKind::kCall) {
    Fail(iter->loc, "a loop iterates over range(...), T.serial(...), T.grid(...) or similar");
  }
  std::string fn = DottedName(iter->callee());
  struct LoopSpec {
    Var var;
    PrimExpr min, extent;
  };
  std::vector<LoopSpec> loops;
  ForKind kind = ForKind::kSerial;
  String thread_tag;
  Map<String, Any> annotations;
  auto range_of = [&](const Node* call, const std::string& name, size_t first) {
    size_t npos = call->num_pos - first;
    Operand mn, end;
    if (npos == 1) {
      end = Eval(call->arg(first));
      PrimExpr e = Materialize(end);
      return std::make_pair(MakeConst(e.dtype(), 0), e);
    }
    mn = Eval(call->arg(first));
    end = Eval(call->arg(first + 1));
    Unify(&mn, &end, call->loc, name);
    return std::make_pair(mn.expr, Extent(mn.expr, end.expr, call->loc));
  };
  if (fn == "T.grid" || fn == "T.Parallel") {
    CheckArgs(iter.get(), fn, 1, SIZE_MAX);
    if (fn == "T.Parallel") annotations.Set("tessel.tile_parallel", true);
    if (iter->num_pos != targets.size()) {
      Fail(iter->loc, fn + " has " + std::to_string(iter->num_pos) + " extents for " +
                          std::to_string(targets.size()) + " loop variables");
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      PrimExpr extent = EvalPrim(iter->arg(i));
      if (!extent.dtype().is_int_or_uint()) {
        Fail(iter->arg(i)->loc, "a loop extent must be an integer, got " + extent.dtype().str());
      }
      loops.push_back(
          LoopSpec{Var(targets[i].text, extent.dtype()), MakeConst(extent.dtype(), 0), extent});
    }
  } else {
    if (targets.size() != 1)
      Fail(targets[1].loc, "only T.grid and T.Parallel bind several loop variables");
    static const std::pair<const char*, ForKind> kKinds[] = {
        {"range", ForKind::kSerial},        {"T.serial", ForKind::kSerial},
        {"T.parallel", ForKind::kParallel}, {"T.vectorized", ForKind::kVectorized},
        {"T.unroll", ForKind::kUnrolled},   {"T.thread_binding", ForKind::kThreadBinding},
        {"T.Pipelined", ForKind::kSerial}};
    bool found = false;
    for (const auto& k : kKinds) {
      if (fn == k.first) {
        kind = k.second;
        found = true;
      }
    }
    if (!found) Fail(iter->loc, "unknown loop kind '" + fn + "'");
    if (fn == "range") {
      CheckArgs(iter.get(), fn, 1, 2);
    } else if (kind == ForKind::kThreadBinding) {
      CheckArgs(iter.get(), fn, 1, 2, {"thread", "annotations"});
      const Node* th = iter->keyword("thread");
      if (!th) Fail(iter->loc, "T.thread_binding needs thread=\"threadIdx.x\" or similar");
      thread_tag = EvalString(th, "the thread tag");
      if (thread_tag.empty()) Fail(th->loc, "the thread tag is empty");
    } else if (fn == "T.Pipelined") {
      CheckArgs(iter.get(), fn, 1, 2, {"num_stages"});
      if (const Node* s = iter->keyword("num_stages")) {
        int64_t stages = EvalConstInt(s, "num_stages");
        if (stages < 1) Fail(s->loc, "num_stages = " + std::to_string(stages) + " (at least 1)");
        annotations.Set("tessel.pipeline_stages", stages);
      }
    } else {
      CheckArgs(iter.get(), fn, 1, 2, {"annotations"});
    }
    if (const Node* a = iter->keyword("annotations")) annotations = EvalDict(a, "annotations");
    auto [mn, extent] = range_of(iter.get(), fn, 0);
    if (!extent.dtype().is_int_or_uint()) {
      Fail(iter->loc, "a loop extent must be an integer, got " + extent.dtype().str());
    }
    loops.push_back(LoopSpec{Var(targets[0].text, mn.dtype()), mn, extent});
  }
  PushScope();
  for (size_t i = 0; i < loops.size(); ++i) {
    BindVar(targets[i].text, loops[i].var);
    loop_extents_[loops[i].var.get()] = loops[i].extent;
  }
  Stmt body = ParseSuite(SuiteContext{});
  PopScope();
  for (const LoopSpec& l : loops) loop_extents_.erase(l.var.get());
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    body = At(loc, Guard(loc, [&] {
                return For(it->var, it->min, it->extent, kind, body, thread_tag, annotations);
              }));
  }
  return body;
}

Stmt Parser::ParseWhile() {
  Loc loc = Next().loc;
  NodePtr cond_node = ParseExpr();
  Expect(":", "after the while condition");
  ExpectNewline("after ':'");
  PrimExpr cond = EvalPrim(cond_node.get());
  Stmt body = ParseSuite(SuiteContext{});
  return At(loc, Guard(loc, [&] { return While(cond, body); }));
}

Stmt Parser::ParseIf() {
  struct Branch {
    PrimExpr cond;
    Stmt body;
    Loc loc;
  };
  std::vector<Branch> branches;
  Optional<Stmt> else_body;
  do {
    Loc loc = Next().loc;  // 'if' or 'elif'
    NodePtr cond_node = ParseExpr();
    Expect(":", "after the condition");
    ExpectNewline("after ':'");
    PrimExpr cond = EvalPrim(cond_node.get());
    if (!cond.dtype().is_bool()) {
      Fail(cond_node->loc, "the condition must be bool, got " + cond.dtype().str());
    }
    Stmt body = ParseSuite(SuiteContext{});
    branches.push_back(Branch{cond, body, loc});
  } while (IsKeyword("elif"));
  if (IsKeyword("else")) {
    Next();
    Expect(":", "after 'else'");
    ExpectNewline("after ':'");
    else_body = ParseSuite(SuiteContext{});
  }
  for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
    else_body =
        At(it->loc, Guard(it->loc, [&] { return IfThenElse(it->cond, it->body, else_body); }));
  }
  return *else_body;
}

void Parser::ParseWith(SuiteContext ctx, std::vector<Item>* items) {
  Loc loc = Next().loc;
  NodePtr call = ParseExpr();
  if (call->kind == NodeKind::kCall && DottedName(call->callee()) == "T.Kernel") {
    ParseTileKernel(loc, call.get(), items);
    return;
  }
  if (IsKeyword("as")) Fail(Peek().loc, "'with ... as' is not supported");
  Expect(":", "after the with-statement");
  ExpectNewline("after ':'");
  std::string fn = call->kind == NodeKind::kCall ? DottedName(call->callee()) : "";
  // TVM 0.25 and later print T.sblock; older TVM and TileLang write T.block.
  if (fn == "T.block" || fn == "T.sblock") {
    items->push_back(Item{ParseBlock(loc, call.get()), nullptr});
    return;
  }
  if (fn == "T.init") {
    CheckArgs(call.get(), fn, 0, 0);
    if (!ctx.block) Fail(call->loc, "T.init() is only allowed directly inside a block");
    if (ctx.block->init.has_value()) Fail(call->loc, "the block already has an init");
    ctx.block->init = ParseSuite(SuiteContext{});
    return;
  }
  if (fn == "T.attr") {
    CheckArgs(call.get(), fn, 3, 3);
    const Node* node_arg = call->arg(0);
    Any node;
    if (node_arg->kind == NodeKind::kString) {
      node = String(node_arg->text);
    } else if (node_arg->kind != NodeKind::kNone) {
      node = EvalPrim(node_arg);
    }
    std::string key = EvalString(call->arg(1), "the attribute key");
    PrimExpr value = EvalPrim(call->arg(2));
    Stmt body = ParseSuite(SuiteContext{});
    items->push_back(
        Item{At(loc, Guard(loc, [&] { return AttrStmt(node, key, value, body); })), nullptr});
    return;
  }
  Fail(call->loc,
       "unsupported with-statement; expected T.block (T.sblock), T.init, T.attr or T.Kernel");
}

Stmt Parser::ParseBlock(Loc with_loc, const Node* call) {
  CheckArgs(call, DottedName(call->callee()), 0, 1);
  std::string name;
  if (call->num_pos == 1) name = EvalString(call->arg(0), "the block name");
  BlockFrame frame;
  Stmt body = ParseSuite(SuiteContext{nullptr, &frame});
  Loc loc = call->loc;
  Span span = src_.SpanAt(with_loc);
  return Guard(loc, [&]() -> Stmt {
    Block block(frame.iter_vars, frame.reads, frame.writes, name, body, frame.init,
                frame.alloc_buffers, frame.match_buffers, frame.annotations);
    block.CopyOnWrite()->span = span;
    BlockRealize realize(frame.iter_values, frame.predicate, block);
    realize.CopyOnWrite()->span = span;
    return realize;
  });
}

void Parser::ParseAssert(std::vector<Item>* items) {
  Loc loc = Next().loc;
  NodePtr cond_node = ParseExpr();
  Expect(",", "between the assertion and its message");
  NodePtr msg_node = ParseExpr();
  ExpectNewline("after the assertion");
  PrimExpr cond = EvalPrim(cond_node.get());
  PrimExpr msg = EvalPrim(msg_node.get());
  Guard(loc, [&] { return AssertStmt(cond, msg, Evaluate(0)); });  // checks now, at its location
  items->push_back(Item{Stmt(), [this, cond, msg, loc](Stmt body) {
                          return At(loc, Guard(loc, [&] { return AssertStmt(cond, msg, body); }));
                        }});
}

void Parser::ParseAnnotatedLet(Loc first, NodePtr target, std::vector<Item>* items) {
  Next();  // ':'
  if (target->kind != NodeKind::kName) Fail(target->loc, "only a name can be annotated");
  NodePtr annotation = ParseExpr();
  if (!IsOp("=")) Fail(Peek().loc, "expected '=' and a value after the annotation");
  Next();
  NodePtr value_node = ParseExpr();
  ExpectNewline("after the assignment");
  Var var;
  if (annotation->kind == NodeKind::kCall && DottedName(annotation->callee()) == "T.handle") {
    const Node* call = annotation.get();
    CheckArgs(call, "T.handle", 0, 2);
    if (call->num_pos == 0) {
      var = Var(target->text, DataType::Handle());
    } else {
      std::string scope =
          call->num_pos > 1 ? EvalString(call->arg(1), "the storage scope") : std::string("global");
      var = Var::Pointer(target->text, EvalDType(call->arg(0)), scope);
    }
  } else {
    // TVM 0.25 and later write a let's type as `T.let[T.int32]`.
    const Node* type_node = annotation.get();
    if (type_node->kind == NodeKind::kSubscript && DottedName(type_node->kid(0)) == "T.let") {
      if (type_node->kids.size() != 2) Fail(type_node->loc, "T.let[...] takes one dtype");
      type_node = type_node->kid(1);
    }
    DataType t = EvalDType(type_node);
    var = Var(target->text, t);
  }
  PrimExpr value = EvalPrimAs(value_node.get(), var.dtype());
  if (value.dtype() != var.dtype()) {
    Fail(value_node->loc, "the value has dtype " + value.dtype().str() + " but '" + target->text +
                              "' is declared " + var.dtype().str());
  }
  BindVar(target->text, var);
  Loc loc = target->loc;
  items->push_back(Item{Stmt(), [this, var, value, loc, first](Stmt body) {
                          return At(first, Guard(loc, [&] { return LetStmt(var, value, body); }));
                        }});
}

bool Parser::ParseDeclaration(const std::string& name, const Node* call) {
  std::string fn = DottedName(call->callee());
  if (fn == "T.handle") {
    CheckArgs(call, fn, 0, 2);
    if (call->num_pos == 0) {
      BindVar(name, Var(name, DataType::Handle()));
    } else {
      std::string scope =
          call->num_pos > 1 ? EvalString(call->arg(1), "the storage scope") : std::string("global");
      BindVar(name, Var::Pointer(name, EvalDType(call->arg(0)), scope));
    }
    return true;
  }
  if (!StartsWith(fn, "T.") || call->num_pos != 0) return false;
  auto t = DataType::Parse(fn.substr(2));
  if (!t || t->is_void()) return false;
  CheckArgs(call, fn, 0, 0, {"is_size_var"});
  bool size_var = false;
  if (const Node* s = call->keyword("is_size_var")) size_var = EvalBoolConst(s, "is_size_var");
  // A buffer shape above may have declared the name already (TVM prints the declaration after
  // the parameters that use it); the declaration then restates that variable.
  if (const Binding* b = Lookup(name)) {
    if (b->var.defined() && shape_declared_.count(b->var.get())) {
      bool was_size_var = b->var.as<SizeVarNode>() != nullptr;
      if (b->var.dtype() != *t || was_size_var != size_var) {
        Fail(call->loc, "'" + name + "' is declared " + fn + "() but a shape above made it " +
                            (was_size_var ? "a size variable of " : "") + b->var.dtype().str());
      }
      shape_declared_.erase(b->var.get());
      return true;
    }
  }
  Var v = size_var ? Guard(call->loc, [&]() -> Var { return SizeVar(name, *t); })
                   : Guard(call->loc, [&] { return Var(name, *t); });
  BindVar(name, v);
  return true;
}

void Parser::ParseAssignment(SuiteContext ctx, Loc first, NodePtr target,
                             std::vector<Item>* items) {
  Loc eq = Next().loc;  // '='
  NodePtr value_node = ParseExprList();
  ExpectNewline("after the assignment");
  const Node* value = value_node.get();
  std::string fn = value->kind == NodeKind::kCall ? DottedName(value->callee()) : "";

  if (target->kind == NodeKind::kSubscript) {
    Buffer buf = EvalBufferRef(target->kid(0), "a store");
    Array<PrimExpr> indices = EvalIndices(buf, target.get());
    PrimExpr v = EvalPrimAs(value, buf->dtype);
    items->push_back(
        Item{At(first, Guard(eq, [&] { return BufferStore(buf, v, indices); })), nullptr});
    return;
  }
  if (target->kind == NodeKind::kTuple) {
    if (fn == "T.axis.remap") return ParseAxisRemap(ctx, target.get(), value);
    // `n, k = T.int32(), T.int32()`: one declaration per name.
    bool declarations =
        value->kind == NodeKind::kTuple && value->kids.size() == target->kids.size();
    for (size_t i = 0; declarations && i < value->kids.size(); ++i) {
      declarations =
          target->kid(i)->kind == NodeKind::kName && value->kid(i)->kind == NodeKind::kCall;
    }
    if (!declarations) {
      Fail(target->loc,
           "assigning to several names needs T.axis.remap or one declaration per name "
           "(n, m = T.int32(), T.int32())");
    }
    for (size_t i = 0; i < value->kids.size(); ++i) {
      if (!ParseDeclaration(target->kid(i)->text, value->kid(i))) {
        Fail(value->kid(i)->loc, "expected a variable declaration such as T.int32()");
      }
    }
    return;
  }
  if (target->kind != NodeKind::kName) Fail(target->loc, "cannot assign to this expression");
  const std::string& name = target->text;

  if (fn == "T.axis.remap") return ParseAxisRemap(ctx, target.get(), value);
  if (StartsWith(fn, "T.axis.")) return ParseAxis(ctx, name, value, fn.substr(7));
  if (fn == "T.match_buffer") {
    if (value->num_pos < 1) Fail(value->loc, "T.match_buffer needs a source");
    const Node* src = value->arg(0);
    if (ctx.block) {
      BufferRegion source = EvalRegion(src);
      Buffer buf = EvalBufferDecl(value, name, 1, true, "T.match_buffer");
      ctx.block->match_buffers.push_back(
          Guard(value->loc, [&] { return MatchBufferRegion(buf, source); }));
      BindBuffer(name, buf);
      return;
    }
    if (!ctx.func) {
      Fail(value->loc, "T.match_buffer is only allowed at the top of a function or a block");
    }
    PrimExpr param = EvalPrim(src);
    const VarNode* pv = param.as<VarNode>();
    bool is_param = false;
    for (const Var& p : ctx.func->params) is_param = is_param || p.get() == pv;
    if (!is_param || !param.dtype().is_handle()) {
      Fail(src->loc, "T.match_buffer needs a handle parameter of the function");
    }
    Var pvar = tvm::ffi::GetRef<Var>(pv);
    if (ctx.func->buffer_map.count(pvar)) {
      Fail(src->loc, "parameter '" + std::string(pv->name_hint) + "' already has a buffer");
    }
    Buffer buf = EvalBufferDecl(value, name, 1, true, "T.match_buffer");
    ctx.func->buffer_map.Set(pvar, buf);
    BindBuffer(name, buf);
    return;
  }
  if (fn == "T.alloc_buffer" || fn == "T.sblock_alloc_buffer") {
    // Right under `def`, an allocation belongs to the function's implied root block (TVM prints
    // the root block this way).
    if (!ctx.block && !ctx.func) {
      Fail(value->loc, fn + " is only allowed directly inside a block or a function body");
    }
    Buffer buf = EvalBufferDecl(value, name, 0, false, fn.c_str());
    (ctx.block ? ctx.block->alloc_buffers : ctx.func->root_allocs).push_back(buf);
    BindBuffer(name, buf);
    return;
  }
  if (fn == "T.Buffer") {
    BindBuffer(name, EvalBufferDecl(value, name, 0, false, "T.Buffer"));
    return;
  }
  if (ParseTileAlloc(first, name, value, fn, items)) return;
  if (fn == "T.decl_buffer") {
    Buffer buf = EvalBufferDecl(value, name, 0, false, "T.decl_buffer");
    BindBuffer(name, buf);
    Loc loc = value->loc;
    items->push_back(Item{Stmt(), [this, buf, loc, first](Stmt body) {
                            return At(first, Guard(loc, [&] { return DeclBuffer(buf, body); }));
                          }});
    return;
  }
  if (fn == "T.allocate") {
    CheckArgs(value, fn, 2, 4, {"annotations", "condition"});
    const Node* ext = value->arg(0);
    Array<PrimExpr> extents;
    if (ext->kind == NodeKind::kList || ext->kind == NodeKind::kTuple) {
      for (const NodePtr& k : ext->kids) extents.push_back(EvalPrim(k.get()));
    } else {
      extents.push_back(EvalPrim(ext));
    }
    DataType dtype = EvalDType(value->arg(1));
    std::string scope = "global";
    if (value->num_pos > 2) scope = EvalString(value->arg(2), "the storage scope");
    PrimExpr cond;
    const Node* cond_node = value->num_pos > 3 ? value->arg(3) : value->keyword("condition");
    if (cond_node) cond = EvalPrim(cond_node);
    Map<String, Any> ann;
    if (const Node* a = value->keyword("annotations")) ann = EvalDict(a, "annotations");
    Var var = Var::Pointer(name, dtype, scope);
    BindVar(name, var);
    Loc loc = value->loc;
    Guard(loc, [&] { return Allocate(var, dtype, extents, cond, Evaluate(0), ann); });
    items->push_back(Item{Stmt(), [=](Stmt body) {
                            return At(first, Guard(loc, [&] {
                                        return Allocate(var, dtype, extents, cond, body, ann);
                                      }));
                          }});
    return;
  }
  if (value->kind == NodeKind::kCall && value->callee()->kind == NodeKind::kAttr &&
      value->callee()->text == "view" && value->callee()->kid(0)->kind == NodeKind::kName) {
    const Binding* b = Lookup(value->callee()->kid(0)->text);
    if (b && b->buffer.defined()) return ParseBufferView(first, name, b->buffer, value, items);
  }
  if (value->kind == NodeKind::kCall && ParseDeclaration(name, value)) return;

  // A plain `x = value` is a LetStmt whose variable takes the value's dtype.
  PrimExpr v = EvalPrim(value);
  Var var(name, v.dtype());
  BindVar(name, var);
  Loc loc = target->loc;
  items->push_back(Item{Stmt(), [this, var, v, loc, first](Stmt body) {
                          return At(first, Guard(loc, [&] { return LetStmt(var, v, body); }));
                        }});
}

void Parser::ParseBufferView(Loc first, const std::string& name, const Buffer& src,
                             const Node* call, std::vector<Item>* items) {
  // TVM 0.27 prints a flattened or reshaped alias of a buffer as `A_1 = A.view(16384)`: a buffer
  // declared over the same data (T.decl_buffer(shape, dtype, data=A.data, ...)).
  std::string what = std::string(src->name) + ".view";
  if (call->keyword("layout"))
    Fail(call->keyword("layout")->loc, what + ": layouts are not supported");
  CheckArgs(call, what, 1, SIZE_MAX);
  if (call->num_pos == 1 && call->arg(0)->kind == NodeKind::kString) {
    Fail(call->arg(0)->loc,
         what + "(dtype), a view that reinterprets the elements, is not supported");
  }
  DataType index_dtype = src->shape.empty() ? DataType::Int(32) : src->shape[0].dtype();
  Array<PrimExpr> shape;
  int infer = -1;
  for (size_t i = 0; i < call->num_pos; ++i) {
    Operand op = Eval(call->arg(i));
    if (op.lit == Operand::kInt && op.negative && op.magnitude == 1) {
      if (infer >= 0) Fail(call->arg(i)->loc, what + ": only one dimension can be -1");
      infer = static_cast<int>(i);
      shape.push_back(MakeConst(index_dtype, 1));
      continue;
    }
    shape.push_back(AdoptOrDefault(op, index_dtype));
  }
  // The element counts must agree where they are constants; -1 takes what is left.
  auto product = [](const Array<PrimExpr>& dims) -> std::optional<int64_t> {
    int64_t n = 1;
    for (const PrimExpr& d : dims) {
      auto v = AsConstInt(d);
      if (!v || *v < 0 || (*v != 0 && n > std::numeric_limits<int64_t>::max() / *v)) {
        return std::nullopt;
      }
      n *= *v;
    }
    return n;
  };
  auto total = product(src->shape), given = product(shape);
  if (infer >= 0) {
    if (!total || !given || *given == 0 || *total % *given != 0) {
      Fail(call->arg(infer)->loc,
           what + ": cannot infer the -1 dimension (the sizes must be constants that divide)");
    }
    shape.Set(infer, MakeConst(index_dtype, *total / *given));
  } else if (total && given && *total != *given) {
    Fail(call->loc, what + ": the view has " + std::to_string(*given) + " elements, " +
                        std::string(src->name) + " has " + std::to_string(*total));
  }
  if (!src->strides.empty() && src->strides.size() != shape.size()) {
    Fail(call->loc, what + ": a view of a strided buffer must keep its rank");
  }
  Buffer buf = Guard(call->loc, [&] {
    return Buffer(name, src->data, src->dtype, shape, src->strides, src->elem_offset, src->scope,
                  src->data_alignment, src->offset_factor);
  });
  BindBuffer(name, buf);
  Loc loc = call->loc;
  items->push_back(Item{Stmt(), [this, buf, loc, first](Stmt body) {
                          return At(first, Guard(loc, [&] { return DeclBuffer(buf, body); }));
                        }});
}

void Parser::ParseAxis(SuiteContext ctx, const std::string& name, const Node* call,
                       const std::string& kind) {
  std::string fn = "T.axis." + kind;
  if (!ctx.block) Fail(call->loc, fn + " is only allowed directly inside a block");
  IterVarType type;
  if (kind == "spatial" || kind == "S") {
    type = IterVarType::kDataPar;
  } else if (kind == "reduce" || kind == "R") {
    type = IterVarType::kCommReduce;
  } else if (kind == "scan") {
    type = IterVarType::kOrdered;
  } else if (kind == "opaque") {
    type = IterVarType::kOpaque;
  } else {
    Fail(call->loc, "unknown iterator kind '" + fn + "'");
  }
  CheckArgs(call, fn, 2, 2);
  PrimExpr value = EvalPrim(call->arg(1));
  DataType t = value.dtype();
  const Node* dom = call->arg(0);
  PrimExpr mn, extent;
  if (dom->kind == NodeKind::kTuple || dom->kind == NodeKind::kList) {
    if (dom->kids.size() != 2) Fail(dom->loc, "a domain is (begin, end)");
    Operand b = Eval(dom->kid(0)), e = Eval(dom->kid(1));
    b.expr = AdoptOrDefault(b, t);
    e.expr = AdoptOrDefault(e, t);
    b.lit = e.lit = Operand::kNone;
    Unify(&b, &e, dom->loc, "a domain");
    mn = b.expr;
    extent = Extent(b.expr, e.expr, dom->loc);
  } else {
    extent = EvalPrimAs(dom, t);
    mn = Guard(dom->loc, [&] { return MakeConst(extent.dtype(), 0); });
  }
  Var var(name, t);
  IterVar iv = Guard(call->loc, [&] { return IterVar(var, Range(mn, extent), type); });
  ctx.block->iter_vars.push_back(iv);
  ctx.block->iter_values.push_back(value);
  BindVar(name, var);
}

void Parser::ParseAxisRemap(SuiteContext ctx, const Node* target, const Node* call) {
  if (!ctx.block) Fail(call->loc, "T.axis.remap is only allowed directly inside a block");
  CheckArgs(call, "T.axis.remap", 2, 2);
  std::string kinds = EvalString(call->arg(0), "the iterator kinds of T.axis.remap");
  const Node* list = call->arg(1);
  if (list->kind != NodeKind::kList && list->kind != NodeKind::kTuple) {
    Fail(list->loc, "T.axis.remap expects a list of loop variables");
  }
  std::vector<const Node*> names;
  if (target->kind == NodeKind::kName) {
    names.push_back(target);
  } else {
    for (const NodePtr& k : target->kids) {
      if (k->kind != NodeKind::kName) Fail(k->loc, "expected a name");
      names.push_back(k.get());
    }
  }
  if (kinds.size() != names.size() || list->kids.size() != names.size()) {
    Fail(call->loc, "T.axis.remap binds " + std::to_string(names.size()) + " names with " +
                        std::to_string(kinds.size()) + " kinds and " +
                        std::to_string(list->kids.size()) + " values");
  }
  std::vector<Var> vars;
  for (size_t i = 0; i < names.size(); ++i) {
    IterVarType type;
    if (kinds[i] == 'S') {
      type = IterVarType::kDataPar;
    } else if (kinds[i] == 'R') {
      type = IterVarType::kCommReduce;
    } else {
      Fail(call->arg(0)->loc, std::string("unknown iterator kind '") + kinds[i] +
                                  "' in T.axis.remap; expected S or R");
    }
    const Node* item = list->kid(i);
    PrimExpr value = EvalPrim(item);
    auto it = loop_extents_.find(value.get());
    if (it == loop_extents_.end()) {
      Fail(item->loc, "T.axis.remap needs loop variables of enclosing loops");
    }
    PrimExpr extent = it->second;
    Var var(names[i]->text, value.dtype());
    IterVar iv = Guard(
        call->loc, [&] { return IterVar(var, Range(MakeConst(value.dtype(), 0), extent), type); });
    ctx.block->iter_vars.push_back(iv);
    ctx.block->iter_values.push_back(value);
    vars.push_back(var);
  }
  for (size_t i = 0; i < names.size(); ++i) BindVar(names[i]->text, vars[i]);
}

void Parser::ParseExprStatement(SuiteContext ctx, Loc first, NodePtr expr,
                                std::vector<Item>* items) {
  ExpectNewline("after the statement");
  const Node* e = expr.get();
  std::string fn = e->kind == NodeKind::kCall ? DottedName(e->callee()) : "";
  auto need_block = [&](const char* what) {
    if (!ctx.block) Fail(e->loc, std::string(what) + " is only allowed directly inside a block");
  };
  if (fn == "T.evaluate") {
    CheckArgs(e, fn, 1, 1);
    PrimExpr v = EvalPrim(e->arg(0));
    items->push_back(Item{At(first, Guard(e->loc, [&] { return Evaluate(v); })), nullptr});
    return;
  }
  if (fn == "T.func_attr") {
    if (!ctx.func) Fail(e->loc, "T.func_attr is only allowed at the top of a function body");
    if (ctx.func->attrs_seen) Fail(e->loc, "T.func_attr is given twice");
    CheckArgs(e, fn, 1, 1);
    ctx.func->attrs = EvalDict(e->arg(0), "T.func_attr");
    ctx.func->attrs_seen = true;
    return;
  }
  if (fn == "T.where") {
    need_block("T.where");
    CheckArgs(e, fn, 1, 1);
    if (ctx.block->seen_where) Fail(e->loc, "T.where is given twice");
    ctx.block->predicate = EvalPrim(e->arg(0));
    ctx.block->seen_where = true;
    return;
  }
  if (fn == "T.reads" || fn == "T.writes") {
    need_block(fn.c_str());
    bool reads = fn == "T.reads";
    bool& seen = reads ? ctx.block->seen_reads : ctx.block->seen_writes;
    if (seen) Fail(e->loc, fn + " is given twice");
    seen = true;
    (reads ? ctx.block->reads : ctx.block->writes) = EvalRegions(e, fn);
    return;
  }
  if (fn == "T.block_attr" || fn == "T.sblock_attr") {
    need_block(fn.c_str());
    CheckArgs(e, fn, 1, 1);
    if (ctx.block->seen_attr) Fail(e->loc, fn + " is given twice");
    ctx.block->annotations = EvalDict(e->arg(0), fn.c_str());
    ctx.block->seen_attr = true;
    return;
  }
  PrimExpr v = EvalPrim(e);
  items->push_back(Item{At(first, Guard(e->loc, [&] { return Evaluate(v); })), nullptr});
}

}  // namespace parser
}  // namespace ir
}  // namespace tessel
