// `tessel prove COND [options]`: prints `proved` (exit 0) when the analyzer proves COND under the
// declared variables, bindings and assumptions, else `not proved` (exit 1).
#include <tessel/arith/z3_prover.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "arith_options.h"
#include "command.h"

namespace tessel {
namespace tools {

const char kProveUsage[] =
    "usage: tessel prove COND [--var NAME:DTYPE]... [--bind NAME=LO:HI]... [--assume COND]...\n\n"
    "Prints 'proved' and exits 0 when the arithmetic analyzer proves that COND holds for every\n"
    "value the bindings and assumptions allow; else prints 'not proved' and exits 1 (COND may\n"
    "still be true: the analyzer is sound, not complete).\n"
    "Example: tessel prove 'i * 4 + j < 64' --bind i=0:16 --bind j=0:4\n\n"
    "  --strength S        default | symbolic_bound\n" TESSEL_ARITH_OPTIONS_USAGE;

namespace {

// What `prove` says when the proof fails. Kept apart so that a prover that can also find a
// counterexample (Z3, issue 4) prints it here, after the verdict line.
void ReportNotProved(ArithSession& session, const ir::PrimExpr& cond) {
  // Z3 (z3_prover.h): when it refutes cond, the values that make it false, from the model.
  arith::Z3Prover* z3 = arith::GetZ3Prover(session.analyzer());
  std::optional<arith::Z3Counterexample> cx;
  try {
    if (z3) cx = z3->Counterexample(cond);
  } catch (const tvm::ffi::Error&) {
    cx.reset();
  }
  if (!cx || cx->empty()) {
    std::cout << "not proved\n";
    return;
  }
  std::cout << "not proved: counterexample";
  for (size_t i = 0; i < cx->size(); ++i) {
    arith::i128 v = (*cx)[i].second;
    unsigned __int128 u = v < 0 ? -static_cast<unsigned __int128>(v) : v;
    std::string digits;
    do {
      digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
      u /= 10;
    } while (u);
    std::cout << (i ? ", " : " ") << (*cx)[i].first->name_hint << " = " << (v < 0 ? "-" : "")
              << digits;
  }
  std::cout << "\n";
}

}  // namespace

int ProveMain(const std::vector<std::string>& raw_args) {
  // --strength is prove's own option; the rest is shared with simplify and bound.
  arith::ProofStrength strength = arith::ProofStrength::kDefault;
  std::vector<std::string> args;
  for (size_t i = 0; i < raw_args.size(); ++i) {
    const std::string& a = raw_args[i];
    if (a == "--") {
      args.insert(args.end(), raw_args.begin() + i, raw_args.end());
      break;
    }
    if (a != "--strength" && a.rfind("--strength=", 0) != 0) {
      args.push_back(a);
      continue;
    }
    std::string value;
    if (a == "--strength") {
      if (i + 1 >= raw_args.size()) {
        std::cerr << "tessel prove: --strength needs a value\n\n" << kProveUsage;
        return kExitUsage;
      }
      value = raw_args[++i];
    } else {
      value = a.substr(sizeof("--strength=") - 1);
    }
    if (value == "default") {
      strength = arith::ProofStrength::kDefault;
    } else if (value == "symbolic_bound") {
      strength = arith::ProofStrength::kSymbolicBound;
    } else {
      std::cerr << "tessel prove: --strength must be default or symbolic_bound, got '" << value
                << "'\n\n"
                << kProveUsage;
      return kExitUsage;
    }
  }

  ArithSession session;
  if (int rc = session.Init("prove", kProveUsage, args); rc != kExitOk) return rc;
  const ir::PrimExpr& cond = session.expr();
  if (!cond.dtype().is_bool() || !cond.dtype().is_scalar()) {
    std::cerr << "tessel prove: '" << ir::AsText(cond) << "' is not a condition (its dtype is "
              << cond.dtype() << "); write a comparison such as 'x < 16'\n";
    return kExitFailure;
  }
  try {
    if (session.analyzer().CanProve(cond, strength)) {
      std::cout << "proved\n";
      return kExitOk;
    }
  } catch (const tvm::ffi::Error& e) {
    std::cerr << "tessel prove: " << e.kind() << ": " << e.message() << "\n";
    return kExitFailure;
  }
  ReportNotProved(session, cond);
  return kExitFailure;
}

}  // namespace tools
}  // namespace tessel
