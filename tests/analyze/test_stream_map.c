/*
 * A stream map (tools/analyze/replay/stream_map.h) composed over a run of operations and
 * applied once must leave every world's stream clock, and a followed device's kernel_end,
 * exactly where moving them world by world, operation by operation, does
 * (g = max(g, h + l) + d, and with the device: max(g, h + l, kernel_end) + d). Random
 * class layouts, clocks behind and ahead of the issuing thread, delays and lengths from nil
 * up; settled at random points as the replay settles a map where a clock is read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stream_map.h"

#define RUNS 2000

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static uint64_t below(uint64_t n)
{
    return n ? next_rand() % n : 0;
}

static uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* nlive slots over nclasses classes, each class a group (of ngroups + 1) and a remover set */
static void random_classes(struct an_world_set *in, unsigned nlive, unsigned *ngroups)
{
    memset(in, 0, sizeof *in);
    *ngroups = (unsigned)below(4);
    in->nclasses = 1 + (unsigned)below(nlive < 6 ? nlive : 6);
    for (unsigned c = 0; c < in->nclasses; c++) {
        in->class_group[c] = (uint8_t)below(*ngroups + 1);
        in->class_set[c] = (uint8_t)below(1u << AN_RP_REMOVERS);
    }
    for (unsigned w = 0; w < nlive; w++)
        in->class_of[w] = (uint8_t)(w < in->nclasses ? w : below(in->nclasses));
}

static void maps_move_the_worlds_as_one_by_one(void **state)
{
    (void)state;
    unsigned checked = 0, with_device = 0, h_bound = 0, g_bound = 0;
    for (int run = 0; run < RUNS; run++) {
        unsigned nlive = 1 + (unsigned)below(AN_WORLDS), ngroups;
        struct an_world_set in;
        random_classes(&in, nlive, &ngroups);
        int device = below(2) != 0;
        uint64_t base = 1000000000000ull + below(1000000000ull);
        uint64_t h[AN_WORLDS], g[AN_WORLDS], kend[AN_WORLDS], want_g[AN_WORLDS],
            want_k[AN_WORLDS];
        for (unsigned w = 0; w < nlive; w++) {
            h[w] = base + below(2000000);
            g[w] = below(4) ? base + below(4000000) : 0;  /* (an idle stream: 0) */
            kend[w] = device ? base + below(4000000) : 0;
            want_g[w] = g[w];
            want_k[w] = kend[w];
        }
        /* a followed device: kernel_end folded into g where the map starts (replay.c) */
        if (device)
            for (unsigned w = 0; w < nlive; w++)
                g[w] = max2(g[w], kend[w]);
        struct an_rp_map m;
        int on = 0;
        unsigned ops = 1 + (unsigned)below(40);
        for (unsigned i = 0; i < ops; i++) {
            uint64_t lat = below(50000), off[1u << AN_RP_REMOVERS],
                     lat_adj[AN_WORLDS + 1], dur_in[AN_WORLDS + 1];
            for (unsigned set = 0; set < 1u << AN_RP_REMOVERS; set++)
                off[set] = lat + below(3) * below(300000);
            lat_adj[0] = 0;
            dur_in[0] = below(5) ? below(100000) : 0;
            for (unsigned k = 1; k <= ngroups; k++) {  /* (a graph's: the latency taken away) */
                lat_adj[k] = below(2) ? 0 - lat : below(20000);
                dur_in[k] = below(200000);
            }
            for (unsigned w = 0; w < nlive; w++) {
                unsigned c = in.class_of[w];
                uint64_t l = off[in.class_set[c]] + lat_adj[in.class_group[c]];
                uint64_t d = dur_in[in.class_group[c]];
                h_bound += h[w] + l > want_g[w];
                g_bound += h[w] + l <= want_g[w];
                uint64_t start = max2(want_g[w], h[w] + l);
                if (device)
                    start = max2(start, want_k[w]);
                want_g[w] = start + d;
                if (device)
                    want_k[w] = want_g[w];
            }
            if (!on) {
                an_rp_map_start(&m, &in, nlive, 7, 0, device, h);
                on = 1;
            }
            an_rp_map_compose(&m, &in, off, lat_adj, dur_in);
            if (below(6) == 0 || i + 1 == ops) {  /* a clock read: settled */
                an_rp_map_apply(&m, &in, nlive, g, device ? kend : NULL);
                on = 0;
                for (unsigned w = 0; w < nlive; w++) {
                    assert_int_equal(g[w], want_g[w]);
                    if (device)
                        assert_int_equal(kend[w], want_k[w]);
                }
                checked++;
            }
        }
        with_device += device;
    }
    /* both sides of the max were taken, often, and the device half the time */
    assert_true(checked >= RUNS);
    assert_true(with_device > RUNS / 3);
    assert_true(h_bound > 1000 && g_bound > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maps_move_the_worlds_as_one_by_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
