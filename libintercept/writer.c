/* The writer thread: every flush interval (or when a ring passes half full) it moves what
 * each thread committed into chunks of the trace file, definitions first. */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "gpuwatch/record_walk.h"
#include "gpuwatch/varint.h"
#include "quiet_io.h"
#include "record_encode.h"
#include "recorder_internal.h"
#include "ring_file.h"
#include "writer_stats.h"

#define CLOCK_POINT_INTERVAL_NS 1000000000ull

static pthread_t writer_thread;
static int writer_running;
/* Bumped by gw_writer_wake; the writer sleeps on it between rounds. A futex, not a
 * descriptor: a program that closes descriptors and opens its own file must never get the
 * wake-up's 8 bytes written into it. */
static uint32_t wake_word;
static int stop_requested;
static unsigned flush_requests, flush_done;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *staging;
static size_t staging_cap;
static uint64_t last_clock_point_ns;
static uint32_t defs_seq;
/* What runs before each drain: sources that hand over records (CUPTI's buffers, the CPU
 * sampler), in the order they were added. */
#define ROUND_HOOKS 4
static void (*round_hooks[ROUND_HOOKS])(int urgent);
static unsigned nround_hooks;

void gw_writer_add_round_hook(void (*hook)(int urgent))
{
    for (unsigned i = 0; i < nround_hooks; i++)
        if (round_hooks[i] == hook)
            return;
    if (nround_hooks < ROUND_HOOKS) {
        round_hooks[nround_hooks] = hook;
        __atomic_store_n(&nround_hooks, nround_hooks + 1, __ATOMIC_RELEASE);
    }
}   /* DEFS chunks are numbered too, so a lost one shows */

