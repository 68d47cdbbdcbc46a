// The packed-API entry of a function: `__tvm_ffi_<symbol>`, tvm-ffi's safe-call signature. It
// checks every argument against the PrimFunc's signature (the message table of docs/codegen.md),
// binds the symbolic sizes, strides and offsets that buffers declare, and calls the kernel with
// typed pointers, scalars and the bound variables.
//
// Binding order is the contract's: parameters left to right, within a tensor its shape dimensions
// in order, then strides, then the element offset. The first occurrence of a variable binds it
// (sizes must be >= 0 and fit the variable's dtype); every later occurrence is checked.
#include <tessel/ir/functor.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/host_facts.h>
#include <tvm/ffi/error.h>

#include "codegen/c/codegen_c.h"
#include "codegen/c/launch_kernel.h"

namespace tessel {
namespace codegen {

namespace {

using namespace ir;  // NOLINT(build/namespaces)

class WrapperWriter {
 public:
  WrapperWriter(const PrimFunc& func, const std::string& symbol, NameTable* names,
                CEmitter* emitter)
      : func_(func), f_(symbol), names_(names), cg_(emitter), gpu_(TargetGPU(func)) {}

  std::string Write(const std::string& kernel_name, std::vector<std::string>* kernel_params);

 private:
  void Line(const std::string& s) { os_ << "  " << s << "\n"; }
  // `if (cond) return tsl_raise(kind, "<f>: <what>: <fmt>", args);`
  void Check(const std::string& cond, const std::string& kind, const std::string& what,
             const std::string& fmt, const std::string& args = "") {
    Line("if (" + cond + ") {");
    std::string prefix = f_ + ": " + (what.empty() ? "" : what + ": ");
    Line("  return tsl_raise(\"" + kind + "\", \"" + FormatEscape(prefix) + fmt + "\"" +
         (args.empty() ? "" : ", " + args) + ");");
    Line("}");
  }
  void Tensor(int i, const Var& param, const Buffer& buf);
  // The element count and byte size of the tensor t against transform::SizeLimitOf(buf).
  void SizeCheck(const std::string& t, const std::string& p, const Buffer& buf);
  void Scalar(int i, const Var& param);
  // Binds `expr` (a size, stride or offset the buffer declares) to the int64 C value `value`, or
  // checks it. `guard`, when set, is a C condition under which the check applies.
  void BindOrCheck(const PrimExpr& expr, const std::string& value, const std::string& what,
                   bool nonneg, const std::string& guard = "");
  void Bind(const Var& v, const std::string& value, const std::string& what, bool nonneg);
  std::string Source(const Var& v) { return bound_from_.at(v.get()); }
  std::string DeviceType() const {
    return gpu_ == "cuda" ? "kDLCUDA" : gpu_ == "metal" ? "kDLMetal" : "kDLCPU";
  }
  std::string DeviceName() const { return gpu_.empty() ? "cpu" : gpu_; }

