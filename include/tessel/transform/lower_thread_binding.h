// LowerThreadBinding: GPU thread loops to launch attributes. Afterwards no For of kind
// thread_binding remains: each `for v in T.thread_binding(min, min + n, thread=tag)` became
// `with T.attr(t, "thread_extent", n): body`, where t is a fresh int variable named after the tag
// with '.' written '_' ("blockIdx_x", "threadIdx_y"), and body has every use of v replaced by
// t (or t + min when min is not 0). Loop annotations are dropped. Tags are blockIdx.[xyz] and
// threadIdx.[xyz]; any other tag is a ValueError. A loop bound again inside a loop or attribute of
// the same tag, from 0 over the same extent, is that same thread: its variable becomes the outer
// thread variable and no attribute is added (TVM's cooperative copies are scheduled so). Over
// another extent it is a ValueError naming both variables; sibling loops of one tag are fine.
// Existing thread_extent attributes stay as they are. Functions without thread_binding loops are
// returned unchanged (the very input object).
#ifndef TESSEL_TRANSFORM_LOWER_THREAD_BINDING_H_
#define TESSEL_TRANSFORM_LOWER_THREAD_BINDING_H_

#include <tessel/ir/module.h>
#include <tessel/transform/pass.h>

#include <optional>
#include <string>

namespace tessel {
namespace transform {

ir::PrimFunc LowerThreadBinding(const ir::PrimFunc& func);
ir::IRModule LowerThreadBinding(const ir::IRModule& mod);
Pass LowerThreadBindingPass();

// The thread tag ("threadIdx.x") a thread_extent variable stands for, read from its name: a name
// that starts with "blockIdx" or "threadIdx", then '.' or '_', then x, y or z, optionally followed
// by '_' and more (the printer's suffix for a repeated name). nullopt for any other name.
std::optional<std::string> ThreadTagOf(const ir::Var& var);

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_LOWER_THREAD_BINDING_H_
