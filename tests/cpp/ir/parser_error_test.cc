// Parser errors: one case per class of mistake, each checking the exact message, its line:col and
// the caret under the column.
#include <gtest/gtest.h>
#include <tessel/ir/parser.h>
#include <tvm/ffi/error.h>

#include <string>

namespace tessel {
namespace ir {
namespace {

// The message of the ValueError that parsing `text` throws ("" when it does not throw).
std::string ErrorOf(const std::string& text) {
  try {
    ParseText(text, "kernel.py");
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    return e.message();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

std::string ExprErrorOf(const std::string& text, Map<String, Any> vars = {}) {
  try {
    ParseExpr(text, vars);
  } catch (const tvm::ffi::Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    return e.message();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

const char* kHead = "@T.prim_func\ndef f(A: T.Buffer((8,), \"float32\"), n: T.int32):\n";

std::string Body(const std::string& lines) { return std::string(kHead) + lines; }

TEST(ParserError, UnknownName) {
  EXPECT_EQ(ErrorOf(Body("    for i in range(8):\n        A[i] = A[i] + B[i]\n")),
            "kernel.py:4:23: error: unknown name 'B'\n"
            "        A[i] = A[i] + B[i]\n"
            "                      ^");
}

TEST(ParserError, UnknownFunction) {
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(T.frobnicate(n))\n")),
            "kernel.py:3:16: error: unknown function 'T.frobnicate'\n"
            "    T.evaluate(T.frobnicate(n))\n"
            "               ^");
}

TEST(ParserError, UnknownDtype) {
  EXPECT_EQ(ErrorOf("@T.prim_func\ndef f(A: T.Buffer((8,), \"flaot32\")):\n    T.evaluate(0)\n"),
            "kernel.py:2:25: error: unknown dtype 'flaot32'\n"
            "def f(A: T.Buffer((8,), \"flaot32\")):\n"
            "                        ^");
}

TEST(ParserError, WrongArgumentCount) {
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(T.exp(A[0], A[1]))\n")),
            "kernel.py:3:16: error: T.exp takes 1 argument, got 2\n"
            "    T.evaluate(T.exp(A[0], A[1]))\n"
            "               ^");
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(T.Cast(\"int64\"))\n")),
            "kernel.py:3:16: error: T.Cast takes 2 arguments, got 1\n"
            "    T.evaluate(T.Cast(\"int64\"))\n"
            "               ^");
}

TEST(ParserError, UnexpectedKeyword) {
  EXPECT_EQ(ErrorOf(Body("    for i in T.serial(8, thread=\"x\"):\n        T.evaluate(i)\n")),
            "kernel.py:3:26: error: T.serial got an unexpected keyword argument 'thread'\n"
            "    for i in T.serial(8, thread=\"x\"):\n"
            "                         ^");
}

TEST(ParserError, BadIndentation) {
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(0)\n      T.evaluate(1)\n")),
            "kernel.py:4:7: error: unexpected indent\n"
            "      T.evaluate(1)\n"
            "      ^");
  EXPECT_EQ(ErrorOf(Body("    if n > 0:\n        T.evaluate(0)\n      T.evaluate(1)\n")),
            "kernel.py:5:7: error: unindent does not match any outer indentation level\n"
            "      T.evaluate(1)\n"
            "      ^");
  EXPECT_EQ(ErrorOf(Body("    if n > 0:\n    T.evaluate(0)\n")),
            "kernel.py:4:5: error: expected an indented block\n"
            "    T.evaluate(0)\n"
            "    ^");
}

TEST(ParserError, Tabs) {
  EXPECT_EQ(ErrorOf(Body("\tT.evaluate(0)\n")),
            "kernel.py:3:1: error: tab in indentation; indent with spaces\n"
            "\tT.evaluate(0)\n"
            "^");
}

TEST(ParserError, UnterminatedString) {
  EXPECT_EQ(ErrorOf(Body("    assert n > 0, \"oops\n")),
            "kernel.py:3:19: error: unterminated string literal\n"
            "    assert n > 0, \"oops\n"
            "                  ^");
}

TEST(ParserError, ChainedComparison) {
  EXPECT_EQ(ErrorOf(Body("    if 0 < n < 8:\n        T.evaluate(0)\n")),
            "kernel.py:3:14: error: chained comparison; write (a < b) and (b < c) or "
            "parenthesize the comparison\n"
            "    if 0 < n < 8:\n"
            "             ^");
}

TEST(ParserError, TrueDivisionOnIntegers) {
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(n / 2)\n")),
            "kernel.py:3:18: error: '/' is only defined on floats, got int32; use '//' (floor "
            "division) or T.truncdiv\n"
            "    T.evaluate(n / 2)\n"
            "                 ^");
}

TEST(ParserError, DtypeMismatchAtTheOperator) {
  EXPECT_EQ(ExprErrorOf("x + y", {{"x", String("int32")}, {"y", String("int64")}}),
            "<expr>:1:3: error: operands of '+' have different dtypes: int32 and int64; convert "
            "one with T.Cast\n"
            "x + y\n"
            "  ^");
  EXPECT_EQ(ExprErrorOf("x * 4 + y // 2", {{"x", String("int32")}, {"y", String("int64")}}),
            "<expr>:1:7: error: operands of '+' have different dtypes: int32 and int64; convert "
            "one with T.Cast\n"
            "x * 4 + y // 2\n"
            "      ^");
}

TEST(ParserError, LiteralTooLargeForInt32) {
  EXPECT_EQ(ExprErrorOf("5000000000"),
            "<expr>:1:1: error: integer literal 5000000000 does not fit in int32; write "
            "T.int64(5000000000)\n"
            "5000000000\n"
            "^");
}

TEST(ParserError, NodeConstructorErrorGetsALocation) {
  // BufferStore's own check (dtype of the value) is reported at the '='.
  EXPECT_EQ(ErrorOf(Body("    A[0] = n\n")),
            "kernel.py:3:10: error: BufferStore: A: value has dtype int32, expected float32\n"
            "    A[0] = n\n"
            "         ^");
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(A[0, 1])\n")),
            "kernel.py:3:16: error: BufferLoad: A has 1 dimensions but 2 indices were given\n"
            "    T.evaluate(A[0, 1])\n"
            "               ^");
}

TEST(ParserError, NestingTooDeep) {
  std::string deep = std::string(300, '(') + "1" + std::string(300, ')');
  std::string msg = ExprErrorOf(deep);
  EXPECT_EQ(msg.substr(0, msg.find('\n')),
            "<expr>:1:257: error: brackets nested deeper than 256 levels");
  std::string minus(1000, '-');
  msg = ExprErrorOf(minus + "1");
  EXPECT_EQ(msg.substr(0, msg.find('\n')),
            "<expr>:1:257: error: expression nested deeper than 256 levels");
  std::string chain = "x";
  for (int i = 0; i < 1100; ++i) chain += " + x";
  msg = ExprErrorOf(chain, {{"x", String("int32")}});
  EXPECT_EQ(msg.substr(0, msg.find(':', 8)), "<expr>:1");
  EXPECT_NE(msg.find("error: expression nested deeper than 1024 levels"), std::string::npos);
  std::string text = "@T.prim_func\ndef f(n: T.int32):\n";
  for (int i = 0; i < 300; ++i) {
    text += std::string(4 * (i + 1), ' ') + "if n > " + std::to_string(i) + ":\n";
  }
  text += std::string(4 * 301, ' ') + "T.evaluate(0)\n";
  msg = ErrorOf(text);
  EXPECT_EQ(msg.substr(0, msg.find('\n')),
            "kernel.py:259:1029: error: blocks nested deeper than 256 levels");
}

TEST(ParserError, UnclosedAndUnmatchedBrackets) {
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(n\n")),
            "kernel.py:3:15: error: '(' is never closed\n"
            "    T.evaluate(n\n"
            "              ^");
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(n))\n")),
            "kernel.py:3:18: error: unmatched ')'\n"
            "    T.evaluate(n))\n"
            "                 ^");
}

