#include "lifecycle.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "cpu_sampler.h"
#include "cupti_timeline.h"
#include "log.h"
#include "recorder.h"
#include "ranges.h"
#include "resolve.h"
#include "signals.h"
#include "call_sites.h"
#include "py_frames.h"
#include "stack_capture.h"

int gw_state = GW_STATE_UNINIT;
static GW_TLS int starting_here;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int process_hooks_installed;
static int signal_handlers_installed;


static void at_exit(void)
{
    __atomic_store_n(&gw_state, GW_STATE_OFF, __ATOMIC_RELEASE);
    gw_cupti_stop();
    gw_recorder_stop();
}

static void before_fork(void) { pthread_mutex_lock(&start_lock); }

static void after_fork_parent(void) { pthread_mutex_unlock(&start_lock); }

static void after_fork_child(void)
{
    pthread_mutex_init(&start_lock, NULL);
    gw_log_reset_after_fork();
    gw_cupti_after_fork_child();
    gw_recorder_after_fork_child();
    gw_ranges_reset();
    /* A child starts untraced: it gets a file of its own only if it calls the driver. */
    int was = __atomic_load_n(&gw_state, __ATOMIC_RELAXED);
    if (was != GW_STATE_OFF || !gw_config_disabled())
        __atomic_store_n(&gw_state, GW_STATE_UNINIT, __ATOMIC_RELEASE);
    gw_in_hook = 0;
    starting_here = 0;
}

int gw_tracing_start(void)
{
    int state = __atomic_load_n(&gw_state, __ATOMIC_ACQUIRE);
    if (state == GW_STATE_READY)
        return 1;
    if (state == GW_STATE_OFF || starting_here)
        return 0;
    int saved_errno = errno;
    pthread_mutex_lock(&start_lock);
    if (__atomic_load_n(&gw_state, __ATOMIC_ACQUIRE) == GW_STATE_UNINIT) {
        starting_here = 1;
        __atomic_store_n(&gw_state, GW_STATE_STARTING, __ATOMIC_RELEASE);
        struct gw_config cfg;
        gw_config_load(&cfg);
        int next = GW_STATE_OFF;
        if (!cfg.disabled && gw_resolve_init() == 0) {
            gw_clock_init(cfg.use_tsc);
            gw_stack_init(cfg.stack_depth, cfg.stack_libc);
            if (gw_recorder_start(&cfg) == 0) {
                next = GW_STATE_READY;
                gw_cupti_start(&cfg);
                gw_cpu_sampler_start();
                gw_py_init(cfg.py_depth, cfg.py_read_frames);
                gw_call_sites_start(cfg.stack_depth > 0, cfg.site_every_ms);
            }
        }
        if (!process_hooks_installed) {
            /* Registered once per process image: children inherit them. */
            process_hooks_installed = 1;
            atexit(at_exit);
            pthread_atfork(before_fork, after_fork_parent, after_fork_child);
        }
        if (next == GW_STATE_READY && !signal_handlers_installed) {
            /* Once per process image: a forked child keeps ours, chained as before. */
            signal_handlers_installed = 1;
            gw_signals_install();
        }
        __atomic_store_n(&gw_state, next, __ATOMIC_RELEASE);
        starting_here = 0;
    }
    pthread_mutex_unlock(&start_lock);
    errno = saved_errno;
    return __atomic_load_n(&gw_state, __ATOMIC_ACQUIRE) == GW_STATE_READY;
}

int gw_enter_slow(void)
{
    if (gw_in_hook || !gw_tracing_start())
        return 0;
    gw_in_hook = 1;
    return 1;
}
