// The printer: any IR object to the text format (docs/text_format.md). Deterministic: the same
// object always prints the same text.
#ifndef TESSEL_IR_PRINTER_H_
#define TESSEL_IR_PRINTER_H_

#include <tessel/ir/module.h>

#include <string>

namespace tessel {
namespace ir {

// Prints an IRModule, PrimFunc, Stmt, PrimExpr, Buffer, BufferRegion, Range, IterVar or Op.
// A module or function prints as a complete file; a statement or expression prints as it would
// appear inside a function body (free variables by name, without declarations).
std::string AsText(const ObjectRef& node);

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_PRINTER_H_