TEST(ParserError, StatementsInTheWrongPlace) {
  EXPECT_EQ(ErrorOf(Body("    T.reads(A[0])\n")),
            "kernel.py:3:5: error: T.reads is only allowed directly inside a block\n"
            "    T.reads(A[0])\n"
            "    ^");
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(T.reads(A[0]))\n")),
            "kernel.py:3:16: error: 'T.reads' is a statement, not an expression\n"
            "    T.evaluate(T.reads(A[0]))\n"
            "               ^");
}

TEST(ParserError, RemapNeedsLoopVariables) {
  EXPECT_EQ(ErrorOf(Body("    with T.block(\"b\"):\n        vi = T.axis.remap(\"S\", [n])\n"
                         "        T.evaluate(vi)\n")),
            "kernel.py:4:33: error: T.axis.remap needs loop variables of enclosing loops\n"
            "        vi = T.axis.remap(\"S\", [n])\n"
            "                                ^");
}

TEST(ParserError, BufferUsedAsValue) {
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(A)\n")),
            "kernel.py:3:16: error: 'A' is a buffer, not a value; index it, as in A[i]\n"
            "    T.evaluate(A)\n"
            "               ^");
}

TEST(ParserError, MissingDecoratorAndTrailingGarbage) {
  EXPECT_EQ(ErrorOf("def f():\n    T.evaluate(0)\n"),
            "kernel.py:1:1: error: expected @I.ir_module or @T.prim_func\n"
            "def f():\n"
            "^");
  EXPECT_EQ(ErrorOf("@T.prim_func\ndef f():\n    T.evaluate(0)\nx = 1\n"),
            "kernel.py:4:1: error: unexpected 'x' after the end\n"
            "x = 1\n"
            "^");
}

TEST(ParserError, UnknownCharacterAndEscape) {
  EXPECT_EQ(ErrorOf(Body("    T.evaluate(n $ 1)\n")),
            "kernel.py:3:18: error: unexpected character '$'\n"
            "    T.evaluate(n $ 1)\n"
            "                 ^");
  EXPECT_EQ(ErrorOf(Body("    assert n > 0, \"a\\qb\"\n")),
            "kernel.py:3:21: error: unknown escape sequence '\\q'\n"
            "    assert n > 0, \"a\\qb\"\n"
            "                    ^");
}

TEST(ParserError, EmptyInputAndEndOfInput) {
  EXPECT_EQ(ErrorOf(""), "kernel.py:1:1: error: expected @I.ir_module or @T.prim_func\n\n^");
  EXPECT_EQ(ErrorOf("@T.prim_func\ndef f(:\n"),
            "kernel.py:2:6: error: '(' is never closed\n"
            "def f(:\n"
            "     ^");
  EXPECT_EQ(ErrorOf("@T.prim_func\ndef f(:):\n"),
            "kernel.py:2:7: error: expected a name for a parameter, found ':'\n"
            "def f(:):\n"
            "      ^");
  EXPECT_EQ(ErrorOf("@T.prim_func\ndef f():\n"),
            "kernel.py:3:1: error: expected an indented block\n\n^");
}

}  // namespace
}  // namespace ir
}  // namespace tessel