void gw_writer_wake(void)
{
    int saved = errno;  /* (called from the program's calls and signal handlers) */
    __atomic_add_fetch(&wake_word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

static void append_clock_point(void)
{
    uint64_t words[3] = {gw_now(), gw_realtime_ns(), gw_monotonic_ns()};
    uint8_t record[64];
    gw_defs_append(record, gw_encode_record(record, GW_REC_CLOCK, words, 3, NULL, 0));
    last_clock_point_ns = words[0];
}

static int ensure_staging(size_t len)
{
    if (len <= staging_cap)
        return 0;
    uint8_t *grown = realloc(staging, len);
    if (!grown)
        return -1;
    staging = grown;
    staging_cap = len;
    return 0;
}

/* What a chunk of a thread's records holds, for the chunk that follows it: the records,
 * the calls among them (a LOST record's dropped calls included), and its last time. */
struct chunk_walk { uint64_t records, calls, last_ts, link_base, corr_base; };

/* Where a GPU record's `call` word is, if it has one: after its fixed words (dt first). */
static unsigned call_word_at(uint8_t type)
{
    switch (type) {
    case GW_REC_GPU_KERNEL: return 7;
    case GW_REC_GPU_MEMCPY: return 10;
    case GW_REC_GPU_MEMSET: return 8;
    default: return 0;
    }
}

/* Past n varints from p (NULL when the body ends first): each ends with a byte below 0x80,
 * so eight bytes at a time their ends are found, not their values decoded. */
static const uint8_t *skip_varints(const uint8_t *p, const uint8_t *end, unsigned n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (n && end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, sizeof x);
        for (uint64_t ends = ~x & 0x8080808080808080ull; ends; ends &= ends - 1)
            if (--n == 0)
                return p + __builtin_ctzll(ends) / 8 + 1;
        p += 8;
    }
#endif
    for (; n && p < end; p++)
        n -= *p < 0x80;
    return n ? NULL : p;
}

/* The word at p (within end): 1 with *word set, 0 when the body ends first. */
static int word_at(const uint8_t *p, const uint8_t *end, uint64_t *word)
{
    return p && p < end && gw_get_uvarint(p, (size_t)(end - p), word);
}

/* The chunk's bases after a GPU record (trace_format.h), in one pass over its words: its
 * correlation delta (the word after dt and dur) moves corr_base, its `call` word, when it
 * has one (not 0), link_base. */
static void gpu_bases(const struct gw_record_view *rec, struct chunk_walk *walk)
{
    const uint8_t *end = rec->body + rec->body_len;
    const uint8_t *p = skip_varints(rec->body, end, 2);
    uint64_t corr = 0, call = 0;
    if (!word_at(p, end, &corr))
        return;
    walk->corr_base += (uint64_t)gw_unzigzag(corr);
    p = skip_varints(p, end, call_word_at(rec->type) - 2);  /* past the correlation word on */
    if (word_at(p, end, &call) && call)
        walk->link_base += (uint64_t)gw_unzigzag(call - 1);
}

static struct chunk_walk walk_chunk(const uint8_t *buf, size_t len, uint64_t start_ts,
                                    uint64_t link_base, uint64_t corr_base)
{
    struct chunk_walk walk = {0, 0, start_ts, link_base, corr_base};
    size_t offset = 0;
    struct gw_record_view rec;
    while (gw_next_record(buf, len, &offset, &rec) == 0) {
        walk.records++;
        if (rec.type < 1 || rec.type > GW_REC_TIMED_MAX)
            continue;
        uint64_t dt = 0;
        size_t at = gw_get_uvarint(rec.body, rec.body_len, &dt);
        walk.last_ts += (uint64_t)gw_unzigzag(dt);
        if (rec.type == GW_REC_CALL || rec.type == GW_REC_CALL_ERR) {
            walk.calls++;
        } else if (call_word_at(rec.type)) {
            gpu_bases(&rec, &walk);
        } else if (rec.type == GW_REC_LOST && at) {
            uint64_t count = 0, calls = 0;
            size_t n = gw_get_uvarint(rec.body + at, rec.body_len - at, &count);
            if (n && gw_get_uvarint(rec.body + at + n, rec.body_len - at - n, &calls))
                walk.calls += calls;
        }
    }
    return walk;
}

/* Room kept in front of the staging buffer for the chunk's CALL_BASE record. */
#define CALL_BASE_ROOM 64

/* Room kept after the records for the final drain's LOST record. */
#define LOST_ROOM 40

/* The drops no record followed (a full ring, then no call on that thread before the stop):
 * the producer writes a LOST record only in front of its next record, so at the final drain
 * the writer writes it, at the time of the last record, for the count to reach the trace.
 * (A relaxed read of the producer's counters: at stop the thread may still be dropping; what
 * it drops after this read is after the trace's end.) */
static size_t encode_lost_at_stop(struct gw_ring *ring, uint8_t *out)
{
    uint64_t lost = __atomic_load_n(&ring->lost, __ATOMIC_RELAXED);
    if (!lost)
        return 0;
    uint64_t words[3] = {0, lost, __atomic_load_n(&ring->lost_calls, __ATOMIC_RELAXED)};
    return gw_encode_record(out, GW_REC_LOST, words, 3, NULL, 0);
}

static void drain_ring(struct gw_ring *ring, uint64_t head, int final)
{
    uint64_t tail = ring->tail;
    uint8_t lost[LOST_ROOM];
    size_t lost_len = final ? encode_lost_at_stop(ring, lost) : 0;
    if (head == tail && !lost_len)
        return;
    size_t ring_len = (size_t)(head - tail), len = ring_len + lost_len;
    if (ensure_staging(CALL_BASE_ROOM + len) != 0)
        return;
    uint8_t *records = staging + CALL_BASE_ROOM;
    uint64_t offset = tail & ring->mask;
    uint64_t first = ring->mask + 1 - offset;
    if (first >= ring_len) {
        memcpy(records, ring->data + offset, ring_len);
    } else {
        memcpy(records, ring->data + offset, first);
        memcpy(records + first, ring->data, ring_len - first);
    }
    memcpy(records + ring_len, lost, lost_len);
    uint64_t base = ring->writer_last_ts;
    struct chunk_walk walk = walk_chunk(records, len, base, ring->writer_link_base,
                                        ring->writer_corr_base);
    uint8_t call_base[CALL_BASE_ROOM];
    uint64_t words[4] = {ring->serial, ring->writer_calls, ring->writer_link_base,
                         ring->writer_corr_base};
    size_t base_len = gw_encode_record(call_base, GW_REC_CALL_BASE, words, 4, NULL, 0);
    memcpy(records - base_len, call_base, base_len);
    uint32_t seq = ring->writer_seq++;
    ring->writer_last_ts = walk.last_ts;
    ring->writer_calls += walk.calls;
    ring->writer_link_base = walk.link_base;
    ring->writer_corr_base = walk.corr_base;
    /* what the ring will be once the chunk is in the file: a reader of a killed process's
     * rings takes it if the chunk is there, the state before it if not (trace_format.h) */
    gw_ring_slot_writing(ring->slot, head, ring->writer_last_ts, ring->writer_calls, seq);
    __atomic_fetch_add(&gw_rec.events, walk.records, __ATOMIC_RELAXED);
    gw_trace_file_write_chunk(GW_CHUNK_EVENTS, ring->tid, base, seq, records - base_len,
                              base_len + len);
    gw_ring_slot_written(ring->slot);
    /* the producer reuses the space only now: until the chunk is written, the ring is
     * where those records survive a kill */
    __atomic_store_n(&ring->tail, head, __ATOMIC_RELEASE);
}

static void drain_all(int final)
{
    pthread_mutex_lock(&drain_lock);
    if (gw_now() - last_clock_point_ns >= CLOCK_POINT_INTERVAL_NS)
        append_clock_point();

    /* Heads first, then definitions: every definition an event refers to was appended
     * before that event was committed, so it is in this round's DEFS chunk or earlier. */
    size_t count = 0, cap = 16;
    struct snapshot { struct gw_ring *ring; uint64_t head; } *snap = malloc(cap * sizeof *snap);
    pthread_mutex_lock(&gw_rec.rings_lock);
    for (struct gw_ring *ring = gw_rec.rings; ring && snap; ring = ring->next) {
        if (count == cap) {
            struct snapshot *grown = realloc(snap, 2 * cap * sizeof *snap);
            if (!grown)
                break;
            snap = grown;
            cap *= 2;
        }
        snap[count].ring = ring;
        snap[count].head = __atomic_load_n(&ring->slot->head, __ATOMIC_ACQUIRE);
        count++;
    }
    pthread_mutex_unlock(&gw_rec.rings_lock);

    uint8_t *defs;
    uint64_t mirrored;
    size_t defs_len = gw_defs_take(&defs, &mirrored);
    if (defs_len) {
        gw_defs_writing(mirrored, defs_seq);
        gw_trace_file_write_chunk(GW_CHUNK_DEFS, 0, 0, defs_seq++, defs, defs_len);
        gw_defs_written();
    }
    free(defs);

    for (size_t i = 0; i < count; i++)
        drain_ring(snap[i].ring, snap[i].head, final);
    free(snap);

    /* Free the rings of exited threads once everything they wrote is out. */
    pthread_mutex_lock(&gw_rec.rings_lock);
    for (struct gw_ring **link = &gw_rec.rings; *link;) {
        struct gw_ring *ring = *link;
        if (__atomic_load_n(&ring->dead, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&ring->slot->head, __ATOMIC_ACQUIRE) == ring->tail) {
            *link = ring->next;
            gw_ring_slot_release(ring->slot, ring->shared, 1);
            free(ring);
        } else {
            link = &ring->next;
        }
    }
    pthread_mutex_unlock(&gw_rec.rings_lock);
    pthread_mutex_unlock(&drain_lock);
}

void gw_writer_drain_all(void) { drain_all(0); }

void gw_writer_drain_final(void) { drain_all(1); }

/* When gw_writer_start made the thread: its first round is due a flush interval later. */
static uint64_t writer_created_ns;

static void *writer_main(void *start_word)
{
    /* the word as it was before the thread was created: a wake sent before the thread first
     * runs is not missed */
    uint32_t seen = (uint32_t)(uintptr_t)start_word;
    uint64_t waited_from = writer_created_ns;
    gw_quiet_io_thread_blocks_all();  /* (gw_writer_start created it with all blocked) */
    while (!__atomic_load_n(&stop_requested, __ATOMIC_ACQUIRE)) {
        uint64_t interval_ns = (uint64_t)gw_rec.flush_ms * 1000000ull;
        struct timespec round = {(time_t)(gw_rec.flush_ms / 1000),
                                 (long)(gw_rec.flush_ms % 1000) * 1000000L};
        /* returns at once if woken since `seen`, else when woken or after the interval */
        syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &round, NULL, 0);
        uint64_t woke = gw_now();
        /* due at the interval's end, or when a wake-up (a ring half full, a flush asked
         * for) brought the round sooner */
        uint64_t due = waited_from + interval_ns < woke ? waited_from + interval_ns : woke;
        seen = __atomic_load_n(&wake_word, __ATOMIC_ACQUIRE);
        unsigned requested = __atomic_load_n(&flush_requests, __ATOMIC_ACQUIRE);
        /* Other sources (CUPTI, the CPU samples) hand over what they hold first, so it
         * goes out now. */
        int urgent = requested != __atomic_load_n(&flush_done, __ATOMIC_ACQUIRE);
        unsigned nhooks = __atomic_load_n(&nround_hooks, __ATOMIC_ACQUIRE);
        for (unsigned i = 0; i < nhooks; i++)
            round_hooks[i](urgent);
        gw_writer_drain_all();
        waited_from = gw_now();
        gw_writer_stats_round(due, waited_from);
        __atomic_store_n(&flush_done, requested, __ATOMIC_RELEASE);
    }
    gw_writer_stats_append(gw_rec.flush_ms);  /* (the stop's final drain writes it) */
    return NULL;
}

