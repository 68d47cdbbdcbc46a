// VerifyWellFormed: the IR verifier. An analysis (it changes nothing) that lists every way a
// module breaks the rules below; the pass of the same name throws on the first.
//
// Checks, per function (error.check names the one that failed):
//
// - "free_var": every variable used is bound where it is used. Binders: the function's params;
//   a bare variable entry of a buffer_map buffer's shape, strides or elem_offset (the caller's
//   argument gives its value), and each such buffer's data variable; For, LetStmt, Let, Allocate
//   (its buffer_var); a block's iteration variables (in the block, not in the BlockRealize's
//   values); the data variable of a block's alloc_buffers and match_buffers, and a bare variable in
//   a match_buffer's shape, strides or elem_offset that is not already bound; an AttrStmt
//   "thread_extent" or "virtual_thread" whose node is a Var. A variable nothing binds is allowed
//   only when the function's attrs list its name under "tessel.free_vars" (a list of strings: the
//   text format prints function attributes before the variables they would name).
// - "undeclared_buffer": a BufferLoad, BufferStore, block read/write region or match_buffer
//   source uses a buffer (the very object) that is not declared where it is used: by the
//   buffer_map, an enclosing DeclBuffer, or an enclosing block's alloc_buffers or match_buffers.
// - "rebound_var": each variable is bound at one place only. A binder of a variable already in
//   scope, or already bound elsewhere in the function, is an error, with two exceptions: a Let
//   expression may bind a variable again to a structurally equal value (passes that duplicate an
//   expression duplicate its Lets), and a thread_extent/virtual_thread AttrStmt may bind a thread
//   variable again outside the scope of its other bindings (sibling kernel launches share it).
// - "vector_index": only the last index of a buffer access may be a vector.
// - "allocate_dtype": an Allocate's buffer_var must point to elements of the Allocate's dtype.
// - "iter_var_dtype": a BlockRealize value, and the domain of its iteration variable, have the
//   iteration variable's dtype.
// - "negative_size": no buffer dimension or Allocate extent is a negative constant, and no
//   vectorized loop has a constant extent below 1.
// - "div_by_zero": no integer Div, Mod, FloorDiv or FloorMod has the constant divisor 0.
// - "hopper_builtin": the operands of a Hopper PTX builtin are what ir::CheckHopperCall accepts
//   (pointers where PTX takes addresses, constants in range where it takes immediates).
#ifndef TESSEL_TRANSFORM_VERIFY_WELL_FORMED_H_
#define TESSEL_TRANSFORM_VERIFY_WELL_FORMED_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

#include <string>
#include <vector>

namespace tessel {
namespace transform {

struct VerifyError {
  // One of the check names listed above.
  std::string check;
  // The module key of the function (empty for a function verified alone).
  std::string function;
  // What is wrong, naming the variable or buffer.
  std::string message;
  // The offending node (a Var, an expression or a statement).
  ObjectRef node;
  // The innermost statement that holds `node` (may be node itself; undefined at function level).
  ObjectRef stmt;
  // Where `stmt`, or else the nearest enclosing statement that has a span, was written.
  tvm::ffi::Optional<ir::Span> span;
  // `[check] in function 'f': message` (after `file:line:col: ` when there is a span), then the
  // node and its statement in the text format (a long statement is cut after a few lines).
  std::string ToString() const;
};

// Every error of every function, in module order (functions sorted by name), each function's
// errors in the order a depth-first walk meets them. A variable or buffer is reported once per
// function per check.
std::vector<VerifyError> VerifyWellFormed(const IRModule& mod);
std::vector<VerifyError> VerifyWellFormed(const PrimFunc& func, const std::string& name = "");

// Returns its input unchanged, or throws ValueError with the first error (and how many follow).
Pass VerifyWellFormedPass();

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_VERIFY_WELL_FORMED_H_
