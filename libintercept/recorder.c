#include "recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "gw_cuda.h"
#include "log.h"
#include "record_encode.h"
#include "recorder_internal.h"
#include "ring_file.h"

struct gw_recorder gw_rec = {
    .fd = -1,
    .rings_lock = PTHREAD_MUTEX_INITIALIZER,
    .file_lock = PTHREAD_MUTEX_INITIALIZER,
};

static int recorder_active;
static GW_TLS struct gw_ring *tls_ring;
static pthread_key_t ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;

int gw_recorder_active(void) { return __atomic_load_n(&recorder_active, __ATOMIC_ACQUIRE); }

const char *gw_recorder_path(void) { return gw_rec.path; }

uint32_t gw_recorder_pid(void) { return gw_rec.header.pid; }

unsigned gw_recorder_generation_now;

/* Thread exit: the writer drains what is left and frees the ring. */
static void ring_thread_exit(void *ring_ptr)
{
    struct gw_ring *ring = ring_ptr;
    if (tls_ring == ring)
        tls_ring = NULL;
    __atomic_store_n(&ring->dead, 1, __ATOMIC_RELEASE);
}

static void make_ring_key(void) { pthread_key_create(&ring_key, ring_thread_exit); }

static void emit_thread_definition(uint32_t tid)
{
    char name[17] = "";
    prctl(PR_GET_NAME, name, 0, 0, 0);
    uint64_t words[2] = {tid, gw_rec_string(name)};
    uint8_t record[64];
    gw_defs_append(record, gw_encode_record(record, GW_REC_THREAD, words, 2, NULL, 0));
}

static struct gw_ring *ring_create(void)
{
    struct gw_ring *ring = calloc(1, sizeof *ring);
    if (!ring)
        return NULL;
    ring->tid = (uint32_t)syscall(SYS_gettid);
    static uint32_t serials;
    ring->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
    ring->slot = gw_ring_slot_new(ring->tid, ring->serial, gw_rec.ring_bytes, &ring->shared);
    if (!ring->slot) {
        free(ring);
        return NULL;
    }
    ring->data = (uint8_t *)ring->slot + GW_RING_SLOT_HEADER;
    ring->mask = gw_rec.ring_bytes - 1;
    ring->generation = gw_recorder_generation_now;
    ring->producer_last_ts = gw_now();
    ring->writer_last_ts = ring->producer_last_ts;
    ring->stretch_at = UINT64_MAX;  /* (no call yet: the first is no stretch) */
    ring->slot->last_ts = ring->writer_last_ts;
    emit_thread_definition(ring->tid);
    pthread_once(&ring_key_once, make_ring_key);
    pthread_setspecific(ring_key, ring);
    pthread_mutex_lock(&gw_rec.rings_lock);
    ring->next = gw_rec.rings;
    gw_rec.rings = ring;
    pthread_mutex_unlock(&gw_rec.rings_lock);
    return ring;
}

static inline struct gw_ring *thread_ring(void)
{
    struct gw_ring *ring = tls_ring;
    if (GW_UNLIKELY(!ring || ring->generation != gw_recorder_generation_now)) {
        if (!gw_recorder_active() || !(ring = tls_ring = ring_create()))
            return NULL;
    }
    return ring;
}

/* Past half full, do not wait for the timer: one wake per filling keeps the syscall off the
 * common path while a tight loop cannot outrun the writer for long. */
static inline void wake_writer_past_half(struct gw_ring *ring, uint64_t used)
{
    if (GW_UNLIKELY(used > (ring->mask + 1) / 2)) {
        if (!ring->wake_sent) {
            ring->wake_sent = 1;
            gw_writer_wake();
        }
    } else {
        ring->wake_sent = 0;
    }
}

/* Writes a LOST record for drops not yet reported, at time ts, and returns its size; the
 * record that follows it then has dt 0. */
static inline size_t encode_pending_lost(struct gw_ring *ring, uint64_t ts, uint8_t *out)
{
    if (GW_LIKELY(!ring->lost))
        return 0;
    uint64_t words[3] = {gw_zigzag((int64_t)(ts - ring->producer_last_ts)), ring->lost,
                         ring->lost_calls};
    return gw_encode_record(out, GW_REC_LOST, words, 3, NULL, 0);
}

/* Appends an encoded record; on a full ring drops it and counts the drop. Returns 1 when
 * the record was committed. */
