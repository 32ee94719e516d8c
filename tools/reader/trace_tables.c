/* The reader's definition tables: strings, shapes, streams, devices, threads, clocks. */
#include "trace_reader_internal.h"

#include <stdlib.h>
#include <string.h>

/* Makes room for one more element in a growable array. */
static int reserve(void **items, size_t *cap, size_t count, size_t size)
{
    if (count < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *grown = realloc(*items, ncap * size);
    if (!grown)
        return -1;
    *items = grown;
    *cap = ncap;
    return 0;
}

const char *gw_tables_add_string(struct gw_reader *r, uint64_t id, const uint8_t *bytes,
                                 size_t len)
{
    uint64_t *slot = gw_map_get(&r->string_ids, id);
    if (slot) {
        struct gw_string_entry *e = &r->strings[*slot];
        if (e->len == len && memcmp(e->text, bytes, len) == 0)
            return e->text;
    }
    /* A redefinition gets a new entry: texts handed out earlier stay valid. */
    if (reserve((void **)&r->strings, &r->strings_cap, r->nstrings, sizeof *r->strings))
        return NULL;
    char *text = malloc(len + 1);
    if (!text)
        return NULL;
    if (len)
        memcpy(text, bytes, len);
    text[len] = 0;
    if (gw_map_put(&r->string_ids, id, r->nstrings) != 0) {
        free(text);
        return NULL;
    }
    r->strings[r->nstrings++] = (struct gw_string_entry){text, len};
    return text;
}

void gw_tables_add_shape(struct gw_reader *r, const struct gw_shape *shape)
{
    uint64_t *slot = gw_map_get(&r->shape_ids, shape->id);
    if (slot) {
        r->shapes[*slot] = *shape;
        return;
    }
    if (reserve((void **)&r->shapes, &r->shapes_cap, r->nshapes, sizeof *r->shapes) ||
        gw_map_put(&r->shape_ids, shape->id, r->nshapes) != 0)
        return;
    r->shapes[r->nshapes++] = *shape;
}

void gw_tables_add_device(struct gw_reader *r, const struct gw_device_def *device)
{
    uint64_t *slot = gw_map_get(&r->device_ids, device->ordinal);
    if (slot) {
        r->devices[*slot] = *device;
        return;
    }
    if (reserve((void **)&r->devices, &r->devices_cap, r->ndevices, sizeof *r->devices) ||
        gw_map_put(&r->device_ids, device->ordinal, r->ndevices) != 0)
        return;
    r->devices[r->ndevices++] = *device;
}

void gw_tables_add_clock(struct gw_reader *r, const struct gw_clock_point *point)
{
    uint64_t *slot = gw_map_get(&r->clock_ids, point->trace_ns);
    if (slot) {
        r->clocks[*slot] = *point;
        return;
    }
    if (reserve((void **)&r->clocks, &r->clocks_cap, r->nclocks, sizeof *r->clocks) ||
        gw_map_put(&r->clock_ids, point->trace_ns, r->nclocks) != 0)
        return;
    r->clocks[r->nclocks++] = *point;
}

void gw_tables_add_stream(struct gw_reader *r, uint64_t id, uint64_t handle,
                          uint64_t cupti_stream_id)
{
    gw_map_put(&r->streams, id, handle);
    if (!cupti_stream_id)
        return;
    /* A redefinition with another CUPTI id leaves the old id naming this stream too. */
    gw_map_put(&r->stream_cupti, id, cupti_stream_id);
    gw_map_put(&r->cupti_streams, cupti_stream_id, id);
    r->cupti_memo.valid = 0;
}

void gw_tables_free(struct gw_reader *r)
{
    for (size_t i = 0; i < r->nstrings; i++)
        free(r->strings[i].text);
    free(r->strings);
    free(r->shapes);
    free(r->devices);
    free(r->clocks);
    gw_map_free(&r->string_ids);
    gw_map_free(&r->shape_ids);
    gw_map_free(&r->device_ids);
    gw_map_free(&r->clock_ids);
    gw_map_free(&r->streams);
    gw_map_free(&r->stream_cupti);
    gw_map_free(&r->cupti_streams);
    gw_map_free(&r->threads);
}

const char *gw_reader_string(const struct gw_reader *r, uint64_t id, size_t *len)
{
    uint64_t *slot = gw_map_get(&r->string_ids, id);
    if (!slot)
        return NULL;
    if (len)
        *len = r->strings[*slot].len;
    return r->strings[*slot].text;
}

const struct gw_shape *gw_reader_shape(const struct gw_reader *r, uint64_t id)
{
    uint64_t *slot = gw_map_get(&r->shape_ids, id);
    return slot ? &r->shapes[*slot] : NULL;
}

int gw_reader_stream_handle(const struct gw_reader *r, uint64_t id, uint64_t *handle)
{
    uint64_t *slot = gw_map_get(&r->streams, id);
    if (!slot)
        return -1;
    *handle = *slot;
    return 0;
}

int gw_reader_stream_by_cupti(const struct gw_reader *r, uint64_t cupti_stream_id,
                              uint64_t *stream_id)
{
    if (r->cupti_memo.valid && r->cupti_memo.cupti == cupti_stream_id) {
        *stream_id = r->cupti_memo.id;
        return 0;
    }
    uint64_t *slot = gw_map_get(&r->cupti_streams, cupti_stream_id);
    if (!slot)
        return -1;
    *stream_id = *slot;
    /* (a cache of the const reader's own: the reader is never defined const) */
    struct gw_reader *memo_of = (struct gw_reader *)r;
    memo_of->cupti_memo.valid = 1;
    memo_of->cupti_memo.cupti = cupti_stream_id;
    memo_of->cupti_memo.id = *slot;
    return 0;
}

int gw_reader_stream_cupti(const struct gw_reader *r, uint64_t id, uint64_t *cupti_stream_id)
{
    uint64_t *slot = gw_map_get(&r->stream_cupti, id);
    if (!slot)
        return -1;
    *cupti_stream_id = *slot;
    return 0;
}

const struct gw_device_def *gw_reader_device(const struct gw_reader *r, uint64_t ordinal)
{
    uint64_t *slot = gw_map_get(&r->device_ids, ordinal);
    return slot ? &r->devices[*slot] : NULL;
}

const char *gw_reader_thread_name(const struct gw_reader *r, uint64_t tid)
{
    uint64_t *slot = gw_map_get(&r->threads, tid);
    return slot ? gw_reader_string(r, *slot, NULL) : NULL;
}

size_t gw_reader_clocks(const struct gw_reader *r, const struct gw_clock_point **points)
{
    *points = r->clocks;
    return r->nclocks;
}

const char *gw_reader_kernel_name(const struct gw_reader *r, uint64_t shape_id)
{
    const struct gw_shape *shape = gw_reader_shape(r, shape_id);
    return shape ? gw_reader_string(r, shape->name_id, NULL) : NULL;
}

uint64_t gw_reader_host_copy_bps(const struct gw_reader *r)
{
    return r->host_copy_bps;
}

uint64_t gw_reader_wake_ns(const struct gw_reader *r)
{
    return r->wake_ns;
}

uint64_t gw_shim_late_quantile_ns(const struct gw_shim_stats *shim, double q)
{
    if (!shim->rounds)
        return 0;
    uint64_t total = 0, seen = 0;
    for (unsigned b = 0; b < GW_LATE_BUCKETS; b++)
        total += shim->late_rounds[b];
    for (unsigned b = 0; b < GW_LATE_BUCKETS; b++) {
        seen += shim->late_rounds[b];
        if (total && (double)seen >= q * (double)total) {
            uint64_t upper = gw_late_bucket_upper_ns(b);
            return upper < shim->late_max_ns ? upper : shim->late_max_ns;
        }
    }
    return shim->late_max_ns;
}
