// tessel_bench_text: times the text-format parser and printer on a generated module of about
// 10,000 lines (many functions with loop nests, blocks with init and reduce axes, loads, stores,
// scalar lets, branches and varied expressions), and prints the median of several runs.
//
// Usage: tessel_bench_text [--functions N] [--runs N] [--emit FILE]
//   --emit FILE writes the generated module, so another implementation (e.g. TVM's
//   tvm.script.from_source) can be timed on exactly the same text.
//
// The parser and printer are reached through their registered global functions
// ("tessel.ir.ParseText", "tessel.ir.AsText"), the way the CLI and Python reach them.
#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

// One function of the generated module; `k` varies names, shapes and constants so that no two
// functions are identical.
void EmitFunction(std::ostringstream& os, int k) {
  const int n = 64 + (k % 5) * 32;  // 64 .. 192
  const std::string N = std::to_string(n);
  const std::string f = "kernel_" + std::to_string(k);
  const std::string c1 = std::to_string(k % 9 + 1) + ".5";
  const std::string c2 = std::to_string(k % 7 + 2);
  os << "    @T.prim_func\n"
     << "    def " << f << "(A: T.Buffer((" << N << ", " << N << "), \"float32\"), B: T.Buffer(("
     << N << ", " << N << "), \"float32\"), C: T.Buffer((" << N
     << ",), \"float32\"), D: T.Buffer((256,), \"int32\"), s: T.int32):\n"
     << "        T.func_attr({\"global_symbol\": \"" << f << "\", \"tir.noalias\": True})\n"
     << "        for i in range(" << N << "):\n"
     << "            for j in range(" << N << "):\n"
     << "                with T.block(\"B\"):\n"
     << "                    vi, vj = T.axis.remap(\"SS\", [i, j])\n"
     << "                    T.reads(A[vi, vj])\n"
     << "                    T.writes(B[vi, vj])\n"
     << "                    B[vi, vj] = T.max(A[vi, vj] * T.float32(" << c1
     << "), T.float32(0)) + T.exp(A[vi, vj] - T.float32(" << c2 << "))\n"
     << "        for i in range(" << N << "):\n"
     << "            for k in range(" << N << "):\n"
     << "                with T.block(\"C\"):\n"
     << "                    vi, vk = T.axis.remap(\"SR\", [i, k])\n"
     << "                    T.reads(B[vi, vk])\n"
     << "                    T.writes(C[vi])\n"
     << "                    with T.init():\n"
     << "                        C[vi] = T.float32(0)\n"
     << "                    C[vi] = C[vi] + B[vi, vk] * B[vk, vi]\n"
     << "        for i in T.parallel(256):\n"
     << "            x: T.int32 = i * " << c2 << " + i // 3 % 7 - s\n"
     << "            if x < " << N << " and i != " << (k % 11) << ":\n"
     << "                D[i] = T.min(x, " << N << " - 1) << 2 & 255 | D[i] ^ " << k << "\n"
     << "            else:\n"
     << "                D[i] = T.truncdiv(x, 3) + T.truncmod(x, 5) * T.Select(x > 0, 1, -1)\n"
     << "        for i in range(" << n / 4 << "):\n"
     << "            for v in T.vectorized(4):\n"
     << "                C[i * 4 + v] = T.if_then_else(C[i * 4 + v] < T.float32(0), "
        "T.float32(0), T.sqrt(C[i * 4 + v]))\n"
     << "        for i in T.serial(1, " << n - 1 << "):\n"
     << "            A[i, 0] = (A[i - 1, 0] + A[i + 1, 0]) / T.float32(2) + "
        "T.Cast(\"float32\", D[i % 256])\n";
}

std::string GenerateModule(int functions) {
  std::ostringstream os;
  os << "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n"
     << "@I.ir_module\nclass Module:\n";
  for (int k = 0; k < functions; ++k) {
    if (k > 0) os << "\n";
    EmitFunction(os, k);
  }
  return os.str();
}

size_t CountLines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

template <typename F>
double TimeMs(F&& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

int Usage() {
  std::cerr << "usage: tessel_bench_text [--functions N] [--runs N] [--emit FILE]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int functions = 323;  // 31 lines each: about 10,000 lines
  int runs = 7;
  std::string emit;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return Usage();
    if (arg == "--functions") {
      functions = std::atoi(argv[++i]);
    } else if (arg == "--runs") {
      runs = std::atoi(argv[++i]);
    } else if (arg == "--emit") {
      emit = argv[++i];
    } else {
      return Usage();
    }
  }
  if (functions < 1 || runs < 1) return Usage();

  const std::string text = GenerateModule(functions);
  const size_t lines = CountLines(text);
  if (!emit.empty()) {
    std::ofstream out(emit);
    out << text;
    if (!out) {
      std::cerr << "tessel_bench_text: cannot write " << emit << "\n";
      return 1;
    }
  }

  auto parse = tvm::ffi::Function::GetGlobal("tessel.ir.ParseText");
  auto print = tvm::ffi::Function::GetGlobal("tessel.ir.AsText");
  if (!parse || !print) {
    std::cerr << "tessel_bench_text: this libtessel has no parser/printer "
                 "(tessel.ir.ParseText, tessel.ir.AsText)\n";
    return 1;
  }

  std::vector<double> parse_ms, print_ms;
  size_t printed_lines = 0;
  try {
    for (int r = 0; r < runs; ++r) {
      tvm::ffi::Any mod;
      parse_ms.push_back(TimeMs([&] { mod = (*parse)(text, std::string("bench.py")); }));
      std::string printed;
      print_ms.push_back(TimeMs([&] { printed = (*print)(mod).cast<std::string>(); }));
      printed_lines = CountLines(printed);
    }
  } catch (const tvm::ffi::Error& e) {
    std::cerr << "tessel_bench_text: " << e.kind() << ": " << e.message() << "\n";
    return 1;
  }

  double p = Median(parse_ms), q = Median(print_ms);
  std::printf("module: %zu lines (%zu printed), %d functions, %zu bytes; median of %d runs\n",
              lines, printed_lines, functions, text.size(), runs);
  std::printf("%-12s %10s %10s %14s\n", "phase", "median ms", "min ms", "lines/s");
  auto row = [&](const char* name, double med, double mn) {
    std::printf("%-12s %10.1f %10.1f %14.0f\n", name, med, mn, lines / (med / 1000.0));
  };
  row("parse", p, *std::min_element(parse_ms.begin(), parse_ms.end()));
  row("print", q, *std::min_element(print_ms.begin(), print_ms.end()));
  std::vector<double> total;
  for (int r = 0; r < runs; ++r) total.push_back(parse_ms[r] + print_ms[r]);
  row("parse+print", Median(total), *std::min_element(total.begin(), total.end()));
  return 0;
}
