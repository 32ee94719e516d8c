/* leak: memory held grows by growth_min_bytes (16 MiB) in all, in growth_steps_share (75 %)
 * of the steady steps or in jumps spread evenly over them, and around those. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"
#include "trace_reader.h"

/* bytes taken in every `every`th step before step `until` */
static struct an_model *leaking_until(uint64_t bytes, unsigned steps, unsigned every,
                                      unsigned until)
{
    struct synth s = {0};
    struct loop L = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1};
    for (unsigned i = 0; i < steps; i++) {
        L.leak_bytes = i % every == 0 && i < until ? bytes : 0;
        synth_loop(&s, &L);
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

static struct an_model *leaking(uint64_t bytes, unsigned steps, unsigned every)
{
    return leaking_until(bytes, steps, every, steps);
}

static void grows_every_step(void **state)
{
    (void)state;
    struct an_model *m = leaking(4u << 20, 40, 1);
    assert_int_equal(an_growth_kind(m), AN_GROWTH_EVERY_STEP);
    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_leak, &out, 8);
    assert_non_null(f);
    assert_true(f->risk);
    assert_non_null(strstr(f->evidence, "Still held at exit"));
    assert_non_null(strstr(f->evidence, "more steps"));
    assert_non_null(strstr(f->change, "detach"));
    an_findings_free(&out);
    an_model_free(m);
}

/* 256 KiB a step: 10 MiB in all, under growth_min_bytes. */
static void grows_too_little(void **state)
{
    (void)state;
    struct an_model *m = leaking(256u << 10, 40, 1);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_leak, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
}

/* 32 MiB every 4th step of 40, as PyTorch's caching allocator shows a leak (a new segment
 * every few steps): growth in a quarter of the steps, spread evenly, is a leak too. */
static void grows_in_even_jumps(void **state)
{
    (void)state;
    struct an_model *m = leaking(32u << 20, 40, 4);
    assert_true(m->steps.growth_steps * 4 < m->steps.sampled_steps * 3);  /* not "every" */
    assert_int_equal(an_growth_kind(m), AN_GROWTH_EVEN_JUMPS);
    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_leak, &out, 8);
    assert_non_null(f);
    /* 9 jumps of 32 MiB after the first boundary, over 39 steady steps */
    assert_non_null(strstr(f->title, "(7.38 MiB a step on average)"));
    assert_non_null(strstr(f->evidence, "in jumps spread evenly"));
    an_findings_free(&out);
    an_model_free(m);
}

/* The same jumps only in the first 12 steps (the cache filling, a few new shapes), then
 * flat: the second half carries no growth, so no leak (fragmentation looks at it). */
static void grows_early_then_flat(void **state)
{
    (void)state;
    struct an_model *m = leaking_until(32u << 20, 40, 4, 12);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_leak, &out, 8));
    assert_int_equal(an_growth_kind(m), AN_GROWTH_JUMPS);
    an_findings_free(&out);
    an_model_free(m);
}

/* A small STACK table, as a trace's definitions would give it. */
static const char *const fake_strings[] = {
    [1] = "/opt/app/train", [2] = "leak_step", [3] = "main",
    [4] = "/usr/lib/libgpuwatch.so", [5] = "/usr/local/cuda/lib64/libcudart.so.12",
    [6] = "cudaMalloc", [7] = "/lib/x86_64-linux-gnu/libc.so.6", [8] = "__libc_start_main",
    [9] = "/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so",
    [10] = "_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator6mallocEimP11CUstream_st",
    [11] = "/venv/lib/python3.12/site-packages/torch/lib/libtorch_python.so",
    [12] = "/usr/bin/python3.12", [13] = "_PyEval_EvalFrameDefault",
};
static const struct gw_stack_frame stack7_frames[] = {  /* the runtime, then the program */
    {5, 0x4100, 6, 0x20}, {1, 0x1480, 2, 0x1c}, {1, 0x1610, 3, 0x50}, {7, 0x27249, 8, 0x84},
};
static const struct gw_stack_frame stack9_frames[] = {  /* no symbols in the program */
    {4, 0x900, 0, 0}, {1, 0x2222, 0, 0}, {7, 0x27249, 8, 0x84},
};
static const struct gw_stack_frame stack15_frames[] = {  /* PyTorch's allocator, Python */
    {5, 0x4100, 6, 0x20}, {9, 0x51000, 10, 0x3c4}, {11, 0x880000, 0, 0}, {12, 0x1f0000, 13, 0x99},
};
static const struct gw_stack_frame stack17_frames[] = {  /* the same, from elsewhere */
    {5, 0x4100, 6, 0x20}, {9, 0x51200, 10, 0x5c0}, {11, 0x8a0000, 0, 0}, {12, 0x1f0040, 13, 0xd9},
};
static const struct gw_stack fake_stacks[] = {
    {7, 4, stack7_frames}, {9, 3, stack9_frames}, {15, 4, stack15_frames},
    {17, 4, stack17_frames},
};

static const char *fake_resolve(void *user, int what, uint64_t id)
{
    (void)user;
    return what == 0 && id < sizeof fake_strings / sizeof fake_strings[0] ? fake_strings[id]
                                                                           : NULL;
}

static const struct gw_stack *fake_stack(void *user, uint64_t id)
{
    (void)user;
    for (size_t i = 0; i < sizeof fake_stacks / sizeof fake_stacks[0]; i++)
        if (fake_stacks[i].id == id)
            return &fake_stacks[i];
    return NULL;
}

/* The model of a synthetic run whose allocations carry the stack ids in their key, with
 * the small STACK table above to name them. */
