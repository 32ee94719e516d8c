/*
 * The run in a directory as it is now, for `gpuwatch serve` and `gpuwatch top`: the
 * analysis of `gpuwatch analyze` (tools/analyze/) over what the trace files (and each
 * .rings file) hold so far, and which of their processes still run.
 */
#ifndef GPUWATCH_LIVE_LIVE_RUN_H
#define GPUWATCH_LIVE_LIVE_RUN_H

#include "analyze.h"

/* Analyzes the traces in dir (or the trace dir names) into run: 1, or 0 when there is no
 * trace yet (nothing said on stderr; run needs no freeing then). */
int gw_live_analyze(const char *dir, const struct an_options *opt, struct an_run *run);

/* A fingerprint of the traces in dir as they are now (names, sizes, modification times of
 * the .gwt and .rings files): equal fingerprints, the same analysis. */
uint64_t gw_live_fingerprint(const char *dir);

/* 1 while the process that writes trace t runs: on this host, its pid is alive and not a
 * zombie; on another, its .rings file is there (a clean exit removes it). */
int gw_live_running(const struct an_trace *t);

#endif
