// The token cursor and the expression grammar (Python's precedence, see docs/text_format.md).
// Produces syntax trees (ast.h); statements are read by the Parser, which builds on this class.
#ifndef TESSEL_SRC_IR_PARSER_SYNTAX_H_
#define TESSEL_SRC_IR_PARSER_SYNTAX_H_

#include <string>
#include <vector>

#include "ir/parser/ast.h"
#include "ir/parser/lexer.h"

namespace tessel {
namespace ir {
namespace parser {

class Syntax {
 public:
  explicit Syntax(const Source& source) : src_(source), tokens_(Lex(source)) {}

  const Source& source() const { return src_; }
  [[noreturn]] void Fail(Loc loc, const std::string& message) const { src_.Fail(loc, message); }

  const Token& Peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool IsOp(const char* op, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Tok::kOp && t.text == op;
  }
  bool IsKeyword(const char* word, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Tok::kName && t.text == word;
  }
  bool Accept(const char* op) {
    if (!IsOp(op)) return false;
    Next();
    return true;
  }
  const Token& Expect(const char* op, const char* context);
  void ExpectKeyword(const char* word, const char* context);
  void ExpectNewline(const char* context);
  // An identifier that is not a keyword.
  const Token& ExpectName(const char* context);
  [[noreturn]] void Unexpected(const char* context) const;

  // One expression (`test` in Python's grammar).
  NodePtr ParseExpr();
  // Expressions separated by commas; more than one (or a trailing comma) gives a kTuple.
  NodePtr ParseExprList();

  static bool IsReserved(const std::string& word);

 protected:
  const Source& src_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;

  // Counts recursion that the input controls, failing past kMaxNesting.
  class DepthGuard {
   public:
    DepthGuard(Syntax* s, Loc loc);
    ~DepthGuard() { --s_->depth_; }

   private:
    Syntax* s_;
  };

 private:
  NodePtr ParseOr();
  NodePtr ParseAnd();
  NodePtr ParseNot();
  NodePtr ParseComparison();
  NodePtr ParseBinaryLevel(int level);
  NodePtr ParseFactor();
  NodePtr ParsePrimary();
  NodePtr ParseAtom();
  NodePtr ParseSubscriptItem();
  void ParseCallArgs(Node* call);
  NodePtr MakeNode(NodeKind kind, Loc loc, std::vector<NodePtr> kids, std::string text = "");
};

}  // namespace parser
}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_SRC_IR_PARSER_SYNTAX_H_
