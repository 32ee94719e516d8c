/* yajl's callbacks over a Kineto file: the fields of one traceEvents element at a time
 * (kineto_map.c turns it into records), deviceProperties into DEVICE definitions,
 * distributedInfo's rank. Everything else is skipped as it streams past. */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "kineto.h"
#include "../trace_reader_internal.h"

enum kin_section { SEC_NONE, SEC_EVENTS, SEC_DEVICES, SEC_DIST };

enum kin_key {
    KEY_OTHER, KEY_PH, KEY_CAT, KEY_NAME, KEY_PID, KEY_TID, KEY_TS, KEY_DUR, KEY_ID, KEY_ARGS,
    /* args */
    KEY_CORRELATION, KEY_DEVICE, KEY_STREAM, KEY_BYTES, KEY_WAIT_STREAM, KEY_WAIT_CORR,
    KEY_GW_STREAM, KEY_DIRECTION, KEY_HOST_MEMORY, KEY_ADDRESS,
    /* [memory] */
    KEY_MEM_ADDR, KEY_MEM_BYTES, KEY_MEM_ALLOCATED, KEY_MEM_RESERVED, KEY_MEM_DEVICE,
    KEY_MEM_DEVICE_TYPE,
    /* deviceProperties, distributedInfo */
    KEY_DEV_ID, KEY_DEV_NAME, KEY_DEV_MEM, KEY_RANK, KEY_WORLD,
};

/* Depths: 1 the top object, 2 traceEvents' array (or distributedInfo's object), 3 one
 * event, 4 its args. */
static struct kineto *kin(void *ctx)
{
    return ((struct gw_reader *)ctx)->kineto;
}

/* A Kineto number: microseconds, integer or with a fraction, to nanoseconds. */
static uint64_t us_to_ns(const char *s, size_t len)
{
    uint64_t whole = 0, frac = 0;
    size_t i = 0, digits = 0;
    if (i < len && s[i] == '-')
        return 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        whole = whole * 10 + (uint64_t)(s[i] - '0');
    if (i < len && s[i] == '.')
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            if (digits < 3) {
                frac = frac * 10 + (uint64_t)(s[i] - '0');
                digits++;
            }
    while (digits++ < 3)
        frac *= 10;
    if (i < len && (s[i] == 'e' || s[i] == 'E'))  /* (rare: only through a float writer) */
        return (uint64_t)(strtod(s, NULL) * 1000.0);
    return whole * 1000 + frac;
}

static uint64_t as_u64(const char *s, size_t len)
{
    uint64_t v = 0;
    size_t i = 0;
    int neg = len && s[0] == '-';
    for (i = neg; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    return neg ? (uint64_t)-(int64_t)v : v;
}

static int on_number(void *ctx, const char *s, size_t len)
{
    struct kineto *k = kin(ctx);
    struct kin_event *e = &k->ev;
    if (k->section == SEC_EVENTS && k->depth == 3) {
        switch (k->key) {
        case KEY_PID: e->pid = (int64_t)as_u64(s, len); e->pid_numeric = 1; break;
        case KEY_TID: e->tid = (int64_t)as_u64(s, len); break;
        case KEY_TS: e->ts = us_to_ns(s, len); e->has_ts = 1; break;
        case KEY_DUR: e->dur = us_to_ns(s, len); break;
        case KEY_ID: e->id = as_u64(s, len); break;
        default: break;
        }
    } else if (k->section == SEC_EVENTS && k->depth == 4) {
        uint64_t v = as_u64(s, len);
        switch (k->arg_key) {
        case KEY_CORRELATION: e->correlation = v; break;
        case KEY_DEVICE: e->device = v; e->has_device = 1; break;
        case KEY_STREAM: e->stream = v; e->has_stream = 1; break;
        case KEY_BYTES: e->bytes = v; e->has_bytes = 1; break;
        case KEY_WAIT_STREAM: e->wait_stream = v; break;
        case KEY_WAIT_CORR: e->wait_corr = v; break;
        case KEY_GW_STREAM: e->gw_stream = v; e->has_gw_stream = 1; break;
        case KEY_ADDRESS: e->address = v; e->has_address = 1; break;
        case KEY_MEM_ADDR: e->mem_addr = v; break;
        case KEY_MEM_BYTES: e->mem_bytes = (int64_t)v; e->has_mem_bytes = 1; break;
        case KEY_MEM_ALLOCATED: e->mem_allocated = v; e->has_mem_allocated = 1; break;
        case KEY_MEM_RESERVED: e->mem_reserved = v; break;
        case KEY_MEM_DEVICE: e->mem_device = (int64_t)v; break;
        case KEY_MEM_DEVICE_TYPE:
            e->mem_device_type = (int64_t)v;
            e->has_mem_device_type = 1;
            break;
        default: break;
        }
    } else if (k->section == SEC_DEVICES && k->depth == 3) {
        if (k->key == KEY_DEV_ID)
            k->dev.ordinal = as_u64(s, len);
        else if (k->key == KEY_DEV_MEM)
            k->dev.total_bytes = as_u64(s, len);
    } else if (k->section == SEC_DIST && k->depth == 2) {
        if (k->key == KEY_RANK)
            k->rank = (int32_t)as_u64(s, len);
        else if (k->key == KEY_WORLD)
            k->world_size = (int32_t)as_u64(s, len);
    }
    return 1;
}

static void copy_short(char *dst, size_t cap, const unsigned char *s, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, s, len);
    dst[len] = 0;
}

