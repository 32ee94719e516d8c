/* Names for the ids and enums of the trace format, from the one table (api_list.h). */
#include "trace_reader.h"

#include <stddef.h>

struct api_row {
    const char *name;
    int family;
    int async;
};

static const struct api_row api_rows[GW_API_ID_LIMIT] = {
#define GW_API(id, name, family, base, version, per_thread, async) [id] = {#name, family, async},
#include "gpuwatch/api_list.h"
#undef GW_API
};

const char *gw_api_name(unsigned api_id)
{
    return api_id < GW_API_ID_LIMIT ? api_rows[api_id].name : NULL;
}

int gw_api_family(unsigned api_id)
{
    if (api_id >= GW_API_ID_LIMIT || !api_rows[api_id].name)
        return -1;
    return api_rows[api_id].family;
}

int gw_api_async(unsigned api_id)
{
    return api_id < GW_API_ID_LIMIT && api_rows[api_id].async;
}

const char *gw_family_name(int family)
{
    static const char *const names[] = {
        [GW_FAM_PLAIN] = "plain", [GW_FAM_PROC] = "proc",     [GW_FAM_CTX] = "ctx",
        [GW_FAM_MEMINFO] = "meminfo", [GW_FAM_ALLOC] = "alloc", [GW_FAM_FREE] = "free",
        [GW_FAM_VMM] = "vmm",     [GW_FAM_HOSTMEM] = "hostmem", [GW_FAM_LAUNCH] = "launch",
        [GW_FAM_COPY] = "copy",   [GW_FAM_SET] = "set",       [GW_FAM_SYNC] = "sync",
        [GW_FAM_NAME] = "name",
    };
    if (family < 0 || (size_t)family >= sizeof names / sizeof names[0])
        return NULL;
    return names[family];
}

const char *gw_copy_dir_name(unsigned dir)
{
    static const char *const names[] = {
        [GW_COPY_UNKNOWN] = "unknown", [GW_COPY_HTOD] = "HtoD", [GW_COPY_DTOH] = "DtoH",
        [GW_COPY_DTOD] = "DtoD",       [GW_COPY_HTOH] = "HtoH", [GW_COPY_PEER] = "peer",
    };
    return dir < sizeof names / sizeof names[0] ? names[dir] : "unknown";
}

