/*
 * fakecupti: the activity API.
 *
 * Source of the records: the simulated driver's test-only sink (fakecuda_activity.h), found
 * with dlsym when a supported kind is first enabled. Each sink call is one driver API call
 * (graph launches and memcpy batches mark their further ops continues_call): it gets a fresh
 * correlation id, then, if EXTERNAL_CORRELATION is enabled and the calling thread has pushed
 * external ids, one CUpti_ActivityExternalCorrelation record per kind with a pushed id (the
 * top of that kind's stack), then the kernel / memcpy / memset record of the enabled kind.
 *
 * Times: the sink's start/end are CLOCK_MONOTONIC; each record is shifted by
 * (timestamp callback, or CLOCK_REALTIME) - CLOCK_MONOTONIC, both read at sink time,
 * monotonic first (so a converted time is never earlier than the same instant read later),
 * and read again until the two reads are within a microsecond (a few tries): a converted
 * time is late by no more than the tries' shortest span.
 *
 * Buffers: one current buffer receives records under a lock; a new one comes from the
 * request callback (called without the lock). A buffer is full at maxNumRecords (or
 * FAKECUPTI_BUFFER_LIMIT) records, or when the largest record no longer fits; full buffers
 * go to a FIFO that a worker thread hands to the complete callback. cuptiActivityFlushAll
 * retires the current buffer and delivers the FIFO on the calling thread; deliveries are
 * serialised (one complete callback at a time, in order).
 */
#include "fakecupti.h"

#include "fakecuda_activity.h"

#include <dlfcn.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN8(x) (((x) + (size_t)7) & ~(size_t)7)

#define MAX4(a, b, c, d) ((a) > (b) ? ((a) > (c) ? ((a) > (d) ? (a) : (d)) : ((c) > (d) ? (c) : (d))) \
                                    : ((b) > (c) ? ((b) > (d) ? (b) : (d)) : ((c) > (d) ? (c) : (d))))
#define MAX_RECORD MAX4(sizeof(CUpti_ActivityKernel10), sizeof(CUpti_ActivityMemcpy6), \
                        sizeof(CUpti_ActivityMemset4), sizeof(CUpti_ActivityExternalCorrelation))

_Static_assert(sizeof(CUpti_ActivityKernel10) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(CUpti_ActivityMemcpy6) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(CUpti_ActivityMemset4) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(CUpti_ActivityExternalCorrelation) % 8 == 0, "8-byte multiples");

/* ---- enabled kinds and callbacks ---- */

static atomic_int en_kernel, en_concurrent, en_memcpy, en_memset, en_external;
static _Atomic(CUpti_BuffersCallbackRequestFunc) request_cb;
static _Atomic(CUpti_BuffersCallbackCompleteFunc) complete_cb;

static _Atomic uint32_t next_correlation = 1;
static _Atomic int64_t next_grid = 1;

/* ---- buffers (guarded by st_lock) ---- */

typedef struct fk_buf {
    uint8_t *p;
    size_t size, used, count, max;
    struct fk_buf *next;
} fk_buf;

static pthread_mutex_t st_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t full_cv = PTHREAD_COND_INITIALIZER;
static fk_buf *cur;                       /* receiving records */
static fk_buf *spare;                     /* requested, unused yet (a concurrent request won) */
static fk_buf *full_head, *full_tail;     /* waiting for the complete callback, in order */
static size_t dropped;
static int worker_state;                  /* 0 none, 1 running, -1 could not start */

static pthread_mutex_t deliver_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int tls_delivering;       /* inside our complete callback on this thread */

/* ---- per-thread state: external correlation stacks, the last correlation id ---- */

typedef struct idstack {
    uint64_t *v;
    size_t n, cap;
} idstack;

typedef struct fk_thread {
    idstack ext[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
    size_t ext_total;
} fk_thread;

static __thread fk_thread *tls_thread;
static __thread uint32_t tls_correlation; /* of this thread's last driver API call */
static __thread int64_t tls_offset;       /* ... its records' clock shift */
static __thread const char *tls_name_in;  /* ... its last kernel name, and that interned */
static __thread const char *tls_name;
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void thread_free(void *p)
{
    fk_thread *t = p;
    for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++)
        free(t->ext[k].v);
    free(t);
}

static void thread_key_make(void) { pthread_key_create(&thread_key, thread_free); }

