/* Definitions (strings, streams, launch shapes, devices, handle names): interned once,
 * written once into the DEFS buffer that the writer drains before any thread's events. */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "gw_cuda.h"
#include "record_encode.h"
#include "recorder.h"
#include "recorder_internal.h"
#include "ring_file.h"

static pthread_mutex_t defs_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *defs_buf;
static size_t defs_len, defs_cap;

/* Open-addressing map from a 64-bit key to a 64-bit value; key 0 is "empty". */
struct u64_map {
    uint64_t *keys;
    uint64_t *values;
    size_t cap;   /* power of two */
    size_t count;
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static uint64_t *map_slot(struct u64_map *map, uint64_t key)
{
    if (map->count * 2 >= map->cap) {
        struct u64_map grown = {.cap = map->cap ? map->cap * 2 : 256};
        grown.keys = calloc(grown.cap, sizeof *grown.keys);
        grown.values = calloc(grown.cap, sizeof *grown.values);
        if (!grown.keys || !grown.values) {
            free(grown.keys);
            free(grown.values);
            return NULL;
        }
        for (size_t i = 0; i < map->cap; i++) {
            if (!map->keys[i])
                continue;
            size_t at = mix64(map->keys[i]) & (grown.cap - 1);
            while (grown.keys[at])
                at = (at + 1) & (grown.cap - 1);
            grown.keys[at] = map->keys[i];
            grown.values[at] = map->values[i];
        }
        grown.count = map->count;
        free(map->keys);
        free(map->values);
        *map = grown;
    }
    size_t at = mix64(key) & (map->cap - 1);
    while (map->keys[at] && map->keys[at] != key)
        at = (at + 1) & (map->cap - 1);
    if (!map->keys[at]) {
        map->keys[at] = key;
        map->values[at] = 0;
        map->count++;
    }
    return &map->values[at];
}

static uint64_t map_get(const struct u64_map *map, uint64_t key)
{
    if (!map->cap)
        return 0;
    size_t at = mix64(key) & (map->cap - 1);
    while (map->keys[at]) {
        if (map->keys[at] == key)
            return map->values[at];
        at = (at + 1) & (map->cap - 1);
    }
    return 0;
}

/* Strings are keyed by a 64-bit hash plus a comparison against the stored text. */
struct interned_string {
    char *text;
    uint64_t id;
};
static struct interned_string *strings;   /* index id - 1 */
static size_t strings_count, strings_cap;
static struct u64_map string_by_hash;      /* hash -> id of the first string with it */

struct shape_key {
    uint64_t func;
    uint32_t dims[6];
    uint32_t shared_mem;
    uint32_t registers;
    uint32_t static_shared_mem;
};
static struct shape_key *shapes;           /* index id - 1 */
static size_t shapes_count, shapes_cap;
static struct u64_map shape_by_hash;
static struct u64_map stream_ids;          /* handle + 1 -> id */
static uint64_t streams_count;
static struct u64_map handle_names;        /* function/kernel handle -> string id */
static struct u64_map devices_seen;        /* ordinal + 1 -> 1 */

/* Call stacks, native (one key word per frame: the pc) and Python (two: the code object's
 * address and the line), each interned by its keys and described once. */
struct stack_key {
    uint64_t *keys;
    unsigned n;                            /* frames */
};
struct stack_table {
    uint8_t record_type;                   /* GW_REC_STACK, GW_REC_PYSTACK */
    unsigned key_words, frame_words;
    struct stack_key *stacks;              /* index id - 1 */
    size_t count, cap;
    struct u64_map by_hash;
};
static struct stack_table native_stacks = {.record_type = GW_REC_STACK, .key_words = 1,
                                           .frame_words = GW_STACK_FRAME_WORDS};
static struct stack_table python_stacks = {.record_type = GW_REC_PYSTACK, .key_words = 2,
                                           .frame_words = GW_PYSTACK_FRAME_WORDS};

/* The definitions not yet written, mirrored into a slot of the rings file (ring_file.c,
 * trace_format.h) so that the records salvaged from a killed process keep their names.
 * Best effort: what does not fit before the next DEFS chunk is not mirrored. */
static struct gw_ring_slot *defs_slot;
static uint64_t defs_mirrored;             /* the slot's head */
static int defs_slot_tried;

static void mirror(const uint8_t *record, size_t len)
{
    if (!defs_slot && !defs_slot_tried && gw_rec.path[0]) {  /* (once the trace is open) */
        defs_slot_tried = 1;
        int shared = 0;
        defs_slot = gw_ring_slot_new(0, 0, gw_rec.ring_bytes, &shared);
        if (defs_slot && !shared) {  /* (no file to outlive the process: no use) */
            gw_ring_slot_release(defs_slot, 0, 0);
            defs_slot = NULL;
        }
        if (defs_slot)
            defs_slot->kind = GW_RING_DEFS;
    }
    if (!defs_slot || defs_mirrored - defs_slot->tail + len > defs_slot->capacity)
        return;
    gw_ring_slot_put(defs_slot, defs_mirrored, record, len);
    defs_mirrored += len;
    __atomic_store_n(&defs_slot->head, defs_mirrored, __ATOMIC_RELEASE);
}

void gw_defs_writing(uint64_t mirrored, uint32_t seq)
{
    pthread_mutex_lock(&defs_lock);
    if (defs_slot)  /* (definitions have no dt chain nor calls) */
        gw_ring_slot_writing(defs_slot, mirrored, 0, 0, seq);
    pthread_mutex_unlock(&defs_lock);
}

void gw_defs_written(void)
{
    pthread_mutex_lock(&defs_lock);
    if (defs_slot)
        gw_ring_slot_written(defs_slot);
    pthread_mutex_unlock(&defs_lock);
}

/* Appends to the definitions buffer; the caller holds defs_lock. */
static void buffer_append(const uint8_t *record, size_t len)
{
    mirror(record, len);
    if (defs_len + len > defs_cap) {
        size_t cap = defs_cap ? defs_cap * 2 : 4096;
        while (cap < defs_len + len)
            cap *= 2;
        uint8_t *grown = realloc(defs_buf, cap);
        if (!grown)
            return;
        defs_buf = grown;
        defs_cap = cap;
    }
    memcpy(defs_buf + defs_len, record, len);
    defs_len += len;
}

void gw_defs_append(const uint8_t *record, size_t len)
{
    pthread_mutex_lock(&defs_lock);
    buffer_append(record, len);
    pthread_mutex_unlock(&defs_lock);
}

size_t gw_defs_take(uint8_t **out, uint64_t *mirrored)
{
    pthread_mutex_lock(&defs_lock);
    *mirrored = defs_mirrored;
    size_t len = defs_len;
    *out = defs_buf;
    defs_buf = NULL;
    defs_len = defs_cap = 0;
    pthread_mutex_unlock(&defs_lock);
    return len;
}

static uint64_t hash_bytes(const void *data, size_t len)
{
    const uint8_t *bytes = data;
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        hash = (hash ^ bytes[i]) * 0x100000001b3ull;
    return hash | 1; /* never the empty key */
}

/* Appends a definition while defs_lock is held by the caller, so no other thread can see
 * the new id before its definition is in the buffer the writer drains first. */
static void append_locked(uint8_t type, const uint64_t *words, unsigned nwords,
                          const void *tail, size_t tail_len)
{
    size_t bound = gw_record_bound(nwords, tail_len);
    uint8_t stack[256];
    uint8_t *record = bound <= sizeof stack ? stack : malloc(bound);
    if (!record)
        return;
    buffer_append(record, gw_encode_record(record, type, words, nwords, tail, tail_len));
    if (record != stack)
        free(record);
}

/* Texts whose hashes collide are chained by rehashing until a free key turns up. */
uint64_t gw_rec_string(const char *text)
{
    if (!text)
        return 0;
    size_t len = strlen(text);
    uint64_t hash = hash_bytes(text, len);
    pthread_mutex_lock(&defs_lock);
    for (uint64_t id; (id = map_get(&string_by_hash, hash)) != 0; hash = mix64(hash) | 1) {
        if (strcmp(strings[id - 1].text, text) == 0) {
            pthread_mutex_unlock(&defs_lock);
            return id;
        }
    }
    if (strings_count == strings_cap) {
        size_t cap = strings_cap ? strings_cap * 2 : 256;
        struct interned_string *grown = realloc(strings, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&defs_lock);
            return 0;
        }
        strings = grown;
        strings_cap = cap;
    }
    char *copy = strdup(text);
    uint64_t *slot = copy ? map_slot(&string_by_hash, hash) : NULL;
    if (!slot) {
        free(copy);
        pthread_mutex_unlock(&defs_lock);
        return 0;
    }
    uint64_t id = ++strings_count;
    strings[id - 1] = (struct interned_string){copy, id};
    *slot = id;
    append_locked(GW_REC_STRING, &id, 1, text, len);
    pthread_mutex_unlock(&defs_lock);
    return id;
}

