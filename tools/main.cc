// The tessel command line: `tessel <command> [args]`. Subcommands are listed in kCommands; each is
// implemented in its own cmd_<name>.cc.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"

namespace tessel {
namespace tools {
namespace {

constexpr char kVersion[] = "0.1.0";  // keep in step with pyproject.toml (a test checks)

const Command kCommands[] = {
    {"fmt", "print text-format files in canonical form", kFmtUsage, FmtMain},
    {"simplify", "simplify an integer expression with the arithmetic analyzer", kSimplifyUsage,
     SimplifyMain},
    {"prove", "prove a condition with the arithmetic analyzer (exit 0 if proved)", kProveUsage,
     ProveMain},
    {"bound", "print the [min, max] bound of an integer expression", kBoundUsage, BoundMain},
    {"build", "compile a text-format file into a shared library (tvm-ffi functions)", kBuildUsage,
     BuildMain},
    {"cache", "list or clear the jit and build caches on disk", kCacheUsage, CacheMain},
};

void PrintHelp(std::ostream& os) {
  os << "usage: tessel <command> [args...]\n"
        "       tessel --help | --version\n\n"
        "commands:\n";
  for (const Command& c : kCommands) {
    os << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << c.summary << "\n";
  }
  os << "\n`tessel <command> --help` describes a command.\n";
}

}  // namespace

bool ReadSource(const std::string& path, std::string* text, std::string* error) {
  if (path == "-") {
    text->assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    *error = "cannot read " + path;
    return false;
  }
  *text = buf.str();
  return true;
}

}  // namespace tools
}  // namespace tessel

int main(int argc, char** argv) {
  using namespace tessel::tools;  // NOLINT(build/namespaces)
  if (argc < 2) {
    PrintHelp(std::cerr);
    return kExitUsage;
  }
  std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    PrintHelp(std::cout);
    return kExitOk;
  }
  if (first == "--version") {
    std::cout << "tessel " << kVersion << "\n";
    return kExitOk;
  }
  for (const Command& c : kCommands) {
    if (first != c.name) continue;
    std::vector<std::string> args(argv + 2, argv + argc);
    for (const std::string& a : args) {
      if (a == "--help" || a == "-h") {
        std::cout << c.usage;
        return kExitOk;
      }
    }
    return c.run(args);
  }
  std::cerr << "tessel: unknown command '" << first << "'\n\n";
  PrintHelp(std::cerr);
  return kExitUsage;
}
