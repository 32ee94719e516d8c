/*
 * Native call stacks (of allocating calls, and of the calls call_sites.c picks), with libunwind's unw_backtrace, or glibc's backtrace()
 * where libunwind is not installed (many CUDA and PyTorch images lack libunwind8) or
 * GPUWATCH_STACK_UNWINDER=libc asks for it: both walk the DWARF unwind tables.
 *
 * libunwind is dlopened RTLD_LOCAL rather than linked: libunwind.so.8 exports the
 * _Unwind_* personality API and a weak backtrace(), and a preloaded library's dependencies
 * join the global scope, where they would take C++ exception unwinding (libstdc++ binds
 * _Unwind_RaiseException to the first definition) and backtrace() from the program.
 * When neither unwinds, every stack id is 0; the program never notices either way.
 */
#include "stack_capture.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>

#include "gpuwatch/trace_format.h"
#include "log.h"
#include "recorder.h"

#define UNWIND_SONAME "libunwind.so.8"
/* room for the shim's own frames: this function, the unwinder's, the hook's, and the call
 * observer's path (call_sites.c) */
#define SELF_FRAMES 8

typedef int (*unwind_fn)(void **frames, int size);  /* unw_backtrace and backtrace() alike */

static unsigned stack_depth;
static unwind_fn backtrace_fn;
static uintptr_t self_lo, self_hi;  /* the shim's mapped range: its frames are skipped */
static const char self_anchor;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (start < lo)
            lo = start;
        if (start + ph->p_memsz > hi)
            hi = start + ph->p_memsz;
    }
    uintptr_t anchor = (uintptr_t)&self_anchor;
    if (anchor < lo || anchor >= hi)
        return 0;
    self_lo = lo;
    self_hi = hi;
    return 1;
}

static int libc_backtrace(void **frames, int size) { return backtrace(frames, size); }

void gw_stack_init(unsigned depth, int use_libc)
{
    if (depth > GW_STACK_MAX_FRAMES)
        depth = GW_STACK_MAX_FRAMES;
    if (depth && !__atomic_load_n(&backtrace_fn, __ATOMIC_ACQUIRE)) {
        dl_iterate_phdr(find_self, NULL);
        void *lib = use_libc ? NULL : dlopen(UNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
        unwind_fn fn = lib ? (unwind_fn)dlsym(lib, "unw_backtrace") : NULL;
        if (!fn) {
            if (!use_libc)
                gw_debug("no %s: allocation call stacks from glibc's backtrace()",
                         UNWIND_SONAME);
            fn = libc_backtrace;
        }
        __atomic_store_n(&backtrace_fn, fn, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&stack_depth, depth, __ATOMIC_RELEASE);
}

static int in_self(uintptr_t pc) { return pc >= self_lo && pc < self_hi; }

uint64_t gw_stack_here(void)
{
    unsigned depth = __atomic_load_n(&stack_depth, __ATOMIC_ACQUIRE);
    unwind_fn unwind = __atomic_load_n(&backtrace_fn, __ATOMIC_ACQUIRE);
    if (!depth || !unwind)
        return 0;
    void *frames[GW_STACK_MAX_FRAMES + SELF_FRAMES];
    int n = unwind(frames, (int)depth + SELF_FRAMES);
    if (n <= 0)
        return 0;
    /* Leading frames up to the last of the shim's: ours (and the unwinder's own). */
    int start = 0;
    for (int i = 0; i < n; i++) {
        if (in_self((uintptr_t)frames[i]))
            start = i + 1;
        else if (start)
            break;
    }
    uint64_t pcs[GW_STACK_MAX_FRAMES];
    unsigned count = 0;
    for (int i = start; i < n && count < depth; i++) {
        uintptr_t pc = (uintptr_t)frames[i];
        if (!pc)
            break;
        pcs[count++] = pc - 1;  /* return addresses: the call instruction is just before */
    }
    return gw_rec_stack(pcs, count);
}
