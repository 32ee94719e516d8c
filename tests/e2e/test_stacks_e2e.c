/* End to end: allocating calls made under the shim carry the program's call stack, named
 * by the workload's own (exported) functions; other calls carry nothing; depth 0 turns it
 * off; the unwinder never reaches the program's global scope. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "trace_reader.h"

#define MAX_ALLOCS 8

struct stacks_run {
    struct run_result result;
    struct gw_reader *reader;
    unsigned nallocs;
    unsigned api[MAX_ALLOCS];        /* allocating calls in order */
    uint64_t stack[MAX_ALLOCS];      /* their stack ids */
    unsigned stack_defs;             /* STACK definitions in the file */
    unsigned stack_sites;            /* STACKSITE records */
    unsigned free_sites;             /* STACKSITE records naming a free (their native stack) */
    uint64_t free_stacks[8];         /* the distinct stacks those name */
    unsigned nfree_stacks;
    uint64_t used_stacks[32];        /* distinct stacks named by allocations or STACKSITEs */
    unsigned nused_stacks;
    uint64_t free_ids[8];            /* call ids of the frees */
    unsigned nfree_ids;
    /* STACKSITEs that break the rule (call_sites.c): one names a call that is not the
     * latest of its thread, an allocating call (its stack is in its record), or a call
     * that neither frees nor ended a stretch of GW_PY_STRETCH_NS (nothing here waits) */
    unsigned sites_off_rule;
    unsigned stretch_sites;          /* STACKSITEs of calls that ended a stretch */
    struct { uint32_t tid; uint64_t id, end, gap; unsigned api; int family; } last[8];
    unsigned nlast;
    unsigned frees, free_extra_words; /* frees, and those with more words than FREE's 2 */
};

static struct stacks_run run;

/* Adds id to set (of cap) unless it is there; counts past cap without keeping. */
static void add_distinct(uint64_t *set, unsigned *n, unsigned cap, uint64_t id)
{
    for (unsigned k = 0; k < *n && k < cap; k++)
        if (set[k] == id)
            return;
    if (*n < cap)
        set[*n] = id;
    (*n)++;
}

