/*
 * The shim's own cost, kept by the writer thread and written once as tracing stops
 * (GW_REC_SHIM_STATS): its rounds, its thread's CPU time, and how late each round drained
 * after its deadline. The budget (docs/architecture.md) is checked against these by
 * bench/shim_budget.sh; `gpuwatch stats` prints them.
 */
#ifndef GW_WRITER_STATS_H
#define GW_WRITER_STATS_H

#include <stdint.h>

/* A new writer: no rounds yet. */
void gw_writer_stats_reset(void);
/* One round: due_ns its deadline (or the wake-up that brought it sooner), drained_ns the
 * end of its drain. */
void gw_writer_stats_round(uint64_t due_ns, uint64_t drained_ns);
/* On the writer thread as it ends: the SHIM_STATS definition, for the final drain. */
void gw_writer_stats_append(unsigned flush_ms);

#endif
