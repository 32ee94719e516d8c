/*
 * fakecuda: cuGetProcAddress (v1, 4 arguments) and cuGetProcAddress_v2 (5, with symbolStatus),
 * resolving like the real driver:
 *
 *   - the candidates for a base name are every ABI variant CUDA 13.0 knows (known_symbols.inc,
 *     generated from cudaTypedefs.h); a per-thread (_ptsz/_ptds) variant is a candidate only
 *     when flags has CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
 *   - the answer is the candidate with the highest version <= cudaVersion, the per-thread one
 *     on a tie; its address is the fake's own exported function (the library is linked
 *     -Bsymbolic, so &cuMemAlloc_v2 here is what dlsym(libcuda, "cuMemAlloc_v2") returns,
 *     even with an interposer preloaded);
 *   - a variant the fake does not implement resolves to one generic stub returning
 *     CUDA_ERROR_NOT_SUPPORTED, so a real runtime gets through its ~440 lookups;
 *   - an unknown name gives CUDA_ERROR_NOT_FOUND, *pfn = NULL, SYMBOL_NOT_FOUND; so does the
 *     runtime's probe with "" unless FAKECUDA_PROBE_RESULT says otherwise (README.md); a
 *     known name whose variants are all newer than cudaVersion gives CUDA_ERROR_NOT_FOUND,
 *     VERSION_NOT_SUFFICIENT; a cudaVersion above the driver's version, or unknown flag bits,
 *     give CUDA_ERROR_INVALID_VALUE.
 *
 * FAKECUDA_LOG_LOOKUPS=path appends "symbol<TAB>cudaVersion<TAB>flags" per call (the empty
 * symbol as "(empty)", like shared/data/cudart13-lookups.tsv).
 */
#include "fakecuda.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static CUresult fc_unsupported_stub(void)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

typedef struct known_sym {
    const char *base;
    int version;
    int per_thread;
} known_sym;

static const known_sym known[] = {
#define FC_SYM(base, version, pt) { base, version, pt },
#include "known_symbols.inc"
#undef FC_SYM
};

typedef struct impl_sym {
    const char *base;
    int version;
    int per_thread;
    void *fn;
} impl_sym;

#define I(base, version, pt, fn) { #base, version, pt, (void *)&fn },