static int cat_of(const unsigned char *s, size_t len)
{
    static const char *const cats[] = {
        [KIN_CAT_RUNTIME] = "cuda_runtime", [KIN_CAT_DRIVER] = "cuda_driver",
        [KIN_CAT_KERNEL] = "kernel",        [KIN_CAT_MEMCPY] = "gpu_memcpy",
        [KIN_CAT_MEMSET] = "gpu_memset",    [KIN_CAT_SYNC] = "cuda_sync",
        [KIN_CAT_ANNOTATION] = "user_annotation", [KIN_CAT_CPU_OP] = "cpu_op",
        [KIN_CAT_NVTX] = "nvtx",            [KIN_CAT_PYTHON] = "python_function",
        [KIN_CAT_INSTANT] = "cpu_instant_event",
    };
    for (int c = 1; c < (int)(sizeof cats / sizeof cats[0]); c++)
        if (cats[c] && strlen(cats[c]) == len && memcmp(cats[c], s, len) == 0)
            return c;
    return KIN_CAT_OTHER;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    struct kineto *k = kin(ctx);
    struct kin_event *e = &k->ev;
    if (k->section == SEC_EVENTS && k->depth == 3) {
        switch (k->key) {
        case KEY_PH: e->ph = len ? (char)s[0] : 0; break;
        case KEY_CAT: e->cat = cat_of(s, len); break;
        case KEY_NAME:
            if (len + 1 > e->name_cap) {
                size_t cap = len + 64;
                char *grown = realloc(e->name, cap);
                if (!grown)
                    return 1;
                e->name = grown;
                e->name_cap = cap;
            }
            memcpy(e->name, s, len);
            e->name[len] = 0;
            e->name_len = len;
            break;
        case KEY_PID: e->pid = -1; e->pid_numeric = 0; break;  /* "Spans", "Traces" */
        case KEY_TID: e->tid = (int64_t)(len ? s[0] : 0) | INT64_C(1) << 40; break;
        case KEY_TS: e->ts = us_to_ns((const char *)s, len); e->has_ts = 1; break;
        default: break;
        }
    } else if (k->section == SEC_EVENTS && k->depth == 4) {
        if (k->arg_key == KEY_DIRECTION)
            copy_short(e->direction, sizeof e->direction, s, len);
        else if (k->arg_key == KEY_HOST_MEMORY)
            copy_short(e->host_memory, sizeof e->host_memory, s, len);
    } else if (k->section == SEC_DEVICES && k->depth == 3 && k->key == KEY_DEV_NAME) {
        k->dev.name_id = kin_string(ctx, k, (const char *)s, len);
        if (!k->dev_has)
            copy_short(k->device_name, sizeof k->device_name, s, len);
    }
    return 1;
}

static int on_other(void *ctx)
{
    (void)ctx;
    return 1;
}

static int on_bool(void *ctx, int v)
{
    (void)v;
    return on_other(ctx);
}

static int key_is(const unsigned char *s, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(s, name, len) == 0;
}

