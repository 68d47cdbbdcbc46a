// The parser: the text format (docs/text_format.md) to IR. Errors throw a tvm-ffi ValueError whose
// message is `source_name:line:col: error: message`, the source line and a caret.
#ifndef TESSEL_IR_PARSER_H_
#define TESSEL_IR_PARSER_H_

#include <tessel/ir/module.h>

#include <string>

namespace tessel {
namespace ir {

// How a source is read beyond the text format itself (the Python front end's needs).
struct ParseOptions {
  std::string source_name = "<string>";
  // Added to every reported line and column: the text is a dedented excerpt of a larger file.
  int line_offset = 0;
  int col_offset = 0;
  // The text starts at `def` or `class` (a Python function or class whose decorators the caller
  // has read) instead of at `@T.prim_func` / `@I.ir_module`.
  bool python_def = false;
  // For a `def`: whether it is private (no global symbol), as `@T.prim_func(private=True)` says.
  bool private_def = false;
  // Values of names the text does not define: the enclosing Python scope's captured values and
  // the values of `T.constexpr` parameters. int, float, bool, str (also a dtype), DataType,
  // PrimExpr and Buffer values are allowed; a local name shadows a captured one.
  Map<String, Any> values;
};

// A module (`@I.ir_module class ...`) gives an IRModule; a lone `@T.prim_func` gives a PrimFunc.
ObjectRef ParseSource(const std::string& text, const ParseOptions& options);
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
