/* The GPU-side timeline through CUPTI's activity API: loaded at run time on the first driver
 * call, never linked. When it cannot be used, the trace header says why and host tracing
 * goes on unchanged. */
#ifndef GW_CUPTI_TIMELINE_H
#define GW_CUPTI_TIMELINE_H

#include <stdint.h>

#include "gw_cuda.h" /* before cupti.h: the driver API as the shim declares it */
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>
#include <cupti_version.h>

#include "config.h"
#include "recorder.h"

/* External correlation kind the shim pushes: its ids are host call ids. */
#define GW_CORRELATION_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

extern int gw_cupti_on;
extern CUptiResult (*gw_cupti_push_fn)(CUpti_ExternalCorrelationKind, uint64_t);
extern CUptiResult (*gw_cupti_pop_fn)(CUpti_ExternalCorrelationKind, uint64_t *);

/* Starts activity collection (after the recorder started), whole or in windows as
 * cfg->timeline says; records why when it cannot. */
void gw_cupti_start(const struct gw_config *cfg);
/* Delivers every pending record into the trace and stops collection. */
void gw_cupti_stop(void);
/* A forked child inherits no CUPTI session. */
void gw_cupti_after_fork_child(void);

/* Around a call that issues GPU work: tag it with the host call id it will be recorded
 * under, so its GPU records link back to it. */
static inline int gw_cupti_push_call(void)
{
    if (!__atomic_load_n(&gw_cupti_on, __ATOMIC_RELAXED))
        return 0;
    gw_cupti_push_fn(GW_CORRELATION_KIND, gw_rec_next_call_id());
    return 1;
}

static inline void gw_cupti_pop(int pushed)
{
    if (pushed) {
        uint64_t ignored;
        gw_cupti_pop_fn(GW_CORRELATION_KIND, &ignored);
    }
}

#endif
