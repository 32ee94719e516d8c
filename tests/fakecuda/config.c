/* fakecuda: environment, process state, cuInit, cuDriverGetVersion, cuGetExportTable. */
#include "fakecuda.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fc_config fc_cfg;
atomic_int fc_initialized;

static pthread_once_t config_once = PTHREAD_ONCE_INIT;

void fc_warn(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

void fc_log(const char *fmt, ...)
{
    if (!fc_cfg.verbose)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fc_warn("fakecuda: %s", buf);
}

/* Parse an unsigned integer env var in [lo, hi]; anything else warns once and gives def. */
static uint64_t env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-' || v < lo || v > hi) {
        fc_warn("fakecuda: ignoring %s=\"%s\" (want an integer in [%llu, %llu]); using %llu",
                name, s, (unsigned long long)lo, (unsigned long long)hi,
                (unsigned long long)def);
        return def;
    }
    return v;
}

static double env_gbps(const char *name, double def)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v > 0.0) || v > 1e6) {
        fc_warn("fakecuda: ignoring %s=\"%s\" (want a number of GB/s in (0, 1e6]); using %g",
                name, s, def);
        return def;
    }
    return v;
}

static void config_load_once(void)
{
    uint64_t mb = env_u64("FAKECUDA_MEM_MB", 1024, 1, (uint64_t)1 << 24);
    fc_cfg.mem_bytes = mb << 20;
    uint64_t others = env_u64("FAKECUDA_MEM_USED_BY_OTHERS_MB", 0, 0, (uint64_t)1 << 24);
    if (others > mb) {
        fc_warn("fakecuda: FAKECUDA_MEM_USED_BY_OTHERS_MB=%llu exceeds FAKECUDA_MEM_MB=%llu; "
                "using 0", (unsigned long long)others, (unsigned long long)mb);
        others = 0;
    }
    fc_cfg.others_bytes = others << 20;
    fc_cfg.kernel_ns = (int64_t)env_u64("FAKECUDA_KERNEL_NS", 2000, 0, 3600ull * 1000000000ull);
    fc_cfg.pinned_gbps = env_gbps("FAKECUDA_PINNED_GBPS", 20.0);
    fc_cfg.pageable_gbps = env_gbps("FAKECUDA_PAGEABLE_GBPS", 5.0);
    fc_cfg.d2d_gbps = env_gbps("FAKECUDA_D2D_GBPS", 500.0);
    fc_cfg.driver_version = (int)env_u64("FAKECUDA_DRIVER_VERSION", 13000, 2000, 99990);
    fc_cfg.verbose = (int)env_u64("FAKECUDA_VERBOSE", 0, 0, 1);
    fc_cfg.spin_wait = (int)env_u64("FAKECUDA_SPIN_WAIT", 1, 0, 1);
    fc_cfg.move_bytes = (int)env_u64("FAKECUDA_MOVE_BYTES", 1, 0, 1);
    fc_cfg.graph_records = (int)env_u64("FAKECUDA_GRAPH_RECORDS", 1, 0, 1);
    fc_cfg.probe_result = (CUresult)env_u64("FAKECUDA_PROBE_RESULT", CUDA_ERROR_NOT_FOUND, 0, 999);
}

void fc_config_load(void)
{
    pthread_once(&config_once, config_load_once);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CUresult init_result;

static void init_once_fn(void)
{
    fc_config_load();
    if (env_u64("FAKECUDA_NO_DEVICE", 0, 0, 1)) {
        init_result = CUDA_ERROR_NO_DEVICE;
        return;
    }
    init_result = fc_memory_init();
    if (init_result == CUDA_SUCCESS) {
        fc_collective_init();
        atomic_store_explicit(&fc_initialized, 1, memory_order_release);
    }
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&init_once, init_once_fn);
    fc_log("cuInit -> %d", (int)init_result);
    return init_result;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    fc_config_load();
    *driverVersion = fc_cfg.driver_version;
    fc_log("cuDriverGetVersion -> %d", fc_cfg.driver_version);
    return CUDA_SUCCESS;
}

/* The runtime asks for private tables by UUID; the fake has none. */
CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    if (!ppExportTable || !pExportTableId)
        return CUDA_ERROR_INVALID_VALUE;
    *ppExportTable = NULL;
    fc_config_load();
    if (fc_cfg.verbose) {
        char hex[33];
        for (int i = 0; i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", (unsigned char)pExportTableId->bytes[i]);
        fc_log("cuGetExportTable(%s) -> CUDA_ERROR_NOT_SUPPORTED", hex);
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}
