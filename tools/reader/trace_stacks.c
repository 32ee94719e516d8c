/* The reader's call stacks (trace_format.h): STACK (native) and PYSTACK (Python)
 * definitions by id, and the PYSITE and STACKSITE records that name the calls made from
 * one. */
#include "trace_reader_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What differs between the two kinds of stack. */
struct stack_kind {
    const char *record;          /* the record's name, for damage reports */
    unsigned frame_words;
    enum gw_event_kind event;
};
static const struct stack_kind native_kind = {"STACK", GW_STACK_FRAME_WORDS, GW_EV_STACK};
static const struct stack_kind python_kind = {"PYSTACK", GW_PYSTACK_FRAME_WORDS, GW_EV_PYSTACK};

/* The frames and frame count every entry has, whichever member it is. */
static unsigned entry_frames(const struct stack_kind *kind, const union gw_any_stack *e,
                             const void **frames)
{
    *frames = kind == &native_kind ? (const void *)e->native.frames : (const void *)e->py.frames;
    return kind == &native_kind ? e->native.nframes : e->py.nframes;
}

/* Keeps a stack of n frames (frame_words words each, as decoded); an id read again with the
 * same frames (the second pass after gw_reader_load_defs) keeps its entry, so frames handed
 * out earlier stay valid. */
static const union gw_any_stack *add_stack(struct gw_stack_table *t,
                                           const struct stack_kind *kind, uint64_t id,
                                           const uint64_t *words, unsigned n)
{
    size_t bytes = (size_t)n * kind->frame_words * sizeof *words;
    uint64_t *slot = gw_map_get(&t->ids, id);
    if (slot) {
        const void *frames;
        const union gw_any_stack *old = &t->entries[*slot];
        if (entry_frames(kind, old, &frames) == n && (n == 0 || memcmp(frames, words, bytes) == 0))
            return old;
    }
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        union gw_any_stack *grown = realloc(t->entries, cap * sizeof *grown);
        if (!grown)
            return NULL;
        t->entries = grown;
        t->cap = cap;
    }
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return NULL;
    if (bytes)
        memcpy(copy, words, bytes);
    if (gw_map_put(&t->ids, id, t->count) != 0) {
        free(copy);
        return NULL;
    }
    union gw_any_stack *e = &t->entries[t->count++];
    if (kind == &native_kind)
        e->native = (struct gw_stack){id, n, copy};
    else
        e->py = (struct gw_pystack){id, n, copy};
    return e;
}

static int decode_stack(struct gw_reader *r, struct gw_stack_table *t,
                        const struct stack_kind *kind, const uint8_t *body, size_t len,
                        uint64_t off, struct gw_event *ev)
{
    struct cursor c = {body, body + len};
    uint64_t head[2];
    unsigned have = get_words(&c, head, 2);
    if (have < 2) {
        gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                         "offset %" PRIu64 ": expected 2 varints in the %zu-byte body of a "
                         "%s record, found %u",
                         off, len, kind->record, have);
        return 0;
    }
    unsigned want = head[1] > GW_STACK_MAX_FRAMES ? GW_STACK_MAX_FRAMES : (unsigned)head[1];
    uint64_t words[GW_STACK_MAX_FRAMES * GW_STACK_FRAME_WORDS];
    unsigned n = 0;
    while (n < want &&
           get_words(&c, words + (size_t)n * kind->frame_words, kind->frame_words) ==
               kind->frame_words)
        n++;
    if (n < want)
        gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                         "offset %" PRIu64 ": expected %u frames in the %zu-byte body of "
                         "%s %" PRIu64 ", found %u (the stack is kept without the rest)",
                         off, want, len, kind->record, head[0], n);
    memset(ev, 0, sizeof *ev);
    ev->kind = kind->event;
    ev->tid = r->ch.tid;
    ev->offset = off;
    ev->family = -1;
    r->stats.definitions++;
    const union gw_any_stack *kept = add_stack(t, kind, head[0], words, n);
    if (kind == &native_kind)
        ev->u.stack = kept ? kept->native : (struct gw_stack){head[0], 0, NULL};
    else
        ev->u.pystack = kept ? kept->py : (struct gw_pystack){head[0], 0, NULL};
    return !r->defs_only;
}

