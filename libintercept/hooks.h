/* What every wrapper in hooks_*.c shares: the real function, timing, and recording. */
#ifndef GW_HOOKS_H
#define GW_HOOKS_H

#include <errno.h>

#include "clock.h"
#include "cupti_timeline.h"
#include "gw_cuda.h"
#include "lifecycle.h"
#include "recorder.h"
#include "resolve.h"

/* What a wrapper returns when the driver lacks the function it wraps. */
#define GW_NO_DRIVER CUDA_ERROR_NOT_FOUND

/* The real function behind the exported wrapper `name`, with its exact type. */
#define GW_REAL(name) ((__typeof__(&name))gw_real(GW_API_##name))

/* Times `call` into `result`; the program's errno after the call is kept for the return. */
#define GW_TIMED(result, call)              \
    uint64_t gw_t0 = gw_now();              \
    result = call;                          \
    uint64_t gw_t1 = gw_now();              \
    int gw_saved_errno = errno

/* GW_TIMED for calls that issue GPU work: while CUPTI runs, the work is tagged with the
 * host call id so its GPU records link back to this call. */
#define GW_TIMED_GPU(result, call)          \
    int gw_pushed = gw_cupti_push_call();   \
    uint64_t gw_t0 = gw_now();              \
    result = call;                          \
    uint64_t gw_t1 = gw_now();              \
    int gw_saved_errno = errno;             \
    gw_cupti_pop(gw_pushed)

/* Records the call timed by GW_TIMED and leaves the hook. */
#define GW_RECORD(api, result, words, nwords)                              \
    do {                                                                   \
        gw_rec_call(api, gw_t0, gw_t1, (int)(result), words, nwords);      \
        gw_leave();                                                        \
        errno = gw_saved_errno;                                            \
    } while (0)

static inline uint64_t gw_u64(const void *pointer) { return (uint64_t)(uintptr_t)pointer; }

/* Interned ids through a per-thread cache (hooks_ids.c). */
uint64_t gw_stream_id(CUstream stream);
uint64_t gw_shape_id(CUfunction func, const uint32_t dims[6], uint32_t shared_mem);
/* Name id for a function or kernel handle, asking the driver when we never saw it made. */
uint64_t gw_name_of_handle(uint64_t handle);
/* Device name, memory and free memory once per device, at its first context. */
void gw_note_device(CUdevice device, CUcontext context);

#endif
