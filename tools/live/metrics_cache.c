/* The latest metrics of a directory, kept by a thread (metrics_cache.h). */
#include "metrics_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counter_floor.h"
#include "live_run.h"
#include "metrics.h"

struct gw_metrics_cache {
    const char *dir;
    const struct an_options *opt;
    unsigned period_ms;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;      /* a new analysis, or stop */
    int stop;
    char *body[2];               /* [openmetrics] */
    size_t len[2];
    uint64_t fingerprint;
    struct gw_counter_floor floor;  /* the thread's own */
};

/* Writes the metrics of run (NULL: none yet) in a malloc'd buffer. */
static char *write_run(const struct an_run *run, const struct an_options *opt, int om,
                       struct gw_counter_floor *floor, size_t *len)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    struct an_run none = {.opt = *opt};  /* no process yet: the families, no samples */
    gw_metrics_write(out, run ? run : &none, om, floor);
    if (fclose(out) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *gw_metrics_render(const char *dir, const struct an_options *opt, int openmetrics,
                        struct gw_counter_floor *floor, size_t *len)
{
    struct an_run run;
    int have = gw_live_analyze(dir, opt, &run);
    char *body = write_run(have ? &run : NULL, opt, openmetrics, floor, len);
    if (have)
        an_run_free(&run);
    return body;
}

static void deadline_after(struct timespec *ts, unsigned ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void *analyzer(void *arg)
{
    struct gw_metrics_cache *c = arg;
    int first = 1;
    for (;;) {
        struct timespec next;
        deadline_after(&next, c->period_ms);
        uint64_t fingerprint = gw_live_fingerprint(c->dir);
        if (first || fingerprint != c->fingerprint) {
            struct an_run run;
            int have = gw_live_analyze(c->dir, c->opt, &run);
            size_t len[2];
            char *body[2];
            for (int om = 0; om < 2; om++)
                body[om] = write_run(have ? &run : NULL, c->opt, om, &c->floor, &len[om]);
            if (have)
                an_run_free(&run);
            pthread_mutex_lock(&c->lock);
            for (int om = 0; om < 2; om++) {
                if (!body[om])
                    continue;  /* out of memory: the previous one stays */
                free(c->body[om]);
                c->body[om] = body[om];
                c->len[om] = len[om];
            }
            c->fingerprint = fingerprint;
            first = 0;
            pthread_cond_broadcast(&c->changed);
            pthread_mutex_unlock(&c->lock);
        }
        pthread_mutex_lock(&c->lock);
        while (!c->stop && pthread_cond_timedwait(&c->changed, &c->lock, &next) != ETIMEDOUT)
            ;
        int stop = c->stop;
        pthread_mutex_unlock(&c->lock);
        if (stop)
            return NULL;
    }
}

struct gw_metrics_cache *gw_metrics_cache_start(const char *dir, const struct an_options *opt,
                                                unsigned period_ms)
{
    struct gw_metrics_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->dir = dir;
    c->opt = opt;
    c->period_ms = period_ms ? period_ms : 1;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->changed, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&c->lock, NULL);
    if (pthread_create(&c->thread, NULL, analyzer, c) != 0) {
        pthread_cond_destroy(&c->changed);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
    }
    return c;
}

char *gw_metrics_cache_get(struct gw_metrics_cache *c, int openmetrics, size_t *len,
                           int wait_ms)
{
    int om = openmetrics ? 1 : 0;
    struct timespec until;
    deadline_after(&until, (unsigned)wait_ms);
    pthread_mutex_lock(&c->lock);
    while (!c->body[om] &&
           pthread_cond_timedwait(&c->changed, &c->lock, &until) != ETIMEDOUT)
        ;
    char *copy = NULL;
    if (c->body[om] && (copy = malloc(c->len[om] ? c->len[om] : 1)) != NULL) {
        memcpy(copy, c->body[om], c->len[om]);
        *len = c->len[om];
    }
    pthread_mutex_unlock(&c->lock);
    return copy;
}

void gw_metrics_cache_stop(struct gw_metrics_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->stop = 1;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    for (int om = 0; om < 2; om++)
        free(c->body[om]);
    gw_counter_floor_free(&c->floor);
    pthread_cond_destroy(&c->changed);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
