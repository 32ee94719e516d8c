/* Settings read from the environment once, at the first driver call. */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include <stddef.h>

struct gw_config {
    int disabled;               /* GPUWATCH_DISABLE=1 */
    int verbose;                /* GPUWATCH_LOG=1 */
    char output_dir[1024];      /* GPUWATCH_OUTPUT, default ./gpuwatch-traces */
    unsigned flush_ms;          /* GPUWATCH_FLUSH_MS, 1..1000, default 50 */
    size_t thread_buffer_bytes; /* GPUWATCH_BUFFER_KB, 64..1048576 KiB, power of two */
    unsigned long host_copy_bps; /* GPUWATCH_HOST_COPY_BPS: the host's memcpy rate, bytes/s,
                                   measured outside the program (gpuwatch run, before exec);
                                   0: unknown. Passed into the trace, never measured here. */
    unsigned long wake_ns;      /* GPUWATCH_WAKE_NS: how late a sleeping thread runs after its
                                   wake-up is due, measured outside the program as above */
    int use_tsc;                /* GPUWATCH_CLOCK=tsc|monotonic, default tsc where invariant */
    unsigned stack_depth;       /* GPUWATCH_STACK_DEPTH, 0..64 frames, default 12; 0 = off */
    int stack_libc;             /* GPUWATCH_STACK_UNWINDER=libc: glibc's backtrace() */
    unsigned site_every_ms;     /* GPUWATCH_SITE_EVERY_MS, 0..60000, default 10: at most one
                                   native stack of a sync, free... per thread per this long
                                   (0: every one) */
    unsigned py_depth;          /* GPUWATCH_PY_DEPTH, 0..64 Python frames, default 16; 0 = off */
    int py_read_frames;         /* GPUWATCH_PY_FRAMES: read (1, default) or hooks (0) */
    int timeline;               /* GPUWATCH_TIMELINE=full|sampled|off (enum gw_timeline_mode) */
    unsigned window_ms;         /* GPUWATCH_TIMELINE_WINDOW_MS: each sampled window's length */
    unsigned every_ms;          /* GPUWATCH_TIMELINE_EVERY_MS: one window opens this often */
    unsigned full_rate;         /* GPUWATCH_TIMELINE_FULL_RATE: trace records a second (host
                                   calls and GPU records) up to which a sampled timeline stays
                                   whole (0: always windows) */
};

/* How much of the GPU timeline CUPTI collects. Sampled (the default): whole while the
 * program records few enough calls and GPU operations for CUPTI's cost to stay small;
 * past that, windows of window_ms every every_ms, CUPTI's cost paid in the windows alone. */
enum gw_timeline_mode { GW_TIMELINE_SAMPLED = 0, GW_TIMELINE_FULL, GW_TIMELINE_OFF };

/* Fills *cfg from the environment; bad values warn once and fall back to defaults. */
void gw_config_load(struct gw_config *cfg);
/* GPUWATCH_DISABLE alone, cheap enough for the dlsym hook. */
int gw_config_disabled(void);

#endif
