// Tile layouts (include/tessel/tile/layout.h): construction, the named layouts of the Hopper and
// Ampere matrix units, composition by distributing and repeating, and exact checks by enumeration.
#include <tessel/arith/analyzer.h>
#include <tessel/arith/int_eval.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tessel/ir/substitute.h>
#include <tessel/tile/layout.h>
#include <tessel/transform/swizzle_layout.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/reflection/registry.h>

#include <functional>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace tessel {
namespace tile {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// Enumeration visits at most this many (point, replica) pairs: 2^22, a 2048 x 2048 tile.
constexpr int64_t kMaxPoints = int64_t{1} << 22;

Array<Var> IndexVars(size_t rank) {
  Array<Var> vars;
  for (size_t d = 0; d < rank; ++d) vars.push_back(Var("i" + std::to_string(d)));
  return vars;
}

int64_t Points(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) {
    if (e <= 0) TVM_FFI_THROW(ValueError) << "tile layout: extent " << e << " (must be positive)";
    if (n > kMaxPoints / e) return kMaxPoints + 1;
    n *= e;
  }
  return n;
}

// Calls fn with every point of shape, row-major.
void ForEachPoint(const std::vector<int64_t>& shape,
                  const std::function<void(const std::vector<int64_t>&)>& fn) {
  std::vector<int64_t> p(shape.size(), 0);
  int64_t n = Points(shape);
  for (int64_t k = 0; k < n; ++k) {
    fn(p);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++p[d] < shape[d]) break;
      p[d] = 0;
    }
  }
}

std::string PointText(const std::vector<int64_t>& p) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < p.size(); ++i) os << (i ? ", " : "") << p[i];
  os << ")";
  return os.str();
}

int64_t Eval(const PrimExpr& e, const std::unordered_map<const VarNode*, int64_t>& env,
             const char* what) {
  auto v = arith::EvalInt(e, env);
  if (!v) {
    TVM_FFI_THROW(ValueError) << "tile layout: cannot evaluate " << what << " " << AsText(e)
                              << " (only integer arithmetic on the index variables)";
  }
  return *v;
}

std::unordered_map<const VarNode*, int64_t> Env(const Array<Var>& vars,
                                                const std::vector<int64_t>& point) {
  if (point.size() != vars.size()) {
    TVM_FFI_THROW(ValueError) << "tile layout: a point of rank " << point.size() << " for rank "
                              << vars.size();
  }
  std::unordered_map<const VarNode*, int64_t> env;
  for (size_t d = 0; d < vars.size(); ++d) env[vars[d].get()] = point[d];
  return env;
}

Fragment Reshaped(const Fragment& f, int dim, int64_t times, bool threads) {
  if (dim < 0 || static_cast<size_t>(dim) >= f->shape.size() || times < 1) {
    TVM_FFI_THROW(ValueError) << "tile layout: dimension " << dim << " and factor " << times
                              << " for a fragment of rank " << f->shape.size();
  }
  int64_t extent = f->shape[dim];
  std::vector<int64_t> shape = f->shape;
  shape[dim] *= times;
  Array<Var> vars = IndexVars(shape.size());
  // The inner fragment sees index dim modulo its extent; the copy is index / extent.
  PrimExpr inner_dim = floormod(vars[dim], Int32(extent));
  PrimExpr copy = floordiv(vars[dim], Int32(extent));
  VarMap sub;
  for (size_t d = 0; d < shape.size(); ++d) {
    sub[f->vars[d].get()] = static_cast<int>(d) == dim ? inner_dim : PrimExpr(vars[d]);
  }
  PrimExpr thread = Substitute(f->thread, sub), local = Substitute(f->local, sub);
  arith::Analyzer ana;
  if (threads) {
    thread = ana.Simplify(add(thread, mul(copy, Int32(f->threads))));
    return Fragment(vars, shape, f->rep, f->replicate, thread, ana.Simplify(local),
                    f->threads * times, f->locals);
  }
  local = ana.Simplify(add(local, mul(copy, Int32(f->locals))));
  return Fragment(vars, shape, f->rep, f->replicate, ana.Simplify(thread), local, f->threads,
                  f->locals * times);
}

}  // namespace

Layout::Layout(Array<Var> vars, std::vector<int64_t> shape, Array<PrimExpr> index) {
  if (vars.size() != shape.size()) {
    TVM_FFI_THROW(ValueError) << "tile Layout: " << vars.size() << " index variables for a shape of"
                              << " rank " << shape.size();
  }
  Points(shape);
  auto n = tvm::ffi::make_object<LayoutNode>();
  n->vars = std::move(vars);
  n->shape = std::move(shape);
  n->index = std::move(index);
  data_ = std::move(n);
}

