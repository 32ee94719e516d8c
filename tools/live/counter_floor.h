/*
 * Keeps the counters `gpuwatch serve` exports from going down. Each scrape analyzes the
 * run read so far afresh; an idle interval still open at the end of what was read may be
 * given another cause once more is read, and Prometheus takes any decrease for a restart
 * of the counter (a spike in rate()). So a counter's value is never below what it was
 * last exported at: the analysis's figure, or the last one exported when that was more.
 */
#ifndef GPUWATCH_LIVE_COUNTER_FLOOR_H
#define GPUWATCH_LIVE_COUNTER_FLOOR_H

#include <stddef.h>

struct gw_counter_floor {
    struct gw_floor_slot *slots;
    size_t count, cap;       /* cap: a power of two (open addressing) */
};

/* The value to export for the series KEY (its name and labels): max(value, last). */
double gw_counter_floor(struct gw_counter_floor *floor, const char *key, double value);
void gw_counter_floor_free(struct gw_counter_floor *floor);

#endif
