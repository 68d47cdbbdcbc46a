// The interface between the harness (libtessel_metal_emu) and a kernel library it compiled from
// MSL. Plain C types only: the two sides are built by different compiler invocations, possibly
// with different compilers.
//
// The harness appends a trampoline per kernel to the MSL source (src/msl_source.cc). The library
// exports one function, tessel_metal_emu_kernels, which takes the host's callbacks and returns the
// kernel table. Every thread of the emulated grid calls its kernel's entry once, on its own fiber;
// the callbacks suspend that fiber until the rendezvous they stand for is met.
#ifndef TESSEL_METAL_EMU_ABI_H_
#define TESSEL_METAL_EMU_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below changes; both sides check it. */
#define TESSEL_METAL_EMU_ABI_VERSION 1u
/* The widest value a simd_* operation may exchange (long4 is 32 bytes). */
#define TESSEL_METAL_EMU_MAX_SIMD_BYTES 64u
#define TESSEL_METAL_EMU_SIMD_WIDTH 32u
#define TESSEL_METAL_EMU_MAX_BUFFERS 31u

/* Where a thread waits: the operation, and the MSL line and function of the call. Two threads meet
 * only at the same site. */
typedef struct TslEmuSite {
  const char* what; /* "threadgroup_barrier", "simd_sum", ... */
  uint32_t line;
  const char* function;
} TslEmuSite;

typedef struct TslEmuHost {
  uint32_t abi_version;
  /* threadgroup_barrier: returns when every thread of the threadgroup reached the same site. */
  void (*threadgroup_barrier)(uint32_t mem_flags, const TslEmuSite* site);
  /* A SIMD-group rendezvous (simd_* operations, simdgroup_barrier): deposits `size` bytes of
   * `value` and returns, once every running thread of the SIMD group reached the same site, the
   * deposits of all 32 lanes (lane i at i * size; lanes that did not take part hold 0xFF bytes).
   * *active gets one bit per taking part lane, *lane the caller's lane. The bytes stay valid until
   * the caller's next rendezvous. */
  const unsigned char* (*simd_gather)(const void* value, uint32_t size, const TslEmuSite* site,
                                      uint32_t* active, uint32_t* lane);
  /* The threadgroup memory of declaration `slot` (kernel table order) for the current group. */
  void* (*threadgroup_slot)(uint32_t slot);
  /* Ends the run with an error (a kernel doing something a GPU leaves undefined). */
  void (*fail)(const char* message, const TslEmuSite* site);
} TslEmuHost;

/* What one thread's entry gets. buffers[i] is [[buffer(i)]] (the argument struct included). */
typedef struct TslEmuThreadArgs {
  void* const* buffers;
  void* dynamic_threadgroup; /* [[threadgroup(0)]] */
  uint32_t group_id[3];      /* threadgroup_position_in_grid */
  uint32_t groups[3];        /* threadgroups_per_grid */
  uint32_t thread_id[3];     /* thread_position_in_threadgroup */
  uint32_t group_size[3];    /* threads_per_threadgroup */
  uint32_t grid_thread[3];   /* thread_position_in_grid */
  uint32_t grid_size[3];     /* threads_per_grid */
  uint32_t thread_index;     /* thread_index_in_threadgroup */
  uint32_t simd_lane;        /* thread_index_in_simdgroup */
  uint32_t simd_group;       /* simdgroup_index_in_threadgroup */
  uint32_t simd_groups;      /* simdgroups_per_threadgroup */
  uint32_t simd_width;       /* threads_per_simdgroup */
} TslEmuThreadArgs;

/* One static threadgroup declaration. */
typedef struct TslEmuThreadgroupDecl {
  const char* name;
  uint32_t bytes;
  uint32_t align;
} TslEmuThreadgroupDecl;

/* A member of a struct that a reference parameter refers to (the argument struct), with its
 * layout as the compiler laid it out. */
typedef struct TslEmuField {
  uint32_t param; /* index of the parameter in the signature */
  const char* name;
  uint32_t offset;
  uint32_t bytes;
} TslEmuField;

typedef struct TslEmuKernel {
  const char* name;
  void (*entry)(const TslEmuThreadArgs* args);
  /* Per parameter (signature order): the size of what a reference parameter refers to (the
   * argument struct), 0 for other parameters. */
  const uint32_t* param_ref_bytes;
  uint32_t num_params;
  const TslEmuThreadgroupDecl* threadgroup;
  uint32_t num_threadgroup;
  const TslEmuField* fields;
  uint32_t num_fields;
} TslEmuKernel;

/* Exported by every compiled kernel library. Returns NULL when abi_version is not its own. */
typedef const TslEmuKernel* (*TslEmuKernelsFn)(uint32_t abi_version, const TslEmuHost* host,
                                               uint32_t* num_kernels);
#define TESSEL_METAL_EMU_KERNELS_SYMBOL "tessel_metal_emu_kernels"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSEL_METAL_EMU_ABI_H_ */
