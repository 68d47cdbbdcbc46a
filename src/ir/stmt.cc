// Constructors of statement nodes, with the checks their semantics need.
#include <tessel/ir/stmt.h>
#include <tvm/ffi/error.h>

#include <utility>
#include <vector>

namespace tessel {
namespace ir {
namespace {

void CheckStmt(const char* node, const char* field, const Stmt& s) {
  if (!s.defined()) TVM_FFI_THROW(ValueError) << node << ": " << field << " is undefined";
}
void CheckExpr(const char* node, const char* field, const PrimExpr& e) {
  if (!e.defined()) TVM_FFI_THROW(ValueError) << node << ": " << field << " is undefined";
}
void CheckBool(const char* node, const PrimExpr& cond) {
  CheckExpr(node, "condition", cond);
  if (!cond.dtype().is_bool()) {
    TVM_FFI_THROW(TypeError) << node << ": condition must be bool, got " << cond.dtype();
  }
}

}  // namespace

void detail::ReleaseIteratively(ObjectRef child) noexcept {
  thread_local std::vector<ObjectRef>* pending = nullptr;
  if (child.use_count() != 1) return;
  if (pending != nullptr) {
    pending->push_back(std::move(child));
    return;
  }
  std::vector<ObjectRef> worklist;
  pending = &worklist;
  child = ObjectRef();
  while (!worklist.empty()) {
    ObjectRef next = std::move(worklist.back());
    worklist.pop_back();
  }
  pending = nullptr;
}

LetStmtNode::~LetStmtNode() { detail::ReleaseIteratively(std::move(body)); }
AttrStmtNode::~AttrStmtNode() { detail::ReleaseIteratively(std::move(body)); }
AssertStmtNode::~AssertStmtNode() { detail::ReleaseIteratively(std::move(body)); }
AllocateNode::~AllocateNode() { detail::ReleaseIteratively(std::move(body)); }
DeclBufferNode::~DeclBufferNode() { detail::ReleaseIteratively(std::move(body)); }
ForNode::~ForNode() { detail::ReleaseIteratively(std::move(body)); }
WhileNode::~WhileNode() { detail::ReleaseIteratively(std::move(body)); }
IfThenElseNode::~IfThenElseNode() {
  detail::ReleaseIteratively(std::move(then_case));
  if (else_case.has_value()) detail::ReleaseIteratively(std::move(else_case).value());
}
SeqStmtNode::~SeqStmtNode() { detail::ReleaseIteratively(std::move(seq)); }
BlockNode::~BlockNode() {
  detail::ReleaseIteratively(std::move(body));
  if (init.has_value()) detail::ReleaseIteratively(std::move(init).value());
}
BlockRealizeNode::~BlockRealizeNode() { detail::ReleaseIteratively(std::move(block)); }

LetStmt::LetStmt(Var var, PrimExpr value, Stmt body) {
  if (!var.defined()) TVM_FFI_THROW(ValueError) << "LetStmt: var is undefined";
  CheckExpr("LetStmt", "value", value);
  CheckStmt("LetStmt", "body", body);
  if (var.dtype() != value.dtype()) {
    TVM_FFI_THROW(TypeError) << "LetStmt: " << var->name_hint << " has dtype " << var.dtype()
                             << " but value has " << value.dtype();
  }
  auto n = make_object<LetStmtNode>();
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  data_ = std::move(n);
}

AttrStmt::AttrStmt(Any node, String attr_key, PrimExpr value, Stmt body) {
  CheckExpr("AttrStmt", "value", value);
  CheckStmt("AttrStmt", "body", body);
  auto n = make_object<AttrStmtNode>();
  n->node = std::move(node);
  n->attr_key = std::move(attr_key);
  n->value = std::move(value);
  n->body = std::move(body);
  data_ = std::move(n);
}

AssertStmt::AssertStmt(PrimExpr condition, PrimExpr message, Stmt body) {
  CheckBool("AssertStmt", condition);
  CheckExpr("AssertStmt", "message", message);
  CheckStmt("AssertStmt", "body", body);
  auto n = make_object<AssertStmtNode>();
  n->condition = std::move(condition);
  n->message = std::move(message);
  n->body = std::move(body);
  data_ = std::move(n);
}

BufferStore::BufferStore(Buffer buffer, PrimExpr value, Array<PrimExpr> indices) {
  if (!buffer.defined()) TVM_FFI_THROW(ValueError) << "BufferStore: buffer is undefined";
  CheckExpr("BufferStore", "value", value);
  if (indices.size() != buffer->shape.size()) {
    TVM_FFI_THROW(ValueError) << "BufferStore: " << buffer->name << " has " << buffer->shape.size()
                              << " dimensions but " << indices.size() << " indices were given";
  }
  int lanes = 1;
  for (size_t i = 0; i < indices.size(); ++i) {
    CheckExpr("BufferStore", "index", indices[i]);
    if (!indices[i].dtype().is_int_or_uint()) {
      TVM_FFI_THROW(TypeError) << "BufferStore: " << buffer->name << ": index " << i
                               << " must be an integer, got " << indices[i].dtype();
    }
    if (indices[i].dtype().is_vector()) {
      if (i + 1 != indices.size()) {
        TVM_FFI_THROW(TypeError) << "BufferStore: " << buffer->name
                                 << ": only the last index may be a vector (index " << i << ")";
      }
      lanes = indices[i].dtype().lanes();
    }
  }
  DataType expect = buffer->dtype.with_lanes(buffer->dtype.lanes() * lanes);
  if (value.dtype() != expect) {
    TVM_FFI_THROW(TypeError) << "BufferStore: " << buffer->name << ": value has dtype "
                             << value.dtype() << ", expected " << expect;
  }
  auto n = make_object<BufferStoreNode>();
  n->buffer = std::move(buffer);
  n->value = std::move(value);
  n->indices = std::move(indices);
  data_ = std::move(n);
}

Allocate::Allocate(Var buffer_var, DataType dtype, Array<PrimExpr> extents, PrimExpr condition,
                   Stmt body, Map<String, Any> annotations) {
  if (!buffer_var.defined() || !buffer_var.dtype().is_handle()) {
    TVM_FFI_THROW(TypeError) << "Allocate: buffer_var must be a handle variable";
  }
  for (const PrimExpr& e : extents) CheckExpr("Allocate", "extent", e);
  if (!condition.defined()) condition = IntImm(DataType::Bool(), 1);
  CheckBool("Allocate", condition);
  CheckStmt("Allocate", "body", body);
  auto n = make_object<AllocateNode>();
  n->buffer_var = std::move(buffer_var);
  n->dtype = dtype;
  n->extents = std::move(extents);
  n->condition = std::move(condition);
  n->body = std::move(body);
  n->annotations = std::move(annotations);
  data_ = std::move(n);
}

DeclBuffer::DeclBuffer(Buffer buffer, Stmt body) {
  if (!buffer.defined()) TVM_FFI_THROW(ValueError) << "DeclBuffer: buffer is undefined";
  CheckStmt("DeclBuffer", "body", body);
  auto n = make_object<DeclBufferNode>();
  n->buffer = std::move(buffer);
  n->body = std::move(body);
  data_ = std::move(n);
}

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unroll";
    case ForKind::kThreadBinding:
      return "thread_binding";
  }
  return "unknown";
}

