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
 * host call id so its GPU records link back to this call. The flag is read after the call's
 * start, so the start tells whether a window's opening or shutting could have been missed
 * (cupti_timeline.c, set_window). */
#define GW_TIMED_GPU(result, call)          \
    uint64_t gw_t0 = gw_now();              \
    int gw_pushed = gw_cupti_push_call();   \
    result = call;                          \
    uint64_t gw_t1 = gw_now();              \
    int gw_saved_errno = errno;             \
    gw_cupti_pop(gw_pushed)

/* Around a call that may wait for the GPU (a synchronize; a synchronous or pageable copy),
 * when `waits`: the thread's CPU time across it goes with its wall time to the thread's wait
 * totals (gw_rec_wait). CUDA spins in such waits by default, so without them a thread
 * waiting on the GPU looks as busy as one preparing batches. Outside the timed span: the
 * call's recorded duration stays the driver's. */
#define GW_WAIT_BEGIN(waits) uint64_t gw_cpu0 = (waits) ? gw_thread_cpu_ns() : 0
#define GW_WAIT_END(waits)                                                     \
    do {                                                                       \
        if (waits) {                                                           \
            uint64_t gw_cpu1 = gw_thread_cpu_ns();                             \
            gw_rec_wait(gw_t1 - gw_t0, gw_cpu1 > gw_cpu0 ? gw_cpu1 - gw_cpu0 : 0); \
        }                                                                      \
    } while (0)

/* GW_TIMED for a call that always waits for the GPU (a synchronize). */
#define GW_TIMED_WAITING(result, call)      \
    GW_WAIT_BEGIN(1);                       \
    GW_TIMED(result, call);                 \
    GW_WAIT_END(1)

/* Records the call timed by GW_HOOK_BEGIN, leaves the hook and returns its result. */
#define GW_RECORD_AND_RETURN(api, words, nwords)                           \
    gw_rec_call(api, gw_t0, gw_t1, (int)result, words, nwords);            \
    GW_HOOK_END()

/* How every wrapper starts: find the real function (the API's own error when the driver
 * lacks it), pass straight through when this call is not to be recorded, else time the
 * call with TIMED (GW_TIMED, or GW_TIMED_GPU for calls that issue GPU work). Declares
 * real, result, gw_t0, gw_t1 and gw_saved_errno; GW_HOOK_END must follow. */
#define GW_HOOK_BEGIN(name, TIMED, call)        \
    __typeof__(&name) real = GW_REAL(name);     \
    if (!real)                                  \
        return GW_NO_DRIVER;                    \
    if (!gw_enter())                            \
        return call;                            \
    CUresult result;                            \
    TIMED(result, call)

/* Leaves the hook and returns the driver's result with the errno it left. */
#define GW_HOOK_END()                           \
    gw_leave();                                 \
    errno = gw_saved_errno;                     \
    return result

static inline uint64_t gw_u64(const void *pointer) { return (uint64_t)(uintptr_t)pointer; }

/* Interned ids through a per-thread cache (hooks_ids.c). The stream of a call to entry
 * point api: CU_STREAM_LEGACY is the legacy default stream (0) as NULL is; in the
 * _ptsz/_ptds twins NULL, and CU_STREAM_PER_THREAD anywhere, is the calling thread's
 * per-thread default stream, an id of its own. */
uint64_t gw_stream_id(CUstream stream, unsigned api);
uint64_t gw_shape_id(CUfunction func, const uint32_t dims[6], uint32_t shared_mem);
/* Name id for a function or kernel handle, asking the driver when we never saw it made. */
uint64_t gw_name_of_handle(uint64_t handle);
/* Device name, memory and free memory once per device, at its first context. */
void gw_note_device(CUdevice device, CUcontext context);

#endif
