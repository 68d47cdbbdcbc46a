// The syntax tree of an expression, before names are resolved. The parser reads an expression
// into this tree first because some forms bind a name after its uses (`T.Let(body, where={x: v})`)
// and because statements are told apart by what follows an expression (`=`, `:`).
#ifndef TESSEL_SRC_IR_PARSER_AST_H_
#define TESSEL_SRC_IR_PARSER_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/parser/diagnostics.h"

namespace tessel {
namespace ir {
namespace parser {

enum class NodeKind {
  kName,       // text
  kInt,        // int_value
  kFloat,      // float_value
  kString,     // text (decoded)
  kBool,       // int_value 0 / 1
  kNone,       //
  kAttr,       // kids[0].text
  kCall,       // kids[0](kids[1..1+num_pos], keywords[i] = kids[1+num_pos+i])
  kSubscript,  // kids[0][kids[1..]]
  kSlice,      // kids[0]:kids[1]:kids[2], each may be null
  kTuple,      // kids
  kList,       // kids
  kDict,       // kids[2i]: kids[2i+1]
  kBinary,     // kids[0] text kids[1]; loc is the operator's
  kCompare,    // kids[0] text kids[1]; loc is the operator's
  kUnary,      // text kids[0] ("-", "+", "~")
  kAnd,        // kids[0] and kids[1]
  kOr,         // kids[0] or kids[1]
  kNot,        // not kids[0]
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeKind kind;
  Loc loc;
  std::string text;
  uint64_t int_value = 0;
  double float_value = 0;
  std::vector<NodePtr> kids;
  // kCall: names of keyword arguments and where they were written.
  std::vector<std::string> keywords;
  std::vector<Loc> keyword_locs;
  size_t num_pos = 0;
  // Height of the tree below this node (1 for a leaf), bounded so evaluation cannot overflow.
  int height = 1;

  Node(NodeKind k, Loc l) : kind(k), loc(l) {}

  const Node* kid(size_t i) const { return kids[i].get(); }
  // kCall helpers.
  const Node* callee() const { return kids[0].get(); }
  const Node* arg(size_t i) const { return kids[1 + i].get(); }
  const Node* keyword(const std::string& name) const {
    for (size_t i = 0; i < keywords.size(); ++i) {
      if (keywords[i] == name) return kids[1 + num_pos + i].get();
    }
    return nullptr;
  }
};

// "T.axis.spatial" for a chain of names and attributes; empty for anything else.
std::string DottedName(const Node* node);

}  // namespace parser
}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_SRC_IR_PARSER_AST_H_
