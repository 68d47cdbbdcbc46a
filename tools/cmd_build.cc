// `tessel build`: compile a text-format file into a shared library of tvm-ffi functions (each
// PrimFunc exported as __tvm_ffi_<symbol>), loadable by tvm_ffi.load_module without tessel.
#include <tessel/codegen/build.h>
#include <tessel/ir/parser.h>
#include <tessel/target/target.h>
#include <tvm/ffi/error.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"

namespace tessel {
namespace tools {

const char kBuildUsage[] =
    "usage: tessel build FILE [--target TARGET] -o OUT.so [--emit-c OUT.c] [--emit-cuda OUT.cu]\n"
    "                   [--emit-metal OUT.metal] [--timing]\n\n"
    "Parses FILE (the text format, docs/text_format.md; '-' reads stdin), lowers it, generates C,\n"
    "compiles it with the system C compiler (TESSEL_CC, else CC, else cc) and writes the shared\n"
    "library to OUT.so. Errors are printed to stderr and make the exit status 1.\n\n"
    "  --target TARGET  the target string: c (default), cuda, e.g. \"cuda -arch=sm_90\" (the\n"
    "                   kernels are compiled with NVRTC, or nvcc, and embedded in OUT.so), or\n"
    "                   metal, e.g. \"metal -msl=3.1\" (the MSL is embedded in OUT.so and\n"
    "                   compiled by the Metal runtime on first launch)\n"
    "  -o OUT.so        where to write the library\n"
    "  --emit-c OUT.c   also write the generated C there\n"
    "  --emit-cuda OUT.cu  target cuda: also write the generated CUDA C++ there\n"
    "  --emit-metal OUT.metal  target metal: also write the generated MSL there\n"
    "  --timing         print the seconds of each step (lower, codegen, cc, load) to stderr\n";

namespace {

void PrintError(const std::string& message) {
  std::cerr << message << (message.empty() || message.back() != '\n' ? "\n" : "");
}

}  // namespace

int BuildMain(const std::vector<std::string>& args) {
  std::string file, out, emit_c, emit_cuda, emit_metal, target_text = "c";
  bool timing = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* dst) {
      if (i + 1 >= args.size()) return false;
      *dst = args[++i];
      return true;
    };
    bool ok = true;
    if (a == "--target") {
      ok = value(&target_text);
    } else if (a == "-o") {
      ok = value(&out);
    } else if (a == "--emit-c") {
      ok = value(&emit_c);
    } else if (a == "--emit-cuda") {
      ok = value(&emit_cuda);
    } else if (a == "--emit-metal") {
      ok = value(&emit_metal);
    } else if (a == "--timing") {
      timing = true;
    } else if (a.size() > 1 && a[0] == '-') {
      std::cerr << "tessel build: unknown option '" << a << "'\n" << kBuildUsage;
      return kExitUsage;
    } else if (file.empty()) {
      file = a;
    } else {
      std::cerr << "tessel build: one input file expected, got '" << file << "' and '" << a
                << "'\n";
      return kExitUsage;
    }
    if (!ok) {
      std::cerr << "tessel build: " << a << " needs a value\n" << kBuildUsage;
      return kExitUsage;
    }
  }
  if (file.empty() || out.empty()) {
    std::cerr << "tessel build: " << (file.empty() ? "no input file" : "no output (-o OUT.so)")
              << "\n"
              << kBuildUsage;
    return kExitUsage;
  }
  std::string source, error;
  if (!ReadSource(file, &source, &error)) {
    std::cerr << "tessel build: " << error << "\n";
    return kExitFailure;
  }
  ir::IRModule mod{tvm::ffi::UnsafeInit{}};
  try {
    mod = ir::ParseModule(source, file == "-" ? "<stdin>" : file);
  } catch (const tvm::ffi::Error& e) {
    PrintError(e.message());  // already FILE:LINE:COL: error: ...
    return kExitFailure;
  }
  try {
    target::Target target = target::Target::Parse(target_text);
    if (!emit_cuda.empty() && target->kind != "cuda") {
      std::cerr << "tessel build: --emit-cuda needs target cuda\n";
      return kExitFailure;
    }
    if (!emit_metal.empty() && target->kind != "metal") {
      std::cerr << "tessel build: --emit-metal needs target metal\n";
      return kExitFailure;
    }
    codegen::CompiledModule built = codegen::Build(mod, target);
    built->ExportLibrary(out);
    if (!emit_c.empty()) {
      std::ofstream c(emit_c, std::ios::binary | std::ios::trunc);
      c << std::string(built->source);
      if (!c) {
        std::cerr << "tessel build: cannot write " << emit_c << "\n";
        return kExitFailure;
      }
    }
    for (const auto& [path, text] :
         {std::pair<std::string, std::string>{emit_cuda, built->cuda_source},
          {emit_metal, built->metal_source}}) {
      if (path.empty()) continue;
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << text;
      if (!f) {
        std::cerr << "tessel build: cannot write " << path << "\n";
        return kExitFailure;
      }
    }
    if (timing) {
      std::cerr << "lower " << built->lower_seconds << " s, codegen " << built->codegen_seconds
                << " s, cc " << built->cc_seconds << " s" << (built->cache_hit ? " (cached)" : "")
                << ", load " << built->load_seconds << " s\n";
    }
  } catch (const tvm::ffi::Error& e) {
    PrintError("tessel build: " + e.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tools
}  // namespace tessel