static fk_thread *thread_state(void)
{
    if (!tls_thread) {
        pthread_once(&thread_key_once, thread_key_make);
        tls_thread = calloc(1, sizeof *tls_thread);
        if (tls_thread)
            pthread_setspecific(thread_key, tls_thread);
    }
    return tls_thread;
}

/* ---- kernel names: interned for the life of the process ---- */

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static const char **names;
static size_t names_cap, names_n;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *intern(const char *s)
{
    if (!s)
        return NULL;
    const char *out = NULL;
    pthread_mutex_lock(&names_lock);
    if ((names_n + 1) * 2 > names_cap) {
        size_t cap = names_cap ? names_cap * 2 : 256;
        const char **v = calloc(cap, sizeof *v);
        if (v) {
            for (size_t i = 0; i < names_cap; i++)
                if (names[i]) {
                    size_t j = hash_str(names[i]) & (cap - 1);
                    while (v[j])
                        j = (j + 1) & (cap - 1);
                    v[j] = names[i];
                }
            free(names);
            names = v;
            names_cap = cap;
        }
    }
    if (names_cap) {
        size_t j = hash_str(s) & (names_cap - 1);
        while (names[j] && strcmp(names[j], s) != 0)
            j = (j + 1) & (names_cap - 1);
        if (!names[j] && names_n + 1 < names_cap && (names[j] = strdup(s)))
            names_n++;
        out = names[j];
    }
    pthread_mutex_unlock(&names_lock);
    return out;
}

/* ---- delivery ---- */

static void deliver_pending(void)
{
    pthread_mutex_lock(&deliver_lock);
    tls_delivering = 1;
    for (;;) {
        pthread_mutex_lock(&st_lock);
        fk_buf *b = full_head;
        if (b) {
            full_head = b->next;
            if (!full_head)
                full_tail = NULL;
        }
        pthread_mutex_unlock(&st_lock);
        if (!b)
            break;
        CUpti_BuffersCallbackCompleteFunc cb = atomic_load(&complete_cb);
        if (cb)
            cb(NULL, 0, b->p, b->size, b->count ? b->used : 0);
        free(b);
    }
    tls_delivering = 0;
    pthread_mutex_unlock(&deliver_lock);
}

static void *worker_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&st_lock);
        while (!full_head)
            pthread_cond_wait(&full_cv, &st_lock);
        pthread_mutex_unlock(&st_lock);
        deliver_pending();
    }
    return NULL;
}

static void atfork_child(void)
{
    worker_state = 0;       /* the worker did not come along; start another when needed */
}

/* with st_lock held */
static void start_worker(void)
{
    if (worker_state)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the program's signals are not ours */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    worker_state = pthread_create(&th, &attr, worker_main, NULL) == 0 ? 1 : -1;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (worker_state < 0)
        fk_warn("cannot start the buffer worker thread; buffers are delivered at flush");
    static int atfork_done;
    if (!atfork_done) {
        atfork_done = 1;
        pthread_atfork(NULL, NULL, atfork_child);
    }
}

/* with st_lock held: queue b for the complete callback (also empty ones: validSize 0) */
static void retire(fk_buf *b)
{
    b->next = NULL;
    if (full_tail)
        full_tail->next = b;
    else
        full_head = b;
    full_tail = b;
    start_worker();
    pthread_cond_signal(&full_cv);
}

static int buf_has_room(const fk_buf *b, size_t rsz)
{
    return b->used + rsz <= b->size && (!b->max || b->count < b->max);
}

/* with st_lock held; may drop and retake it to call the request callback */
static void put_record(const void *rec, size_t rsz)
{
    for (;;) {
        if (cur && buf_has_room(cur, rsz)) {
            memcpy(cur->p + cur->used, rec, rsz);
            cur->used += rsz;
            cur->count++;
            if ((cur->max && cur->count >= cur->max) || cur->used + MAX_RECORD > cur->size) {
                retire(cur);
                cur = NULL;
            }
            return;
        }
        if (cur) {              /* cannot happen after the check above, but be safe */
            retire(cur);
            cur = NULL;
        }
        if (spare) {
            cur = spare;
            spare = cur->next;
            continue;
        }
        CUpti_BuffersCallbackRequestFunc req = atomic_load(&request_cb);
        if (!req) {
            dropped++;
            return;
        }
        uint8_t *p = NULL;
        size_t size = 0, max = 0;
        pthread_mutex_unlock(&st_lock);
        req(&p, &size, &max);
        fk_buf *b = p ? calloc(1, sizeof *b) : NULL;
        pthread_mutex_lock(&st_lock);
        if (!b) {
            dropped++;          /* the client declined: this record is lost */
            return;
        }
        b->p = p;
        b->size = size;
        b->used = (size_t)(ALIGN8((uintptr_t)p) - (uintptr_t)p);
        b->max = max;
        if (fk_cfg.buffer_limit && (!b->max || b->max > fk_cfg.buffer_limit))
            b->max = fk_cfg.buffer_limit;
        if (b->used + MAX_RECORD > size) {
            retire(b);          /* too small for a record: handed back at once, empty */
            dropped++;
            return;
        }
        if (cur) {              /* another thread installed one meanwhile */
            b->next = spare;
            spare = b;
        } else {
            cur = b;
        }
    }
}

