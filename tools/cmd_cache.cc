// `tessel cache ls|clear`: the two on-disk caches. The jit cache (python/tessel/jit/cache.py:
// TESSEL_CACHE_DIR/jit, else $XDG_CACHE_HOME/tessel/jit, else ~/.cache/tessel/jit) holds one
// entry per compiled specialization, <key>.so + <key>.src + <key>.json (the json written last),
// plus tune/ (autotuning records) and meta/ (memoized identities). The C build cache
// (codegen::CacheDir) holds <hash>.so/.key and <hash>.cubin/.cukey files at its top level.
// `clear` removes only files of those shapes, so a TESSEL_CACHE_DIR shared with other files
// keeps them.
#include <tessel/codegen/build.h>
#include <tessel/support/env.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/json.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "command.h"

namespace tessel {
namespace tools {

namespace fs = std::filesystem;

const char kCacheUsage[] =
    "usage: tessel cache ls\n"
    "       tessel cache clear [--jit | --build]\n"
    "       tessel cache dir\n\n"
    "The kernel caches on disk.\n\n"
    "  ls     list the jit cache's kernels (name, target, size, age, key, constexpr values) and\n"
    "         the number of autotuning records, and the size of the C build cache\n"
    "  clear  delete the jit cache's entries and records (--jit), the C build cache's libraries\n"
    "         (--build), or both (the default)\n"
    "  dir    print the two folders\n\n"
    "Folders: the jit cache is TESSEL_CACHE_DIR/jit when TESSEL_CACHE_DIR is set, else\n"
    "$XDG_CACHE_HOME/tessel/jit, else ~/.cache/tessel/jit; the C build cache is TESSEL_CACHE_DIR,\n"
    "else <temp dir>/tessel-cache-<uid>.\n";

namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

fs::path JitDir() {
  std::string root = support::GetEnv("TESSEL_CACHE_DIR");
  if (!root.empty()) return fs::path(root) / "jit";
  if (const char* xdg = Env("XDG_CACHE_HOME")) return fs::path(xdg) / "tessel" / "jit";
  const char* home = Env("HOME");
  return fs::path(home ? home : ".") / ".cache" / "tessel" / "jit";
}

// The build cache's files: <32 hex>[-N].{so,key,cubin,cukey} and their temporaries.
bool IsBuildCacheFile(const std::string& name) {
  static const std::regex re(R"(^\.?[0-9a-f]{32}(-[0-9]+)?\.(so|key|cubin|cukey)(\.tmp-.*)?$)");
  return std::regex_match(name, re);
}

std::string HumanSize(uintmax_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%ju B", bytes);
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KB", bytes / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MB", bytes / (1024.0 * 1024.0));
  }
  return buf;
}

std::string HumanAge(double seconds) {
  char buf[32];
  if (seconds < 120) {
    std::snprintf(buf, sizeof(buf), "%.0f s", seconds);
  } else if (seconds < 7200) {
    std::snprintf(buf, sizeof(buf), "%.0f min", seconds / 60);
  } else if (seconds < 2 * 86400) {
    std::snprintf(buf, sizeof(buf), "%.0f h", seconds / 3600);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f d", seconds / 86400);
  }
  return buf;
}

double AgeSeconds(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return 0;
  auto now = fs::file_time_type::clock::now();
  return std::chrono::duration<double>(now - t).count();
}

struct JitEntry {
  std::string key, name, target, params;
  uintmax_t size = 0;
  double age = 0;
};

std::string StringField(const tvm::ffi::json::Object& obj, const char* field) {
  auto it = obj.find(tvm::ffi::String(field));
  if (it == obj.end()) return "?";
  if (auto s = (*it).second.try_cast<tvm::ffi::String>()) return std::string(*s);
  return "?";
}

// The entry's constexpr / static values as "K=V, ...".
std::string ParamsField(const tvm::ffi::json::Object& obj) {
  auto it = obj.find(tvm::ffi::String("params"));
  if (it == obj.end()) return "";
  auto params = (*it).second.try_cast<tvm::ffi::json::Object>();
  if (!params) return "";
  std::vector<std::string> parts;
  for (const auto& kv : *params) {
    std::string value = "?";
    if (auto s = kv.second.try_cast<tvm::ffi::String>()) {
      value = std::string(*s);
    } else if (kv.second.type_index() == kTVMFFIBool) {
      value = kv.second.cast<bool>() ? "True" : "False";
    } else if (auto i = kv.second.try_cast<int64_t>()) {
      value = std::to_string(*i);
    } else if (auto d = kv.second.try_cast<double>()) {
      std::ostringstream os;
      os << *d;
      value = os.str();
    }
    parts.push_back(std::string(kv.first.cast<tvm::ffi::String>()) + "=" + value);
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

std::vector<JitEntry> ListJit(const fs::path& dir, size_t* records) {
  std::vector<JitEntry> out;
  *records = 0;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path& p = e.path();
    if (p.extension() != ".json" || p.filename().string()[0] == '.') continue;
    fs::path lib = p;
    lib.replace_extension(".so");
    if (!fs::is_regular_file(lib, ec)) continue;
    std::ifstream in(p, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    JitEntry entry;
    entry.key = p.stem().string();
    entry.name = entry.target = "?";
    tvm::ffi::String error;
    tvm::ffi::json::Value v = tvm::ffi::json::Parse(buf.str(), &error);
    if (error.empty()) {
      if (auto obj = v.try_cast<tvm::ffi::json::Object>()) {
        entry.name = StringField(*obj, "name");
        entry.target = StringField(*obj, "target");
        entry.params = ParamsField(*obj);
      }
    }
    entry.size = fs::file_size(lib, ec);
    entry.age = AgeSeconds(lib);
    out.push_back(entry);
  }
  fs::path tune = dir / "tune";
  if (fs::is_directory(tune, ec)) {
    for (const auto& e : fs::directory_iterator(tune, ec)) {
      if (e.path().extension() == ".json" && e.path().filename().string()[0] != '.') ++*records;
    }
  }
  std::sort(out.begin(), out.end(), [](const JitEntry& a, const JitEntry& b) {
    return a.name != b.name ? a.name < b.name : a.age < b.age;
  });
  return out;
}

// Number and total size of the build cache's files.
void BuildCacheSize(const fs::path& dir, size_t* files, uintmax_t* bytes) {
  *files = 0;
  *bytes = 0;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec) || !IsBuildCacheFile(e.path().filename().string())) continue;
    ++*files;
    *bytes += e.file_size(ec);
  }
}

