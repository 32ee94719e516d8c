/* Memory held over time by kind (mem_timeline.c): exact per-bin maxima and end values for
 * known allocation/free sequences fed through the model, the merge of bin pairs when the
 * run outgrows the first span, and constant memory however long the run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "mem_timeline.h"
#include "synth.h"

#define MiB (1ull << 20)
#define T0 (1000 * MS)  /* the run's first event */

/* A memory call at T0 + at, 10 us long. */
static struct an_ev *mem_call(struct synth *s, uint64_t at, uint8_t kind, unsigned api,
                              uint8_t mem_kind, uint64_t ptr, uint64_t bytes)
{
    s->now = T0 + at;
    struct an_ev *e = synth_call(s, kind, api, 10 * US, 0);
    e->host_kind = mem_kind;
    e->ptr = ptr;
    e->bytes = bytes;
    return e;
}

static struct an_model *run(struct synth *s)
{
    return synth_model(s, NULL, 16ull << 30, 0);
}

/* One bin's maxima and end values, in the order plain, pool, vmm, managed, pinned, total. */
static void expect_bin(const struct an_mem_timeline *tl, size_t i, const uint64_t max[6],
                       const uint64_t end[6])
{
    assert_true(i < tl->nbins);
    for (int v = 0; v < AN_HELD_VALUES; v++) {
        if (tl->bin[i].max[v] != max[v] * MiB || tl->bin[i].end[v] != end[v] * MiB)
            print_error("bin %zu, %s: max %llu end %llu MiB, expected %llu and %llu\n", i,
                        an_held_name(v), (unsigned long long)(tl->bin[i].max[v] / MiB),
                        (unsigned long long)(tl->bin[i].end[v] / MiB),
                        (unsigned long long)max[v], (unsigned long long)end[v]);
        assert_int_equal(tl->bin[i].max[v], max[v] * MiB);
        assert_int_equal(tl->bin[i].end[v], end[v] * MiB);
    }
}

/* Every kind, within the first span (1 ms bins): growth, a free within a bin (its maximum
 * stays), a bin with no event (carries the previous end), the run's end closing the last. */
static void kinds_within_first_span(void **state)
{
    (void)state;
    struct synth s = {0};
    s.now = T0;
    synth_call(&s, AN_CALL, GW_API_cuCtxSynchronize, 10 * US, 0);  /* the run starts */
    mem_call(&s, 500 * US, AN_ALLOC, GW_API_cuMemAlloc_v2, AN_MEM_PLAIN, 0xA000, 100 * MiB);
    mem_call(&s, 1200 * US, AN_ALLOC, GW_API_cuMemAllocAsync, AN_MEM_POOL, 0xB000, 50 * MiB);
    mem_call(&s, 1500 * US, AN_FREE, GW_API_cuMemFree_v2, AN_MEM_PLAIN, 0xA000, 0);
    mem_call(&s, 2300 * US, AN_ALLOC, GW_API_cuMemCreate, AN_MEM_VMM, 0xC000, 30 * MiB);
    mem_call(&s, 2400 * US, AN_HOST_ALLOC, GW_API_cuMemHostAlloc, 0, 0xD000, 8 * MiB);
    mem_call(&s, 4100 * US, AN_ALLOC, GW_API_cuMemAllocManaged, AN_MEM_MANAGED, 0xE000,
             20 * MiB);
    mem_call(&s, 4200 * US, AN_FREE, GW_API_cuMemFreeAsync, AN_MEM_POOL, 0xB000, 0);
    mem_call(&s, 5490 * US, AN_CALL, GW_API_cuCtxSynchronize, 0, 0, 0);  /* ends at 5.5 ms */
    struct an_model *m = run(&s);
    const struct an_mem_timeline *tl = &m->held;

    assert_int_equal(tl->origin, T0);
    assert_int_equal(tl->width, 1 * MS);
    assert_int_equal(tl->nbins, 6);
    assert_int_equal(tl->ever, (1u << AN_HELD_VALUES) - 1);
    /*                              plain pool vmm managed pinned total */
    expect_bin(tl, 0, (uint64_t[]){100, 0, 0, 0, 0, 100}, (uint64_t[]){100, 0, 0, 0, 0, 100});
    expect_bin(tl, 1, (uint64_t[]){100, 50, 0, 0, 0, 150}, (uint64_t[]){0, 50, 0, 0, 0, 50});
    expect_bin(tl, 2, (uint64_t[]){0, 50, 30, 0, 8, 80}, (uint64_t[]){0, 50, 30, 0, 8, 80});
    expect_bin(tl, 3, (uint64_t[]){0, 50, 30, 0, 8, 80}, (uint64_t[]){0, 50, 30, 0, 8, 80});
    expect_bin(tl, 4, (uint64_t[]){0, 50, 30, 20, 8, 100}, (uint64_t[]){0, 0, 30, 20, 8, 50});
    expect_bin(tl, 5, (uint64_t[]){0, 0, 30, 20, 8, 50}, (uint64_t[]){0, 0, 30, 20, 8, 50});
    /* the peak the model reports is the largest bin maximum */
    assert_int_equal(m->mem.peak_total, 150 * MiB);
    an_model_free(m);
    synth_free(&s);
}

/* A run of 200 ms: the 1 ms bins double twice (64 ms, then 128 ms outgrown), and each merged
 * bin keeps the larger maximum and the later end of its pair. */
