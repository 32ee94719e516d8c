/*
 * Memory held over time by kind: device memory (plain, stream-ordered pools, VMM-mapped,
 * managed), their total, and pinned host memory apart. The run's length is unknown while
 * the pass streams, so a fixed number of equal bins whose width doubles (pairs merged) as
 * the run grows: memory stays constant however long the trace. Each bin keeps, per kind,
 * the most held at any moment within it (growth and peaks) and what was held at its end.
 */
#ifndef GPUWATCH_ANALYZE_MEM_TIMELINE_H
#define GPUWATCH_ANALYZE_MEM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "an_event.h"

#define AN_HELD_BINS 64
/* The first width: 64 ms of run before the first doubling, round milliseconds after. */
#define AN_HELD_FIRST_WIDTH_NS 1000000ull

/* What each bin follows: enum an_mem_kind, then these. */
enum {
    AN_HELD_PINNED = AN_MEM_KINDS,  /* pinned host memory, apart from the device total */
    AN_HELD_TOTAL,                  /* device memory, all kinds */
    AN_HELD_VALUES,
};

struct an_held_bin {
    uint64_t max[AN_HELD_VALUES];   /* the most held at any moment within the bin */
    uint64_t end[AN_HELD_VALUES];   /* held at its end (the last bin: at the latest event) */
};

struct an_mem_timeline {
    uint64_t origin, width;         /* bin i covers [origin + i*width, origin + (i+1)*width) */
    size_t nbins;                   /* bins in use, 0 before the first note; the last is open */
    uint64_t ever;                  /* bit v: value v was non-zero at some moment */
    struct an_held_bin bin[AN_HELD_BINS];
};

/* "plain", "pool", "vmm", "managed", "pinned_host", "total": the JSON keys. */
const char *an_held_name(int value);

/* Starts the timeline at `origin` (the run's first event) if it has not started. */
void an_held_start(struct an_mem_timeline *tl, uint64_t origin);
/* What is held from time t on: held[AN_MEM_KINDS] by kind and the pinned host bytes. Times
 * earlier than the open bin (late events) count in it: what was held is cumulative. */
void an_held_note(struct an_mem_timeline *tl, uint64_t t, const uint64_t held[AN_MEM_KINDS],
                  uint64_t pinned);
/* Extends the timeline to the run's end (the last event's end, exclusive). */
void an_held_close(struct an_mem_timeline *tl, uint64_t end);

#endif
