// Compiles MSL source into a loaded kernel library: translate (msl_source.h), compile the result
// as C++ with the system compiler against the stand-in <metal_stdlib>, dlopen it. Libraries are
// cached per source text for the life of the process (never unloaded); concurrent requests for
// one source compile it once. A source that fails to compile fails the same way again without
// recompiling.
//
// The compiler is $TESSEL_METAL_EMU_CXX (split at spaces, so "ccache g++" works), else the C++
// compiler CMake found. Files go to a private temporary directory, removed at exit unless
// $TESSEL_METAL_EMU_KEEP is set (then its path is printed, to read the generated C++).
#ifndef TESSEL_METAL_EMU_COMPILER_H_
#define TESSEL_METAL_EMU_COMPILER_H_

#include <memory>
#include <string>
#include <vector>

#include "metal_emu/abi.h"
#include "msl_source.h"

namespace tessel {
namespace metal_emu {

class KernelLibrary {
 public:
  struct Kernel {
    const MslKernel* signature;
    const TslEmuKernel* compiled;
  };

  KernelLibrary(MslTranslation translation, std::string path, void* handle,
                const TslEmuKernel* table, uint32_t count);

  // NULL when the source has no kernel of that name.
  const Kernel* Find(const std::string& name) const;
  const std::vector<Kernel>& kernels() const { return kernels_; }
  const std::string& path() const { return path_; }
  bool uses_bfloat() const { return translation_.uses_bfloat; }
  // "kernel.metal:23" for an instruction address inside this library, or "" (no line table,
  // addr2line missing, or not ours).
  std::string SourceLine(const void* pc) const;

 private:
  MslTranslation translation_;
  std::string path_;
  void* handle_;
  std::vector<Kernel> kernels_;
};

// The library for `source`, compiled on first use. *cache_hit says whether it was already there.
// RuntimeError when the source is not valid MSL for the harness or does not compile (the
// compiler's messages quoted).
std::shared_ptr<const KernelLibrary> LoadKernelLibrary(const std::string& source,
                                                       const TslEmuHost* host, bool* cache_hit);

// The generated C++ for `source` (for debugging and tests).
std::string TranslatedSource(const std::string& source);

}  // namespace metal_emu
}  // namespace tessel

#endif  // TESSEL_METAL_EMU_COMPILER_H_
