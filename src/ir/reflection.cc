// Reflection for every IR node (fields visible from Python under their C++ names; structural
// equality flags) and the global constructor functions "tessel.ir.<Node>" that the Python package
// calls. Constructors go through the C++ handle constructors, so Python gets the same checks.
//
// Binding positions for structural equality: a variable is defined where it is bound (Let,
// LetStmt, For, Allocate, IterVar, PrimFunc params and buffer_map, Block alloc/match buffers,
// DeclBuffer) and compared by position there; names of variables and buffers, and the spans of
// statements, are ignored.
#include <tessel/ir/builtin.h>
#include <tessel/ir/module.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

namespace tessel {
namespace ir {
namespace {

namespace refl = tvm::ffi::reflection;
using Flag = refl::AttachFieldFlag;

void RegisterExprNodes() {
  refl::ObjectDef<PrimExprNode>(refl::init(false)).def_ro("dtype", &PrimExprNode::dtype);
  refl::ObjectDef<IntImmNode>(refl::init(false)).def_ro("value", &IntImmNode::value);
  refl::ObjectDef<FloatImmNode>(refl::init(false)).def_ro("value", &FloatImmNode::value);
  refl::ObjectDef<StringImmNode>(refl::init(false)).def_ro("value", &StringImmNode::value);
  refl::ObjectDef<VarNode>(refl::init(false))
      .def_ro("name_hint", &VarNode::name_hint, Flag::SEqHashIgnore())
      .def_ro("pointee", &VarNode::pointee)
      .def_ro("storage_scope", &VarNode::storage_scope);
  refl::ObjectDef<SizeVarNode>(refl::init(false));
  refl::ObjectDef<CastNode>(refl::init(false)).def_ro("value", &CastNode::value);
#define TESSEL_X(Name)                           \
  refl::ObjectDef<Name##Node>(refl::init(false)) \
      .def_ro("a", &Name##Node::a)               \
      .def_ro("b", &Name##Node::b);
  TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
  TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
  TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
  refl::ObjectDef<NotNode>(refl::init(false)).def_ro("a", &NotNode::a);
  refl::ObjectDef<SelectNode>(refl::init(false))
      .def_ro("condition", &SelectNode::condition)
      .def_ro("true_value", &SelectNode::true_value)
      .def_ro("false_value", &SelectNode::false_value);
  refl::ObjectDef<RampNode>(refl::init(false))
      .def_ro("base", &RampNode::base)
      .def_ro("stride", &RampNode::stride)
      .def_ro("lanes", &RampNode::lanes);
  refl::ObjectDef<BroadcastNode>(refl::init(false))
      .def_ro("value", &BroadcastNode::value)
      .def_ro("lanes", &BroadcastNode::lanes);
  refl::ObjectDef<ShuffleNode>(refl::init(false))
      .def_ro("vectors", &ShuffleNode::vectors)
      .def_ro("indices", &ShuffleNode::indices);
  refl::ObjectDef<LetNode>(refl::init(false))
      .def_ro("var", &LetNode::var, Flag::SEqHashDefSimple())
      .def_ro("value", &LetNode::value)
      .def_ro("body", &LetNode::body);
  refl::ObjectDef<BufferLoadNode>(refl::init(false))
      .def_ro("buffer", &BufferLoadNode::buffer)
      .def_ro("indices", &BufferLoadNode::indices);
  refl::ObjectDef<CallNode>(refl::init(false))
      .def_ro("op", &CallNode::op)
      .def_ro("args", &CallNode::args)
      .def_ro("annotations", &CallNode::annotations);
  refl::ObjectDef<RangeNode>(refl::init(false))
      .def_ro("min", &RangeNode::min)
      .def_ro("extent", &RangeNode::extent);
  refl::ObjectDef<BufferNode>(refl::init(false))
      .def_ro("name", &BufferNode::name, Flag::SEqHashIgnore())
      .def_ro("data", &BufferNode::data)
      .def_ro("dtype", &BufferNode::dtype)
      .def_ro("shape", &BufferNode::shape)
      .def_ro("strides", &BufferNode::strides)
      .def_ro("elem_offset", &BufferNode::elem_offset)
      .def_ro("scope", &BufferNode::scope)
      .def_ro("data_alignment", &BufferNode::data_alignment)
      .def_ro("offset_factor", &BufferNode::offset_factor);
  refl::ObjectDef<OpNode>(refl::init(false))
      .def_ro("name", &OpNode::name)
      .def_ro("num_inputs", &OpNode::num_inputs)
      .def_ro("effect", &OpNode::effect)
      .def_ro("print_style", &OpNode::print_style)
      .def_ro("print_symbol", &OpNode::print_symbol)
      .def_ro("attrs", &OpNode::attrs);
}

void RegisterStmtNodes() {
  refl::ObjectDef<SpanNode>(refl::init(false))
      .def_ro("source_name", &SpanNode::source_name)
      .def_ro("line", &SpanNode::line)
      .def_ro("column", &SpanNode::column);
  // Where a statement was written: never part of its structure.
  refl::ObjectDef<StmtNode>(refl::init(false))
      .def_ro("span", &StmtNode::span, Flag::SEqHashIgnore());
  refl::ObjectDef<LetStmtNode>(refl::init(false))
      .def_ro("var", &LetStmtNode::var, Flag::SEqHashDefSimple())
      .def_ro("value", &LetStmtNode::value)
      .def_ro("body", &LetStmtNode::body);
  refl::ObjectDef<AttrStmtNode>(refl::init(false))
      .def_ro("node", &AttrStmtNode::node)
      .def_ro("attr_key", &AttrStmtNode::attr_key)
      .def_ro("value", &AttrStmtNode::value)
      .def_ro("body", &AttrStmtNode::body);
  refl::ObjectDef<AssertStmtNode>(refl::init(false))
      .def_ro("condition", &AssertStmtNode::condition)
      .def_ro("message", &AssertStmtNode::message)
      .def_ro("body", &AssertStmtNode::body);
  refl::ObjectDef<BufferStoreNode>(refl::init(false))
      .def_ro("buffer", &BufferStoreNode::buffer)
      .def_ro("value", &BufferStoreNode::value)
      .def_ro("indices", &BufferStoreNode::indices);
  refl::ObjectDef<AllocateNode>(refl::init(false))
      .def_ro("buffer_var", &AllocateNode::buffer_var, Flag::SEqHashDefSimple())
      .def_ro("dtype", &AllocateNode::dtype)
      .def_ro("extents", &AllocateNode::extents)
      .def_ro("condition", &AllocateNode::condition)
      .def_ro("body", &AllocateNode::body)
      .def_ro("annotations", &AllocateNode::annotations);
  refl::ObjectDef<DeclBufferNode>(refl::init(false))
      .def_ro("buffer", &DeclBufferNode::buffer, Flag::SEqHashDefPattern())
      .def_ro("body", &DeclBufferNode::body);
  refl::ObjectDef<ForNode>(refl::init(false))
      .def_ro("loop_var", &ForNode::loop_var, Flag::SEqHashDefSimple())
      .def_ro("min", &ForNode::min)
      .def_ro("extent", &ForNode::extent)
      .def_ro("kind", &ForNode::kind)
      .def_ro("body", &ForNode::body)
      .def_ro("thread_tag", &ForNode::thread_tag)
      .def_ro("annotations", &ForNode::annotations);
  refl::ObjectDef<WhileNode>(refl::init(false))
      .def_ro("condition", &WhileNode::condition)
      .def_ro("body", &WhileNode::body);
  refl::ObjectDef<IfThenElseNode>(refl::init(false))
      .def_ro("condition", &IfThenElseNode::condition)
      .def_ro("then_case", &IfThenElseNode::then_case)
      .def_ro("else_case", &IfThenElseNode::else_case);
  refl::ObjectDef<SeqStmtNode>(refl::init(false)).def_ro("seq", &SeqStmtNode::seq);
  refl::ObjectDef<EvaluateNode>(refl::init(false)).def_ro("value", &EvaluateNode::value);
  refl::ObjectDef<IterVarNode>(refl::init(false))
      .def_ro("var", &IterVarNode::var, Flag::SEqHashDefSimple())
      .def_ro("dom", &IterVarNode::dom)
      .def_ro("iter_type", &IterVarNode::iter_type);
  refl::ObjectDef<BufferRegionNode>(refl::init(false))
      .def_ro("buffer", &BufferRegionNode::buffer)
      .def_ro("region", &BufferRegionNode::region);
  refl::ObjectDef<MatchBufferRegionNode>(refl::init(false))
      .def_ro("buffer", &MatchBufferRegionNode::buffer, Flag::SEqHashDefPattern())
      .def_ro("source", &MatchBufferRegionNode::source);
  refl::ObjectDef<BlockNode>(refl::init(false))
      .def_ro("iter_vars", &BlockNode::iter_vars)
      .def_ro("reads", &BlockNode::reads)
      .def_ro("writes", &BlockNode::writes)
      .def_ro("name_hint", &BlockNode::name_hint)
      .def_ro("alloc_buffers", &BlockNode::alloc_buffers, Flag::SEqHashDefPattern())
      .def_ro("match_buffers", &BlockNode::match_buffers)
      .def_ro("init", &BlockNode::init)
      .def_ro("body", &BlockNode::body)
      .def_ro("annotations", &BlockNode::annotations);
  refl::ObjectDef<BlockRealizeNode>(refl::init(false))
      .def_ro("iter_values", &BlockRealizeNode::iter_values)
      .def_ro("predicate", &BlockRealizeNode::predicate)
      .def_ro("block", &BlockRealizeNode::block);
  refl::ObjectDef<PrimFuncNode>(refl::init(false))
      .def_ro("params", &PrimFuncNode::params, Flag::SEqHashDefPattern())
      .def_ro("buffer_map", &PrimFuncNode::buffer_map, Flag::SEqHashDefPattern())
      .def_ro("ret_type", &PrimFuncNode::ret_type)
      .def_ro("body", &PrimFuncNode::body)
      .def_ro("attrs", &PrimFuncNode::attrs);
  refl::ObjectDef<GlobalVarNode>(refl::init(false)).def_ro("name_hint", &GlobalVarNode::name_hint);
  refl::ObjectDef<IRModuleNode>(refl::init(false))
      .def_ro("functions", &IRModuleNode::functions)
      .def_ro("attrs", &IRModuleNode::attrs);
}

void RegisterConstructors() {
  refl::GlobalDef()
      .def("tessel.ir.IntImm", [](DataType t, int64_t v) { return IntImm(t, v); })
      .def("tessel.ir.FloatImm", [](DataType t, double v) { return FloatImm(t, v); })
      .def("tessel.ir.StringImm", [](String v) { return StringImm(v); })
      .def("tessel.ir.Var", [](String name, DataType t) { return Var(name, t); })
      .def("tessel.ir.PointerVar", [](String name, DataType pointee,
                                      String scope) { return Var::Pointer(name, pointee, scope); })
      .def("tessel.ir.SizeVar", [](String name, DataType t) { return SizeVar(name, t); })
      .def("tessel.ir.Cast", [](DataType t, PrimExpr v) { return Cast(t, v); })
      .def("tessel.ir.Not", [](PrimExpr a) { return Not(a); })
      .def("tessel.ir.Select", [](PrimExpr c, PrimExpr t, PrimExpr f) { return Select(c, t, f); })
      .def("tessel.ir.Ramp", [](PrimExpr b, PrimExpr s, int64_t l) { return Ramp(b, s, l); })
      .def("tessel.ir.Broadcast", [](PrimExpr v, int64_t l) { return Broadcast(v, l); })
      .def("tessel.ir.Shuffle", [](Array<PrimExpr> v, Array<PrimExpr> i) { return Shuffle(v, i); })
      .def("tessel.ir.Let", [](Var v, PrimExpr val, PrimExpr b) { return Let(v, val, b); })
      .def("tessel.ir.BufferLoad", [](Buffer b, Array<PrimExpr> i) { return BufferLoad(b, i); })
      .def("tessel.ir.Call", [](DataType t, ObjectRef op, Array<PrimExpr> args,
                                Map<String, Any> ann) { return Call(t, op, args, ann); })
      .def("tessel.ir.Range", [](PrimExpr mn, PrimExpr ext) { return Range(mn, ext); })
      .def("tessel.ir.Buffer",
           [](String name, Var data, DataType t, Array<PrimExpr> shape, Array<PrimExpr> strides,
              PrimExpr off, String scope, int64_t align, int64_t factor) {
             return Buffer(name, data, t, shape, strides, off, scope, align, factor);
           })
      .def("tessel.ir.OpGet", [](String name) { return Op::Get(name); })
      .def("tessel.ir.OpListNames",
           []() {
             Array<String> out;
             for (const auto& n : Op::ListNames()) out.push_back(n);
             return out;
           })
      .def("tessel.ir.Span",
           [](String name, int64_t line, int64_t column) { return Span(name, line, column); })
      .def("tessel.ir.SpanToString", [](Span span) { return String(span->ToString()); })
      .def("tessel.ir.StmtWithSpan",
           [](Stmt stmt, Optional<Span> span) { return WithSpan(stmt, span); })
      .def("tessel.ir.LetStmt", [](Var v, PrimExpr val, Stmt b) { return LetStmt(v, val, b); })
      .def("tessel.ir.AttrStmt",
           [](Any node, String key, PrimExpr v, Stmt b) { return AttrStmt(node, key, v, b); })
      .def("tessel.ir.AssertStmt",
           [](PrimExpr c, PrimExpr m, Stmt b) { return AssertStmt(c, m, b); })
      .def("tessel.ir.BufferStore",
           [](Buffer b, PrimExpr v, Array<PrimExpr> i) { return BufferStore(b, v, i); })
      .def("tessel.ir.Allocate",
           [](Var v, DataType t, Array<PrimExpr> ext, PrimExpr c, Stmt b, Map<String, Any> ann) {
             return Allocate(v, t, ext, c, b, ann);
           })
      .def("tessel.ir.DeclBuffer", [](Buffer b, Stmt s) { return DeclBuffer(b, s); })
      .def("tessel.ir.For",
           [](Var v, PrimExpr mn, PrimExpr ext, int32_t kind, Stmt b, String tag,
              Map<String, Any> ann) {
             if (kind < 0 || kind > static_cast<int32_t>(ForKind::kThreadBinding)) {
               TVM_FFI_THROW(ValueError) << "For: unknown kind " << kind;
             }
             return For(v, mn, ext, static_cast<ForKind>(kind), b, tag, ann);
           })
      .def("tessel.ir.While", [](PrimExpr c, Stmt b) { return While(c, b); })
      .def("tessel.ir.IfThenElse",
           [](PrimExpr c, Stmt t, Optional<Stmt> e) { return IfThenElse(c, t, e); })
      .def("tessel.ir.SeqStmt", [](Array<Stmt> s) { return SeqStmt(s); })
      .def("tessel.ir.Evaluate", [](PrimExpr v) { return Evaluate(v); })
      .def("tessel.ir.IterVar",
           [](Var v, Range dom, int32_t type) {
             return IterVar(v, dom, static_cast<IterVarType>(type));
           })
      .def("tessel.ir.BufferRegion", [](Buffer b, Array<Range> r) { return BufferRegion(b, r); })
      .def("tessel.ir.MatchBufferRegion",
           [](Buffer b, BufferRegion s) { return MatchBufferRegion(b, s); })
      .def("tessel.ir.Block",
           [](Array<IterVar> ivs, Array<BufferRegion> reads, Array<BufferRegion> writes,
              String name, Stmt body, Optional<Stmt> init, Array<Buffer> alloc,
              Array<MatchBufferRegion> match, Map<String, Any> ann) {
             return Block(ivs, reads, writes, name, body, init, alloc, match, ann);
           })
      .def("tessel.ir.BlockRealize",
           [](Array<PrimExpr> vals, PrimExpr pred, Block b) { return BlockRealize(vals, pred, b); })
      .def("tessel.ir.PrimFunc",
           [](Array<Var> params, Stmt body, Map<Var, Buffer> bmap, Map<String, Any> attrs,
              DataType ret) { return PrimFunc(params, body, bmap, attrs, ret); })
      .def("tessel.ir.GlobalVar", [](String name) { return GlobalVar(name); })
      .def("tessel.ir.IRModule",
           [](Map<String, PrimFunc> fns, Map<String, Any> attrs) { return IRModule(fns, attrs); });
#define TESSEL_X(Name) \
  refl::GlobalDef().def("tessel.ir." #Name, [](PrimExpr a, PrimExpr b) { return Name(a, b); });
  TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
  TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
  TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
}

// The folding, promoting helpers of ops.h, for Python operator overloads.
void RegisterOpHelpers() {
  using F2 = PrimExpr (*)(PrimExpr, PrimExpr);
  struct Entry {
    const char* name;
    F2 fn;
  };
  static const Entry kBinary[] = {
      {"add", add},
      {"sub", sub},
      {"mul", mul},
      {"div", div},
      {"truncdiv", truncdiv},
      {"truncmod", truncmod},
      {"floordiv", floordiv},
      {"floormod", floormod},
      {"min", min},
      {"max", max},
      {"eq", eq},
      {"ne", ne},
      {"lt", lt},
      {"le", le},
      {"gt", gt},
      {"ge", ge},
      {"logical_and", logical_and},
      {"logical_or", logical_or},
      {"shift_left", shift_left},
      {"shift_right", shift_right},
      {"bitwise_and", bitwise_and},
      {"bitwise_or", bitwise_or},
      {"bitwise_xor", bitwise_xor},
  };
  for (const Entry& e : kBinary) {
    F2 fn = e.fn;
    std::string name = std::string("tessel.op.") + e.name;
    refl::GlobalDef().def(name.c_str(), [fn](PrimExpr a, PrimExpr b) { return fn(a, b); });
  }
  refl::GlobalDef()
      .def("tessel.op.neg", [](PrimExpr a) { return neg(a); })
      .def("tessel.op.logical_not", [](PrimExpr a) { return logical_not(a); })
      .def("tessel.op.bitwise_not", [](PrimExpr a) { return bitwise_not(a); })
      .def("tessel.op.cast", [](DataType t, PrimExpr a) { return cast(t, a); })
      .def("tessel.op.select", [](PrimExpr c, PrimExpr t, PrimExpr f) { return select(c, t, f); })
      .def("tessel.op.if_then_else",
           [](PrimExpr c, PrimExpr t, PrimExpr f) { return if_then_else(c, t, f); });
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  RegisterExprNodes();
  RegisterStmtNodes();
  RegisterConstructors();
  RegisterOpHelpers();
}

}  // namespace ir
}  // namespace tessel
