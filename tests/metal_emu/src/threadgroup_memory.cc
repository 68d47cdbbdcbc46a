#include "threadgroup_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <sstream>

namespace tessel {
namespace metal_emu {

namespace {
constexpr unsigned char kPoison = 0xFF;
}  // namespace

ThreadgroupMemory::~ThreadgroupMemory() {
  for (auto* list : {&regions_, &spare_})
    for (const Region& r : *list) munmap(r.base, r.data_bytes + 2 * page_);
}

void ThreadgroupMemory::Prepare(const std::vector<Decl>& decls) {
  if (page_ == 0) page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (Region& r : regions_) spare_.push_back(r);
  regions_.clear();
  decls_ = decls;
  for (const Decl& d : decls_) {
    size_t need = std::max<size_t>(page_, (d.bytes + page_ - 1) / page_ * page_);
    auto it = std::find_if(spare_.begin(), spare_.end(),
                           [&](const Region& r) { return r.data_bytes == need; });
    if (it != spare_.end()) {
      regions_.push_back(*it);
      spare_.erase(it);
      continue;
    }
    Region r;
    r.data_bytes = need;
    void* p = mmap(nullptr, need + 2 * page_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    r.base = static_cast<char*>(p);
    mprotect(r.base + page_, need, PROT_READ | PROT_WRITE);
    regions_.push_back(r);
  }
}

void ThreadgroupMemory::BeginGroup(bool end_flush) {
  for (size_t i = 0; i < regions_.size(); ++i) {
    Region& r = regions_[i];
    std::memset(data(r), kPoison, r.data_bytes);
    const Decl& d = decls_[i];
    // sizeof an array is a multiple of its alignment, and the end guard is page aligned, so the
    // end-flush start is aligned too.
    r.array = end_flush ? data(r) + r.data_bytes - d.bytes : data(r);
  }
}

std::string ThreadgroupMemory::CheckSlack() const {
  std::ostringstream os;
  for (size_t i = 0; i < regions_.size(); ++i) {
    const Region& r = regions_[i];
    const Decl& d = decls_[i];
    const char* lo = data(r);
    const char* hi = data(r) + r.data_bytes;
    const char* end = r.array + d.bytes;
    for (const char* p = lo; p < hi; ++p) {
      if (p == r.array) p = end;  // skip the array itself
      if (p >= hi) break;
      if (static_cast<unsigned char>(*p) == kPoison) continue;
      if (!os.str().empty()) os << "; ";
      os << "a write " << (p < r.array ? "before the start" : "past the end") << " of " << d.name
         << " (" << d.bytes << " bytes) at byte " << (p - r.array);
      break;
    }
  }
  return os.str();
}

std::string ThreadgroupMemory::Describe(const void* addr) const {
  auto a = static_cast<const char*>(addr);
  for (size_t i = 0; i < regions_.size(); ++i) {
    const Region& r = regions_[i];
    const Decl& d = decls_[i];
    if (a < r.base || a >= r.base + r.data_bytes + 2 * page_) continue;
    std::ostringstream os;
    if (a >= r.array && a < r.array + d.bytes) {
      os << "inside " << d.name;  // should not fault; say so rather than guess
    } else {
      os << (a < r.array ? "before the start" : "past the end") << " of " << d.name << " ("
         << d.bytes << " bytes): byte " << (a - r.array);
    }
    return os.str();
  }
  return std::string();
}

}  // namespace metal_emu
}  // namespace tessel
