// The C prelude (see c_prelude.h). It is one fixed text so that two builds of the same module give
// byte-identical C; helpers a kernel does not use cost nothing (static inline, marked unused).
#include "codegen/c/c_prelude.h"

#include <string>

namespace tessel {
namespace codegen {

namespace {

const char* const kHeader = R"TSL(#include <tvm/ffi/c_api.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdarg.h>

/* Vector helpers are static, so passing wide vectors without AVX enabled never crosses a library
   boundary: the psABI note about it is noise. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/* Helpers are static and unused ones are normal: no -Wunused-function for them. */
#define TSL_HELPER static inline __attribute__((unused))

)TSL";

// Shared with the CUDA prelude (src/codegen/cuda), which defines TSL_HELPER for device code.
const char* const kIntArithmetic = R"TSL(/* ---- integer arithmetic ----
   IR integers wrap modulo 2^bits while C signed overflow is undefined (and narrow types promote to
   int), so +, -, *, << compute in an unsigned type at least as wide and convert back. Division by
   -1 is special-cased because INT_MIN / -1 traps on x86 although the IR result (wrapped) exists. */
#define TSL_INT_OPS(S, T, W)                                                \
  TSL_HELPER T tsl_add_##S(T a, T b) { return (T)((W)a + (W)b); }        \
  TSL_HELPER T tsl_sub_##S(T a, T b) { return (T)((W)a - (W)b); }        \
  TSL_HELPER T tsl_mul_##S(T a, T b) { return (T)((W)a * (W)b); }        \
  TSL_HELPER T tsl_shl_##S(T a, T b) { return (T)((W)a << b); }          \
  TSL_HELPER T tsl_min_##S(T a, T b) { return a < b ? a : b; }           \
  TSL_HELPER T tsl_max_##S(T a, T b) { return a > b ? a : b; }
#define TSL_SIGNED_DIV(S, T, W)                                             \
  TSL_HELPER T tsl_truncdiv_##S(T a, T b) {                              \
    return b == -1 ? (T)(0 - (W)a) : (T)(a / b);                            \
  }                                                                         \
  TSL_HELPER T tsl_truncmod_##S(T a, T b) { return b == -1 ? (T)0 : (T)(a % b); } \
  TSL_HELPER T tsl_floordiv_##S(T a, T b) {                              \
    if (b == -1) return (T)(0 - (W)a);                                      \
    T q = (T)(a / b);                                                       \
    return (T)(q - ((T)(a % b) != 0 && ((a < 0) != (b < 0))));              \
  }                                                                         \
  TSL_HELPER T tsl_floormod_##S(T a, T b) {                              \
    if (b == -1) return (T)0;                                               \
    T r = (T)(a % b);                                                       \
    return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;               \
  }                                                                         \
  TSL_HELPER T tsl_abs_##S(T a) { return a < 0 ? (T)(0 - (W)a) : a; }
#define TSL_UNSIGNED_DIV(S, T)                                              \
  TSL_HELPER T tsl_truncdiv_##S(T a, T b) { return (T)(a / b); }         \
  TSL_HELPER T tsl_truncmod_##S(T a, T b) { return (T)(a % b); }         \
  TSL_HELPER T tsl_floordiv_##S(T a, T b) { return (T)(a / b); }         \
  TSL_HELPER T tsl_floormod_##S(T a, T b) { return (T)(a % b); }         \
  TSL_HELPER T tsl_abs_##S(T a) { return a; }
TSL_INT_OPS(i8, int8_t, uint32_t)
TSL_INT_OPS(i16, int16_t, uint32_t)
TSL_INT_OPS(i32, int32_t, uint32_t)
TSL_INT_OPS(i64, int64_t, uint64_t)
TSL_INT_OPS(u8, uint8_t, uint32_t)
TSL_INT_OPS(u16, uint16_t, uint32_t)
TSL_INT_OPS(u32, uint32_t, uint32_t)
TSL_INT_OPS(u64, uint64_t, uint64_t)
TSL_SIGNED_DIV(i8, int8_t, uint32_t)
TSL_SIGNED_DIV(i16, int16_t, uint32_t)
TSL_SIGNED_DIV(i32, int32_t, uint32_t)
TSL_SIGNED_DIV(i64, int64_t, uint64_t)
TSL_UNSIGNED_DIV(u8, uint8_t)
TSL_UNSIGNED_DIV(u16, uint16_t)
TSL_UNSIGNED_DIV(u32, uint32_t)
TSL_UNSIGNED_DIV(u64, uint64_t)

)TSL";

