// Parsing of the rewrite DSL and the compiled, per-operator rule table.
#include "arith/rewrite/rule_table.h"

#include <tessel/ir/parser.h>
#include <tvm/ffi/error.h>

#include <sstream>
#include <string>
#include <utility>

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

const char* const kHoleNames[rewrite::kNumHoles] = {"x", "y", "z", "w", "p", "q", "c1", "c2", "c3"};

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// "…/src/arith/rewrite/rules_add.cc" -> "src/arith/rewrite/rules_add.cc".
std::string ShortFile(const std::string& file) {
  size_t pos = file.rfind("src/");
  return pos == std::string::npos ? file : file.substr(pos);
}

[[noreturn]] void Fail(const std::string& file, int line, const std::string& msg) {
  TVM_FFI_THROW(ValueError) << file << ":" << line << ": malformed rewrite rule: " << msg;
}

int HoleOf(const VarNode* v) {
  for (int i = 0; i < rewrite::kNumHoles; ++i) {
    if (v->name_hint == kHoleNames[i]) return i;
  }
  return -1;
}

// Flattens e into p's nodes; returns the index of e's node. `holes` collects the holes used.
int32_t Compile(const PrimExpr& e, rewrite::Pattern* p, unsigned* holes, const std::string& file,
                int line) {
  rewrite::PatNode n;
  n.kind = KindOf(e.get());
  std::vector<PrimExpr> kids;
  switch (n.kind) {
    case ExprKind::kVar: {
      n.hole = static_cast<int8_t>(HoleOf(e.as<VarNode>()));
      if (n.hole < 0) Fail(file, line, "unknown hole " + std::string(e.as<VarNode>()->name_hint));
      *holes |= 1u << n.hole;
      n.constant = rewrite::IsConstHole(n.hole);
      if (n.constant) n.const_hole = n.hole;
      break;
    }
    case ExprKind::kIntImm:
      n.value = e.as<IntImmNode>()->value;
      n.bool_literal = e.dtype().is_bool();
      n.constant = true;
      break;
#define TESSEL_X(Name)                                        \
  case ExprKind::k##Name: {                                   \
    const auto* op = static_cast<const Name##Node*>(e.get()); \
    kids = {op->a, op->b};                                    \
    break;                                                    \
  }
      TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
      TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
      TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
    case ExprKind::kNot:
      kids = {e.as<NotNode>()->a};
      break;
    case ExprKind::kSelect: {
      const auto* op = e.as<SelectNode>();
      kids = {op->condition, op->true_value, op->false_value};
      break;
    }
    default:
      Fail(file, line, std::string("unsupported node ") + e->GetTypeKey() + " in a pattern");
  }
  if (!kids.empty()) {
    n.constant = true;
    for (size_t i = 0; i < kids.size(); ++i) {
      n.kid[i] = Compile(kids[i], p, holes, file, line);
      const rewrite::PatNode& k = p->nodes[n.kid[i]];
      n.constant = n.constant && k.constant;
      if (n.const_hole < 0) n.const_hole = k.const_hole;
    }
    n.num_kids = static_cast<int>(kids.size());
  }
  p->nodes.push_back(n);
  return static_cast<int32_t>(p->nodes.size() - 1);
}

rewrite::Pattern CompileSide(const std::string& text, const std::string& what,
                             const std::string& file, int line, unsigned* holes) {
  rewrite::Pattern p;
  if (text.empty()) return p;
  PrimExpr e;
  try {
    e = ParseExpr(text, RewriteHoleVars(DataType::Int(32)), file + ":" + std::to_string(line));
  } catch (const tvm::ffi::Error& err) {
    Fail(file, line, "cannot parse the " + what + " '" + text + "': " + err.message());
  }
  p.root = Compile(e, &p, holes, file, line);
  return p;
}

struct Parsed {
  RewriteRuleInfo info;
  rewrite::Pattern before, after, cond;
};

