/*
 * Python call stacks of the calls findings are about (which ones: call_sites.c). Read from the interpreter's own frames through its public C API, found
 * with dlsym at run time (never linked), only on a thread that holds the GIL: the shim
 * never takes the GIL, never runs Python code of its own, and leaves the thread's Python
 * error state as it found it.
 *
 * PyTorch's bindings release the GIL around their work, so the calls findings are about
 * are mostly made without it. For those the thread's frames are read from the
 * interpreter's memory (py_raw_frames.c), for the versions whose layout is known. For the
 * others PyEval_SaveThread and PyEval_RestoreThread are interposed: between the two the
 * thread runs no Python, so its stack when it takes the GIL back is the one it had at each
 * call in between; the stack is read then and named, in one PYSITE record, for those
 * calls. Interposing only works where the interpreter's C API comes from a shared
 * libpython (the program's own definitions come before a preloaded library's); a
 * statically linked interpreter of such a version gets stacks only for the calls made
 * with the GIL held, and the others stay without one rather than get a wrong one.
 */
#include "py_frames.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "gpuwatch/trace_format.h"
#include "gw_cuda.h"
#include "log.h"
#include "py_raw_frames.h"
#include "recorder.h"
#include "resolve.h"


/* The C API, typed with void * for PyObject *, PyFrameObject * and PyThreadState *. */
static struct {
    void *(*this_thread_state)(void);        /* PyGILState_GetThisThreadState */
    void *(*current_thread_state)(void);     /* _PyThreadState_UncheckedGet (3.13: public) */
    int (*is_initialized)(void);             /* Py_IsInitialized */
    int (*is_finalizing)(void);              /* _Py_IsFinalizing (3.13: Py_IsFinalizing) */
    void *(*get_frame)(void);                /* PyEval_GetFrame: borrowed */
    void *(*frame_code)(void *frame);        /* PyFrame_GetCode: new reference */
    int (*frame_line)(void *frame);          /* PyFrame_GetLineNumber */
    void *(*frame_back)(void *frame);        /* PyFrame_GetBack: new reference or NULL */
    void (*incref)(void *obj);               /* Py_IncRef */
    void (*decref)(void *obj);               /* Py_DecRef */
    void *(*getattr)(void *obj, const char *name);            /* PyObject_GetAttrString */
    const char *(*utf8)(void *str, ssize_t *len);             /* PyUnicode_AsUTF8AndSize */
    void (*err_fetch)(void **type, void **value, void **tb);  /* PyErr_Fetch */
    void (*err_restore)(void *type, void *value, void *tb);   /* PyErr_Restore */
    const char *name_attr;                   /* co_qualname (3.11+), else co_name */
} py;

static unsigned py_depth;  /* frames per stack; 0 while stacks are off */
static int py_raw;         /* frames of GIL-released calls are read raw (py_raw_frames.c) */

/* What one thread has pending. */
struct py_thread {
    unsigned generation;   /* the recorder's trace these call numbers belong to */
    int released;          /* gave up the GIL through our PyEval_SaveThread, not back yet */
    int capturing;         /* reading frames: calls made meanwhile (a finalizer's) get none */
    uint64_t first, count; /* calls made since then that want a stack */
};
static GW_TLS struct py_thread py_thread;

static struct py_thread *this_thread(void)
{
    struct py_thread *t = &py_thread;
    unsigned generation = gw_recorder_generation();
    if (t->generation != generation) {
        memset(t, 0, sizeof *t);
        t->generation = generation;
    }
    return t;
}

static int holds_gil(void)
{
    if (!py.is_initialized() || (py.is_finalizing && py.is_finalizing()))
        return 0;
    void *mine = py.this_thread_state();
    return mine && py.current_thread_state() == mine;
}

static uint64_t string_attr(void *obj, const char *name)
{
    void *value = py.getattr(obj, name);
    if (!value)
        return 0;  /* (the error it set is dropped by capture's restore) */
    ssize_t len = 0;
    const char *text = py.utf8(value, &len);
    uint64_t id = text ? gw_rec_string(text) : 0;
    py.decref(value);
    return id;
}

