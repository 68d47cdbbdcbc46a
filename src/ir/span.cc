// Source spans of statements.
#include <tessel/ir/span.h>
#include <tvm/ffi/error.h>

namespace tessel {
namespace ir {

Span::Span(String source_name, int64_t line, int64_t column) {
  if (line < 1 || column < 1) {
    TVM_FFI_THROW(ValueError) << "Span: line and column are 1-based, got " << line << ":" << column;
  }
  auto n = make_object<SpanNode>();
  n->source_name = std::move(source_name);
  n->line = line;
  n->column = column;
  data_ = std::move(n);
}

std::string SpanNode::ToString() const {
  return std::string(source_name) + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {
thread_local Optional<Span> error_span;
}  // namespace

void RecordErrorSpan(const Span& span) {
  if (!error_span.has_value()) error_span = span;
}

Optional<Span> TakeErrorSpan() {
  Optional<Span> out = std::move(error_span);
  error_span = std::nullopt;
  return out;
}

void ClearErrorSpan() { error_span = std::nullopt; }

tvm::ffi::Error AttachErrorSpan(const tvm::ffi::Error& error) {
  Optional<Span> span = TakeErrorSpan();
  if (!span.has_value()) return error;
  std::string prefix = (*span)->ToString() + ": ";
  std::string message = error.message();
  if (message.rfind(prefix, 0) == 0) return error;
  return tvm::ffi::Error(error.kind(), prefix + message, error.backtrace(), error.cause_chain(),
                         error.extra_context());
}

}  // namespace ir
}  // namespace tessel
