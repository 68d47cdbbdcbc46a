// Compiling generated C into a shared library that any tvm-ffi client can load.
//
// The command line is fixed, so the same source gives a byte-identical library:
//   <cc> -std=c11 -O3 -fPIC -shared [-fopenmp] -ffile-prefix-map=<tmpdir>=. -I<tvm-ffi include>
//        [extra flags] -o lib.so kernel.c <link flags>
// run inside a private temporary directory with fixed file names. <cc> is TESSEL_CC, else CC, else
// "cc" (split on blanks, like make does, so "ccache gcc" works). -fopenmp is dropped, with a
// warning printed once, when a probe shows the compiler lacks it. On Linux the library links
// libtvm_ffi by its soname (no rpath), so it resolves against the libtvm_ffi already loaded by the
// process that dlopens it, and with -z nodelete (an unloaded library would take the OpenMP runtime
// away from its idle worker threads); on macOS undefined symbols are looked up at load time
// instead. Windows is not supported yet.
#ifndef TESSEL_CODEGEN_COMPILE_C_H_
#define TESSEL_CODEGEN_COMPILE_C_H_

#include <string>
#include <vector>

namespace tessel {
namespace codegen {

struct CompileOptions {
  // Appended after the fixed flags (e.g. "-march=native", "-g"); part of the command line, so of
  // a build cache key too.
  std::vector<std::string> extra_flags;
  // Add -fopenmp when the compiler supports it.
  bool openmp = true;
};

// Compiles `source` into the shared library `out_path` (replaced atomically: written under a
// temporary name in its folder, then renamed) and returns out_path. Failure to run the compiler,
// or a compiler error, throws RuntimeError with the command line and the compiler's output; the
// temporary directory with the source is then kept and named in the message.
std::string CompileCSource(const std::string& source, const std::string& out_path,
                           const CompileOptions& options = {});

// The command line CompileCSource runs for `options`, with "kernel.c" and "lib.so" as the input
// and output names and "<tmpdir>" standing for the temporary directory. Everything that decides the
// library's bytes besides the source is in it.
std::vector<std::string> CompileCommand(const CompileOptions& options = {});

// What the command line does not say about the compiler and headers that decide the library's
// bytes: the compiler's `--version` output and the size and a hash of tvm/ffi/c_api.h. Computed
// once per compiler command and process; a build cache key includes it, so upgrading the compiler
// or tvm-ffi in place does not reuse stale libraries.
std::string CompilerIdentity();

// The tvm-ffi header folder handed to the compiler: TESSEL_TVM_FFI_INCLUDE when set, else the
// `include` folder of the package holding the loaded libtvm_ffi (<pkg>/lib/libtvm_ffi.so ->
// <pkg>/include). Throws RuntimeError naming what was tried when neither has tvm/ffi/c_api.h.
std::string TvmFfiIncludeDir();

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_CODEGEN_COMPILE_C_H_