  const PrimFunc& func_;
  std::string f_;
  NameTable* names_;
  CEmitter* cg_;
  std::ostringstream os_;
  std::unordered_map<const Object*, std::string> bound_from_;
  std::vector<Var> bound_order_;
  std::string first_tensor_, first_tensor_name_;
  // "cuda" or "metal": tensors on that GPU instead of the CPU (launch_kernel.h); the kernel gets
  // tsl_device_id.
  std::string gpu_;
};

std::string DTypeCondition(const std::string& t, DataType d) {
  auto eq = [&](int code, int bits) {
    return "(" + t + "->dtype.code == " + std::to_string(code) + " && " + t +
           "->dtype.bits == " + std::to_string(bits) + " && " + t + "->dtype.lanes == 1)";
  };
  if (d.is_bool()) return "!(" + eq(kDLBool, 8) + " || " + eq(kDLUInt, 1) + ")";
  return "!" + eq(d.code(), d.bits());
}

void WrapperWriter::Bind(const Var& v, const std::string& value, const std::string& what,
                         bool nonneg) {
  DataType t = v.dtype();
  if (!t.is_int_or_uint()) {
    TVM_FFI_THROW(ValueError) << f_ << ": " << what << ": the variable " << v->name_hint
                              << " has dtype " << t.str() << ", not an integer";
  }
  std::string lo = nonneg || t.is_uint() ? "0" : std::to_string(t.min_int());
  std::string hi = std::to_string(t.max_int());
  std::string cond;
  if (lo != std::to_string(INT64_MIN)) cond = value + " < " + lo + "LL";
  if (!(t.is_int() && t.bits() == 64)) {
    cond += (cond.empty() ? "" : " || ") + value + " > " + hi + "LL";
  }
  if (!cond.empty()) {
    Check(cond, "ValueError", what,
          FormatEscape("expected " + lo + " <= " + std::string(v->name_hint) + " <= " + hi +
                       ", got ") +
              "%lld",
          "(long long)(" + value + ")");
  }
  cg_->Define(v);
  Line(CType(t) + " " + names_->Get(v) + " = (" + CType(t) + ")(" + value + ");");
  bound_from_[v.get()] = what;
  bound_order_.push_back(v);
}

void WrapperWriter::BindOrCheck(const PrimExpr& expr, const std::string& value,
                                const std::string& what, bool nonneg, const std::string& guard) {
  std::string g = guard.empty() ? "" : guard + " && ";
  if (auto c = AsConstInt(expr)) {
    Check(g + value + " != " + std::to_string(*c) + "LL", "ValueError", what,
          FormatEscape("expected " + std::to_string(*c) + ", got ") + "%lld",
          "(long long)(" + value + ")");
    return;
  }
  if (const auto* v = expr.as<VarNode>()) {
    Var var = GetRef<Var>(v);
    if (bound_from_.count(v)) {
      Check(g + "(int64_t)" + names_->Get(var) + " != " + value, "ValueError", what,
            FormatEscape("expected " + std::string(v->name_hint) + " = ") + "%lld" +
                FormatEscape(" (from " + Source(var) + "), got ") + "%lld",
            "(long long)" + names_->Get(var) + ", (long long)(" + value + ")");
    } else {
      Bind(var, value, what, nonneg);
    }
    return;
  }
  // An expression: every variable bound (check it), or one unbound variable it can be solved for.
  std::vector<Var> vars, unbound;
  PostOrderVisit(expr, [&](const ObjectRef& n) {
    if (const auto* v = n.as<VarNode>()) {
      for (const Var& seen : vars) {
        if (seen.get() == v) return;
      }
      vars.push_back(GetRef<Var>(v));
      if (!bound_from_.count(v)) unbound.push_back(GetRef<Var>(v));
    }
  });
  std::string text = AsText(expr);
  if (unbound.size() == 1) {
    // v * c, c * v, v + c, v - c with a constant c: the forms lowering and users write.
    const Var& v = unbound[0];
    auto is_v = [&](const PrimExpr& e) { return e.same_as(v); };
    std::optional<int64_t> mul, add;
    if (const auto* m = expr.as<MulNode>()) {
      if (is_v(m->a)) mul = AsConstInt(m->b);
      if (is_v(m->b)) mul = AsConstInt(m->a);
    } else if (const auto* a = expr.as<AddNode>()) {
      if (is_v(a->a)) add = AsConstInt(a->b);
      if (is_v(a->b)) add = AsConstInt(a->a);
    } else if (const auto* s = expr.as<SubNode>()) {
      if (is_v(s->a)) {
        if (auto c = AsConstInt(s->b)) add = -*c;
      }
    }
    if (mul && *mul > 0) {
      Check(
          g + value + " % " + std::to_string(*mul) + " != 0", "ValueError", what,
          FormatEscape("expected " + text + " (a multiple of " + std::to_string(*mul) + "), got ") +
              "%lld",
          "(long long)(" + value + ")");
      Bind(v, "(" + value + ") / " + std::to_string(*mul), what, nonneg);
      return;
    }
    if (add) {
      Bind(v, "(" + value + ") - " + std::to_string(*add), what, nonneg);
      return;
    }
  }
  if (!unbound.empty()) {
    std::string names;
    for (const Var& v : unbound) names += (names.empty() ? "" : ", ") + std::string(v->name_hint);
    TVM_FFI_THROW(ValueError) << f_ << ": " << what << ": cannot bind the size " << text
                              << " from the argument (" << names
                              << " not bound by an earlier parameter or dimension)";
  }
  std::string sources;
  for (const Var& v : vars) {
    sources += (sources.empty() ? "" : ", ") + std::string(v->name_hint) + " from " + Source(v);
  }
  std::string c = "(int64_t)(" + cg_->Expr(expr) + ")";
  Check(g + c + " != " + value, "ValueError", what,
        FormatEscape("expected " + text + " = ") + "%lld" +
            FormatEscape(" (" + sources + "), got ") + "%lld",
        "(long long)" + c + ", (long long)(" + value + ")");
}

void WrapperWriter::Tensor(int i, const Var& param, const Buffer& buf) {
  std::string p = buf->name;
  std::string t = "tsl_t" + std::to_string(i);
  std::string arg = "&args[" + std::to_string(i) + "]";
  Line("DLTensor* " + t + " = tsl_arg_tensor(" + arg + ");");
  Check(t + " == NULL", "TypeError", p, "expected a tensor, got %s",
        "tsl_type_name(" + arg + ", tsl_buf, sizeof tsl_buf)");
  int ndim = static_cast<int>(buf->shape.size());
  Check(t + "->ndim != " + std::to_string(ndim), "ValueError", p + ".ndim",
        "expected " + std::to_string(ndim) + ", got %d", "(int)" + t + "->ndim");
  Check(DTypeCondition(t, buf->dtype), "TypeError", p + ".dtype",
        FormatEscape("expected " + buf->dtype.str() + ", got ") + "%s",
        "tsl_dtype_str(" + t + "->dtype, tsl_buf, sizeof tsl_buf)");
  std::string dev = "tsl_device_str(" + t + "->device, tsl_buf, sizeof tsl_buf)";
  if (first_tensor_.empty()) {
    Check(t + "->device.device_type != " + DeviceType(), "ValueError", p + ".device",
          "expected " + DeviceName() + ", got %s", dev);
    first_tensor_ = t;
    first_tensor_name_ = p;
  } else {
    Check(t + "->device.device_type != " + DeviceType() + " || " + t +
              "->device.device_id != " + first_tensor_ + "->device.device_id",
          "ValueError", p + ".device",
          "expected " + DeviceName() + ":%d" +
              FormatEscape(" (the device of " + first_tensor_name_ + "), got ") + "%s",
          "(int)" + first_tensor_ + "->device.device_id, " + dev);
  }
  for (int d = 0; d < ndim; ++d) {
    BindOrCheck(buf->shape[d], t + "->shape[" + std::to_string(d) + "]",
                p + ".shape[" + std::to_string(d) + "]", /*nonneg=*/true);
  }
  SizeCheck(t, p, buf);
  if (buf->strides.empty()) {
    Line("if (tsl_check_compact(" + CStringLiteral(f_) + ", " + CStringLiteral(p) + ", " + t +
         ") != 0) return -1;");
  } else {
    for (int d = 0; d < ndim; ++d) {
      std::string ds = std::to_string(d);
      bool is_var = buf->strides[d].as<VarNode>() != nullptr;
      BindOrCheck(buf->strides[d], "tsl_stride(" + t + ", " + ds + ")", p + ".strides[" + ds + "]",
                  /*nonneg=*/false, is_var ? "" : t + "->shape[" + ds + "] != 1");
    }
  }
  int64_t elem_bytes = buf->dtype.is_bool() ? 1 : buf->dtype.bytes();
  std::string eb = std::to_string(elem_bytes);
  if (elem_bytes > 1) {
    Check(t + "->byte_offset % " + eb + " != 0", "ValueError", p + ".byte_offset",
          "expected a multiple of " + eb + ", got %llu",
          "(unsigned long long)" + t + "->byte_offset");
  }
  auto eo = buf->elem_offset.defined() ? AsConstInt(buf->elem_offset) : std::optional<int64_t>(0);
  bool zero_offset = eo && *eo == 0;
  if (!zero_offset) {
    BindOrCheck(buf->elem_offset, "(int64_t)(" + t + "->byte_offset / " + eb + ")",
                p + ".elem_offset", /*nonneg=*/true);
    if (buf->offset_factor > 1 && buf->elem_offset.as<VarNode>()) {
      std::string of = std::to_string(buf->offset_factor);
      std::string v = names_->Get(GetRef<Var>(buf->elem_offset.as<VarNode>()));
      Check(v + " % " + of + " != 0", "ValueError", p + ".elem_offset",
            "expected a multiple of " + of + ", got %lld", "(long long)" + v);
    }
  }
  if (!buf->strides.empty() || !zero_offset) {
    // The kernel's index arithmetic wraps in the index dtype; compact buffers without an offset
    // are covered by the element count already.
    transform::BufferSizeLimit lim = transform::SizeLimitOf(buf);
    std::string offset = zero_offset ? "0" : "(int64_t)(" + t + "->byte_offset / " + eb + ")";
    Line("if (tsl_check_span(" + CStringLiteral(f_) + ", " + CStringLiteral(p) + ", " +
         CStringLiteral(buf->strides.empty() ? "elem_offset" : "strides") + ", " + t + ", " +
         offset + ", " + std::to_string(lim.max_elements) + "LL, \"" + lim.index_dtype.str() +
         "\") != 0) return -1;");
  }
  Check(t + "->data == NULL && tsl_numel(" + t + ") != 0", "ValueError", p + ".data",
        "expected a non-null pointer, got NULL");
  if (gpu_ == "metal") {
    // data is an id<MTLBuffer>, not an address: the kernel gets the handle and the byte offset
    // (setBuffer:offset:), the offset left to the indices when the buffer declares elem_offset.
    std::string ref = "tsl_mb" + std::to_string(i);
    Line("tsl_metal_buffer_t " + ref + " = {" + t + "->data, " +
         (zero_offset ? t + "->byte_offset" : std::string("0")) + "};");
    cg_->Define(buf->data, buf->dtype);
    names_->Alias(param, buf->data);
    cg_->Define(param);
    Line("void* " + names_->Get(buf->data) + " = &" + ref + ";");
    return;
  }
  std::string addr = "((uintptr_t)" + t + "->data + (uintptr_t)" + t + "->byte_offset)";
  if (elem_bytes > 1) {
    Check(addr + " % " + eb + " != 0", "ValueError", p + ".data",
          "expected " + eb + "-byte alignment, got address 0x%llx", "(unsigned long long)" + addr);
  }
  std::string st = StorageCType(buf->dtype);
  cg_->Define(buf->data, buf->dtype);
  names_->Alias(param, buf->data);
  cg_->Define(param);
  std::string ptr = zero_offset ? "(" + st + "*)((char*)" + t + "->data + " + t + "->byte_offset)"
                                : "(" + st + "*)" + t + "->data";
  Line(st + "* " + names_->Get(buf->data) + " = " + ptr + ";");
}

void WrapperWriter::SizeCheck(const std::string& t, const std::string& p, const Buffer& buf) {
  transform::BufferSizeLimit lim = transform::SizeLimitOf(buf);
  // A constant shape whose product fits needs no code.
  bool constant = true;
  __int128 count = 1;
  for (const PrimExpr& e : buf->shape) {
    auto c = AsConstInt(e);
    if (!c || *c < 0) {
      constant = false;
      break;
    }
    count *= *c;
    if (count > static_cast<__int128>(lim.max_elements)) break;
  }
  if (constant && count <= lim.max_elements && count <= lim.max_bytes / lim.elem_bytes) return;
  Line("if (tsl_check_size(" + CStringLiteral(f_) + ", " + CStringLiteral(p) + ", " + t + ", " +
       std::to_string(lim.max_elements) + "LL, " + std::to_string(lim.elem_bytes) + "LL, \"" +
       lim.index_dtype.str() + "\") != 0) return -1;");
}

void WrapperWriter::Scalar(int i, const Var& param) {
  std::string p = param->name_hint;
  std::string a = "args[" + std::to_string(i) + "]";
  std::string tname = "tsl_type_name(&" + a + ", tsl_buf, sizeof tsl_buf)";
  DataType t = param.dtype();
  std::string name = names_->Get(param);
  if (t.is_handle()) {
    if (gpu_ == "metal") {
      Unsupported(
          "a pointer parameter " + p + " that is not a buffer (a metal kernel takes tensors)", f_);
    }
    cg_->Define(param);
    std::string tt = "tsl_h" + std::to_string(i);
    Line("void* " + name + " = NULL;");
    Line("if (" + a + ".type_index == kTVMFFIOpaquePtr) {");
    Line("  " + name + " = " + a + ".v_ptr;");
    Line("} else if (" + a + ".type_index != kTVMFFINone) {");
    Line("  DLTensor* " + tt + " = tsl_arg_tensor(&" + a + ");");
    Line("  if (" + tt + " == NULL) {");
    Line("    return tsl_raise(\"TypeError\", \"" +
         FormatEscape(f_ + ": " + p + ": expected an opaque pointer, got ") + "%s\", " + tname +
         ");");
    Line("  }");
    Line("  " + name + " = (char*)" + tt + "->data + " + tt + "->byte_offset;");
    Line("}");
    return;
  }
  if (t.is_vector()) Unsupported("a vector parameter " + p, f_);
  std::string value;
  if (t.is_int_or_uint() || t.is_bool()) {
    // An int is an int to the caller, however tvm-ffi carries it: a range error, not a type error.
    Check("tsl_is_big_int(&" + a + ")", "ValueError", p,
          FormatEscape("expected " + std::string(t.is_int() ? "an " : "a ") + t.str() +
                       " value, got an int outside int64"));
    Check(a + ".type_index != kTVMFFIInt && " + a + ".type_index != kTVMFFIBool", "TypeError", p,
          "expected int, got %s", tname);
    std::string v = a + ".v_int64";
    std::string lo = t.is_int() ? std::to_string(t.min_int()) : "0";
    std::string hi = std::to_string(t.max_int());
    std::string cond;
    if (!(t.is_int() && t.bits() == 64)) cond = v + " < " + lo + "LL || " + v + " > " + hi + "LL";
    if (t.is_uint() && t.bits() == 64) cond = v + " < 0";
    if (!cond.empty()) {
      std::string article = t.is_int() ? "an " : "a ";
      Check(cond, "ValueError", p,
            FormatEscape("expected " + article + t.str() + " value, got ") + "%lld",
            "(long long)" + v);
    }
    value = "(" + CType(t) + ")" + v;
  } else if (t.is_floating()) {
    Check(a + ".type_index != kTVMFFIFloat && " + a + ".type_index != kTVMFFIInt", "TypeError", p,
          "expected float, got %s", tname);
    std::string d =
        "(" + a + ".type_index == kTVMFFIFloat ? " + a + ".v_float64 : (double)" + a + ".v_int64)";
    if (t.bits() == 16) {
      value = std::string(t.is_bfloat() ? "tsl_f64_to_bf16" : "tsl_f64_to_f16") + d;
    } else {
      value = "(" + CType(t) + ")" + d;
    }
  } else {
    Unsupported("a parameter " + p + " of dtype " + t.str(), f_);
  }
  if (bound_from_.count(param.get())) {
    Check("(int64_t)" + name + " != (int64_t)" + value, "ValueError", p,
          FormatEscape("expected " + p + " = ") + "%lld" +
              FormatEscape(" (from " + Source(param) + "), got ") + "%lld",
          "(long long)" + name + ", (long long)" + value);
    return;
  }
  cg_->Define(param);
  Line(CType(t) + " " + name + " = " + value + ";");
  bound_from_[param.get()] = p;
}

std::string WrapperWriter::Write(const std::string& kernel_name,
                                 std::vector<std::string>* kernel_params) {
  int n = static_cast<int>(func_->params.size());
  Line("char tsl_buf[256];");
  Line("(void)self;");
  Line("(void)result;");
  Line("(void)tsl_buf;");
  Check("num_args != " + std::to_string(n), "TypeError", "",
        "expected " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", got %d",
        "(int)num_args");
  bool noalias = false;
  // TVM 0.25 and later spell the key "tirx.noalias".
  for (const char* key : {"tir.noalias", "tirx.noalias"}) {
    auto v = func_->attrs.Get(key);
    if (!v) continue;
    if (auto b = v->try_cast<bool>()) noalias = noalias || *b;
  }
  std::vector<std::string> call_args;
  for (int i = 0; i < n; ++i) {
    const Var& param = func_->params[i];
    if (auto buf = func_->buffer_map.Get(param)) {
      Tensor(i, param, *buf);
      std::string name = names_->Get((*buf)->data);
      kernel_params->push_back(StorageCType((*buf)->dtype) + "* " + (noalias ? "restrict " : "") +
                               name);
      call_args.push_back(name);
    } else {
      Scalar(i, param);
      kernel_params->push_back(cg_->DeclType(param) + " " + names_->Get(param));
      call_args.push_back(names_->Get(param));
    }
  }
  for (const Var& v : bound_order_) {
    bool is_param = false;
    for (const Var& p : func_->params) is_param = is_param || p.same_as(v);
    if (is_param) continue;
    kernel_params->push_back(CType(v.dtype()) + " " + names_->Get(v));
    call_args.push_back(names_->Get(v));
  }
  if (!gpu_.empty()) {
    // Launches go to the device of the tensors (0 when the function takes none).
    kernel_params->push_back("int32_t tsl_device_id");
    call_args.push_back(first_tensor_.empty() ? "0"
                                              : "(int32_t)" + first_tensor_ + "->device.device_id");
  }
  DataType rt = func_->ret_type;
  if (!rt.is_void()) {
    if (!rt.is_scalar() || rt.is_handle()) Unsupported("a return type " + rt.str(), f_);
    kernel_params->push_back(CType(rt) + "* tsl_ret_value");
    call_args.push_back("&tsl_ret");
  }
  std::string call = kernel_name + "(";
  for (size_t i = 0; i < call_args.size(); ++i) call += (i ? ", " : "") + call_args[i];
  call += ")";
  if (rt.is_void()) {
    Line("return " + call + ";");
  } else {
    // A function that ends without ret returns the dtype's zero.
    Line(CType(rt) + " tsl_ret = 0;");
    Line("if (" + call + " != 0) return -1;");
    if (rt.is_bool()) {
      Line("result->type_index = kTVMFFIBool;");
      Line("result->zero_padding = 0;");
      Line("result->v_int64 = tsl_ret ? 1 : 0;");
    } else if (rt.is_int_or_uint()) {
      Line("result->type_index = kTVMFFIInt;");
      Line("result->zero_padding = 0;");
      Line("result->v_int64 = (int64_t)tsl_ret;");
    } else {
      std::string f = rt.bits() == 16 ? std::string(rt.is_bfloat() ? "tsl_bf16_to_f32(tsl_ret)"
                                                                   : "tsl_f16_to_f32(tsl_ret)")
                                      : "tsl_ret";
      Line("result->type_index = kTVMFFIFloat;");
      Line("result->zero_padding = 0;");
      Line("result->v_float64 = (double)" + f + ";");
    }
    Line("return 0;");
  }
  return "TVM_FFI_DLL_EXPORT int __tvm_ffi_" + f_ +
         "(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {\n" +
         os_.str() + "}\n";
}

}  // namespace

std::string HostWrapper(const ir::PrimFunc& func, const std::string& symbol,
                        const std::string& kernel_name, NameTable* names, CEmitter* emitter,
                        std::vector<std::string>* kernel_params) {
  return WrapperWriter(func, symbol, names, emitter).Write(kernel_name, kernel_params);
}

}  // namespace codegen
}  // namespace tessel
