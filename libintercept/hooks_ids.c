/* Per-thread caches in front of the recorder's interning, so a launch on a known stream
 * with a known shape takes no lock. */
#include <stdlib.h>
#include <string.h>

#include "hooks.h"

#define SHAPE_SLOTS 64
#define STREAM_SLOTS 16

struct shape_slot {
    uint64_t func;
    uint32_t dims[6];
    uint32_t shared_mem;
    uint64_t id;
};

struct stream_slot {
    uint64_t handle;
    uint64_t id;
};

struct id_cache {
    unsigned generation;
    struct shape_slot shapes[SHAPE_SLOTS];
    struct stream_slot streams[STREAM_SLOTS];
    uint64_t per_thread_stream;   /* this thread's per-thread default stream (0: not yet) */
};

/* The _ptsz/_ptds twins, from the one table: there a NULL stream is the calling thread's
 * per-thread default stream, not the legacy one. */
static const uint8_t per_thread_api[GW_API_ID_LIMIT] = {
#define GW_API(id, name, family, base, version, per_thread, async) [id] = per_thread,
#include "gpuwatch/api_list.h"
#undef GW_API
};

/* CUDA's stream handles that are no stream object (cuda.h: CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD) */
#define LEGACY_STREAM_HANDLE 0x1u
#define PER_THREAD_STREAM_HANDLE 0x2u

static GW_TLS struct id_cache *tls_ids;

/* The cache, emptied when a fork made its ids belong to the parent's file. */
static inline struct id_cache *cache(void)
{
    struct id_cache *ids = tls_ids;
    unsigned generation = gw_recorder_generation();
    if (GW_LIKELY(ids && ids->generation == generation))
        return ids;
    if (!ids && !(ids = tls_ids = malloc(sizeof *ids)))
        return NULL;
    memset(ids, 0, sizeof *ids);
    ids->generation = generation;
    return ids;
}

/* First sight of a stream in this trace: define it under key with the id CUPTI's GPU
 * records use, asked of the driver for the stream `handle` names. */
static uint64_t define_stream(uint64_t key, uint64_t handle)
{
    uint64_t id = gw_rec_stream_known(key);
    if (id)
        return id;
    unsigned long long cupti_id = 0;
    CUresult (*get_id)(CUstream, unsigned long long *) =
        (CUresult(*)(CUstream, unsigned long long *))gw_driver_symbol("cuStreamGetId");
    if (!get_id || get_id((CUstream)(uintptr_t)handle, &cupti_id) != CUDA_SUCCESS)
        cupti_id = 0;
    return gw_rec_stream(key, cupti_id);
}

/* The calling thread's per-thread default stream: one stream per thread, its key a number
 * no stream object's address can be (its low bits 0x2; objects are aligned). Its CUPTI id
 * is the driver's answer for CU_STREAM_PER_THREAD on this thread. */
static uint64_t per_thread_stream_id(struct id_cache *ids)
{
    if (ids && ids->per_thread_stream)
        return ids->per_thread_stream;
    static uint64_t threads_seen;
    uint64_t key = __atomic_add_fetch(&threads_seen, 1, __ATOMIC_RELAXED) << 4 |
                   PER_THREAD_STREAM_HANDLE;
    uint64_t id = define_stream(key, PER_THREAD_STREAM_HANDLE);
    if (ids)
        ids->per_thread_stream = id;
    return id;
}

/* A stream not in its slot (or the special handles, or no cache on this thread yet): apart
 * from gw_stream_id, so that a hit calls nothing and saves no registers. */
static __attribute__((noinline)) uint64_t stream_miss(uint64_t handle, unsigned api)
{
    if (handle <= PER_THREAD_STREAM_HANDLE) {
        if (handle == PER_THREAD_STREAM_HANDLE ||
            (!handle && api < GW_API_ID_LIMIT && per_thread_api[api]))
            return per_thread_stream_id(cache());
        return 0;
    }
    struct id_cache *ids = cache();
    if (!ids)
        return define_stream(handle, handle);
    struct stream_slot *slot = &ids->streams[(handle >> 4) % STREAM_SLOTS];
    if (slot->handle != handle) {
        slot->id = define_stream(handle, handle);
        slot->handle = handle;
    }
    return slot->id;
}

