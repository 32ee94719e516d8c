/*
 * Joins calls to the Python stacks the shim named them with. A PYSITE record follows the
 * calls it names in their thread's chunks, within the same release of the GIL, so each
 * thread keeps its last PY_RECENT calls with what they weigh; a site adds their weights to
 * its stack. A call the shim always reads a stack for (a sync, a copy, an allocation) that
 * leaves the window without one counts as made without Python frames.
 */
#include "py_lines.h"
#include "py_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an_event.h"
#include "gw_map.h"
#include "stack_where.h"
#include "trace_reader.h"

#define PY_RECENT 256

struct recent_call {
    uint64_t call_id;
    uint64_t weight[AN_LINES_CATS];   /* 0: not in that category */
    uint64_t ptr;                     /* allocations: the pointer (a leak's line) */
    int used, named, native_named;
    uint64_t py_stack, native_stack;  /* the stacks it was named with (a pause after it
                                         weighs on it later) */
};

struct thread_calls {
    uint32_t tid;
    int have_last;
    uint64_t last_end;
    /* it launched a kernel: its stretches since may be batch loads; those before are its
     * start-up (imports, building the model, creating the context), which no worker takes
     * over (a 1.3 ms stretch between cuInit and the context's creation was named the input
     * pipeline's line, 96 % of it, in a loop whose 150 loads had no stack) */
    int launched;
    size_t next;
    struct recent_call recent[PY_RECENT];
};

struct site_weight {
    uint64_t stack;                   /* a PYSTACK's id, or a STACK's (native) */
    int native;
    enum an_line_cat cat;
    uint64_t weight, calls;
};

struct an_py_feed {
    int python;                       /* the trace has Python stacks */
    uint64_t version_id;              /* string id of the interpreter's version, 0 unknown */
    int follows_releases;
    struct gw_map thread_index;       /* tid -> index + 1 in threads */
    struct thread_calls **threads;
    size_t nthreads;
    struct gw_map site_index;         /* stack << 5 | native << 4 | cat -> index + 1 */
    struct site_weight *sites;
    size_t nsites, sites_cap;
    struct gw_map live_bytes;         /* device pointer -> bytes held (0: freed) */
    struct gw_map live_stack;         /* device pointer -> PYSTACK of its allocation */
    uint64_t without[AN_LINES_CATS];
};

/* Whether the shim reads a stack for every such call where the thread has Python frames
 * (trace_format.h: GW_PY_STRETCH_NS): launches are sampled, short stretches not read. */
static int always_read(enum an_line_cat cat, uint64_t weight)
{
    return cat == AN_LINES_SYNC || cat == AN_LINES_PAGEABLE || cat == AN_LINES_COPY ||
           cat == AN_LINES_ALLOC || cat == AN_LINES_OOM ||
           (cat == AN_LINES_INPUT && weight >= GW_PY_STRETCH_NS);
}

const char *an_line_cat_unit(enum an_line_cat cat)
{
    switch (cat) {
    case AN_LINES_ALLOC:
    case AN_LINES_LEAK: return "bytes";
    case AN_LINES_OOM:
    case AN_LINES_LAUNCH: return "calls";
    default: return "ns";
    }
}

const char *an_line_cat_name(enum an_line_cat cat)
{
    static const char *const names[AN_LINES_CATS] = {
        "none", "sync", "pageable", "copy", "input", "alloc", "oom", "leak", "launch",
        "pause",
    };
    return cat < AN_LINES_CATS ? names[cat] : "none";
}

const char *an_line_cat_what(enum an_line_cat cat)
{
    switch (cat) {
    case AN_LINES_SYNC: return "of the time waited for the GPU";
    case AN_LINES_PAGEABLE: return "of the time in pageable copies";
    case AN_LINES_COPY: return "of the time in host-to-device copies";
    case AN_LINES_INPUT: return "of the host's time without calls ends here (the next batch "
                                "is fetched just before)";
    case AN_LINES_ALLOC: return "of the bytes allocated";
    case AN_LINES_OOM: return "of the failed allocations";
    case AN_LINES_LEAK: return "of the bytes still held at the end";
    case AN_LINES_LAUNCH: return "of the sampled launches";
    case AN_LINES_PAUSE: return "of the pauses start after this line (the last call before "
                                "each)";
    default: return "";
    }
}

static double percent(uint64_t part, double all) { return all ? 100.0 * (double)part / all : 0; }

