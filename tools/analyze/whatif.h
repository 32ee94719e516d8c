/*
 * Each what-if as a transformation of the replayed graph (replay.h): how it changes a CPU
 * stretch of a host thread, a call's own host time, whether a call still waits for the
 * GPU, and how a GPU operation is timed. One function per question, one case per change,
 * so a new change is one enum value, its cases here, and the rule that words it.
 */
#ifndef GPUWATCH_ANALYZE_WHATIF_H
#define GPUWATCH_ANALYZE_WHATIF_H

#include <stdint.h>

#include "an_event.h"
#include "replay.h"

/* Calls that put an operation on a stream that CUPTI records (host functions, failed
 * calls and host-to-host copies put none). */
int an_wi_issues(const struct an_ev *ev);
/* Calls after which the host waited for the GPU as measured: drains, blocking copies. */
int an_wi_waits_measured(const struct an_ev *ev);

/* The CPU stretch of `gap` ns before ev on its thread, with the change; h is the
 * thread's replayed time at the stretch's start. */
uint64_t an_wi_gap(struct an_replay_state *st, enum an_whatif w, const struct an_ev *ev,
                   uint64_t gap, uint64_t h);
/* The call's own host time with the change, from what it took without waiting. */
uint64_t an_wi_cost(enum an_whatif w, const struct an_ev *ev, uint64_t own_ns);
/* Whether the call still waits for the GPU with the change. */
int an_wi_waits(enum an_whatif w, const struct an_ev *ev);
/* Whether the operation ev issues starts right after the previous one on its stream, with
 * no launch latency (kernels replayed from a graph). */
int an_wi_back_to_back(enum an_whatif w, const struct an_ev *ev);
/* The GPU duration of an operation issued by ev (measured dur_ns, bytes) with the change. */
uint64_t an_wi_op_ns(const struct an_replay_state *st, enum an_whatif w,
                     const struct an_ev *ev, uint64_t dur_ns);

#endif
