// The threadgroup memory of one launch: each static threadgroup array and the dynamic block in a
// mapping of its own between two PROT_NONE guard pages, so that an access past either end faults
// (and the fault guard names the array) instead of reading or corrupting a neighbour.
//
// An array is rarely a whole number of pages, so it sits flush against one guard page and leaves
// slack before the other: flush with the end guard (catches overflow) or with the start guard
// (catches underflow), alternating between threadgroups. Before each group all of it is poisoned
// with 0xFF (NaN for floats, -1 for integers), so a read before a write, or a read that a missing
// barrier let through early, gives values that show in the results. After each group the slack
// must still hold the poison: a write into it is an out-of-bounds write too, found one group late
// and without the thread (the fault names the thread).
#ifndef TESSEL_METAL_EMU_THREADGROUP_MEMORY_H_
#define TESSEL_METAL_EMU_THREADGROUP_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel {
namespace metal_emu {

class ThreadgroupMemory {
 public:
  struct Decl {
    std::string name;
    size_t bytes = 0;
    size_t align = 1;
  };

  ThreadgroupMemory() = default;
  ~ThreadgroupMemory();
  ThreadgroupMemory(const ThreadgroupMemory&) = delete;
  ThreadgroupMemory& operator=(const ThreadgroupMemory&) = delete;

  // Maps a region per declaration (reusing earlier mappings that are large enough).
  void Prepare(const std::vector<Decl>& decls);
  // Poisons every region and places each array flush with its end guard (end_flush) or its
  // start guard.
  void BeginGroup(bool end_flush);
  void* slot(size_t i) const { return regions_[i].array; }
  size_t size() const { return decls_.size(); }
  // "" or the out-of-bounds writes found in the slack of the group that just ran.
  std::string CheckSlack() const;
  // When `addr` is in a guard page or the slack of a region: a description of the access
  // ("past the end of red_buf (256 bytes): byte 256"). Empty otherwise.
  std::string Describe(const void* addr) const;

 private:
  struct Region {
    char* base = nullptr;   // guard | data pages | guard
    size_t data_bytes = 0;  // the pages between the guards
    char* array = nullptr;  // where the array starts in the data pages
  };
  char* data(const Region& r) const { return r.base + page_; }

  size_t page_ = 0;
  std::vector<Decl> decls_;
  std::vector<Region> regions_;
  std::vector<Region> spare_;  // mappings kept for later launches
};

}  // namespace metal_emu
}  // namespace tessel

#endif  // TESSEL_METAL_EMU_THREADGROUP_MEMORY_H_
