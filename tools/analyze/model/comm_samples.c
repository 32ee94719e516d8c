/* The collectives kept to line ranks up (comm_samples.h). */
#include "comm_samples.h"

#include <stdlib.h>
#include <string.h>

int an_comm_sample_add(struct an_comm_samples *s, uint64_t start, uint64_t end)
{
    uint64_t number = s->count++;
    if (!s->stride)
        s->stride = 1;
    if (number % s->stride)
        return 0;
    if (!s->v) {  /* (at the first only: the numbers kept start at 0 or none is kept) */
        s->v = number ? NULL : malloc(AN_COMM_SAMPLES * sizeof *s->v);
        if (!s->v)
            return -1;
    }
    if (s->n == AN_COMM_SAMPLES) {  /* full: keep the multiples of twice the stride */
        size_t kept = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->v[i].number % (2 * s->stride) == 0)
                s->v[kept++] = s->v[i];
        s->n = kept;
        s->stride *= 2;
        if (number % s->stride)
            return 0;
    }
    s->v[s->n++] = (struct an_comm_sample){number, start, end};
    return 0;
}

const struct an_comm_sample *an_comm_sample_find(const struct an_comm_samples *s,
                                                 uint64_t number)
{
    if (!s->stride || number % s->stride || number >= s->count)
        return NULL;
    /* every multiple of the stride below the count is kept, in order (or, memory having
     * run out at the first, none is): so it is the index */
    uint64_t i = number / s->stride;
    return i < s->n ? &s->v[i] : NULL;
}

void an_comm_samples_free(struct an_comm_samples *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}
