// `tessel bound EXPR [options]`: prints the constant integer bound [min, max] of EXPR under the
// declared variables, bindings and assumptions; -inf / +inf where unbounded.
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <iostream>
#include <string>
#include <vector>

#include "arith_options.h"
#include "command.h"

namespace tessel {
namespace tools {

const char kBoundUsage[] =
    "usage: tessel bound EXPR [--var NAME:DTYPE]... [--bind NAME=LO:HI]... [--assume COND]...\n\n"
    "Prints '[min, max]': every value EXPR (an integer or bool expression) can take lies in it.\n"
    "An end the analyzer cannot bound within int64 prints as -inf / +inf.\n"
    "Example: tessel bound 'bx * 64 + tx' --bind bx=0:8 --bind "
    "tx=0:64\n\n" TESSEL_ARITH_OPTIONS_USAGE;

int BoundMain(const std::vector<std::string>& args) {
  ArithSession session;
  if (int rc = session.Init("bound", kBoundUsage, args); rc != kExitOk) return rc;
  const ir::PrimExpr& e = session.expr();
  if (!e.dtype().is_scalar() || !(e.dtype().is_int_or_uint() || e.dtype().is_bool())) {
    std::cerr << "tessel bound: '" << ir::AsText(e) << "' has dtype " << e.dtype()
              << "; bounds are for scalar integer and bool expressions\n";
    return kExitFailure;
  }
  try {
    arith::ConstIntBound b = session.analyzer().ConstIntBound(e);
    auto end = [](int64_t v) {
      if (v == arith::ConstIntBound::kNegInf) return std::string("-inf");
      if (v == arith::ConstIntBound::kPosInf) return std::string("+inf");
      return std::to_string(v);
    };
    std::cout << "[" << end(b->min_value) << ", " << end(b->max_value) << "]\n";
  } catch (const tvm::ffi::Error& e) {
    std::cerr << "tessel bound: " << e.kind() << ": " << e.message() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tools
}  // namespace tessel