/* A frame's words, the first time a stack holding it is seen. The code object is kept
 * alive for good: its address keys interned stacks, so no other code object may ever
 * take it. */
static void describe(const uint64_t *key, uint64_t *frame)
{
    void *code = (void *)(uintptr_t)key[0];
    py.incref(code);
    frame[0] = string_attr(code, "co_filename");
    frame[1] = key[1];
    frame[2] = string_attr(code, py.name_attr);
}

/* The PYSTACK id of this thread's Python stack; the GIL is held. 0 when it has none. */
static uint64_t capture(struct py_thread *t)
{
    void *type, *value, *tb;
    t->capturing = 1;
    py.err_fetch(&type, &value, &tb);
    uint64_t keys[GW_STACK_MAX_FRAMES * 2];
    unsigned n = 0;
    void *frame = py.get_frame();
    if (frame)
        py.incref(frame);
    while (frame && n < py_depth) {
        void *code = py.frame_code(frame);
        int line = py.frame_line(frame);
        keys[2 * n] = (uint64_t)(uintptr_t)code;
        keys[2 * n + 1] = line > 0 ? (uint64_t)line : 0;
        n += code != NULL;
        /* (the frame, executing, keeps its code alive until the stack is interned) */
        if (code)
            py.decref(code);
        void *back = py.frame_back(frame);
        py.decref(frame);
        frame = back;
    }
    if (frame)
        py.decref(frame);
    uint64_t id = gw_rec_pystack(keys, n, describe);
    py.err_restore(type, value, tb);
    t->capturing = 0;
    return id;
}

static void emit(uint64_t pystack, uint64_t first, uint64_t count)
{
    if (!pystack || !count)
        return;
    uint64_t words[3] = {pystack, first, count};
    gw_rec_untimed(GW_REC_PYSITE, words, 3);
}

void gw_py_site(uint64_t call_number)
{
    if (!__atomic_load_n(&py_depth, __ATOMIC_ACQUIRE))
        return;
    struct py_thread *t = this_thread();
    if (t->capturing)
        return;  /* a call made by code our capture ran (a finalizer's) */
    if (holds_gil()) {
        emit(capture(t), call_number, 1);
        return;
    }
    if (py_raw) {
        if (!py.is_initialized() || (py.is_finalizing && py.is_finalizing()))
            return;
        uint64_t keys[GW_STACK_MAX_FRAMES * 2];
        unsigned n = gw_py_raw_stack(py.this_thread_state(), keys, py_depth);
        emit(n ? gw_rec_pystack(keys, n, gw_py_raw_describe) : 0, call_number, 1);
        return;
    }
    if (!t->released)
        return;  /* no Python on this thread, or the GIL went where we cannot follow */
    if (!t->count)
        t->first = call_number;
    t->count = call_number - t->first + 1;
}

/* Interposed: the real function is the next definition after ours. */
static void *(*real_save_thread)(void);
static void (*real_restore_thread)(void *);

GW_EXPORT void *PyEval_SaveThread(void)
{
    void *(*real)(void) = __atomic_load_n(&real_save_thread, __ATOMIC_ACQUIRE);
    if (GW_UNLIKELY(!real)) {
        real = (void *(*)(void))gw_next_symbol("PyEval_SaveThread");
        __atomic_store_n(&real_save_thread, real, __ATOMIC_RELEASE);
    }
    if (__atomic_load_n(&py_depth, __ATOMIC_ACQUIRE)) {
        struct py_thread *t = this_thread();
        /* calls still waiting were made after the GIL came back unseen: their stack is
         * not known */
        t->count = 0;
        t->released = 1;
    }
    return real();
}

GW_EXPORT void PyEval_RestoreThread(void *tstate)
{
    void (*real)(void *) = __atomic_load_n(&real_restore_thread, __ATOMIC_ACQUIRE);
    if (GW_UNLIKELY(!real)) {
        real = (void (*)(void *))gw_next_symbol("PyEval_RestoreThread");
        __atomic_store_n(&real_restore_thread, real, __ATOMIC_RELEASE);
    }
    real(tstate);
    if (!__atomic_load_n(&py_depth, __ATOMIC_ACQUIRE))
        return;
    struct py_thread *t = this_thread();
    if (!t->released)
        return;
    t->released = 0;
    if (!t->count || !gw_recorder_active())
        return;
    int saved_errno = errno;
    uint64_t first = t->first, count = t->count;
    t->count = 0;
    emit(capture(t), first, count);
    errno = saved_errno;
}

