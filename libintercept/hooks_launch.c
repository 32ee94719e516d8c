/* Kernel launches, host functions and graph launches: the hottest hooks. A launch costs
 * two clock reads, two cached id lookups and one ring append. */
#include "gpuwatch/trace_format.h"
#include "hooks.h"

static inline void record_launch(unsigned api, uint64_t t0, uint64_t t1, CUresult result,
                                 CUfunction func, const uint32_t dims[6], uint32_t shared_mem,
                                 CUstream stream)
{
    uint64_t words[2] = {gw_shape_id(func, dims, shared_mem), gw_stream_id(stream, api)};
    gw_rec_call(api, t0, t1, result, words, 2);
}

#define LAUNCH_KERNEL(name)                                                                 \
    GW_EXPORT CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
                            unsigned int bx, unsigned int by, unsigned int bz,              \
                            unsigned int shared_mem, CUstream stream, void **params,        \
                            void **extra)                                                   \
    {                                                                                       \
        GW_HOOK_BEGIN(name, GW_TIMED_GPU,                                                   \
                      real(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra));  \
        const uint32_t dims[6] = {gx, gy, gz, bx, by, bz};                                  \
        record_launch(GW_API_##name, gw_t0, gw_t1, result, f, dims, shared_mem, stream);    \
        GW_HOOK_END();                                                                      \
    }
LAUNCH_KERNEL(cuLaunchKernel)
LAUNCH_KERNEL(cuLaunchKernel_ptsz)

#define LAUNCH_COOPERATIVE(name)                                                            \
    GW_EXPORT CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
                            unsigned int bx, unsigned int by, unsigned int bz,              \
                            unsigned int shared_mem, CUstream stream, void **params)        \
    {                                                                                       \
        GW_HOOK_BEGIN(name, GW_TIMED_GPU,                                                   \
                      real(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params));         \
        const uint32_t dims[6] = {gx, gy, gz, bx, by, bz};                                  \
        record_launch(GW_API_##name, gw_t0, gw_t1, result, f, dims, shared_mem, stream);    \
        GW_HOOK_END();                                                                      \
    }
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel)
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel_ptsz)

#define LAUNCH_EX(name)                                                                     \
    GW_EXPORT CUresult name(const CUlaunchConfig *config, CUfunction f, void **params,      \
                            void **extra)                                                   \
    {                                                                                       \
        GW_HOOK_BEGIN(name, GW_TIMED_GPU, real(config, f, params, extra));                  \
        uint32_t dims[6] = {0};                                                             \
        uint32_t shared_mem = 0;                                                            \
        CUstream stream = NULL;                                                             \
        if (config) {                                                                       \
            dims[0] = config->gridDimX, dims[1] = config->gridDimY;                         \
            dims[2] = config->gridDimZ, dims[3] = config->blockDimX;                        \
            dims[4] = config->blockDimY, dims[5] = config->blockDimZ;                       \
            shared_mem = config->sharedMemBytes, stream = config->hStream;                  \
        }                                                                                   \
        record_launch(GW_API_##name, gw_t0, gw_t1, result, f, dims, shared_mem, stream);    \
        GW_HOOK_END();                                                                      \
    }
LAUNCH_EX(cuLaunchKernelEx)
LAUNCH_EX(cuLaunchKernelEx_ptsz)

/* Host functions and graph launches carry no shape; the handle says what ran. */
#define LAUNCH_HANDLE(name, params, call, stream, handle)                                   \
    GW_EXPORT CUresult name params                                                          \
    {                                                                                       \
        GW_HOOK_BEGIN(name, GW_TIMED_GPU, call);                                            \
        uint64_t words[3] = {0, gw_stream_id(stream, GW_API_##name),                        \
                             (uint64_t)(uintptr_t)(handle)};                                \
        GW_RECORD_AND_RETURN(GW_API_##name, words, 3);                                      \
    }
LAUNCH_HANDLE(cuLaunchHostFunc, (CUstream stream, CUhostFn fn, void *data),
              real(stream, fn, data), stream, fn)
LAUNCH_HANDLE(cuLaunchHostFunc_ptsz, (CUstream stream, CUhostFn fn, void *data),
              real(stream, fn, data), stream, fn)
LAUNCH_HANDLE(cuGraphLaunch, (CUgraphExec exec, CUstream stream), real(exec, stream), stream, exec)
LAUNCH_HANDLE(cuGraphLaunch_ptsz, (CUgraphExec exec, CUstream stream), real(exec, stream), stream,
              exec)
