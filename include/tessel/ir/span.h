// Where a statement came from in the user's source: the source name (a file path, or "<string>"),
// and the 1-based line and column (columns count bytes) of the statement's first token, in the
// user's coordinates (the Python front end's offsets already applied).
//
// Statements carry an Optional<Span> (StmtNode::span), which structural equality and hashing
// ignore and the printer does not print. The parser sets it; a pass that rebuilds a statement may
// pass the old one's on. Errors raised after parsing name the span (see docs/ir.md, "Spans").
#ifndef TESSEL_IR_SPAN_H_
#define TESSEL_IR_SPAN_H_

#include <tessel/ir/prim_expr.h>
#include <tvm/ffi/error.h>

#include <string>

namespace tessel {
namespace ir {

class SpanNode : public Object {
 public:
  String source_name;
  int64_t line = 1;
  int64_t column = 1;

  // `source_name:line:column`.
  std::string ToString() const;

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.ir.Span", SpanNode, Object);
};
class Span : public ObjectRef {
 public:
  // Fails when line or column is below 1.
  Span(String source_name, int64_t line, int64_t column);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Span, ObjectRef, SpanNode);
};

// The location of the error now propagating, per thread. StmtFunctor::VisitStmt records the span
// of the innermost statement (that has one) being visited when an exception unwinds through it;
// the pass runner and the build entry points take it and put it in front of the message. They
// clear it first, so a location left by an error that someone caught and dropped is never used.
//
// Records `span` unless a location is recorded already (the innermost one wins).
void RecordErrorSpan(const Span& span);
// The recorded location, which is then forgotten.
Optional<Span> TakeErrorSpan();
void ClearErrorSpan();
// `error` with `file:line:col: ` put in front of its message when a location is recorded (and
// taken) and the message does not already start with it; otherwise `error` itself. The kind,
// backtrace, cause and context are kept.
tvm::ffi::Error AttachErrorSpan(const tvm::ffi::Error& error);
// Runs f() with no location recorded at the start; a tvm-ffi error it throws is rethrown through
// AttachErrorSpan. What the pass runner and the build entry points wrap around a pass or a code
// generator.
template <typename F>
auto CallNamingErrorSpan(F&& f) -> decltype(f()) {
  ClearErrorSpan();
  try {
    return f();
  } catch (const tvm::ffi::Error& e) {
    throw AttachErrorSpan(e);
  }
}

}  // namespace ir
}  // namespace tessel

#endif  // TESSEL_IR_SPAN_H_
