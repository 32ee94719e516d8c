/* A native call stack in a few words: the program's frames nearest the driver call. */
#include "stack_where.h"

#include <stdio.h>
#include <string.h>

#include "demangle.h"
#include "trace_reader.h"

#define SITE_FRAMES 2          /* frames named per site */
#define FRAME_NAME_MAX 64      /* a longer symbol (C++) is cut */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Frames in the shim, the driver or the CUDA runtime say nothing about the program. */
static int is_cuda_frame(const char *module)
{
    const char *name = base_name(module);
    return !strncmp(name, "libgpuwatch", 11) || !strncmp(name, "libcuda", 7);
}

/* In a PyTorch program every cudaMalloc comes from PyTorch's caching allocator (libc10_cuda,
 * libtorch_cuda): its C++ frames say nothing about which tensors, and the interpreter's
 * frames below them say nothing either. PyTorch's own memory snapshot has the Python lines. */
static int is_pytorch_frame(const char *module)
{
    const char *name = base_name(module);
    return !strncmp(name, "libc10", 6) || !strncmp(name, "libtorch", 8);
}

void an_stack_where(const struct gw_stack *st, const char *(*string)(void *user, uint64_t id),
                    void *user, const char *pytorch_label, char *out, size_t size)
{
    out[0] = 0;
    const char *first_module = NULL;
    unsigned named = 0;
    size_t len = 0;
    for (unsigned i = 0; i < st->nframes && named < SITE_FRAMES; i++) {
        const struct gw_stack_frame *f = &st->frames[i];
        const char *module = f->module_id ? string(user, f->module_id) : NULL;
        if (module && is_cuda_frame(module))
            continue;
        if (named && module && !strncmp(base_name(module), "libc.so", 7))
            break;  /* (what calls main says nothing of the program) */
        if (module && is_pytorch_frame(module)) {
            if (!named)
                snprintf(out, size, "%s (%s)", pytorch_label, base_name(module));
            return;  /* after the program's own frames, PyTorch's add nothing */
        }
        const char *symbol = f->symbol_id ? string(user, f->symbol_id) : NULL;
        char frame[FRAME_NAME_MAX + 32], readable[FRAME_NAME_MAX + 1];
        if (symbol && *symbol)
            snprintf(frame, sizeof frame, "%s", gw_demangle(symbol, readable, sizeof readable));
        else
            snprintf(frame, sizeof frame, "%.*s+0x%llx", FRAME_NAME_MAX,
                     module ? base_name(module) : "?", (unsigned long long)f->module_offset);
        if (!named && symbol && *symbol && module)
            first_module = module;
        int n = snprintf(out + len, size - len, "%s%s", named ? " \xE2\x86\x90 " : "", frame);
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
        named++;
    }
    if (first_module && len < size)
        snprintf(out + len, size - len, " (%.*s)", FRAME_NAME_MAX, base_name(first_module));
}

