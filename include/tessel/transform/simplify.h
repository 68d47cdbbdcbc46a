// Simplify: every expression of a function rewritten by arith::Analyzer::Simplify, under the facts
// that hold where the expression is evaluated, and control flow that those facts decide removed.
//
// Facts used:
// - loop ranges: `for i in range(min, min + extent)` binds i to [min, min + extent) in the body
//   (with allow_override, so a loop variable reused by two sibling loops is fine);
// - `T.attr(v, "thread_extent", n)` binds v to [0, n);
// - block iteration variables range over their domains; a BlockRealize's predicate holds in
//   its block;
// - `if c`: c holds in the then branch, `not c` in the else branch;
// - `assert c`: c holds in the assert's body;
// - `T.assume(c)` (an Evaluate of builtin::assume): c holds in the statements after it in the
//   same SeqStmt;
// - LetStmt: the variable equals its value;
// - every shape entry of a buffer in the function's buffer_map, a DeclBuffer or a block's
//   alloc_buffers is non-negative;
// - the body of a loop (or thread_extent attribute) with a symbolic extent: the extent is >= 1;
// - what the host wrapper checked before the body runs (transform/host_facts.h): each parameter
//   buffer's element count fits its index dtype, as a product bound over its size variables
//   (arith/product_bounds.h), so that index arithmetic over symbolic shapes is known not to
//   wrap; a device kernel gets the facts its host function passed on (attr "tessel.host_facts").
//   Simplify(IRModule) gives these facts to every function that no other function of the module
//   calls (T.call_global bypasses the wrapper); Simplify(PrimFunc) takes the function to be called
//   through its wrapper.
// A condition that reads memory (a BufferLoad, or a call that reads or writes state) is never used
// as a fact, since a store inside the guarded statements may change its value (of an `and`, the
// conjuncts that do not read memory still are); neither is a Let value that reads memory.
//
// What holds afterwards:
// - the result computes the same as the input for every execution that satisfies the facts;
// - an `if` (IfThenElse) whose side-effect-free condition is provably true is replaced by its
//   then branch, provably false by its else branch (or removed); an `assert` whose condition is
//   provably true is removed; a loop whose extent is provably <= 0 is removed; removed statements
//   leave no `T.evaluate(0)` inside a SeqStmt (a body left empty becomes `T.evaluate(0)`);
// - `T.assume` statements are kept: they document facts for later passes (their condition is
//   simplified like any expression, and may become True);
// - when nothing changes, the very input object is returned.
//
// Simplify(stmt, analyzer) records the bindings of the loop, let and block variables it meets in
// `analyzer` (they outlive the call, harmlessly for well-formed IR where each variable is bound
// once); constraint scopes are all closed again on return.
#ifndef TESSEL_TRANSFORM_SIMPLIFY_H_
#define TESSEL_TRANSFORM_SIMPLIFY_H_

#include <tessel/arith/analyzer.h>
#include <tessel/ir/module.h>

namespace tessel {
namespace transform {

ir::Stmt Simplify(const ir::Stmt& stmt, arith::Analyzer* analyzer);
// With a fresh analyzer; the function's buffer shapes are non-negative facts, and so are the
// host-checked facts (HostCheckedFacts): the function is taken to be called through its wrapper.
ir::PrimFunc Simplify(const ir::PrimFunc& func);
// Every function of the module.
ir::IRModule Simplify(const ir::IRModule& mod);

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_SIMPLIFY_H_
