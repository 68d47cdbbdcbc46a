// The `__tvm_ffi__library_bin` blob: how a compiled library carries modules of other kinds (the
// tessel_cuda image) that tvm-ffi rebuilds when it loads the library.
//
// Format (tvm-ffi's ProcessLibraryBin, all integers u64 little endian):
//   <nbytes> then nbytes of: <indptr: vec> <child_indices: vec> then, per module in order,
//   <kind: str> and, unless kind is "_lib", <bytes: str>
// where vec = <count> <count values> and str = <length> <bytes>. Module 0 is the root;
// child_indices[indptr[i]:indptr[i+1]] are the imports of module i. "_lib" stands for the host
// library itself.
#ifndef TESSEL_CODEGEN_LIBRARY_BIN_H_
#define TESSEL_CODEGEN_LIBRARY_BIN_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {
namespace codegen {

struct LibraryBinModule {
  std::string kind;               // "_lib" or a module kind ("tessel_cuda")
  std::string bytes;              // the module's SaveToBytes; empty for "_lib"
  std::vector<uint64_t> imports;  // indices of the modules it imports
};

// The blob for `modules` (module 0 is the root). ValueError for an import index out of range or
// a "_lib" with bytes.
std::string MakeLibraryBin(const std::vector<LibraryBinModule>& modules);

// The usual case: the host library ("_lib", the root) importing one module per entry.
std::string LibraryBinImporting(const std::vector<LibraryBinModule>& imports);

// Parses a blob back (tests, inspection); ValueError naming what is truncated or inconsistent.
std::vector<LibraryBinModule> ParseLibraryBin(const std::string& blob);

// C text defining the exported `__tvm_ffi__library_bin` byte array that holds `blob`.
std::string LibraryBinCDefinition(const std::string& blob);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_CODEGEN_LIBRARY_BIN_H_
