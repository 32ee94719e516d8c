/* The reader's STACK definitions (trace_format.h): allocation call stacks by id. */
#include "trace_reader_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gpuwatch/varint.h"

/* Keeps a stack; an id read again with the same frames (the second pass after
 * gw_reader_load_defs) keeps its entry, so frames handed out earlier stay valid. */
static const struct gw_stack *add_stack(struct gw_reader *r, uint64_t id,
                                        const struct gw_stack_frame *frames, unsigned n)
{
    uint64_t *slot = gw_map_get(&r->stack_ids, id);
    if (slot) {
        const struct gw_stack *old = &r->stacks[*slot];
        if (old->nframes == n && (n == 0 || memcmp(old->frames, frames, n * sizeof *frames) == 0))
            return old;
    }
    if (r->nstacks == r->stacks_cap) {
        size_t cap = r->stacks_cap ? r->stacks_cap * 2 : 16;
        struct gw_stack *grown = realloc(r->stacks, cap * sizeof *grown);
        if (!grown)
            return NULL;
        r->stacks = grown;
        r->stacks_cap = cap;
    }
    struct gw_stack_frame *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy)
        return NULL;
    if (n)
        memcpy(copy, frames, n * sizeof *frames);
    if (gw_map_put(&r->stack_ids, id, r->nstacks) != 0) {
        free(copy);
        return NULL;
    }
    r->stacks[r->nstacks] = (struct gw_stack){id, n, copy};
    return &r->stacks[r->nstacks++];
}

int gw_stacks_decode(struct gw_reader *r, const uint8_t *body, size_t len, uint64_t off,
                     struct gw_event *ev)
{
    uint64_t head[2];
    size_t at = 0;
    unsigned have = 0;
    while (have < 2 && at < len) {
        size_t k = gw_get_uvarint(body + at, len - at, &head[have]);
        if (!k)
            break;
        at += k;
        have++;
    }
    if (have < 2) {
        gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                         "offset %" PRIu64 ": expected 2 varints in the %zu-byte body of a "
                         "STACK record, found %u",
                         off, len, have);
        return 0;
    }
    unsigned want = head[1] > GW_STACK_MAX_FRAMES ? GW_STACK_MAX_FRAMES : (unsigned)head[1];
    struct gw_stack_frame frames[GW_STACK_MAX_FRAMES];
    unsigned n = 0;
    while (n < want) {
        uint64_t w[GW_STACK_FRAME_WORDS];
        unsigned got = 0;
        while (got < GW_STACK_FRAME_WORDS && at < len) {
            size_t k = gw_get_uvarint(body + at, len - at, &w[got]);
            if (!k)
                break;
            at += k;
            got++;
        }
        if (got < GW_STACK_FRAME_WORDS)
            break;
        frames[n++] = (struct gw_stack_frame){w[0], w[1], w[2], w[3]};
    }
    if (n < want)
        gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                         "offset %" PRIu64 ": expected %u frames in the %zu-byte body of "
                         "STACK %" PRIu64 ", found %u (the stack is kept without the rest)",
                         off, want, len, head[0], n);
    memset(ev, 0, sizeof *ev);
    ev->kind = GW_EV_STACK;
    ev->tid = r->ch.tid;
    ev->offset = off;
    ev->family = -1;
    r->stats.definitions++;
    const struct gw_stack *kept = add_stack(r, head[0], frames, n);
    if (kept)
        ev->u.stack = *kept;
    else
        ev->u.stack = (struct gw_stack){head[0], 0, NULL};
    return !r->defs_only;
}

const struct gw_stack *gw_reader_stack(const struct gw_reader *r, uint64_t id)
{
    uint64_t *slot = gw_map_get(&r->stack_ids, id);
    return slot ? &r->stacks[*slot] : NULL;
}

void gw_stacks_free(struct gw_reader *r)
{
    for (size_t i = 0; i < r->nstacks; i++)
        free((void *)r->stacks[i].frames);
    free(r->stacks);
    gw_map_free(&r->stack_ids);
}
