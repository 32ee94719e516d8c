/* Names in a Kineto trace into the ids the analyzer knows: runtime and driver calls to
 * api_list.h's entry points, "Memcpy HtoD (Pageable -> Device)" to CUPTI's kinds, text to
 * interned STRING ids. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kineto.h"
#include "../trace_reader_internal.h"

/* The CUDA runtime's calls, each as the driver entry point it ends in (what the shim would
 * have recorded under the same program). */
static const struct {
    const char *runtime;
    unsigned api;
} runtime_calls[] = {
    {"cudaLaunchKernel", 32},          {"cudaLaunchKernelExC", 32},
    {"cudaLaunchCooperativeKernel", 32},
    {"cudaMemcpyAsync", 44},           {"cudaMemcpy", 44},
    {"cudaMemcpy2DAsync", 44},         {"cudaMemcpyPeerAsync", 44},
    {"cudaMemsetAsync", 80},           {"cudaMemset", 80},
    {"cudaStreamSynchronize", 88},     {"cudaDeviceSynchronize", 86},
    {"cudaEventSynchronize", 90},      {"cudaStreamWaitEvent", 91},
    {"cudaEventRecord", 96},           {"cudaEventRecordWithFlags", 96},
    {"cudaMalloc", 11},                {"cudaFree", 13},
    {"cudaHostAlloc", 27},             {"cudaMallocHost", 27},
};

/* The exported name of api id, for a driver call written under its own name (gpuwatch's
 * own export, or cuda_driver events). */
unsigned kin_api_of(const char *name, int driver)
{
    for (size_t i = 0; i < sizeof runtime_calls / sizeof runtime_calls[0]; i++)
        if (strcmp(runtime_calls[i].runtime, name) == 0)
            return runtime_calls[i].api;
    if (!driver && strncmp(name, "cu", 2) != 0)
        return 0;
    for (unsigned id = 1; id < GW_API_ID_LIMIT; id++) {
        const char *known = gw_api_name(id);
        if (known && strcmp(known, name) == 0)
            return id;
    }
    return 0;
}

static uint64_t hash_text(const char *text, size_t len)
{
    uint64_t h = 1469598103934665603ull;  /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)text[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* The STRING id of text, defined in the reader's tables the first time. Two texts of one
 * hash share an id: FNV-1a's 64 bits make that a one-in-2^40 event for a million names. */
uint64_t kin_string(struct gw_reader *r, struct kineto *k, const char *text, size_t len)
{
    uint64_t h = hash_text(text, len);
    uint64_t *id = gw_map_get(&k->string_ids, h);
    if (id)
        return *id;
    uint64_t fresh = ++k->next_string;
    gw_tables_add_string(r, fresh, (const uint8_t *)text, len);
    gw_map_put(&k->string_ids, h, fresh);
    return fresh;
}

unsigned kin_memory_kind(const char *word, size_t len)
{
    static const struct { const char *name; unsigned kind; } kinds[] = {
        {"pageable", GW_GPU_MEM_PAGEABLE}, {"pinned", GW_GPU_MEM_PINNED},
        {"device", GW_GPU_MEM_DEVICE},     {"array", GW_GPU_MEM_ARRAY},
        {"managed", GW_GPU_MEM_MANAGED},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (len == strlen(kinds[i].name) && strncasecmp(word, kinds[i].name, len) == 0)
            return kinds[i].kind;
    return GW_GPU_MEM_UNKNOWN;
}

/* One word at p, up to a space, ')', '-' of "->" or the UTF-8 arrow. */
static size_t word_len(const char *p)
{
    size_t n = 0;
    while (p[n] && p[n] != ' ' && p[n] != ')' && p[n] != '-' && (uint8_t)p[n] != 0xE2)
        n++;
    return n;
}

/* "Memcpy HtoD (Pageable -> Device)" (Kineto) or "Memcpy HtoD (pageable → device)" (ours). */
void kin_copy_kinds(const char *name, unsigned *kind, unsigned *src, unsigned *dst)
{
    static const struct { const char *name; unsigned kind; } copies[] = {
        {"HtoD", GW_GPU_COPY_HTOD}, {"DtoH", GW_GPU_COPY_DTOH}, {"DtoD", GW_GPU_COPY_DTOD},
        {"HtoH", GW_GPU_COPY_HTOH}, {"PtoP", GW_GPU_COPY_PTOP},
    };
    *kind = 0;
    *src = *dst = GW_GPU_MEM_UNKNOWN;
    const char *p = strchr(name, ' ');
    if (!p)
        return;
    p++;
    for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++)
        if (strncmp(p, copies[i].name, 4) == 0)
            *kind = copies[i].kind;
    const char *open = strchr(p, '(');
    if (!open)
        return;
    p = open + 1;
    size_t n = word_len(p);
    *src = kin_memory_kind(p, n);
    p += n;
    while (*p == ' ' || *p == '-' || *p == '>' || (uint8_t)*p >= 0x80)
        p++;
    *dst = kin_memory_kind(p, word_len(p));
}

unsigned kin_copy_dir(const char *text)
{
    for (unsigned d = GW_COPY_HTOD; d <= GW_COPY_PEER; d++)
        if (strcmp(gw_copy_dir_name(d), text) == 0)
            return d;
    return GW_COPY_UNKNOWN;
}

unsigned kin_host_kind(const char *text)
{
    for (unsigned h = GW_HOST_PAGEABLE; h <= GW_HOST_MANAGED; h++)
        if (strcmp(gw_host_kind_name(h), text) == 0)
            return h;
    return GW_HOST_NONE;
}

/* The join of a correlation id (see kineto.h); NULL when absent and make is 0, or out of
 * memory. */
struct kin_join *kin_join_of(struct kineto *k, uint64_t corr, int make)
{
    uint64_t *at = gw_map_get(&k->joins, corr);
    if (at)
        return &k->join[*at];
    if (!make)
        return NULL;
    if (k->njoin == k->join_cap) {
        size_t cap = k->join_cap ? k->join_cap * 2 : 1024;
        struct kin_join *grown = realloc(k->join, cap * sizeof *grown);
        if (!grown)
            return NULL;
        k->join = grown;
        k->join_cap = cap;
    }
    if (gw_map_put(&k->joins, corr, k->njoin) != 0)
        return NULL;
    struct kin_join *j = &k->join[k->njoin++];
    memset(j, 0, sizeof *j);
    return j;
}