const char *gw_host_kind_name(unsigned kind)
{
    static const char *const names[] = {
        [GW_HOST_NONE] = "none",     [GW_HOST_PAGEABLE] = "pageable",
        [GW_HOST_PINNED] = "pinned", [GW_HOST_MANAGED] = "managed",
    };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *gw_proc_outcome_name(unsigned outcome)
{
    switch (outcome) {
    case GW_PROC_PASSED: return "passed";
    case GW_PROC_SUBSTITUTED: return "substituted";
    case GW_PROC_FAILED: return "failed";
    }
    return NULL;
}

const char *gw_cupti_status_name(int status)
{
    switch (status) {
    case GW_CUPTI_NOT_TRIED: return "not_tried";
    case GW_CUPTI_ACTIVE: return "active";
    case GW_CUPTI_DISABLED: return "disabled";
    case GW_CUPTI_NOT_FOUND: return "not_found";
    case GW_CUPTI_INCOMPATIBLE: return "incompatible";
    case GW_CUPTI_IN_USE: return "in_use";
    case GW_CUPTI_FAILED: return "failed";
    }
    return NULL;
}

const char *gw_clock_source_name(unsigned source)
{
    switch (source) {
    case GW_CLOCK_MONOTONIC: return "monotonic";
    case GW_CLOCK_TSC: return "tsc";
    }
    return NULL;
}

const char *gw_feature_name(unsigned bit)
{
    /* by bit: GW_FEAT_HOST_CALLS is bit 0 */
    static const char *const names[] = {"host_calls", "gpu_activity", "nvtx", "cpu_count",
                                        "cpu_samples", "corr_delta", "gpu_sampled"};
    return bit < sizeof names / sizeof names[0] ? names[bit] : NULL;
}

const char *gw_event_kind_name(enum gw_event_kind kind)
{
    switch (kind) {
    case GW_EV_CALL: return "call";
    case GW_EV_LOST: return "lost";
    case GW_EV_STRING: return "string";
    case GW_EV_SHAPE: return "shape";
    case GW_EV_STREAM: return "stream";
    case GW_EV_DEVICE: return "device";
    case GW_EV_CLOCK: return "clock";
    case GW_EV_THREAD: return "thread";
    case GW_EV_GPU_KERNEL: return "gpu_kernel";
    case GW_EV_GPU_MEMCPY: return "gpu_memcpy";
    case GW_EV_GPU_MEMSET: return "gpu_memset";
    case GW_EV_GPU_LOST: return "gpu_lost";
    case GW_EV_GPU_WINDOW: return "gpu_window";
    case GW_EV_CORRELATION: return "correlation";
    case GW_EV_RANGE_PUSH: return "range_push";
    case GW_EV_RANGE_POP: return "range_pop";
    case GW_EV_MARK: return "mark";
    case GW_EV_RANGE_START: return "range_start";
    case GW_EV_RANGE_END: return "range_end";
    case GW_EV_STACK: return "stack";
    case GW_EV_PYSTACK: return "pystack";
    case GW_EV_PYSITE: return "pysite";
    case GW_EV_PYTHON: return "python";
    case GW_EV_STACKSITE: return "stacksite";
    case GW_EV_CPU_THREAD: return "cpu_thread";
    case GW_EV_CPU_PROC: return "cpu_proc";
    case GW_EV_MEM_BLOCK: return "mem_block";
    case GW_EV_HOST_COPY: return "host_copy";
    }
    return "unknown";
}

int gw_event_kind_is_def(enum gw_event_kind kind)
{
    return (kind >= GW_EV_STRING && kind <= GW_EV_THREAD) || kind == GW_EV_STACK ||
           kind == GW_EV_PYSTACK || kind == GW_EV_PYTHON || kind == GW_EV_HOST_COPY;
}

/* CUPTI_ACTIVITY_MEMCPY_KIND_* */
const char *gw_gpu_copy_kind_name(unsigned kind)
{
    static const char *const names[] = {
        [1] = "HtoD", [2] = "DtoH", [3] = "HtoA", [4] = "AtoH", [5] = "AtoA",
        [6] = "AtoD", [7] = "DtoA", [8] = "DtoD", [9] = "HtoH", [10] = "PtoP",
    };
    return kind < sizeof names / sizeof names[0] && names[kind] ? names[kind] : "unknown";
}

/* CUPTI_ACTIVITY_MEMORY_KIND_* */
const char *gw_gpu_memory_kind_name(unsigned kind)
{
    static const char *const names[] = {
        [GW_GPU_MEM_UNKNOWN] = "unknown", [GW_GPU_MEM_PAGEABLE] = "pageable",
        [GW_GPU_MEM_PINNED] = "pinned",   [GW_GPU_MEM_DEVICE] = "device",
        [GW_GPU_MEM_ARRAY] = "array",     [GW_GPU_MEM_MANAGED] = "managed",
        [6] = "device_static",            [7] = "managed_static",
    };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *gw_damage_kind_name(enum gw_damage_kind kind)
{
    switch (kind) {
    case GW_DAMAGE_CHUNK_MAGIC: return "chunk_magic";
    case GW_DAMAGE_CHUNK_LENGTH: return "chunk_length";
    case GW_DAMAGE_CHUNK_CRC: return "chunk_crc";
    case GW_DAMAGE_CHUNK_KIND: return "chunk_kind";
    case GW_DAMAGE_RECORD: return "record";
    case GW_DAMAGE_TRUNCATED: return "truncated";
    case GW_DAMAGE_LOST_CHUNKS: return "lost_chunks";
    case GW_DAMAGE_IO: return "io";
    case GW_DAMAGE_SECOND_HEADER: return "second_header";
    }
    return "unknown";
}

/* CUresult values of CUDA 13.0's cuda.h. */
const char *gw_cu_result_name(uint32_t result)
{
    switch (result) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case 5: return "CUDA_ERROR_PROFILER_DISABLED";
    case 6: return "CUDA_ERROR_PROFILER_NOT_INITIALIZED";
    case 7: return "CUDA_ERROR_PROFILER_ALREADY_STARTED";
    case 8: return "CUDA_ERROR_PROFILER_ALREADY_STOPPED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 36: return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
    case 46: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 102: return "CUDA_ERROR_DEVICE_NOT_LICENSED";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 202: return "CUDA_ERROR_CONTEXT_ALREADY_CURRENT";
    case 205: return "CUDA_ERROR_MAP_FAILED";
    case 206: return "CUDA_ERROR_UNMAP_FAILED";
    case 207: return "CUDA_ERROR_ARRAY_IS_MAPPED";
    case 208: return "CUDA_ERROR_ALREADY_MAPPED";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 210: return "CUDA_ERROR_ALREADY_ACQUIRED";
    case 211: return "CUDA_ERROR_NOT_MAPPED";
    case 212: return "CUDA_ERROR_NOT_MAPPED_AS_ARRAY";
    case 213: return "CUDA_ERROR_NOT_MAPPED_AS_POINTER";
    case 214: return "CUDA_ERROR_ECC_UNCORRECTABLE";
    case 215: return "CUDA_ERROR_UNSUPPORTED_LIMIT";
    case 216: return "CUDA_ERROR_CONTEXT_ALREADY_IN_USE";
    case 217: return "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED";
    case 218: return "CUDA_ERROR_INVALID_PTX";
    case 219: return "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT";
    case 220: return "CUDA_ERROR_NVLINK_UNCORRECTABLE";
    case 221: return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 223: return "CUDA_ERROR_JIT_COMPILATION_DISABLED";
    case 224: return "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY";
    case 225: return "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC";
    case 226: return "CUDA_ERROR_CONTAINED";
    case 300: return "CUDA_ERROR_INVALID_SOURCE";
    case 301: return "CUDA_ERROR_FILE_NOT_FOUND";
    case 302: return "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND";
    case 303: return "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED";
    case 304: return "CUDA_ERROR_OPERATING_SYSTEM";
    case 400: return "CUDA_ERROR_INVALID_HANDLE";
    case 401: return "CUDA_ERROR_ILLEGAL_STATE";
    case 402: return "CUDA_ERROR_LOSSY_QUERY";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 600: return "CUDA_ERROR_NOT_READY";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 702: return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case 703: return "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING";
    case 704: return "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED";
    case 705: return "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED";
    case 708: return "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE";
    case 709: return "CUDA_ERROR_CONTEXT_IS_DESTROYED";
    case 710: return "CUDA_ERROR_ASSERT";
    case 711: return "CUDA_ERROR_TOO_MANY_PEERS";
    case 712: return "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    case 713: return "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED";
    case 714: return "CUDA_ERROR_HARDWARE_STACK_ERROR";
    case 715: return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    case 716: return "CUDA_ERROR_MISALIGNED_ADDRESS";
    case 717: return "CUDA_ERROR_INVALID_ADDRESS_SPACE";
    case 718: return "CUDA_ERROR_INVALID_PC";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    case 720: return "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE";
    case 721: return "CUDA_ERROR_TENSOR_MEMORY_LEAK";
    case 800: return "CUDA_ERROR_NOT_PERMITTED";
    case 801: return "CUDA_ERROR_NOT_SUPPORTED";
    case 802: return "CUDA_ERROR_SYSTEM_NOT_READY";
    case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 804: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case 805: return "CUDA_ERROR_MPS_CONNECTION_FAILED";
    case 806: return "CUDA_ERROR_MPS_RPC_FAILURE";
    case 807: return "CUDA_ERROR_MPS_SERVER_NOT_READY";
    case 808: return "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED";
    case 809: return "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED";
    case 810: return "CUDA_ERROR_MPS_CLIENT_TERMINATED";
    case 811: return "CUDA_ERROR_CDP_NOT_SUPPORTED";
    case 812: return "CUDA_ERROR_CDP_VERSION_MISMATCH";
    case 900: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case 901: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    case 902: return "CUDA_ERROR_STREAM_CAPTURE_MERGE";
    case 903: return "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED";
    case 904: return "CUDA_ERROR_STREAM_CAPTURE_UNJOINED";
    case 905: return "CUDA_ERROR_STREAM_CAPTURE_ISOLATION";
    case 906: return "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT";
    case 907: return "CUDA_ERROR_CAPTURED_EVENT";
    case 908: return "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD";
    case 909: return "CUDA_ERROR_TIMEOUT";
    case 910: return "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE";
    case 911: return "CUDA_ERROR_EXTERNAL_DEVICE";
    case 912: return "CUDA_ERROR_INVALID_CLUSTER_SIZE";
    case 913: return "CUDA_ERROR_FUNCTION_NOT_LOADED";
    case 914: return "CUDA_ERROR_INVALID_RESOURCE_TYPE";
    case 915: return "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION";
    case 916: return "CUDA_ERROR_KEY_ROTATION";
    case 999: return "CUDA_ERROR_UNKNOWN";
    }
    return NULL;
}
