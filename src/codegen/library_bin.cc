// The library_bin blob (library_bin.h), written and read byte by byte in little endian so the
// result does not depend on the host's byte order.
#include <tessel/codegen/library_bin.h>
#include <tvm/ffi/error.h>

namespace tessel {
namespace codegen {

namespace {

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutStr(std::string* out, const std::string& s) {
  PutU64(out, s.size());
  out->append(s);
}

class Reader {
 public:
  Reader(const std::string& s, size_t pos, size_t end) : s_(s), pos_(pos), end_(end) {}
  uint64_t U64(const char* what) {
    Need(8, what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(s_[pos_ + i])) << (8 * i);
    }
    pos_ += 8;
    return v;
  }
  std::string Str(const char* what) {
    uint64_t n = U64(what);
    Need(n, what);
    std::string v = s_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  std::vector<uint64_t> Vec(const char* what) {
    uint64_t n = U64(what);
    if (n > (end_ - pos_) / 8) Truncated(what);
    std::vector<uint64_t> v;
    for (uint64_t i = 0; i < n; ++i) v.push_back(U64(what));
    return v;
  }
  bool AtEnd() const { return pos_ == end_; }

 private:
  void Need(uint64_t n, const char* what) {
    if (n > end_ - pos_) Truncated(what);
  }
  [[noreturn]] void Truncated(const char* what) {
    TVM_FFI_THROW(ValueError) << "library_bin: truncated at " << what << " (offset " << pos_
                              << " of " << end_ << ")";
    TVM_FFI_UNREACHABLE();
  }
  const std::string& s_;
  size_t pos_, end_;
};

}  // namespace

std::string MakeLibraryBin(const std::vector<LibraryBinModule>& modules) {
  if (modules.empty()) TVM_FFI_THROW(ValueError) << "library_bin: no modules";
  std::string body;
  std::vector<uint64_t> indptr = {0}, children;
  for (const LibraryBinModule& m : modules) {
    for (uint64_t c : m.imports) {
      if (c >= modules.size()) {
        TVM_FFI_THROW(ValueError) << "library_bin: module " << m.kind << " imports index " << c
                                  << ", but there are " << modules.size() << " modules";
      }
      children.push_back(c);
    }
    indptr.push_back(children.size());
  }
  PutU64(&body, indptr.size());
  for (uint64_t v : indptr) PutU64(&body, v);
  PutU64(&body, children.size());
  for (uint64_t v : children) PutU64(&body, v);
  for (const LibraryBinModule& m : modules) {
    if (m.kind.empty()) TVM_FFI_THROW(ValueError) << "library_bin: a module without a kind";
    PutStr(&body, m.kind);
    if (m.kind == "_lib") {
      if (!m.bytes.empty()) TVM_FFI_THROW(ValueError) << "library_bin: _lib cannot carry bytes";
    } else {
      PutStr(&body, m.bytes);
    }
  }
  std::string out;
  PutU64(&out, body.size());
  return out + body;
}

std::string LibraryBinImporting(const std::vector<LibraryBinModule>& imports) {
  std::vector<LibraryBinModule> modules(1);
  modules[0].kind = "_lib";
  for (size_t i = 0; i < imports.size(); ++i) {
    modules[0].imports.push_back(i + 1);
    modules.push_back(imports[i]);
  }
  return MakeLibraryBin(modules);
}

std::vector<LibraryBinModule> ParseLibraryBin(const std::string& blob) {
  Reader head(blob, 0, blob.size());
  uint64_t nbytes = head.U64("nbytes");
  if (nbytes != blob.size() - 8) {
    TVM_FFI_THROW(ValueError) << "library_bin: nbytes says " << nbytes << " but " << blob.size() - 8
                              << " bytes follow";
  }
  Reader r(blob, 8, blob.size());
  std::vector<uint64_t> indptr = r.Vec("indptr"), children = r.Vec("child_indices");
  if (indptr.empty() || indptr[0] != 0 || indptr.back() != children.size()) {
    TVM_FFI_THROW(ValueError) << "library_bin: inconsistent import tree";
  }
  std::vector<LibraryBinModule> modules(indptr.size() - 1);
  for (size_t i = 0; i < modules.size(); ++i) {
    if (indptr[i + 1] < indptr[i]) TVM_FFI_THROW(ValueError) << "library_bin: indptr decreases";
    modules[i].kind = r.Str("kind");
    if (modules[i].kind != "_lib") modules[i].bytes = r.Str("module bytes");
    for (uint64_t j = indptr[i]; j < indptr[i + 1]; ++j) {
      if (children[j] >= modules.size()) {
        TVM_FFI_THROW(ValueError) << "library_bin: import index " << children[j] << " out of range";
      }
      modules[i].imports.push_back(children[j]);
    }
  }
  if (!r.AtEnd()) TVM_FFI_THROW(ValueError) << "library_bin: trailing bytes";
  return modules;
}

std::string LibraryBinCDefinition(const std::string& blob) {
  std::string out =
      "/* Modules tvm-ffi rebuilds when it loads this library (tessel library_bin). */\n"
      "TVM_FFI_DLL_EXPORT const unsigned char __tvm_ffi__library_bin[" +
      std::to_string(blob.size()) + "] = {";
  // Cubins reach megabytes: decimal byte texts from a table, into a reserved string.
  static const std::vector<std::string> kText = [] {
    std::vector<std::string> t;
    for (int b = 0; b < 256; ++b) t.push_back(" " + std::to_string(b) + ",");
    return t;
  }();
  out.reserve(out.size() + blob.size() * 5 + blob.size() / 16 * 2 + 8);
  for (size_t i = 0; i < blob.size(); ++i) {
    if (i % 16 == 0) out += "\n ";
    out += kText[static_cast<unsigned char>(blob[i])];
  }
  return out + "\n};\n";
}

}  // namespace codegen
}  // namespace tessel
