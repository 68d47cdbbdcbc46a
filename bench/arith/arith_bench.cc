// tessel_bench_arith: times Analyzer::Simplify and Analyzer::CanProve on the queries of
// bench/arith/corpus.txt (format: bench/arith/gen_corpus.py) and counts how many answers reach
// the corpus's expectations: simplify results structurally equal to, or no bigger than
// (TextSize), the `want` form; true conditions proved; false conditions proved (unsound).
//
// Method: per query, one Analyzer is set up (declarations, bindings, assumption scopes: the
// same code as `tessel simplify/prove`), the call is made a few times to warm up, then timed in
// 5 batches of --reps / 5 calls on that same analyzer; the query's time is the median batch's
// mean per call (a batch slowed by another process does not count). Reported:
// median, p99 and mean of those per-query times, per kind.
//
// --stages also times each simplify query's stages on their own (the facade's constant pass,
// Simplify with 0 extension rounds; RewriteSimplify; CanonicalSimplify), for profiling; --each
// prints each query's time.
//
//   tessel_bench_arith [--corpus FILE] [--reps N] [--verbose] [--stages] [--each]
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "arith_options.h"
#include "corpus_line.h"

namespace {

using tessel::ir::PrimExpr;
using tessel::tools::ArithSession;

struct Query {
  int line = 0;
  std::string kind, expr;
  std::vector<std::string> args;  // the CLI form of the declarations, bindings, assumptions
  std::string want;               // simplify: the expected form ("" if none)
  int expect = -1;                // prove: 1 true, 0 false, -1 not stated
};

std::vector<Query> ReadCorpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "tessel_bench_arith: cannot open " << path << "\n";
    std::exit(2);
  }
  std::vector<Query> out;
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    std::vector<std::string> fields = tessel::bench::SplitCorpusLine(line);
    if (fields.empty()) continue;
    auto fail = [&](const std::string& msg) {
      std::cerr << path << ":" << no << ": " << msg << "\n";
      std::exit(2);
    };
    if (fields.size() < 2) fail("expected KIND ; EXPR ; FIELD...");
    Query q;
    q.line = no;
    q.kind = fields[0];
    q.expr = fields[1];
    if (q.kind != "simplify" && q.kind != "prove") fail("unknown kind '" + q.kind + "'");
    for (size_t i = 2; i < fields.size(); ++i) {
      const std::string& f = fields[i];
      size_t sp = f.find(' ');
      std::string key = f.substr(0, sp), value = sp == std::string::npos ? "" : f.substr(sp + 1);
      if (key == "var" || key == "bind" || key == "assume") {
        q.args.push_back("--" + key);
        q.args.push_back(value);
      } else if (key == "want") {
        q.want = value;
      } else if (key == "expect" && (value == "true" || value == "false")) {
        q.expect = value == "true";
      } else {
        fail("unknown field '" + f + "'");
      }
    }
    q.args.push_back("--");
    q.args.push_back(q.expr);
    out.push_back(std::move(q));
  }
  return out;
}

// The size of a printed expression: names, numbers and operators (not parentheses, commas or the
// `T.` prefix); bench/arith_bench.py counts the same way, for both tessel and TVM.
int TextSize(const std::string& text) {
  int n = 0;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) {
        ++j;
      }
      n += text.compare(i, j - i, "T") != 0;
      i = j;
    } else if (std::string("+-*/%<>=!^&|~").find(c) != std::string::npos) {
      // Two-character operators (//, <=, ==, <<, ...) count once.
      size_t j = i + 1;
      if (j < text.size() && std::string("/=<>").find(text[j]) != std::string::npos) ++j;
      ++n;
      i = j;
    } else {
      ++i;
    }
  }
  return n;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

