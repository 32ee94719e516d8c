/*
 * fakecuda: modules, libraries, functions, kernels and their names.
 *
 * An image is text: PTX (every ".entry NAME", with or without ".visible") or the shorthand
 * "kernels: a b c". Binary images (cubin, fatbin) are refused with CUDA_ERROR_INVALID_IMAGE.
 * Each entry becomes a function handle that remembers its name and its simulated duration,
 * parsed once from the name: a trailing _<N>us, _<N>ms or _<N>ns (also inside a simple
 * mangled C++ name such as _Z12forward_300usPf), else FAKECUDA_KERNEL_NS.
 * A library holds CUkernel handles plus a module of the matching CUfunction handles.
 */
#include "fakecuda.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fc_module {
    uint32_t magic;
    size_t n;
    fc_func *funcs;
    char *names;
} fc_module;

typedef struct fc_library {
    uint32_t magic;
    fc_module mod;             /* the CUfunction twins, also returned by cuLibraryGetModule */
    fc_func *kernels;
} fc_library;

/* ---- durations from names ---- */

static int64_t parse_suffix(const char *s, size_t len)
{
    static const struct { const char *unit; int64_t mult; } units[] = {
        { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 } };
    if (len < 4)
        return -1;
    for (size_t u = 0; u < 3; u++) {
        if (memcmp(s + len - 2, units[u].unit, 2) != 0)
            continue;
        size_t end = len - 2, i = end;
        while (i > 0 && isdigit((unsigned char)s[i - 1]))
            i--;
        if (i == end || i == 0 || s[i - 1] != '_' || end - i > 12)
            return -1;
        int64_t v = 0;
        for (size_t k = i; k < end; k++)
            v = v * 10 + (s[k] - '0');
        return v * units[u].mult;
    }
    return -1;
}

static int64_t fc_kernel_duration(const char *name)
{
    size_t len = strlen(name);
    int64_t d = parse_suffix(name, len);
    if (d < 0 && name[0] == '_' && name[1] == 'Z' && isdigit((unsigned char)name[2])) {
        char *end;
        unsigned long n = strtoul(name + 2, &end, 10);
        if (n > 0 && n <= strlen(end))
            d = parse_suffix(end, n);
    }
    return d >= 0 ? d : fc_cfg.kernel_ns;
}

/* ---- parsing an image ---- */

static int ident_char(int c) { return isalnum(c) || c == '_' || c == '$'; }

/* Append the identifier at *p to the list; returns 0 on allocation failure. */
static int take_name(const char **p, char **buf, size_t *len, size_t *cap, size_t *count)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    const char *b = s;
    while (ident_char((unsigned char)*s))
        s++;
    *p = s;
    size_t n = (size_t)(s - b);
    if (!n)
        return 1;
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap + n + 1) * 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return 0;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, b, n);
    (*buf)[*len + n] = 0;
    *len += n + 1;
    (*count)++;
    return 1;
}

static CUresult parse_image(const void *image, fc_module *m, uint32_t magic)
{
    const unsigned char *u = image;
    if (!image)
        return CUDA_ERROR_INVALID_VALUE;
    if ((u[0] == 0x7f && u[1] == 'E') || (u[0] == 0x50 && u[1] == 0xed && u[2] == 0x55))
        return CUDA_ERROR_INVALID_IMAGE;       /* cubin / fatbin: not simulated */
    const char *text = image;
    int is_ptx = strstr(text, ".version") || strstr(text, ".entry");
    const char *kl = strstr(text, "kernels:");
    if (!is_ptx && !kl)
        return CUDA_ERROR_INVALID_IMAGE;
    char *names = NULL;
    size_t len = 0, cap = 0, count = 0;
    for (const char *p = text; is_ptx && (p = strstr(p, ".entry"));) {
        int starts = p == text || isspace((unsigned char)p[-1]);
        p += 6;
        if (starts && isspace((unsigned char)*p) && !take_name(&p, &names, &len, &cap, &count))
            goto oom;
    }
    if (kl) {
        const char *p = kl + 8;
        while (*p && *p != '\n') {
            while (*p == ' ' || *p == '\t' || *p == ',')
                p++;
            if (!ident_char((unsigned char)*p))
                break;
            if (!take_name(&p, &names, &len, &cap, &count))
                goto oom;
        }
    }
    m->funcs = calloc(count ? count : 1, sizeof *m->funcs);
    if (!m->funcs)
        goto oom;
    m->names = names;
    m->n = count;
    const char *nm = names;
    for (size_t i = 0; i < count; i++, nm += strlen(nm) + 1) {
        m->funcs[i].magic = magic;
        m->funcs[i].name = nm;
        m->funcs[i].dur_ns = fc_kernel_duration(nm);
        m->funcs[i].owner = m;
    }
    m->magic = FC_MAGIC_MODULE;
    return CUDA_SUCCESS;
oom:
    free(names);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static void module_release(fc_module *m)
{
    for (size_t i = 0; i < m->n; i++)
        m->funcs[i].magic = FC_MAGIC_DEAD;
    m->magic = FC_MAGIC_DEAD;
    free(m->funcs);
    free(m->names);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = (cap + 4096 + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096)
            break;
    }
    fclose(f);
    buf[len] = 0;
    return buf;
}

