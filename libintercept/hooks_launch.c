/* Kernel launches, host functions and graph launches: the hottest hooks. A launch costs
 * two clock reads, two cached id lookups and one ring append. */
#include "gpuwatch/trace_format.h"
#include "hooks.h"

static inline void record_launch(unsigned api, uint64_t t0, uint64_t t1, CUresult result,
                                 CUfunction func, const uint32_t dims[6], uint32_t shared_mem,
                                 CUstream stream)
{
    uint64_t words[2] = {gw_shape_id(func, dims, shared_mem), gw_stream_id(stream)};
    gw_rec_call(api, t0, t1, result, words, 2);
}

#define LAUNCH_KERNEL(name)                                                                 \
    GW_EXPORT CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
                            unsigned int bx, unsigned int by, unsigned int bz,              \
                            unsigned int shared_mem, CUstream stream, void **params,        \
                            void **extra)                                                   \
    {                                                                                       \
        __typeof__(&name) real = GW_REAL(name);                                             \
        if (!real)                                                                          \
            return GW_NO_DRIVER;                                                            \
        if (!gw_enter())                                                                    \
            return real(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra);      \
        CUresult result;                                                                    \
        GW_TIMED_GPU(result, real(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra)); \
        const uint32_t dims[6] = {gx, gy, gz, bx, by, bz};                                  \
        record_launch(GW_API_##name, gw_t0, gw_t1, result, f, dims, shared_mem, stream);    \
        gw_leave();                                                                         \
        errno = gw_saved_errno;                                                             \
        return result;                                                                      \
    }
LAUNCH_KERNEL(cuLaunchKernel)
LAUNCH_KERNEL(cuLaunchKernel_ptsz)

#define LAUNCH_COOPERATIVE(name)                                                            \
    GW_EXPORT CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
                            unsigned int bx, unsigned int by, unsigned int bz,              \
                            unsigned int shared_mem, CUstream stream, void **params)        \
    {                                                                                       \
        __typeof__(&name) real = GW_REAL(name);                                             \
        if (!real)                                                                          \
            return GW_NO_DRIVER;                                                            \
        if (!gw_enter())                                                                    \
            return real(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params);             \
        CUresult result;                                                                    \
        GW_TIMED_GPU(result, real(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params));      \
        const uint32_t dims[6] = {gx, gy, gz, bx, by, bz};                                  \
        record_launch(GW_API_##name, gw_t0, gw_t1, result, f, dims, shared_mem, stream);    \
        gw_leave();                                                                         \
        errno = gw_saved_errno;                                                             \
        return result;                                                                      \
    }
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel)
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel_ptsz)

#define LAUNCH_EX(name)                                                                     \
    GW_EXPORT CUresult name(const CUlaunchConfig *config, CUfunction f, void **params,      \
                            void **extra)                                                   \
    {                                                                                       \
        __typeof__(&name) real = GW_REAL(name);                                             \
        if (!real)                                                                          \
            return GW_NO_DRIVER;                                                            \
        if (!gw_enter())                                                                    \
            return real(config, f, params, extra);                                          \
        CUresult result;                                                                    \
        GW_TIMED_GPU(result, real(config, f, params, extra));                                   \
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
        gw_leave();                                                                         \
        errno = gw_saved_errno;                                                             \
        return result;                                                                      \
    }
LAUNCH_EX(cuLaunchKernelEx)
LAUNCH_EX(cuLaunchKernelEx_ptsz)

#define LAUNCH_HOST_FUNC(name)                                                              \
    GW_EXPORT CUresult name(CUstream stream, CUhostFn fn, void *data)                       \
    {                                                                                       \
        __typeof__(&name) real = GW_REAL(name);                                             \
        if (!real)                                                                          \
            return GW_NO_DRIVER;                                                            \
        if (!gw_enter())                                                                    \
            return real(stream, fn, data);                                                  \
        CUresult result;                                                                    \
        GW_TIMED_GPU(result, real(stream, fn, data));                                           \
        uint64_t words[3] = {0, gw_stream_id(stream), (uint64_t)(uintptr_t)fn};             \
        GW_RECORD(GW_API_##name, result, words, 3);                                         \
        return result;                                                                      \
    }
LAUNCH_HOST_FUNC(cuLaunchHostFunc)
LAUNCH_HOST_FUNC(cuLaunchHostFunc_ptsz)

#define GRAPH_LAUNCH(name)                                                                  \
    GW_EXPORT CUresult name(CUgraphExec exec, CUstream stream)                              \
    {                                                                                       \
        __typeof__(&name) real = GW_REAL(name);                                             \
        if (!real)                                                                          \
            return GW_NO_DRIVER;                                                            \
        if (!gw_enter())                                                                    \
            return real(exec, stream);                                                      \
        CUresult result;                                                                    \
        GW_TIMED_GPU(result, real(exec, stream));                                               \
        uint64_t words[3] = {0, gw_stream_id(stream), gw_u64(exec)};                        \
        GW_RECORD(GW_API_##name, result, words, 3);                                         \
        return result;                                                                      \
    }
GRAPH_LAUNCH(cuGraphLaunch)
GRAPH_LAUNCH(cuGraphLaunch_ptsz)