static inline int ring_commit(struct gw_ring *ring, const uint8_t *record, size_t len,
                              int is_call)
{
    uint64_t head = ring->slot->head;  /* (the producer's own: it alone stores it) */
    uint64_t used = head - __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    if (GW_UNLIKELY(used + len > ring->mask + 1)) {
        ring->lost++;
        ring->lost_calls += (uint64_t)is_call;
        __atomic_fetch_add(&gw_rec.lost, 1, __ATOMIC_RELAXED);
        if (!ring->wake_sent) {
            ring->wake_sent = 1;
            gw_writer_wake();
        }
        return 0;
    }
    gw_ring_slot_put(ring->slot, head, record, len);
    ring->lost = ring->lost_calls = 0;
    __atomic_store_n(&ring->slot->head, head + len, __ATOMIC_RELEASE);
    wake_writer_past_half(ring, used + len);
    return 1;
}

static gw_call_observer_fn call_observer;
/* api id -> all ones: tell the observer of every such call; 0: only after a stretch or a
 * wait. A copy, not a pointer: one load less a call (ids are below GW_API_ID_LIMIT, a power
 * of two: masked, not compared). */
static uint64_t observed_apis[GW_API_ID_LIMIT];
_Static_assert((GW_API_ID_LIMIT & (GW_API_ID_LIMIT - 1)) == 0, "a power of two");

void gw_rec_set_call_observer(gw_call_observer_fn observer, const uint8_t *apis)
{
    for (unsigned id = 0; id < GW_API_ID_LIMIT; id++)
        __atomic_store_n(&observed_apis[id], apis && apis[id] ? UINT64_MAX : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&call_observer, observer, __ATOMIC_RELEASE);
}

/* Out of the call path: most calls are of no interest to the observer, and a program with
 * none pays for its stretches here only. stretch_at: what the thread's stretch_at was
 * before this call (the previous call's end + the stretch; 0 after a wait, which kept the
 * one before in stretch_before_wait). */
static __attribute__((noinline)) void tell_observer(struct gw_ring *ring, unsigned api_id,
                                                    uint64_t start_ns, uint64_t end_ns,
                                                    int result, uint64_t stretch_at)
{
    int waited = ring->waited;
    ring->waited = 0;
    if (waited)
        stretch_at = ring->stretch_before_wait;
    gw_call_observer_fn observer = __atomic_load_n(&call_observer, __ATOMIC_ACQUIRE);
    if (!observer)
        return;
    uint64_t last_end = stretch_at - GW_PY_STRETCH_NS;
    uint64_t gap = stretch_at != UINT64_MAX && start_ns > last_end ? start_ns - last_end : 0;
    observer(api_id, start_ns, end_ns, result, waited, gap, (ring->calls - 1) & 0xFFFFFFFFu);
}

static inline __attribute__((always_inline)) void record_call(
    struct gw_ring *ring, unsigned api_id, uint64_t start_ns, uint64_t end_ns, int result,
    const uint64_t *words, unsigned nwords);

void gw_rec_call(unsigned api_id, uint64_t start_ns, uint64_t end_ns, int result,
                 const uint64_t *words, unsigned nwords)
{
    struct gw_ring *ring = thread_ring();
    if (GW_UNLIKELY(!ring))
        return;
    record_call(ring, api_id, start_ns, end_ns, result, words, nwords);
    /* One compare tells the observer's calls from the rest: a stretch (the call starts
     * GW_PY_STRETCH_NS or more after the previous one ended; the gap itself is worked out
     * only for the observer), a wait (gw_rec_wait set stretch_at to 0), or an api whose
     * every call it wants (its mask clears stretch_at). */
    uint64_t stretch_at = ring->stretch_at;
    ring->stretch_at = end_ns + GW_PY_STRETCH_NS;
    if (GW_UNLIKELY(start_ns >= (stretch_at & ~__atomic_load_n(
                                     &observed_apis[api_id & (GW_API_ID_LIMIT - 1)],
                                     __ATOMIC_RELAXED))))
        tell_observer(ring, api_id, start_ns, end_ns, result, stretch_at);
}

