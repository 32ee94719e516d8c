#include "loader.h"

#include <sched.h>

#include "common.h"

long ex_usable_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

static void *load_batches(void *arg)
{
    struct ex_loader *l = arg;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        while (l->to_start > 0 && l->loaded + l->loading >= l->ahead)
            pthread_cond_wait(&l->changed, &l->lock);
        if (l->to_start <= 0)
            break;
        l->to_start--;
        l->loading++;
        pthread_mutex_unlock(&l->lock);
        ex_work_ns(l->load_ns);  /* decode, in the worker */
        pthread_mutex_lock(&l->lock);
        l->loading--;
        l->loaded++;
        pthread_cond_broadcast(&l->changed);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

int ex_loader_start(struct ex_loader *l, long batches, uint64_t load_ns, long workers)
{
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->changed, NULL);
    l->nworkers = workers < 1 ? 1 : workers < EX_MAX_WORKERS ? workers : EX_MAX_WORKERS;
    l->loaded = l->loading = 0;
    l->to_start = batches;
    l->ahead = 2 * l->nworkers;
    l->load_ns = load_ns;
    for (long w = 0; w < l->nworkers; w++)
        if (pthread_create(&l->workers[w], NULL, load_batches, l) != 0) {
            l->nworkers = w;
            return -1;
        }
    return 0;
}

void ex_loader_take(struct ex_loader *l)
{
    pthread_mutex_lock(&l->lock);
    while (l->loaded == 0)
        pthread_cond_wait(&l->changed, &l->lock);
    l->loaded--;
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->lock);
}

void ex_loader_join(struct ex_loader *l)
{
    for (long w = 0; w < l->nworkers; w++)
        pthread_join(l->workers[w], NULL);
    l->nworkers = 0;
}
