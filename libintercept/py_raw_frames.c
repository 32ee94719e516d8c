/*
 * A thread's Python stack read straight from the interpreter's memory, for the calls it
 * makes with the GIL released (py_frames.c). PyTorch's bindings release the GIL around
 * every call that reaches the driver, and a statically linked interpreter (Debian's and
 * Ubuntu's python3) gives no hook where it takes it back: reading the frames is the only
 * way to name the user's line there.
 *
 * Safe without the GIL because the thread reading is the thread whose frames are read:
 * while it runs C code with the GIL released, its own frame chain and the code objects the
 * frames hold do not change or go away. Nothing is written, nothing is allocated and no
 * reference is taken; PyCode_Addr2Line only reads the code object's line table.
 *
 * The layouts are CPython's own, per minor version (stable within one: the offsets below
 * were taken with offsetof from each version's headers, internal/pycore_frame.h for the
 * frames). A version without a layout here gets no stack from this reader, nor does a
 * free-threaded build (another object header). Each code object and each string is checked
 * to be of its type before it is read further, so a frame that is not what it should be
 * ends the stack, it is not followed. And until one walk has found a frame of the layout,
 * every read is first checked to be of mapped memory (mincore, no descriptor): an
 * interpreter built otherwise (a debug build's object header) fails those checks instead
 * of faulting, and after MAX_TRIES walks that met something else the reader gives up.
 */
#include "py_raw_frames.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gw_cuda.h"
#include "recorder.h"
#include "resolve.h"

struct layout {
    unsigned minor;
    size_t ts_frame;        /* PyThreadState: its frame (3.10), its _PyCFrame (3.11, 3.12),
                               its current _PyInterpreterFrame (3.13) */
    size_t cframe_current;  /* _PyCFrame.current_frame; NO_CFRAME where there is none */
    size_t fr_code;         /* the frame's code object (3.13: f_executable) */
    size_t fr_previous;     /* the calling frame (3.10: f_back) */
    size_t fr_instr;        /* prev_instr (3.11, 3.12), instr_ptr (3.13); 3.10: f_lasti */
    size_t fr_owner;        /* who owns it: a C stack's entry frame has none of the user's */
    size_t co_filename, co_name, co_code;  /* co_name: co_qualname from 3.11 */
    size_t str_size;        /* sizeof(PyASCIIObject): compact ASCII text follows it */
};
#define NO_CFRAME SIZE_MAX
#define NO_OWNER SIZE_MAX
#define OWNED_BY_CSTACK 3   /* FRAME_OWNED_BY_CSTACK, 3.12 and 3.13 */

static const struct layout layouts[] = {
    {10, 24, NO_CFRAME, 32, 24, 96, NO_OWNER, 104, 112, 0, 48},
    {11, 56, 8, 32, 48, 56, 69, 112, 128, 184, 48},
    {12, 56, 0, 0, 8, 56, 70, 112, 128, 192, 40},
    {13, 72, NO_CFRAME, 0, 8, 56, 70, 112, 128, 200, 40},
};

static const struct layout *layout;
static int proven;        /* a walk found a frame of the layout: reads need no check */
static unsigned tries;    /* walks that met a frame not of the layout, while not proven */
#define MAX_TRIES 64
static uintptr_t page_size;
static const void *code_type, *str_type;              /* &PyCode_Type, &PyUnicode_Type */
static int (*addr2line)(void *code, int byte_offset);  /* PyCode_Addr2Line */

/* Whether len bytes at p may be read: always, once the layout is proven; before, where
 * its pages are mapped. */
static int readable(const void *p, size_t len)
{
    if (__atomic_load_n(&proven, __ATOMIC_RELAXED))
        return 1;
    uintptr_t at = (uintptr_t)p;
    if (!at || at + len < at)
        return 0;
    uintptr_t first = at & ~(page_size - 1), last = (at + len - 1) & ~(page_size - 1);
    unsigned char resident[2];
    if (last - first > page_size)
        return 0;
    return mincore((void *)first, last - first + page_size, resident) == 0;
}

/* A pointer field of obj, or NULL where it cannot be read (not proven, a pointer's place
 * must be aligned too). */
static const void *field(const void *obj, size_t offset)
{
    const void *value;
    const char *at = (const char *)obj + offset;
    if (!obj || (!__atomic_load_n(&proven, __ATOMIC_RELAXED) && ((uintptr_t)at & 7)) ||
        !readable(at, sizeof value))
        return NULL;
    memcpy(&value, (const char *)obj + offset, sizeof value);
    return value;
}

static int of_type(const void *obj, const void *type)
{
    return obj && field(obj, 8) == type;  /* (ob_type, after ob_refcnt) */
}

int gw_py_raw_init(unsigned minor, const char *version)
{
    long page = sysconf(_SC_PAGESIZE);
    page_size = page > 0 ? (uintptr_t)page : 4096;
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (layouts[i].minor == minor)
            layout = &layouts[i];
    if (version && strstr(version, "free-threading"))
        layout = NULL;
    code_type = gw_global_symbol("PyCode_Type");
    str_type = gw_global_symbol("PyUnicode_Type");
    *(void **)&addr2line = gw_global_symbol("PyCode_Addr2Line");
    if (!layout || !code_type || !str_type || !addr2line) {
        layout = NULL;
        return -1;
    }
    return 0;
}