/* ---- the sink: runs inside the simulated driver's API call, on the caller's thread ---- */

static void on_activity(const struct fakecuda_activity *a)
{
    uint32_t corr;
    int new_call = !a->continues_call || !tls_correlation;
    if (new_call) {
        corr = atomic_fetch_add_explicit(&next_correlation, 1, memory_order_relaxed);
        if (!corr)      /* 32-bit wrap: 0 means "none" */
            corr = atomic_fetch_add_explicit(&next_correlation, 1, memory_order_relaxed);
        tls_correlation = corr;
    } else {
        corr = tls_correlation;
    }

    int want = 0;
    switch (a->kind) {
    case FAKECUDA_ACTIVITY_KERNEL:
        want = atomic_load_explicit(&en_concurrent, memory_order_relaxed) ||
               atomic_load_explicit(&en_kernel, memory_order_relaxed);
        break;
    case FAKECUDA_ACTIVITY_MEMCPY:
        want = atomic_load_explicit(&en_memcpy, memory_order_relaxed);
        break;
    case FAKECUDA_ACTIVITY_MEMSET:
        want = atomic_load_explicit(&en_memset, memory_order_relaxed);
        break;
    }
    fk_thread *t = tls_thread;
    int ext = new_call && t && t->ext_total &&
              atomic_load_explicit(&en_external, memory_order_relaxed);
    if (!want && !ext)
        return;

    /* a call's further ops (a graph's nodes) share its first op's clock offset and name
     * lookups: a real CUPTI stamps graph nodes on the GPU, at no cost to the launching
     * thread, so the fake keeps its own per-record cost there low */
    int64_t offset = tls_offset;
    if (new_call) {
        /* monotonic first, the other clock, monotonic again: a thread preempted between
         * the first two reads would shift every record of the call late by that long
         * (beside a CPU hog a read-back's copy came out 2.8 us after its blocking call had
         * returned); the try that took least, of a few, bounds it */
        CUpti_TimestampCallbackFunc ts =
            atomic_load_explicit(&fk_timestamp_cb, memory_order_acquire);
        int64_t best_span = INT64_MAX;
        for (int try = 0; try < 8 && best_span > 1000; try++) {
            int64_t mono = fk_mono_ns();
            int64_t other = ts ? (int64_t)ts() : fk_realtime_ns();
            int64_t span = fk_mono_ns() - mono;
            if (span < best_span) {
                best_span = span;
                offset = other - mono;
            }
        }
        tls_offset = offset;
    }
    uint64_t start = (uint64_t)(a->start_ns + offset), end = (uint64_t)(a->end_ns + offset);

    union {
        CUpti_ActivityKernel10 k;
        CUpti_ActivityMemcpy6 c;
        CUpti_ActivityMemset4 s;
    } r;
    size_t rsz = 0;
    memset(&r, 0, sizeof r);
    if (want && a->kind == FAKECUDA_ACTIVITY_KERNEL) {
        CUpti_ActivityKernel10 *k = &r.k;
        k->kind = atomic_load_explicit(&en_concurrent, memory_order_relaxed)
                      ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
        k->registersPerThread = (uint16_t)a->registers;
        k->partitionedGlobalCacheRequested = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_UNKNOWN;
        k->partitionedGlobalCacheExecuted = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_UNKNOWN;
        k->start = start;
        k->end = end;
        k->completed = end;
        k->deviceId = a->device;
        k->contextId = 1;
        k->streamId = (uint32_t)a->stream_id;
        k->gridX = (int32_t)a->grid_x;
        k->gridY = (int32_t)a->grid_y;
        k->gridZ = (int32_t)a->grid_z;
        k->blockX = (int32_t)a->block_x;
        k->blockY = (int32_t)a->block_y;
        k->blockZ = (int32_t)a->block_z;
        k->staticSharedMemory = (int32_t)a->static_smem;
        k->dynamicSharedMemory = (int32_t)a->dynamic_smem;
        k->correlationId = corr;
        k->gridId = atomic_fetch_add_explicit(&next_grid, 1, memory_order_relaxed);
        if (new_call || a->name != tls_name_in) {  /* (a name is valid during one call) */
            tls_name_in = a->name;
            tls_name = intern(a->name);
        }
        k->name = tls_name;
        k->queued = CUPTI_TIMESTAMP_UNKNOWN;
        k->submitted = CUPTI_TIMESTAMP_UNKNOWN;
        k->launchType = a->cooperative ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE
                                       : CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
        k->sharedMemoryExecuted = a->static_smem + a->dynamic_smem;
        k->graphNodeId = a->graph_node_id;
        k->shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
        k->graphId = a->graph_id;
        k->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
        rsz = sizeof *k;
    } else if (want && a->kind == FAKECUDA_ACTIVITY_MEMCPY) {
        CUpti_ActivityMemcpy6 *c = &r.c;
        c->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        c->copyKind = (uint8_t)a->copy_kind;
        c->srcKind = (uint8_t)a->src_kind;
        c->dstKind = (uint8_t)a->dst_kind;
        c->flags = a->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
        c->bytes = a->bytes;
        c->start = start;
        c->end = end;
        c->deviceId = a->device;
        c->contextId = 1;
        c->streamId = (uint32_t)a->stream_id;
        c->correlationId = corr;
        c->graphNodeId = a->graph_node_id;
        c->graphId = a->graph_id;
        c->channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
        c->copyCount = 1;
        rsz = sizeof *c;
    } else if (want && a->kind == FAKECUDA_ACTIVITY_MEMSET) {
        CUpti_ActivityMemset4 *s = &r.s;
        s->kind = CUPTI_ACTIVITY_KIND_MEMSET;
        s->value = a->value;
        s->bytes = a->bytes;
        s->start = start;
        s->end = end;
        s->deviceId = a->device;
        s->contextId = 1;
        s->streamId = (uint32_t)a->stream_id;
        s->correlationId = corr;
        s->flags = a->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
        s->memoryKind = (uint16_t)a->mem_kind;
        s->graphNodeId = a->graph_node_id;
        s->graphId = a->graph_id;
        s->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
        rsz = sizeof *s;
    }

    pthread_mutex_lock(&st_lock);
    if (ext) {
        for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
            const idstack *st = &t->ext[k];
            if (!st->n)
                continue;
            CUpti_ActivityExternalCorrelation e;
            memset(&e, 0, sizeof e);
            e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            e.externalKind = (CUpti_ExternalCorrelationKind)k;
            e.externalId = st->v[st->n - 1];
            e.correlationId = corr;
            put_record(&e, sizeof e);
        }
    }
    if (rsz)
        put_record(&r, rsz);
    pthread_mutex_unlock(&st_lock);
}

