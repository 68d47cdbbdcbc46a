// What the host wrapper guarantees about a function's parameter buffers before its body runs,
// shared by the wrapper (the limits it checks, codegen/c/host_wrapper.cc) and the passes (the
// same guarantees as analyzer facts), so that the two cannot drift apart.
//
// For every buffer in the buffer_map of a function called through its host wrapper:
// - every shape entry is >= 0 (a size variable is checked when it is bound; a constant or an
//   expression must equal the argument's extent, and every extent is checked to be >= 0);
// - the element count, the exact product of the argument's extents, is at most the maximum of
//   the buffer's index dtype (int64 when a shape, stride or offset entry of the buffer is a 64-bit
//   integer, else int32), and the byte size (count times the element's bytes) at most INT64_MAX.
//   A buffer with no elements passes whatever its other extents are.
// These are facts, not assumptions: a call that breaks one is refused with a ValueError before
// the body runs.
#ifndef TESSEL_TRANSFORM_HOST_FACTS_H_
#define TESSEL_TRANSFORM_HOST_FACTS_H_

#include <tessel/ir/function.h>

#include <vector>

namespace tessel {
namespace transform {

struct BufferSizeLimit {
  ir::DataType index_dtype;  // int32 or int64
  int64_t max_elements;      // index_dtype's maximum
  int64_t elem_bytes;        // bytes of one element (at least 1)
  int64_t max_bytes;         // INT64_MAX
};
BufferSizeLimit SizeLimitOf(const ir::Buffer& buf);

// What the checks say about buf's shape, as conditions over its size variables: `v >= 0` for
// each variable entry and, when every entry is a variable or a constant, the product bound
// (arith/product_bounds.h) `prod(variables) <= min(max_elements, max_bytes / elem_bytes) //
// prod(constants)`. A shape with an expression entry (`n * 4`) gets no product bound: the wrapper
// compares the extent with the expression's wrapped value, so the exact product is unknown.
std::vector<ir::PrimExpr> BufferSizeFacts(const ir::Buffer& buf);

// Attribute of a device kernel: the host-checked facts that hold whenever it runs, over its own
// parameters (SplitHostDevice copies those of its host function that only use variables it
// passes).
inline constexpr const char* kHostFactsAttr = "tessel.host_facts";

// The facts the host wrapper established when func's body starts: for a function with a host
// wrapper (every function but a device kernel), BufferSizeFacts of each buffer_map buffer; for a
// device kernel, its kHostFactsAttr list. Whoever calls a function's body without its wrapper
// must establish the same facts.
std::vector<ir::PrimExpr> HostCheckedFacts(const ir::PrimFunc& func);

}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_TRANSFORM_HOST_FACTS_H_
