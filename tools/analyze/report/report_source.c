/* What a PyTorch profiler (Kineto) trace lacks, said once in the report and beside each
 * finding that rests on it: the trace covers the profiler's window of steps, not the run;
 * it has no CPU samples; its allocations carry no addresses and PyTorch's caching allocator
 * hides most of them. Such a finding's confidence is "lowered"; the others' "measured". */
#include <string.h>

#include "analyze.h"

int an_run_from_profiler(const struct an_run *run)
{
    for (size_t i = 0; i < run->ntraces; i++)
        if (run->traces[i].readable &&
            memcmp(run->traces[i].hdr.magic, GW_READER_KINETO_MAGIC, 8) == 0)
            return 1;
    return 0;
}

/* Why a finding of this rule is less sure on a profiler trace; NULL when it rests only on
 * what the trace holds (kernels, copies, launches, syncs, collectives). */
const char *an_profiler_caveat(const struct an_run *run, const char *rule)
{
    static const struct { const char *rule, *why; } caveats[] = {
        {"contention", "a PyTorch profiler trace has no CPU samples: the waits for a CPU are "
                       "not measured"},
        {"input_pipeline", "a PyTorch profiler trace covers its window of steps, not the run, "
                           "and has no CPU samples: the host's time between calls is seen, "
                           "not what it spent it on"},
        {"pauses", "a PyTorch profiler trace covers its window of steps, not the run: "
                   "pauses outside it are not seen"},
        {"oom_retry", "a PyTorch profiler trace's allocations carry no address and PyTorch's "
                      "caching allocator serves most tensors without one"},
        {"fragmentation", "a PyTorch profiler trace's allocations carry no address and "
                          "PyTorch's caching allocator serves most tensors without one"},
        {"memory_headroom", "a PyTorch profiler trace's allocations carry no address and "
                            "PyTorch's caching allocator serves most tensors without one: "
                            "the peak is a lower bound"},
        {"leak", "a PyTorch profiler trace's allocations carry no address and PyTorch's "
                 "caching allocator serves most tensors without one"},
        {"shared_gpu", "a PyTorch profiler trace does not say what memory other processes "
                       "held"},
    };
    if (!an_run_from_profiler(run))
        return NULL;
    /* the caching allocator's own blocks ([memory] events) in every profiler trace: the
     * memory held is measured, as PyTorch counts it */
    if (!strcmp(rule, "memory_headroom") || !strcmp(rule, "leak")) {
        int blocks = 1;
        for (size_t i = 0; i < run->ntraces; i++) {
            const struct an_trace *t = &run->traces[i];
            if (t->readable && memcmp(t->hdr.magic, GW_READER_KINETO_MAGIC, 8) == 0 &&
                (!t->model || !t->model->mem.blocks_taken))
                blocks = 0;
        }
        if (blocks)
            return NULL;
    }
    for (size_t i = 0; i < sizeof caveats / sizeof caveats[0]; i++)
        if (strcmp(caveats[i].rule, rule) == 0)
            return caveats[i].why;
    return NULL;
}

const char *an_profiler_source(void)
{
    return "a PyTorch profiler (Kineto) trace: it covers the profiler's window of steps, not "
           "the whole run; it has no CPU samples; allocations, where present, carry no "
           "address (PyTorch's caching allocator hides most). Findings that rest on these "
           "say so, their confidence lowered.";
}
