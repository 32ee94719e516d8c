/*
 * The replay on random runs (tests/analyze/random_run.h), host-only and with GPU records:
 * one line per run with every world's replayed wall and loader wait and the replay's
 * counters. Two builds' outputs must be the same line for line where a change was meant to
 * leave the replay's figures alone (bench/replay_same.sh compares them; the corpus alone
 * missed a first version of eaa4e5c's that took a stream's first operation as ended before
 * it ran: 4 of these 10000 runs show it).
 *   replay_random [RUNS]   (default 5000 each way)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/random_run.h"
#include "replay.h"

static int by_end(const void *a, const void *b)
{
    const struct an_ev *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

int main(int argc, char **argv)
{
    unsigned long runs = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
    struct rr *r = malloc(sizeof *r);
    if (!r)
        return 1;
    for (int gpu_records = 0; gpu_records <= 1; gpu_records++) {
        for (uint64_t seed = 1; seed <= runs; seed++) {
            uint8_t bytes[2048];
            rr_seed_bytes(seed, 11, bytes, sizeof bytes);
            struct rr_bytes in = {bytes, sizeof bytes, 0};
            rr_generate(r, &in, gpu_records);
            struct an_thresholds th = AN_THRESHOLDS_DEFAULT;
            struct an_replay_state st;
            an_replay_init(&st, &th, r->s.gpu_records, 4);
            /* (in the order of their ends, as the analysis releases them, near enough) */
            qsort(r->s.ev, r->s.n, sizeof *r->s.ev, by_end);
            uint64_t first = r->s.n ? r->s.ev[0].ts : 0, last = 0;
            for (size_t i = 0; i < r->s.n; i++) {
                const struct an_ev *ev = &r->s.ev[i];
                first = ev->ts < first ? ev->ts : first;
                last = ev->end > last ? ev->end : last;
                if (an_is_gpu(ev))
                    an_replay_gpu(&st, ev);
                else
                    an_replay_host(&st, ev);
            }
            struct an_replay out;
            an_replay_finish(&st, first, last - first, &out);
            an_replay_free(&st);
            printf("%d %llu events %zu matched %llu virtual %llu unmatched %llu forced %llu "
                   "loads %llu pauses %llu walls/waits",
                   gpu_records, (unsigned long long)seed, r->s.n,
                   (unsigned long long)out.ops_matched, (unsigned long long)out.ops_virtual,
                   (unsigned long long)out.records_unmatched, (unsigned long long)out.forced,
                   (unsigned long long)out.loads, (unsigned long long)out.pauses);
            for (int w = 0; w < AN_WORLDS; w++)
                printf(" %llu/%llu", (unsigned long long)out.wall_ns[w],
                       (unsigned long long)out.loader_wait_ns[w]);
            printf("\n");
            synth_free(&r->s);
        }
    }
    free(r);
    return 0;
}
