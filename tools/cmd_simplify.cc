// `tessel simplify EXPR [options]`: prints the analyzer's simplified form of EXPR, under the
// declared variables, bindings and assumptions (arith_options.h).
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <iostream>
#include <string>
#include <vector>

#include "arith_options.h"
#include "command.h"

namespace tessel {
namespace tools {

const char kSimplifyUsage[] =
    "usage: tessel simplify EXPR [--var NAME:DTYPE]... [--bind NAME=LO:HI]... [--assume "
    "COND]...\n\n"
    "Prints EXPR simplified by the arithmetic analyzer (constant folding, known values, the\n"
    "rewrite and canonical simplifiers), in the text format.\n"
    "Example: tessel simplify '(i // 8) * 8 + i % 8' --bind i=0:64\n\n" TESSEL_ARITH_OPTIONS_USAGE;

int SimplifyMain(const std::vector<std::string>& args) {
  ArithSession session;
  if (int rc = session.Init("simplify", kSimplifyUsage, args); rc != kExitOk) return rc;
  try {
    std::cout << ir::AsText(session.analyzer().Simplify(session.expr())) << "\n";
  } catch (const tvm::ffi::Error& e) {
    std::cerr << "tessel simplify: " << e.kind() << ": " << e.message() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tools
}  // namespace tessel