/* The variants the fake implements: base name, cudaVersion, per-thread, exported function. */
static const impl_sym impls[] = {
    I(cuInit, 2000, 0, cuInit)
    I(cuDriverGetVersion, 2020, 0, cuDriverGetVersion)
    I(cuGetExportTable, 3000, 0, cuGetExportTable)
    I(cuGetErrorName, 6000, 0, cuGetErrorName)
    I(cuGetErrorString, 6000, 0, cuGetErrorString)
    I(cuGetProcAddress, 11030, 0, cuGetProcAddress)
    I(cuGetProcAddress, 12000, 0, cuGetProcAddress_v2)
    /* device */
    I(cuDeviceGet, 2000, 0, cuDeviceGet)
    I(cuDeviceGetCount, 2000, 0, cuDeviceGetCount)
    I(cuDeviceGetName, 2000, 0, cuDeviceGetName)
    I(cuDeviceTotalMem, 3020, 0, cuDeviceTotalMem_v2)
    I(cuDeviceGetAttribute, 2000, 0, cuDeviceGetAttribute)
    I(cuDeviceGetUuid, 9020, 0, cuDeviceGetUuid)
    I(cuDeviceGetUuid, 11040, 0, cuDeviceGetUuid_v2)
    I(cuDeviceGetPCIBusId, 4010, 0, cuDeviceGetPCIBusId)
    I(cuDeviceGetDefaultMemPool, 11020, 0, cuDeviceGetDefaultMemPool)
    I(cuDeviceGetMemPool, 11020, 0, cuDeviceGetMemPool)
    I(cuDeviceSetMemPool, 11020, 0, cuDeviceSetMemPool)
    /* contexts */
    I(cuDevicePrimaryCtxRetain, 7000, 0, cuDevicePrimaryCtxRetain)
    I(cuDevicePrimaryCtxRelease, 7000, 0, cuDevicePrimaryCtxRelease)
    I(cuDevicePrimaryCtxRelease, 11000, 0, cuDevicePrimaryCtxRelease_v2)
    I(cuDevicePrimaryCtxGetState, 7000, 0, cuDevicePrimaryCtxGetState)
    I(cuDevicePrimaryCtxSetFlags, 11000, 0, cuDevicePrimaryCtxSetFlags_v2)
    I(cuCtxCreate, 2000, 0, cuCtxCreate)
    I(cuCtxCreate, 3020, 0, cuCtxCreate_v2)
    I(cuCtxCreate, 11040, 0, cuCtxCreate_v3)
    I(cuCtxCreate, 12050, 0, cuCtxCreate_v4)
    I(cuCtxDestroy, 4000, 0, cuCtxDestroy_v2)
    I(cuCtxSetCurrent, 4000, 0, cuCtxSetCurrent)
    I(cuCtxGetCurrent, 4000, 0, cuCtxGetCurrent)
    I(cuCtxPushCurrent, 4000, 0, cuCtxPushCurrent_v2)
    I(cuCtxPopCurrent, 4000, 0, cuCtxPopCurrent_v2)
    I(cuCtxGetDevice, 2000, 0, cuCtxGetDevice)
    I(cuCtxGetDevice, 13000, 0, cuCtxGetDevice_v2)
    I(cuCtxGetFlags, 7000, 0, cuCtxGetFlags)
    I(cuCtxGetStreamPriorityRange, 5050, 0, cuCtxGetStreamPriorityRange)
    I(cuCtxSynchronize, 2000, 0, cuCtxSynchronize)
    I(cuCtxSynchronize, 13000, 0, cuCtxSynchronize_v2)
    /* device memory */
    I(cuMemGetInfo, 3020, 0, cuMemGetInfo_v2)
    I(cuMemAlloc, 3020, 0, cuMemAlloc_v2)
    I(cuMemAllocPitch, 3020, 0, cuMemAllocPitch_v2)
    I(cuMemFree, 3020, 0, cuMemFree_v2)
    I(cuMemGetAddressRange, 3020, 0, cuMemGetAddressRange_v2)
    I(cuMemAllocManaged, 6000, 0, cuMemAllocManaged)
    I(cuPointerGetAttribute, 4000, 0, cuPointerGetAttribute)
    I(cuPointerGetAttributes, 7000, 0, cuPointerGetAttributes)
    /* stream-ordered memory and pools */
    I(cuMemAllocAsync, 11020, 0, cuMemAllocAsync)
    I(cuMemAllocAsync, 11020, 1, cuMemAllocAsync_ptsz)
    I(cuMemAllocFromPoolAsync, 11020, 0, cuMemAllocFromPoolAsync)
    I(cuMemAllocFromPoolAsync, 11020, 1, cuMemAllocFromPoolAsync_ptsz)
    I(cuMemFreeAsync, 11020, 0, cuMemFreeAsync)
    I(cuMemFreeAsync, 11020, 1, cuMemFreeAsync_ptsz)
    I(cuMemPoolCreate, 11020, 0, cuMemPoolCreate)
    I(cuMemPoolDestroy, 11020, 0, cuMemPoolDestroy)
    I(cuMemPoolTrimTo, 11020, 0, cuMemPoolTrimTo)
    I(cuMemPoolSetAttribute, 11020, 0, cuMemPoolSetAttribute)
    I(cuMemPoolGetAttribute, 11020, 0, cuMemPoolGetAttribute)
    /* virtual memory management */
    I(cuMemAddressReserve, 10020, 0, cuMemAddressReserve)
    I(cuMemAddressFree, 10020, 0, cuMemAddressFree)
    I(cuMemCreate, 10020, 0, cuMemCreate)
    I(cuMemRelease, 10020, 0, cuMemRelease)
    I(cuMemMap, 10020, 0, cuMemMap)
    I(cuMemUnmap, 10020, 0, cuMemUnmap)
    I(cuMemSetAccess, 10020, 0, cuMemSetAccess)
    I(cuMemGetAllocationGranularity, 10020, 0, cuMemGetAllocationGranularity)
    /* pinned host memory */
    I(cuMemHostAlloc, 2020, 0, cuMemHostAlloc)
    I(cuMemAllocHost, 3020, 0, cuMemAllocHost_v2)
    I(cuMemFreeHost, 2000, 0, cuMemFreeHost)
    I(cuMemHostRegister, 4000, 0, cuMemHostRegister)
    I(cuMemHostRegister, 6050, 0, cuMemHostRegister_v2)
    I(cuMemHostUnregister, 4000, 0, cuMemHostUnregister)
    I(cuMemHostGetDevicePointer, 3020, 0, cuMemHostGetDevicePointer_v2)
    I(cuMemHostGetFlags, 2030, 0, cuMemHostGetFlags)
    /* copies */
    I(cuMemcpy, 4000, 0, cuMemcpy)
    I(cuMemcpy, 7000, 1, cuMemcpy_ptds)
    I(cuMemcpyAsync, 4000, 0, cuMemcpyAsync)
    I(cuMemcpyAsync, 7000, 1, cuMemcpyAsync_ptsz)
    I(cuMemcpyPeer, 4000, 0, cuMemcpyPeer)
    I(cuMemcpyPeer, 7000, 1, cuMemcpyPeer_ptds)
    I(cuMemcpyPeerAsync, 4000, 0, cuMemcpyPeerAsync)
    I(cuMemcpyPeerAsync, 7000, 1, cuMemcpyPeerAsync_ptsz)
    I(cuMemcpyHtoD, 3020, 0, cuMemcpyHtoD_v2)
    I(cuMemcpyHtoD, 7000, 1, cuMemcpyHtoD_v2_ptds)
    I(cuMemcpyDtoH, 3020, 0, cuMemcpyDtoH_v2)
    I(cuMemcpyDtoH, 7000, 1, cuMemcpyDtoH_v2_ptds)
    I(cuMemcpyDtoD, 3020, 0, cuMemcpyDtoD_v2)
    I(cuMemcpyDtoD, 7000, 1, cuMemcpyDtoD_v2_ptds)
    I(cuMemcpyHtoDAsync, 3020, 0, cuMemcpyHtoDAsync_v2)
    I(cuMemcpyHtoDAsync, 7000, 1, cuMemcpyHtoDAsync_v2_ptsz)
    I(cuMemcpyDtoHAsync, 3020, 0, cuMemcpyDtoHAsync_v2)
    I(cuMemcpyDtoHAsync, 7000, 1, cuMemcpyDtoHAsync_v2_ptsz)
    I(cuMemcpyDtoDAsync, 3020, 0, cuMemcpyDtoDAsync_v2)
    I(cuMemcpyDtoDAsync, 7000, 1, cuMemcpyDtoDAsync_v2_ptsz)
    I(cuMemcpy2D, 3020, 0, cuMemcpy2D_v2)
    I(cuMemcpy2D, 7000, 1, cuMemcpy2D_v2_ptds)
    I(cuMemcpy2DAsync, 3020, 0, cuMemcpy2DAsync_v2)
    I(cuMemcpy2DAsync, 7000, 1, cuMemcpy2DAsync_v2_ptsz)
    I(cuMemcpy3D, 3020, 0, cuMemcpy3D_v2)
    I(cuMemcpy3D, 7000, 1, cuMemcpy3D_v2_ptds)
    I(cuMemcpy3DAsync, 3020, 0, cuMemcpy3DAsync_v2)
    I(cuMemcpy3DAsync, 7000, 1, cuMemcpy3DAsync_v2_ptsz)
    I(cuMemcpyBatchAsync, 12080, 0, cuMemcpyBatchAsync)
    I(cuMemcpyBatchAsync, 12080, 1, cuMemcpyBatchAsync_ptsz)
    I(cuMemcpyBatchAsync, 13000, 0, cuMemcpyBatchAsync_v2)
    I(cuMemcpyBatchAsync, 13000, 1, cuMemcpyBatchAsync_v2_ptsz)
    /* sets */
    I(cuMemsetD8, 3020, 0, cuMemsetD8_v2)
    I(cuMemsetD8, 7000, 1, cuMemsetD8_v2_ptds)
    I(cuMemsetD16, 3020, 0, cuMemsetD16_v2)
    I(cuMemsetD16, 7000, 1, cuMemsetD16_v2_ptds)
    I(cuMemsetD32, 3020, 0, cuMemsetD32_v2)
    I(cuMemsetD32, 7000, 1, cuMemsetD32_v2_ptds)
    I(cuMemsetD8Async, 3020, 0, cuMemsetD8Async)
    I(cuMemsetD8Async, 7000, 1, cuMemsetD8Async_ptsz)
    I(cuMemsetD16Async, 3020, 0, cuMemsetD16Async)
    I(cuMemsetD16Async, 7000, 1, cuMemsetD16Async_ptsz)
    I(cuMemsetD32Async, 3020, 0, cuMemsetD32Async)
    I(cuMemsetD32Async, 7000, 1, cuMemsetD32Async_ptsz)
    /* launches */
    I(cuLaunchKernel, 4000, 0, cuLaunchKernel)
    I(cuLaunchKernel, 7000, 1, cuLaunchKernel_ptsz)
    I(cuLaunchKernelEx, 11060, 0, cuLaunchKernelEx)
    I(cuLaunchKernelEx, 11060, 1, cuLaunchKernelEx_ptsz)
    I(cuLaunchCooperativeKernel, 9000, 0, cuLaunchCooperativeKernel)
    I(cuLaunchCooperativeKernel, 9000, 1, cuLaunchCooperativeKernel_ptsz)
    I(cuLaunchHostFunc, 10000, 0, cuLaunchHostFunc)
    I(cuLaunchHostFunc, 10000, 1, cuLaunchHostFunc_ptsz)
    I(cuStreamAddCallback, 5000, 0, cuStreamAddCallback)
    I(cuStreamAddCallback, 7000, 1, cuStreamAddCallback_ptsz)
    /* graphs and capture */
    I(cuGraphCreate, 10000, 0, cuGraphCreate)
    I(cuGraphDestroy, 10000, 0, cuGraphDestroy)
    I(cuGraphInstantiate, 11000, 0, cuGraphInstantiate_v2)
    I(cuGraphInstantiateWithFlags, 11040, 0, cuGraphInstantiateWithFlags)
    I(cuGraphExecDestroy, 10000, 0, cuGraphExecDestroy)
    I(cuGraphLaunch, 10000, 0, cuGraphLaunch)
    I(cuGraphLaunch, 10000, 1, cuGraphLaunch_ptsz)
    I(cuStreamBeginCapture, 10000, 0, cuStreamBeginCapture)
    I(cuStreamBeginCapture, 10000, 1, cuStreamBeginCapture_ptsz)
    I(cuStreamBeginCapture, 10010, 0, cuStreamBeginCapture_v2)
    I(cuStreamBeginCapture, 10010, 1, cuStreamBeginCapture_v2_ptsz)
    I(cuStreamEndCapture, 10000, 0, cuStreamEndCapture)
    I(cuStreamEndCapture, 10000, 1, cuStreamEndCapture_ptsz)
    I(cuStreamIsCapturing, 10000, 0, cuStreamIsCapturing)
    I(cuStreamIsCapturing, 10000, 1, cuStreamIsCapturing_ptsz)
    /* streams */
    I(cuStreamCreate, 2000, 0, cuStreamCreate)
    I(cuStreamCreateWithPriority, 5050, 0, cuStreamCreateWithPriority)
    I(cuStreamDestroy, 2000, 0, cuStreamDestroy)
    I(cuStreamDestroy, 4000, 0, cuStreamDestroy_v2)
    I(cuStreamGetPriority, 5050, 0, cuStreamGetPriority)
    I(cuStreamGetPriority, 7000, 1, cuStreamGetPriority_ptsz)
    I(cuStreamGetFlags, 5050, 0, cuStreamGetFlags)
    I(cuStreamGetFlags, 7000, 1, cuStreamGetFlags_ptsz)
    I(cuStreamGetId, 12000, 0, cuStreamGetId)
    I(cuStreamGetId, 12000, 1, cuStreamGetId_ptsz)
    I(cuStreamGetCtx, 9020, 0, cuStreamGetCtx)
    I(cuStreamGetCtx, 9020, 1, cuStreamGetCtx_ptsz)
    /* events */
    I(cuEventCreate, 2000, 0, cuEventCreate)
    I(cuEventDestroy, 2000, 0, cuEventDestroy)
    I(cuEventDestroy, 4000, 0, cuEventDestroy_v2)
    I(cuEventRecord, 2000, 0, cuEventRecord)
    I(cuEventRecord, 7000, 1, cuEventRecord_ptsz)
    I(cuEventRecordWithFlags, 11010, 0, cuEventRecordWithFlags)
    I(cuEventRecordWithFlags, 11010, 1, cuEventRecordWithFlags_ptsz)
    I(cuEventQuery, 2000, 0, cuEventQuery)
    I(cuEventSynchronize, 2000, 0, cuEventSynchronize)
    I(cuEventElapsedTime, 2000, 0, cuEventElapsedTime)
    I(cuEventElapsedTime, 12080, 0, cuEventElapsedTime_v2)
    /* synchronisation */
    I(cuStreamSynchronize, 2000, 0, cuStreamSynchronize)
    I(cuStreamSynchronize, 7000, 1, cuStreamSynchronize_ptsz)
    I(cuStreamQuery, 2000, 0, cuStreamQuery)
    I(cuStreamQuery, 7000, 1, cuStreamQuery_ptsz)
    I(cuStreamWaitEvent, 3020, 0, cuStreamWaitEvent)
    I(cuStreamWaitEvent, 7000, 1, cuStreamWaitEvent_ptsz)
    /* modules, libraries, names */
    I(cuModuleLoad, 2000, 0, cuModuleLoad)
    I(cuModuleLoadData, 2000, 0, cuModuleLoadData)
    I(cuModuleLoadDataEx, 2010, 0, cuModuleLoadDataEx)
    I(cuModuleUnload, 2000, 0, cuModuleUnload)
    I(cuModuleGetFunction, 2000, 0, cuModuleGetFunction)
    I(cuLibraryLoadData, 12000, 0, cuLibraryLoadData)
    I(cuLibraryLoadFromFile, 12000, 0, cuLibraryLoadFromFile)
    I(cuLibraryUnload, 12000, 0, cuLibraryUnload)
    I(cuLibraryGetKernel, 12000, 0, cuLibraryGetKernel)
    I(cuLibraryGetModule, 12000, 0, cuLibraryGetModule)
    I(cuKernelGetFunction, 12000, 0, cuKernelGetFunction)
    I(cuKernelGetName, 12030, 0, cuKernelGetName)
    I(cuFuncGetName, 12030, 0, cuFuncGetName)
    I(cuFuncGetAttribute, 2020, 0, cuFuncGetAttribute)
    I(cuFuncSetAttribute, 9000, 0, cuFuncSetAttribute)
    I(cuFuncSetCacheConfig, 3000, 0, cuFuncSetCacheConfig)
};
#undef I

