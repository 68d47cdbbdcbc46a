// The depth guard in front of structural equality and hashing. Those are tvm-ffi's and recurse once
// per level of the object graph with no limit, so IR 100,000 levels deep overflows the stack. This
// walk measures the depth without recursion (an explicit stack, fields found by reflection, the way
// tvm-ffi's own walk finds them) and refuses graphs deeper than kMaxStructuralDepth with a
// RecursionError naming the limit, before tvm-ffi is called (python/tessel/ir/structural.py).
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/reflection/registry.h>

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessel {
namespace ir {

namespace {

// Measured on the 8 MiB stack of a Linux main thread (tvm-ffi 0.1.15, an Add chain): hashing
// overflowed between 4,000 and 5,000 levels of objects, equality between 4,000 and 7,000. Half of
// the lower figure leaves room for the caller's frames and for nodes with larger frames.
constexpr int64_t kMaxStructuralDepth = 2000;

using tvm::ffi::Any;
using tvm::ffi::Object;

// The deepest path below `root`, counted in objects, or limit + 1 as soon as one is longer. A node
// reached again at a depth no greater than before is not walked again, so shared subtrees (a DAG)
// cost their size once per new greatest depth, not once per path.
int64_t DepthUpTo(const Any& root, int64_t limit) {
  std::vector<std::pair<const Object*, int64_t>> todo;
  std::unordered_map<const Object*, int64_t> deepest;
  int64_t most = 0;
  auto push = [&](const Any& v, int64_t depth) {
    const Object* o = v.as<Object>();
    if (o == nullptr) return;
    auto it = deepest.find(o);
    if (it != deepest.end() && it->second >= depth) return;
    deepest[o] = depth;
    todo.emplace_back(o, depth);
  };
  push(root, 1);
  while (!todo.empty()) {
    auto [o, depth] = todo.back();
    todo.pop_back();
    most = std::max(most, depth);
    if (most > limit) return most;
    int32_t index = o->type_index();
    if (index == tvm::ffi::TypeIndex::kTVMFFIArray) {
      for (const Any& e : *static_cast<const tvm::ffi::ArrayObj*>(o)) push(e, depth + 1);
      continue;
    }
    if (index == tvm::ffi::TypeIndex::kTVMFFIMap) {
      for (const auto& [k, v] : *static_cast<const tvm::ffi::MapObj*>(o)) {
        push(k, depth + 1);
        push(v, depth + 1);
      }
      continue;
    }
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
    if (info == nullptr) continue;
    tvm::ffi::reflection::ForEachFieldInfo(info, [&](const TVMFFIFieldInfo* field) {
      if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashIgnore) return;
      push(tvm::ffi::reflection::FieldGetter(field)(o), depth + 1);
    });
  }
  return most;
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("tessel.ir.StructuralDepth",
           [](const Any& node, int64_t limit) { return DepthUpTo(node, limit); })
      .def("tessel.ir.CheckStructuralDepth", [](const Any& node) {
        int64_t depth = DepthUpTo(node, kMaxStructuralDepth);
        if (depth > kMaxStructuralDepth) {
          TVM_FFI_THROW(RecursionError)
              << "IR nested deeper than " << kMaxStructuralDepth
              << " levels of objects: structural equality and hashing (tvm-ffi's, recursive) stop "
                 "there rather than overflow the stack (kMaxStructuralDepth; see "
                 "docs/reliability.md)";
        }
      });
}

}  // namespace ir
}  // namespace tessel
