// tessel_bench_z3: what the Z3 prover costs and how often it is reached.
//
// 1. The proof corpus bench/arith/z3_corpus.txt (format of corpus.txt): per query, the time of one
//    CanProve with the Z3 prover and without it (Analyzer::RemoveExtension("z3")), each on a
//    fresh analyzer (the verdict cache would otherwise answer every repetition), and the time
//    spent inside the prover alone (Z3Stats::seconds) once the analyzer's Z3 context exists.
//    Each figure is the median over --reps fresh analyzers, so a repetition slowed by another
//    process on a shared machine does not count. Reported: p50/p90/p99/max of the Z3 query times
//    over the queries that reach Z3, the context creation cost, and Z3's proved / refuted /
//    unknown counts; any false fact proved is an error (exit 1).
// 2. The statement Simplify pass (transform/simplify.h) over every examples/*.py: CanProve calls
//    (nested ones included) vs queries that reach Z3, and the pass's time with and without Z3.
//
//   tessel_bench_z3 [--corpus FILE] [--examples DIR] [--reps N] [--rlimit N] [--verbose]
#include <tessel/arith/z3_prover.h>
#include <tessel/ir/module.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/simplify.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "arith_options.h"
#include "corpus_line.h"

namespace {

using tessel::arith::Analyzer;
using tessel::arith::GetZ3Prover;
using tessel::arith::Z3Prover;
using tessel::arith::Z3Stats;
using tessel::ir::PrimExpr;
using tessel::tools::ArithSession;
using Clock = std::chrono::steady_clock;

// --rlimit: the resource limit every analyzer's prover gets (0: the default).
int64_t g_rlimit = 0;

void SetLimit(Analyzer& a) {
  if (Z3Prover* p = GetZ3Prover(a); p && g_rlimit > 0) p->set_rlimit(g_rlimit);
}

struct Query {
  int line = 0;
  std::string expr;
  std::vector<std::string> args;  // the CLI form of the declarations, bindings, assumptions
  int expect = -1;                // 1 true, 0 false, -1 not stated
};

std::vector<Query> ReadCorpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "tessel_bench_z3: cannot open " << path << "\n";
    std::exit(2);
  }
  std::vector<Query> out;
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    std::vector<std::string> fields = tessel::bench::SplitCorpusLine(line);
    if (fields.empty()) continue;
    if (fields.size() < 2 || fields[0] != "prove") {
      std::cerr << path << ":" << no << ": expected 'prove ; EXPR ; FIELD...'\n";
      std::exit(2);
    }
    Query q;
    q.line = no;
    q.expr = fields[1];
    for (size_t i = 2; i < fields.size(); ++i) {
      const std::string& f = fields[i];
      size_t sp = f.find(' ');
      std::string key = f.substr(0, sp), value = sp == std::string::npos ? "" : f.substr(sp + 1);
      if (key == "var" || key == "bind" || key == "assume") {
        q.args.push_back("--" + key);
        q.args.push_back(value);
      } else if (key == "expect" && (value == "true" || value == "false")) {
        q.expect = value == "true";
      } else {
        std::cerr << path << ":" << no << ": unknown field '" << f << "'\n";
        std::exit(2);
      }
    }
    q.args.push_back("--");
    q.args.push_back(q.expr);
    out.push_back(std::move(q));
  }
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

Z3Stats Stats(const Analyzer& a) {
  Z3Prover* p = GetZ3Prover(a);
  return p ? p->stats() : Z3Stats();
}

// Makes the analyzer's Z3 context with a query of its own (on a variable the corpus never uses).
void WarmUp(Analyzer& a) {
  Z3Prover* p = GetZ3Prover(a);
  if (!p) return;
  tessel::ir::Var w("__z3_bench_warm");
  p->TryProve(tessel::ir::ge(tessel::ir::mul(w, w), tessel::ir::IntImm(w.dtype(), 0)),
              tessel::arith::ProofStrength::kDefault);
}

struct CorpusResult {
  std::vector<double> with_us, without_us, z3_us, first_us;
  int proved = 0, refuted = 0, unknown = 0, reached = 0, unsound = 0, true_total = 0,
      true_proved = 0, true_proved_without = 0;
};

