/*
 * Device memory as the driver sees it: what this process holds by kind, its peak, the
 * capacity and what others held at start, and over time (mem_timeline.c); out-of-memory
 * errors with the state they happened in; OOM-retry storms (PyTorch's caching allocator
 * frees cached blocks and retries after a failed cudaMalloc, FIELD.md section 4); what is
 * still held at exit. A PyTorch profiler trace's [memory] events add the caching
 * allocator's blocks (an_memory_block): then what is held is PyTorch's allocated memory.
 */
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

#define VMM_TAG (0xA5ull << 56)  /* VMM handles share the map with pointers */

static uint64_t key_of(const struct an_ev *ev)
{
    return ev->host_kind == AN_MEM_VMM ? ev->ptr ^ VMM_TAG : ev->ptr;
}

/* A storm ends with a retried allocation that worked, or unrecovered when the window
 * passes without one; its time counts either way (the frees waited for the device). */
static void end_storm(struct an_model *m, int recovered, uint64_t end)
{
    struct an_model_state *st = m->state;
    struct an_memory *mem = &m->mem;
    if (!recovered)
        end = st->storm_last;
    if (recovered)
        mem->storms++;
    else
        mem->unrecovered_ooms++;
    if (recovered || st->storm_frees) {
        mem->storm_ns += end > st->storm_start ? end - st->storm_start : 0;
        mem->storm_frees += st->storm_frees;
        mem->storm_freed_bytes += st->storm_freed;
        if (!mem->storm_first)
            mem->storm_first = st->storm_start;
        if (end > mem->storm_last)
            mem->storm_last = end;
    }
    st->in_storm = 0;
}

static void on_oom(struct an_model *m, const struct an_ev *ev)
{
    struct an_model_state *st = m->state;
    struct an_memory *mem = &m->mem;
    mem->ooms++;
    uint64_t held = mem->capacity ? mem->others_at_start + mem->live_total : 0;
    uint64_t est_free = mem->capacity > held ? mem->capacity - held : 0;
    int fragmented = mem->capacity && est_free >= ev->bytes;
    mem->ooms_fragmented += fragmented;
    if (mem->noom < AN_KEEP_OOMS)
        mem->oom[mem->noom++] = (struct an_oom){
            .ts = ev->ts, .request = ev->bytes, .live = mem->live_total,
            .est_free = est_free, .fragmented = fragmented,
        };
    if (st->in_storm && st->storm_frees) {
        st->storm_last = ev->end;
        end_storm(m, 0, ev->end);  /* the retry after the frees failed too: a real OOM */
        return;
    }
    if (!st->in_storm) {
        st->in_storm = 1;
        st->storm_start = ev->ts;
        st->storm_request = ev->bytes;
        st->storm_frees = st->storm_freed = 0;
    }
    st->storm_deadline = ev->end + m->th.retry_window_ns;
    st->storm_last = ev->end;
}

static void on_alloc(struct an_model *m, const struct an_ev *ev)
{
    struct an_model_state *st = m->state;
    struct an_memory *mem = &m->mem;
    if (ev->flags & AN_F_ERROR) {
        mem->failed++;
        if (ev->flags & AN_F_OOM)
            on_oom(m, ev);
        return;
    }
    if (!ev->ptr)
        return;
    mem->allocs++;
    struct an_alloc a = {.key = key_of(ev), .bytes = ev->bytes, .ts = ev->ts, .tid = ev->tid,
                         .kind = ev->host_kind, .stack = ev->key};
    struct an_alloc old;
    if (an_ptrmap_take(&st->live, a.key, &old)) {  /* reused without a free we saw */
        mem->live[old.kind] -= old.bytes;
        mem->live_total -= old.bytes;
    }
    if (an_ptrmap_put(&st->live, &a) != 0)
        return;
    mem->live[a.kind % AN_MEM_KINDS] += a.bytes;
    mem->live_total += a.bytes;
    if (mem->live_total > mem->peak_total) {
        mem->peak_total = mem->live_total;
        mem->peak_ts = ev->ts;
        memcpy(mem->peak_by_kind, mem->live, sizeof mem->live);
    }
    if (st->in_storm && ev->bytes >= st->storm_request) {
        if (st->storm_frees)
            end_storm(m, 1, ev->end);  /* the retried allocation worked */
        else
            st->in_storm = 0;  /* it fit without freeing anything: no storm */
    }
}

static void on_free(struct an_model *m, const struct an_ev *ev)
{
    struct an_model_state *st = m->state;
    struct an_memory *mem = &m->mem;
    if (!ev->ptr || (ev->flags & AN_F_ERROR))
        return;
    mem->frees++;
    struct an_alloc a;
    if (!an_ptrmap_take(&st->live, key_of(ev), &a)) {
        mem->unknown_frees++;
        return;
    }
    mem->live[a.kind % AN_MEM_KINDS] -= a.bytes;
    mem->live_total -= a.bytes;
    if (st->in_storm) {
        st->storm_frees++;
        st->storm_freed += a.bytes;
        st->storm_last = ev->end;
    }
}