// The float division helpers (C and CUDA; Metal has its own, without double).
const char* const kFloatMinMax = R"TSL(/* ---- floating point ----
   max(a, b) is a > b ? a : b and min(a, b) is a < b ? a : b (ir/expr.h): when either operand is
   NaN, or both are zeros, the result is b. Plain selects, which compilers vectorize (x86
   maxps/minps compute exactly this). */
TSL_HELPER float tsl_max_f32(float a, float b) { return a > b ? a : b; }
TSL_HELPER float tsl_min_f32(float a, float b) { return a < b ? a : b; }
TSL_HELPER double tsl_max_f64(double a, double b) { return a > b ? a : b; }
TSL_HELPER double tsl_min_f64(double a, double b) { return a < b ? a : b; }
)TSL";

// CUDA with -fast-math: one FMNMX instead of a compare and a select (a NaN operand loses).
const char* const kFastFloatMinMax = R"TSL(/* ---- floating point (fast math) ----
   max and min are fmaxf / fminf: with one NaN operand the result is the other operand. */
TSL_HELPER float tsl_max_f32(float a, float b) { return fmaxf(a, b); }
TSL_HELPER float tsl_min_f32(float a, float b) { return fminf(a, b); }
TSL_HELPER double tsl_max_f64(double a, double b) { return fmax(a, b); }
TSL_HELPER double tsl_min_f64(double a, double b) { return fmin(a, b); }
)TSL";

const char* const kFloatArithmetic =
    R"TSL(TSL_HELPER float tsl_floordiv_f32(float a, float b) { return floorf(a / b); }
TSL_HELPER float tsl_floormod_f32(float a, float b) { return a - floorf(a / b) * b; }
TSL_HELPER double tsl_floordiv_f64(double a, double b) { return floor(a / b); }
TSL_HELPER double tsl_floormod_f64(double a, double b) { return a - floor(a / b) * b; }

)TSL";

const char* const kRest =
    R"TSL(/* float16 and bfloat16 are stored as their bits (uint16_t) and computed in float: float has at
   least 2p+2 significand bits for both, so one operation in float rounded once to the small type
   equals the correctly rounded small-type operation. tsl_f64_to_small rounds to nearest even;
   man/exp are the target format's fraction and exponent widths. */
TSL_HELPER uint16_t tsl_f64_to_small(double x, int man, int exp) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  uint32_t sign = (uint32_t)(u >> 63) << (man + exp);
  uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
  uint32_t exp_all = ((1u << exp) - 1u) << man;
  int bias = (1 << (exp - 1)) - 1;
  if (a >= 0x7FF0000000000000ull) {
    if (a == 0x7FF0000000000000ull) return (uint16_t)(sign | exp_all);
    return (uint16_t)(sign | exp_all | (1u << (man - 1)));
  }
  int e = (int)(a >> 52) - 1023;
  uint64_t m = a & ((1ull << 52) - 1);
  if ((a >> 52) != 0) {
    m |= 1ull << 52;
  } else {
    e = -1022;
  }
  int shift = 52 - man;
  if (e < 1 - bias) shift += (1 - bias) - e;
  if (shift > 53) return (uint16_t)sign;
  uint64_t kept = m >> shift;
  uint64_t rem = m & ((1ull << shift) - 1);
  uint64_t half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (kept & 1u))) kept++;
  uint64_t bits;
  if (e >= 1 - bias) {
    bits = ((uint64_t)(e + bias) << man) + (kept - (1ull << man));
  } else {
    bits = kept;
  }
  if (bits >= exp_all) return (uint16_t)(sign | exp_all);
  return (uint16_t)(sign | (uint32_t)bits);
}
TSL_HELPER uint16_t tsl_f64_to_f16(double x) { return tsl_f64_to_small(x, 10, 5); }
TSL_HELPER uint16_t tsl_f64_to_bf16(double x) { return tsl_f64_to_small(x, 7, 8); }
TSL_HELPER uint16_t tsl_f32_to_f16(float x) { return tsl_f64_to_small((double)x, 10, 5); }
TSL_HELPER uint16_t tsl_f32_to_bf16(float x) { return tsl_f64_to_small((double)x, 7, 8); }
/* Exact, built from the bits with selects only (no call, no branch), so loops of it vectorize:
   a normal number rebiases its exponent, a subnormal is m * 2^-24 (exact in float), infinities
   and NaNs keep their fraction (a NaN stays a NaN); the sign bit is copied. */
