#include "loader.h"

#include <sched.h>
#include <stdlib.h>

long ex_usable_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

static void *load_batches(void *arg)
{
    struct ex_loader_worker *w = arg;
    struct ex_loader *l = w->loader;
    pthread_mutex_lock(&l->lock);
    for (;; w->next += l->nworkers) {
        /* its index is sent once the loop took the batch 2 x N before it (or the loader
         * stops: batches 0) */
        while (w->next < l->batches && w->next >= l->taken + l->ahead)
            pthread_cond_wait(&w->sent, &l->lock);
        if (w->next >= l->batches)
            break;
        pthread_mutex_unlock(&l->lock);
        ex_work_ns(l->load_ns);  /* decode, in the worker */
        pthread_mutex_lock(&l->lock);
        l->loaded[w->next] = 1;
        if (w->next == l->taken)  /* the one the loop waits for */
            pthread_cond_signal(&l->ready);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

int ex_loader_start(struct ex_loader *l, long batches, uint64_t load_ns, long workers)
{
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->ready, NULL);
    l->nworkers = workers < 1 ? 1 : workers < EX_MAX_WORKERS ? workers : EX_MAX_WORKERS;
    l->batches = batches > 0 ? batches : 0;
    l->taken = 0;
    l->ahead = 2 * l->nworkers;
    l->load_ns = load_ns;
    if (!(l->loaded = calloc((size_t)l->batches + 1, 1)))
        return -1;
    for (long i = 0; i < l->nworkers; i++) {
        struct ex_loader_worker *w = &l->workers[i];
        pthread_cond_init(&w->sent, NULL);
        w->next = i;
        w->loader = l;
    }
    for (long i = 0; i < l->nworkers; i++)
        if (pthread_create(&l->workers[i].thread, NULL, load_batches, &l->workers[i]) != 0) {
            /* the batches of the workers that did not start are never loaded: stop (the
             * stride stays N: those that started leave at once) */
            pthread_mutex_lock(&l->lock);
            l->batches = 0;
            for (long j = 0; j < i; j++)
                pthread_cond_signal(&l->workers[j].sent);
            pthread_mutex_unlock(&l->lock);
            for (long j = 0; j < i; j++)
                pthread_join(l->workers[j].thread, NULL);
            l->nworkers = 0;
            free(l->loaded);
            l->loaded = NULL;
            return -1;
        }
    return 0;
}

void ex_loader_take(struct ex_loader *l)
{
    pthread_mutex_lock(&l->lock);
    if (l->taken < l->batches) {
        while (!l->loaded[l->taken])
            pthread_cond_wait(&l->ready, &l->lock);
        /* the slot it frees goes to batch taken + 2 x N, the same worker's */
        pthread_cond_signal(&l->workers[l->taken % l->nworkers].sent);
        l->taken++;
    }
    pthread_mutex_unlock(&l->lock);
}

void ex_loader_join(struct ex_loader *l)
{
    for (long w = 0; w < l->nworkers; w++)
        pthread_join(l->workers[w].thread, NULL);
    l->nworkers = 0;
    free(l->loaded);
    l->loaded = NULL;
}
