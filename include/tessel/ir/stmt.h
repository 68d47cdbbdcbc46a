// Statement nodes.
//
// - LetStmt(var, value, body): binds var for body. AttrStmt(node, attr_key, value, body): attaches
// a
//   keyed value to a node for body (e.g. "thread_extent", "pragma_*").
// - AssertStmt(condition, message, body): checks condition at run time, fails with message.
// - BufferStore(buffer, value, indices): only the last index may be a vector.
// - Allocate(buffer_var, dtype, extents, condition, body, annotations): storage of prod(extents)
//   elements of dtype for body; buffer_var is a handle whose pointee must equal dtype.
// - DeclBuffer(buffer, body): declares buffer (over an existing data var) for body.
// - For(loop_var, min, extent, kind, body, thread_tag, annotations): loop_var runs over
//   [min, min + extent). kind says how iterations may run; thread_tag names the GPU thread axis for
//   kThreadBinding ("threadIdx.x", "blockIdx.y", ...).
// - While(condition, body), IfThenElse(condition, then_case, else_case), SeqStmt(seq),
//   Evaluate(value): value is computed for its effect.
// - Block / BlockRealize: a schedulable unit with iteration variables (spatial or reduce), the
//   regions it reads and writes, buffers it allocates or matches, an optional init statement run
//   on the first iteration of its reduce axes, and annotations. BlockRealize binds the block's iter
//   vars to values and guards it with a predicate.
//
// Every statement has an optional `span` (span.h): where it was written. Structural equality and
// hashing ignore it, the printer does not print it, and copy-on-write keeps it.
#ifndef TESSEL_IR_STMT_H_
#define TESSEL_IR_STMT_H_

#include <tessel/ir/expr.h>
#include <tessel/ir/span.h>