TSL_HELPER float tsl_f16_to_f32(uint16_t h) {
  uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  float sub = (float)m * 5.9604644775390625e-8f;
  uint32_t sub_bits, bits;
  memcpy(&sub_bits, &sub, sizeof sub_bits);
  bits = e == 0x1Fu ? (0x7F800000u | (m << 13)) : e == 0 ? sub_bits : (((e + 112u) << 23) | (m << 13));
  bits |= (uint32_t)(h & 0x8000u) << 16;
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}
TSL_HELPER float tsl_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* ---- atomic_add_at ----
   Integers use __atomic_fetch_add directly. C has no atomic float add, so a float's bits are
   swapped for those of the sum until no other thread wrote in between (float16/bfloat16 values
   are their bits, summed in float). Relaxed: the adds need no order among themselves, and the
   end of the parallel loop orders them before the kernel returns. */
TSL_HELPER void tsl_atomic_add_f32(void* p, float v) {
  uint32_t old = __atomic_load_n((uint32_t*)p, __ATOMIC_RELAXED), bits;
  do {
    float x;
    memcpy(&x, &old, sizeof x);
    x += v;
    memcpy(&bits, &x, sizeof bits);
  } while (!__atomic_compare_exchange_n((uint32_t*)p, &old, bits, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
}
TSL_HELPER void tsl_atomic_add_f64(void* p, double v) {
  uint64_t old = __atomic_load_n((uint64_t*)p, __ATOMIC_RELAXED), bits;
  do {
    double x;
    memcpy(&x, &old, sizeof x);
    x += v;
    memcpy(&bits, &x, sizeof bits);
  } while (!__atomic_compare_exchange_n((uint64_t*)p, &old, bits, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
}
TSL_HELPER void tsl_atomic_add_f16(void* p, uint16_t v) {
  uint16_t old = __atomic_load_n((uint16_t*)p, __ATOMIC_RELAXED), bits;
  do {
    bits = tsl_f32_to_f16(tsl_f16_to_f32(old) + tsl_f16_to_f32(v));
  } while (!__atomic_compare_exchange_n((uint16_t*)p, &old, bits, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
}
TSL_HELPER void tsl_atomic_add_bf16(void* p, uint16_t v) {
  uint16_t old = __atomic_load_n((uint16_t*)p, __ATOMIC_RELAXED), bits;
  do {
    bits = tsl_f32_to_bf16(tsl_bf16_to_f32(old) + tsl_bf16_to_f32(v));
  } while (!__atomic_compare_exchange_n((uint16_t*)p, &old, bits, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
}

/* ---- errors ----
   The kernel collects its first error in a tsl_error_t and raises it on the calling thread when
   it returns: tvm-ffi keeps the raised error per thread, so an OpenMP worker must not raise. */
typedef struct {
  int failed;
  const char* kind;
  char message[2048];
} tsl_error_t;

TSL_HELPER void tsl_fail(tsl_error_t* err, const char* kind, const char* fmt, ...) {
  int first = 0;
#ifdef _OPENMP
#pragma omp critical(tsl_error)
#endif
  {
    if (!err->failed) {
      err->failed = 1;
      first = 1;
    }
  }
  if (!first) return;
  err->kind = kind;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

TSL_HELPER int tsl_raise(const char* kind, const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  TVMFFIErrorSetRaisedFromCStr(kind, buf);
  return -1;
}

TSL_HELPER int32_t tsl_finish(const tsl_error_t* err) {
  if (!err->failed) return 0;
  TVMFFIErrorSetRaisedFromCStr(err->kind, err->message);
  return -1;
}

/* Storage for Allocate statements that do not go on the stack: 64-byte aligned (a cache line, the
   widest vector register), size rounded up because aligned_alloc wants a multiple. */
TSL_HELPER void* tsl_alloc(int64_t bytes) {
  if (bytes < 0 || (uint64_t)bytes > (uint64_t)SIZE_MAX - 64) return NULL;
  size_t n = ((size_t)bytes + 63u) & ~(size_t)63u;
  return aligned_alloc(64, n == 0 ? 64 : n);
}

/* ---- host wrapper helpers ---- */
/* A Metal buffer argument: the tensor's id<MTLBuffer> and the byte offset to bind it at; the same
   layout as TesselMetalBufferRef (include/tessel/runtime/metal_context.h). */
typedef struct {
  void* buffer;
  uint64_t offset;
} tsl_metal_buffer_t;

TSL_HELPER DLTensor* tsl_arg_tensor(const TVMFFIAny* a) {
  const TVMFFIObject* obj = NULL;
  if (a->type_index == kTVMFFIDLTensorPtr) return (DLTensor*)a->v_ptr;
  if (a->type_index == kTVMFFITensor) obj = a->v_obj;
  if (a->type_index == kTVMFFIObjectRValueRef && a->v_ptr != NULL) obj = *(TVMFFIObject**)a->v_ptr;
  if (obj != NULL && obj->type_index == kTVMFFITensor) {
    return (DLTensor*)((char*)obj + sizeof(TVMFFIObject));
  }
  return NULL;
}

/* Whether an argument is an integer outside int64: tvm-ffi passes a Python int that does not fit
   in v_int64 as an ffi.BigInt object, which a caller knows only as an int. */
TSL_HELPER int tsl_is_big_int(const TVMFFIAny* a) {
  int32_t t = a->type_index;
  const TVMFFITypeInfo* info;
  if (t == kTVMFFIObjectRValueRef && a->v_ptr != NULL && *(TVMFFIObject**)a->v_ptr != NULL) {
    t = (*(TVMFFIObject**)a->v_ptr)->type_index;
  }
  info = t >= kTVMFFIStaticObjectBegin ? TVMFFIGetTypeInfo(t) : NULL;
  return info != NULL && info->type_key.size == 10 &&
         memcmp(info->type_key.data, "ffi.BigInt", 10) == 0;
}

/* The name a caller sees for the type of an argument, for error messages. */
TSL_HELPER const char* tsl_type_name(const TVMFFIAny* a, char* buf, size_t n) {
  int32_t t = a->type_index;
  if (t == kTVMFFIObjectRValueRef && a->v_ptr != NULL && *(TVMFFIObject**)a->v_ptr != NULL) {
    t = (*(TVMFFIObject**)a->v_ptr)->type_index;
  }
  switch (t) {
    case kTVMFFINone: return "None";
    case kTVMFFIInt: return "int";
    case kTVMFFIBool: return "bool";
    case kTVMFFIFloat: return "float";
    case kTVMFFIOpaquePtr: return "opaque pointer";
    case kTVMFFIDataType: return "dtype";
    case kTVMFFIDevice: return "device";
    case kTVMFFIDLTensorPtr: return "DLTensor*";
    case kTVMFFIRawStr:
    case kTVMFFISmallStr:
    case kTVMFFIStr: return "str";
    case kTVMFFIByteArrayPtr:
    case kTVMFFISmallBytes:
    case kTVMFFIBytes: return "bytes";
    default: break;
  }
  if (tsl_is_big_int(a)) return "int outside int64";
  const TVMFFITypeInfo* info = t >= kTVMFFIStaticObjectBegin ? TVMFFIGetTypeInfo(t) : NULL;
  if (info != NULL) {
    snprintf(buf, n, "%.*s", (int)info->type_key.size, info->type_key.data);
  } else {
    snprintf(buf, n, "type index %d", (int)t);
  }
  return buf;
}

TSL_HELPER const char* tsl_dtype_str(DLDataType t, char* buf, size_t n) {
  const char* code = NULL;
  switch (t.code) {
    case kDLInt: code = "int"; break;
    case kDLUInt: code = "uint"; break;
    case kDLFloat: code = "float"; break;
    case kDLBfloat: code = "bfloat"; break;
    default: break;
  }
  if (t.code == kDLBool || (t.code == kDLUInt && t.bits == 1)) {
    snprintf(buf, n, "bool");
  } else if (code != NULL) {
    snprintf(buf, n, "%s%d", code, (int)t.bits);
  } else {
    snprintf(buf, n, "dlpack(code=%d, bits=%d)", (int)t.code, (int)t.bits);
  }
  if (t.lanes != 1) {
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "x%d", (int)t.lanes);
  }
  return buf;
}

TSL_HELPER const char* tsl_device_str(DLDevice d, char* buf, size_t n) {
  static const char* names[] = {"", "cpu", "cuda", "cuda_host", "opencl", "", "", "vulkan",
                                "metal", "vpi", "rocm", "rocm_host", "ext_dev", "cuda_managed",
                                "oneapi", "webgpu", "hexagon", "maia", "trn"};
  int t = (int)d.device_type;
  if (t > 0 && t < (int)(sizeof names / sizeof names[0]) && names[t][0] != '\0') {
    snprintf(buf, n, "%s:%d", names[t], (int)d.device_id);
  } else {
    snprintf(buf, n, "device_type%d:%d", t, (int)d.device_id);
  }
  return buf;
}

/* The stride of dimension d: declared, or compact when the tensor has none. */
TSL_HELPER int64_t tsl_stride(const DLTensor* t, int d) {
  if (t->strides != NULL) return t->strides[d];
  int64_t s = 1;
  for (int k = t->ndim - 1; k > d; --k) s *= t->shape[k];
  return s;
}

TSL_HELPER int64_t tsl_numel(const DLTensor* t) {
  int64_t n = 1;
  for (int k = 0; k < t->ndim; ++k) n *= t->shape[k];
  return n;
}

/* The element count of t, the exact product of its extents (each checked >= 0), must fit the
   buffer's index dtype (at most max_elements) and its byte size int64_t. A tensor without
   elements always fits. */
TSL_HELPER int tsl_check_size(const char* f, const char* p, const DLTensor* t,
                              int64_t max_elements, int64_t elem_bytes, const char* index_type) {
  uint64_t n = 1;
  int over = 0;
  for (int d = 0; d < t->ndim; ++d) {
    if (t->shape[d] < 0) {
      return tsl_raise("ValueError", "%s: %s.shape[%d]: expected an extent >= 0, got %lld", f, p,
                       d, (long long)t->shape[d]);
    }
  }
  for (int d = 0; d < t->ndim; ++d) {
    if (t->shape[d] == 0) return 0;
  }
  for (int d = 0; d < t->ndim && !over; ++d) {
    uint64_t s = (uint64_t)t->shape[d];
    if (n > UINT64_MAX / s) {
      over = 1;
    } else {
      n *= s;
    }
  }
  if (over || n > (uint64_t)max_elements) {
    char dims[192];
    size_t len = 0;
    dims[0] = 0;
    for (int d = 0; d < t->ndim && len + 48 < sizeof dims; ++d) {
      len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%lld", d ? " * " : "",
                              (long long)t->shape[d]);
    }
    if (over) {
      return tsl_raise("ValueError",
                       "%s: %s.shape: expected at most %lld elements (%s indices), got %s "
                       "(more than 2^64)",
                       f, p, (long long)max_elements, index_type, dims);
    }
    if (t->ndim == 1) {
      return tsl_raise("ValueError", "%s: %s.shape: expected at most %lld elements (%s indices), "
                       "got %llu", f, p, (long long)max_elements, index_type,
                       (unsigned long long)n);
    }
    return tsl_raise("ValueError",
                     "%s: %s.shape: expected at most %lld elements (%s indices), got %s = %llu", f,
                     p, (long long)max_elements, index_type, dims, (unsigned long long)n);
  }
  if (n > (uint64_t)INT64_MAX / (uint64_t)elem_bytes) {
    return tsl_raise("ValueError",
                     "%s: %s.shape: expected at most %lld bytes, got %llu elements of %lld bytes",
                     f, p, (long long)INT64_MAX, (unsigned long long)n, (long long)elem_bytes);
  }
  return 0;
}

/* A dimension of extent 1 may have any stride: it is never stepped over; nor may any of a tensor
   without elements. */
TSL_HELPER int tsl_check_compact(const char* f, const char* p, const DLTensor* t) {
  if (t->strides == NULL || tsl_numel(t) == 0) return 0;
  int64_t expected = 1;
  for (int d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] != 1 && t->strides[d] != expected) {
      return tsl_raise("ValueError", "%s: %s.strides[%d]: expected %lld (compact), got %lld", f,
                       p, d, (long long)expected, (long long)t->strides[d]);
    }
    expected *= t->shape[d];
  }
  return 0;
}

/* A buffer with declared strides or an element offset is indexed as offset + sum(i[d] *
   strides[d]) in its index dtype, with wrapping arithmetic: an element whose exact index leaves
   the dtype would be read from somewhere else (a column of a matrix over 2^31 floats is one). So
   the indices of the first and last elements must fit; they are exact in int64 while each step is
   checked. The extents are >= 0 (tsl_check_size ran) and a tensor without elements addresses
   none. */
TSL_HELPER int tsl_check_span(const char* f, const char* p, const char* what, const DLTensor* t,
                              int64_t offset, int64_t max_index, const char* index_type) {
  int64_t lo = offset, hi = offset;
  int over = 0;
  if (tsl_numel(t) == 0) return 0;
  for (int d = 0; d < t->ndim && !over; ++d) {
    int64_t s = tsl_stride(t, d);
    uint64_t mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    uint64_t steps = (uint64_t)(t->shape[d] - 1);
    if (steps == 0 || mag == 0) continue;
    if (steps > (uint64_t)INT64_MAX / mag) {
      over = 1;
    } else if (s > 0) {
      int64_t term = (int64_t)(steps * mag);
      over = hi > INT64_MAX - term;
      if (!over) hi += term;
    } else {
      int64_t term = (int64_t)(steps * mag);
      over = lo < INT64_MIN + term;
      if (!over) lo -= term;
    }
  }
  if (over) {
    return tsl_raise("ValueError",
                     "%s: %s.%s: expected element indices within %s (%lld to %lld), got indices "
                     "beyond int64 (elem_offset + sum((shape[d] - 1) * strides[d]))",
                     f, p, what, index_type, (long long)(-max_index - 1), (long long)max_index);
  }
  if (hi > max_index || lo < -max_index - 1) {
    return tsl_raise("ValueError",
                     "%s: %s.%s: expected element indices within %s (%lld to %lld), got %lld to "
                     "%lld (elem_offset + sum((shape[d] - 1) * strides[d]))",
                     f, p, what, index_type, (long long)(-max_index - 1), (long long)max_index,
                     (long long)lo, (long long)hi);
  }
  return 0;
}
)TSL";

}  // namespace

const char* CIntegerHelpers() { return kIntArithmetic; }

const char* CArithmeticHelpers(bool fast_min_max) {
  static const std::string text = std::string(kIntArithmetic) + kFloatMinMax + kFloatArithmetic;
  static const std::string fast = std::string(kIntArithmetic) + kFastFloatMinMax + kFloatArithmetic;
  return fast_min_max ? fast.c_str() : text.c_str();
}

const char* CPrelude() {
  static const std::string text =
      std::string(kHeader) + kIntArithmetic + kFloatMinMax + kFloatArithmetic + kRest;
  return text.c_str();
}

}  // namespace codegen
}  // namespace tessel
