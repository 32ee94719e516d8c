/* The pass's running totals: snapshots and idle intervals (totals.c). */
#ifndef GPUWATCH_ANALYZE_TOTALS_H
#define GPUWATCH_ANALYZE_TOTALS_H

#include <stdint.h>

#include "history.h"
#include "model.h"

/* Cumulative totals as of now (the GPU's open busy periods counted in). */
void an_totals_snapshot(const struct an_model *m, struct an_totals *out);
/* One idle interval [start, end) of the GPU records' timeline (gpu 1) or of what host
 * calls prove (gpu 0), split by cause: into the totals, the time bins and the largest. */
void an_totals_add_idle(struct an_model *m, int gpu, uint64_t start, uint64_t end,
                        const struct an_split *split);

#endif
