/* The shim's registry of the program's driver memory (libintercept/ranges.c): what a copy
 * hook asks to tell pinned from pageable host memory and device from host. Lookups take
 * no lock, so the concurrent cases check that a lookup racing writers, and the array
 * growing under it, still answers exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include "gpuwatch/trace_format.h"
#include "ranges.h"

static void test_inside_edges_and_kinds(void **state)
{
    (void)state;
    gw_ranges_add(GW_RANGE_PINNED, 0x10000, 0x1000);
    gw_ranges_add(GW_RANGE_MANAGED, 0x40000, 0x100);
    gw_ranges_add(GW_RANGE_DEVICE, 0x7f0000000000, 1 << 20);
    assert_int_equal(gw_host_kind(0x10000), GW_HOST_PINNED);
    assert_int_equal(gw_host_kind(0x10fff), GW_HOST_PINNED);
    assert_int_equal(gw_host_kind(0x11000), GW_HOST_PAGEABLE);
    assert_int_equal(gw_host_kind(0xffff), GW_HOST_PAGEABLE);
    assert_int_equal(gw_host_kind(0x400ff), GW_HOST_MANAGED);
    assert_int_equal(gw_is_device_pointer(0x40000), 1);  /* managed is both */
    assert_int_equal(gw_is_device_pointer(0x7f00000fffff), 1);
    assert_int_equal(gw_is_device_pointer(0x7f0000100000), 0);
    assert_int_equal(gw_ranges_remove(GW_RANGE_PINNED, 0x10000), 0x1000);
    assert_int_equal(gw_ranges_remove(GW_RANGE_PINNED, 0x10000), 0);
    assert_int_equal(gw_host_kind(0x10000), GW_HOST_PAGEABLE);
    assert_int_equal(gw_ranges_remove(GW_RANGE_MANAGED, 0x40000), 0x100);
    assert_int_equal(gw_ranges_remove(GW_RANGE_DEVICE, 0x7f0000000000), 1 << 20);
}

/* An address the driver handed out again without our seeing it freed: the new size
 * replaces the old, and one free removes it. */
static void test_reused_address_replaces_its_range(void **state)
{
    (void)state;
    gw_ranges_add(GW_RANGE_PINNED, 0x20000, 0x1000);
    gw_ranges_add(GW_RANGE_PINNED, 0x30000, 0x1000);
    gw_ranges_add(GW_RANGE_PINNED, 0x20000, 0x4000);
    assert_int_equal(gw_host_kind(0x23fff), GW_HOST_PINNED);
    assert_int_equal(gw_ranges_remove(GW_RANGE_PINNED, 0x20000), 0x4000);
    assert_int_equal(gw_host_kind(0x20000), GW_HOST_PAGEABLE);
    assert_int_equal(gw_ranges_remove(GW_RANGE_PINNED, 0x30000), 0x1000);
}

/* Many ranges, added out of order and removed from the middle: the array grows several
 * times and stays sorted. */
static void test_growth_keeps_every_range(void **state)
{
    (void)state;
    enum { N = 1000 };
    for (uint64_t i = 0; i < N; i++) {
        uint64_t k = (i * 617) % N;  /* a permutation of 0..N-1 */
        gw_ranges_add(GW_RANGE_DEVICE, 0x100000 + k * 0x1000, 0x800);
    }
    for (uint64_t k = 0; k < N; k += 2)
        assert_int_equal(gw_ranges_remove(GW_RANGE_DEVICE, 0x100000 + k * 0x1000), 0x800);
    unsigned found = 0, gaps = 0;
    for (uint64_t k = 0; k < N; k++) {
        found += (unsigned)gw_is_device_pointer(0x100000 + k * 0x1000 + 0x7ff);
        gaps += (unsigned)gw_is_device_pointer(0x100000 + k * 0x1000 + 0x800);
    }
    assert_int_equal(found, N / 2);
    assert_int_equal(gaps, 0);
    for (uint64_t k = 1; k < N; k += 2)
        gw_ranges_remove(GW_RANGE_DEVICE, 0x100000 + k * 0x1000);
}

#define PINNED_BUFFER 0x5000000u
#define WRITES 200000

static int writers_done;

/* Adds and removes ranges on both sides of the reader's buffer, growing the array past
 * its first sizes, while the readers look the buffer up. */
static void *churn(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < WRITES; i++) {
        uint64_t slot = i % 300;
        uint64_t below = base + slot * 0x100;
        uint64_t above = PINNED_BUFFER + 0x100000 + base + slot * 0x100;
        if (i / 300 % 2 == 0) {
            gw_ranges_add(GW_RANGE_PINNED, below, 0x80);
            gw_ranges_add(GW_RANGE_PINNED, above, 0x80);
        } else {
            gw_ranges_remove(GW_RANGE_PINNED, below);
            gw_ranges_remove(GW_RANGE_PINNED, above);
        }
    }
    __atomic_add_fetch(&writers_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

struct reader_tally { unsigned long lookups, wrong; };

static void *look_up(void *arg)
{
    struct reader_tally *tally = arg;
    while (__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) < 2) {
        tally->wrong += gw_host_kind(PINNED_BUFFER + 0x40) != GW_HOST_PINNED;
        tally->wrong += gw_host_kind(PINNED_BUFFER + 0x1000) != GW_HOST_PAGEABLE;
        tally->lookups += 2;
    }
    return NULL;
}

static void test_lookups_racing_writers_are_exact(void **state)
{
    (void)state;
    gw_ranges_add(GW_RANGE_PINNED, PINNED_BUFFER, 0x1000);
    pthread_t writers[2], readers[2];
    struct reader_tally tallies[2] = {{0, 0}, {0, 0}};
    writers_done = 0;
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&readers[i], NULL, look_up, &tallies[i]), 0);
    assert_int_equal(pthread_create(&writers[0], NULL, churn, (void *)(uintptr_t)0x1000000), 0);
    assert_int_equal(pthread_create(&writers[1], NULL, churn, (void *)(uintptr_t)0x2000000), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(writers[i], NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(readers[i], NULL);
    assert_true(tallies[0].lookups + tallies[1].lookups > 0);
    assert_int_equal(tallies[0].wrong + tallies[1].wrong, 0);
    assert_int_equal(gw_ranges_remove(GW_RANGE_PINNED, PINNED_BUFFER), 0x1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inside_edges_and_kinds),
        cmocka_unit_test(test_reused_address_replaces_its_range),
        cmocka_unit_test(test_growth_keeps_every_range),
        cmocka_unit_test(test_lookups_racing_writers_are_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