uint64_t gw_rec_stream_known(uint64_t handle)
{
    pthread_mutex_lock(&defs_lock);
    uint64_t id = map_get(&stream_ids, handle + 1);
    pthread_mutex_unlock(&defs_lock);
    return id;
}

void gw_rec_stream_default(uint64_t cupti_stream_id)
{
    static const uint64_t default_key = UINT64_MAX; /* never a handle + 1 */
    pthread_mutex_lock(&defs_lock);
    uint64_t *slot = map_slot(&stream_ids, default_key);
    if (slot && !*slot) {
        *slot = 1;
        uint64_t words[3] = {0, 0, cupti_stream_id};
        append_locked(GW_REC_STREAM, words, 3, NULL, 0);
    }
    pthread_mutex_unlock(&defs_lock);
}

uint64_t gw_rec_stream(uint64_t handle, uint64_t cupti_stream_id)
{
    if (handle == 0)
        return 0;
    pthread_mutex_lock(&defs_lock);
    uint64_t *slot = map_slot(&stream_ids, handle + 1);
    uint64_t id = slot ? *slot : 0;
    if (slot && !id) {
        id = *slot = ++streams_count;
        uint64_t words[3] = {id, handle, cupti_stream_id};
        append_locked(GW_REC_STREAM, words, 3, NULL, 0);
    }
    pthread_mutex_unlock(&defs_lock);
    return id;
}