/* ---- attaching to the simulated driver ---- */

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static int attached;

static void (*find_setter(void))(fakecuda_activity_sink_fn)
{
    void *sym = dlsym(RTLD_DEFAULT, "fakecuda_set_activity_sink");
    if (!sym) {
        /* loaded RTLD_LOCAL (libcudart does that): ask the library itself, never load it */
        void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
        if (h) {
            sym = dlsym(h, "fakecuda_set_activity_sink");
            dlclose(h);
        }
    }
    void (*fn)(fakecuda_activity_sink_fn);
    memcpy(&fn, &sym, sizeof fn);       /* object pointer -> function pointer (POSIX) */
    return fn;
}

static int any_enabled(void)
{
    return atomic_load(&en_kernel) || atomic_load(&en_concurrent) || atomic_load(&en_memcpy) ||
           atomic_load(&en_memset) || atomic_load(&en_external);
}

/* install the sink when a supported kind is on, remove it when none is; retried on every
 * enable and flush until the driver is there */
static void update_sink(void)
{
    pthread_mutex_lock(&attach_lock);
    int want = any_enabled() && !fk_cfg.in_use && !fk_cfg.no_records;
    if (want != attached) {
        void (*set)(fakecuda_activity_sink_fn) = find_setter();
        if (set) {
            set(want ? on_activity : NULL);
            attached = want;
        }
    }
    pthread_mutex_unlock(&attach_lock);
}