static inline __attribute__((always_inline)) void record_call(
    struct gw_ring *ring, unsigned api_id, uint64_t start_ns, uint64_t end_ns, int result,
    const uint64_t *words, unsigned nwords)
{
    ring->calls++;
    uint64_t head = ring->slot->head;  /* (one head, the slot's: the writer and a reader of a
                                          killed process's rings both read it) */
    uint64_t offset = head & ring->mask;
    uint64_t used = head - __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    /* The common case: nothing lost, room for the largest call record without wrapping.
     * Encode in place: no staging copy, no libc call for a ten-byte record. */
    if (GW_LIKELY(!ring->lost && ring->mask + 1 - offset >= GW_MAX_CALL_RECORD &&
                  used + GW_MAX_CALL_RECORD <= ring->mask + 1)) {
        size_t len = gw_encode_call(ring->data + offset, (int64_t)(start_ns - ring->producer_last_ts),
                                    api_id, end_ns - start_ns, result, words, nwords);
        ring->producer_last_ts = start_ns;
        __atomic_store_n(&ring->slot->head, head + len, __ATOMIC_RELEASE);
        wake_writer_past_half(ring, used + len);
        return;
    }
    uint8_t record[2 * GW_MAX_CALL_RECORD];
    size_t len = encode_pending_lost(ring, start_ns, record);
    int64_t dt = len ? 0 : (int64_t)(start_ns - ring->producer_last_ts);
    len += gw_encode_call(record + len, dt, api_id, end_ns - start_ns, result, words, nwords);
    if (ring_commit(ring, record, len, 1))
        ring->producer_last_ts = start_ns;
}

void gw_rec_wait(uint64_t wall_ns, uint64_t cpu_ns)
{
    struct gw_ring *ring = thread_ring();
    if (!ring)
        return;
    if (!ring->waited)
        ring->stretch_before_wait = ring->stretch_at;
    ring->waited = 1;
    ring->stretch_at = 0;  /* (the call's record tells the observer: gw_rec_call) */
    /* (a single writer: a plain add, stored whole for the sampler's load) */
    __atomic_store_n(&ring->wait_ns, ring->wait_ns + wall_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&ring->wait_cpu_ns, ring->wait_cpu_ns + cpu_ns, __ATOMIC_RELAXED);
}

uint64_t gw_rec_next_call_id(void)
{
    struct gw_ring *ring = thread_ring();
    return ring ? (uint64_t)ring->serial << 32 | (ring->calls & 0xFFFFFFFFu) : 0;
}

#define GW_MAX_WORDS_RECORD 16

/* A timed record: its dt, the words, and when call_id is not 0 a GPU record's `call` word
 * (trace_format.h: relative to the previous one, a few calls apart, a byte or two). */
static void rec_timed(uint8_t type, uint64_t ts_ns, const uint64_t *words, unsigned nwords,
                      uint64_t call_id, int gpu)
{
    struct gw_ring *ring = thread_ring();
    if (!ring || nwords + 2 > GW_MAX_WORDS_RECORD)
        return;
    uint8_t record[2 * (2 + (GW_MAX_WORDS_RECORD + 1) * GW_VARINT_MAX)];
    size_t len = encode_pending_lost(ring, ts_ns, record);
    uint64_t all[GW_MAX_WORDS_RECORD];
    all[0] = gw_zigzag(len ? 0 : (int64_t)(ts_ns - ring->producer_last_ts));
    memcpy(all + 1, words, nwords * sizeof *words);
    unsigned n = nwords + 1;
    if (gpu && nwords >= 2)  /* the correlation id, from the previous record's */
        all[2] = gw_zigzag((int64_t)(words[1] - ring->producer_corr_base));
    if (call_id)
        all[n++] = gw_zigzag((int64_t)(call_id - ring->producer_link_base)) + 1;
    len += gw_encode_record(record + len, type, all, n, NULL, 0);
    if (ring_commit(ring, record, len, 0)) {
        ring->producer_last_ts = ts_ns;
        if (call_id)
            ring->producer_link_base = call_id;
        if (gpu && nwords >= 2)
            ring->producer_corr_base = words[1];
    }
}

void gw_rec_timed(uint8_t type, uint64_t ts_ns, const uint64_t *words, unsigned nwords)
{
    rec_timed(type, ts_ns, words, nwords, 0, 0);
}

void gw_rec_gpu(uint8_t type, uint64_t ts_ns, const uint64_t *words, unsigned nwords,
                uint64_t call_id)
{
    rec_timed(type, ts_ns, words, nwords, call_id, 1);
}

void gw_rec_untimed(uint8_t type, const uint64_t *words, unsigned nwords)
{
    struct gw_ring *ring = thread_ring();
    if (!ring || nwords > GW_MAX_WORDS_RECORD)
        return;
    uint8_t record[2 * (2 + (GW_MAX_WORDS_RECORD + 1) * GW_VARINT_MAX)];
    size_t len = encode_pending_lost(ring, ring->producer_last_ts, record);
    len += gw_encode_record(record + len, type, words, nwords, NULL, 0);
    ring_commit(ring, record, len, 0);
}

