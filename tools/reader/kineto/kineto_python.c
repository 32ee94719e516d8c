/* python_function events (torch.profiler's with_stack=True) as the Python stacks of the
 * calls they enclose, as the shim's PYSTACK definitions and PYSITE records give them for a
 * .gwt: the analysis (py_lines.c) then names the user's lines the same way, taking the
 * innermost frame outside the libraries.
 *
 * A frame is "file.py(123): name"; others ("<built-in method ...>", "nn.Module: Linear_0")
 * have no line to name and are left out. Each frame goes into the sort as a start and an
 * end record, so they come out in time order with the calls: ranges starting together nest
 * by length as NVTX ranges do, a frame ending when a call starts is gone before the call
 * (kineto_map.c's orders). Each thread keeps its open frames; a call made while some are
 * open gets their stack (interned once as a PYSTACK) and a PYSITE naming that one call. */
#include <stdlib.h>
#include <string.h>

#include "kineto.h"
#include "../trace_reader_internal.h"

enum { ORDER_POP = 0, ORDER_PUSH = 2 };  /* (kineto_map.c's) */

/* "path/file.py(123): function": 1 with the parts, 0 when the name has no line. */
static int parse_frame(const char *name, size_t *file_len, uint64_t *line,
                       const char **function)
{
    const char *close = strstr(name, "): ");
    if (!close)
        return 0;
    const char *open = close;
    while (open > name && open[-1] >= '0' && open[-1] <= '9')
        open--;
    if (open == close || open == name || open[-1] != '(')
        return 0;
    uint64_t n = 0;
    for (const char *p = open; p < close; p++)
        n = n * 10 + (uint64_t)(*p - '0');
    *file_len = (size_t)(open - 1 - name);
    *line = n;
    *function = close + 3;
    return *file_len > 0;
}

void kin_py_map(struct gw_reader *r, struct kineto *k, const struct kin_event *e)
{
    size_t file_len;
    uint64_t line;
    const char *function;
    if (e->ph != 'X' || !e->dur || !parse_frame(e->name, &file_len, &line, &function))
        return;
    uint64_t serial = ++k->py_frames;
    struct kin_rec rec = {.ts = e->ts, .tid = (uint32_t)(e->tid ? e->tid : e->pid),
                          .kind = KIN_REC_PY_PUSH, .order = ORDER_PUSH,
                          .tie = UINT64_MAX - e->dur};
    rec.u[0] = kin_string(r, k, e->name, file_len);
    rec.u[1] = line;
    rec.u[2] = kin_string(r, k, function, strlen(function));
    rec.u[3] = serial;
    if (kin_sort_add(&k->sort, &rec) != 0)
        return;
    rec.ts = e->ts + e->dur;
    rec.kind = KIN_REC_PY_POP;
    rec.order = ORDER_POP;
    rec.tie = e->dur;
    kin_sort_add(&k->sort, &rec);  /* (a push without its pop stays open: the stack has
                                      more than it should, never a line not in the trace) */
}