/* ---- API ---- */

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    fk_config_load();
    if (!funcBufferRequested || !funcBufferCompleted)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (fk_cfg.in_use)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    atomic_store(&request_cb, funcBufferRequested);
    atomic_store(&complete_cb, funcBufferCompleted);
    return CUPTI_SUCCESS;
}

static atomic_int *kind_flag(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL: return &en_kernel;
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return &en_concurrent;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return &en_memcpy;
    case CUPTI_ACTIVITY_KIND_MEMSET: return &en_memset;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return &en_external;
    default: return NULL;
    }
}

static CUptiResult set_kind(CUpti_ActivityKind kind, int on)
{
    fk_config_load();
    if ((int)kind <= (int)CUPTI_ACTIVITY_KIND_INVALID || (int)kind >= (int)CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    atomic_int *flag = kind_flag(kind);
    if (!flag)
        return CUPTI_SUCCESS;       /* a kind the fake does not simulate: accepted, no records */
    atomic_store(flag, on);
    update_sink();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) { return set_kind(kind, 1); }
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) { return set_kind(kind, 0); }

static size_t record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    default:
        return 0;
    }
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity **record)
{
    if (!buffer || !record)
        return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t *end = buffer + validBufferSizeBytes, *p;
    if (!*record) {
        p = buffer + (ALIGN8((uintptr_t)buffer) - (uintptr_t)buffer);
    } else {
        size_t sz = record_size((*record)->kind);
        if (!sz)
            return CUPTI_ERROR_INVALID_KIND;
        p = (uint8_t *)*record + sz;
    }
    if (p >= end)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    if ((size_t)(end - p) < sizeof(CUpti_ActivityKind))
        return CUPTI_ERROR_INVALID_KIND;
    size_t sz = record_size(((CUpti_Activity *)p)->kind);
    if (!sz || (size_t)(end - p) < sz)
        return CUPTI_ERROR_INVALID_KIND;
    *record = (CUpti_Activity *)p;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                       size_t *count)
{
    (void)context;
    (void)streamId;
    if (!count)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&st_lock);
    *count = dropped;
    dropped = 0;
    pthread_mutex_unlock(&st_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;     /* 0 and CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: every record is complete here */
    if (!atomic_load(&request_cb) || !atomic_load(&complete_cb))
        return CUPTI_ERROR_INVALID_OPERATION;
    update_sink();
    if (tls_delivering)
        return CUPTI_SUCCESS;   /* from inside our own complete callback: nothing to wait for */
    pthread_mutex_lock(&st_lock);
    if (cur && cur->count) {
        retire(cur);
        cur = NULL;
    }
    pthread_mutex_unlock(&st_lock);
    deliver_pending();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time)
{
    (void)time;     /* accepted; full buffers are delivered as they fill anyway */
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id)
{
    if ((int)kind <= (int)CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
        (int)kind >= (int)CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    fk_thread *t = thread_state();
    if (!t)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    idstack *st = &t->ext[kind];
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 16;
        uint64_t *v = realloc(st->v, cap * sizeof *v);
        if (!v)
            return CUPTI_ERROR_OUT_OF_MEMORY;
        st->v = v;
        st->cap = cap;
    }
    st->v[st->n++] = id;
    t->ext_total++;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t *lastId)
{
    if ((int)kind <= (int)CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
        (int)kind >= (int)CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    fk_thread *t = tls_thread;
    if (!t || !t->ext[kind].n)
        return CUPTI_ERROR_QUEUE_EMPTY;
    idstack *st = &t->ext[kind];
    uint64_t id = st->v[--st->n];
    t->ext_total--;
    if (lastId)
        *lastId = id;
    return CUPTI_SUCCESS;
}

void fk_activity_finalize(void)
{
    atomic_store(&en_kernel, 0);
    atomic_store(&en_concurrent, 0);
    atomic_store(&en_memcpy, 0);
    atomic_store(&en_memset, 0);
    atomic_store(&en_external, 0);
    update_sink();
    if (!tls_delivering) {
        /* everything with records, then every buffer still held, empty (validSize 0), so
         * the client can free it */
        pthread_mutex_lock(&st_lock);
        if (cur) {
            retire(cur);
            cur = NULL;
        }
        while (spare) {
            fk_buf *b = spare;
            spare = b->next;
            retire(b);
        }
        pthread_mutex_unlock(&st_lock);
        deliver_pending();
    }
    atomic_store(&request_cb, NULL);
    atomic_store(&complete_cb, NULL);
}