int RunCorpus(const std::vector<Query>& queries, int reps, bool verbose, CorpusResult* res) {
  for (const Query& q : queries) {
    std::vector<double> with_us, without_us, z3_us, first_us;
    bool proved = false, proved_without = false;
    Z3Stats first_delta;
    for (int r = 0; r < reps; ++r) {
      // With Z3 on a fresh analyzer: the first query pays for the Z3 context.
      {
        ArithSession s;
        if (s.Init("prove", "", q.args) != 0) return 1;
        SetLimit(s.analyzer());
        auto t0 = Clock::now();
        proved = s.analyzer().CanProve(s.expr());
        first_us.push_back(Us(t0, Clock::now()));
      }
      // With Z3, context already made: the CanProve time and the prover's share of it.
      {
        ArithSession s;
        if (s.Init("prove", "", q.args) != 0) return 1;
        SetLimit(s.analyzer());
        WarmUp(s.analyzer());
        Z3Stats before = Stats(s.analyzer());
        auto t0 = Clock::now();
        s.analyzer().CanProve(s.expr());
        with_us.push_back(Us(t0, Clock::now()));
        Z3Stats after = Stats(s.analyzer());
        if (after.queries > before.queries) z3_us.push_back((after.seconds - before.seconds) * 1e6);
        if (r == 0) {
          first_delta.queries = after.queries - before.queries;
          first_delta.proved = after.proved - before.proved;
          first_delta.refuted = after.refuted - before.refuted;
          first_delta.unknown = after.unknown - before.unknown;
        }
      }
      {
        ArithSession s;
        // Before Init opens the assumptions' scopes (RemoveExtension refuses while one is open).
        s.analyzer().RemoveExtension("z3");
        if (s.Init("prove", "", q.args) != 0) return 1;
        auto t0 = Clock::now();
        proved_without = s.analyzer().CanProve(s.expr());
        without_us.push_back(Us(t0, Clock::now()));
      }
    }
    res->with_us.push_back(Median(with_us));
    res->without_us.push_back(Median(without_us));
    res->first_us.push_back(Median(first_us));
    if (first_delta.queries > 0) {
      ++res->reached;
      res->z3_us.push_back(Median(z3_us));
      res->proved += first_delta.proved;
      res->refuted += first_delta.refuted;
      res->unknown += first_delta.unknown;
    }
    if (q.expect == 1) {
      ++res->true_total;
      res->true_proved += proved;
      res->true_proved_without += proved_without;
    }
    if (q.expect == 0 && (proved || proved_without)) {
      ++res->unsound;
      std::cout << "UNSOUND line " << q.line << ": " << q.expr << " was proved\n";
    }
    if (verbose) {
      const char* z3 = first_delta.queries == 0 ? "not reached"
                       : first_delta.proved     ? "proved"
                       : first_delta.refuted    ? "refuted"
                                                : "unknown";
      std::printf("line %3d  %-8s z3 %-11s  with %8.1f us  without %7.1f us  z3 %8.1f us  %s\n",
                  q.line, proved ? "proved" : "-", z3, Median(with_us), Median(without_us),
                  z3_us.empty() ? 0.0 : Median(z3_us), q.expr.c_str());
    }
  }
  return 0;
}

// The conjunction-free form of PrimFunc Simplify's shape facts: each non-constant shape entry of
// a parameter buffer is >= 0.
struct ExampleResult {
  int64_t files = 0, functions = 0, can_prove = 0, z3_queries = 0, z3_cache_hits = 0, z3_proved = 0;
  double with_ms = 0, without_ms = 0, z3_ms = 0;
};

void SimplifyFunc(const tessel::ir::PrimFunc& f, bool with_z3, ExampleResult* res) {
  using namespace tessel;  // NOLINT(build/namespaces)
  arith::Analyzer ana;
  if (!with_z3) ana.RemoveExtension("z3");  // before any scope opens
  SetLimit(ana);
  std::vector<std::unique_ptr<arith::ConstraintScope>> scopes;
  for (const auto& kv : f->buffer_map) {
    for (const PrimExpr& dim : kv.second->shape) {
      if (!dim.as<ir::IntImmNode>()) {
        scopes.push_back(std::make_unique<arith::ConstraintScope>(
            &ana, ir::ge(dim, ir::IntImm(dim.dtype(), 0))));
      }
    }
  }
  auto t0 = Clock::now();
  transform::Simplify(f->body, &ana);
  double ms = Us(t0, Clock::now()) / 1000;
  while (!scopes.empty()) scopes.pop_back();
  if (!with_z3) {
    res->without_ms += ms;
    return;
  }
  res->with_ms += ms;
  res->can_prove += ana.stats_can_prove_calls();
  Z3Stats s = Stats(ana);
  res->z3_queries += s.queries;
  res->z3_cache_hits += s.cache_hits;
  res->z3_proved += s.proved;
  res->z3_ms += s.seconds * 1000;
}

