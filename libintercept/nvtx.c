/* NVTX: libgpuwatch.so is also an NVTX injection library, so the ranges a program marks
 * (torch.cuda.nvtx.range_push("step"), emit_nvtx's operator ranges) land in the trace on
 * the thread that made them. Each copy of the header-only nvtx3 finds us through
 * NVTX_INJECTION64_PATH, which we point at ourselves at load time. */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "clock.h"
#include "config.h"
#include "gpuwatch/trace_format.h"
#include "lifecycle.h"
#include "recorder.h"

/* Handles NVTX hands back to the program are ours to define. */
struct nvtxDomainRegistration_st { uint64_t name_id; };
struct nvtxStringRegistration_st { uint64_t string_id; };

static uint64_t next_range_id;
static GW_TLS int default_depth;

/* Only while a trace is being written: NVTX before the first driver call is dropped
 * rather than starting a trace in a process that may never use the GPU. */
static int recording(void)
{
    return __atomic_load_n(&gw_state, __ATOMIC_RELAXED) == GW_STATE_READY && !gw_in_hook;
}

static uint64_t wide_string_id(const wchar_t *text)
{
    char narrow[512];
    size_t n = 0;
    for (; text && text[n] && n + 1 < sizeof narrow; n++)
        narrow[n] = text[n] < 128 ? (char)text[n] : '?';
    narrow[n] = '\0';
    return gw_rec_string(narrow);
}

static uint64_t message_id(const nvtxEventAttributes_t *attributes)
{
    if (!attributes)
        return 0;
    switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return gw_rec_string(attributes->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return wide_string_id(attributes->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return attributes->message.registered ? attributes->message.registered->string_id : 0;
    default:
        return 0;
    }
}

static uint64_t domain_id(nvtxDomainHandle_t domain) { return domain ? domain->name_id : 0; }

static void push(uint64_t domain, uint64_t name)
{
    uint64_t words[2] = {domain, name};
    gw_rec_timed(GW_REC_RANGE_PUSH, gw_now(), words, 2);
}

static void pop(uint64_t domain)
{
    uint64_t words[1] = {domain};
    gw_rec_timed(GW_REC_RANGE_POP, gw_now(), words, 1);
}

static void mark(uint64_t domain, uint64_t name)
{
    uint64_t words[2] = {domain, name};
    gw_rec_timed(GW_REC_MARK, gw_now(), words, 2);
}

static nvtxRangeId_t start(uint64_t domain, uint64_t name)
{
    nvtxRangeId_t id = __atomic_add_fetch(&next_range_id, 1, __ATOMIC_RELAXED);
    uint64_t words[3] = {domain, name, id};
    gw_rec_timed(GW_REC_RANGE_START, gw_now(), words, 3);
    return id;
}

static void end(nvtxRangeId_t id)
{
    uint64_t words[1] = {id};
    gw_rec_timed(GW_REC_RANGE_END, gw_now(), words, 1);
}

/* NVTX's push returns the depth of the new range, pop the depth of the one it closed. */
static int push_default(uint64_t name)
{
    if (recording())
        push(0, name);
    return default_depth++;
}

static int pop_default(void)
{
    if (default_depth == 0)
        return -1;
    if (recording())
        pop(0);
    return --default_depth;
}

static void NVTX_API mark_ex(const nvtxEventAttributes_t *a) { if (recording()) mark(0, message_id(a)); }
static void NVTX_API mark_a(const char *m) { if (recording()) mark(0, gw_rec_string(m)); }
static void NVTX_API mark_w(const wchar_t *m) { if (recording()) mark(0, wide_string_id(m)); }
static nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t *a) { return recording() ? start(0, message_id(a)) : 0; }
static nvtxRangeId_t NVTX_API start_a(const char *m) { return recording() ? start(0, gw_rec_string(m)) : 0; }
static nvtxRangeId_t NVTX_API start_w(const wchar_t *m) { return recording() ? start(0, wide_string_id(m)) : 0; }
static void NVTX_API range_end(nvtxRangeId_t id) { if (recording() && id) end(id); }
static int NVTX_API push_ex(const nvtxEventAttributes_t *a) { return push_default(recording() ? message_id(a) : 0); }
static int NVTX_API push_a(const char *m) { return push_default(recording() ? gw_rec_string(m) : 0); }
static int NVTX_API push_w(const wchar_t *m) { return push_default(recording() ? wide_string_id(m) : 0); }
static int NVTX_API range_pop(void) { return pop_default(); }

static void NVTX_API domain_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    if (recording())
        mark(domain_id(d), message_id(a));
}

static nvtxRangeId_t NVTX_API domain_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return recording() ? start(domain_id(d), message_id(a)) : 0;
}