Fragment::Fragment(Array<Var> vars, std::vector<int64_t> shape, Var rep, int64_t replicate,
                   PrimExpr thread, PrimExpr local, int64_t threads, int64_t locals) {
  if (vars.size() != shape.size()) {
    TVM_FFI_THROW(ValueError) << "tile Fragment: " << vars.size()
                              << " index variables for a shape of rank " << shape.size();
  }
  if (replicate < 1 || threads < 1 || locals < 1) {
    TVM_FFI_THROW(ValueError) << "tile Fragment: replicate " << replicate << ", threads " << threads
                              << ", locals " << locals << " (all must be positive)";
  }
  Points(shape);
  auto n = tvm::ffi::make_object<FragmentNode>();
  n->vars = std::move(vars);
  n->shape = std::move(shape);
  n->rep = std::move(rep);
  n->replicate = replicate;
  n->thread = std::move(thread);
  n->local = std::move(local);
  n->threads = threads;
  n->locals = locals;
  data_ = std::move(n);
}

Fragment WgmmaAccumulator(int64_t n) {
  if (n < 8 || n > 256 || n % 8 != 0) {
    TVM_FFI_THROW(ValueError) << "WgmmaAccumulator: n = " << n << " (a multiple of 8 in [8, 256])";
  }
  Array<Var> v = IndexVars(2);
  PrimExpr i = v[0], j = v[1];
  PrimExpr thread =
      add(add(mul(floordiv(i, Int32(16)), Int32(32)), mul(floormod(i, Int32(8)), Int32(4))),
          floordiv(floormod(j, Int32(8)), Int32(2)));
  PrimExpr local = add(add(mul(floordiv(j, Int32(8)), Int32(4)),
                           mul(floordiv(floormod(i, Int32(16)), Int32(8)), Int32(2))),
                       floormod(j, Int32(2)));
  return Fragment(v, {64, n}, Var("rep"), 1, thread, local, 128, n / 2);
}

Fragment MmaAccumulator() {
  Array<Var> v = IndexVars(2);
  PrimExpr i = v[0], j = v[1];
  PrimExpr thread = add(mul(floormod(i, Int32(8)), Int32(4)), floordiv(j, Int32(2)));
  PrimExpr local = add(mul(floordiv(i, Int32(8)), Int32(2)), floormod(j, Int32(2)));
  return Fragment(v, {16, 8}, Var("rep"), 1, thread, local, 32, 4);
}

Fragment Distribute(const Fragment& f, int dim, int64_t times) {
  return Reshaped(f, dim, times, true);
}

Fragment Repeat(const Fragment& f, int dim, int64_t times) {
  return Reshaped(f, dim, times, false);
}

Fragment Replicated(std::vector<int64_t> shape, int64_t threads) {
  Array<Var> v = IndexVars(shape.size());
  PrimExpr local = Int32(0);
  int64_t size = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    local = add(mul(local, Int32(shape[d])), v[d]);
    size *= shape[d];
  }
  Var rep("rep");
  arith::Analyzer ana;
  return Fragment(v, std::move(shape), rep, threads, rep, ana.Simplify(local), threads, size);
}

Layout SwizzledLayout(int64_t rows, int64_t cols, int64_t elem_bytes, int64_t swizzle_bytes) {
  if (swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128) {
    TVM_FFI_THROW(ValueError) << "SwizzledLayout: swizzle " << swizzle_bytes
                              << " bytes (32, 64 or 128)";
  }
  if (elem_bytes < 1 || elem_bytes > 16 || (elem_bytes & (elem_bytes - 1)) != 0) {
    TVM_FFI_THROW(ValueError) << "SwizzledLayout: element size " << elem_bytes
                              << " bytes (a power of two up to 16)";
  }
  if (cols * elem_bytes % swizzle_bytes != 0) {
    TVM_FFI_THROW(ValueError) << "SwizzledLayout: a row of " << cols << " x " << elem_bytes
                              << " bytes is not a multiple of the " << swizzle_bytes
                              << "-byte swizzle span";
  }
  Array<Var> v = IndexVars(2);
  PrimExpr flat = add(mul(v[0], Int32(cols)), v[1]);
  return Layout(v, {rows, cols}, {transform::SwizzledElement(flat, elem_bytes, swizzle_bytes)});
}

std::vector<int64_t> FragmentAt(const Fragment& f, const std::vector<int64_t>& point, int64_t rep) {
  auto env = Env(f->vars, point);
  env[f->rep.get()] = rep;
  return {Eval(f->thread, env, "the thread"), Eval(f->local, env, "the register")};
}

std::vector<int64_t> LayoutAt(const Layout& l, const std::vector<int64_t>& point) {
  auto env = Env(l->vars, point);
  std::vector<int64_t> out;
  for (const PrimExpr& e : l->index) out.push_back(Eval(e, env, "the index"));
  return out;
}