namespace tessel {
namespace ir {

class StmtNode : public Object {
 public:
  // Where the statement was written, when known.
  Optional<Span> span;

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  static constexpr uint32_t _type_child_slots = 32;
  TVM_FFI_DECLARE_OBJECT_INFO("tessel.ir.Stmt", StmtNode, Object);
};
class Stmt : public ObjectRef {
 public:
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(Stmt, ObjectRef, StmtNode);
};

namespace detail {
// Drops `child`, a statement's field, from the statement's destructor. A destructor that dropped
// its children itself would recurse once per level of nesting, so dropping the last reference to a
// chain 100,000 statements deep would overflow the stack: instead the outermost release on a
// thread drains a worklist to which the nested destructors hand their children. A child shared
// with other owners is dropped at once (it cannot be destroyed here).
void ReleaseIteratively(ObjectRef child) noexcept;
}  // namespace detail

// `stmt` with its span set to `span`: edited in place when the handle holds the only reference to
// the node (a node just built), otherwise a shallow copy. An undefined stmt stays undefined.
Stmt WithSpan(Stmt stmt, Optional<Span> span);
// The Allocate or DeclBuffer `decl` (the same fields and span) around `body` instead of its own:
// how a pass moves a declaration to another place in the tree.
Stmt WithBody(const Stmt& decl, Stmt body);

class LetStmtNode : public StmtNode {
 public:
  Var var;
  PrimExpr value;
  Stmt body;
  ~LetStmtNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.LetStmt", LetStmtNode, StmtNode);
};
class LetStmt : public Stmt {
 public:
  LetStmt(Var var, PrimExpr value, Stmt body);
  TESSEL_DEFINE_NODE_REF(LetStmt, Stmt);
};

class AttrStmtNode : public StmtNode {
 public:
  // The node the attribute is about (a Var, an IterVar, a Buffer, a string ...).
  Any node;
  String attr_key;
  PrimExpr value;
  Stmt body;
  ~AttrStmtNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.AttrStmt", AttrStmtNode, StmtNode);
};
class AttrStmt : public Stmt {
 public:
  AttrStmt(Any node, String attr_key, PrimExpr value, Stmt body);
  TESSEL_DEFINE_NODE_REF(AttrStmt, Stmt);
};

class AssertStmtNode : public StmtNode {
 public:
  PrimExpr condition;
  PrimExpr message;
  Stmt body;
  ~AssertStmtNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.AssertStmt", AssertStmtNode, StmtNode);
};
class AssertStmt : public Stmt {
 public:
  AssertStmt(PrimExpr condition, PrimExpr message, Stmt body);
  TESSEL_DEFINE_NODE_REF(AssertStmt, Stmt);
};

class BufferStoreNode : public StmtNode {
 public:
  Buffer buffer;
  PrimExpr value;
  Array<PrimExpr> indices;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.BufferStore", BufferStoreNode, StmtNode);
};
class BufferStore : public Stmt {
 public:
  // Fails when the index count differs from the buffer's rank or value's lanes do not match.
  BufferStore(Buffer buffer, PrimExpr value, Array<PrimExpr> indices);
  TESSEL_DEFINE_NODE_REF(BufferStore, Stmt);
};

class AllocateNode : public StmtNode {
 public:
  Var buffer_var;
  DataType dtype;
  Array<PrimExpr> extents;
  PrimExpr condition;
  Stmt body;
  Map<String, Any> annotations;
  ~AllocateNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Allocate", AllocateNode, StmtNode);
};
class Allocate : public Stmt {
 public:
  Allocate(Var buffer_var, DataType dtype, Array<PrimExpr> extents, PrimExpr condition, Stmt body,
           Map<String, Any> annotations = {});
  TESSEL_DEFINE_NODE_REF(Allocate, Stmt);
};

class DeclBufferNode : public StmtNode {
 public:
  Buffer buffer;
  Stmt body;
  ~DeclBufferNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.DeclBuffer", DeclBufferNode, StmtNode);
};
class DeclBuffer : public Stmt {
 public:
  DeclBuffer(Buffer buffer, Stmt body);
  TESSEL_DEFINE_NODE_REF(DeclBuffer, Stmt);
};

enum class ForKind : int32_t {
  kSerial = 0,
  kParallel = 1,
  kVectorized = 2,
  kUnrolled = 3,
  kThreadBinding = 4,
};
// "serial", "parallel", "vectorized", "unroll", "thread_binding": the T.<name> used in the text.
const char* ForKindName(ForKind kind);

class ForNode : public StmtNode {
 public:
  Var loop_var;
  PrimExpr min;
  PrimExpr extent;
  ForKind kind;
  Stmt body;
  String thread_tag;
  Map<String, Any> annotations;
  ~ForNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.For", ForNode, StmtNode);
};
class For : public Stmt {
 public:
  // Fails when loop_var, min and extent are not all of one integer dtype, or when thread_tag is
  // set exactly when kind is not kThreadBinding.
  For(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body, String thread_tag = "",
      Map<String, Any> annotations = {});
  TESSEL_DEFINE_NODE_REF(For, Stmt);
};

class WhileNode : public StmtNode {
 public:
  PrimExpr condition;
  Stmt body;
  ~WhileNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.While", WhileNode, StmtNode);
};
class While : public Stmt {
 public:
  While(PrimExpr condition, Stmt body);
  TESSEL_DEFINE_NODE_REF(While, Stmt);
};

class IfThenElseNode : public StmtNode {
 public:
  PrimExpr condition;
  Stmt then_case;
  Optional<Stmt> else_case;
  ~IfThenElseNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.IfThenElse", IfThenElseNode, StmtNode);
};
class IfThenElse : public Stmt {
 public:
  IfThenElse(PrimExpr condition, Stmt then_case, Optional<Stmt> else_case = std::nullopt);
  TESSEL_DEFINE_NODE_REF(IfThenElse, Stmt);
};

class SeqStmtNode : public StmtNode {
 public:
  Array<Stmt> seq;
  ~SeqStmtNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.SeqStmt", SeqStmtNode, StmtNode);
};
class SeqStmt : public Stmt {
 public:
  explicit SeqStmt(Array<Stmt> seq);
  // One statement for a list: the element itself when there is one, nested SeqStmts flattened.
  static Stmt Flatten(const Array<Stmt>& seq);
  TESSEL_DEFINE_NODE_REF(SeqStmt, Stmt);
};

class EvaluateNode : public StmtNode {
 public:
  PrimExpr value;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Evaluate", EvaluateNode, StmtNode);
};
class Evaluate : public Stmt {
 public:
  explicit Evaluate(PrimExpr value);
  TESSEL_DEFINE_NODE_REF(Evaluate, Stmt);
};

enum class IterVarType : int32_t {
  kDataPar = 0,     // spatial: iterations independent
  kCommReduce = 2,  // reduction over a commutative, associative update
  kOrdered = 3,     // iterations must run in order (scan)
  kOpaque = 4,      // anything else
};
// "spatial", "reduce", "scan", "opaque": the T.axis.<name> used in the text.
const char* IterVarTypeName(IterVarType type);

class IterVarNode : public Object {
 public:
  Var var;
  Range dom{tvm::ffi::UnsafeInit{}};
  IterVarType iter_type;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.IterVar", IterVarNode, Object);
};
class IterVar : public ObjectRef {
 public:
  IterVar(Var var, Range dom, IterVarType iter_type);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(IterVar, ObjectRef, IterVarNode);
};

// A rectangular region of a buffer: one Range per dimension.
class BufferRegionNode : public Object {
 public:
  Buffer buffer;
  Array<Range> region;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.BufferRegion", BufferRegionNode, Object);
};
class BufferRegion : public ObjectRef {
 public:
  BufferRegion(Buffer buffer, Array<Range> region);
  // The whole buffer.
  static BufferRegion Full(Buffer buffer);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(BufferRegion, ObjectRef, BufferRegionNode);
};

// `buffer` is bound to the region `source` of another buffer (T.match_buffer inside a block).
class MatchBufferRegionNode : public Object {
 public:
  Buffer buffer;
  BufferRegion source{tvm::ffi::UnsafeInit{}};
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.MatchBufferRegion", MatchBufferRegionNode, Object);
};
class MatchBufferRegion : public ObjectRef {
 public:
  MatchBufferRegion(Buffer buffer, BufferRegion source);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(MatchBufferRegion, ObjectRef,
                                                MatchBufferRegionNode);
};

class BlockNode : public StmtNode {
 public:
  Array<IterVar> iter_vars;
  Array<BufferRegion> reads;
  Array<BufferRegion> writes;
  String name_hint;
  Array<Buffer> alloc_buffers;
  Array<MatchBufferRegion> match_buffers;
  Optional<Stmt> init;
  Stmt body;
  Map<String, Any> annotations;
  ~BlockNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Block", BlockNode, StmtNode);
};
class Block : public Stmt {
 public:
  Block(Array<IterVar> iter_vars, Array<BufferRegion> reads, Array<BufferRegion> writes,
        String name_hint, Stmt body, Optional<Stmt> init = std::nullopt,
        Array<Buffer> alloc_buffers = {}, Array<MatchBufferRegion> match_buffers = {},
        Map<String, Any> annotations = {});
  TESSEL_DEFINE_NODE_REF(Block, Stmt);
};

class BlockRealizeNode : public StmtNode {
 public:
  Array<PrimExpr> iter_values;
  PrimExpr predicate;
  Block block{tvm::ffi::UnsafeInit{}};
  ~BlockRealizeNode();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.BlockRealize", BlockRealizeNode, StmtNode);
};
class BlockRealize : public Stmt {
 public:
  // Fails when the number of values differs from the block's iter vars or predicate is not bool.
  BlockRealize(Array<PrimExpr> iter_values, PrimExpr predicate, Block block);
  TESSEL_DEFINE_NODE_REF(BlockRealize, Stmt);
};

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_STMT_H_
