// A reference interpreter of statements for the lowering passes' semantic tests: it runs a
// PrimFunc, blocks included, straight from the IR's definitions (a block binds its iteration
// variables, runs its init when every reduce variable is at its domain min, allocates its
// buffers; a matched buffer's element k is the source region's element min + k), so a function
// before and after lowering can be run on the same inputs and their outputs compared.
//
// Values are doubles per lane (integers exact below 2^53); a store rounds to the buffer's dtype.
// What it does not model (thread bindings, intrinsics outside a small math set, strings ...)
// throws Unsupported, and a caller skips that function. Memory is bounds-checked per buffer
// allocation: an access outside throws OutOfBounds.
#ifndef TESSEL_TESTS_CPP_TRANSFORM_STMT_INTERP_H_
#define TESSEL_TESTS_CPP_TRANSFORM_STMT_INTERP_H_

#include <tessel/ir/function.h>
#include <tessel/ir/op.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tessel {
namespace testing {

struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct OutOfBounds : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class StmtInterp {
 public:
  using Value = std::vector<double>;
  // Memory blocks by id; a data variable maps to one.
  std::vector<std::vector<double>> memory;
  // Statements executed before giving up (Unsupported): keeps big examples out.
  int64_t budget = 3000000;

  // Binds `var` (a scalar) for the whole run.
  void Bind(const ir::Var& var, double v) { env_[var.get()] = {v}; }
  // Binds a handle to a fresh memory block of n elements filled by `fill(i)`; returns its id.
  template <typename F>
  int BindMemory(const ir::Var& data, int64_t n, F fill) {
    // An example whose shapes bound to small values still make gigabytes is skipped like one too
    // long to run: the allocation failed with bad_alloc, but AddressSanitizer aborts instead.
    if (n > (int64_t{1} << 24)) throw Unsupported("buffer of more than 2^24 elements");
    memory.emplace_back(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) memory.back()[i] = fill(i);
    int id = static_cast<int>(memory.size()) - 1;
    mem_of_[data.get()] = id;
    return id;
  }
  double Scalar(const ir::PrimExpr& e) {
    Value v = Eval(e);
    if (v.size() != 1) throw Unsupported("vector where a scalar is expected");
    return v[0];
  }

  void Exec(const ir::Stmt& s) {
    using namespace ir;  // NOLINT(build/namespaces)
    if (--budget < 0) throw Unsupported("statement budget spent");
    if (const auto* op = s.as<SeqStmtNode>()) {
      for (const Stmt& x : op->seq) Exec(x);
    } else if (const auto* op = s.as<BufferStoreNode>()) {
      Value v = Eval(op->value);
      std::vector<int64_t> addr = Addresses(op->buffer, op->indices, v.size());
      auto& mem = memory[MemOf(op->buffer)];
      for (size_t l = 0; l < addr.size(); ++l) {
        mem[Check(mem, addr[l])] = Round(op->buffer->dtype, v.size() == 1 ? v[0] : v[l]);
      }
    } else if (const auto* op = s.as<ForNode>()) {
      if (op->kind == ForKind::kThreadBinding) throw Unsupported("thread binding");
      int64_t mn = Int(op->min), ext = Int(op->extent);
      for (int64_t i = mn; i < mn + ext; ++i) {
        env_[op->loop_var.get()] = {static_cast<double>(i)};
        Exec(op->body);
      }
    } else if (const auto* op = s.as<IfThenElseNode>()) {
      if (Scalar(op->condition) != 0) {
        Exec(op->then_case);
      } else if (op->else_case) {
        Exec(*op->else_case);
      }
    } else if (const auto* op = s.as<LetStmtNode>()) {
      env_[op->var.get()] = Eval(op->value);
      Exec(op->body);
    } else if (const auto* op = s.as<AllocateNode>()) {
      int64_t n = 1;
      for (const PrimExpr& e : op->extents) n *= Int(e);
      BindMemory(op->buffer_var, n, [](int64_t) { return 0.0; });
      Exec(op->body);
    } else if (const auto* op = s.as<DeclBufferNode>()) {
      Exec(op->body);
    } else if (const auto* op = s.as<AttrStmtNode>()) {
      if (op->attr_key == "thread_extent" || op->attr_key == "virtual_thread") {
        throw Unsupported("thread extent");
      }
      Exec(op->body);
    } else if (const auto* op = s.as<AssertStmtNode>()) {
      if (Scalar(op->condition) == 0) throw Unsupported("assert failed");
      Exec(op->body);
    } else if (const auto* op = s.as<EvaluateNode>()) {
      if (!op->value.as<IntImmNode>()) throw Unsupported("evaluate of a call");
    } else if (const auto* op = s.as<BlockRealizeNode>()) {
      ExecBlock(op);
    } else {
      throw Unsupported(std::string("statement ") + s->GetTypeKey());
    }
  }

  Value Eval(const ir::PrimExpr& e) {
    using namespace ir;  // NOLINT(build/namespaces)
    if (const auto* op = e.as<IntImmNode>()) return {static_cast<double>(op->value)};
    if (const auto* op = e.as<FloatImmNode>()) return {op->value};
    if (const auto* op = e.as<VarNode>()) {
      auto it = env_.find(op);
      if (it == env_.end()) throw Unsupported("unbound variable " + std::string(op->name_hint));
      return it->second;
    }
    if (const auto* op = e.as<CastNode>()) {
      Value v = Eval(op->value);
      for (double& x : v) x = Round(op->dtype, x);
      return v;
    }
    bool is_float = e.dtype().is_float();
#define TESSEL_BIN(Node, expr)                                                        \
  if (const auto* op = e.as<Node>()) {                                                \
    return Lanes(Eval(op->a), Eval(op->b), [&](double a, double b) { return expr; }); \
  }
    TESSEL_BIN(AddNode, a + b)
    TESSEL_BIN(SubNode, a - b)
    TESSEL_BIN(MulNode, a * b)
    TESSEL_BIN(DivNode, is_float ? a / b : std::trunc(a / NonZero(b)))
    TESSEL_BIN(ModNode, std::fmod(a, NonZero(b)))
    TESSEL_BIN(FloorDivNode, is_float ? std::floor(a / b) : std::floor(a / NonZero(b)))
    TESSEL_BIN(FloorModNode, a - std::floor(a / NonZero(b)) * b)
    TESSEL_BIN(MinNode, a < b ? a : b)
    TESSEL_BIN(MaxNode, a > b ? a : b)
    TESSEL_BIN(EQNode, a == b)
    TESSEL_BIN(NENode, a != b)
    TESSEL_BIN(LTNode, a < b)
    TESSEL_BIN(LENode, a <= b)
    TESSEL_BIN(GTNode, a > b)
    TESSEL_BIN(GENode, a >= b)
    TESSEL_BIN(AndNode, (a != 0) && (b != 0))
    TESSEL_BIN(OrNode, (a != 0) || (b != 0))
#undef TESSEL_BIN
    if (const auto* op = e.as<NotNode>()) {
      Value v = Eval(op->a);
      for (double& x : v) x = x == 0;
      return v;
    }
    if (const auto* op = e.as<SelectNode>()) {
      Value c = Eval(op->condition), t = Eval(op->true_value), f = Eval(op->false_value);
      size_t n = std::max({c.size(), t.size(), f.size()});
      Value out(n);
      for (size_t l = 0; l < n; ++l) out[l] = Lane(c, l) != 0 ? Lane(t, l) : Lane(f, l);
      return out;
    }
    if (const auto* op = e.as<RampNode>()) {
      double b = Scalar(op->base), st = Scalar(op->stride);
      Value out(op->lanes);
      for (int64_t l = 0; l < op->lanes; ++l) out[l] = b + l * st;
      return out;
    }
    if (const auto* op = e.as<BroadcastNode>()) return Value(op->lanes, Scalar(op->value));
    if (const auto* op = e.as<LetNode>()) {
      env_[op->var.get()] = Eval(op->value);
      return Eval(op->body);
    }
    if (const auto* op = e.as<BufferLoadNode>()) {
      std::vector<int64_t> addr = Addresses(op->buffer, op->indices, e.dtype().lanes());
      const auto& mem = memory[MemOf(op->buffer)];
      Value out(addr.size());
      for (size_t l = 0; l < addr.size(); ++l) out[l] = mem[Check(mem, addr[l])];
      return out;
    }
    if (const auto* op = e.as<CallNode>()) return EvalCall(op);
    throw Unsupported(std::string("expression ") + e->GetTypeKey());
  }

 private:
  struct Match {
    ir::Buffer source;
    std::vector<int64_t> mins;
  };

  void ExecBlock(const ir::BlockRealizeNode* realize) {
    using namespace ir;  // NOLINT(build/namespaces)
    if (Scalar(realize->predicate) == 0) return;
    const BlockNode* block = realize->block.get();
    bool at_init = true;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      double v = Scalar(realize->iter_values[i]);
      if (iv->iter_type == IterVarType::kCommReduce && v != Scalar(iv->dom->min)) at_init = false;
      env_[iv->var.get()] = {v};
    }
    for (const Buffer& b : block->alloc_buffers) {
      int64_t n = 1;
      for (const PrimExpr& e : b->shape) n *= Int(e);
      BindMemory(b->data, n, [](int64_t) { return 0.0; });
    }
    for (const MatchBufferRegion& m : block->match_buffers) {
      Match match;
      std::vector<int64_t> mins;
      for (const Range& r : m->source->region) mins.push_back(Int(r->min));
      auto outer = match_.find(m->source->buffer.get());
      if (outer != match_.end()) {
        match.source = outer->second.source;
        size_t lead = outer->second.mins.size() - mins.size();
        match.mins = outer->second.mins;
        for (size_t k = 0; k < mins.size(); ++k) match.mins[lead + k] += mins[k];
      } else {
        match.source = m->source->buffer;
        match.mins = mins;
      }
      match_[m->buffer.get()] = match;
      // The matched buffer's own symbols (shape, strides, offset) as the region gives them.
      const Buffer& mb = m->buffer;
      size_t rank = mb->shape.size(), local = m->source->region.size();
      std::vector<int64_t> src_strides = StridesIn(match.source);
      int64_t offset = Int(match.source->elem_offset);
      for (size_t k = 0; k < match.mins.size(); ++k) offset += match.mins[k] * src_strides[k];
      auto bind = [&](const PrimExpr& field, int64_t v) {
        // A symbol the match binds takes this instance's value; any other is a constraint.
        if (const auto* var = field.as<VarNode>()) {
          if (!env_.count(var) || match_vars_.count(var)) {
            env_[var] = {static_cast<double>(v)};
            match_vars_.insert(var);
          }
        }
      };
      for (size_t k = 0; k < rank; ++k) {
        bind(mb->shape[k], Int(m->source->region[local - rank + k]->extent));
      }
      for (size_t k = 0; k < mb->strides.size(); ++k) {
        bind(mb->strides[k], src_strides[src_strides.size() - rank + k]);
      }
      bind(mb->elem_offset, offset);
    }
    if (block->init && at_init) Exec(*block->init);
    Exec(block->body);
  }