std::vector<Parsed> ParseAll(const std::string& file_in, int first_line, const std::string& text) {
  std::string file = ShortFile(file_in);
  std::vector<Parsed> out;
  std::istringstream in(text);
  std::string raw;
  for (int line = first_line; std::getline(in, raw); ++line) {
    std::string s = Trim(raw);
    if (s.empty() || s[0] == '#') continue;
    Parsed r;
    r.info.file = file;
    r.info.line = line;
    const std::string kWrap = "[wrap]";
    if (s.size() >= kWrap.size() && s.compare(s.size() - kWrap.size(), kWrap.size(), kWrap) == 0) {
      r.info.wrap = true;
      s = Trim(s.substr(0, s.size() - kWrap.size()));
    }
    if (s.find('[') != std::string::npos) Fail(file, line, "unknown tag (only [wrap] exists)");
    size_t arrow = s.find("->");
    if (arrow == std::string::npos) Fail(file, line, "expected 'before -> after'");
    if (s.find("->", arrow + 2) != std::string::npos) Fail(file, line, "more than one '->'");
    r.info.before = Trim(s.substr(0, arrow));
    std::string rest = Trim(s.substr(arrow + 2));
    size_t cond = rest.find(" if ");
    r.info.after = Trim(rest.substr(0, cond));
    if (cond != std::string::npos) {
      r.info.condition = Trim(rest.substr(cond + 4));
      if (r.info.condition.empty()) Fail(file, line, "empty condition after 'if'");
    }
    if (r.info.before.empty() || r.info.after.empty()) Fail(file, line, "empty side");
    unsigned before_holes = 0, other_holes = 0;
    r.before = CompileSide(r.info.before, "pattern", file, line, &before_holes);
    r.after = CompileSide(r.info.after, "result", file, line, &other_holes);
    r.cond = CompileSide(r.info.condition, "condition", file, line, &other_holes);
    const rewrite::PatNode& root = r.before[r.before.root];
    if (root.kind == ExprKind::kVar || root.kind == ExprKind::kIntImm) {
      Fail(file, line, "the pattern must start with an operator");
    }
    if (other_holes & ~before_holes) {
      Fail(file, line, "the result or condition uses a hole the pattern does not bind");
    }
    if (r.cond.defined() && !r.cond[r.cond.root].bool_literal &&
        r.cond[r.cond.root].kind == ExprKind::kIntImm) {
      Fail(file, line, "the condition is an integer");
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Map<String, Any> RewriteHoleVars(DataType int_type) {
  Map<String, Any> vars;
  for (int i = 0; i < rewrite::kNumHoles; ++i) {
    bool is_bool = i == rewrite::kP || i == rewrite::kQ;
    vars.Set(kHoleNames[i], Var(kHoleNames[i], is_bool ? DataType::Bool() : int_type));
  }
  return vars;
}

std::vector<RewriteRuleInfo> ParseRewriteRules(const std::string& file, int first_line,
                                               const std::string& text) {
  std::vector<RewriteRuleInfo> infos;
  for (Parsed& p : ParseAll(file, first_line, text)) infos.push_back(std::move(p.info));
  return infos;
}

namespace rewrite {

namespace {

void BuildCandidates(RuleTable* t) {
  for (const CompiledRule& r : t->rules) {
    for (ExprKind want : r.kid_kind) {
      int w = static_cast<int>(want);
      if (want == ExprKind::kUnknown || want == ExprKind::kIntImm || t->kid_class[w] != 0) continue;
      t->kid_class[w] = t->num_classes++;
    }
  }
  for (uint8_t& c : t->imm_class) c = t->num_classes++;
  t->kid_class[static_cast<int>(ExprKind::kIntImm)] = t->imm_class[3];
  const int c = t->num_classes;
  // Whether operand j of rule r can be of class cls.
  auto accepts = [t](const CompiledRule& r, int j, int cls) {
    ExprKind want = r.kid_kind[j];
    if (want == ExprKind::kUnknown) return true;
    if (want != ExprKind::kIntImm) return t->kid_class[static_cast<int>(want)] == cls;
    const PatNode& kid = r.before[r.before[r.before.root].kid[j]];
    if (kid.kind != ExprKind::kIntImm) {  // a constant hole: any value
      for (uint8_t ic : t->imm_class) {
        if (ic == cls) return true;
      }
      return false;
    }
    return t->imm_class[RuleTable::ImmSlot(kid.value)] == cls;
  };
  t->candidate_begin.reserve(static_cast<size_t>(kNumExprKinds) * c * c + 1);
  for (int root = 0; root < kNumExprKinds; ++root) {
    for (int c0 = 0; c0 < c; ++c0) {
      for (int c1 = 0; c1 < c; ++c1) {
        t->candidate_begin.push_back(static_cast<uint32_t>(t->candidates.size()));
        for (const CompiledRule* r : t->by_kind[root]) {
          if (accepts(*r, 0, c0) && accepts(*r, 1, c1)) t->candidates.push_back(r);
        }
      }
    }
  }
  t->candidate_begin.push_back(static_cast<uint32_t>(t->candidates.size()));
}

}  // namespace

const RuleTable& GetRuleTable() {
  static const RuleTable* table = [] {
    auto* t = new RuleTable();
    std::vector<Parsed> all;
    for (RuleSource (*source)() : {AddRules, SubRules, MulRules, DivRules, ModRules, MinMaxRules,
                                   CmpRules, LogicalRules, SelectRules}) {
      RuleSource s = source();
      for (Parsed& p : ParseAll(s.file, s.line, s.text)) all.push_back(std::move(p));
    }
    // infos must not move once rules point into it.
    t->infos.reserve(all.size());
    for (Parsed& p : all) t->infos.push_back(p.info);
    for (size_t i = 0; i < all.size(); ++i) {
      t->rules.push_back({&t->infos[i], std::move(all[i].before), std::move(all[i].after),
                          std::move(all[i].cond)});
    }
    for (CompiledRule& r : t->rules) {
      const PatNode& root = r.before[r.before.root];
      for (int j = 0; j < root.num_kids; ++j) {
        const PatNode& kid = r.before[root.kid[j]];
        if (kid.kind != ExprKind::kVar) {
          r.kid_kind[j] = kid.kind;
        } else if (IsConstHole(kid.hole)) {
          r.kid_kind[j] = ExprKind::kIntImm;
        }
      }
    }
    for (const CompiledRule& r : t->rules) {
      t->by_kind[static_cast<int>(r.before[r.before.root].kind)].push_back(&r);
    }
    BuildCandidates(t);
    return t;
  }();
  return *table;
}

}  // namespace rewrite

const std::vector<RewriteRuleInfo>& RewriteRules() { return rewrite::GetRuleTable().infos; }

}  // namespace arith
}  // namespace tessel