/* ---- modules ---- */

static fc_module *module_get(CUmodule h)
{
    fc_module *m = (fc_module *)h;
    return m && m->magic == FC_MAGIC_MODULE ? m : NULL;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    fc_module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = parse_image(image, m, FC_MAGIC_FUNC);
    if (r != CUDA_SUCCESS) {
        free(m);
        return r;
    }
    *module = (CUmodule)m;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
    if (numOptions && (!options || !optionValues))
        return CUDA_ERROR_INVALID_VALUE;
    return cuModuleLoadData(module, image);
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!module || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    char *text = read_file(fname);
    if (!text)
        return CUDA_ERROR_FILE_NOT_FOUND;
    r = cuModuleLoadData(module, text);
    free(text);
    return r;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    fc_module *m = module_get(hmod);
    if (!m || m->funcs == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; i < m->n; i++)          /* a library's module goes with the library */
        if (m->funcs[i].owner != m)
            return CUDA_ERROR_INVALID_HANDLE;
    module_release(m);
    free(m);
    return CUDA_SUCCESS;
}

static fc_func *find(fc_module *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->funcs[i].name, name) == 0)
            return &m->funcs[i];
    return NULL;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    fc_module *m = module_get(hmod);
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    fc_func *f = find(m, name);
    if (!f)
        return CUDA_ERROR_NOT_FOUND;
    *hfunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

/* ---- libraries (context-independent; cuLibraryLoadData needs no current context) ---- */

static fc_library *library_get(CUlibrary h)
{
    fc_library *l = (fc_library *)h;
    return l && l->magic == FC_MAGIC_LIBRARY ? l : NULL;
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!library || !code || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
        (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    fc_library *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = parse_image(code, &l->mod, FC_MAGIC_FUNC);
    if (r == CUDA_SUCCESS) {
        l->kernels = calloc(l->mod.n ? l->mod.n : 1, sizeof *l->kernels);
        if (!l->kernels) {
            module_release(&l->mod);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (r != CUDA_SUCCESS) {
        free(l);
        return r;
    }
    for (size_t i = 0; i < l->mod.n; i++) {
        l->kernels[i] = l->mod.funcs[i];
        l->kernels[i].magic = FC_MAGIC_KERNEL;
        l->kernels[i].owner = l;
        l->kernels[i].as_function = &l->mod.funcs[i];
        l->mod.funcs[i].owner = l;
    }
    l->magic = FC_MAGIC_LIBRARY;
    *library = (CUlibrary)l;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                       CUjit_option *jitOptions, void **jitOptionsValues,
                                       unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                       void **libraryOptionValues, unsigned int numLibraryOptions)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!library || !fileName)
        return CUDA_ERROR_INVALID_VALUE;
    char *text = read_file(fileName);
    if (!text)
        return CUDA_ERROR_FILE_NOT_FOUND;
    r = cuLibraryLoadData(library, text, jitOptions, jitOptionsValues, numJitOptions,
                          libraryOptions, libraryOptionValues, numLibraryOptions);
    free(text);
    return r;
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    fc_library *l = library_get(library);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; i < l->mod.n; i++)
        l->kernels[i].magic = FC_MAGIC_DEAD;
    free(l->kernels);
    module_release(&l->mod);
    l->magic = FC_MAGIC_DEAD;
    free(l);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    fc_library *l = library_get(library);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    fc_func *f = find(&l->mod, name);
    if (!f)
        return CUDA_ERROR_NOT_FOUND;
    *pKernel = (CUkernel)&l->kernels[f - l->mod.funcs];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pMod)
        return CUDA_ERROR_INVALID_VALUE;
    fc_library *l = library_get(library);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    *pMod = (CUmodule)&l->mod;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    fc_func *k = (fc_func *)kernel;
    if (!k || k->magic != FC_MAGIC_KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    *pFunc = (CUfunction)k->as_function;
    return CUDA_SUCCESS;
}

/* ---- names and attributes ---- */

fc_func *fc_func_get(CUfunction h)
{
    fc_func *f = (fc_func *)h;
    return f && (f->magic == FC_MAGIC_FUNC || f->magic == FC_MAGIC_KERNEL) ? f : NULL;
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    fc_func *f = fc_func_get(hfunc);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = f->name;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    fc_func *k = (fc_func *)hfunc;
    if (!k || k->magic != FC_MAGIC_KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = k->name;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pi || (int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_func_get(hfunc))
        return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 80; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = 49152; break;
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_func_get(hfunc))
        return CUDA_ERROR_INVALID_HANDLE;
    return (int)attrib >= 0 && attrib < CU_FUNC_ATTRIBUTE_MAX ? CUDA_SUCCESS
                                                             : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    return fc_func_get(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
