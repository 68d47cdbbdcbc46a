// The tokenizer of the text format: Python's token rules for the subset the format uses, with
// NEWLINE / INDENT / DEDENT tokens for the block structure and a position for every token.
#ifndef TESSEL_SRC_IR_PARSER_LEXER_H_
#define TESSEL_SRC_IR_PARSER_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/parser/diagnostics.h"

namespace tessel {
namespace ir {
namespace parser {

enum class Tok { kName, kInt, kFloat, kString, kOp, kNewline, kIndent, kDedent, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  // Identifier, operator spelling, or the decoded value of a string literal.
  std::string text;
  Loc loc;
  uint64_t int_value = 0;  // kInt
  double float_value = 0;  // kFloat
};

// Tokenizes the whole source. Fails (ParseError) on tabs, unterminated strings, unknown characters,
// inconsistent dedents, unbalanced brackets and brackets nested deeper than kMaxNesting. The last
// token is kEnd, preceded by a NEWLINE and the DEDENTs that close open blocks.
std::vector<Token> Lex(const Source& source);

// A readable name of a token for messages: 'foo', '(', "end of input", "newline" ...
std::string Describe(const Token& token);

}  // namespace parser
}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_SRC_IR_PARSER_LEXER_H_
