// The parser: the text format (docs/text_format.md) to IR. Errors throw a tvm-ffi ValueError whose
// message is `source_name:line:col: error: message`, the source line and a caret.
#ifndef TESSEL_IR_PARSER_H_
#define TESSEL_IR_PARSER_H_

#include <tessel/ir/module.h>

#include <string>

namespace tessel {
namespace ir {

// A module (`@I.ir_module class ...`) gives an IRModule; a lone `@T.prim_func` gives a PrimFunc.
ObjectRef ParseText(const std::string& text, const std::string& source_name = "<string>");
// Like ParseText, but a lone function is wrapped in a module keyed by its name.
IRModule ParseModule(const std::string& text, const std::string& source_name = "<string>");
// A standalone expression over the given variables (name -> dtype, or name -> Var to reuse).
PrimExpr ParseExpr(const std::string& text, const Map<String, Any>& vars,
                   const std::string& source_name = "<expr>");

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_PARSER_H_
