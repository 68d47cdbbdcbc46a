// The expression grammar: recursive descent with one function per precedence level.
#include "ir/parser/syntax.h"

#include <unordered_set>

namespace tessel {
namespace ir {
namespace parser {
namespace {

// Trees taller than this are rejected: long operator chains are legal, but evaluation recurses
// over the tree, so its height must stay bounded.
constexpr int kMaxTreeHeight = 1024;

// Binary operator levels, weakest first: | ^ & (<< >>) (+ -) (* / // %).
const std::vector<std::vector<std::string>>& BinaryLevels() {
  static const std::vector<std::vector<std::string>> levels = {
      {"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%"}};
  return levels;
}

bool IsCompareOp(const Token& t) {
  if (t.kind != Tok::kOp) return false;
  return t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=" || t.text == "==" ||
         t.text == "!=";
}

}  // namespace

std::string DottedName(const Node* node) {
  if (node->kind == NodeKind::kName) return node->text;
  if (node->kind == NodeKind::kAttr) {
    std::string base = DottedName(node->kid(0));
    if (base.empty()) return "";
    return base + "." + node->text;
  }
  return "";
}

Syntax::DepthGuard::DepthGuard(Syntax* s, Loc loc) : s_(s) {
  if (++s_->depth_ > kMaxNesting) {
    --s_->depth_;
    s_->Fail(loc, "expression nested deeper than " + std::to_string(kMaxNesting) + " levels");
  }
}

bool Syntax::IsReserved(const std::string& word) {
  static const std::unordered_set<std::string> words = {
      "and",    "as",    "assert", "break",  "class", "continue", "def",    "del",
      "elif",   "else",  "except", "False",  "for",   "from",     "global", "if",
      "import", "in",    "is",     "lambda", "None",  "nonlocal", "not",    "or",
      "pass",   "raise", "return", "True",   "try",   "while",    "with",   "yield"};
  return words.count(word) != 0;
}

void Syntax::Unexpected(const char* context) const {
  const Token& t = Peek();
  Fail(t.loc, std::string("unexpected ") + Describe(t) + " " + context);
}

const Token& Syntax::Expect(const char* op, const char* context) {
  if (!IsOp(op)) {
    const Token& t = Peek();
    Fail(t.loc, std::string("expected '") + op + "' " + context + ", found " + Describe(t));
  }
  return Next();
}

void Syntax::ExpectKeyword(const char* word, const char* context) {
  if (!IsKeyword(word)) {
    const Token& t = Peek();
    Fail(t.loc, std::string("expected '") + word + "' " + context + ", found " + Describe(t));
  }
  Next();
}

void Syntax::ExpectNewline(const char* context) {
  if (Peek().kind != Tok::kNewline) {
    const Token& t = Peek();
    Fail(t.loc, std::string("expected end of line ") + context + ", found " + Describe(t));
  }
  Next();
}

const Token& Syntax::ExpectName(const char* context) {
  const Token& t = Peek();
  if (t.kind != Tok::kName || IsReserved(t.text)) {
    Fail(t.loc, std::string("expected a name ") + context + ", found " + Describe(t));
  }
  return Next();
}

NodePtr Syntax::MakeNode(NodeKind kind, Loc loc, std::vector<NodePtr> kids, std::string text) {
  auto n = std::make_unique<Node>(kind, loc);
  n->text = std::move(text);
  int h = 0;
  for (const NodePtr& k : kids) {
    if (k && k->height > h) h = k->height;
  }
  n->height = h + 1;
  if (n->height > kMaxTreeHeight) {
    Fail(loc, "expression nested deeper than " + std::to_string(kMaxTreeHeight) + " levels");
  }
  n->kids = std::move(kids);
  return n;
}

NodePtr Syntax::ParseExprList() {
  NodePtr first = ParseExpr();
  if (!IsOp(",")) return first;
  Loc loc = first->loc;
  std::vector<NodePtr> items;
  items.push_back(std::move(first));
  while (Accept(",")) {
    const Token& t = Peek();
    if (t.kind == Tok::kNewline || IsOp("=") || IsOp(":") || IsKeyword("in") || IsOp(")")) break;
    items.push_back(ParseExpr());
  }
  return MakeNode(NodeKind::kTuple, loc, std::move(items));
}

NodePtr Syntax::ParseExpr() {
  NodePtr e = ParseOr();
  if (IsKeyword("if")) Fail(Peek().loc, "conditional expressions are not supported; use T.Select");
  if (IsKeyword("lambda")) Fail(Peek().loc, "lambda is not supported");
  return e;
}

NodePtr Syntax::ParseOr() {
  NodePtr a = ParseAnd();
  while (IsKeyword("or")) {
    Loc loc = Next().loc;
    std::vector<NodePtr> kids;
    kids.push_back(std::move(a));
    kids.push_back(ParseAnd());
    a = MakeNode(NodeKind::kOr, loc, std::move(kids));
  }
  return a;
}

NodePtr Syntax::ParseAnd() {
  NodePtr a = ParseNot();
  while (IsKeyword("and")) {
    Loc loc = Next().loc;
    std::vector<NodePtr> kids;
    kids.push_back(std::move(a));
    kids.push_back(ParseNot());
    a = MakeNode(NodeKind::kAnd, loc, std::move(kids));
  }
  return a;
}

NodePtr Syntax::ParseNot() {
  if (IsKeyword("not")) {
    Loc loc = Next().loc;
    DepthGuard guard(this, loc);
    std::vector<NodePtr> kids;
    kids.push_back(ParseNot());
    return MakeNode(NodeKind::kNot, loc, std::move(kids));
  }
  return ParseComparison();
}

NodePtr Syntax::ParseComparison() {
  NodePtr a = ParseBinaryLevel(0);
  if (!IsCompareOp(Peek())) {
    if (IsKeyword("in") || IsKeyword("is")) {
      Fail(Peek().loc, "'" + Peek().text + "' is not supported in expressions");
    }
    return a;
  }
  const Token& op = Next();
  Loc loc = op.loc;
  std::string text = op.text;
  std::vector<NodePtr> kids;
  kids.push_back(std::move(a));
  kids.push_back(ParseBinaryLevel(0));
  if (IsCompareOp(Peek())) {
    Fail(Peek().loc,
         "chained comparison; write (a < b) and (b < c) or parenthesize the comparison");
  }
  return MakeNode(NodeKind::kCompare, loc, std::move(kids), text);
}

NodePtr Syntax::ParseBinaryLevel(int level) {
  const auto& levels = BinaryLevels();
  if (level == static_cast<int>(levels.size())) return ParseFactor();
  NodePtr a = ParseBinaryLevel(level + 1);
  while (true) {
    const Token& t = Peek();
    if (t.kind != Tok::kOp) break;
    bool match = false;
    for (const std::string& op : levels[level]) match = match || t.text == op;
    if (!match) break;
    Loc loc = t.loc;
    std::string text = Next().text;
    std::vector<NodePtr> kids;
    kids.push_back(std::move(a));
    kids.push_back(ParseBinaryLevel(level + 1));
    a = MakeNode(NodeKind::kBinary, loc, std::move(kids), text);
  }
  return a;
}

NodePtr Syntax::ParseFactor() {
  if (IsOp("-") || IsOp("+") || IsOp("~")) {
    const Token& t = Next();
    Loc loc = t.loc;
    std::string text = t.text;
    DepthGuard guard(this, loc);
    std::vector<NodePtr> kids;
    kids.push_back(ParseFactor());
    return MakeNode(NodeKind::kUnary, loc, std::move(kids), text);
  }
  NodePtr e = ParsePrimary();
  if (IsOp("**")) Fail(Peek().loc, "'**' is not supported; use T.pow");
  return e;
}

NodePtr Syntax::ParsePrimary() {
  NodePtr e = ParseAtom();
  while (true) {
    if (IsOp("(")) {
      Loc loc = e->loc;
      DepthGuard guard(this, Peek().loc);
      Next();
      std::vector<NodePtr> kids;
      kids.push_back(std::move(e));
      auto call = MakeNode(NodeKind::kCall, loc, std::move(kids));
      ParseCallArgs(call.get());
      e = std::move(call);
    } else if (IsOp("[")) {
      Loc loc = e->loc;
      DepthGuard guard(this, Peek().loc);
      Next();
      std::vector<NodePtr> kids;
      kids.push_back(std::move(e));
      if (IsOp("]")) Fail(Peek().loc, "empty subscript");
      while (true) {
        kids.push_back(ParseSubscriptItem());
        if (!Accept(",")) break;
        if (IsOp("]")) break;
      }
      Expect("]", "to close the subscript");
      e = MakeNode(NodeKind::kSubscript, loc, std::move(kids));
    } else if (IsOp(".")) {
      Next();
      const Token& name = Peek();
      if (name.kind != Tok::kName) {
        Fail(name.loc, "expected an attribute name after '.', found " + Describe(name));
      }
      std::string text = Next().text;
      Loc loc = e->loc;
      std::vector<NodePtr> kids;
      kids.push_back(std::move(e));
      e = MakeNode(NodeKind::kAttr, loc, std::move(kids), text);
    } else {
      return e;
    }
  }
}

void Syntax::ParseCallArgs(Node* call) {
  std::vector<NodePtr> keyword_values;
  while (!IsOp(")")) {
    if (Peek().kind == Tok::kName && IsOp("=", 1)) {
      const Token& name = Next();
      for (const std::string& k : call->keywords) {
        if (k == name.text) Fail(name.loc, "keyword argument '" + name.text + "' repeated");
      }
      call->keywords.push_back(name.text);
      call->keyword_locs.push_back(name.loc);
      Next();
      keyword_values.push_back(ParseExpr());
    } else {
      if (!call->keywords.empty()) {
        Fail(Peek().loc, "positional argument follows keyword argument");
      }
      if (IsOp("*") || IsOp("**")) Fail(Peek().loc, "argument unpacking is not supported");
      call->kids.push_back(ParseExpr());
      ++call->num_pos;
    }
    if (!Accept(",")) break;
  }
  Expect(")", "to close the argument list");
  int h = call->height;
  for (NodePtr& v : keyword_values) call->kids.push_back(std::move(v));
  for (const NodePtr& k : call->kids) h = std::max(h, k->height + 1);
  call->height = h;
  if (h > kMaxTreeHeight) Fail(call->loc, "expression nested too deeply");
}

NodePtr Syntax::ParseSubscriptItem() {
  Loc loc = Peek().loc;
  NodePtr begin;
  if (!IsOp(":")) {
    begin = ParseExpr();
    if (!IsOp(":")) return begin;
  }
  Next();  // ':'
  NodePtr end, step;
  if (!IsOp(",") && !IsOp("]") && !IsOp(":")) end = ParseExpr();
  if (Accept(":")) {
    if (!IsOp(",") && !IsOp("]")) step = ParseExpr();
  }
  std::vector<NodePtr> kids;
  kids.push_back(std::move(begin));
  kids.push_back(std::move(end));
  kids.push_back(std::move(step));
  return MakeNode(NodeKind::kSlice, loc, std::move(kids));
}

NodePtr Syntax::ParseAtom() {
  const Token& t = Peek();
  Loc loc = t.loc;
  switch (t.kind) {
    case Tok::kInt: {
      auto n = MakeNode(NodeKind::kInt, loc, {}, t.text);
      n->int_value = t.int_value;
      Next();
      return n;
    }
    case Tok::kFloat: {
      auto n = MakeNode(NodeKind::kFloat, loc, {}, t.text);
      n->float_value = t.float_value;
      Next();
      return n;
    }
    case Tok::kString: {
      std::string value = Next().text;
      // Adjacent literals concatenate, as in Python.
      while (Peek().kind == Tok::kString) value += Next().text;
      return MakeNode(NodeKind::kString, loc, {}, value);
    }
    case Tok::kName: {
      if (t.text == "True" || t.text == "False") {
        auto n = MakeNode(NodeKind::kBool, loc, {}, t.text);
        n->int_value = t.text == "True" ? 1 : 0;
        Next();
        return n;
      }
      if (t.text == "None") {
        Next();
        return MakeNode(NodeKind::kNone, loc, {});
      }
      if (IsReserved(t.text)) Unexpected("in an expression");
      return MakeNode(NodeKind::kName, loc, {}, Next().text);
    }
    case Tok::kOp:
      break;
    default:
      Unexpected("in an expression");
  }
  if (t.text == "(") {
    DepthGuard guard(this, loc);
    Next();
    if (Accept(")")) return MakeNode(NodeKind::kTuple, loc, {});
    NodePtr first = ParseExpr();
    if (Accept(")")) return first;
    std::vector<NodePtr> items;
    items.push_back(std::move(first));
    while (Accept(",")) {
      if (IsOp(")")) break;
      items.push_back(ParseExpr());
    }
    Expect(")", "to close the parenthesis");
    return MakeNode(NodeKind::kTuple, loc, std::move(items));
  }
  if (t.text == "[") {
    DepthGuard guard(this, loc);
    Next();
    std::vector<NodePtr> items;
    while (!IsOp("]")) {
      items.push_back(ParseExpr());
      if (!Accept(",")) break;
    }
    Expect("]", "to close the list");
    return MakeNode(NodeKind::kList, loc, std::move(items));
  }
  if (t.text == "{") {
    DepthGuard guard(this, loc);
    Next();
    std::vector<NodePtr> items;
    while (!IsOp("}")) {
      items.push_back(ParseExpr());
      Expect(":", "between a dictionary key and its value");
      items.push_back(ParseExpr());
      if (!Accept(",")) break;
    }
    Expect("}", "to close the dictionary");
    return MakeNode(NodeKind::kDict, loc, std::move(items));
  }
  Unexpected("in an expression");
}

}  // namespace parser
}  // namespace ir
}  // namespace tessel
