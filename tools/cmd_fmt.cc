// `tessel fmt`: parse text-format files and print them in canonical form (the printer's output).
// With --check nothing is printed; the exit status says whether every file is already canonical.
// With -i the files are rewritten in place.
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"

namespace tessel {
namespace tools {

using tvm::ffi::ObjectRef;

const char kFmtUsage[] =
    "usage: tessel fmt [--check | -i] FILE...\n\n"
    "Parses each FILE (the text format, docs/text_format.md; '-' reads stdin) and prints it in\n"
    "canonical form, after the lines that precede the first decorator (comments, Python\n"
    "imports) as they are. A parse error is printed to stderr as FILE:LINE:COL: error: ... and "
    "makes\n"
    "the exit status 1; the other files are still processed.\n\n"
    "  --check  print nothing; exit 1 and name each file that is not in canonical form\n"
    "  -i       rewrite each FILE in place with its canonical form\n";

namespace {

enum class Mode { kPrint, kCheck, kInPlace };

// The canonical text of `source`, or false with the parser's message in *error. The parser is
// reached through its registered global function while it is not yet part of every build.
bool Canonical(const std::string& source, const std::string& name, std::string* out,
               std::string* error) {
  auto parse = tvm::ffi::Function::GetGlobal("tessel.ir.ParseText");
  if (!parse) {
    *error = "tessel fmt: this build of libtessel has no parser (tessel.ir.ParseText)";
    return false;
  }
  try {
    *out = ir::AsText((*parse)(source, name).cast<ObjectRef>());
    return true;
  } catch (const tvm::ffi::Error& e) {
    *error = e.message();
    return false;
  }
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A file that is also a Python module starts with its own lines (comments, imports such as
// `from tessel.script import tir as T`) before the first decorator: they are kept, and when
// they hold code the printer's `# from tvm.script ...` header lines, which would only repeat
// them, are left out. TVM's header comments in the preamble are replaced by the printer's.
std::string WithPreamble(const std::string& source, const std::string& printed) {
  std::vector<std::string> kept;
  bool has_code = false;
  size_t pos = 0;
  while (pos < source.size()) {
    size_t end = source.find('\n', pos);
    std::string line = source.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (StartsWith(line, "@")) break;
    pos = end == std::string::npos ? source.size() : end + 1;
    if (StartsWith(line, "# from tvm.")) continue;
    bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (!blank && line[0] != '#') has_code = true;
    kept.push_back(line);
  }
  while (!kept.empty() && kept.back().find_first_not_of(" \t\r") == std::string::npos) {
    kept.pop_back();
  }
  if (kept.empty()) return printed;
  std::string body = printed;
  if (has_code) {
    size_t p = 0;
    while (StartsWith(body.substr(p), "# from tvm.")) p = body.find('\n', p) + 1;
    if (body.compare(p, 1, "\n") == 0) ++p;
    body = body.substr(p);
  }
  std::string out;
  for (const std::string& line : kept) out += line + "\n";
  return out + "\n" + body;
}

}  // namespace

int FmtMain(const std::vector<std::string>& args) {
  Mode mode = Mode::kPrint;
  std::vector<std::string> files;
  for (const std::string& a : args) {
    if (a == "--check") {
      mode = Mode::kCheck;
    } else if (a == "-i") {
      mode = Mode::kInPlace;
    } else if (a.size() > 1 && a[0] == '-') {
      std::cerr << "tessel fmt: unknown option '" << a << "'\n" << kFmtUsage;
      return kExitUsage;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::cerr << "tessel fmt: no input files\n" << kFmtUsage;
    return kExitUsage;
  }
  int status = kExitOk;
  bool first = true;
  for (const std::string& path : files) {
    std::string source, text, error;
    const std::string name = path == "-" ? "<stdin>" : path;
    if (!ReadSource(path, &source, &error)) {
      std::cerr << "tessel fmt: " << error << "\n";
      status = kExitFailure;
      continue;
    }
    if (!Canonical(source, name, &text, &error)) {
      std::cerr << error << (error.empty() || error.back() != '\n' ? "\n" : "");
      status = kExitFailure;
      continue;
    }
    if (!text.empty() && text.back() != '\n') text += '\n';
    text = WithPreamble(source, text);
    if (mode == Mode::kCheck) {
      if (text != source) {
        std::cerr << name << ": not in canonical form\n";
        status = kExitFailure;
      }
    } else if (mode == Mode::kInPlace && path != "-") {
      if (text == source) continue;
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << text;
      if (!out) {
        std::cerr << "tessel fmt: cannot write " << path << "\n";
        status = kExitFailure;
      }
    } else {
      // Several files print one after another, separated by a blank line.
      if (!first) std::cout << "\n";
      std::cout << text;
      first = false;
    }
  }
  return status;
}

}  // namespace tools
}  // namespace tessel