/* every_ms: GPUWATCH_SITE_EVERY_MS (the tests that count frees' sites want every one: 0) */
static void run_stacks_every(const char *depth, const char *unwinder, const char *every_ms)
{
    memset(&run, 0, sizeof run);
    char env_depth[64], env_unwinder[64], env_every[64];
    snprintf(env_every, sizeof env_every, "GPUWATCH_SITE_EVERY_MS=%s", every_ms);
    snprintf(env_depth, sizeof env_depth, "GPUWATCH_STACK_DEPTH=%s", depth ? depth : "");
    snprintf(env_unwinder, sizeof env_unwinder, "GPUWATCH_STACK_UNWINDER=%s",
             unwinder ? unwinder : "");
    const char *args[] = {"--mode", "stacks", NULL};
    const char *env[4] = {env_every, NULL};
    unsigned nenv = 1;
    if (depth)
        env[nenv++] = env_depth;
    if (unwinder)
        env[nenv++] = env_unwinder;
    struct run_options options = {.args = args, .env = env, .preload = 1};
    run_workload(&options, &run.result);
    assert_int_equal(run.result.exited, 1);
    if (run.result.status != 0)
        fail_msg("workload failed: %s", run.result.err);
    DIR *dir = opendir(run.result.trace_dir);
    assert_non_null(dir);
    char path[600] = "";
    for (struct dirent *e; (e = readdir(dir));)
        if (strstr(e->d_name, ".gwt"))
            snprintf(path, sizeof path, "%s/%s", run.result.trace_dir, e->d_name);
    closedir(dir);
    char err[512];
    assert_int_equal(gw_reader_open(path, &run.reader, err, sizeof err), 0);
    gw_reader_load_defs(run.reader);
    struct gw_event ev;
    while (gw_reader_next(run.reader, &ev) > 0) {
        if (ev.kind == GW_EV_STACK)
            run.stack_defs++;
        if (ev.kind == GW_EV_STACKSITE) {
            run.stack_sites++;
            unsigned t = 0;
            while (t < run.nlast && run.last[t].tid != ev.tid)
                t++;
            int allocating = t < run.nlast && (run.last[t].family == GW_FAM_ALLOC ||
                                              run.last[t].api == GW_API_cuMemAllocHost_v2 ||
                                              run.last[t].api == GW_API_cuMemHostAlloc ||
                                              run.last[t].api == GW_API_cuMemCreate);
            int picked = t < run.nlast && (run.last[t].family == GW_FAM_FREE ||
                                          run.last[t].family == GW_FAM_HOSTMEM ||
                                          run.last[t].gap >= GW_PY_STRETCH_NS);
            if (t == run.nlast || run.last[t].id != ev.u.site.first_call_id || allocating ||
                !picked)
                run.sites_off_rule++;
            run.stretch_sites += t < run.nlast && run.last[t].gap >= GW_PY_STRETCH_NS;
            /* (it follows its call: the frees' ids are known by then) */
            assert_int_equal(ev.u.site.first_call_id, ev.u.site.last_call_id);
            add_distinct(run.used_stacks, &run.nused_stacks, 32, ev.u.site.stack_id);
            for (unsigned k = 0; k < run.nfree_ids; k++)
                if (run.free_ids[k] == ev.u.site.first_call_id) {
                    run.free_sites++;
                    add_distinct(run.free_stacks, &run.nfree_stacks, 8, ev.u.site.stack_id);
                }
        }
        if (ev.kind != GW_EV_CALL)
            continue;
        unsigned t = 0;
        while (t < run.nlast && run.last[t].tid != ev.tid)
            t++;
        if (t < 8) {
            uint64_t gap = t < run.nlast && ev.ts_ns > run.last[t].end ? ev.ts_ns - run.last[t].end : 0;
            run.last[t].tid = ev.tid;
            run.last[t].id = ev.call_id;
            run.last[t].end = ev.ts_ns + ev.dur_ns;
            run.last[t].gap = gap;
            run.last[t].api = ev.api_id;
            run.last[t].family = ev.family;
            if (t == run.nlast)
                run.nlast++;
        }
        if (ev.family == GW_FAM_FREE || ev.api_id == GW_API_cuMemFreeHost) {
            run.frees++;
            if (run.nfree_ids < 8)
                run.free_ids[run.nfree_ids++] = ev.call_id;
            run.free_extra_words += ev.nwords > (ev.family == GW_FAM_FREE ? 2u : 3u);
        }
        uint64_t stack = ev.family == GW_FAM_ALLOC     ? ev.u.alloc.stack_id
                         : ev.family == GW_FAM_HOSTMEM ? ev.u.hostmem.stack_id
                                                       : 0;
        if ((ev.family == GW_FAM_ALLOC || ev.api_id == GW_API_cuMemAllocHost_v2) &&
            run.nallocs < MAX_ALLOCS) {
            run.api[run.nallocs] = ev.api_id;
            run.stack[run.nallocs++] = stack;
            if (stack)
                add_distinct(run.used_stacks, &run.nused_stacks, 32, stack);
        }
    }
    const struct gw_damage *damage;
    assert_int_equal(gw_reader_damage(run.reader, &damage), 0);
}

static void run_stacks_with(const char *depth, const char *unwinder)
{
    run_stacks_every(depth, unwinder, "0");
}

static void run_stacks(const char *depth) { run_stacks_with(depth, NULL); }

static void finish(void)
{
    gw_reader_close(run.reader);
    remove_dir(run.result.trace_dir);
}

static const char *frame_symbol(const struct gw_stack *st, unsigned i)
{
    if (i >= st->nframes)
        return "(none)";
    const char *s = gw_reader_string(run.reader, st->frames[i].symbol_id, NULL);
    return s ? s : "(no symbol)";
}

/* The order workload_stacks_caller makes them: (device, host) twice, then the other site. */
static void assert_alloc_order(void)
{
    assert_int_equal(run.nallocs, 5);
    assert_int_equal(run.api[0], GW_API_cuMemAlloc_v2);
    assert_int_equal(run.api[1], GW_API_cuMemAllocHost_v2);
    assert_int_equal(run.api[2], GW_API_cuMemAlloc_v2);
    assert_int_equal(run.api[3], GW_API_cuMemAllocHost_v2);
    assert_int_equal(run.api[4], GW_API_cuMemAlloc_v2);
    assert_int_equal(run.frees, 5);
    assert_int_equal(run.free_extra_words, 0);
}

/* Both unwinders (libunwind by default; glibc's backtrace() where libunwind is missing)
 * must give the same answer. */
