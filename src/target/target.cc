// Target string parsing (see target.h) and its reflection for Python.
#include <tessel/target/target.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>

namespace tessel {
namespace target {

namespace {

struct OptionSpec {
  const char* key;
  // Says whether a value is acceptable; null accepts any.
  bool (*valid)(const std::string& value);
  const char* expected;  // the form of a valid value, for the error message
};

struct KindSpec {
  const char* kind;
  std::vector<OptionSpec> options;
};

bool IsSmArch(const std::string& v) {
  if (v.size() < 5 || v.compare(0, 3, "sm_") != 0) return false;
  // sm_90, sm_90a, sm_100f: digits, then at most one letter.
  size_t i = 3;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  if (i == 3) return false;
  return i == v.size() || (i + 1 == v.size() && std::islower(static_cast<unsigned char>(v[i])));
}

bool IsMslVersion(const std::string& v) {
  return v == "2.4" || v == "3.0" || v == "3.1" || v == "3.2" || v == "4.0";
}

bool IsBool(const std::string& v) { return v == "true" || v == "false"; }

const std::vector<KindSpec>& Kinds() {
  static const std::vector<KindSpec> kinds = {
      {"c", {}},
      {"cuda",
       {{"arch", IsSmArch, "sm_<digits>[letter], e.g. sm_90"},
        {"fast-math", IsBool, "true or false (-fast-math alone means true)"}}},
      {"metal",
       {{"msl", IsMslVersion, "an MSL version: 2.4, 3.0, 3.1, 3.2 or 4.0"},
        {"fast-math", IsBool, "true or false (-fast-math alone means true)"}}},
  };
  return kinds;
}

std::string KindList() {
  std::string out;
  for (const KindSpec& k : Kinds()) out += (out.empty() ? "" : ", ") + std::string(k.kind);
  return out;
}

std::string OptionList(const KindSpec& kind) {
  if (kind.options.empty()) return "it takes no options";
  std::string out = "its options: ";
  bool first = true;
  for (const OptionSpec& o : kind.options) {
    out += (first ? "-" : ", -") + std::string(o.key);
    first = false;
  }
  return out;
}

}  // namespace

String TargetNode::GetAttr(const String& key, const String& fallback) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? fallback : (*it).second;
}

std::vector<String> TargetKinds() {
  std::vector<String> out;
  for (const KindSpec& k : Kinds()) out.push_back(k.kind);
  return out;
}

Target Target::Parse(const String& text) {
  std::istringstream words{std::string(text)};
  std::string kind_word;
  if (!(words >> kind_word)) {
    TVM_FFI_THROW(ValueError) << "target: empty target string; the kinds are " << KindList();
  }
  const auto& kinds = Kinds();
  auto kind = std::find_if(kinds.begin(), kinds.end(),
                           [&](const KindSpec& k) { return kind_word == k.kind; });
  if (kind == kinds.end()) {
    TVM_FFI_THROW(ValueError) << "target '" << text << "': unknown kind '" << kind_word
                              << "'; the kinds are " << KindList();
  }
  auto n = tvm::ffi::make_object<TargetNode>();
  n->kind = kind->kind;
  n->str = text;
  for (std::string word; words >> word;) {
    size_t eq = word.find('=');
    std::string key = word.substr(1, eq == std::string::npos ? std::string::npos : eq - 1);
    if (word.size() < 2 || word[0] != '-' || key.empty() || key[0] == '-' ||
        (eq != std::string::npos && eq + 1 == word.size())) {
      TVM_FFI_THROW(ValueError) << "target '" << text << "': malformed option '" << word
                                << "' (expected -key=value or -key)";
    }
    std::string value = eq == std::string::npos ? "true" : word.substr(eq + 1);
    auto opt = std::find_if(kind->options.begin(), kind->options.end(),
                            [&](const OptionSpec& o) { return key == o.key; });
    if (opt == kind->options.end()) {
      TVM_FFI_THROW(ValueError) << "target '" << text << "': unknown option '-" << key
                                << "' for kind " << kind->kind << " (" << OptionList(*kind) << ")";
    }
    if (opt->valid != nullptr && !opt->valid(value)) {
      TVM_FFI_THROW(ValueError) << "target '" << text << "': -" << key << "=" << value
                                << " is not valid; expected " << opt->expected;
    }
    if (n->attrs.count(key)) {
      TVM_FFI_THROW(ValueError) << "target '" << text << "': option '-" << key << "' given twice";
    }
    n->attrs.Set(key, value);
  }
  return Target(n);
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<TargetNode>(refl::init(false))
      .def_ro("kind", &TargetNode::kind)
      .def_ro("attrs", &TargetNode::attrs)
      .def_ro("str", &TargetNode::str);
  refl::GlobalDef()
      .def("tessel.target.Target", [](const String& text) { return Target::Parse(text); })
      .def("tessel.target.TargetKinds", []() {
        tvm::ffi::Array<String> out;
        for (const String& k : TargetKinds()) out.push_back(k);
        return out;
      });
}

}  // namespace target
}  // namespace tessel