int RunExamples(const std::string& dir, bool verbose, ExampleResult* res) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& path : files) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::vector<tessel::ir::PrimFunc> funcs;
    try {
      tvm::ffi::ObjectRef node = tessel::ir::ParseText(text.str(), path.string());
      if (auto f = node.as<tessel::ir::PrimFunc>()) {
        funcs.push_back(*f);
      } else if (auto m = node.as<tessel::ir::IRModule>()) {
        for (const auto& kv : (*m)->functions) funcs.push_back(kv.second);
      }
    } catch (const tvm::ffi::Error& e) {
      std::cerr << path.string() << ": does not parse: " << e.what() << "\n";
      return 1;
    }
    ++res->files;
    int64_t calls_before = res->can_prove, z3_before = res->z3_queries;
    for (const auto& f : funcs) {
      ++res->functions;
      SimplifyFunc(f, true, res);
      SimplifyFunc(f, false, res);
    }
    if (verbose) {
      std::printf("%-36s CanProve %6lld  Z3 %4lld\n", path.filename().string().c_str(),
                  static_cast<long long>(res->can_prove - calls_before),
                  static_cast<long long>(res->z3_queries - z3_before));
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string corpus = "bench/arith/z3_corpus.txt", examples = "examples";
  int reps = 21;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--corpus" && i + 1 < argc) {
      corpus = argv[++i];
    } else if (a == "--examples" && i + 1 < argc) {
      examples = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--rlimit" && i + 1 < argc) {
      g_rlimit = std::atoll(argv[++i]);
    } else if (a == "--verbose") {
      verbose = true;
    } else {
      std::cerr << "usage: tessel_bench_z3 [--corpus FILE] [--examples DIR] [--reps N] "
                   "[--rlimit N] [--verbose]\n";
      return 2;
    }
  }
  if (!Z3Prover::Available()) {
    std::cerr << "tessel_bench_z3: this tessel was built without Z3\n";
    return 2;
  }
  std::vector<Query> queries = ReadCorpus(corpus);
  CorpusResult c;
  try {
    if (int rc = RunCorpus(queries, reps, verbose, &c)) return rc;
  } catch (const tvm::ffi::Error& e) {
    std::cerr << "tessel_bench_z3: " << e.what() << "\n";
    return 1;
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / v.size();
  };
  std::printf("corpus %s: %zu queries, %d reach Z3 (median of %d fresh analyzers each)\n",
              corpus.c_str(), queries.size(), c.reached, reps);
  std::printf("  true facts proved: %d / %d with Z3, %d / %d without; false facts proved: %d\n",
              c.true_proved, c.true_total, c.true_proved_without, c.true_total, c.unsound);
  std::printf("  Z3 verdicts: proved %d, refuted %d, unknown %d (rlimit %lld)\n", c.proved,
              c.refuted, c.unknown,
              static_cast<long long>(g_rlimit > 0 ? g_rlimit : Z3Prover::kDefaultRLimit));
  std::printf("  CanProve, us/query   mean %8.1f  p50 %8.1f  p99 %8.1f   (with Z3, context made)\n",
              mean(c.with_us), Percentile(c.with_us, 0.5), Percentile(c.with_us, 0.99));
  std::printf(
      "  CanProve, us/query   mean %8.1f  p50 %8.1f  p99 %8.1f   (with Z3, fresh analyzer)\n",
      mean(c.first_us), Percentile(c.first_us, 0.5), Percentile(c.first_us, 0.99));
  std::printf("  CanProve, us/query   mean %8.1f  p50 %8.1f  p99 %8.1f   (without Z3)\n",
              mean(c.without_us), Percentile(c.without_us, 0.5), Percentile(c.without_us, 0.99));
  std::printf("  Z3 query alone, us   p50 %8.1f  p90 %8.1f  p99 %8.1f  max %8.1f\n",
              Percentile(c.z3_us, 0.5), Percentile(c.z3_us, 0.9), Percentile(c.z3_us, 0.99),
              Percentile(c.z3_us, 1.0));
  ExampleResult ex;
  if (int rc = RunExamples(examples, verbose, &ex)) return rc;
  std::printf("examples %s: %lld files, %lld functions, statement Simplify\n", examples.c_str(),
              static_cast<long long>(ex.files), static_cast<long long>(ex.functions));
  std::printf("  CanProve calls %lld, reaching Z3 %lld (%.2f%%; %lld cache hits, %lld proved)\n",
              static_cast<long long>(ex.can_prove), static_cast<long long>(ex.z3_queries),
              ex.can_prove ? 100.0 * ex.z3_queries / ex.can_prove : 0.0,
              static_cast<long long>(ex.z3_cache_hits), static_cast<long long>(ex.z3_proved));
  std::printf("  Simplify time: %.1f ms with Z3 (%.1f ms in Z3), %.1f ms without\n", ex.with_ms,
              ex.z3_ms, ex.without_ms);
  return c.unsound ? 1 : 0;
}
