/* Where kernel names come from, so that every launch can carry an interned name. */
#include "gpuwatch/trace_format.h"
#include "hooks.h"

static void record_name(unsigned api, uint64_t t0, uint64_t t1, CUresult result,
                        uint64_t handle, const char *name)
{
    uint64_t name_id = 0;
    if (result == CUDA_SUCCESS && handle) {
        name_id = name ? gw_rec_string(name) : gw_name_of_handle(handle);
        gw_rec_set_handle_name(handle, name_id);
    }
    uint64_t words[2] = {handle, name_id};
    gw_rec_call(api, t0, t1, result, words, 2);
}

#define NAME_HOOK(name, call, handle_expr, name_expr)                               \
    GW_HOOK_BEGIN(name, GW_TIMED, call);                                            \
    int ok = result == CUDA_SUCCESS;                                                \
    record_name(GW_API_##name, gw_t0, gw_t1, result, ok ? (handle_expr) : 0,        \
                ok ? (name_expr) : NULL);                                           \
    GW_HOOK_END()

GW_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule module, const char *name)
{
    NAME_HOOK(cuModuleGetFunction, real(hfunc, module, name), hfunc ? gw_u64(*hfunc) : 0, name);
}

GW_EXPORT CUresult cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
    NAME_HOOK(cuLibraryGetKernel, real(kernel, library, name), kernel ? gw_u64(*kernel) : 0,
              name);
}

/* The function inherits the kernel's name when we saw the kernel made. */
static const char *kernel_name_text(CUkernel kernel)
{
    const char *name = NULL;
    __typeof__(&cuKernelGetName) get_name = GW_REAL(cuKernelGetName);
    if (get_name && get_name(&name, kernel) != CUDA_SUCCESS)
        name = NULL;
    return name;
}

GW_EXPORT CUresult cuKernelGetFunction(CUfunction *func, CUkernel kernel)
{
    NAME_HOOK(cuKernelGetFunction, real(func, kernel), func ? gw_u64(*func) : 0,
              kernel_name_text(kernel));
}

GW_EXPORT CUresult cuFuncGetName(const char **name, CUfunction func)
{
    NAME_HOOK(cuFuncGetName, real(name, func), gw_u64(func), name ? *name : NULL);
}

GW_EXPORT CUresult cuKernelGetName(const char **name, CUkernel kernel)
{
    NAME_HOOK(cuKernelGetName, real(name, kernel), gw_u64(kernel), name ? *name : NULL);
}