std::string CheckFragment(const Fragment& f, bool dense) {
  int64_t points = Points(f->shape);
  if (points > kMaxPoints / f->replicate) return "too many points to enumerate";
  // Which (point, replica) holds each register of each thread (-1: none).
  std::vector<std::pair<int64_t, int64_t>> owner(f->threads * f->locals, {-1, -1});
  std::vector<std::vector<int64_t>> seen;
  std::string error;
  ForEachPoint(f->shape, [&](const std::vector<int64_t>& p) {
    for (int64_t r = 0; r < f->replicate && error.empty(); ++r) {
      std::vector<int64_t> at = FragmentAt(f, p, r);
      if (at[0] < 0 || at[0] >= f->threads || at[1] < 0 || at[1] >= f->locals) {
        error = "point " + PointText(p) + " replica " + std::to_string(r) + " is on thread " +
                std::to_string(at[0]) + " register " + std::to_string(at[1]) + ", outside " +
                std::to_string(f->threads) + " threads x " + std::to_string(f->locals) +
                " registers";
        return;
      }
      auto& o = owner[at[0] * f->locals + at[1]];
      if (o.first >= 0) {
        error = "points " + PointText(seen[o.first]) + " and " + PointText(p) +
                " are both on thread " + std::to_string(at[0]) + " register " +
                std::to_string(at[1]);
        return;
      }
      o = {static_cast<int64_t>(seen.size()), r};
    }
    seen.push_back(p);
  });
  if (!error.empty() || !dense) return error;
  for (int64_t k = 0; k < f->threads * f->locals; ++k) {
    if (owner[k].first < 0) {
      return "thread " + std::to_string(k / f->locals) + " register " +
             std::to_string(k % f->locals) + " holds no element";
    }
  }
  return "";
}

std::string CheckLayout(const Layout& l, int64_t size) {
  if (Points(l->shape) > kMaxPoints || size > kMaxPoints) return "too many points to enumerate";
  if (l->index.size() != 1) return "a layout of " + std::to_string(l->index.size()) + " indices";
  std::vector<int64_t> owner(size, -1);
  std::vector<std::vector<int64_t>> seen;
  std::string error;
  ForEachPoint(l->shape, [&](const std::vector<int64_t>& p) {
    if (!error.empty()) return;
    int64_t at = LayoutAt(l, p)[0];
    if (at < 0 || at >= size) {
      error = "point " + PointText(p) + " is at " + std::to_string(at) + ", outside [0, " +
              std::to_string(size) + ")";
      return;
    }
    if (owner[at] >= 0) {
      error = "points " + PointText(seen[owner[at]]) + " and " + PointText(p) + " are both at " +
              std::to_string(at);
      return;
    }
    owner[at] = static_cast<int64_t>(seen.size());
    seen.push_back(p);
  });
  return error;
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<LayoutNode>(refl::init(false))
      .def_ro("vars", &LayoutNode::vars)
      .def_ro("index", &LayoutNode::index);
  refl::ObjectDef<FragmentNode>(refl::init(false))
      .def_ro("vars", &FragmentNode::vars)
      .def_ro("rep", &FragmentNode::rep)
      .def_ro("replicate", &FragmentNode::replicate)
      .def_ro("thread", &FragmentNode::thread)
      .def_ro("local", &FragmentNode::local)
      .def_ro("threads", &FragmentNode::threads)
      .def_ro("locals", &FragmentNode::locals);
  using Ints = tvm::ffi::Array<int64_t>;
  auto vec = [](const Ints& a) { return std::vector<int64_t>(a.begin(), a.end()); };
  refl::GlobalDef()
      .def("tessel.tile.Layout",
           [vec](Array<Var> vars, Ints shape, Array<PrimExpr> index) {
             return Layout(std::move(vars), vec(shape), std::move(index));
           })
      .def("tessel.tile.Fragment",
           [vec](Array<Var> vars, Ints shape, Var rep, int64_t replicate, PrimExpr thread,
                 PrimExpr local, int64_t threads, int64_t locals) {
             return Fragment(std::move(vars), vec(shape), std::move(rep), replicate,
                             std::move(thread), std::move(local), threads, locals);
           })
      .def("tessel.tile.LayoutShape",
           [](Layout l) { return Ints(l->shape.begin(), l->shape.end()); })
      .def("tessel.tile.FragmentShape",
           [](Fragment f) { return Ints(f->shape.begin(), f->shape.end()); })
      .def("tessel.tile.WgmmaAccumulator", WgmmaAccumulator)
      .def("tessel.tile.MmaAccumulator", MmaAccumulator)
      .def("tessel.tile.Distribute",
           [](Fragment f, int64_t dim, int64_t times) {
             return Distribute(f, static_cast<int>(dim), times);
           })
      .def("tessel.tile.Repeat",
           [](Fragment f, int64_t dim, int64_t times) {
             return Repeat(f, static_cast<int>(dim), times);
           })
      .def("tessel.tile.Replicated",
           [vec](Ints shape, int64_t threads) { return Replicated(vec(shape), threads); })
      .def("tessel.tile.SwizzledLayout", SwizzledLayout)
      .def("tessel.tile.CheckFragment", CheckFragment)
      .def("tessel.tile.CheckLayout", CheckLayout)
      .def("tessel.tile.FragmentAt",
           [vec](Fragment f, Ints point, int64_t rep) {
             auto v = FragmentAt(f, vec(point), rep);
             return Ints(v.begin(), v.end());
           })
      .def("tessel.tile.LayoutAt", [vec](Layout l, Ints point) {
        auto v = LayoutAt(l, vec(point));
        return Ints(v.begin(), v.end());
      });
}

}  // namespace tile
}  // namespace tessel
