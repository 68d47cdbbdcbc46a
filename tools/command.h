// The tessel CLI's subcommands. Each lives in its own file (cmd_<name>.cc) and is listed once in
// main.cc's table; main.cc owns the dispatch, --help and --version.
#ifndef TESSEL_TOOLS_COMMAND_H_
#define TESSEL_TOOLS_COMMAND_H_

#include <string>
#include <vector>

namespace tessel {
namespace tools {

// Exit codes shared by every subcommand.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // bad input, a check that failed
constexpr int kExitUsage = 2;    // bad command line

struct Command {
  const char* name;
  const char* summary;  // one line for `tessel --help`
  const char* usage;    // full text for `tessel <name> --help`
  // args excludes the program and subcommand names. Errors go to stderr.
  int (*run)(const std::vector<std::string>& args);
};

// Reads a whole file ("-" is stdin) into *text; false with *error set when it cannot.
bool ReadSource(const std::string& path, std::string* text, std::string* error);

int FmtMain(const std::vector<std::string>& args);
extern const char kFmtUsage[];
int SimplifyMain(const std::vector<std::string>& args);
extern const char kSimplifyUsage[];
int ProveMain(const std::vector<std::string>& args);
extern const char kProveUsage[];
int BoundMain(const std::vector<std::string>& args);
extern const char kBoundUsage[];
int BuildMain(const std::vector<std::string>& args);
extern const char kBuildUsage[];
int CacheMain(const std::vector<std::string>& args);
extern const char kCacheUsage[];

}  // namespace tools
}  // namespace tessel

#endif  // TESSEL_TOOLS_COMMAND_H_
