/* The Metal framework context: a small, versioned, pure-C ABI by which a framework (PyTorch MPS,
 * MLX, an application) lends tessel its current command buffer and compute encoder for the length
 * of one callback, on the framework's own serial queue. No Objective-C type appears here: Metal
 * objects travel as void* (an `id<MTLCommandBuffer>` cast with __bridge, never retained by tessel
 * beyond the callback).
 *
 * A launch of a tessel Metal kernel looks for a context in this order (docs/metal.md):
 *   1. the calling thread's context, set with tessel_metal_set_thread_context (RAII in C++:
 *      tessel::runtime::MetalThreadContextScope; a context manager in Python:
 *      tessel.metal.context(...));
 *   2. the tvm-ffi stream slot TVMFFIEnvGetStream(kDLMetal, device_id), when it holds a pointer
 *      to a TesselMetalContext whose `magic` is TESSEL_METAL_CONTEXT_MAGIC (any other value there
 *      is ignored);
 *   3. the process-wide default context of the Metal runtime: a tessel-owned MTLCommandQueue
 *      (standalone use; the caller synchronizes with other frameworks itself).
 * tessel encodes its dispatch into the lent command buffer and never commits it: the framework
 * does, in its own order with its own work.
 */
#ifndef TESSEL_RUNTIME_METAL_CONTEXT_H_
#define TESSEL_RUNTIME_METAL_CONTEXT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "TSMC" read as a little-endian uint32. */
#define TESSEL_METAL_CONTEXT_MAGIC 0x434D5354u
/* The layout below. A reader refuses a context whose abi_version is not one it knows. */
#define TESSEL_METAL_CONTEXT_ABI_VERSION 1u

/* What tessel runs inside with_encoder: encodes its dispatch into `mtl_compute_encoder` (an
 * `id<MTLComputeCommandEncoder>` that the framework keeps open and ends itself), or, when the
 * framework passes NULL there, creates a compute encoder on `mtl_command_buffer` (an
 * `id<MTLCommandBuffer>`) and ends it before returning. Returns 0, or nonzero when encoding
 * failed (tessel then holds the error message on the calling thread). */
typedef int (*TesselMetalEncodeBody)(void* user, void* mtl_command_buffer,
                                     void* mtl_compute_encoder);

typedef struct TesselMetalContext {
  uint32_t magic;       /* TESSEL_METAL_CONTEXT_MAGIC */
  uint32_t abi_version; /* TESSEL_METAL_CONTEXT_ABI_VERSION */
  /* A short name for messages: "tessel.default", "torch.mps", "mlx", ... */
  const char* name;
  /* The framework's own state, passed back to the callbacks. */
  void* self;
  /* Runs body(user, command_buffer, encoder) while holding the framework's encoding order (on its
   * serial queue, or inline when already on it) with the command buffer current at that moment.
   * Returns body's result, or nonzero for a failure of its own (message through
   * `last_error`, when given). Required. */
  int (*with_encoder)(void* self, int32_t device_id, TesselMetalEncodeBody body, void* user);
  /* Optional (NULL = not offered): submits what was encoded so far; wait != 0 also waits until
   * the GPU finished it. Returns 0 or nonzero on failure. */
  int (*commit)(void* self, int32_t device_id, int32_t wait);
  /* Optional: the message of the last nonzero return on this thread, or NULL. */
  const char* (*last_error)(void* self);
} TesselMetalContext;

/* How a Metal buffer argument reaches a launch function as an opaque pointer (the generated host
 * code passes one per buffer): the `id<MTLBuffer>` and the byte offset given to
 * setBuffer:offset:atIndex:. Never pointer arithmetic on the handle. */
typedef struct TesselMetalBufferRef {
  void* buffer;
  uint64_t offset;
} TesselMetalBufferRef;

/* The calling thread's context (step 1 above); NULL clears it. Returns the previous one. The
 * context must stay valid while it is set. Exported by libtessel_runtime. */
const TesselMetalContext* tessel_metal_set_thread_context(const TesselMetalContext* context);
const TesselMetalContext* tessel_metal_get_thread_context(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSEL_RUNTIME_METAL_CONTEXT_H_ */