/* ---- lookup log (FAKECUDA_LOG_LOOKUPS) ---- */

static int log_fd = -1;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_open(void)
{
    const char *path = getenv("FAKECUDA_LOG_LOOKUPS");
    if (path && *path) {
        log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (log_fd < 0)
            fc_warn("fakecuda: cannot open FAKECUDA_LOG_LOOKUPS=%s", path);
    }
}

static void log_lookup(const char *symbol, int version, cuuint64_t flags)
{
    pthread_once(&log_once, log_open);
    if (log_fd < 0)
        return;
    char line[256];
    int n = snprintf(line, sizeof line, "%s\t%d\t%llu\n",
                     !symbol ? "(null)" : *symbol ? symbol : "(empty)", version,
                     (unsigned long long)flags);
    if (n > 0 && (size_t)n < sizeof line) {
        ssize_t w = write(log_fd, line, (size_t)n);  /* one write per line: O_APPEND keeps lines whole */
        (void)w;
    }
}

/* ---- resolution ---- */

static int cmp_base(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const known_sym *)elem)->base);
}

static void *impl_for(const char *base, int version, int per_thread)
{
    for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
        if (impls[i].version == version && impls[i].per_thread == per_thread &&
            strcmp(impls[i].base, base) == 0)
            return impls[i].fn;
    return NULL;
}

