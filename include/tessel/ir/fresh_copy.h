// A statement with every variable it binds replaced by a new one: two copies of one statement can
// then live in one function (VerifyWellFormed's "rebound_var" forbids binding a variable twice),
// e.g. a fast kernel and its fallback made from the same tile program.
#ifndef TESSEL_IR_FRESH_COPY_H_
#define TESSEL_IR_FRESH_COPY_H_

#include <tessel/ir/stmt.h>

namespace tessel {
namespace ir {

// Renamed: the variables of For, LetStmt, Let and Allocate, and the buffers of DeclBuffer (a new
// buffer over the new data variable, used by every BufferLoad / BufferStore of the old one). Free
// variables stay. Blocks are refused (ValueError): their iteration variables and buffers are not
// renamed here.
Stmt FreshCopy(const Stmt& s);

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_FRESH_COPY_H_
