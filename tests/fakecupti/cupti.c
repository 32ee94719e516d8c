/*
 * fakecupti: configuration, version, result strings, clocks, subscribers, finalize.
 * The activity API is in activity.c.
 */
#include "fakecupti.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct fk_config fk_cfg = { .version = CUPTI_API_VERSION, .in_use = 0, .buffer_limit = 0 };
_Atomic(CUpti_TimestampCallbackFunc) fk_timestamp_cb;

void fk_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fakecupti: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* an unsigned integer in [lo, hi], or the default with one warning */
static unsigned long long env_uint(const char *name, unsigned long long def,
                                   unsigned long long lo, unsigned long long hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || *v == '-' || x < lo || x > hi) {
        fk_warn("%s=%s is not a number in [%llu, %llu]; using %llu", name, v, lo, hi, def);
        return def;
    }
    return x;
}

static void config_once(void)
{
    fk_cfg.version = (uint32_t)env_uint("FAKECUPTI_VERSION", CUPTI_API_VERSION, 1, UINT32_MAX);
    fk_cfg.in_use = (int)env_uint("FAKECUPTI_IN_USE", 0, 0, 1);
    fk_cfg.buffer_limit = (size_t)env_uint("FAKECUPTI_BUFFER_LIMIT", 0, 0, 1u << 30);
    fk_cfg.no_records = (int)env_uint("FAKECUPTI_NO_RECORDS", 0, 0, 1);
}

void fk_config_load(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, config_once);
}

int64_t fk_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t fk_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- version, results ---- */

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
    if (!version)
        return CUPTI_ERROR_INVALID_PARAMETER;
    fk_config_load();
    *version = fk_cfg.version;
    return CUPTI_SUCCESS;
}

#define R(x) [x] = #x
static const char *const result_names[] = {
    R(CUPTI_SUCCESS),
    R(CUPTI_ERROR_INVALID_PARAMETER),
    R(CUPTI_ERROR_INVALID_DEVICE),
    R(CUPTI_ERROR_INVALID_CONTEXT),
    R(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID),
    R(CUPTI_ERROR_INVALID_EVENT_ID),
    R(CUPTI_ERROR_INVALID_EVENT_NAME),
    R(CUPTI_ERROR_INVALID_OPERATION),
    R(CUPTI_ERROR_OUT_OF_MEMORY),
    R(CUPTI_ERROR_HARDWARE),
    R(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT),
    R(CUPTI_ERROR_API_NOT_IMPLEMENTED),
    R(CUPTI_ERROR_MAX_LIMIT_REACHED),
    R(CUPTI_ERROR_NOT_READY),
    R(CUPTI_ERROR_NOT_COMPATIBLE),
    R(CUPTI_ERROR_NOT_INITIALIZED),
    R(CUPTI_ERROR_INVALID_METRIC_ID),
    R(CUPTI_ERROR_INVALID_METRIC_NAME),
    R(CUPTI_ERROR_QUEUE_EMPTY),
    R(CUPTI_ERROR_INVALID_HANDLE),
    R(CUPTI_ERROR_INVALID_STREAM),
    R(CUPTI_ERROR_INVALID_KIND),
    R(CUPTI_ERROR_INVALID_EVENT_VALUE),
    R(CUPTI_ERROR_DISABLED),
    R(CUPTI_ERROR_INVALID_MODULE),
    R(CUPTI_ERROR_INVALID_METRIC_VALUE),
    R(CUPTI_ERROR_HARDWARE_BUSY),
    R(CUPTI_ERROR_NOT_SUPPORTED),
    R(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED),
    R(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE),
    R(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES),
    R(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS),
    R(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED),
    R(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED),
    R(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE),
    R(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES),
    R(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED),
    R(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE),
    R(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED),
    R(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
    R(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES),
    R(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED),
    R(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED),
    R(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED),
    R(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED),
    R(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED),
    R(CUPTI_ERROR_INVALID_CHIP_NAME),
};
#undef R

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    if (!str)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (result == CUPTI_ERROR_UNKNOWN) {
        *str = "CUPTI_ERROR_UNKNOWN";
        return CUPTI_SUCCESS;
    }
    if ((unsigned)result < sizeof result_names / sizeof result_names[0] &&
        result_names[result]) {
        *str = result_names[result];
        return CUPTI_SUCCESS;
    }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

/* ---- timestamps ---- */

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp)
        return CUPTI_ERROR_INVALID_PARAMETER;
    CUpti_TimestampCallbackFunc cb = atomic_load(&fk_timestamp_cb);
    *timestamp = cb ? cb() : (uint64_t)fk_realtime_ns();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
    if (!funcTimestamp)
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&fk_timestamp_cb, funcTimestamp);
    return CUPTI_SUCCESS;
}

/* ---- the callback API: one subscriber; its callback is never called (no API domains
 * are simulated) ---- */

struct CUpti_Subscriber_st {
    CUpti_CallbackFunc callback;
    void *userdata;
};

static struct CUpti_Subscriber_st the_subscriber;
static _Atomic(CUpti_SubscriberHandle) subscribed;

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                    CUpti_CallbackFunc callback, void *userdata)
{
    if (!subscriber)
        return CUPTI_ERROR_INVALID_PARAMETER;
    fk_config_load();
    if (fk_cfg.in_use)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    CUpti_SubscriberHandle expected = NULL;
    if (!atomic_compare_exchange_strong(&subscribed, &expected, &the_subscriber))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    the_subscriber.callback = callback;
    the_subscriber.userdata = userdata;
    *subscriber = &the_subscriber;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    CUpti_SubscriberHandle expected = subscriber;
    if (!subscriber || !atomic_compare_exchange_strong(&subscribed, &expected, NULL))
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_SUCCESS;
}

/* ---- detach ---- */

CUptiResult CUPTIAPI cuptiFinalize(void)
{
    fk_activity_finalize();
    atomic_store(&fk_timestamp_cb, NULL);
    atomic_store(&subscribed, NULL);
    return CUPTI_SUCCESS;
}
