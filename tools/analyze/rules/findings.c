#include "findings.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct an_finding *an_finding_add(struct an_findings *list, const char *id)
{
    if (list->count == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 8;
        struct an_finding *items = realloc(list->items, cap * sizeof *items);
        if (!items)
            return NULL;
        list->items = items;
        list->cap = cap;
    }
    struct an_finding *f = &list->items[list->count++];
    memset(f, 0, sizeof *f);
    snprintf(f->id, sizeof f->id, "%s", id);
    f->rank = -1;
    f->processes = 1;
    f->strikes_s = -1;
    return f;
}

void an_unproven_keep(struct an_findings *list, const struct an_unproven *u)
{
    for (size_t i = 0; i < list->nunproven; i++)
        if (!strcmp(list->unproven[i].id, u->id)) {
            if (u->up_to_ns > list->unproven[i].up_to_ns)
                list->unproven[i] = *u;
            return;
        }
    if (list->nunproven < AN_MAX_UNPROVEN)
        list->unproven[list->nunproven++] = *u;
}

void an_finding_fig(struct an_finding *f, const char *key, double value)
{
    if (f->nfig == AN_MAX_FIGURES)
        return;
    snprintf(f->fig[f->nfig].key, sizeof f->fig[f->nfig].key, "%s", key);
    f->fig[f->nfig].value = value;
    f->nfig++;
}

