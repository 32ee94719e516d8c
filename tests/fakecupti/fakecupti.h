/*
 * fakecupti: private header of the simulated CUPTI (a test double for libcupti.so.13).
 *
 * The public declarations come from the toolkit's <cupti.h> and stay exported; everything
 * declared below the visibility pragma is internal to the library.
 */
#ifndef FAKECUPTI_H
#define FAKECUPTI_H

#include <cupti.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* ---- configuration (cupti.c) ---- */
struct fk_config {
    uint32_t version;      /* FAKECUPTI_VERSION: what cuptiGetVersion reports */
    int in_use;            /* FAKECUPTI_IN_USE: another tool holds CUPTI */
    size_t buffer_limit;   /* FAKECUPTI_BUFFER_LIMIT: records per buffer, 0 = no limit */
    int no_records;        /* FAKECUPTI_NO_RECORDS: every call succeeds, no record is made */
};
extern struct fk_config fk_cfg;

void fk_config_load(void);     /* idempotent; reads the environment once */
void fk_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- clocks (cupti.c) ---- */
int64_t fk_mono_ns(void);
int64_t fk_realtime_ns(void);
extern _Atomic(CUpti_TimestampCallbackFunc) fk_timestamp_cb;

/* ---- activity (activity.c) ---- */
/* cuptiFinalize's part: flush, hand every buffer back, disable all kinds, forget the
 * buffer callbacks and the timestamp callback. */
void fk_activity_finalize(void);

#pragma GCC visibility pop

#endif