static void assert_call_sites_named(void)
{
    assert_alloc_order();
    /* one site, one stack: interned once; three allocation sites */
    assert_true(run.stack[0] != 0);
    assert_int_equal(run.stack[0], run.stack[2]);
    assert_int_equal(run.stack[1], run.stack[3]);
    assert_true(run.stack[0] != run.stack[1]);
    assert_true(run.stack[4] != run.stack[0] && run.stack[4] != run.stack[1]);
    /* every free named; device and host frees are different call sites (how many the
     * compiler makes of each loop is its business), none of them an allocation's */
    assert_int_equal(run.free_sites, 5);
    assert_int_equal(run.sites_off_rule, 0);
    assert_true(run.stretch_sites >= 1);  /* the memset after the workload's 3 ms stretch */
    assert_true(run.nfree_stacks >= 2 && run.nfree_stacks <= 5);
    for (unsigned k = 0; k < run.nfree_stacks; k++)
        for (unsigned a = 0; a < run.nallocs; a++)
            assert_true(run.free_stacks[k] != run.stack[a]);
    /* every definition is named by a call: none written for nothing (other calls than
     * these get stacks too: the first after a stretch without calls, call_sites.c) */
    assert_int_equal(run.stack_defs, run.nused_stacks);
    assert_true(run.nused_stacks >= 5);

    const struct gw_stack *dev = gw_reader_stack(run.reader, run.stack[0]);
    const struct gw_stack *host = gw_reader_stack(run.reader, run.stack[1]);
    const struct gw_stack *other = gw_reader_stack(run.reader, run.stack[4]);
    assert_non_null(dev);
    assert_non_null(host);
    assert_non_null(other);
    /* innermost first, the shim's own frames left out */
    assert_string_equal(frame_symbol(dev, 0), "workload_alloc_site");
    assert_string_equal(frame_symbol(dev, 1), "workload_stacks_caller");
    assert_string_equal(frame_symbol(host, 0), "workload_alloc_site");
    assert_true(host->frames[0].symbol_offset > dev->frames[0].symbol_offset);
    assert_string_equal(frame_symbol(other, 0), "workload_other_site");
    assert_string_equal(frame_symbol(other, 1), "workload_stacks_caller");
    assert_true(dev->nframes >= 3 && dev->nframes <= 12);
    const char *module = gw_reader_string(run.reader, dev->frames[0].module_id, NULL);
    assert_non_null(module);
    assert_non_null(strstr(module, "/workload"));
    /* the module offset is the file's address: the same function in both stacks */
    assert_int_equal(dev->frames[0].module_offset - dev->frames[0].symbol_offset,
                     host->frames[0].module_offset - host->frames[0].symbol_offset);
    for (unsigned i = 0; i < dev->nframes; i++) {
        const char *m = gw_reader_string(run.reader, dev->frames[i].module_id, NULL);
        assert_null(m ? strstr(m, "libgpuwatch") : NULL);
    }
}

static void test_allocations_name_their_call_site(void **state)
{
    (void)state;
    run_stacks(NULL);  /* the default depth and unwinder */
    assert_call_sites_named();
    finish();
}

static void test_libc_unwinder_names_the_same_sites(void **state)
{
    (void)state;
    run_stacks_with(NULL, "libc");
    assert_call_sites_named();
    finish();
}

static void test_depth_limits_frames(void **state)
{
    (void)state;
    run_stacks("1");
    assert_alloc_order();
    const struct gw_stack *dev = gw_reader_stack(run.reader, run.stack[0]);
    assert_non_null(dev);
    assert_int_equal(dev->nframes, 1);
    assert_string_equal(frame_symbol(dev, 0), "workload_alloc_site");
    finish();
}

static void test_depth_zero_records_none(void **state)
{
    (void)state;
    run_stacks("0");
    assert_alloc_order();
    for (unsigned i = 0; i < run.nallocs; i++)
        assert_int_equal(run.stack[i], 0);
    assert_int_equal(run.stack_defs, 0);
    assert_int_equal(run.free_sites, 0);
    finish();
}

/* Native stacks of syncs, frees and stretch ends are a sample in time: with a minute
 * between them, the run (under a second) has exactly one, whatever it makes; allocations
 * keep theirs (in their own records). */
static void test_native_sites_are_sampled_in_time(void **state)
{
    (void)state;
    run_stacks_every(NULL, NULL, "60000");
    assert_int_equal(run.stack_sites, 1);
    assert_int_equal(run.nallocs, 5);
    for (unsigned a = 0; a < run.nallocs; a++)
        assert_true(run.stack[a] != 0);
    finish();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocations_name_their_call_site),
        cmocka_unit_test(test_libc_unwinder_names_the_same_sites),
        cmocka_unit_test(test_depth_limits_frames),
        cmocka_unit_test(test_depth_zero_records_none),
        cmocka_unit_test(test_native_sites_are_sampled_in_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