static void *either(const char *name, const char *other)
{
    void *symbol = gw_global_symbol(name);
    return symbol || !other ? symbol : gw_global_symbol(other);
}

int gw_py_on(void) { return __atomic_load_n(&py_depth, __ATOMIC_ACQUIRE) != 0; }

static const char *py_version;  /* Py_GetVersion()'s text, once stacks are on */
static int py_follows;          /* GIL releases are followed */

void gw_py_init(unsigned depth, int read_frames)
{
    if (__atomic_load_n(&py_depth, __ATOMIC_ACQUIRE)) {
        gw_rec_python(py_version, py_follows);  /* (a new trace: a forked child's) */
        return;
    }
    if (!depth)
        return;
    const char *(*version)(void) = (const char *(*)(void))gw_global_symbol("Py_GetVersion");
    if (!version)
        return;  /* not a Python process */
    unsigned major = 0, minor = 0;
    const char *text = version();
    if (!text || sscanf(text, "%u.%u", &major, &minor) != 2 || major != 3 || minor < 10) {
        gw_debug("Python %s: no Python stacks (3.10 or later needed)", text ? text : "?");
        return;
    }
#define FIND(field, name, other) *(void **)&py.field = either(name, other)
    FIND(this_thread_state, "PyGILState_GetThisThreadState", NULL);
    FIND(current_thread_state, "PyThreadState_GetUnchecked", "_PyThreadState_UncheckedGet");
    FIND(is_initialized, "Py_IsInitialized", NULL);
    FIND(is_finalizing, "Py_IsFinalizing", "_Py_IsFinalizing");
    FIND(get_frame, "PyEval_GetFrame", NULL);
    FIND(frame_code, "PyFrame_GetCode", NULL);
    FIND(frame_line, "PyFrame_GetLineNumber", NULL);
    FIND(frame_back, "PyFrame_GetBack", NULL);
    FIND(incref, "Py_IncRef", NULL);
    FIND(decref, "Py_DecRef", NULL);
    FIND(getattr, "PyObject_GetAttrString", NULL);
    FIND(utf8, "PyUnicode_AsUTF8AndSize", NULL);
    FIND(err_fetch, "PyErr_Fetch", NULL);
    FIND(err_restore, "PyErr_Restore", NULL);
#undef FIND
    py.name_attr = minor >= 11 ? "co_qualname" : "co_name";
    if (!py.this_thread_state || !py.current_thread_state || !py.is_initialized ||
        !py.get_frame || !py.frame_code || !py.frame_line || !py.frame_back || !py.incref ||
        !py.decref || !py.getattr || !py.utf8 || !py.err_fetch || !py.err_restore) {
        gw_debug("Python %u.%u lacks part of the C API: no Python stacks", major, minor);
        return;
    }
    /* Our PyEval_SaveThread is the one extensions reach only when no definition comes
     * before the preloaded shim's (a statically linked interpreter's does). (By the object
     * it lies in: the shim's own reference to the name resolves like anyone's.) */
    void *save = gw_global_symbol("PyEval_SaveThread");
    Dl_info found, self;
    py_raw = read_frames && gw_py_raw_init(minor, text) == 0;
    py_follows = py_raw || (save && dladdr(save, &found) && dladdr((void *)gw_py_init, &self) &&
                            found.dli_fbase == self.dli_fbase);
    py_version = text;
    gw_rec_python(text, py_follows);
    gw_debug("Python %u.%u: Python stacks of up to %u frames%s", major, minor, depth,
             py_raw      ? ", read from its frames where the GIL is released"
             : py_follows ? ", across GIL releases through PyEval_SaveThread"
                          : ", only for calls made holding the GIL (static libpython)");
    __atomic_store_n(&py_depth, depth > GW_STACK_MAX_FRAMES ? GW_STACK_MAX_FRAMES : depth,
                     __ATOMIC_RELEASE);
}