int List() {
  fs::path jit = JitDir();
  size_t records = 0;
  std::vector<JitEntry> entries = ListJit(jit, &records);
  uintmax_t total = 0;
  for (const JitEntry& e : entries) total += e.size;
  std::cout << "jit cache: " << jit.string() << " (" << entries.size() << " kernel"
            << (entries.size() == 1 ? "" : "s") << ", " << HumanSize(total) << "; " << records
            << " autotuning record" << (records == 1 ? "" : "s") << ")\n";
  if (!entries.empty()) {
    size_t wn = 4, wt = 6;
    for (const JitEntry& e : entries) {
      wn = std::max(wn, e.name.size());
      wt = std::max(wt, e.target.size());
    }
    auto pad = [](const std::string& s, size_t w) { return s + std::string(w - s.size(), ' '); };
    std::cout << "  " << pad("name", wn) << "  " << pad("target", wt) << "  " << pad("size", 9)
              << "  " << pad("age", 7) << "  " << pad("key", 16) << "  params\n";
    for (const JitEntry& e : entries) {
      std::cout << "  " << pad(e.name, wn) << "  " << pad(e.target, wt) << "  "
                << pad(HumanSize(e.size), 9) << "  " << pad(HumanAge(e.age), 7) << "  "
                << e.key.substr(0, 16) << "  " << e.params << "\n";
    }
  }
  fs::path build = codegen::CacheDir();
  size_t files = 0;
  uintmax_t bytes = 0;
  BuildCacheSize(build, &files, &bytes);
  std::cout << "build cache: " << build.string() << " (" << files << " file"
            << (files == 1 ? "" : "s") << ", " << HumanSize(bytes) << ")\n";
  return kExitOk;
}

int Clear(bool jit, bool build) {
  std::error_code ec;
  if (jit) {
    fs::path dir = JitDir();
    size_t records = 0;
    size_t kernels = ListJit(dir, &records).size();
    uintmax_t removed = 0;
    if (fs::is_directory(dir, ec)) {
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        removed += fs::remove_all(e.path(), ec);
        if (ec) {
          std::cerr << "tessel cache: cannot remove " << e.path().string() << ": "
                    << ec.message() << "\n";
          return kExitFailure;
        }
      }
    }
    std::cout << "jit cache: removed " << kernels << " kernel" << (kernels == 1 ? "" : "s")
              << " and " << records << " autotuning record" << (records == 1 ? "" : "s") << " ("
              << removed << " files) from " << dir.string() << "\n";
  }
  if (build) {
    fs::path dir = codegen::CacheDir();
    size_t files = 0;
    uintmax_t bytes = 0;
    BuildCacheSize(dir, &files, &bytes);
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (!e.is_regular_file(ec) || !IsBuildCacheFile(e.path().filename().string())) continue;
      if (!fs::remove(e.path(), ec) || ec) {
        std::cerr << "tessel cache: cannot remove " << e.path().string() << ": " << ec.message()
                  << "\n";
        return kExitFailure;
      }
    }
    std::cout << "build cache: removed " << files << " file" << (files == 1 ? "" : "s") << " ("
              << HumanSize(bytes) << ") from " << dir.string() << "\n";
  }
  return kExitOk;
}

}  // namespace

int CacheMain(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << "tessel cache: expected ls, clear or dir\n" << kCacheUsage;
    return kExitUsage;
  }
  const std::string& sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (sub == "ls" || sub == "dir") {
      if (!rest.empty()) {
        std::cerr << "tessel cache " << sub << ": unexpected argument '" << rest[0] << "'\n"
                  << kCacheUsage;
        return kExitUsage;
      }
      if (sub == "ls") return List();
      std::cout << "jit: " << JitDir().string() << "\nbuild: " << codegen::CacheDir() << "\n";
      return kExitOk;
    }
    if (sub == "clear") {
      bool jit = false, build = false;
      for (const std::string& a : rest) {
        if (a == "--jit") {
          jit = true;
        } else if (a == "--build") {
          build = true;
        } else {
          std::cerr << "tessel cache clear: unknown option '" << a << "'\n" << kCacheUsage;
          return kExitUsage;
        }
      }
      if (!jit && !build) jit = build = true;
      return Clear(jit, build);
    }
  } catch (const tvm::ffi::Error& e) {
    std::cerr << "tessel cache: " << e.message() << "\n";
    return kExitFailure;
  }
  std::cerr << "tessel cache: unknown subcommand '" << sub << "'\n" << kCacheUsage;
  return kExitUsage;
}

}  // namespace tools
}  // namespace tessel