// Microseconds per call: `reps` calls in kBatches batches; the median batch's mean, so that a
// batch slowed by another process on a busy machine does not count.
constexpr int kBatches = 5;
template <typename F>
double TimeCall(F call, int reps) {
  using Clock = std::chrono::steady_clock;
  int per_batch = std::max(1, reps / kBatches);
  std::vector<double> batch_us;
  for (int b = 0; b < kBatches; ++b) {
    auto t0 = Clock::now();
    for (int k = 0; k < per_batch; ++k) call();
    auto t1 = Clock::now();
    batch_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / per_batch);
  }
  std::sort(batch_us.begin(), batch_us.end());
  return batch_us[kBatches / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string corpus = "bench/arith/corpus.txt";
  int reps = 200;
  bool verbose = false, stages = false, each = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--corpus" && i + 1 < argc) {
      corpus = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--each") {
      each = true;
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a == "--stages") {
      stages = true;
    } else {
      std::cerr << "usage: tessel_bench_arith [--corpus FILE] [--reps N] [--verbose] [--stages] "
                   "[--each]\n";
      return 2;
    }
  }
  std::vector<Query> queries = ReadCorpus(corpus);
  std::vector<double> simplify_us, prove_us, constant_us, rewrite_us, canonical_us;
  int want_total = 0, want_met = 0, true_total = 0, true_proved = 0, false_total = 0,
      false_proved = 0;
  for (const Query& q : queries) {
    ArithSession session;
    if (session.Init(q.kind, "", q.args) != 0) {
      std::cerr << corpus << ":" << q.line << ": the query does not set up (see above)\n";
      return 1;
    }
    tessel::arith::Analyzer& ana = session.analyzer();
    const PrimExpr& e = session.expr();
    try {
      if (q.kind == "simplify") {
        PrimExpr r;
        for (int w = 0; w < 3; ++w) r = ana.Simplify(e);
        simplify_us.push_back(TimeCall([&] { r = ana.Simplify(e); }, reps));
        if (each)
          std::printf("%8.2f us  line %d: %s\n", simplify_us.back(), q.line, q.expr.c_str());
        if (stages) {
          PrimExpr s;
          constant_us.push_back(TimeCall([&] { s = ana.Simplify(e, 0); }, reps));
          rewrite_us.push_back(TimeCall([&] { s = ana.RewriteSimplify(e); }, reps));
          canonical_us.push_back(TimeCall([&] { s = ana.CanonicalSimplify(e); }, reps));
        }
        if (!q.want.empty()) {
          PrimExpr want;
          if (!session.Parse(q.want, "want", &want)) return 1;
          // An equivalent result no bigger than the wanted form counts (a different order of the
          // terms of a sum is as simple).
          bool met = tvm::ffi::StructuralEqual::Equal(r, want) ||
                     TextSize(tessel::ir::AsText(r)) <= TextSize(tessel::ir::AsText(want));
          ++want_total;
          want_met += met;
          if (verbose && !met) {
            std::cout << "line " << q.line << ": " << q.expr << "  ->  " << tessel::ir::AsText(r)
                      << "   (want " << q.want << ")\n";
          }
        }
      } else {
        bool proved = false;
        for (int w = 0; w < 3; ++w) proved = ana.CanProve(e);
        prove_us.push_back(TimeCall([&] { proved = ana.CanProve(e); }, reps));
        if (each) std::printf("%8.2f us  line %d: %s\n", prove_us.back(), q.line, q.expr.c_str());
        if (q.expect == 1) {
          ++true_total;
          true_proved += proved;
        } else if (q.expect == 0) {
          ++false_total;
          false_proved += proved;
        }
        if (verbose && q.expect >= 0 && proved != (q.expect == 1)) {
          std::cout << "line " << q.line << ": " << q.expr << "  "
                    << (proved ? "PROVED (expected false)" : "not proved") << "\n";
        }
      }
    } catch (const tvm::ffi::Error& err) {
      std::cerr << corpus << ":" << q.line << ": " << err.kind() << ": " << err.message() << "\n";
      return 1;
    }
  }
  auto row = [](const char* name, const std::vector<double>& v) {
    double mean = 0;
    for (double x : v) mean += x;
    mean = v.empty() ? 0 : mean / v.size();
    std::printf("%-10s %8zu %12.2f %12.2f %12.2f\n", name, v.size(), Percentile(v, 0.5),
                Percentile(v, 0.99), mean);
  };
  std::printf("tessel_bench_arith: %s, %d reps per query, one analyzer per query (reused)\n",
              corpus.c_str(), reps);
  std::printf("%-10s %8s %12s %12s %12s\n", "call", "queries", "median us", "p99 us", "mean us");
  row("simplify", simplify_us);
  row("can_prove", prove_us);
  if (stages) {
    row("constant", constant_us);
    row("rewrite", rewrite_us);
    row("canonical", canonical_us);
  }
  std::printf("simplify as small as the wanted form: %d of %d\n", want_met, want_total);
  std::printf("can_prove proved true conditions: %d of %d\n", true_proved, true_total);
  std::printf("can_prove proved false conditions (unsound): %d of %d\n", false_proved, false_total);
  return false_proved == 0 ? 0 : 1;
}
