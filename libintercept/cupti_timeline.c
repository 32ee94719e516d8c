#include "cupti_timeline.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "gpuwatch/cupti_search.h"
#include "gpuwatch/trace_format.h"
#include "hook_guard.h"
#include "log.h"

/* Kernel5/Memcpy4/Memset3 are prefixes of every later version (CUDA 12.0's CUPTI and up):
 * reading through them works whatever newer struct the loaded library writes. */
#define MIN_CUPTI_API_VERSION 18
#define ACTIVITY_BUFFER_BYTES (4u << 20)

int gw_cupti_on;              /* GPU activity is being collected now (a window is open) */
static int session_on;         /* CUPTI was started and not stopped */
static int timeline_mode;      /* enum gw_timeline_mode */
static uint64_t window_ns, every_ns, full_rate;
static uint64_t window_at;       /* a window's last rate check or its shutting */
static uint64_t records_at;      /* the trace's records then */
static int had_gaps;
CUptiResult (*gw_cupti_push_fn)(CUpti_ExternalCorrelationKind, uint64_t);
CUptiResult (*gw_cupti_pop_fn)(CUpti_ExternalCorrelationKind, uint64_t *);

static struct {
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*result_string)(CUptiResult, const char **);
    CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
} api;

/* The GPU work's kinds, then the external correlation: a sampled timeline's window turns
 * them on last to first and off first to last, so the correlation is collected whenever
 * work is. */
static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])
static int timestamps_are_ours;   /* else CUPTI's CLOCK_REALTIME ns */
static int64_t realtime_minus_trace;

static const char *result_text(CUptiResult result)
{
    const char *text = NULL;
    if (api.result_string && api.result_string(result, &text) == CUPTI_SUCCESS && text)
        return text;
    return "unknown CUPTI error";
}

/* Where the program's own CUDA would find CUPTI (gpuwatch/cupti_search.h, step 2): the
 * directories of the runtimes it loaded, each with the places beside it. */
struct search { char dirs[16][1024]; int count; };

static int note_library_dir(struct dl_phdr_info *object, size_t size, void *data)
{
    struct search *search = data;
    const char *path = object->dlpi_name;
    if (!path || !*path || search->count + (int)GW_CUPTI_BESIDE_RUNTIME > 12)
        return 0;
    const char *base = strrchr(path, '/');
    int runtime = 0;
    for (size_t i = 0; base && i < GW_CUPTI_RUNTIMES; i++)
        runtime |= strstr(base, gw_cupti_runtimes[i]) != NULL;
    if (!runtime)
        return 0;
    int len = (int)(base - path);
    for (size_t i = 0; i < GW_CUPTI_BESIDE_RUNTIME; i++)
        snprintf(search->dirs[search->count++], sizeof search->dirs[0], "%.*s%s", len, path,
                 gw_cupti_beside_runtime[i]);
    return 0;
}

