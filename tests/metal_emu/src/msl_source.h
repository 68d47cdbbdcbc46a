// From MSL source to the C++ the harness compiles: like the real Metal compiler, the harness
// decides how a kernel's parameters are bound from their attributes, so it reads every
// `kernel void NAME(...)` signature itself and appends one C++ trampoline per kernel that calls
// it with its bound arguments. It also
//  - rewrites each `threadgroup T name[N]...;` declaration in a kernel body into a reference to
//    memory the harness provides per threadgroup (guarded and poisoned, threadgroup_memory.h), on
//    the same line, so compiler messages keep the MSL line numbers;
//  - blanks the kernel attributes ([[buffer(0)]], [[threadgroup(0)]], ...), which C++ would reject
//    or ignore;
//  - rejects what the Metal compiler rejects and C++ would accept: double, a pointer or reference
//    type without an address space, threadgroup variables with initializers or outside kernels,
//    unknown parameter attributes.
// Errors are RuntimeErrors "MSL line N: ...".
#ifndef TESSEL_METAL_EMU_MSL_SOURCE_H_
#define TESSEL_METAL_EMU_MSL_SOURCE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {
namespace metal_emu {

enum class ParamKind : uint8_t {
  kBuffer,           // device / constant pointer at [[buffer(i)]]
  kBufferReference,  // constant T& at [[buffer(i)]]: the argument struct (or a device T&)
  kThreadgroup,      // threadgroup pointer at [[threadgroup(0)]]: the dynamic block
  kBuiltin,          // thread_position_in_grid and friends
};

struct MslParam {
  std::string type;  // as written, address space included
  std::string name;
  // A reference parameter's struct type when the source defines it (its members get a layout
  // table), else "".
  std::string struct_name;
  std::string attribute;  // "buffer(2)", "thread_position_in_threadgroup"
  ParamKind kind = ParamKind::kBuffer;
  uint32_t index = 0;  // buffer / threadgroup index
  int line = 0;
};

struct MslThreadgroupDecl {
  std::string type;  // element type
  std::string name;
  std::string dims;  // "[64]", "[4][8]" or ""
  int line = 0;
};

struct MslKernel {
  std::string name;
  int line = 0;
  uint32_t max_threads = 0;  // [[max_total_threads_per_threadgroup(N)]]; 0 without
  std::vector<MslParam> params;
  std::vector<MslThreadgroupDecl> threadgroup;
  bool dynamic_threadgroup = false;
};

struct MslTranslation {
  std::string cxx;  // the source to compile
  std::vector<MslKernel> kernels;
  bool uses_bfloat = false;  // bfloat needs MSL 3.1
};

// `file_name` is what #line directives call the MSL (compiler messages name it).
MslTranslation TranslateMsl(const std::string& source, const std::string& file_name);

}  // namespace metal_emu
}  // namespace tessel

#endif  // TESSEL_METAL_EMU_MSL_SOURCE_H_