/* A new trace starts from nothing: rings, counters and definitions of an earlier one
 * (a stopped recorder, or the parent's before fork) belong to that trace. */
static void forget_previous_trace(void)
{
    pthread_mutex_lock(&gw_rec.rings_lock);
    for (struct gw_ring *ring = gw_rec.rings, *next; ring; ring = next) {
        next = ring->next;
        gw_ring_slot_release(ring->slot, ring->shared, 0);
        free(ring);
    }
    gw_rec.rings = NULL;
    pthread_mutex_unlock(&gw_rec.rings_lock);
    gw_recorder_generation_now++;
    if (tls_ring)
        pthread_setspecific(ring_key, NULL);
    tls_ring = NULL;
    gw_rec.events = gw_rec.lost = gw_rec.chunks = gw_rec.bytes = 0;
    gw_defs_reset();
}

int gw_recorder_start(const struct gw_config *cfg)
{
    forget_previous_trace();
    gw_rec.flush_ms = cfg->flush_ms;
    gw_rec.ring_bytes = cfg->thread_buffer_bytes;
    gw_rec.failed = 0;
    if (gw_trace_file_open(cfg->output_dir) != 0)
        return -1;
    if (cfg->host_copy_bps || cfg->wake_ns) {  /* (measured by whoever launched us, outside
                                                  this process) */
        uint64_t facts[2] = {cfg->host_copy_bps, cfg->wake_ns};
        uint8_t record[32];
        gw_defs_append(record, gw_encode_record(record, GW_REC_HOST_COPY, facts,
                                                cfg->wake_ns ? 2 : 1, NULL, 0));
    }
    if (gw_writer_start() != 0) {
        gw_warn_once(GW_WARN_OUTPUT, "cannot start the trace writer thread; tracing is off");
        gw_trace_file_close();
        return -1;
    }
    __atomic_store_n(&recorder_active, 1, __ATOMIC_RELEASE);
    gw_debug("tracing to %s", gw_rec.path);
    return 0;
}

void gw_recorder_stop(void)
{
    if (!__atomic_exchange_n(&recorder_active, 0, __ATOMIC_ACQ_REL))
        return;
    gw_writer_stop();
    gw_writer_drain_final();
    gw_ring_file_remove();  /* (everything is in the trace now) */
    gw_trace_file_close();
}

void gw_recorder_flush_now(unsigned timeout_ms)
{
    if (gw_recorder_active())
        gw_writer_request_flush(timeout_ms);
}

void gw_recorder_after_fork_child(void)
{
    /* The parent's rings, file and writer belong to the parent: leave its file alone and
     * leak the copies of its rings rather than free memory other threads were using. */
    __atomic_store_n(&recorder_active, 0, __ATOMIC_RELAXED);
    pthread_mutex_init(&gw_rec.rings_lock, NULL);
    pthread_mutex_init(&gw_rec.file_lock, NULL);
    gw_trace_file_forget();
    gw_ring_file_forget();
    gw_rec.path[0] = '\0';
    gw_rec.rings = NULL;
    gw_recorder_generation_now++;
    gw_rec.events = gw_rec.lost = gw_rec.chunks = gw_rec.bytes = 0;
    tls_ring = NULL;
    gw_writer_after_fork_child();
    gw_defs_reset();
}

void gw_recorder_set_cupti(int status, const char *reason)
{
    pthread_mutex_lock(&gw_rec.file_lock);
    gw_rec.header.cupti_status = status;
    snprintf(gw_rec.header.cupti_reason, sizeof gw_rec.header.cupti_reason, "%s",
             reason ? reason : "");
    if (status == GW_CUPTI_ACTIVE)
        gw_rec.header.feature_flags |= GW_FEAT_GPU_ACTIVITY;
    pthread_mutex_unlock(&gw_rec.file_lock);
    gw_trace_file_patch_header();
}

void gw_recorder_add_features(uint32_t flags)
{
    pthread_mutex_lock(&gw_rec.file_lock);
    gw_rec.header.feature_flags |= flags;
    pthread_mutex_unlock(&gw_rec.file_lock);
    gw_trace_file_patch_header();
}

void gw_recorder_get_stats(struct gw_recorder_stats *out)
{
    out->events = __atomic_load_n(&gw_rec.events, __ATOMIC_RELAXED);
    out->lost = __atomic_load_n(&gw_rec.lost, __ATOMIC_RELAXED);
    out->chunks = __atomic_load_n(&gw_rec.chunks, __ATOMIC_RELAXED);
    out->bytes = __atomic_load_n(&gw_rec.bytes, __ATOMIC_RELAXED);
}
