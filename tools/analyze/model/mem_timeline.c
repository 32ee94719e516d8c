#include "mem_timeline.h"

#include <string.h>

/* Past this width a doubling could wrap the bins' edges (corrupt times far ahead): the last
 * bin then takes everything later. */
#define MAX_WIDTH (UINT64_MAX / (4 * AN_HELD_BINS))

const char *an_held_name(int value)
{
    static const char *const names[AN_HELD_VALUES] = {
        "plain", "pool", "vmm", "managed", "pinned_host", "total",
    };
    _Static_assert(AN_MEM_PLAIN == 0 && AN_MEM_MANAGED == 3 && AN_HELD_VALUES == 6,
                   "names follow enum an_mem_kind");
    return value >= 0 && value < AN_HELD_VALUES ? names[value] : "unknown";
}

void an_held_start(struct an_mem_timeline *tl, uint64_t origin)
{
    if (tl->nbins)
        return;
    memset(tl, 0, sizeof *tl);
    tl->origin = origin;
    tl->width = AN_HELD_FIRST_WIDTH_NS;
    tl->nbins = 1;
}

/* Pairs of bins become one twice as wide: the larger maximum, the later end. */
static void merge_pairs(struct an_mem_timeline *tl)
{
    size_t n = tl->nbins;
    for (size_t i = 0; 2 * i < n; i++) {
        struct an_held_bin merged = tl->bin[2 * i];
        if (2 * i + 1 < n) {
            const struct an_held_bin *b = &tl->bin[2 * i + 1];
            for (int v = 0; v < AN_HELD_VALUES; v++)
                if (b->max[v] > merged.max[v])
                    merged.max[v] = b->max[v];
            memcpy(merged.end, b->end, sizeof merged.end);
        }
        tl->bin[i] = merged;
    }
    tl->nbins = (n + 1) / 2;
    memset(&tl->bin[tl->nbins], 0, (AN_HELD_BINS - tl->nbins) * sizeof tl->bin[0]);
    tl->width *= 2;
}

/* Opens the bin that holds t (doubling as needed); nothing changes within the bins skipped,
 * so they hold what the last one ended with. Returns the open bin. */
static struct an_held_bin *bin_at(struct an_mem_timeline *tl, uint64_t t)
{
    uint64_t i = t > tl->origin ? (t - tl->origin) / tl->width : 0;
    while (i >= AN_HELD_BINS && tl->width <= MAX_WIDTH) {
        merge_pairs(tl);
        i = (t - tl->origin) / tl->width;
    }
    if (i >= AN_HELD_BINS)
        i = AN_HELD_BINS - 1;
    const struct an_held_bin carry = tl->bin[tl->nbins - 1];
    for (size_t k = tl->nbins; k <= i; k++) {
        memcpy(tl->bin[k].max, carry.end, sizeof carry.end);
        memcpy(tl->bin[k].end, carry.end, sizeof carry.end);
    }
    if (i + 1 > tl->nbins)
        tl->nbins = (size_t)i + 1;
    return &tl->bin[tl->nbins - 1];
}

void an_held_note(struct an_mem_timeline *tl, uint64_t t, const uint64_t held[AN_MEM_KINDS],
                  uint64_t pinned)
{
    if (!tl->nbins)
        an_held_start(tl, t);
    uint64_t now[AN_HELD_VALUES] = {0};
    for (int k = 0; k < AN_MEM_KINDS; k++) {
        now[k] = held[k];
        now[AN_HELD_TOTAL] += held[k];
    }
    now[AN_HELD_PINNED] = pinned;
    struct an_held_bin *b = bin_at(tl, t);
    for (int v = 0; v < AN_HELD_VALUES; v++) {
        if (now[v] > b->max[v])
            b->max[v] = now[v];
        b->end[v] = now[v];
        if (now[v])
            tl->ever |= 1ull << v;
    }
}

void an_held_close(struct an_mem_timeline *tl, uint64_t end)
{
    if (tl->nbins && end > tl->origin)
        bin_at(tl, end - 1);
}