int gw_stacks_decode(struct gw_reader *r, const uint8_t *body, size_t len, uint64_t off,
                     struct gw_event *ev)
{
    return decode_stack(r, &r->stacks, &native_kind, body, len, off, ev);
}

int gw_pystacks_decode(struct gw_reader *r, const uint8_t *body, size_t len, uint64_t off,
                       struct gw_event *ev)
{
    return decode_stack(r, &r->pystacks, &python_kind, body, len, off, ev);
}

const struct gw_pystack *gw_tables_add_pystack(struct gw_reader *r, uint64_t id,
                                              const struct gw_pyframe *frames, unsigned n)
{
    uint64_t words[GW_STACK_MAX_FRAMES * GW_PYSTACK_FRAME_WORDS];
    if (n > GW_STACK_MAX_FRAMES)
        n = GW_STACK_MAX_FRAMES;
    for (unsigned i = 0; i < n; i++) {  /* (the record's word order: file, line, function) */
        words[i * 3] = frames[i].file_id;
        words[i * 3 + 1] = frames[i].line;
        words[i * 3 + 2] = frames[i].function_id;
    }
    const union gw_any_stack *kept = add_stack(&r->pystacks, &python_kind, id, words, n);
    return kept ? &kept->py : NULL;
}

int gw_site_decode(struct gw_reader *r, unsigned type, const uint8_t *body, size_t len,
                   uint64_t off, struct gw_event *ev)
{
    const char *name = type == GW_REC_PYSITE ? "PYSITE" : "STACKSITE";
    struct cursor c = {body, body + len};
    uint64_t w[3];
    unsigned have = get_words(&c, w, 3);
    if (have < 3 || w[2] == 0) {
        gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                         "offset %" PRIu64 ": expected a stack id, a first call number and "
                         "a count above 0 in the %zu-byte body of a %s record, found "
                         "%u varint(s)%s",
                         off, len, name, have, have == 3 ? " with a count of 0" : "");
        return 0;
    }
    /* Numbers that may be short (records lost without a count) would name other calls:
     * no site rather than a wrong one. */
    if (r->defs_only || r->call_unsure)
        return 0;
    memset(ev, 0, sizeof *ev);
    ev->kind = type == GW_REC_PYSITE ? GW_EV_PYSITE : GW_EV_STACKSITE;
    ev->tid = r->ch.tid;
    ev->offset = off;
    ev->family = -1;
    /* numbers are the low word of call ids, as CALL records of this thread are numbered */
    uint64_t first = w[1] & 0xFFFFFFFFu, last = first + w[2] - 1;
    ev->u.site.stack_id = w[0];
    ev->u.site.first_call_id = r->call_id_high | first;
    ev->u.site.last_call_id = r->call_id_high | (last > 0xFFFFFFFFu ? 0xFFFFFFFFu : last);
    return 1;
}

static const union gw_any_stack *find(const struct gw_stack_table *t, uint64_t id)
{
    uint64_t *slot = gw_map_get(&t->ids, id);
    return slot ? &t->entries[*slot] : NULL;
}

const struct gw_stack *gw_reader_stack(const struct gw_reader *r, uint64_t id)
{
    const union gw_any_stack *e = find(&r->stacks, id);
    return e ? &e->native : NULL;
}

const struct gw_pystack *gw_reader_pystack(const struct gw_reader *r, uint64_t id)
{
    const union gw_any_stack *e = find(&r->pystacks, id);
    return e ? &e->py : NULL;
}

size_t gw_reader_pystack_count(const struct gw_reader *r) { return r->pystacks.count; }

static void table_free(struct gw_stack_table *t, const struct stack_kind *kind)
{
    for (size_t i = 0; i < t->count; i++) {
        const void *frames;
        entry_frames(kind, &t->entries[i], &frames);
        free((void *)frames);
    }
    free(t->entries);
    gw_map_free(&t->ids);
    memset(t, 0, sizeof *t);
}

void gw_stacks_free(struct gw_reader *r)
{
    table_free(&r->stacks, &native_kind);
    table_free(&r->pystacks, &python_kind);
}