uint64_t gw_rec_shape(uint64_t func_handle, uint64_t name_id, const uint32_t dims[6],
                      uint32_t shared_mem, uint32_t registers, uint32_t static_shared_mem)
{
    struct shape_key key;
    memset(&key, 0, sizeof key); /* padding is hashed too */
    key.func = func_handle;
    key.shared_mem = shared_mem;
    key.registers = registers;
    key.static_shared_mem = static_shared_mem;
    key.func ^= name_id << 1; /* GPU shapes (func 0) differ by name */
    memcpy(key.dims, dims, sizeof key.dims);
    uint64_t hash = hash_bytes(&key, sizeof key);
    pthread_mutex_lock(&defs_lock);
    for (uint64_t id; (id = map_get(&shape_by_hash, hash)) != 0; hash = mix64(hash) | 1) {
        if (memcmp(&shapes[id - 1], &key, sizeof key) == 0) {
            pthread_mutex_unlock(&defs_lock);
            return id;
        }
    }
    if (shapes_count == shapes_cap) {
        size_t cap = shapes_cap ? shapes_cap * 2 : 256;
        struct shape_key *grown = realloc(shapes, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&defs_lock);
            return 0;
        }
        shapes = grown;
        shapes_cap = cap;
    }
    uint64_t *slot = map_slot(&shape_by_hash, hash);
    if (!slot) {
        pthread_mutex_unlock(&defs_lock);
        return 0;
    }
    uint64_t id = ++shapes_count;
    shapes[id - 1] = key;
    *slot = id;
    uint64_t words[12] = {id, name_id, func_handle, dims[0], dims[1], dims[2],
                          dims[3], dims[4], dims[5], shared_mem, registers, static_shared_mem};
    append_locked(GW_REC_SHAPE, words, func_handle ? 10 : 12, NULL, 0);
    pthread_mutex_unlock(&defs_lock);
    return id;
}

