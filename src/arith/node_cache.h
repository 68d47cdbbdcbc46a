// A small direct-mapped cache of per-node answers (bounds, modular sets), keyed by node address.
// A slot holds a reference to its node, so the address cannot be reused by another node while
// the slot is live. Invalidation is O(1): every answer is stamped with the generation of the
// state it was computed under, and a lookup only accepts the current generation. Colliding
// nodes simply evict each other: this is a cache, never the source of truth.
#ifndef TESSEL_SRC_ARITH_NODE_CACHE_H_
#define TESSEL_SRC_ARITH_NODE_CACHE_H_

#include <tvm/ffi/object.h>

#include <cstdint>
#include <vector>

namespace tessel {
namespace arith {

template <typename V>
class NodeCache {
 public:
  const V* Find(const tvm::ffi::Object* node, uint64_t generation) const {
    if (slots_.empty()) return nullptr;
    const Slot& s = slots_[Index(node)];
    return s.key.get() == node && s.generation == generation ? &s.value : nullptr;
  }
  void Put(const tvm::ffi::ObjectRef& key, uint64_t generation, const V& value) {
    if (slots_.empty()) slots_.resize(kSlots);
    Slot& s = slots_[Index(key.get())];
    s.key = key;
    s.generation = generation;
    s.value = value;
  }
  // Drops every slot (and the references they hold).
  void Reset() { slots_.clear(); }

 private:
  static constexpr int kLog2Slots = 9;
  static constexpr size_t kSlots = size_t{1} << kLog2Slots;
  static size_t Index(const tvm::ffi::Object* node) {
    uint64_t x = reinterpret_cast<uintptr_t>(node);
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(x >> (64 - kLog2Slots));
  }
  struct Slot {
    tvm::ffi::ObjectRef key;
    uint64_t generation = 0;
    V value{};
  };
  std::vector<Slot> slots_;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_NODE_CACHE_H_