/* The string id of a str object's text: compact ASCII from its own bytes, anything else
 * from the UTF-8 copy the interpreter may have cached beside it; 0 when neither. */
static uint64_t text_of(const void *str)
{
    if (!of_type(str, str_type))
        return 0;
    int64_t length;
    uint32_t state;
    if (!readable(str, layout->str_size + 16))
        return 0;
    memcpy(&length, (const char *)str + 16, sizeof length);
    memcpy(&state, (const char *)str + 32, sizeof state);
    const char *text = NULL;
    if ((state & 1u << 5) && (state & 1u << 6)) {  /* compact, ascii */
        text = (const char *)str + layout->str_size;
    } else if (state & 1u << 5) {  /* compact: utf8_length, utf8 follow the header */
        memcpy(&length, (const char *)str + layout->str_size, sizeof length);
        text = field(str, layout->str_size + 8);
    }
    if (!text || length <= 0 || length >= 4096 || !readable(text, (size_t)length))
        return 0;
    char copy[4096];
    memcpy(copy, text, (size_t)length);
    copy[length] = '\0';
    return gw_rec_string(copy);
}

/* What a code object's words are, per thread: a code object seen again costs no reading
 * of its strings. A code object freed and another made at its address is told apart by
 * its file and name objects (the same ones: the same words). */
#define NAMES 64
struct names {
    const void *code, *file, *name;
    uint64_t file_id, name_id;
};
static GW_TLS struct names names[NAMES];

static const struct names *names_of(const void *code)
{
    const void *file = field(code, layout->co_filename), *name = field(code, layout->co_name);
    struct names *n = &names[((uintptr_t)code >> 4) % NAMES];
    if (n->code == code && n->file == file && n->name == name)
        return n;
    *n = (struct names){code, file, name, text_of(file), text_of(name)};
    return n;
}

/* (bit 63, which no user-space address has, keeps these keys apart from the code object
 * addresses that the GIL-holding path keys its frames by) */
#define RAW_KEY (1ull << 63)

static int line_of(const void *frame, const void *code)
{
    int offset;
    if (layout->minor == 10) {
        int lasti;  /* in code units */
        if (!readable((const char *)frame + layout->fr_instr, sizeof lasti))
            return -1;
        memcpy(&lasti, (const char *)frame + layout->fr_instr, sizeof lasti);
        offset = lasti * 2;
    } else {
        const char *instr = field(frame, layout->fr_instr);
        if (!instr)
            return -1;
        offset = (int)(instr - ((const char *)code + layout->co_code));
    }
    return offset < 0 ? -1 : addr2line((void *)code, offset);
}

unsigned gw_py_raw_stack(const void *thread_state, uint64_t *keys, unsigned max)
{
    if (!layout || !thread_state)
        return 0;
    int checked = !__atomic_load_n(&proven, __ATOMIC_RELAXED);
    if (checked && __atomic_load_n(&tries, __ATOMIC_RELAXED) >= MAX_TRIES)
        return 0;  /* (the layout never matched this interpreter: given up) */
    const void *frame = field(thread_state, layout->ts_frame);
    if (frame && layout->cframe_current != NO_CFRAME)
        frame = field(frame, layout->cframe_current);
    unsigned n = 0;
    int bad = 0;  /* a frame that is not of the layout ended the walk */
    for (unsigned seen = 0; frame && n < max && seen < 4 * max; seen++) {
        const void *code = field(frame, layout->fr_code);
        if (layout->fr_owner != NO_OWNER && !readable((const char *)frame + layout->fr_owner, 1)) {
            bad = 1;
            break;
        }
        int entry = layout->fr_owner != NO_OWNER &&
                    *((const unsigned char *)frame + layout->fr_owner) == OWNED_BY_CSTACK;
        if (!entry) {
            if (!of_type(code, code_type)) {
                bad = 1;  /* not a frame of the layout's: stop rather than follow it */
                break;
            }
            int line = line_of(frame, code);
            const struct names *words = names_of(code);
            if (line > 0 && words->file_id && words->file_id < (1ull << 31) &&
                words->name_id < (1ull << 32)) {
                keys[2 * n] = RAW_KEY | words->file_id << 32 | words->name_id;
                keys[2 * n + 1] = (uint64_t)line;
                n++;
            }
        }
        frame = field(frame, layout->fr_previous);
    }
    /* (a thread with no Python frame now, an empty chain, proves nothing either way) */
    if (checked && n)
        __atomic_store_n(&proven, 1, __ATOMIC_RELAXED);
    else if (checked && bad)
        __atomic_add_fetch(&tries, 1, __ATOMIC_RELAXED);
    return n;
}

void gw_py_raw_describe(const uint64_t *key, uint64_t *frame)
{
    frame[0] = (key[0] & ~RAW_KEY) >> 32;
    frame[1] = key[1];
    frame[2] = key[0] & 0xffffffffu;
}