static CUresult resolve(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status)
{
    fc_config_load();
    log_lookup(symbol, cudaVersion, flags);
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                              CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    if (!*symbol) {                     /* the runtime's probe, see README.md */
        if (status)
            *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return fc_cfg.probe_result;
    }
    size_t nk = sizeof known / sizeof known[0];
    const known_sym *hit = bsearch(symbol, known, nk, sizeof known[0], cmp_base);
    if (!hit) {
        if (status)
            *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    if (cudaVersion > fc_cfg.driver_version)
        return CUDA_ERROR_INVALID_VALUE;
    const known_sym *lo = hit, *hi = hit, *end = known + nk, *best = NULL;
    while (lo > known && strcmp(lo[-1].base, symbol) == 0)
        lo--;
    while (hi + 1 < end && strcmp(hi[1].base, symbol) == 0)
        hi++;
    int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    for (const known_sym *k = lo; k <= hi; k++) {
        if (k->version > cudaVersion || (k->per_thread && !want_pt))
            continue;
        if (!best || k->version > best->version ||
            (k->version == best->version && k->per_thread))
            best = k;
    }
    if (!best) {
        if (status)
            *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_NOT_FOUND;
    }
    void *fn = impl_for(best->base, best->version, best->per_thread);
    *pfn = fn ? fn : (void *)&fc_unsupported_stub;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    return resolve(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags)
{
    return resolve(symbol, pfn, cudaVersion, flags, NULL);
}