static struct kin_py_stack *stack_of(struct kineto *k, uint32_t tid, int make)
{
    uint64_t *at = gw_map_get(&k->py_threads, tid);
    if (at)
        return &k->py_stacks[*at - 1];
    if (!make)
        return NULL;
    struct kin_py_stack *grown = realloc(k->py_stacks, (k->npy_stacks + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    k->py_stacks = grown;
    if (gw_map_put(&k->py_threads, tid, k->npy_stacks + 1) != 0)
        return NULL;
    struct kin_py_stack *s = &k->py_stacks[k->npy_stacks++];
    memset(s, 0, sizeof *s);
    return s;
}

int kin_py_record(struct gw_reader *r, struct kineto *k, const struct kin_rec *rec)
{
    (void)r;
    if (rec->kind != KIN_REC_PY_PUSH && rec->kind != KIN_REC_PY_POP)
        return 0;
    struct kin_py_stack *s = stack_of(k, rec->tid, rec->kind == KIN_REC_PY_PUSH);
    if (!s)
        return 1;
    if (rec->kind == KIN_REC_PY_PUSH) {
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 32;
            struct kin_py_frame *grown = realloc(s->frames, cap * sizeof *grown);
            if (!grown)
                return 1;
            s->frames = grown;
            s->cap = cap;
        }
        s->frames[s->n++] = (struct kin_py_frame){rec->u[3], rec->u[0], rec->u[1], rec->u[2]};
        return 1;
    }
    /* its own frame, wherever it is: frames of one thread nest, but a timestamp rounded
     * to the microsecond may end one a little after its caller */
    for (size_t i = s->n; i-- > 0;)
        if (s->frames[i].serial == rec->u[3]) {
            memmove(&s->frames[i], &s->frames[i + 1], (s->n - i - 1) * sizeof *s->frames);
            s->n--;
            break;
        }
    return 1;
}

/* Deeper than a PYSTACK holds: the innermost frames (the call's own code) and the
 * outermost (the script's), the middle left out. */
#define PY_KEEP_OUTER 16

/* The thread's open frames, innermost first, as PYSTACK frames: how many. */
static unsigned stack_frames(const struct kin_py_stack *s, struct gw_pyframe *out)
{
    unsigned n = 0;
    size_t inner = s->n <= GW_STACK_MAX_FRAMES ? s->n : GW_STACK_MAX_FRAMES - PY_KEEP_OUTER;
    for (size_t i = 0; i < inner; i++) {
        const struct kin_py_frame *f = &s->frames[s->n - 1 - i];
        out[n++] = (struct gw_pyframe){f->file_id, f->line, f->function_id};
    }
    for (size_t i = s->n > GW_STACK_MAX_FRAMES ? PY_KEEP_OUTER : 0; i-- > 0;) {
        const struct kin_py_frame *f = &s->frames[i];
        out[n++] = (struct gw_pyframe){f->file_id, f->line, f->function_id};
    }
    return n;
}

static uint64_t hash_frames(const struct gw_pyframe *f, unsigned n)
{
    uint64_t h = 1469598103934665603ull;  /* FNV-1a over the words */
    for (unsigned i = 0; i < n; i++) {
        uint64_t w[3] = {f[i].file_id, f[i].line, f[i].function_id};
        for (int j = 0; j < 3; j++)
            h = (h ^ w[j]) * 1099511628211ull;
    }
    return h ? h : 1;
}

/* ev holds a call: hands out the PYSTACK its thread's stack needs first (new ones), the
 * call, then the PYSITE naming it. 1 when ev was replaced by the first of those. */
int kin_py_call(struct gw_reader *r, struct kineto *k, struct gw_event *ev)
{
    const struct kin_py_stack *s = k->py_frames ? stack_of(k, ev->tid, 0) : NULL;
    if (!s || !s->n)
        return 0;
    struct gw_pyframe frames[GW_STACK_MAX_FRAMES];
    unsigned n = stack_frames(s, frames);
    uint64_t h = hash_frames(frames, n);
    uint64_t *known = gw_map_get(&k->py_stack_ids, h);
    uint64_t id = known ? *known : ++k->next_py_stack;
    struct gw_event site = {.kind = GW_EV_PYSITE, .tid = ev->tid, .family = -1,
                            .offset = ev->offset};
    site.u.site.stack_id = id;
    site.u.site.first_call_id = site.u.site.last_call_id = ev->call_id;
    k->npy_pending = k->py_pending_at = 0;
    if (known) {
        k->py_pending[k->npy_pending++] = site;
        return 0;
    }
    const struct gw_pystack *kept = gw_tables_add_pystack(r, id, frames, n);
    if (!kept || gw_map_put(&k->py_stack_ids, h, id) != 0)
        return 0;  /* (out of memory: the call without its line) */
    k->py_pending[k->npy_pending++] = *ev;
    k->py_pending[k->npy_pending++] = site;
    memset(ev, 0, sizeof *ev);
    ev->kind = GW_EV_PYSTACK;
    ev->tid = site.tid;
    ev->family = -1;
    ev->offset = site.offset;
    ev->u.pystack = *kept;
    return 1;
}

int kin_py_pending(struct kineto *k, struct gw_event *ev)
{
    if (k->py_pending_at >= k->npy_pending)
        return 0;
    *ev = k->py_pending[k->py_pending_at++];
    return 1;
}

/* A new pass: no thread has a frame open, and each stack is defined again before its first
 * call (the same ids in the same order: the table keeps the entries of the first). */
void kin_py_reset(struct kineto *k)
{
    for (size_t i = 0; i < k->npy_stacks; i++)
        k->py_stacks[i].n = 0;
    k->npy_pending = k->py_pending_at = 0;
    k->py_frames = 0;
    gw_map_clear(&k->py_stack_ids);
    k->next_py_stack = 0;
}

void kin_py_free(struct kineto *k)
{
    for (size_t i = 0; i < k->npy_stacks; i++)
        free(k->py_stacks[i].frames);
    free(k->py_stacks);
    gw_map_free(&k->py_threads);
    gw_map_free(&k->py_stack_ids);
}