  Value EvalCall(const ir::CallNode* op) {
    const auto* fn = op->op.as<ir::OpNode>();
    if (!fn) throw Unsupported("call of a global function");
    std::string name = fn->name;
    if (name == "if_then_else") {
      return Scalar(op->args[0]) != 0 ? Eval(op->args[1]) : Eval(op->args[2]);
    }
    if (name == "likely") return Eval(op->args[0]);
    std::vector<Value> args;
    for (const ir::PrimExpr& a : op->args) args.push_back(Eval(a));
    auto unary = [&](double (*f)(double)) {
      Value v = args.at(0);
      for (double& x : v) x = Round(op->dtype, f(x));
      return v;
    };
    if (name == "exp") return unary([](double x) { return std::exp(x); });
    if (name == "log") return unary([](double x) { return std::log(x); });
    if (name == "sqrt") return unary([](double x) { return std::sqrt(x); });
    if (name == "rsqrt") return unary([](double x) { return 1.0 / std::sqrt(x); });
    if (name == "tanh") return unary([](double x) { return std::tanh(x); });
    if (name == "sigmoid") return unary([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    if (name == "fabs" || name == "abs") return unary([](double x) { return std::fabs(x); });
    if (name == "floor") return unary([](double x) { return std::floor(x); });
    if (name == "round") return unary([](double x) { return std::nearbyint(x); });
    auto binary = [&](int64_t (*f)(int64_t, int64_t)) {
      Value out(std::max(args.at(0).size(), args.at(1).size()));
      for (size_t l = 0; l < out.size(); ++l) {
        out[l] = Round(op->dtype, static_cast<double>(f(static_cast<int64_t>(Lane(args[0], l)),
                                                        static_cast<int64_t>(Lane(args[1], l)))));
      }
      return out;
    };
    if (name == "shift_left") return binary([](int64_t a, int64_t b) { return a << b; });
    if (name == "shift_right") return binary([](int64_t a, int64_t b) { return a >> b; });
    if (name == "bitwise_and") return binary([](int64_t a, int64_t b) { return a & b; });
    if (name == "bitwise_or") return binary([](int64_t a, int64_t b) { return a | b; });
    if (name == "bitwise_xor") return binary([](int64_t a, int64_t b) { return a ^ b; });
    if (name == "bitwise_not") {
      return unary([](double x) { return static_cast<double>(~static_cast<int64_t>(x)); });
    }
    if (name == "isnan") return unary([](double x) { return std::isnan(x) ? 1.0 : 0.0; });
    if (name == "isinf") return unary([](double x) { return std::isinf(x) ? 1.0 : 0.0; });
    throw Unsupported("call of " + name);
  }

  // The memory block of a buffer's data (a matched buffer's is its source's).
  int MemOf(const ir::Buffer& b) {
    auto m = match_.find(b.get());
    if (m != match_.end()) return MemOf(m->second.source);
    auto it = mem_of_.find(b->data.get());
    if (it == mem_of_.end()) throw Unsupported("buffer " + std::string(b->name) + " has no memory");
    return it->second;
  }

  // Element addresses of an access (one per lane of a vector last index).
  std::vector<int64_t> Addresses(const ir::Buffer& buf, const ir::Array<ir::PrimExpr>& indices,
                                 size_t lanes) {
    std::vector<Value> idx;
    for (const ir::PrimExpr& i : indices) idx.push_back(Eval(i));
    auto m = match_.find(buf.get());
    if (m != match_.end()) {
      const Match& match = m->second;
      size_t lead = match.mins.size() - idx.size();
      std::vector<Value> full;
      for (size_t k = 0; k < match.mins.size(); ++k) {
        Value v = k < lead ? Value{0.0} : idx[k - lead];
        for (double& x : v) x += match.mins[k];
        full.push_back(v);
      }
      return AddressesIn(match.source, full, lanes);
    }
    return AddressesIn(buf, idx, lanes);
  }

  std::vector<int64_t> AddressesIn(const ir::Buffer& buf, const std::vector<Value>& idx,
                                   size_t lanes) {
    size_t n = idx.size();
    std::vector<int64_t> strides = StridesIn(buf);
    int64_t base = Int(buf->elem_offset);
    std::vector<int64_t> out(lanes);
    for (size_t l = 0; l < lanes; ++l) {
      int64_t a = base;
      for (size_t k = 0; k < n; ++k) a += static_cast<int64_t>(Lane(idx[k], l)) * strides[k];
      out[l] = a;
    }
    return out;
  }

  std::vector<int64_t> StridesIn(const ir::Buffer& buf) {
    size_t n = buf->shape.size();
    std::vector<int64_t> strides(n);
    int64_t acc = 1;
    for (size_t k = n; k-- > 0;) {
      strides[k] = buf->strides.empty() ? acc : Int(buf->strides[k]);
      acc *= Int(buf->shape[k]);
    }
    return strides;
  }

  static size_t Check(const std::vector<double>& mem, int64_t a) {
    if (a < 0 || a >= static_cast<int64_t>(mem.size())) {
      throw OutOfBounds("address " + std::to_string(a) + " outside " + std::to_string(mem.size()) +
                        " elements");
    }
    return static_cast<size_t>(a);
  }

  int64_t Int(const ir::PrimExpr& e) { return static_cast<int64_t>(Scalar(e)); }

  static double Lane(const Value& v, size_t l) { return v.size() == 1 ? v[0] : v.at(l); }

  template <typename F>
  static Value Lanes(const Value& a, const Value& b, F f) {
    size_t n = std::max(a.size(), b.size());
    Value out(n);
    for (size_t l = 0; l < n; ++l) out[l] = f(Lane(a, l), Lane(b, l));
    return out;
  }

  static double NonZero(double b) {
    if (b == 0) throw Unsupported("division by zero");
    return b;
  }

  static double Round(ir::DataType t, double v) {
    if (t.is_float() && t.bits() == 32) return static_cast<float>(v);
    if (t.is_float()) return v;
    if (t.is_bool()) return v != 0;
    if (t.is_int() || t.is_uint()) {
      double r = std::trunc(v);
      if (t.bits() < 53) {
        double m = std::ldexp(1.0, t.bits());
        r = std::fmod(r, m);
        if (r < 0) r += m;
        if (t.is_int() && r >= m / 2) r -= m;
      }
      return r;
    }
    throw Unsupported("dtype of a store");
  }

  std::unordered_map<const ir::VarNode*, Value> env_;
  std::unordered_map<const ir::VarNode*, int> mem_of_;
  std::unordered_map<const ir::BufferNode*, Match> match_;
  std::unordered_set<const ir::VarNode*> match_vars_;
};

}  // namespace testing
}  // namespace tessel

#endif  // TESSEL_TESTS_CPP_TRANSFORM_STMT_INTERP_H_
