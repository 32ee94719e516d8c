/*
 * The user's Python lines behind each kind of waste (py_lines.c): calls are joined to the
 * Python stacks the shim recorded for them (PYSITE records), their time (or bytes) summed
 * per line of the user's code, and the findings show the lines that account for most; the
 * same with native stacks (STACKSITE records, allocations' own stacks) per program site.
 */
#ifndef GPUWATCH_ANALYZE_PY_LINES_H
#define GPUWATCH_ANALYZE_PY_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "trace_reader.h"

struct an_ev;

/* Which calls' lines name a finding, and what they are weighed by. */
enum an_line_cat {
    AN_LINES_NONE = 0,
    AN_LINES_SYNC,       /* calls that waited for the queue to drain: ns waited */
    AN_LINES_PAGEABLE,   /* copies from or to pageable memory: ns in the call */
    AN_LINES_COPY,       /* host-to-device copies: ns in the call */
    AN_LINES_INPUT,      /* calls after the host's stretches without calls: ns of the stretch */
    AN_LINES_ALLOC,      /* allocations: bytes */
    AN_LINES_OOM,        /* failed allocations: calls */
    AN_LINES_LEAK,       /* allocations still held at the end: bytes */
    AN_LINES_LAUNCH,     /* launches (the shim samples them): calls */
    AN_LINES_PAUSE,      /* calls before the host's stretches of AN_PY_PAUSE_NS or more
                            without calls (a checkpoint's save, an evaluation starting):
                            ns of the stretch */
    AN_LINES_CATS,
};

#define AN_KEEP_LINES 3
/* A stretch this long is a pause of the loop (thresholds.h pause_min_ns's default) */
#define AN_PY_PAUSE_NS 100000000ull
#define AN_PY_STACK_TEXT 1024

/* One line of the user's code and what it accounts for. */
struct an_py_line {
    char file[256];
    uint64_t line;
    char function[128];
    uint64_t weight;
    uint64_t calls;
    /* the whole stack of its heaviest site, innermost first: "file:line function" per
     * frame, separated by newlines */
    char stack[AN_PY_STACK_TEXT];
    /* input lines: the header of the loop around it, where the batch was fetched (`for
     * batch in loader:`), read from the source (py_source.h); 0 when not found */
    uint64_t loop_line;
    char loop[160];
};

/* Where native stacks say calls were made (the program's frames nearest the driver). */
struct an_native_site {
    char where[256];         /* an_stack_where: "train_step ← main (train)" */
    uint64_t stack;          /* the trace's STACK id of its heaviest stack */
    uint64_t weight, calls;
};

struct an_py_cat {
    struct an_py_line top[AN_KEEP_LINES];  /* heaviest first */
    size_t ntop;
    struct an_native_site native[AN_KEEP_LINES];  /* by native stacks, heaviest first */
    size_t nnative;
    uint64_t native_with_stack;  /* weight of the calls with a native stack */
    uint64_t with_stack;     /* weight of the calls with a Python stack */
    uint64_t without;        /* ... of calls the shim reads stacks for that got none: made on
                                a thread with no Python frames (C++ threads: autograd's
                                backward, a DataLoader's pin thread), or with the GIL given
                                up where it could not follow */
};

struct an_py_lines {
    int present;             /* the trace holds Python stacks */
    char version[64];        /* the interpreter's, "" unknown */
    int follows_releases;    /* calls made with the GIL released got stacks too */
    struct an_py_cat cat[AN_LINES_CATS];
};

struct an_py_feed;

/* Made at the trace's PYTHON or first PYSTACK or STACK definition, which come before the
 * calls they name: traces without stacks pay nothing. NULL when memory runs out. */
struct an_py_feed *an_py_feed_new(void);
static inline int an_py_feed_starts_at(int event_kind)
{
    return event_kind == GW_EV_PYTHON || event_kind == GW_EV_PYSTACK ||
           event_kind == GW_EV_STACK;
}
/* Every event in file order, with its analysis event for calls (a NULL otherwise). */
void an_py_feed_event(struct an_py_feed *p, const struct gw_event *ev, const struct an_ev *a);
/* Sums per user line into *out (the reader still open) and frees p. */
void an_py_feed_finish(struct an_py_feed *p, const struct gw_reader *r, struct an_py_lines *out);

const char *an_line_cat_unit(enum an_line_cat cat);   /* "ns", "bytes", "calls" */
const char *an_line_cat_name(enum an_line_cat cat);   /* "sync", "pageable", ... */
/* What a line's share is of, for the text report: "of the time waited for the GPU". */
const char *an_line_cat_what(enum an_line_cat cat);
static inline int an_native_any(const struct an_py_cat *c) { return c->nnative != 0; }
/* The sentences a finding's lines are said in, the same in every report: say(user, label,
 * text) for each, label "line" for the user's lines and for the share made without Python
 * frames (no line named for it), "site" for native sites when no Python line is known. */
void an_py_cat_sentences(const struct an_py_cat *c, enum an_line_cat cat,
                         void (*say)(void *user, const char *label, const char *text),
                         void *user);

/* Whether a finding's lines say anything (the trace had Python stacks for its calls, or
 * calls that should have had one). */
static inline int an_py_cat_any(const struct an_py_cat *c)
{
    return c->ntop || c->with_stack || c->without;
}

#endif