static void NVTX_API domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) { range_end(id); }

static int NVTX_API domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    if (recording())
        push(domain_id(d), message_id(a));
    return 0;
}

static int NVTX_API domain_pop(nvtxDomainHandle_t d)
{
    if (recording())
        pop(domain_id(d));
    return 0;
}

static nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t d, const char *text)
{
    struct nvtxStringRegistration_st *handle = malloc(sizeof *handle);
    if (handle)
        handle->string_id = gw_rec_string(text);
    return handle;
}

static nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t d, const wchar_t *text)
{
    struct nvtxStringRegistration_st *handle = malloc(sizeof *handle);
    if (handle)
        handle->string_id = wide_string_id(text);
    return handle;
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
    struct nvtxDomainRegistration_st *domain = malloc(sizeof *domain);
    if (domain)
        domain->name_id = gw_rec_string(name);
    return domain;
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
    struct nvtxDomainRegistration_st *domain = malloc(sizeof *domain);
    if (domain)
        domain->name_id = wide_string_id(name);
    return domain;
}

/* Domains and strings outlive their destroy: ids in the trace still name them. */
static void NVTX_API domain_destroy(nvtxDomainHandle_t d) {}

struct slot { unsigned index; NvtxFunctionPointer function; };

static void fill(NvtxFunctionTable table, unsigned size, const struct slot *slots, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (slots[i].index < size && table[slots[i].index])
            *table[slots[i].index] = slots[i].function;
}

#define SLOT(id, fn) {id, (NvtxFunctionPointer)(fn)}

GW_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    if (!get_export_table || gw_config_disabled())
        return 0;
    const NvtxExportTableCallbacks *callbacks = get_export_table(NVTX_ETID_CALLBACKS);
    if (!callbacks || !callbacks->GetModuleFunctionTable)
        return 0;
    static const struct slot core[] = {
        SLOT(NVTX_CBID_CORE_MarkEx, mark_ex), SLOT(NVTX_CBID_CORE_MarkA, mark_a),
        SLOT(NVTX_CBID_CORE_MarkW, mark_w), SLOT(NVTX_CBID_CORE_RangeStartEx, start_ex),
        SLOT(NVTX_CBID_CORE_RangeStartA, start_a), SLOT(NVTX_CBID_CORE_RangeStartW, start_w),
        SLOT(NVTX_CBID_CORE_RangeEnd, range_end), SLOT(NVTX_CBID_CORE_RangePushEx, push_ex),
        SLOT(NVTX_CBID_CORE_RangePushA, push_a), SLOT(NVTX_CBID_CORE_RangePushW, push_w),
        SLOT(NVTX_CBID_CORE_RangePop, range_pop),
    };
    static const struct slot core2[] = {
        SLOT(NVTX_CBID_CORE2_DomainMarkEx, domain_mark),
        SLOT(NVTX_CBID_CORE2_DomainRangeStartEx, domain_start),
        SLOT(NVTX_CBID_CORE2_DomainRangeEnd, domain_end),
        SLOT(NVTX_CBID_CORE2_DomainRangePushEx, domain_push),
        SLOT(NVTX_CBID_CORE2_DomainRangePop, domain_pop),
        SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, register_string_a),
        SLOT(NVTX_CBID_CORE2_DomainRegisterStringW, register_string_w),
        SLOT(NVTX_CBID_CORE2_DomainCreateA, domain_create_a),
        SLOT(NVTX_CBID_CORE2_DomainCreateW, domain_create_w),
        SLOT(NVTX_CBID_CORE2_DomainDestroy, domain_destroy),
    };
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table)
        return 0;
    fill(table, size, core, sizeof core / sizeof core[0]);
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) && table)
        fill(table, size, core2, sizeof core2 / sizeof core2[0]);
    return 1;
}

/* Not CUDA work, so allowed at load time: NVTX reads the variable at its first call, which
 * may come before any driver call. The user's own setting wins. */
__attribute__((constructor)) static void point_nvtx_at_us(void)
{
    if (getenv("NVTX_INJECTION64_PATH") || gw_config_disabled())
        return;
    Dl_info self;
    if (!dladdr((void *)point_nvtx_at_us, &self) || !self.dli_fname || !self.dli_fname[0])
        return;
    /* LD_PRELOAD=build/libgpuwatch.so names us relative to the start directory, which the
     * program may leave before its first NVTX call: NVTX gets the absolute path */
    char absolute[PATH_MAX];
    const char *path = self.dli_fname[0] == '/' ? self.dli_fname
                                                 : realpath(self.dli_fname, absolute);
    if (path)
        setenv("NVTX_INJECTION64_PATH", path, 0);
}