int gw_writer_start(void)
{
    stop_requested = 0;
    last_clock_point_ns = 0;
    defs_seq = 0;
    gw_writer_stats_reset();
    writer_created_ns = gw_now();
    /* The writer must never run the program's signal handlers. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    uintptr_t start_word = __atomic_load_n(&wake_word, __ATOMIC_ACQUIRE);
    int rc = pthread_create(&writer_thread, NULL, writer_main, (void *)start_word);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (rc != 0)
        return -1;
    writer_running = 1;
    return 0;
}

void gw_writer_stop(void)
{
    if (!writer_running)
        return;
    __atomic_store_n(&stop_requested, 1, __ATOMIC_RELEASE);
    gw_writer_wake();
    pthread_join(writer_thread, NULL);
    writer_running = 0;
    last_clock_point_ns = 0; /* the final drain writes one more calibration point */
}

void gw_writer_request_flush(unsigned timeout_ms)
{
    if (!writer_running)
        return;
    unsigned ticket = __atomic_add_fetch(&flush_requests, 1, __ATOMIC_ACQ_REL);
    gw_writer_wake();
    struct timespec pause = {0, 1000000};
    for (unsigned waited = 0; waited < timeout_ms; waited++) {
        if ((int)(__atomic_load_n(&flush_done, __ATOMIC_ACQUIRE) - ticket) >= 0)
            return;
        nanosleep(&pause, NULL);
    }
}

void gw_writer_after_fork_child(void)
{
    /* The parent's writer thread does not exist here. */
    writer_running = 0;
    nround_hooks = 0;
    flush_requests = flush_done = 0;
    pthread_mutex_init(&drain_lock, NULL);
}