void an_py_cat_sentences(const struct an_py_cat *c, enum an_line_cat cat,
                         void (*say)(void *user, const char *label, const char *text),
                         void *user)
{
    char text[1024];
    for (size_t i = 0; !c->ntop && i < c->nnative; i++) {
        const struct an_native_site *n = &c->native[i];
        snprintf(text, sizeof text, "%s: %.0f%% %s (%llu call%s)", n->where,
                 percent(n->weight, (double)c->native_with_stack), an_line_cat_what(cat),
                 (unsigned long long)n->calls, n->calls == 1 ? "" : "s");
        say(user, "site", text);
    }
    if (!an_py_cat_any(c))
        return;
    double all = (double)c->with_stack + (double)c->without;
    for (size_t i = 0; i < c->ntop; i++) {
        const struct an_py_line *l = &c->top[i];
        int n = snprintf(text, sizeof text, "%s:%llu in %s: %.0f%% %s (%llu call%s)", l->file,
                         (unsigned long long)l->line, l->function, percent(l->weight, all),
                         an_line_cat_what(cat), (unsigned long long)l->calls,
                         l->calls == 1 ? "" : "s");
        if (l->loop_line && n > 0 && (size_t)n < sizeof text)
            snprintf(text + n, sizeof text - (size_t)n, "; the batch comes from the loop at "
                     "line %llu: %s", (unsigned long long)l->loop_line, l->loop);
        say(user, "line", text);
    }
    if (c->without) {
        snprintf(text, sizeof text, "%.0f%% %s was on threads without Python frames (C++ "
                 "threads such as autograd's, or calls made with the GIL released where "
                 "gpuwatch cannot follow it): no line is named for it",
                 percent(c->without, all), an_line_cat_what(cat));
        say(user, "line", text);
    }
}

struct an_py_feed *an_py_feed_new(void) { return calloc(1, sizeof(struct an_py_feed)); }