static struct an_model *stacked_model(struct synth *s, uint64_t capacity)
{
    struct gw_file_header h;
    memset(&h, 0, sizeof h);
    h.device_total_mem = capacity;
    h.device_free_at_start = capacity;
    h.cupti_status = GW_CUPTI_DISABLED;
    struct an_model *m = an_model_new(NULL, &h);
    assert_non_null(m);
    m->resolve = fake_resolve;
    m->stack = fake_stack;
    an_model_feed_all(m, s->ev, s->n);
    synth_free(s);
    return m;
}

/* Per step one leaked block from one of four sites: stack 7 (4 MiB, 20 steps), stack 9
 * (4 MiB, 10 steps), stack 11 (6 MiB, 5 steps) and no stack (2 MiB, 5 steps); the
 * weights (64 MiB, once) from stack 13. 11 and 13 are not in the table. The evidence
 * names the top three by bytes, largest first, with exact sums. */
static void names_where_it_was_allocated(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop L = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1};
    for (unsigned i = 0; i < 40; i++) {
        uint64_t stack = i % 4 == 1 || i % 4 == 2 ? 7 : i % 4 == 3 ? 9 : i % 8 == 4 ? 11 : 0;
        L.leak_bytes = stack == 11 ? 6u << 20 : stack == 0 ? 2u << 20 : 4u << 20;
        size_t before = s.n;
        synth_loop(&s, &L);
        for (size_t k = before; k < s.n; k++)
            if (s.ev[k].kind == AN_ALLOC)
                s.ev[k].key = s.ev[k].bytes == L.leak_bytes ? stack : 13;
    }
    struct an_model *m = stacked_model(&s, 1ull << 30);

    assert_int_equal(m->mem.nsites, 3);
    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_leak, &out, 8);
    assert_non_null(f);
    assert_int_equal(f->nsites, 3);
    assert_int_equal(f->sites[0].stack, 7);
    assert_int_equal(f->sites[0].bytes, 80ull << 20);
    assert_int_equal(f->sites[0].count, 20);
    assert_string_equal(f->sites[0].where, "leak_step \xE2\x86\x90 main (train)");
    assert_int_equal(f->sites[1].stack, 13);
    assert_int_equal(f->sites[1].bytes, 64ull << 20);
    assert_int_equal(f->sites[1].count, 1);
    assert_string_equal(f->sites[1].where, "");  /* no STACK definition for it */
    assert_int_equal(f->sites[2].stack, 9);
    assert_int_equal(f->sites[2].bytes, 40ull << 20);
    assert_int_equal(f->sites[2].count, 10);
    assert_string_equal(f->sites[2].where, "train+0x2222");
    assert_non_null(strstr(f->evidence,
                           "Allocated at leak_step \xE2\x86\x90 main (train): 80.0 MiB in 20 "
                           "blocks; stack 13: 64.0 MiB in 1 block; train+0x2222: 40.0 MiB "
                           "in 10 blocks."));
    assert_null(strstr(f->evidence, "stack 11"));       /* 30 MiB: fourth */
    assert_null(strstr(f->evidence, "no call stack"));  /* 10 MiB: fifth */
    assert_null(strstr(f->change, "_record_memory_history"));  /* not a PyTorch program */
    an_findings_free(&out);
    an_model_free(m);
}

/* In a PyTorch program every allocation comes from its caching allocator: the site is named
 * as such (not by mangled C++ or interpreter frames), its stacks (15 for the leaks, 17 for
 * the weights) are one site under the larger's id, and the change says how to get the
 * Python lines from PyTorch's own memory snapshot. */
static void pytorch_allocator_site(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop L = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1, .leak_bytes = 20u << 20};
    for (unsigned i = 0; i < 40; i++) {
        size_t before = s.n;
        synth_loop(&s, &L);
        for (size_t k = before; k < s.n; k++)
            if (s.ev[k].kind == AN_ALLOC)
                s.ev[k].key = s.ev[k].bytes == L.leak_bytes ? 15 : 17;
    }
    struct an_model *m = stacked_model(&s, 4ull << 30);

    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_leak, &out, 8);
    assert_non_null(f);
    assert_int_equal(f->nsites, 1);
    assert_int_equal(f->sites[0].stack, 15);
    assert_int_equal(f->sites[0].bytes, (40ull * 20 + 64) << 20);  /* the weights too */
    assert_int_equal(f->sites[0].count, 41);
    assert_string_equal(f->sites[0].where, "PyTorch's caching allocator (libc10_cuda.so)");
    assert_non_null(strstr(f->evidence, "Allocated at PyTorch's caching allocator "
                                        "(libc10_cuda.so): 864.0 MiB in 41 blocks."));
    assert_non_null(strstr(f->change, "torch.cuda.memory._record_memory_history()"));
    assert_non_null(strstr(f->change, "torch.cuda.memory._dump_snapshot(\"mem.pickle\")"));
    an_findings_free(&out);
    an_model_free(m);
}

/* Without call stacks (older traces, GPUWATCH_STACK_DEPTH=0) nothing is said about sites. */
static void no_stacks_no_sites(void **state)
{
    (void)state;
    struct an_model *m = leaking(4u << 20, 40, 1);
    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_leak, &out, 8);
    assert_non_null(f);
    assert_int_equal(f->nsites, 0);
    assert_null(strstr(f->evidence, "Allocated at"));
    an_findings_free(&out);
    an_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grows_every_step),
        cmocka_unit_test(grows_too_little),
        cmocka_unit_test(grows_in_even_jumps),
        cmocka_unit_test(grows_early_then_flat),
        cmocka_unit_test(names_where_it_was_allocated),
        cmocka_unit_test(pytorch_allocator_site),
        cmocka_unit_test(no_stacks_no_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
