// Little-endian writing and bounds-checked reading of the module bytes formats (tessel_cuda,
// tessel_metal): integers little endian, strings as <u64 length><bytes>.
#ifndef TESSEL_SRC_RUNTIME_BYTE_IO_H_
#define TESSEL_SRC_RUNTIME_BYTE_IO_H_

#include <tvm/ffi/error.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace tessel {
namespace runtime {

class ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { Le(v, 2); }
  void U32(uint32_t v) { Le(v, 4); }
  void U64(uint64_t v) { Le(v, 8); }
  void Str(const std::string& s) {
    U64(s.size());
    out_.append(s);
  }
  void Raw(const char* p, size_t n) { out_.append(p, n); }
  std::string& out() { return out_; }

 private:
  void Le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

// Errors read "<format>: truncated at <what> (needs N bytes, M left)".
class ByteReader {
 public:
  ByteReader(const char* format, const char* data, size_t size)
      : format_(format), p_(data), left_(size) {}
  uint8_t U8(const char* what) { return static_cast<uint8_t>(Le(1, what)); }
  uint16_t U16(const char* what) { return static_cast<uint16_t>(Le(2, what)); }
  uint32_t U32(const char* what) { return static_cast<uint32_t>(Le(4, what)); }
  std::string Str(const char* what) {
    uint64_t n = Le(8, what);
    Need(n, what);
    std::string s(p_, n);
    Advance(n);
    return s;
  }
  void Raw(char* out, size_t n, const char* what) {
    Need(n, what);
    std::memcpy(out, p_, n);
    Advance(n);
  }
  size_t left() const { return left_; }

 private:
  void Need(uint64_t n, const char* what) {
    if (n > left_) {
      TVM_FFI_THROW(ValueError) << format_ << ": truncated at " << what << " (needs " << n
                                << " bytes, " << left_ << " left)";
    }
  }
  void Advance(size_t n) {
    p_ += n;
    left_ -= n;
  }
  uint64_t Le(int n, const char* what) {
    Need(n, what);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(p_[i])) << (8 * i);
    Advance(n);
    return v;
  }
  const char* format_;
  const char* p_;
  size_t left_;
};

}  // namespace runtime
}  // namespace tessel

#endif  // TESSEL_SRC_RUNTIME_BYTE_IO_H_