static struct thread_calls *thread_of(struct an_py_feed *p, uint32_t tid)
{
    uint64_t *at = gw_map_get(&p->thread_index, tid);
    if (at)
        return p->threads[*at - 1];
    struct thread_calls **grown = realloc(p->threads, (p->nthreads + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    p->threads = grown;
    struct thread_calls *t = calloc(1, sizeof *t);
    if (!t || gw_map_put(&p->thread_index, tid, p->nthreads + 1) != 0) {
        free(t);
        return NULL;
    }
    t->tid = tid;
    p->threads[p->nthreads++] = t;
    return t;
}

static void add_site(struct an_py_feed *p, uint64_t stack, int native, enum an_line_cat cat,
                     uint64_t weight)
{
    uint64_t key = stack << 5 | (uint64_t)(native != 0) << 4 | (uint64_t)cat;
    uint64_t *at = gw_map_get(&p->site_index, key);
    if (!at) {
        if (p->nsites == p->sites_cap) {
            size_t cap = p->sites_cap ? p->sites_cap * 2 : 64;
            struct site_weight *grown = realloc(p->sites, cap * sizeof *grown);
            if (!grown)
                return;
            p->sites = grown;
            p->sites_cap = cap;
        }
        if (gw_map_put(&p->site_index, key, p->nsites + 1) != 0)
            return;
        p->sites[p->nsites] = (struct site_weight){stack, native != 0, cat, 0, 0};
        at = gw_map_get(&p->site_index, key);
        if (!at)
            return;
        p->nsites++;
    }
    p->sites[*at - 1].weight += weight;
    p->sites[*at - 1].calls++;
}

/* A call leaves the window: one that should have had a stack and did not. */
static void retire(struct an_py_feed *p, struct recent_call *c)
{
    if (c->used && !c->named)
        for (int cat = 1; cat < AN_LINES_CATS; cat++)
            if (c->weight[cat] && always_read(cat, c->weight[cat]))
                p->without[cat] += c->weight[cat];
    c->used = 0;
}

static void on_call(struct an_py_feed *p, const struct gw_event *ev, const struct an_ev *a)
{
    struct thread_calls *t = thread_of(p, ev->tid);
    if (!t)
        return;
    uint64_t gap = t->have_last && !a->after_hole && a->ts > t->last_end ? a->ts - t->last_end : 0;
    t->have_last = 1;
    t->last_end = a->end;
    /* a pause starts after the thread's previous call (a checkpoint's last read-back) */
    struct recent_call *prev = t->next ? &t->recent[(t->next - 1) % PY_RECENT] : NULL;
    if (gap >= AN_PY_PAUSE_NS && prev && prev->used) {
        prev->weight[AN_LINES_PAUSE] += gap;
        if (prev->named)
            add_site(p, prev->py_stack, 0, AN_LINES_PAUSE, gap);
        if (prev->native_named)
            add_site(p, prev->native_stack, 1, AN_LINES_PAUSE, gap);
    }
    if (a->kind == AN_FREE && a->ptr)
        gw_map_put(&p->live_bytes, a->ptr, 0);
    struct recent_call *c = &t->recent[t->next++ % PY_RECENT];
    retire(p, c);
    memset(c, 0, sizeof *c);
    c->used = 1;
    c->call_id = ev->call_id;
    uint64_t dur = a->end - a->ts;
    if (t->launched)
        c->weight[AN_LINES_INPUT] = gap;
    if (a->kind == AN_LAUNCH)
        t->launched = 1;
    if ((a->flags & AN_F_DRAINS) && (a->kind == AN_SYNC || a->kind == AN_COPY))
        c->weight[AN_LINES_SYNC] = dur ? dur : 1;
    /* (a scalar read back, loss.item(), spends its time waiting for the GPU: the sync's
     * line, not a pageable copy's to pin) */
    if (a->kind == AN_COPY && a->host_kind == GW_HOST_PAGEABLE &&
        (a->dir != GW_COPY_DTOH || a->bytes > 4096))
        c->weight[AN_LINES_PAGEABLE] = dur ? dur : 1;
    if (a->kind == AN_COPY && a->dir == GW_COPY_HTOD)
        c->weight[AN_LINES_COPY] = dur ? dur : 1;
    if (a->kind == AN_LAUNCH)
        c->weight[AN_LINES_LAUNCH] = 1;
    if (a->kind == AN_ALLOC && (a->flags & AN_F_OOM))
        c->weight[AN_LINES_OOM] = 1;
    if (a->kind == AN_ALLOC && !(a->flags & AN_F_ERROR) && a->bytes) {
        c->weight[AN_LINES_ALLOC] = a->bytes;
        c->ptr = a->ptr;
        gw_map_put(&p->live_bytes, a->ptr, a->bytes);
        gw_map_put(&p->live_stack, a->ptr, 0);
    }
    /* an allocation's native stack is in its own record (one ending a stretch too: a
     * buffer allocated each step right after the batch is fetched names the loop) */
    if ((a->kind == AN_ALLOC || a->kind == AN_HOST_ALLOC) && a->key) {
        c->native_named = 1;
        c->native_stack = a->key;
        for (int cat = 1; cat < AN_LINES_CATS; cat++)  /* (stretches: as the others') */
            if (c->weight[cat] && (cat != AN_LINES_INPUT || c->weight[cat] >= GW_PY_STRETCH_NS))
                add_site(p, a->key, 1, cat, c->weight[cat]);
    }
}

static void on_site(struct an_py_feed *p, const struct gw_event *ev, int native)
{
    struct thread_calls *t = thread_of(p, ev->tid);
    if (!t)
        return;
    uint64_t first = ev->u.site.first_call_id, last = ev->u.site.last_call_id;
    uint64_t stack = ev->u.site.stack_id;
    for (size_t i = 0; i < PY_RECENT; i++) {
        struct recent_call *c = &t->recent[i];
        int *named = native ? &c->native_named : &c->named;
        if (!c->used || *named || c->call_id < first || c->call_id > last)
            continue;
        *named = 1;
        *(native ? &c->native_stack : &c->py_stack) = stack;
        for (int cat = 1; cat < AN_LINES_CATS; cat++)
            if (c->weight[cat])
                add_site(p, stack, native, cat, c->weight[cat]);
        uint64_t *held = !native && c->ptr ? gw_map_get(&p->live_bytes, c->ptr) : NULL;
        if (held && *held)
            gw_map_put(&p->live_stack, c->ptr, stack);
    }
}

void an_py_feed_event(struct an_py_feed *p, const struct gw_event *ev, const struct an_ev *a)
{
    if (!p)
        return;
    if (ev->kind == GW_EV_PYSITE || ev->kind == GW_EV_STACKSITE) {
        on_site(p, ev, ev->kind == GW_EV_STACKSITE);
    } else if (ev->kind == GW_EV_PYSTACK) {
        p->python = 1;
    } else if (ev->kind == GW_EV_PYTHON) {
        p->python = 1;
        p->version_id = ev->u.python.version_id;
        p->follows_releases = ev->u.python.follows_releases != 0;
    }
    else if (ev->kind == GW_EV_CALL && a && an_is_host(a))
        on_call(p, ev, a);
}

static int contains(const char *path, const char *part) { return strstr(path, part) != NULL; }

/* Code of the interpreter's library, site-packages/dist-packages or torch/: not the user's
 * (user_frame takes the innermost frame outside them, the innermost one when all are). */
static int is_library_file(const char *path)
{
    if (!path || !*path)
        return 1;
    /* (PyTorch's profiler writes the files of installed packages relative to their
     * folder: "torch/nn/modules/module.py") */
    if (contains(path, "/site-packages/") || contains(path, "/dist-packages/") ||
        contains(path, "/torch/") || !strncmp(path, "torch/", 6) ||
        !strncmp(path, "<frozen ", 8))
        return 1;
    /* the interpreter's own library: .../lib/python3.X/module.py */
    const char *lib = strstr(path, "/lib/python3");
    return lib != NULL;
}

static const char *text_of(const struct gw_reader *r, uint64_t id)
{
    const char *s = id ? gw_reader_string(r, id, NULL) : NULL;
    return s ? s : "?";
}

/* The frame of the stack that is the user's (an_py_is_library_file). */
static const struct gw_pyframe *user_frame(const struct gw_reader *r, const struct gw_pystack *st)
{
    for (unsigned i = 0; i < st->nframes; i++)
        if (!is_library_file(text_of(r, st->frames[i].file_id)))
            return &st->frames[i];
    return st->nframes ? &st->frames[0] : NULL;
}

static void stack_text(const struct gw_reader *r, const struct gw_pystack *st, char *out,
                       size_t size)
{
    size_t used = 0;
    out[0] = 0;
    for (unsigned i = 0; i < st->nframes && used + 1 < size; i++) {
        int n = snprintf(out + used, size - used, "%s%s:%llu %s", i ? "\n" : "",
                         text_of(r, st->frames[i].file_id),
                         (unsigned long long)st->frames[i].line,
                         text_of(r, st->frames[i].function_id));
        if (n < 0 || (size_t)n >= size - used) {
            out[used] = 0;  /* (whole frames only) */
            break;
        }
        used += (size_t)n;
    }
}

/* Sites of one category summed per user line into cat->top. */
static void sum_lines(struct an_py_feed *p, const struct gw_reader *r, enum an_line_cat cat,
                      struct an_py_cat *out)
{
    struct group {
        uint64_t file_id, line, function_id, weight, calls, heaviest, heaviest_stack;
    } *groups = NULL;
    size_t ngroups = 0;
    for (size_t i = 0; i < p->nsites; i++) {
        const struct site_weight *s = &p->sites[i];
        if (s->cat != cat || s->native)
            continue;
        out->with_stack += s->weight;
        const struct gw_pystack *st = gw_reader_pystack(r, s->stack);
        const struct gw_pyframe *f = st ? user_frame(r, st) : NULL;
        if (!f)
            continue;
        size_t g = 0;
        while (g < ngroups && !(groups[g].file_id == f->file_id && groups[g].line == f->line))
            g++;
        if (g == ngroups) {
            struct group *grown = realloc(groups, (ngroups + 1) * sizeof *grown);
            if (!grown)
                continue;
            groups = grown;
            groups[ngroups++] = (struct group){f->file_id, f->line, f->function_id, 0, 0, 0, 0};
        }
        groups[g].weight += s->weight;
        groups[g].calls += s->calls;
        if (s->weight > groups[g].heaviest) {
            groups[g].heaviest = s->weight;
            groups[g].heaviest_stack = s->stack;
        }
    }
    while (out->ntop < AN_KEEP_LINES) {
        size_t best = ngroups;
        for (size_t g = 0; g < ngroups; g++)
            if (groups[g].weight && (best == ngroups || groups[g].weight > groups[best].weight))
                best = g;
        if (best == ngroups)
            break;
        struct an_py_line *line = &out->top[out->ntop++];
        snprintf(line->file, sizeof line->file, "%s", text_of(r, groups[best].file_id));
        snprintf(line->function, sizeof line->function, "%s",
                 text_of(r, groups[best].function_id));
        line->line = groups[best].line;
        line->weight = groups[best].weight;
        line->calls = groups[best].calls;
        const struct gw_pystack *st = gw_reader_pystack(r, groups[best].heaviest_stack);
        if (st)
            stack_text(r, st, line->stack, sizeof line->stack);
        /* the stretch before the loop body's first call: the loop fetched the batch */
        if (cat == AN_LINES_INPUT &&
            !an_py_loop_header(line->file, line->line, &line->loop_line, line->loop,
                               sizeof line->loop))
            line->loop_line = 0;
        groups[best].weight = 0;
    }
    free(groups);
}

static const char *reader_string(void *user, uint64_t id)
{
    return gw_reader_string(user, id, NULL);
}

/* Native sites of one category, summed per program site (an_stack_where) into out. */
static void sum_native(struct an_py_feed *p, const struct gw_reader *r, enum an_line_cat cat,
                       struct an_py_cat *out)
{
    struct native_group {
        struct an_native_site site;
        uint64_t heaviest;       /* weight of the heaviest stack named site.stack */
    } *groups = NULL;
    size_t ngroups = 0;
    for (size_t i = 0; i < p->nsites; i++) {
        const struct site_weight *s = &p->sites[i];
        if (s->cat != cat || !s->native)
            continue;
        out->native_with_stack += s->weight;
        const struct gw_stack *st = gw_reader_stack(r, s->stack);
        char where[sizeof groups->site.where];
        where[0] = 0;
        if (st)
            an_stack_where(st, reader_string, (void *)r, "PyTorch", where, sizeof where);
        if (!where[0])
            continue;
        size_t g = 0;
        while (g < ngroups && strcmp(groups[g].site.where, where))
            g++;
        if (g == ngroups) {
            struct native_group *grown = realloc(groups, (ngroups + 1) * sizeof *grown);
            if (!grown)
                continue;
            groups = grown;
            memset(&groups[ngroups], 0, sizeof *groups);
            memcpy(groups[ngroups].site.where, where, sizeof where);
            ngroups++;
        }
        if (s->weight > groups[g].heaviest) {
            groups[g].heaviest = s->weight;
            groups[g].site.stack = s->stack;
        }
        groups[g].site.weight += s->weight;
        groups[g].site.calls += s->calls;
    }
    while (out->nnative < AN_KEEP_LINES) {
        size_t best = ngroups;
        for (size_t g = 0; g < ngroups; g++)
            if (groups[g].site.weight &&
                (best == ngroups || groups[g].site.weight > groups[best].site.weight))
                best = g;
        if (best == ngroups)
            break;
        out->native[out->nnative++] = groups[best].site;
        groups[best].site.weight = 0;
    }
    free(groups);
}

void an_py_feed_finish(struct an_py_feed *p, const struct gw_reader *r, struct an_py_lines *out)
{
    memset(out, 0, sizeof *out);
    if (!p)
        return;
    for (size_t i = 0; i < p->nthreads; i++) {
        for (size_t k = 0; k < PY_RECENT; k++)
            retire(p, &p->threads[i]->recent[k]);
        free(p->threads[i]);
    }
    /* what is still held: a leak's bytes by the line that allocated them */
    for (size_t i = 0; i < p->live_bytes.cap; i++) {
        if (!p->live_bytes.used[i] || !p->live_bytes.values[i])
            continue;
        uint64_t *stack = gw_map_get(&p->live_stack, p->live_bytes.keys[i]);
        if (stack && *stack)
            add_site(p, *stack, 0, AN_LINES_LEAK, p->live_bytes.values[i]);
        else
            p->without[AN_LINES_LEAK] += p->live_bytes.values[i];
    }
    out->present = p->python;
    out->follows_releases = p->follows_releases;
    if (p->version_id) {
        /* "3.11.7 (main, ...) [GCC ...]": the version number is enough */
        const char *v = text_of(r, p->version_id);
        snprintf(out->version, sizeof out->version, "%.*s", (int)strcspn(v, " "), v);
    }
    for (int cat = 1; cat < AN_LINES_CATS; cat++) {
        sum_lines(p, r, cat, &out->cat[cat]);
        sum_native(p, r, cat, &out->cat[cat]);
        /* (without Python stacks at all, no call lacks one) */
        out->cat[cat].without = p->python ? p->without[cat] : 0;
    }
    free(p->threads);
    free(p->sites);
    gw_map_free(&p->thread_index);
    gw_map_free(&p->site_index);
    gw_map_free(&p->live_bytes);
    gw_map_free(&p->live_stack);
    free(p);
}