static void merge_when_run_outgrows_span(void **state)
{
    (void)state;
    struct synth s = {0};
    s.now = T0;
    synth_call(&s, AN_CALL, GW_API_cuCtxSynchronize, 10 * US, 0);
    mem_call(&s, 10 * MS, AN_ALLOC, GW_API_cuMemAlloc_v2, AN_MEM_PLAIN, 0xA000, 10 * MiB);
    /* taken and given back within one bin, after the first doubling */
    mem_call(&s, 70 * MS, AN_ALLOC, GW_API_cuMemAllocAsync, AN_MEM_POOL, 0xB000, 40 * MiB);
    mem_call(&s, 71 * MS, AN_FREE, GW_API_cuMemFreeAsync, AN_MEM_POOL, 0xB000, 0);
    /* past 128 ms: the second doubling */
    mem_call(&s, 130 * MS, AN_ALLOC, GW_API_cuMemAllocManaged, AN_MEM_MANAGED, 0xE000, 5 * MiB);
    mem_call(&s, 199 * MS, AN_CALL, GW_API_cuCtxSynchronize, 0, 0, 0);
    struct an_model *m = run(&s);
    const struct an_mem_timeline *tl = &m->held;

    assert_int_equal(tl->width, 4 * MS);
    assert_int_equal(tl->nbins, 50);  /* [196, 200) ms holds the run's end */
    static const uint64_t none[6] = {0};
    /*                               plain pool vmm managed pinned total */
    expect_bin(tl, 0, none, none);
    expect_bin(tl, 1, none, none);
    expect_bin(tl, 2, (uint64_t[]){10, 0, 0, 0, 0, 10}, (uint64_t[]){10, 0, 0, 0, 0, 10});
    for (size_t i = 3; i <= 16; i++)
        expect_bin(tl, i, (uint64_t[]){10, 0, 0, 0, 0, 10}, (uint64_t[]){10, 0, 0, 0, 0, 10});
    expect_bin(tl, 17, (uint64_t[]){10, 40, 0, 0, 0, 50}, (uint64_t[]){10, 0, 0, 0, 0, 10});
    for (size_t i = 18; i <= 31; i++)
        expect_bin(tl, i, (uint64_t[]){10, 0, 0, 0, 0, 10}, (uint64_t[]){10, 0, 0, 0, 0, 10});
    expect_bin(tl, 32, (uint64_t[]){10, 0, 0, 5, 0, 15}, (uint64_t[]){10, 0, 0, 5, 0, 15});
    expect_bin(tl, 49, (uint64_t[]){10, 0, 0, 5, 0, 15}, (uint64_t[]){10, 0, 0, 5, 0, 15});
    assert_int_equal(tl->ever, (1u << AN_MEM_PLAIN) | (1u << AN_MEM_POOL) |
                               (1u << AN_MEM_MANAGED) | (1u << AN_HELD_TOTAL));
    an_model_free(m);
    synth_free(&s);
}

/* Straight on the timeline: a free that arrives late (before the open bin) counts in the
 * open bin, and an hour of notes every millisecond stays within the fixed bins with the
 * run's largest moment intact. */
static void late_note_and_long_run(void **state)
{
    (void)state;
    static struct an_mem_timeline tl;
    memset(&tl, 0, sizeof tl);
    uint64_t held[AN_MEM_KINDS] = {0};
    an_held_start(&tl, T0);
    held[AN_MEM_PLAIN] = 1 * MiB;
    an_held_note(&tl, T0 + 3 * MS, held, 0);
    held[AN_MEM_PLAIN] = 0;
    an_held_note(&tl, T0 + 1 * MS, held, 0);  /* late: bin 3 is open */
    assert_int_equal(tl.nbins, 4);
    assert_int_equal(tl.bin[1].max[AN_HELD_TOTAL], 0);
    assert_int_equal(tl.bin[3].max[AN_HELD_TOTAL], 1 * MiB);
    assert_int_equal(tl.bin[3].end[AN_HELD_TOTAL], 0);

    const uint64_t hour = 3600ull * 1000 * MS;
    uint64_t spike_at = T0 + hour / 3;
    for (uint64_t t = T0 + 4 * MS; t < T0 + hour; t += MS) {
        held[AN_MEM_POOL] = t >= spike_at && t < spike_at + MS ? 900 * MiB : 2 * MiB;
        an_held_note(&tl, t, held, 4 * MiB);
    }
    an_held_close(&tl, T0 + hour);
    assert_true(tl.nbins > AN_HELD_BINS / 2 && tl.nbins <= AN_HELD_BINS);
    assert_true(tl.width * AN_HELD_BINS >= hour);
    size_t spike_bin = (spike_at - T0) / tl.width;
    for (size_t i = 1; i < tl.nbins; i++) {
        assert_int_equal(tl.bin[i].max[AN_MEM_POOL], i == spike_bin ? 900 * MiB : 2 * MiB);
        assert_int_equal(tl.bin[i].end[AN_HELD_TOTAL], 2 * MiB);
        assert_int_equal(tl.bin[i].end[AN_HELD_PINNED], 4 * MiB);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kinds_within_first_span),
        cmocka_unit_test(merge_when_run_outgrows_span),
        cmocka_unit_test(late_note_and_long_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
