/*
 * fakecuda: kernel launches and host functions. A launch validates like the real driver,
 * then enqueues the function's simulated duration on the stream and returns at once.
 * CUfunction and CUkernel handles are both accepted (CUDA 12+ allows a CUkernel cast to
 * CUfunction). Host functions and stream callbacks run inline: the call sleeps until the
 * stream's earlier work is done, runs the function, and the stream continues after it.
 */
#include "fakecuda.h"

#define MAX_SHARED_OPTIN 232448u

/* Only with an activity sink or while capturing: describe the launch. */
static __attribute__((noinline, cold)) void
report_launch(fakecuda_activity_sink_fn sink, fc_stream *s, const fc_func *fn, unsigned gx,
              unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
              int coop, int64_t end, int64_t dur_ns, struct fc_graph *g)
{
    struct fakecuda_activity a = {
        .kind = FAKECUDA_ACTIVITY_KERNEL,
        .name = fn->name,
        .grid_x = gx, .grid_y = gy, .grid_z = gz,
        .block_x = bx, .block_y = by, .block_z = bz,
        .dynamic_smem = shmem,
        .static_smem = 0,        /* cuFuncGetAttribute(SHARED_SIZE_BYTES) */
        .registers = 32,         /* cuFuncGetAttribute(NUM_REGS) */
        .cooperative = (uint32_t)coop,
    };
    fc_activity_report(sink, s, &a, end, dur_ns, g);
}

static inline CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shmem, CUstream h,
                              int per_thread, void **params, void **extra, int coop)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    fc_func *fn = fc_func_get(f);
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535 || bz > 64 ||
        (uint64_t)bx * by * bz > 1024 || shmem > MAX_SHARED_OPTIN || (params && extra))
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_graph *g = NULL;
    int64_t end = fc_enqueue_op(s, fn->dur_ns, &g), dur_ns = fn->dur_ns;
    if (__builtin_expect(fc_collective_on(), 0) && end != FC_CAPTURED &&
        fc_is_collective(fn->name)) {
        int64_t start = end - dur_ns;
        end = fc_collective_end(start, dur_ns);
        fc_stream_extend(s, end);
        dur_ns = end - start;
    }
    fakecuda_activity_sink_fn sink = fc_sink();
    if (__builtin_expect(sink != NULL || end == FC_CAPTURED, 0))
        report_launch(sink, s, fn, gx, gy, gz, bx, by, bz, shmem, coop, end, dur_ns, g);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, 0, kernelParams, extra, 0);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX,
                                     unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, 1, kernelParams, extra, 0);
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
                          int per_thread)
{
    if (!c || (c->numAttrs && !c->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    int coop = 0;
    for (unsigned i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && c->attrs[i].value.cooperative)
            coop = 1;
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                  c->blockDimZ, c->sharedMemBytes, c->hStream, per_thread, params, extra, coop);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                  void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, 0);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, 1);
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void **kernelParams)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, 0, kernelParams, NULL, 1);
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                                unsigned int gridDimY, unsigned int gridDimZ,
                                                unsigned int blockDimX, unsigned int blockDimY,
                                                unsigned int blockDimZ,
                                                unsigned int sharedMemBytes, CUstream hStream,
                                                void **kernelParams)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, 1, kernelParams, NULL, 1);
}

/* ---- host functions ---- */

static CUresult host_call(CUstream h, int per_thread, CUhostFn fn, CUstreamCallback cb,
                          void *userData)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!fn && !cb)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_enqueue(s, 0) == FC_CAPTURED)
        return CUDA_SUCCESS;
    fc_sleep_until(fc_stream_point(s));
    if (fn)
        fn(userData);
    else
        cb(h, CUDA_SUCCESS, userData);
    fc_stream_wait_until(s, fc_now());
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    return host_call(hStream, 0, fn, NULL, userData);
}

CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return host_call(hStream, 1, fn, NULL, userData);
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                     unsigned int flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return host_call(hStream, 0, NULL, callback, userData);
}

CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                          void *userData, unsigned int flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return host_call(hStream, 1, NULL, callback, userData);
}