uint64_t gw_stream_id(CUstream stream, unsigned api)
{
    uint64_t handle = gw_u64(stream);
    /* NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD in one test: a created stream, the
     * common case, pays one branch */
    _Static_assert(LEGACY_STREAM_HANDLE < PER_THREAD_STREAM_HANDLE, "the special handles");
    struct id_cache *ids = tls_ids;
    if (GW_LIKELY(handle > PER_THREAD_STREAM_HANDLE && ids &&
                  ids->generation == gw_recorder_generation())) {
        const struct stream_slot *slot = &ids->streams[(handle >> 4) % STREAM_SLOTS];
        if (GW_LIKELY(slot->handle == handle))
            return slot->id;
    }
    return stream_miss(handle, api);
}

uint64_t gw_name_of_handle(uint64_t handle)
{
    uint64_t name_id = gw_rec_handle_name(handle);
    if (name_id)
        return name_id;
    const char *name = NULL;
    __typeof__(&cuFuncGetName) func_name = GW_REAL(cuFuncGetName);
    __typeof__(&cuKernelGetName) kernel_name = GW_REAL(cuKernelGetName);
    if (!(func_name && func_name(&name, (CUfunction)(uintptr_t)handle) == CUDA_SUCCESS && name))
        if (!(kernel_name && kernel_name(&name, (CUkernel)(uintptr_t)handle) == CUDA_SUCCESS))
            name = NULL;
    if (!name)
        return 0;
    name_id = gw_rec_string(name);
    gw_rec_set_handle_name(handle, name_id);
    return name_id;
}

static inline uint64_t word_at(const uint32_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline struct shape_slot *shape_slot_of(struct id_cache *ids, uint64_t handle,
                                               const uint32_t dims[6], uint32_t shared_mem)
{
    uint64_t mix = handle ^ dims[0] * 0x9E3779B1u ^ dims[3] * 0x85EBCA77u ^ shared_mem;
    return &ids->shapes[(mix >> 4) % SHAPE_SLOTS];
}

/* A launch of a shape not cached (or no cache yet on this thread, or one from before a
 * fork): defined (once per file), then kept in its slot. Apart from gw_shape_id, so that a
 * hit calls nothing and saves no registers. */
static __attribute__((noinline)) uint64_t shape_miss(uint64_t handle, const uint32_t dims[6],
                                                     uint32_t shared_mem)
{
    struct id_cache *ids = cache();
    uint64_t id = gw_rec_shape(handle, gw_name_of_handle(handle), dims, shared_mem, 0, 0);
    if (ids) {
        struct shape_slot *slot = shape_slot_of(ids, handle, dims, shared_mem);
        slot->func = handle;
        memcpy(slot->dims, dims, sizeof slot->dims);
        slot->shared_mem = shared_mem;
        slot->id = id;
    }
    return id;
}

uint64_t gw_shape_id(CUfunction func, const uint32_t dims[6], uint32_t shared_mem)
{
    uint64_t handle = gw_u64(func);
    struct id_cache *ids = tls_ids;
    if (GW_LIKELY(ids && ids->generation == gw_recorder_generation())) {
        const struct shape_slot *slot = shape_slot_of(ids, handle, dims, shared_mem);
        /* (the six dimensions as three words: no call to memcmp) */
        if (slot->id && slot->func == handle && slot->shared_mem == shared_mem &&
            !((word_at(dims) ^ word_at(slot->dims)) | (word_at(dims + 2) ^ word_at(slot->dims + 2)) |
              (word_at(dims + 4) ^ word_at(slot->dims + 4))))
            return slot->id;
    }
    return shape_miss(handle, dims, shared_mem);
}