uint64_t gw_rec_handle_name(uint64_t handle)
{
    pthread_mutex_lock(&defs_lock);
    uint64_t id = map_get(&handle_names, handle);
    pthread_mutex_unlock(&defs_lock);
    return id;
}

void gw_rec_set_handle_name(uint64_t handle, uint64_t name_id)
{
    if (!handle || !name_id)
        return;
    pthread_mutex_lock(&defs_lock);
    uint64_t *slot = map_slot(&handle_names, handle);
    if (slot)
        *slot = name_id;
    pthread_mutex_unlock(&defs_lock);
}

/* The id of the stack with these keys, or 0; the caller holds defs_lock. *hash becomes the
 * key a new stack gets. */
static uint64_t stack_find_locked(const struct stack_table *t, uint64_t *hash,
                                  const uint64_t *keys, unsigned n)
{
    for (uint64_t id; (id = map_get(&t->by_hash, *hash)) != 0; *hash = mix64(*hash) | 1) {
        const struct stack_key *k = &t->stacks[id - 1];
        if (k->n == n && memcmp(k->keys, keys, n * t->key_words * sizeof *keys) == 0)
            return id;
    }
    return 0;
}

/* Module, offset in it, symbol and offset from the symbol, for one code address. */
static void symbolize(const uint64_t *key, uint64_t frame[GW_STACK_FRAME_WORDS])
{
    uint64_t pc = key[0];
    Dl_info info;
    struct link_map *map = NULL;
    memset(frame, 0, GW_STACK_FRAME_WORDS * sizeof *frame);
    frame[1] = pc;
    if (!dladdr1((void *)(uintptr_t)pc, &info, (void **)&map, RTLD_DL_LINKMAP))
        return;
    frame[0] = gw_rec_string(info.dli_fname);
    /* the load bias, so the offset is the address in the file (non-PIE programs: 0) */
    frame[1] = pc - (map ? (uint64_t)map->l_addr : (uint64_t)(uintptr_t)info.dli_fbase);
    if (info.dli_sname && info.dli_saddr) {
        frame[2] = gw_rec_string(info.dli_sname);
        frame[3] = pc - (uint64_t)(uintptr_t)info.dli_saddr;
    }
}

/* Each distinct stack is described once, by the first thread that sees it, outside
 * defs_lock (dladdr takes the loader's lock; describing a Python frame defines strings);
 * the definition is appended under the lock that publishes its id, after the strings it
 * names. */
static uint64_t intern_stack(struct stack_table *t, const uint64_t *keys, unsigned n,
                             gw_frame_describe_fn describe)
{
    if (!n)
        return 0;
    if (n > GW_STACK_MAX_FRAMES)
        n = GW_STACK_MAX_FRAMES;
    size_t key_bytes = (size_t)n * t->key_words * sizeof *keys;
    uint64_t hash = hash_bytes(keys, key_bytes);
    pthread_mutex_lock(&defs_lock);
    uint64_t id = stack_find_locked(t, &hash, keys, n);
    pthread_mutex_unlock(&defs_lock);
    if (id)
        return id;

    uint64_t frames[GW_STACK_MAX_FRAMES * GW_STACK_FRAME_WORDS];
    for (unsigned i = 0; i < n; i++)
        describe(keys + (size_t)i * t->key_words, frames + (size_t)i * t->frame_words);
    /* body after the id: nframes, then the frames, as varints */
    uint8_t tail[(1 + GW_STACK_MAX_FRAMES * GW_STACK_FRAME_WORDS) * GW_VARINT_MAX];
    size_t tail_len = gw_put_uvarint(tail, n);
    for (unsigned i = 0; i < n * t->frame_words; i++)
        tail_len += gw_put_uvarint(tail + tail_len, frames[i]);
    uint64_t *copy = malloc(key_bytes);
    if (!copy)
        return 0;
    memcpy(copy, keys, key_bytes);

    hash = hash_bytes(keys, key_bytes);
    pthread_mutex_lock(&defs_lock);
    id = stack_find_locked(t, &hash, keys, n);  /* another thread may have been first */
    if (!id && t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct stack_key *grown = realloc(t->stacks, cap * sizeof *grown);
        if (grown) {
            t->stacks = grown;
            t->cap = cap;
        }
    }
    uint64_t *slot = !id && t->count < t->cap ? map_slot(&t->by_hash, hash) : NULL;
    if (slot) {
        id = ++t->count;
        t->stacks[id - 1] = (struct stack_key){copy, n};
        copy = NULL;
        *slot = id;
        append_locked(t->record_type, &id, 1, tail, tail_len);
    }
    pthread_mutex_unlock(&defs_lock);
    free(copy);
    return id;
}

