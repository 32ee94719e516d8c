#include "writer_stats.h"

#include <string.h>
#include <time.h>

#include "gpuwatch/trace_format.h"
#include "gpuwatch/varint.h"
#include "record_encode.h"
#include "recorder_internal.h"

/* The writer thread's alone (reset before it is created, read by it as it ends). */
static uint64_t rounds, late_max_ns;
static uint32_t late_rounds[GW_LATE_BUCKETS];

void gw_writer_stats_reset(void)
{
    rounds = late_max_ns = 0;
    memset(late_rounds, 0, sizeof late_rounds);
}

void gw_writer_stats_round(uint64_t due_ns, uint64_t drained_ns)
{
    uint64_t late = drained_ns > due_ns ? drained_ns - due_ns : 0;
    rounds++;
    late_rounds[gw_late_bucket(late)]++;
    if (late > late_max_ns)
        late_max_ns = late;
}

void gw_writer_stats_append(unsigned flush_ms)
{
    struct timespec cpu = {0, 0};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    uint64_t words[4] = {rounds, (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec,
                         late_max_ns, (uint64_t)flush_ms * 1000000ull};
    /* the pairs as the record's tail: more words than gw_encode_record takes */
    uint8_t pairs[GW_LATE_BUCKETS * 2 * GW_VARINT_MAX];
    size_t len = 0;
    for (unsigned b = 0; b < GW_LATE_BUCKETS; b++) {
        if (!late_rounds[b])
            continue;
        len += gw_put_uvarint(pairs + len, b);
        len += gw_put_uvarint(pairs + len, late_rounds[b]);
    }
    uint8_t record[sizeof pairs + 64];
    gw_defs_append(record, gw_encode_record(record, GW_REC_SHIM_STATS, words, 4, pairs, len));
}
