/* One trace's GPU records per device: busy time (kernels, copies and sets unioned across
 * streams, gw_busy), counts and summed durations by kind (gpuwatch stats). */
#ifndef GPUWATCH_DEVICE_STATS_H
#define GPUWATCH_DEVICE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "gw_busy.h"

struct gw_device_stat {
    uint64_t device;
    struct gw_busy busy;          /* while reading; freed by gw_devices_settle */
    uint64_t busy_ns, span_ns;    /* from busy, once settled */
    uint64_t late, late_ns;       /* records that came after their time was settled */
    int busy_failed;              /* memory ran out: busy_ns is a lower bound */
    uint64_t kernels, memcpys, memsets;
    uint64_t kernel_ns, memcpy_ns, memset_ns;  /* summed durations */
};

struct gw_devices {
    struct gw_device_stat *items; /* by ordinal */
    size_t count, cap;
    struct gw_device_stat *last;  /* records come in runs of one device: looked up first */
    uint64_t bad_durations;       /* records whose end wraps past 2^64 (not in busy) */
};

/* Adds the GPU operation [ts_ns, ts_ns + dur_ns) to the busy time of its device and
 * returns that device (made when new), for the caller to count the operation by its kind;
 * NULL when memory ran out. */
struct gw_device_stat *gw_devices_add(struct gw_devices *d, uint64_t device, uint64_t ts_ns,
                                      uint64_t dur_ns);
/* Once the trace is read: each device's busy_ns, span_ns, late, late_ns and busy_failed
 * from its busy intervals, which are freed. */
void gw_devices_settle(struct gw_devices *d);
/* The devices' busy time summed (each device's union; devices are not unioned). */
uint64_t gw_devices_busy(const struct gw_devices *d);
void gw_devices_free(struct gw_devices *d);

#endif