For::For(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body, String thread_tag,
         Map<String, Any> annotations) {
  if (!loop_var.defined()) TVM_FFI_THROW(ValueError) << "For: loop_var is undefined";
  CheckExpr("For", "min", min);
  CheckExpr("For", "extent", extent);
  CheckStmt("For", "body", body);
  DataType t = loop_var.dtype();
  if (!t.is_int_or_uint() || !t.is_scalar() || min.dtype() != t || extent.dtype() != t) {
    TVM_FFI_THROW(TypeError) << "For " << loop_var->name_hint
                             << ": loop_var, min and extent must share one integer dtype, got " << t
                             << ", " << min.dtype() << ", " << extent.dtype();
  }
  if ((kind == ForKind::kThreadBinding) != !thread_tag.empty()) {
    TVM_FFI_THROW(ValueError) << "For " << loop_var->name_hint
                              << ": a thread tag is given exactly for thread_binding loops";
  }
  auto n = make_object<ForNode>();
  n->loop_var = std::move(loop_var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->kind = kind;
  n->body = std::move(body);
  n->thread_tag = std::move(thread_tag);
  n->annotations = std::move(annotations);
  data_ = std::move(n);
}

While::While(PrimExpr condition, Stmt body) {
  CheckBool("While", condition);
  CheckStmt("While", "body", body);
  auto n = make_object<WhileNode>();
  n->condition = std::move(condition);
  n->body = std::move(body);
  data_ = std::move(n);
}

IfThenElse::IfThenElse(PrimExpr condition, Stmt then_case, Optional<Stmt> else_case) {
  CheckBool("IfThenElse", condition);
  CheckStmt("IfThenElse", "then_case", then_case);
  auto n = make_object<IfThenElseNode>();
  n->condition = std::move(condition);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  data_ = std::move(n);
}

SeqStmt::SeqStmt(Array<Stmt> seq) {
  for (const Stmt& s : seq) CheckStmt("SeqStmt", "element", s);
  auto n = make_object<SeqStmtNode>();
  n->seq = std::move(seq);
  data_ = std::move(n);
}

Stmt SeqStmt::Flatten(const Array<Stmt>& seq) {
  Array<Stmt> flat;
  for (const Stmt& s : seq) {
    if (!s.defined()) continue;
    if (const auto* inner = s.as<SeqStmtNode>()) {
      for (const Stmt& t : inner->seq) flat.push_back(t);
    } else {
      flat.push_back(s);
    }
  }
  if (flat.size() == 1) return flat[0];
  return SeqStmt(flat);
}

Evaluate::Evaluate(PrimExpr value) {
  CheckExpr("Evaluate", "value", value);
  auto n = make_object<EvaluateNode>();
  n->value = std::move(value);
  data_ = std::move(n);
}

const char* IterVarTypeName(IterVarType type) {
  switch (type) {
    case IterVarType::kDataPar:
      return "spatial";
    case IterVarType::kCommReduce:
      return "reduce";
    case IterVarType::kOrdered:
      return "scan";
    case IterVarType::kOpaque:
      return "opaque";
  }
  return "unknown";
}

IterVar::IterVar(Var var, Range dom, IterVarType iter_type) {
  if (!var.defined()) TVM_FFI_THROW(ValueError) << "IterVar: var is undefined";
  if (dom->min.dtype() != var.dtype()) {
    TVM_FFI_THROW(TypeError) << "IterVar " << var->name_hint << ": domain dtype "
                             << dom->min.dtype() << " differs from var dtype " << var.dtype();
  }
  auto n = make_object<IterVarNode>();
  n->var = std::move(var);
  n->dom = std::move(dom);
  n->iter_type = iter_type;
  data_ = std::move(n);
}

BufferRegion::BufferRegion(Buffer buffer, Array<Range> region) {
  if (!buffer.defined()) TVM_FFI_THROW(ValueError) << "BufferRegion: buffer is undefined";
  if (region.size() != buffer->shape.size()) {
    TVM_FFI_THROW(ValueError) << "BufferRegion: " << buffer->name << " has " << buffer->shape.size()
                              << " dimensions but the region has " << region.size();
  }
  auto n = make_object<BufferRegionNode>();
  n->buffer = std::move(buffer);
  n->region = std::move(region);
  data_ = std::move(n);
}

BufferRegion BufferRegion::Full(Buffer buffer) {
  Array<Range> region;
  for (const PrimExpr& s : buffer->shape) region.push_back(Range(MakeConst(s.dtype(), 0), s));
  return BufferRegion(std::move(buffer), std::move(region));
}

MatchBufferRegion::MatchBufferRegion(Buffer buffer, BufferRegion source) {
  if (!buffer.defined()) TVM_FFI_THROW(ValueError) << "MatchBufferRegion: buffer is undefined";
  auto n = make_object<MatchBufferRegionNode>();
  n->buffer = std::move(buffer);
  n->source = std::move(source);
  data_ = std::move(n);
}

Block::Block(Array<IterVar> iter_vars, Array<BufferRegion> reads, Array<BufferRegion> writes,
             String name_hint, Stmt body, Optional<Stmt> init, Array<Buffer> alloc_buffers,
             Array<MatchBufferRegion> match_buffers, Map<String, Any> annotations) {
  CheckStmt("Block", "body", body);
  auto n = make_object<BlockNode>();
  n->iter_vars = std::move(iter_vars);
  n->reads = std::move(reads);
  n->writes = std::move(writes);
  n->name_hint = std::move(name_hint);
  n->alloc_buffers = std::move(alloc_buffers);
  n->match_buffers = std::move(match_buffers);
  n->init = std::move(init);
  n->body = std::move(body);
  n->annotations = std::move(annotations);
  data_ = std::move(n);
}

BlockRealize::BlockRealize(Array<PrimExpr> iter_values, PrimExpr predicate, Block block) {
  if (iter_values.size() != block->iter_vars.size()) {
    TVM_FFI_THROW(ValueError) << "BlockRealize: block " << block->name_hint << " has "
                              << block->iter_vars.size() << " iter vars but " << iter_values.size()
                              << " values were given";
  }
  for (size_t i = 0; i < iter_values.size(); ++i) {
    CheckExpr("BlockRealize", "iter value", iter_values[i]);
    if (iter_values[i].dtype() != block->iter_vars[i]->var.dtype()) {
      TVM_FFI_THROW(TypeError) << "BlockRealize: block " << block->name_hint << ": value for "
                               << block->iter_vars[i]->var->name_hint << " has dtype "
                               << iter_values[i].dtype() << ", expected "
                               << block->iter_vars[i]->var.dtype();
    }
  }
  if (!predicate.defined()) predicate = IntImm(DataType::Bool(), 1);
  CheckBool("BlockRealize", predicate);
  auto n = make_object<BlockRealizeNode>();
  n->iter_values = std::move(iter_values);
  n->predicate = std::move(predicate);
  n->block = std::move(block);
  data_ = std::move(n);
}

Stmt WithSpan(Stmt stmt, Optional<Span> span) {
  if (!stmt.defined() || stmt->span.same_as(span)) return stmt;
  if (stmt.unique()) {
    const_cast<StmtNode*>(stmt.get())->span = std::move(span);
    return stmt;
  }
#define TESSEL_X(Name)                                        \
  if (const auto* p = stmt.as<Name##Node>()) {                \
    ObjectPtr<Name##Node> copy = make_object<Name##Node>(*p); \
    copy->span = std::move(span);                             \
    return Stmt(std::move(copy));                             \
  }
  TESSEL_FOR_EACH_STMT_NODE(TESSEL_X)
#undef TESSEL_X
  TVM_FFI_THROW(InternalError) << "WithSpan: unknown statement kind " << stmt->GetTypeKey();
  TVM_FFI_UNREACHABLE();
}

Stmt WithBody(const Stmt& decl, Stmt body) {
  if (const auto* a = decl.as<AllocateNode>()) {
    return WithSpan(Allocate(a->buffer_var, a->dtype, a->extents, a->condition, std::move(body),
                             a->annotations),
                    a->span);
  }
  const auto* d = decl.as<DeclBufferNode>();
  if (!d) TVM_FFI_THROW(ValueError) << "WithBody: not an Allocate or a DeclBuffer";
  return WithSpan(DeclBuffer(d->buffer, std::move(body)), d->span);
}

}  // namespace ir
}  // namespace tessel
