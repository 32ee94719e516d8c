#include "resolve.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "exit_flush.h"
#include "log.h"
#include "signals.h"

#define DRIVER_SONAME "libcuda.so.1"

static void *(*real_dlsym)(void *, const char *);
static void *libcuda;
static const void *libcuda_base;
static int resolved;
static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;

GW_NO_SANITIZE static void find_real_dlsym(void)
{
    /* dlsym moved into libc.so.6 at 2.34; older glibc exports it from libdl. */
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !real_dlsym; i++)
        real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", versions[i]);
}

static int resolve_locked(int allow_load)
{
    if (resolved)
        return 0;
    if (!real_dlsym)
        find_real_dlsym();
    if (!real_dlsym)
        return -1;
    void *handle = dlopen(DRIVER_SONAME, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle && allow_load)
        handle = dlopen(DRIVER_SONAME, RTLD_LAZY);
    if (!handle) {
        if (allow_load)
            gw_warn_once(GW_WARN_DRIVER, "cannot load %s (%s); calls pass through untraced",
                         DRIVER_SONAME, dlerror());
        return -1;
    }
    for (size_t i = 0; i < gw_hook_count; i++) {
        void *real = real_dlsym(handle, gw_hooks[i].name);
        __atomic_store_n(&gw_real_fn[gw_hooks[i].api_id], real, __ATOMIC_RELEASE);
    }
    dlerror(); /* our probes for symbols an older driver lacks are not the program's error */
    Dl_info info;
    void *anchor = real_dlsym(handle, "cuInit");
    if (anchor && dladdr(anchor, &info))
        libcuda_base = info.dli_fbase;
    libcuda = handle;
    __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
    return 0;
}

static int resolve(int allow_load)
{
    if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&resolve_lock);
    int rc = resolve_locked(allow_load);
    pthread_mutex_unlock(&resolve_lock);
    return rc;
}

int gw_resolve_init(void) { return resolve(1); }

void *gw_driver_symbol(const char *name)
{
    if (gw_resolve_init() != 0)
        return NULL;
    void *symbol = real_dlsym(libcuda, name);
    dlerror();
    return symbol;
}

void *gw_global_symbol(const char *name)
{
    if (!real_dlsym)
        find_real_dlsym();
    void *symbol = real_dlsym ? real_dlsym(RTLD_DEFAULT, name) : NULL;
    if (!symbol)
        dlerror();  /* (our probe's failure is not the program's error) */
    return symbol;
}

void *gw_next_symbol(const char *name)
{
    if (!real_dlsym)
        find_real_dlsym();
    void *symbol = real_dlsym ? real_dlsym(RTLD_NEXT, name) : NULL;
    if (!symbol)
        dlerror();
    return symbol;
}

int gw_caller_is_private(const void *address)
{
    Dl_info info;
    if (!address || !dladdr(address, &info))
        return 0;
    if (libcuda_base && info.dli_fbase == libcuda_base)
        return 1;
    const char *file = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
    file = file ? file + 1 : info.dli_fname;
    return file && strncmp(file, "libcupti", 8) == 0;
}

/* RTLD_NEXT must mean "after the caller", but forwarding from here would make it mean
 * "after libgpuwatch": a caller loaded later (another interposer) would find itself. So
 * walk the loaded objects in order and take the first definition after the caller's. */
struct loaded_objects {
    const char *names[512];
    uintptr_t starts[512];   /* lowest mapped address: what dladdr reports as dli_fbase */
    size_t count;
    uintptr_t caller;
    size_t caller_index;
};

GW_NO_SANITIZE static int collect_object(struct dl_phdr_info *object, size_t size, void *data)
{
    struct loaded_objects *objects = data;
    if (objects->count == sizeof objects->names / sizeof objects->names[0])
        return 1;
    size_t index = objects->count++;
    objects->names[index] = object->dlpi_name;
    objects->starts[index] = UINTPTR_MAX;
    for (int i = 0; i < object->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &object->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD)
            continue;
        uintptr_t start = object->dlpi_addr + segment->p_vaddr;
        if (start < objects->starts[index])
            objects->starts[index] = start & ~(uintptr_t)4095;
        if (objects->caller >= start && objects->caller < start + segment->p_memsz)
            objects->caller_index = index;
    }
    return 0;
}

/* a starts with prefix b (whole: b and a end together); by hand, since a sanitizer runtime
 * resolving its interceptors may call in before its strcmp interceptor can serve */