uint64_t gw_rec_stack(const uint64_t *pcs, unsigned n)
{
    return intern_stack(&native_stacks, pcs, n, symbolize);
}

uint64_t gw_rec_pystack(const uint64_t *keys, unsigned n, gw_frame_describe_fn describe)
{
    return intern_stack(&python_stacks, keys, n, describe);
}

void gw_rec_python(const char *version, int follows)
{
    uint64_t words[2] = {gw_rec_string(version), (uint64_t)(follows != 0)};
    pthread_mutex_lock(&defs_lock);
    append_locked(GW_REC_PYTHON, words, 2, NULL, 0);
    pthread_mutex_unlock(&defs_lock);
}

void gw_rec_device(int ordinal, const char *name, uint64_t total_bytes, uint64_t free_bytes)
{
    uint64_t name_id = gw_rec_string(name);
    pthread_mutex_lock(&defs_lock);
    uint64_t *seen = map_slot(&devices_seen, (uint64_t)ordinal + 1);
    int first = seen && !*seen;
    if (first) {
        *seen = 1;
        uint64_t words[4] = {(uint64_t)ordinal, name_id, total_bytes, free_bytes};
        append_locked(GW_REC_DEVICE, words, 4, NULL, 0);
    }
    pthread_mutex_unlock(&defs_lock);
    if (!first)
        return;
    pthread_mutex_lock(&gw_rec.file_lock);
    struct gw_file_header *header = &gw_rec.header;
    if (header->device_ordinal < 0) {
        header->device_ordinal = ordinal;
        header->device_total_mem = total_bytes;
        header->device_free_at_start = free_bytes;
        strncpy(header->device_name, name ? name : "", sizeof header->device_name - 1);
    }
    pthread_mutex_unlock(&gw_rec.file_lock);
    gw_trace_file_patch_header();
}

static void map_clear(struct u64_map *map)
{
    free(map->keys);
    free(map->values);
    memset(map, 0, sizeof *map);
}

static void stacks_clear(struct stack_table *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->stacks[i].keys);
    t->count = 0;
    map_clear(&t->by_hash);
}

void gw_defs_reset(void)
{
    /* After fork: the child writes a new file, so every definition must be written anew. */
    pthread_mutex_init(&defs_lock, NULL);
    if (defs_slot)  /* (the parent's, or an ended trace's: not this trace's) */
        gw_ring_slot_release(defs_slot, 1, 0);
    defs_slot = NULL;
    defs_slot_tried = 0;
    defs_mirrored = 0;
    free(defs_buf);
    defs_buf = NULL;
    defs_len = defs_cap = 0;
    for (size_t i = 0; i < strings_count; i++)
        free(strings[i].text);
    stacks_clear(&native_stacks);
    stacks_clear(&python_stacks);
    strings_count = shapes_count = 0;
    streams_count = 0;
    map_clear(&string_by_hash);
    map_clear(&shape_by_hash);
    map_clear(&stream_ids);
    map_clear(&devices_seen);
    /* Handle names point at string ids of the parent's file; launches of those handles
     * in the child look their names up again from the driver. */
    map_clear(&handle_names);
}
