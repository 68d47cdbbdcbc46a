// Option parsing and analyzer set-up shared by the analyzer commands (arith_options.h).
#include "arith_options.h"

#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <cctype>
#include <iostream>
#include <utility>

#include "command.h"

namespace tessel {
namespace tools {

using ir::DataType;
using ir::PrimExpr;
using ir::Var;

namespace {

constexpr char kUnknownName[] = "error: unknown name '";

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The value converted to var's dtype: constants are re-made in it, other expressions cast (a
// widening cast keeps every value; a narrowing one is what the user asked for).
PrimExpr ToDtype(const PrimExpr& value, DataType dtype) {
  if (value.dtype() == dtype) return value;
  if (auto c = ir::AsConstInt(value)) return ir::MakeConst(dtype, *c);
  return ir::cast(dtype, value);
}

struct RawBind {
  std::string name, rhs;
};

}  // namespace

ArithSession::ArithSession() : analyzer_(std::make_unique<arith::Analyzer>()) {}

ArithSession::~ArithSession() {
  while (!scopes_.empty()) scopes_.pop_back();
}

bool ArithSession::Parse(const std::string& text, const std::string& source_name, PrimExpr* out) {
  // The parser knows only the names it is given: each "unknown name" error declares one more
  // int32 variable, so this ends after at most one retry per distinct name.
  while (true) {
    tvm::ffi::Map<tvm::ffi::String, tvm::ffi::Any> table;
    for (const auto& [name, var] : vars_) table.Set(name, var);
    try {
      *out = ir::ParseExpr(text, table, source_name);
      return true;
    } catch (const tvm::ffi::Error& e) {
      std::string msg = e.message();
      size_t at = msg.find(kUnknownName);
      if (at != std::string::npos) {
        size_t begin = at + sizeof(kUnknownName) - 1;
        size_t end = msg.find('\'', begin);
        std::string name = msg.substr(begin, end == std::string::npos ? 0 : end - begin);
        if (IsIdentifier(name) && !vars_.count(name)) {
          vars_.emplace(name, Var(name, DataType::Int(32)));
          continue;
        }
      }
      std::cerr << msg << (msg.empty() || msg.back() != '\n' ? "\n" : "");
      return false;
    }
  }
}

int ArithSession::Init(const std::string& cmd, const char* usage,
                       const std::vector<std::string>& args) {
  cmd_ = cmd;
  const std::string who = "tessel " + cmd + ": ";
  auto usage_error = [&](const std::string& msg) {
    std::cerr << who << msg << "\n\n" << usage;
    return kExitUsage;
  };

  std::vector<std::pair<std::string, std::string>> decls;  // name, dtype text
  std::vector<RawBind> binds;
  std::vector<std::string> assumes;
  std::string text;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.rfind("--", 0) != 0) {
      text += (text.empty() ? "" : " ") + a;
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "--assume-no-overflow") {
      // Set before anything is bound (Analyzer::SetAssumeNoOverflow requires it).
      analyzer_->SetAssumeNoOverflow(true);
      continue;
    }
    std::string opt = a, value;
    bool has_value = false;
    if (size_t eq = a.find('='); eq != std::string::npos) {
      opt = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    if (opt != "--var" && opt != "--bind" && opt != "--assume") {
      return usage_error("unknown option '" + opt + "'");
    }
    if (!has_value) {
      if (i + 1 >= args.size()) return usage_error(opt + " needs a value");
      value = args[++i];
    }
    if (opt == "--var") {
      size_t colon = value.find(':');
      std::string name = Trim(value.substr(0, colon));
      if (colon == std::string::npos || !IsIdentifier(name)) {
        return usage_error("--var expects NAME:DTYPE, as in --var n:int64; got '" + value + "'");
      }
      decls.emplace_back(name, Trim(value.substr(colon + 1)));
    } else if (opt == "--bind") {
      size_t eq = value.find('=');
      std::string name = Trim(value.substr(0, eq));
      if (eq == std::string::npos || !IsIdentifier(name) || Trim(value.substr(eq + 1)).empty()) {
        return usage_error("--bind expects NAME=LO:HI or NAME=VALUE, as in --bind i=0:16; got '" +
                           value + "'");
      }
      binds.push_back({name, value.substr(eq + 1)});
    } else {
      if (Trim(value).empty()) return usage_error("--assume needs a condition");
      assumes.push_back(value);
    }
  }
  if (Trim(text).empty()) return usage_error("no expression given");

  for (const auto& [name, dtype_text] : decls) {
    std::optional<DataType> dtype = DataType::Parse(dtype_text);
    if (!dtype || !dtype->is_scalar() || !(dtype->is_int_or_uint() || dtype->is_bool())) {
      return usage_error("--var " + name + ": '" + dtype_text +
                         "' is not a scalar integer or bool dtype (int8..int64, uint8..uint64, "
                         "bool)");
    }
    auto it = vars_.find(name);
    if (it != vars_.end() && it->second.dtype() != *dtype) {
      return usage_error("--var " + name + " is declared twice with different dtypes");
    }
    vars_.emplace(name, Var(name, *dtype));
  }

  try {
    for (const RawBind& b : binds) {
      if (!vars_.count(b.name)) vars_.emplace(b.name, Var(b.name, DataType::Int(32)));
      const Var& var = vars_.at(b.name);
      const std::string source = "--bind " + b.name;
      size_t colon = b.rhs.find(':');
      if (colon == std::string::npos) {
        PrimExpr value;
        if (!Parse(b.rhs, source, &value)) return kExitFailure;
        analyzer_->Bind(var, ToDtype(value, var.dtype()));
        continue;
      }
      std::string lo_text = b.rhs.substr(0, colon), hi_text = b.rhs.substr(colon + 1);
      if (Trim(lo_text).empty() || Trim(hi_text).empty()) {
        return usage_error("--bind " + b.name + ": a range is LO:HI with both ends, got '" + b.rhs +
                           "'");
      }
      PrimExpr lo, hi;
      if (!Parse(lo_text, source + " (low end)", &lo)) return kExitFailure;
      if (!Parse(hi_text, source + " (high end)", &hi)) return kExitFailure;
      lo = ToDtype(lo, var.dtype());
      hi = ToDtype(hi, var.dtype());
      auto clo = ir::AsConstInt(lo), chi = ir::AsConstInt(hi);
      if (clo && chi && *chi <= *clo) {
        return usage_error("--bind " + b.name + "=" + b.rhs + " is an empty range (HI <= LO)");
      }
      analyzer_->Bind(var, ir::Range(lo, ir::sub(hi, lo)));
    }
    for (size_t i = 0; i < assumes.size(); ++i) {
      PrimExpr cond;
      if (!Parse(assumes[i], "--assume", &cond)) return kExitFailure;
      if (!cond.dtype().is_bool() || !cond.dtype().is_scalar()) {
        std::cerr << who << "--assume '" << assumes[i] << "' is not a condition (its dtype is "
                  << cond.dtype() << ")\n";
        return kExitFailure;
      }
      assumptions_.push_back(cond);
      scopes_.push_back(std::make_unique<arith::ConstraintScope>(analyzer_.get(), cond));
    }
    if (!Parse(text, "<expr>", &expr_)) return kExitFailure;
  } catch (const tvm::ffi::Error& e) {
    std::cerr << who << e.kind() << ": " << e.message() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tools
}  // namespace tessel