void an_memory_call(struct an_model *m, const struct an_ev *ev)
{
    struct an_model_state *st = m->state;
    struct an_memory *mem = &m->mem;
    if (st->in_storm && ev->ts > st->storm_deadline)
        end_storm(m, 0, 0);
    switch (ev->kind) {
    case AN_ALLOC:
        on_alloc(m, ev);
        break;
    case AN_FREE:
        on_free(m, ev);
        break;
    case AN_HOST_ALLOC:
        if (!(ev->flags & AN_F_ERROR) && ev->ptr) {
            struct an_alloc a = {.key = ev->ptr, .bytes = ev->bytes, .ts = ev->ts};
            if (an_ptrmap_put(&st->pinned, &a) == 0) {
                mem->pinned_live += ev->bytes;
                if (mem->pinned_live > mem->pinned_peak)
                    mem->pinned_peak = mem->pinned_live;
            }
        }
        break;
    case AN_HOST_FREE: {
        struct an_alloc a;
        if (!(ev->flags & AN_F_ERROR) && an_ptrmap_take(&st->pinned, ev->ptr, &a))
            mem->pinned_live -= a.bytes;
        break;
    }
    case AN_MEMINFO:
        if (!(ev->flags & AN_F_ERROR)) {
            st->last_meminfo_free = ev->bytes;
            if (!mem->capacity)
                mem->capacity = ev->ptr;
        }
        break;
    default:
        break;
    }
    if (ev->kind == AN_ALLOC || ev->kind == AN_FREE || ev->kind == AN_HOST_ALLOC ||
        ev->kind == AN_HOST_FREE) {
        an_held_start(&m->held, m->first_ts);  /* the bins count from the run's start */
        an_held_note(&m->held, ev->ts, mem->live, mem->pinned_live);
    }
}

/* What a device held when the trace began, as one block of its own: PyTorch's blocks of
 * that time are given back with addresses never seen taken, and come out of it. */
#define BEFORE_TAG (0x5Bull << 56)

static void block_held(struct an_model *m, const struct an_alloc *a)
{
    struct an_memory *mem = &m->mem;
    if (an_ptrmap_put(&m->state->live, a) != 0)
        return;
    mem->live[a->kind % AN_MEM_KINDS] += a->bytes;
    mem->live_total += a->bytes;
}

static void block_gone(struct an_model *m, const struct an_alloc *a, uint64_t bytes)
{
    struct an_memory *mem = &m->mem;
    mem->live[a->kind % AN_MEM_KINDS] -= bytes;
    mem->live_total -= bytes;
}

void an_memory_block(struct an_model *m, const struct an_ev *ev)
{
    struct an_memory *mem = &m->mem;
    struct an_ptrmap *live = &m->state->live;
    uint64_t before_key = BEFORE_TAG | ev->api;
    struct an_alloc a = {.bytes = ev->bytes, .ts = ev->ts, .tid = ev->tid,
                         .kind = AN_MEM_PLAIN};
    if (ev->key) {
        a.key = before_key;
        a.bytes = ev->key;
        block_held(m, &a);
        a.bytes = ev->bytes;
    }
    if (ev->dir) {
        mem->blocks_taken++;
        struct an_alloc old;
        if (an_ptrmap_take(live, ev->ptr, &old))  /* given back where we did not see it */
            block_gone(m, &old, old.bytes);
        a.key = ev->ptr;
        block_held(m, &a);
    } else {
        mem->blocks_given_back++;
        struct an_alloc held;
        if (an_ptrmap_take(live, ev->ptr, &held)) {
            block_gone(m, &held, held.bytes);
        } else if (an_ptrmap_take(live, before_key, &held)) {
            uint64_t part = ev->bytes < held.bytes ? ev->bytes : held.bytes;
            block_gone(m, &held, part);
            held.bytes -= part;
            if (held.bytes && an_ptrmap_put(live, &held) != 0)
                block_gone(m, &held, held.bytes);
        } else {
            mem->unknown_frees++;
        }
    }
    if (ev->stream > mem->reserved_peak)
        mem->reserved_peak = ev->stream;
    if (mem->live_total > mem->peak_total) {
        mem->peak_total = mem->live_total;
        mem->peak_ts = ev->ts;
        memcpy(mem->peak_by_kind, mem->live, sizeof mem->live);
    }
    an_held_start(&m->held, m->first_ts);
    an_held_note(&m->held, ev->ts, mem->live, mem->pinned_live);
}

static int by_total(const void *a, const void *b)
{
    const struct an_leftover *x = a, *y = b;
    uint64_t tx = x->bytes_each * x->count, ty = y->bytes_each * y->count;
    return tx < ty ? 1 : tx > ty ? -1 : (x->first_ts > y->first_ts) - (x->first_ts < y->first_ts);
}

/* What is still held at exit, grouped by kind, size and thread. */
void an_memory_finish(struct an_model *m)
{
    struct an_model_state *st = m->state;
    struct an_memory *mem = &m->mem;
    if (st->in_storm)
        end_storm(m, 0, 0);
    an_alloc_sites(m);
    an_held_close(&m->held, m->last_ts);
    size_t ngroups = 0, cap = 64;
    struct an_leftover *groups = malloc(cap * sizeof *groups);
    for (size_t i = 0; groups && i < st->live.cap; i++) {
        const struct an_alloc *a = &st->live.slots[i];
        if (!a->key)
            continue;
        mem->at_exit_bytes += a->bytes;
        mem->at_exit_count++;
        size_t g = 0;
        while (g < ngroups && !(groups[g].bytes_each == a->bytes &&
                                groups[g].kind == a->kind && groups[g].tid == a->tid))
            g++;
        if (g == ngroups) {
            if (ngroups == cap)
                continue;  /* many distinct sizes: the largest groups are found already */
            groups[ngroups++] = (struct an_leftover){
                .bytes_each = a->bytes, .first_ts = a->ts, .tid = a->tid, .kind = a->kind};
        }
        groups[g].count++;
        if (a->ts < groups[g].first_ts)
            groups[g].first_ts = a->ts;
    }
    if (groups) {
        qsort(groups, ngroups, sizeof *groups, by_total);
        mem->nleftover = ngroups < AN_KEEP_LEFTOVERS ? ngroups : AN_KEEP_LEFTOVERS;
        memcpy(mem->leftover, groups, mem->nleftover * sizeof *groups);
        free(groups);
    }
}