void an_appendf(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strnlen(buf, size);
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

const struct an_finding *an_findings_find(const struct an_findings *list, const char *id)
{
    for (size_t i = 0; list && i < list->count; i++)
        if (!strcmp(list->items[i].id, id))
            return &list->items[i];
    return NULL;
}

void an_finding_remove(struct an_findings *list, const char *id)
{
    const struct an_finding *f = an_findings_find(list, id);
    if (!f)
        return;
    size_t i = (size_t)(f - list->items);
    memmove(&list->items[i], &list->items[i + 1], (list->count - i - 1) * sizeof *f);
    list->count--;
}

static int by_saving(const void *a, const void *b)
{
    const struct an_finding *x = a, *y = b;
    if (x->risk != y->risk)
        return y->risk - x->risk;
    if (x->risk && x->strikes_s != y->strikes_s) {
        if ((x->strikes_s < 0) != (y->strikes_s < 0))
            return x->strikes_s < 0 ? 1 : -1;
        return x->strikes_s < y->strikes_s ? -1 : 1;
    }
    if (x->risk && x->outside != y->outside)
        return y->outside - x->outside;
    /* a saving said "up to" (host-only: work of unproven length taken as nil) lies anywhere
     * from nil to its bound: against a proven one, what the run can resolve is a tie at
     * best (issue 36 C9), and the proven one leads (sync_and_launch host-only: a run whose
     * launches slowed for a few steps put the graphs' 12.5 ms bound above the read's proven
     * 10.2; the graphs lost 0.9 ms, dropping the read gained 13) */
    if (!x->risk && x->upper_bound != y->upper_bound)
        return x->upper_bound - y->upper_bound;
    if (x->saving_ns != y->saving_ns)
        return x->saving_ns < y->saving_ns ? 1 : -1;
    return strcmp(x->id, y->id);
}

/* Two time savings within TIE_SHARE of each other are a tie (the replay's own noise): their
 * ids order them, so that reruns agree. Two that remove the same wait (same_wait) measure
 * one thing through two changes' replays, which approximate it differently (the workers'
 * prefetch start, the sync's own cost): a per-step read and a 4 ms loader on 2 CPUs
 * differ by 0.9-2.5 % from run to run, so their band is SAME_WAIT_TIE_SHARE. */
#define TIE_SHARE 0.02
#define SAME_WAIT_TIE_SHARE 0.10
/* a change leaves another this share of its saving or less: it took the other's wait */
#define SAME_WAIT_LEFT 0.10

void an_findings_rank(struct an_findings *list)
{
    if (list->count < 2)
        return;
    qsort(list->items, list->count, sizeof *list->items, by_saving);
    for (size_t pass = 0; pass < list->count; pass++) {
        int swapped = 0;
        for (size_t i = 0; i + 1 < list->count; i++) {
            struct an_finding *a = &list->items[i], *b = &list->items[i + 1];
            double band = a->same_wait && a->same_wait == b->same_wait ? SAME_WAIT_TIE_SHARE
                                                                       : TIE_SHARE;
            if (a->risk || b->risk || a->upper_bound != b->upper_bound ||
                strcmp(b->id, a->id) >= 0 ||
                (double)b->saving_ns < (1 - band) * (double)a->saving_ns)
                continue;
            struct an_finding t = *a;
            *a = *b;
            *b = t;
            swapped = 1;
        }
        if (!swapped)
            break;
    }
    /* a finding that adds to others' changes comes after their findings, whatever it saves
     * (moved there, it is looked at again, and stays: none of them is after it any more) */
    for (size_t i = 0; i < list->count;) {
        struct an_finding *f = &list->items[i];
        size_t last = i;
        for (size_t k = i + 1; f->follows && k < list->count; k++)
            if (list->items[k].whatif && (f->follows & 1u << list->items[k].whatif))
                last = k;
        if (last == i) {
            i++;
            continue;
        }
        struct an_finding moved = *f;
        memmove(f, f + 1, (last - i) * sizeof *f);
        list->items[last] = moved;
    }
}

/* Pairs of one process's time findings whose changes each take the other's saving. */
static void mark_same_waits(struct an_findings *list, size_t from, const struct an_replay *r)
{
    static uint64_t next_key;  /* (unique within the run: a key per pair and process) */
    for (size_t i = from; i < list->count; i++) {
        struct an_finding *a = &list->items[i];
        for (size_t k = i + 1; k < list->count && a->whatif && !a->risk; k++) {
            struct an_finding *b = &list->items[k];
            if (b->risk || !b->whatif || b->whatif == a->whatif || !a->saving_ns ||
                !b->saving_ns)
                continue;
            uint64_t b_after_a = an_replay_saving_after(r, (enum an_whatif)a->whatif,
                                                        (enum an_whatif)b->whatif);
            uint64_t a_after_b = an_replay_saving_after(r, (enum an_whatif)b->whatif,
                                                        (enum an_whatif)a->whatif);
            if ((double)b_after_a > SAME_WAIT_LEFT * (double)b->saving_ns ||
                (double)a_after_b > SAME_WAIT_LEFT * (double)a->saving_ns)
                continue;
            uint64_t key = a->same_wait ? a->same_wait : b->same_wait ? b->same_wait
                                                                     : __atomic_add_fetch(&next_key, 1, __ATOMIC_RELAXED);
            a->same_wait = b->same_wait = key;
        }
    }
}

const struct an_finding *an_finding_same_wait(const struct an_findings *list,
                                              const struct an_finding *f)
{
    for (size_t i = 0; f->same_wait && i < list->count; i++)
        if (&list->items[i] != f && list->items[i].same_wait == f->same_wait)
            return &list->items[i];
    return NULL;
}

void an_findings_rerank(struct an_findings *list, size_t from, const struct an_replay *r)
{
    mark_same_waits(list, from, r);
    const struct an_finding *top = NULL;
    for (size_t i = from; i < list->count; i++) {
        const struct an_finding *f = &list->items[i];
        if (!f->risk && f->whatif && (!top || f->saving_ns > top->saving_ns))
            top = f;
    }
    if (!top)
        return;
    for (size_t i = from; i < list->count; i++) {
        struct an_finding *f = &list->items[i];
        if (f == top || f->risk || !f->whatif)
            continue;
        /* the same change (pinned copies for both copy findings) is made by fixing the top */
        f->after_ns = f->whatif == top->whatif
                          ? 0
                          : an_replay_saving_after(r, (enum an_whatif)top->whatif,
                                                   (enum an_whatif)f->whatif);
        snprintf(f->after_id, sizeof f->after_id, "%s", top->id);
    }
}

void an_findings_free(struct an_findings *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}

double an_rel_s(const struct an_model *m, uint64_t ts)
{
    return ts > m->first_ts ? (double)(ts - m->first_ts) / 1e9 : 0.0;
}

void an_fmt_bytes(char *buf, size_t size, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, u == 0 ? "%.0f %s" : bytes < 10 ? "%.2f %s" : "%.1f %s", bytes,
             units[u]);
}

void an_fmt_ns(char *buf, size_t size, double ns)
{
    if (ns >= 1e9)
        snprintf(buf, size, "%.2f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, size, "%.2f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, size, "%.1f us", ns / 1e3);
    else
        snprintf(buf, size, "%.0f ns", ns);
}

/* Adds a rank to a finding's ascending list (kept to its first AN_KEEP_RANKS). */
void an_finding_add_rank(struct an_finding *f, int32_t rank)
{
    if (rank < 0 || f->nranks == AN_KEEP_RANKS)
        return;
    unsigned at = f->nranks;
    while (at > 0 && f->ranks[at - 1] > rank)
        at--;
    if (at > 0 && f->ranks[at - 1] == rank)
        return;
    memmove(&f->ranks[at + 1], &f->ranks[at], (f->nranks - at) * sizeof f->ranks[0]);
    f->ranks[at] = rank;
    f->nranks++;
}
