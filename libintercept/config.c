#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpuwatch/trace_format.h"
#include "log.h"

#define DEFAULT_OUTPUT "gpuwatch-traces"
#define DEFAULT_FLUSH_MS 50
#define DEFAULT_BUFFER_KB 2048
#define DEFAULT_STACK_DEPTH 12
#define DEFAULT_PY_DEPTH 16
#define DEFAULT_SITE_EVERY_MS 10
/* 2 s of every 30: a fifteenth of CUPTI's cost (+18 % on a launch-bound H100 loop, full),
 * and steps enough in each window for their kernels' lengths. */
#define DEFAULT_WINDOW_MS 2000
#define DEFAULT_EVERY_MS 30000
/* CUPTI's activity costs about 4 us a kernel on an H100 (examples/pytorch/README.md): at
 * 5000 operations a second, 10000 records with their launches', that is 2 % of the time,
 * the most the whole timeline may cost. */
#define DEFAULT_FULL_RATE 10000

int gw_config_disabled(void)
{
    const char *value = getenv("GPUWATCH_DISABLE");
    return value && value[0] && strcmp(value, "0") != 0;
}

/* Parses VAR as an integer in [min, max]; warns and returns fallback when it is not. */
static unsigned long env_number(const char *var, unsigned long min, unsigned long max,
                                unsigned long fallback)
{
    const char *text = getenv(var);
    if (!text || !*text)
        return fallback;
    char *end;
    errno = 0;
    unsigned long value = strtoul(text, &end, 10);
    if (errno || *end || text[0] == '-' || value < min || value > max) {
        gw_warn("%s=%s is not a number in %lu..%lu; using %lu", var, text, min, max, fallback);
        return fallback;
    }
    return value;
}

/* A setting of two words: 1 when VAR names `other`, 0 for `usual` or unset; anything else
 * warns and is taken as `usual`. */
static int env_other(const char *var, const char *usual, const char *other)
{
    const char *text = getenv(var);
    if (!text || !*text || strcmp(text, usual) == 0)
        return 0;
    if (strcmp(text, other) == 0)
        return 1;
    gw_warn("%s=%s is not '%s' or '%s'; using %s", var, text, usual, other, usual);
    return 0;
}

static size_t round_up_pow2(size_t value)
{
    size_t pow2 = 1;
    while (pow2 < value)
        pow2 <<= 1;
    return pow2;
}

void gw_config_load(struct gw_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->disabled = gw_config_disabled();
    const char *log = getenv("GPUWATCH_LOG");
    cfg->verbose = log && log[0] && strcmp(log, "0") != 0;
    gw_log_set_verbose(cfg->verbose);

    const char *dir = getenv("GPUWATCH_OUTPUT");
    if (dir && strlen(dir) >= sizeof cfg->output_dir) {
        gw_warn("GPUWATCH_OUTPUT is longer than %zu bytes; using ./%s",
                sizeof cfg->output_dir - 1, DEFAULT_OUTPUT);
        dir = NULL;
    }
    strcpy(cfg->output_dir, dir && *dir ? dir : DEFAULT_OUTPUT);

    cfg->flush_ms = (unsigned)env_number("GPUWATCH_FLUSH_MS", 1, 1000, DEFAULT_FLUSH_MS);
    size_t kib = env_number("GPUWATCH_BUFFER_KB", 64, 1048576, DEFAULT_BUFFER_KB);
    cfg->thread_buffer_bytes = round_up_pow2(kib * 1024);
    cfg->stack_depth = (unsigned)env_number("GPUWATCH_STACK_DEPTH", 0, GW_STACK_MAX_FRAMES,
                                            DEFAULT_STACK_DEPTH);

    cfg->site_every_ms = (unsigned)env_number("GPUWATCH_SITE_EVERY_MS", 0, 60000,
                                              DEFAULT_SITE_EVERY_MS);
    cfg->py_depth = (unsigned)env_number("GPUWATCH_PY_DEPTH", 0, GW_STACK_MAX_FRAMES,
                                         DEFAULT_PY_DEPTH);

    cfg->py_read_frames = !env_other("GPUWATCH_PY_FRAMES", "read", "hooks");
    cfg->stack_libc = env_other("GPUWATCH_STACK_UNWINDER", "libunwind", "libc");

    const char *timeline = getenv("GPUWATCH_TIMELINE");
    cfg->timeline = GW_TIMELINE_SAMPLED;
    if (timeline && *timeline) {
        if (strcmp(timeline, "full") == 0)
            cfg->timeline = GW_TIMELINE_FULL;
        else if (strcmp(timeline, "off") == 0)
            cfg->timeline = GW_TIMELINE_OFF;
        else if (strcmp(timeline, "sampled") != 0)
            gw_warn("GPUWATCH_TIMELINE=%s is not 'full', 'sampled' or 'off'; using sampled",
                    timeline);
    }
    cfg->window_ms = (unsigned)env_number("GPUWATCH_TIMELINE_WINDOW_MS", 1, 3600000,
                                          DEFAULT_WINDOW_MS);
    cfg->every_ms = (unsigned)env_number("GPUWATCH_TIMELINE_EVERY_MS", 1, 86400000,
                                         DEFAULT_EVERY_MS);
    cfg->full_rate = (unsigned)env_number("GPUWATCH_TIMELINE_FULL_RATE", 0, 100000000,
                                          DEFAULT_FULL_RATE);
    if (cfg->every_ms <= cfg->window_ms)
        cfg->timeline = cfg->timeline == GW_TIMELINE_SAMPLED ? GW_TIMELINE_FULL : cfg->timeline;

    cfg->host_copy_bps = env_number("GPUWATCH_HOST_COPY_BPS", 0, 1000000000000000ul, 0);
    cfg->wake_ns = env_number("GPUWATCH_WAKE_NS", 0, 1000000000ul, 0);
    cfg->use_tsc = !env_other("GPUWATCH_CLOCK", "tsc", "monotonic");
}
