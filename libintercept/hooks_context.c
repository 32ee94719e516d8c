/* Driver start-up, contexts and devices, and cuGetProcAddress: the runtime's way in. */
#include <string.h>

#include "gpuwatch/trace_format.h"
#include "hooks.h"

#define MAX_NOTED_DEVICES 64

static int device_noted[MAX_NOTED_DEVICES];

void gw_note_device(CUdevice device, CUcontext context)
{
    if (device < 0 || device >= MAX_NOTED_DEVICES ||
        __atomic_exchange_n(&device_noted[device], 1, __ATOMIC_ACQ_REL))
        return;
    char name[256] = "";
    size_t total = 0, free_bytes = 0, total_seen = 0;
    __typeof__(&cuDeviceGetName) get_name = GW_REAL(cuDeviceGetName);
    __typeof__(&cuDeviceTotalMem_v2) get_total = GW_REAL(cuDeviceTotalMem_v2);
    __typeof__(&cuMemGetInfo_v2) get_info = GW_REAL(cuMemGetInfo_v2);
    CUresult (*push)(CUcontext) = (CUresult(*)(CUcontext))gw_driver_symbol("cuCtxPushCurrent_v2");
    CUresult (*pop)(CUcontext *) = (CUresult(*)(CUcontext *))gw_driver_symbol("cuCtxPopCurrent_v2");
    if (get_name)
        get_name(name, (int)sizeof name, device);
    if (get_total)
        get_total(&total, device);
    /* Free memory needs the context current; leave the program's current context as it was. */
    CUresult (*stream_id)(CUstream, unsigned long long *) =
        (CUresult(*)(CUstream, unsigned long long *))gw_driver_symbol("cuStreamGetId");
    if (get_info && push && pop && push(context) == CUDA_SUCCESS) {
        get_info(&free_bytes, &total_seen);
        unsigned long long legacy_id;
        if (stream_id && stream_id(CU_STREAM_LEGACY, &legacy_id) == CUDA_SUCCESS)
            gw_rec_stream_default(legacy_id);
        CUcontext popped;
        pop(&popped);
    }
    gw_rec_device(device, name, total, free_bytes);
}

GW_EXPORT CUresult cuInit(unsigned int flags)
{
    GW_HOOK_BEGIN(cuInit, GW_TIMED, real(flags));
    GW_RECORD_AND_RETURN(GW_API_cuInit, NULL, 0);
}

static void record_context(unsigned api, uint64_t t0, uint64_t t1, CUresult result,
                           CUcontext *pctx, CUdevice device)
{
    CUcontext context = result == CUDA_SUCCESS && pctx ? *pctx : NULL;
    if (context)
        gw_note_device(device, context);
    uint64_t words[2] = {(uint64_t)device, gw_u64(context)};
    gw_rec_call(api, t0, t1, result, words, 2);
}

#define CONTEXT_HOOK(name, call, pctx, device)                          \
    GW_HOOK_BEGIN(name, GW_TIMED, call);                                \
    record_context(GW_API_##name, gw_t0, gw_t1, result, pctx, device);  \
    GW_HOOK_END()

GW_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CONTEXT_HOOK(cuCtxCreate_v2, real(pctx, flags, dev), pctx, dev);
}

GW_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int nparams,
                                  unsigned int flags, CUdevice dev)
{
    CONTEXT_HOOK(cuCtxCreate_v3, real(pctx, params, nparams, flags, dev), pctx, dev);
}

GW_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                                  CUdevice dev)
{
    CONTEXT_HOOK(cuCtxCreate_v4, real(pctx, params, flags, dev), pctx, dev);
}

GW_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CONTEXT_HOOK(cuDevicePrimaryCtxRetain, real(pctx, dev), pctx, dev);
}

GW_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    GW_HOOK_BEGIN(cuDeviceGetName, GW_TIMED, real(name, len, dev));
    GW_RECORD_AND_RETURN(GW_API_cuDeviceGetName, NULL, 0);
}

GW_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    GW_HOOK_BEGIN(cuDeviceTotalMem_v2, GW_TIMED, real(bytes, dev));
    GW_RECORD_AND_RETURN(GW_API_cuDeviceTotalMem_v2, NULL, 0);
}

GW_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    GW_HOOK_BEGIN(cuMemGetInfo_v2, GW_TIMED, real(free_bytes, total_bytes));
    int ok = result == CUDA_SUCCESS;
    uint64_t words[2] = {ok && free_bytes ? *free_bytes : 0, ok && total_bytes ? *total_bytes : 0};
    GW_RECORD_AND_RETURN(GW_API_cuMemGetInfo_v2, words, 2);
}

/* The wrapper to hand out instead of real, or real itself when it is not hooked or
 * tracing is off. */
static void *substitute(void *real, int *substituted)
{
    *substituted = 0;
    if (!real)
        return real;
    const struct gw_hook *hook = gw_hook_by_real(real);
    if (!hook || !gw_tracing_start())
        return real;
    *substituted = 1;
    return hook->wrapper;
}

/* Both cuGetProcAddress ABIs: ask the driver, then hand back our wrapper for exactly the
 * variant it chose (pointer identity), so cudaVersion, flags and symbolStatus keep the
 * driver's meaning. The "cuGetProcAddress" self-lookup is caught the same way. */
static CUresult proc_address(unsigned api, const char *symbol, void **pfn, int version,
                             cuuint64_t flags, CUdriverProcAddressQueryResult *status,
                             const void *caller)
{
    __typeof__(&cuGetProcAddress) real_v1 = GW_REAL(cuGetProcAddress);
    __typeof__(&cuGetProcAddress_v2) real_v2 = GW_REAL(cuGetProcAddress_v2);
    if (api == GW_API_cuGetProcAddress ? !real_v1 : !real_v2)
        return GW_NO_DRIVER;
    /* CUPTI and the driver resolve functions for themselves: not the program's calls. */
    if (gw_caller_is_private(caller))
        return api == GW_API_cuGetProcAddress ? real_v1(symbol, pfn, version, flags)
                                              : real_v2(symbol, pfn, version, flags, status);
    int traced = gw_enter();
    uint64_t t0 = gw_now();
    CUresult result = api == GW_API_cuGetProcAddress ? real_v1(symbol, pfn, version, flags)
                                                     : real_v2(symbol, pfn, version, flags, status);
    uint64_t t1 = gw_now();
    int saved_errno = errno;
    unsigned outcome = GW_PROC_FAILED;
    if (result == CUDA_SUCCESS && pfn && *pfn) {
        int substituted = 0;
        if (traced)
            *pfn = substitute(*pfn, &substituted);
        outcome = substituted ? GW_PROC_SUBSTITUTED : GW_PROC_PASSED;
    }
    if (traced) {
        uint64_t words[4] = {gw_rec_string(symbol ? symbol : ""), (uint64_t)(int64_t)version,
                             flags, outcome};
        gw_rec_call(api, t0, t1, result, words, 4);
        gw_leave();
    }
    errno = saved_errno;
    return result;
}

GW_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    return proc_address(GW_API_cuGetProcAddress, symbol, pfn, version, flags, NULL,
                        __builtin_return_address(0));
}

GW_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    return proc_address(GW_API_cuGetProcAddress_v2, symbol, pfn, version, flags, status,
                        __builtin_return_address(0));
}
