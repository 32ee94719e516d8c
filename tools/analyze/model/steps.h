/*
 * Finding the training step in one pass: every event that could mark a step boundary
 * (an NVTX range named like a step; a synchronizing call or blocking device-to-host copy;
 * a host-to-device copy; a launch of one kernel) is a candidate key. Per key we keep the
 * boundary times (decimated past a cap), memory held at each, and snapshots of the
 * cumulative totals at its first occurrences (warm-up is early) and its last. After the
 * pass the most regular, best covering key wins; see an_steps_choose.
 */
#ifndef GPUWATCH_ANALYZE_STEPS_H
#define GPUWATCH_ANALYZE_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_use.h"
#include "gw_map.h"
#include "model.h"

#define AN_STEP_EARLY 64          /* snapshots kept per key: warm-up is within these */
#define AN_STEP_MAX_KEYS 256
#define AN_STEP_MAX_SAMPLES 65536 /* boundary times kept per key before decimating */

/* Tiers, best first: a marked step, a drain, an upload, a kernel. */
enum an_step_tier { AN_TIER_NVTX = 0, AN_TIER_DRAIN, AN_TIER_H2D, AN_TIER_KERNEL };

/* One occurrence kept: its time, the device memory held and the run's work calls so far. */
struct an_step_sample {
    uint64_t ts, live, work;
};

struct an_step_key {
    /* first, what a kernel launch touches (an_steps_kernel): one cache line */
    uint64_t count, slow_at, last;
    uint64_t last_work;           /* the run's work calls so far at the last occurrence */
    /* slow_at: the occurrence number at which a kernel-tier occurrence has more to do than
     * count it: an early snapshot or a sample (an_steps_kernel) */
    size_t nsamples, cap;
    uint64_t stride;
    struct an_step_sample *sample;  /* every stride-th occurrence */
    uint64_t next_sample;         /* occurrence number of the next sample kept */
    uint64_t key;
    enum an_step_tier tier;
    int sub;                      /* within a tier: lower wins a tie (syncs before copies) */
    uint16_t api;
    uint64_t name;                /* NVTX name string id, or kernel shape id */
    uint64_t first, first_work;   /* the first occurrence: time, work calls so far */
    struct an_totals early[AN_STEP_EARLY];
    size_t nearly;
    struct an_totals last_snap;
    /* where a range of this name last closed (NVTX tier): the end of the step it marked.
     * Past the last push, it closes the last step, which no push follows (a trace of N
     * ProfilerStep#N spans has N steps, not N - 1) */
    uint64_t close_ts, close_live, close_work;
    struct an_totals close_snap;
};

#define AN_STEP_CACHE 64

struct an_step_finder {
    struct gw_map index;          /* key -> index in keys */
    struct { uint64_t key; uint32_t index_plus1; } cache[AN_STEP_CACHE];  /* recent keys */
    struct an_step_key *keys;
    size_t nkeys, cap;
    uint64_t refused;             /* occurrences of keys past AN_STEP_MAX_KEYS */
    /* the step range open on the thread that pushed one last: its NVTX depth there, the
     * range's depth (0: none open), its key, or its range id (a start/end range) */
    uint32_t range_tid;
    unsigned range_depth, step_depth;
    uint64_t step_key;
    uint64_t step_range, step_range_key;
};

/* A candidate's key: what identifies it within its tier (an NVTX name's step key, a call's
 * api, size and stream, a kernel's shape), spread, with the tier */
static inline uint64_t an_step_key_of(uint64_t within_tier, enum an_step_tier tier)
{
    return within_tier * 0x9E3779B97F4A7C15ull + tier;
}

/* One occurrence of a candidate; the totals are copied (an_totals_snapshot) only when they
 * may be needed: a key's first AN_STEP_EARLY occurrences, and every one of a rare tier
 * (a kernel-tier step ends at the run's totals instead: launches are too many to copy
 * totals at each). */
void an_steps_occurrence(struct an_step_finder *f, const struct an_model *m, uint64_t key,
                         enum an_step_tier tier, int sub, uint16_t api, uint64_t name,
                         uint64_t boundary, uint64_t live);
/* Samples are the occurrences numbered 0, stride, 2 x stride ...: takes this one if it is
 * one (there is room), and sets the next. */
static inline void an_steps_sample(struct an_step_key *k, uint64_t boundary, uint64_t live,
                                   uint64_t work)
{
    if (k->count == k->nsamples * k->stride) {
        k->sample[k->nsamples] = (struct an_step_sample){boundary, live, work};
        k->nsamples++;
    }
    k->next_sample = k->nsamples * k->stride;
}

/* A launch of kernel `shape` (the kernel tier): an_steps_occurrence, with the common cases
 * of a known key past its early snapshots inline: not a sample (counted), or a sample with
 * room for it. */
static inline void an_steps_kernel(struct an_step_finder *f, const struct an_model *m,
                                   uint64_t shape, uint16_t api, uint64_t boundary,
                                   uint64_t live)
{
    uint64_t key = an_step_key_of(shape, AN_TIER_KERNEL);
    size_t c = (size_t)(key ^ key >> 29) & (AN_STEP_CACHE - 1);
    if (f->cache[c].index_plus1 && f->cache[c].key == key) {
        struct an_step_key *k = &f->keys[f->cache[c].index_plus1 - 1];
        if (k->count != k->slow_at) {
            k->last = boundary;
            k->last_work = m->total.work_calls;
            k->count++;
            return;
        }
        /* count == slow_at: below AN_STEP_EARLY, or at next_sample */
        if (k->count >= AN_STEP_EARLY && k->nsamples != k->cap) {
            k->last = boundary;
            k->last_work = m->total.work_calls;
            an_steps_sample(k, boundary, live, m->total.work_calls);
            k->count++;
            k->slow_at = k->next_sample;
            return;
        }
    }
    an_steps_occurrence(f, m, key, AN_TIER_KERNEL, 0, api, shape, boundary, live);
}

/* An NVTX range event (push, pop, start, end) for the step finder: where a range named like
 * a step closes, its key's close_* is set (key: the step key step_candidate gave its push). */
void an_steps_range(struct an_step_finder *f, const struct an_model *m, const struct an_ev *ev,
                    uint64_t key);
/* The most launched kernels (kernel-tier keys), into m->top_kernels. */
void an_steps_top_kernels(struct an_model *m, const struct an_step_finder *f);
/* Picks the step marker and fills m->steps, m->steady, m->steady_start/end; cpu: the
 * CPU samples, which say where a slow early step waited for a CPU (not warm-up). */
void an_steps_choose(struct an_model *m, struct an_step_finder *f,
                     const struct an_cpu_samples *cpu);
void an_steps_free(struct an_step_finder *f);

#endif
