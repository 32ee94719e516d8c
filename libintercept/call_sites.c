/*
 * The calls findings are about get call stacks. Python stacks: every copy, allocation,
 * free, VMM and pinned-memory call, every call that waited for the GPU, every call after
 * GW_PY_STRETCH_NS without calls on its thread (where the program came back from host
 * work: loading the next batch) and one launch in GW_PY_LAUNCH_EVERY (trace_format.h:
 * readers rely on this list), named by PYSITE records (py_frames.c). Native stacks: the
 * fewer of wants_native, named by a STACKSITE record after the call; allocations carry
 * theirs in their own record (hooks_memory.c).
 */
#include "call_sites.h"

#include <string.h>

#include "gpuwatch/trace_format.h"
#include "gw_cuda.h"
#include "py_frames.h"
#include "recorder.h"
#include "stack_capture.h"

static const uint8_t api_family[GW_API_ID_LIMIT] = {
#define GW_API(id, name, family, base, version, per_thread, async) [id] = family,
#include "gpuwatch/api_list.h"
#undef GW_API
};

static int native_on, python_on;

struct site_thread {
    unsigned generation;   /* the recorder's trace these figures belong to */
    unsigned launches;     /* launches since the last one with stacks */
    uint64_t last_unwind;  /* end of the latest call given a native stack (0: none yet) */
};
static uint64_t native_every_ns;
/* The apis whose every call the observer is told of (others only when they waited or
 * ended a stretch): python_family's and native_family's. */
static uint8_t observed[GW_API_ID_LIMIT];
static GW_TLS struct site_thread site_thread;

/* The families whose every call gets a Python stack (launches: one in
 * GW_PY_LAUNCH_EVERY), and a native one: the observer is told of these (and of any call
 * that waited or ended a stretch). */
static int python_family(int family)
{
    return family == GW_FAM_COPY || family == GW_FAM_ALLOC || family == GW_FAM_FREE ||
           family == GW_FAM_HOSTMEM || family == GW_FAM_VMM || family == GW_FAM_LAUNCH;
}

static int native_family(int family)
{
    return family == GW_FAM_FREE || family == GW_FAM_HOSTMEM || family == GW_FAM_VMM;
}

/* Python stacks: the calls of trace_format.h's list. */
static int wants_python(struct site_thread *t, int family, int waited, uint64_t gap)
{
    if (gap >= GW_PY_STRETCH_NS || waited)
        return 1;
    if (family != GW_FAM_LAUNCH)
        return python_family(family);
    if (++t->launches < GW_PY_LAUNCH_EVERY)
        return 0;
    t->launches = 0;
    return 1;
}

/* Native stacks: of those, the calls that waited for the GPU (synchronizes, synchronous
 * and pageable copies), frees and the first call after a stretch; asynchronous copies and
 * sampled launches are many and short, and their Python line is what names them. And at
 * most one every native_every_ns on a thread: an unwind costs a few microseconds, which a
 * loop synchronizing every 50 us would pay every step (and the program's own timing would
 * show it: the calibration's sync_and_launch gained 50 % more from its fix with every
 * synchronize unwound). Sampled in time, the sites still rank by the time they account for. */
static int wants_native(struct site_thread *t, int family, int waited, uint64_t gap,
                        uint64_t end_ns)
{
    if (!(waited || gap >= GW_PY_STRETCH_NS || native_family(family)))
        return 0;
    if (t->last_unwind && end_ns - t->last_unwind < native_every_ns)
        return 0;
    t->last_unwind = end_ns;
    return 1;
}

/* Allocating calls carry their native stack in their own record (trace_format.h). */
static int carries_its_stack(unsigned api_id, int family)
{
    return family == GW_FAM_ALLOC || api_id == GW_API_cuMemAllocHost_v2 ||
           api_id == GW_API_cuMemHostAlloc || api_id == GW_API_cuMemCreate;
}

/* The recorder's call observer: after each recorded call, on its thread. */
static void on_call(unsigned api_id, uint64_t start_ns, uint64_t end_ns, int result,
                    int waited, uint64_t gap, uint64_t call_number)
{
    (void)result;
    (void)start_ns;
    struct site_thread *t = &site_thread;
    unsigned generation = gw_recorder_generation();
    if (t->generation != generation) {
        memset(t, 0, sizeof *t);
        t->generation = generation;
    }
    int family = api_id < GW_API_ID_LIMIT ? api_family[api_id] : GW_FAM_PLAIN;
    if (native_on && !carries_its_stack(api_id, family) &&
        wants_native(t, family, waited, gap, end_ns)) {
        uint64_t stack = gw_stack_here();
        if (stack) {
            uint64_t words[3] = {stack, call_number, 1};
            gw_rec_untimed(GW_REC_STACKSITE, words, 3);
        }
    }
    if (python_on && wants_python(t, family, waited, gap))
        gw_py_site(call_number);
}

void gw_call_sites_start(int native, unsigned native_every_ms)
{
    native_on = native;
    native_every_ns = (uint64_t)native_every_ms * 1000000u;
    python_on = gw_py_on();
    for (unsigned id = 0; id < GW_API_ID_LIMIT; id++) {
        int family = api_family[id];
        observed[id] = (python_on && python_family(family)) ||
                       (native_on && native_family(family));
    }
    if (native_on || python_on)
        gw_rec_set_call_observer(on_call, observed);
}