static void *open_in(const struct search *search)
{
    void *handle = NULL;
    for (int i = 0; i < search->count && !handle; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", search->dirs[i], GW_CUPTI_SONAME);
        handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    return handle;
}

/* The order of gpuwatch/cupti_search.h: the user's choice, the program's CUDA, the toolkit
 * CUDA_HOME names, the loader's path, the usual toolkit place. */
static void *load_cupti(const char *override, char *reason, size_t reason_len)
{
    if (override && *override) {
        void *handle = dlopen(override, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            snprintf(reason, reason_len, GW_CUPTI_ENV "=%s: %s", override, dlerror());
        return handle;
    }
    struct search search = {.count = 0};
    dl_iterate_phdr(note_library_dir, &search);
    const char *cuda_home = getenv("CUDA_HOME");
    if (cuda_home && *cuda_home)
        snprintf(search.dirs[search.count++], sizeof search.dirs[0], "%s" GW_CUPTI_UNDER_TOOLKIT,
                 cuda_home);
    void *handle = open_in(&search);
    if (!handle)
        handle = dlopen(GW_CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL);
    search.count = 0;
    for (size_t i = 0; i < GW_CUPTI_LAST_DIRS; i++)
        snprintf(search.dirs[search.count++], sizeof search.dirs[0], "%s", gw_cupti_last_dirs[i]);
    if (!handle)
        handle = open_in(&search);
    if (!handle)
        snprintf(reason, reason_len, "%s not found (set " GW_CUPTI_ENV "=/path/to/%s)",
                 GW_CUPTI_SONAME, GW_CUPTI_SONAME);
    return handle;
}

static int resolve_api(void *handle)
{
#define NEED(field, name) ((api.field = (__typeof__(api.field))dlsym(handle, name)) != NULL)
    int ok = NEED(get_version, "cuptiGetVersion") &
             NEED(register_callbacks, "cuptiActivityRegisterCallbacks") &
             NEED(enable, "cuptiActivityEnable") & NEED(disable, "cuptiActivityDisable") &
             NEED(next_record, "cuptiActivityGetNextRecord") &
             NEED(dropped, "cuptiActivityGetNumDroppedRecords") &
             NEED(flush_all, "cuptiActivityFlushAll") & NEED(subscribe, "cuptiSubscribe") &
             NEED(unsubscribe, "cuptiUnsubscribe") &
             NEED(push, "cuptiActivityPushExternalCorrelationId") &
             NEED(pop, "cuptiActivityPopExternalCorrelationId");
#undef NEED
    api.register_timestamp = (__typeof__(api.register_timestamp))dlsym(
        handle, "cuptiActivityRegisterTimestampCallback");
    api.result_string = (__typeof__(api.result_string))dlsym(handle, "cuptiGetResultString");
    return ok;
}

static uint64_t trace_time(uint64_t cupti_ns)
{
    return timestamps_are_ours ? cupti_ns : cupti_ns - (uint64_t)realtime_minus_trace;
}

static uint64_t CUPTIAPI trace_clock(void) { return gw_now(); }

/* Drained buffers are kept for reuse, a few: a fresh 4 MiB buffer is mapped anew by malloc
 * and CUPTI's first writes to each of its pages fault, a cost paid on the thread whose
 * launch fills it (a graph launch of thousands of kernels fills a buffer in a few calls). */
#define SPARE_BUFFERS 4
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *spare[SPARE_BUFFERS];
static size_t nspare;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint8_t *b = NULL;
    pthread_mutex_lock(&spare_lock);
    if (nspare)
        b = spare[--nspare];
    pthread_mutex_unlock(&spare_lock);
    *buffer = b ? b : aligned_alloc(8, ACTIVITY_BUFFER_BYTES);
    *size = *buffer ? ACTIVITY_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void buffer_release(uint8_t *buffer)
{
    pthread_mutex_lock(&spare_lock);
    if (nspare < SPARE_BUFFERS) {
        spare[nspare++] = buffer;
        buffer = NULL;
    }
    pthread_mutex_unlock(&spare_lock);
    free(buffer);
}

/* CUPTI shares one name string among all records of a kernel, so the pointer and launch
 * geometry identify a shape without hashing the (often long, mangled) name each time. Only
 * the thread draining CUPTI buffers uses it. */
#define SHAPE_CACHE_SLOTS 256
static struct shape_cache_slot {
    const char *name;
    uint32_t dims[6];
    uint32_t dynamic_smem, registers, static_smem;
    unsigned generation;
    uint64_t id;
} shape_cache[SHAPE_CACHE_SLOTS];

static uint64_t kernel_shape(const CUpti_ActivityKernel5 *kernel)
{
    const uint32_t dims[6] = {(uint32_t)kernel->gridX, (uint32_t)kernel->gridY,
                              (uint32_t)kernel->gridZ, (uint32_t)kernel->blockX,
                              (uint32_t)kernel->blockY, (uint32_t)kernel->blockZ};
    uint64_t mix = (uint64_t)(uintptr_t)kernel->name ^ dims[0] * 0x9E3779B1u ^
                   dims[3] * 0x85EBCA77u ^ (uint64_t)kernel->dynamicSharedMemory;
    struct shape_cache_slot *slot = &shape_cache[(mix >> 4) % SHAPE_CACHE_SLOTS];
    if (slot->id && slot->name == kernel->name && slot->generation == gw_recorder_generation() &&
        memcmp(slot->dims, dims, sizeof dims) == 0 &&
        slot->dynamic_smem == (uint32_t)kernel->dynamicSharedMemory &&
        slot->registers == kernel->registersPerThread &&
        slot->static_smem == (uint32_t)kernel->staticSharedMemory)
        return slot->id;
    uint64_t id = gw_rec_shape(0, gw_rec_string(kernel->name), dims,
                               (uint32_t)kernel->dynamicSharedMemory,
                               kernel->registersPerThread, (uint32_t)kernel->staticSharedMemory);
    *slot = (struct shape_cache_slot){kernel->name, {dims[0], dims[1], dims[2], dims[3], dims[4],
                                      dims[5]}, (uint32_t)kernel->dynamicSharedMemory,
                                      kernel->registersPerThread,
                                      (uint32_t)kernel->staticSharedMemory,
                                      gw_recorder_generation(), id};
    return id;
}

/* Records CUPTI could not complete (end 0, or before start) are counted, not written. */
static uint64_t incomplete_records;

static int complete(uint64_t start, uint64_t end)
{
    if (end >= start && start)
        return 1;
    incomplete_records++;
    return 0;
}

/* Which host call issued the work of a CUPTI correlation id, from the external
 * correlation records: CUPTI puts one in the buffer ahead of the records of the work it
 * tags, so the work's records carry the call id themselves (their `call` word) and no
 * CORRELATION record is written. Should a record come first, it is written without, and
 * the external record after it as a CORRELATION record, as before. A slot per id modulo
 * LINK_SLOTS (ids only grow); a link pushed out of its slot before any record used it is
 * written as a CORRELATION record then, so none is lost. Only the thread draining CUPTI
 * buffers uses it (as shape_cache). */
#define LINK_SLOTS 4096u
enum link_state { LINK_EMPTY, LINK_KNOWN, LINK_USED, LINK_WORK_FIRST };
static struct link_slot {
    uint32_t correlation;
    uint32_t state;       /* enum link_state */
    uint64_t call_id;
} links[LINK_SLOTS];
static unsigned links_generation;  /* the recorder generation the slots belong to */

/* A new trace (after a fork) starts with no links: the old ones name the parent's calls. */
static void links_for_this_trace(void)
{
    if (links_generation != gw_recorder_generation()) {
        memset(links, 0, sizeof links);
        links_generation = gw_recorder_generation();
    }
}

static struct link_slot *link_slot(uint32_t correlation)
{
    struct link_slot *slot = &links[correlation % LINK_SLOTS];
    if (slot->correlation != correlation || slot->state == LINK_EMPTY) {
        if (slot->state == LINK_KNOWN) {  /* pushed out before a record used it */
            uint64_t words[2] = {slot->correlation, slot->call_id};
            gw_rec_untimed(GW_REC_CORRELATION, words, 2);
        }
        slot->correlation = correlation;
        slot->state = LINK_EMPTY;
    }
    return slot;
}

/* The call behind a GPU record's correlation id, or 0 (then noted: the link comes later). */
static uint64_t call_of(uint32_t correlation)
{
    struct link_slot *slot = link_slot(correlation);
    if (slot->state == LINK_KNOWN || slot->state == LINK_USED) {
        slot->state = LINK_USED;  /* (kept: a graph's records share their launch's id) */
        return slot->call_id;
    }
    slot->state = LINK_WORK_FIRST;
    return 0;
}

static void record_link(uint32_t correlation, uint64_t call_id)
{
    struct link_slot *slot = link_slot(correlation);
    if (slot->state == LINK_WORK_FIRST) {
        uint64_t words[2] = {correlation, call_id};
        gw_rec_untimed(GW_REC_CORRELATION, words, 2);
        return;
    }
    slot->state = LINK_KNOWN;
    slot->call_id = call_id;
}

static void record_kernel(const CUpti_ActivityKernel5 *kernel)
{
    if (!complete(kernel->start, kernel->end))
        return;
    uint64_t shape = kernel_shape(kernel);
    uint64_t start = trace_time(kernel->start);
    uint64_t words[6] = {trace_time(kernel->end) - start, kernel->correlationId,
                         kernel->deviceId, kernel->streamId, shape, kernel->graphId};
    gw_rec_gpu(GW_REC_GPU_KERNEL, start, words, 6, call_of(kernel->correlationId));
}

static void record_memcpy(const CUpti_ActivityMemcpy4 *copy)
{
    if (!complete(copy->start, copy->end))
        return;
    uint64_t start = trace_time(copy->start);
    uint64_t words[9] = {trace_time(copy->end) - start, copy->correlationId, copy->deviceId,
                         copy->streamId, copy->bytes, copy->copyKind, copy->srcKind,
                         copy->dstKind, copy->graphId};
    gw_rec_gpu(GW_REC_GPU_MEMCPY, start, words, 9, call_of(copy->correlationId));
}

static void record_memset(const CUpti_ActivityMemset3 *set)
{
    if (!complete(set->start, set->end))
        return;
    uint64_t start = trace_time(set->start);
    uint64_t words[7] = {trace_time(set->end) - start, set->correlationId, set->deviceId,
                         set->streamId, set->bytes, set->memoryKind, set->graphId};
    gw_rec_gpu(GW_REC_GPU_MEMSET, start, words, 7, call_of(set->correlationId));
}

/* Runs on CUPTI's thread (or in a flush): translate each record into the trace. */
static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid_size)
{
    int was_in_hook = gw_in_hook;
    gw_in_hook = 1; /* CUPTI's own driver calls are not the program's */
    links_for_this_trace();
    CUpti_Activity *record = NULL;
    while (valid_size && api.next_record(buffer, valid_size, &record) == CUPTI_SUCCESS) {
        switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            record_kernel((const CUpti_ActivityKernel5 *)record);
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            record_memcpy((const CUpti_ActivityMemcpy4 *)record);
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            record_memset((const CUpti_ActivityMemset3 *)record);
            break;
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const CUpti_ActivityExternalCorrelation *link = (const void *)record;
            if (link->externalKind == GW_CORRELATION_KIND)
                record_link(link->correlationId, link->externalId);
            break;
        }
        default:
            break;
        }
    }
    size_t dropped = 0;
    if (api.dropped(context, stream_id, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    dropped += incomplete_records;
    incomplete_records = 0;
    if (dropped) {
        uint64_t words[1] = {dropped};
        gw_rec_timed(GW_REC_GPU_LOST, gw_now(), words, 1);
    }
    buffer_release(buffer);
    gw_in_hook = was_in_hook;
}

static void CUPTIAPI ignore_callback(void *user, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId id, const void *data)
{
}

static void give_up(int status, const char *reason)
{
    gw_recorder_set_cupti(status, reason);
    if (status != GW_CUPTI_DISABLED)
        gw_warn_once(GW_WARN_CUPTI, "GPU timeline off: %s; host-side tracing continues", reason);
}

/* A sampled timeline: opens or shuts the window on the writer's round (flush interval
 * granularity), and says so in the trace: when the change began (`now`, taken before it)
 * and how long it took. A call tags its work when it finds the flag up just after its start
 * (GW_TIMED_GPU), and the flag is up whenever CUPTI collects the correlation with the work:
 * raised before collection starts, lowered after it stops. So, whatever the threads'
 * preemption, a call that began once the opening settled has every record linked, one that
 * ended before the shutting began too, and none before or after the window has one linked.
 * (A call that looked at the flag just before it rose and reached the driver once collection
 * started has its records untagged: written unlinked, as any record whose tag never came.
 * A call tagged as collection stops has no record: the work kinds stop before their
 * correlation.) */
static void set_window(int open, uint64_t now)
{
    if (open) {
        __atomic_store_n(&gw_cupti_on, 1, __ATOMIC_SEQ_CST);
        for (size_t i = NKINDS; i-- > 0;)
            api.enable(kinds[i]);
    } else {
        for (size_t i = 0; i < NKINDS; i++)
            api.disable(kinds[i]);
        __atomic_store_n(&gw_cupti_on, 0, __ATOMIC_SEQ_CST);
    }
    uint64_t words[2] = {(uint64_t)open, gw_now() - now};
    gw_rec_timed(GW_REC_GPU_WINDOW, now, words, 2);
}

/* Open: stays open a window's length, then as long as the trace's record rate over the
 * last window's length is one the whole timeline may cost (full_rate). Shut: opens again a
 * period after the last opening. The first shutting marks the header: the timeline has
 * gaps, which the analysis must know before it reads. */
static int steer_window(void)
{
    uint64_t now = gw_now();
    struct gw_recorder_stats stats;
    gw_recorder_get_stats(&stats);
    int shut = 0;
    if (!__atomic_load_n(&gw_cupti_on, __ATOMIC_ACQUIRE)) {
        if (now - window_at < every_ns - window_ns)
            return 0;
        set_window(1, now);
    } else {
        if (now - window_at < window_ns)
            return 0;
        uint64_t records = stats.events - records_at;
        shut = (double)records * 1e9 > (double)full_rate * (double)(now - window_at);
        if (shut && !had_gaps) {
            had_gaps = 1;
            gw_recorder_add_features(GW_FEAT_GPU_SAMPLED);
        }
        if (shut)
            set_window(0, now);
    }
    window_at = now;
    records_at = stats.events;
    return shut;
}

/* Each writer round takes CUPTI's completed buffers; a signal's flush takes the partly
 * filled ones too, since the process may be about to die, and so does a window's shutting:
 * its records come into the trace now, beside the calls they belong to, not in a later
 * window's buffers. */
static void flush_completed(int urgent)
{
    if (!__atomic_load_n(&session_on, __ATOMIC_ACQUIRE))
        return;
    if (timeline_mode == GW_TIMELINE_SAMPLED && !urgent && steer_window())
        urgent = 1;
    api.flush_all(urgent ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void gw_cupti_start(const struct gw_config *cfg)
{
    char reason[160] = "";
    const char *setting = getenv("GPUWATCH_CUPTI");
    if (setting && strcmp(setting, "0") == 0) {
        give_up(GW_CUPTI_DISABLED, "disabled by GPUWATCH_CUPTI=0");
        return;
    }
    if (cfg->timeline == GW_TIMELINE_OFF) {
        give_up(GW_CUPTI_DISABLED, "disabled by GPUWATCH_TIMELINE=off");
        return;
    }
    void *handle = load_cupti(setting, reason, sizeof reason);
    if (!handle) {
        give_up(GW_CUPTI_NOT_FOUND, reason);
        return;
    }
    uint32_t version = 0;
    if (!resolve_api(handle) || api.get_version(&version) != CUPTI_SUCCESS ||
        version < MIN_CUPTI_API_VERSION) {
        snprintf(reason, sizeof reason, "CUPTI API version %u lacks what gpuwatch needs "
                 "(version %d or newer)", version, MIN_CUPTI_API_VERSION);
        give_up(GW_CUPTI_INCOMPATIBLE, reason);
        return;
    }
    /* Another profiler (torch.profiler's Kineto, Nsight Systems) holding CUPTI shows as a
     * refused subscription; we only test for it, so a profiler started later is not
     * locked out by us. */
    CUpti_SubscriberHandle subscriber;
    CUptiResult result = api.subscribe(&subscriber, ignore_callback, NULL);
    if (result == CUPTI_SUCCESS)
        api.unsubscribe(subscriber);
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        give_up(GW_CUPTI_IN_USE, "another profiler (torch.profiler, Nsight Systems) holds CUPTI");
        return;
    }
    timestamps_are_ours = api.register_timestamp &&
                          api.register_timestamp(trace_clock) == CUPTI_SUCCESS;
    realtime_minus_trace = (int64_t)(gw_realtime_ns() - gw_now());
    result = api.register_callbacks(buffer_requested, buffer_completed);
    uint64_t collecting_from = gw_now();
    for (size_t i = NKINDS; i-- > 0 && result == CUPTI_SUCCESS;)
        result = api.enable(kinds[i]);
    if (result != CUPTI_SUCCESS) {
        for (size_t i = 0; i < NKINDS; i++)
            api.disable(kinds[i]);
        snprintf(reason, sizeof reason, "CUPTI refused activity collection: %s",
                 result_text(result));
        give_up(result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? GW_CUPTI_IN_USE
                                                                          : GW_CUPTI_FAILED,
                reason);
        return;
    }
    timeline_mode = cfg->timeline;
    window_ns = (uint64_t)cfg->window_ms * 1000000u;
    every_ns = (uint64_t)cfg->every_ms * 1000000u;
    full_rate = cfg->full_rate;
    int n = snprintf(reason, sizeof reason, "CUPTI API version %u%s", version,
                     timestamps_are_ours ? "" : ", CLOCK_REALTIME timestamps");
    if (timeline_mode == GW_TIMELINE_SAMPLED && n > 0 && (size_t)n < sizeof reason)
        snprintf(reason + n, sizeof reason - (size_t)n,
                 ", sampled above %u records/s: %u ms every %u ms", cfg->full_rate,
                 cfg->window_ms, cfg->every_ms);
    gw_cupti_push_fn = api.push;
    gw_cupti_pop_fn = api.pop;
    gw_recorder_set_cupti(GW_CUPTI_ACTIVE, reason);
    struct gw_recorder_stats stats;
    gw_recorder_get_stats(&stats);
    window_at = gw_now();
    records_at = stats.events;
    __atomic_store_n(&session_on, 1, __ATOMIC_RELEASE);
    gw_writer_add_round_hook(flush_completed);
    __atomic_store_n(&gw_cupti_on, 1, __ATOMIC_SEQ_CST);
    /* the first window: from when collection began, settled once calls tag */
    if (timeline_mode == GW_TIMELINE_SAMPLED)
        gw_rec_timed(GW_REC_GPU_WINDOW, collecting_from,
                     (const uint64_t[]){1, gw_now() - collecting_from}, 2);
    gw_debug("GPU timeline on: %s", reason);
}

void gw_cupti_stop(void)
{
    if (!__atomic_exchange_n(&session_on, 0, __ATOMIC_ACQ_REL))
        return;
    __atomic_store_n(&gw_cupti_on, 0, __ATOMIC_RELEASE);
    api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (size_t i = 0; i < NKINDS; i++)
        api.disable(kinds[i]);
}

void gw_cupti_after_fork_child(void)
{
    /* CUPTI's state belongs to the parent's CUDA session, which the child cannot use. */
    __atomic_store_n(&gw_cupti_on, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&session_on, 0, __ATOMIC_RELAXED);
    had_gaps = 0;
    pthread_mutex_init(&spare_lock, NULL);  /* (another thread may have held it at fork) */
}