GW_NO_SANITIZE static int starts_with(const char *a, const char *b, int whole)
{
    while (*b && *a == *b)
        a++, b++;
    return !*b && (!whole || !*a);
}

/* The shim's own definitions of the libc functions it interposes (by their internal names:
 * never interposed themselves). A sanitizer runtime first in LD_PRELOAD that
 * resolves its sigaction or _exit interceptor's "real" one gets the shim's, which passes
 * on to libc's, rather than bypassing it. */
static void *own_dlsym(void *handle, const char *name);

GW_NO_SANITIZE static void *own_libc_definition(const char *name)
{
    static const struct {
        const char *name;
        void *definition;
    } own[] = {
        {"dlsym", (void *)own_dlsym},  {"_exit", (void *)gw_exit_now},
        {"_Exit", (void *)gw_exit_now},     {"sigaction", (void *)gw_sigaction},
        {"signal", (void *)gw_signal},
    };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (starts_with(name, own[i].name, 1))
            return own[i].definition;
    return NULL;
}

/* The other names the shim exports: the hooked driver functions, NVTX's injection entry
 * point. */
GW_NO_SANITIZE static int shim_defines(const char *name)
{
    if (starts_with(name, "InitializeInjection", 0))
        return 1;
    for (size_t i = 0; i < gw_hook_count; i++)
        if (starts_with(name, gw_hooks[i].name, 1))
            return 1;
    return 0;
}

GW_NO_SANITIZE static void *next_definition(const char *name, const void *caller)
{
    struct loaded_objects *objects = calloc(1, sizeof *objects);
    if (!objects)
        return NULL;
    objects->caller = (uintptr_t)caller;
    objects->caller_index = (size_t)-1;
    dl_iterate_phdr(collect_object, objects);
    void *found = NULL;
    /* A caller loaded just before the shim (a sanitizer runtime first in LD_PRELOAD, which
     * calls dlsym(RTLD_NEXT) from its initializer, when its own dlopen interceptor cannot
     * serve yet): what follows it follows the shim too, unless the shim defines the name.
     * Asked from here, RTLD_NEXT means exactly that, and needs no dlopen. */
    size_t self = objects->count;
    Dl_info me;
    if (dladdr((void *)next_definition, &me))
        for (size_t i = 0; i < objects->count; i++)
            if (objects->starts[i] == (uintptr_t)me.dli_fbase)
                self = i;
    if (self < objects->count && objects->caller_index + 1 == self) {
        void *own = own_libc_definition(name);
        if (own || !shim_defines(name)) {
            free(objects);
            return own ? own : real_dlsym(RTLD_NEXT, name);
        }
    }
    for (size_t i = objects->caller_index + 1; i < objects->count && !found; i++) {
        const char *path = objects->names[i];
        void *handle = dlopen(path && *path ? path : NULL, RTLD_LAZY | RTLD_NOLOAD);
        if (!handle)
            continue;
        void *symbol = real_dlsym(handle, name);
        Dl_info info;
        /* A handle also searches its dependencies: keep only this object's own symbol. */
        if (symbol && dladdr(symbol, &info) && (uintptr_t)info.dli_fbase == objects->starts[i])
            found = symbol;
        dlclose(handle);
    }
    free(objects);
    if (!found)
        dlerror();
    return found;
}

GW_NO_SANITIZE static void *shim_dlsym(void *handle, const char *name, const void *caller)
{
    if (GW_UNLIKELY(!real_dlsym)) {
        find_real_dlsym();
        if (!real_dlsym)
            return NULL;
    }
    if (handle == RTLD_NEXT)
        return next_definition(name, caller);
    void *found = real_dlsym(handle, name);
    /* Only exact names from the table, and only when they resolved to the driver's own
     * function: anything else (cuDNN's cudnn*, cuBLAS's cublas*) is none of ours. */
    if (!found || name[0] != 'c' || name[1] != 'u' || gw_config_disabled())
        return found;
    const struct gw_hook *hook = gw_hook_by_name(name);
    if (!hook || resolve(0) != 0 || gw_real_fn[hook->api_id] != found)
        return found;
    if (gw_caller_is_private(caller))
        return found;
    return hook->wrapper;
}

GW_EXPORT GW_NO_SANITIZE void *dlsym(void *handle, const char *name)
{
    return shim_dlsym(handle, name, __builtin_return_address(0));
}

/* (the same, by an internal name: what own_libc_definition hands out) */
GW_NO_SANITIZE __attribute__((noinline)) static void *own_dlsym(void *handle, const char *name)
{
    return shim_dlsym(handle, name, __builtin_return_address(0));
}
