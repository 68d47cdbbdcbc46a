// The command line shared by `tessel simplify`, `tessel prove` and `tessel bound`: one expression
// (the positional arguments, joined by spaces), variable declarations, bindings and assumptions,
// turned into an Analyzer in the state they describe.
//
//   --var NAME:DTYPE     declares NAME (an undeclared name is an int32 variable)
//   --bind NAME=LO:HI    NAME ranges over [LO, HI)   (LO, HI: expressions)
//   --bind NAME=VALUE    NAME equals VALUE
//   --assume COND        COND holds (a constraint scope around the query)
//   --assume-no-overflow the analyzer's no-overflow mode (Analyzer::SetAssumeNoOverflow)
#ifndef TESSEL_TOOLS_ARITH_OPTIONS_H_
#define TESSEL_TOOLS_ARITH_OPTIONS_H_

#include <tessel/arith/analyzer.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessel {
namespace tools {

// The option lines of the three commands' usage texts (a literal, so that each usage text is a
// constant array: main.cc's command table is initialized before any dynamic initializer runs).
#define TESSEL_ARITH_OPTIONS_USAGE                                                                \
  "  --var NAME:DTYPE    declare NAME with DTYPE (int8..int64, uint8..uint64, bool); an\n"        \
  "                      undeclared name is an int32 variable\n"                                  \
  "  --bind NAME=LO:HI   NAME ranges over [LO, HI) (LO and HI are expressions)\n"                 \
  "  --bind NAME=VALUE   NAME equals VALUE\n"                                                     \
  "  --assume COND       COND holds (may repeat; all hold together)\n"                            \
  "  --assume-no-overflow  signed 32/64-bit + - * / % do not overflow (TVM's semantics;\n"        \
  "                      docs/arith.md); without it, integers wrap as the IR defines\n"           \
  "  --                  the remaining arguments are the expression, even if they start with -\n" \
  "The expression uses the text format's syntax (docs/text_format.md): + - * // % < <= == !=\n"   \
  "and or not ^ & | << >>, T.floordiv, T.floormod, T.truncdiv, T.truncmod, T.min, T.max,\n"       \
  "T.Select. Several positional arguments are joined with spaces. Exit status 2 for a bad\n"      \
  "command line, 1 for an expression that does not parse (the parser's LINE:COL message).\n"

class ArithSession {
 public:
  ArithSession();
  ~ArithSession();
  ArithSession(const ArithSession&) = delete;
  ArithSession& operator=(const ArithSession&) = delete;

  // Reads args for command `cmd` ("simplify", ...). On failure prints the error to stderr and
  // returns the exit status (kExitUsage for a bad command line, kExitFailure for an expression
  // that does not parse or a binding the analyzer rejects); kExitOk on success.
  int Init(const std::string& cmd, const char* usage, const std::vector<std::string>& args);

  arith::Analyzer& analyzer() { return *analyzer_; }
  // The query expression, over the same variables as the bindings and assumptions.
  const ir::PrimExpr& expr() const { return expr_; }
  // Every variable by name, in name order (declared, or met in an expression).
  const std::map<std::string, ir::Var>& vars() const { return vars_; }
  const std::vector<ir::PrimExpr>& assumptions() const { return assumptions_; }

  // Parses text over the session's variables, declaring each unknown name as an int32 variable;
  // false (the parser's message printed to stderr) on a syntax or type error.
  bool Parse(const std::string& text, const std::string& source_name, ir::PrimExpr* out);

 private:
  std::string cmd_;
  std::unique_ptr<arith::Analyzer> analyzer_;
  std::map<std::string, ir::Var> vars_;
  ir::PrimExpr expr_;
  std::vector<ir::PrimExpr> assumptions_;
  // Open for the session's lifetime; closed innermost first by the destructor.
  std::vector<std::unique_ptr<arith::ConstraintScope>> scopes_;
};

}  // namespace tools
}  // namespace tessel

#endif  // TESSEL_TOOLS_ARITH_OPTIONS_H_