static int on_key(void *ctx, const unsigned char *s, size_t len)
{
    struct kineto *k = kin(ctx);
    if (k->depth == 1) {
        k->section = key_is(s, len, "traceEvents")        ? SEC_EVENTS
                     : key_is(s, len, "deviceProperties") ? SEC_DEVICES
                     : key_is(s, len, "distributedInfo")  ? SEC_DIST
                                                          : SEC_NONE;
        if (k->section == SEC_EVENTS)
            k->is_kineto = 1;
        return 1;
    }
    if (k->section == SEC_EVENTS && k->depth == 3) {
        static const struct { const char *n; int key; } keys[] = {
            {"ph", KEY_PH}, {"cat", KEY_CAT}, {"name", KEY_NAME}, {"pid", KEY_PID},
            {"tid", KEY_TID}, {"ts", KEY_TS}, {"dur", KEY_DUR}, {"id", KEY_ID},
            {"args", KEY_ARGS},
        };
        k->key = KEY_OTHER;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (key_is(s, len, keys[i].n))
                k->key = keys[i].key;
    } else if (k->section == SEC_EVENTS && k->depth == 4) {
        static const struct { const char *n; int key; } keys[] = {
            {"correlation", KEY_CORRELATION}, {"device", KEY_DEVICE},
            {"stream", KEY_STREAM}, {"bytes", KEY_BYTES},
            {"wait_on_stream", KEY_WAIT_STREAM},
            {"wait_on_cuda_event_record_corr_id", KEY_WAIT_CORR},
            {"gpuwatch_stream", KEY_GW_STREAM}, {"direction", KEY_DIRECTION},
            {"host_memory", KEY_HOST_MEMORY}, {"address", KEY_ADDRESS},
            {"Addr", KEY_MEM_ADDR}, {"Bytes", KEY_MEM_BYTES},
            {"Total Allocated", KEY_MEM_ALLOCATED}, {"Total Reserved", KEY_MEM_RESERVED},
            {"Device Id", KEY_MEM_DEVICE}, {"Device Type", KEY_MEM_DEVICE_TYPE},
        };
        k->arg_key = KEY_OTHER;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (key_is(s, len, keys[i].n))
                k->arg_key = keys[i].key;
    } else if (k->section == SEC_DEVICES && k->depth == 3) {
        k->key = key_is(s, len, "id") ? KEY_DEV_ID
                 : key_is(s, len, "name") ? KEY_DEV_NAME
                 : key_is(s, len, "totalGlobalMem") ? KEY_DEV_MEM : KEY_OTHER;
    } else if (k->section == SEC_DIST && k->depth == 2) {
        k->key = key_is(s, len, "rank") ? KEY_RANK
                 : key_is(s, len, "world_size") ? KEY_WORLD : KEY_OTHER;
    }
    return 1;
}

static int on_start_map(void *ctx)
{
    struct kineto *k = kin(ctx);
    k->depth++;
    if (k->section == SEC_EVENTS && k->depth == 3) {
        struct kin_event *e = &k->ev;
        char *name = e->name;
        size_t cap = e->name_cap;
        memset(e, 0, sizeof *e);
        e->name = name;
        e->name_cap = cap;
        if (name)
            name[0] = 0;
        e->pid = -1;
        k->key = KEY_OTHER;
    } else if (k->section == SEC_DEVICES && k->depth == 3) {
        memset(&k->dev, 0, sizeof k->dev);
    }
    return 1;
}

static int on_end_map(void *ctx)
{
    struct gw_reader *r = ctx;
    struct kineto *k = kin(ctx);
    if (k->section == SEC_EVENTS && k->depth == 3) {
        k->events++;
        if (k->header_only) {
            struct kin_event *e = &k->ev;
            if (e->has_ts && e->pid_numeric && e->pid > 0 && e->cat != KIN_CAT_KERNEL &&
                e->cat != KIN_CAT_MEMCPY && e->cat != KIN_CAT_MEMSET && e->cat != KIN_CAT_OTHER) {
                k->host_pid = (uint32_t)e->pid;
                k->first_ts = e->ts;
                k->stop = 1;
            }
        } else {
            kin_map_event(r, k);
        }
    } else if (k->section == SEC_DEVICES && k->depth == 3) {
        if (!k->dev_has) {
            k->dev_has = 1;
            k->device_ordinal = (int)k->dev.ordinal;
            k->device_total_mem = k->dev.total_bytes;
        }
        if (!k->header_only)
            gw_tables_add_device(r, &k->dev);
    }
    if (k->depth == 2 && k->section == SEC_DIST)
        k->section = SEC_NONE;
    k->depth--;
    if (k->depth == 3)
        k->key = KEY_OTHER;
    return !(k->header_only && k->stop);
}

static int on_start_array(void *ctx)
{
    kin(ctx)->depth++;
    return 1;
}

static int on_end_array(void *ctx)
{
    struct kineto *k = kin(ctx);
    if (k->depth == 2)
        k->section = SEC_NONE;
    k->depth--;
    return 1;
}

static int on_null(void *ctx)
{
    return on_other(ctx);
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_bool,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end_map,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end_array,
};

const void *gw_kineto_callbacks = &callbacks;
