/*
 * fakecuda: collectives across processes (FAKECUDA_COLLECTIVE_FILE). On a GPU an NCCL
 * kernel starts on each rank when that rank's stream reaches it and ends on every rank
 * when the last rank's has started and the transfer is done: the ranks that arrive early
 * spend the difference inside it. Here the ranks (processes with RANK and WORLD_SIZE set)
 * share one file, mapped: each writes the simulated start of its k-th collective into slot
 * k mod RING, then waits until every rank has written its own; the k-th collective ends,
 * on all of them, at the latest start plus the kernel's duration.
 *
 * The wait is in the launch call, on the host: the fake computes an op's end when it is
 * enqueued, so it must know the last rank's start then. (On a GPU the launch returns at
 * once and the host waits at its next synchronisation instead; the GPU timeline is the
 * same.) A rank that never arrives (it crashed) is given up after COLLECTIVE_TIMEOUT_NS:
 * the collective then ends as if alone, with one warning on stderr.
 */
#include "fakecuda.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define COLLECTIVE_RANKS 256
#define COLLECTIVE_RING 16         /* a rank can be at most one collective ahead of another */
#define COLLECTIVE_POLL_NS 20000
#define COLLECTIVE_TIMEOUT_NS 60000000000ll

struct collective_slot {
    _Atomic int64_t start[COLLECTIVE_RANKS];
    _Atomic uint64_t arrived[COLLECTIVE_RANKS];  /* k + 1 once rank r wrote its k-th start */
};

static struct collective_slot *shared;   /* COLLECTIVE_RING slots; NULL: collectives off */
static int my_rank, world_size;
static _Atomic uint64_t next_collective; /* this process's collectives so far */
static atomic_flag warned = ATOMIC_FLAG_INIT;

static int env_int(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && n >= 0 && n <= 1 << 20 ? (int)n : -1;
}

void fc_collective_init(void)
{
    const char *path = getenv("FAKECUDA_COLLECTIVE_FILE");
    if (!path || !*path)
        return;
    my_rank = env_int("RANK");
    world_size = env_int("WORLD_SIZE");
    if (my_rank < 0 || world_size < 1 || world_size > COLLECTIVE_RANKS || my_rank >= world_size) {
        fprintf(stderr, "fakecuda: FAKECUDA_COLLECTIVE_FILE needs RANK < WORLD_SIZE <= %d; "
                "collectives run alone\n", COLLECTIVE_RANKS);
        return;
    }
    size_t size = COLLECTIVE_RING * sizeof(struct collective_slot);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    /* (every rank sizes it: the first creates it zeroed, the others find it that size) */
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        perror(path);
        if (fd >= 0)
            close(fd);
        return;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        perror(path);
        return;
    }
    shared = p;
}

int fc_collective_on(void) { return shared != NULL; }

int fc_is_collective(const char *name) { return name && !strncmp(name, "nccl", 4); }

int64_t fc_collective_end(int64_t start, int64_t dur_ns)
{
    uint64_t k = atomic_fetch_add_explicit(&next_collective, 1, memory_order_relaxed);
    struct collective_slot *slot = &shared[k % COLLECTIVE_RING];
    atomic_store_explicit(&slot->start[my_rank], start, memory_order_relaxed);
    atomic_store_explicit(&slot->arrived[my_rank], k + 1, memory_order_release);
    int64_t last = start, give_up = fc_now() + COLLECTIVE_TIMEOUT_NS;
    for (int r = 0; r < world_size; r++) {
        while (atomic_load_explicit(&slot->arrived[r], memory_order_acquire) < k + 1) {
            if (fc_now() > give_up) {
                if (!atomic_flag_test_and_set(&warned))
                    fprintf(stderr, "fakecuda: rank %d never reached collective %llu; "
                            "it ends without it\n", r, (unsigned long long)k);
                return start + dur_ns;
            }
            struct timespec ts = {0, COLLECTIVE_POLL_NS};
            nanosleep(&ts, NULL);
        }
        int64_t s = atomic_load_explicit(&slot->start[r], memory_order_relaxed);
        if (s > last)
            last = s;
    }
    return last + dur_ns;
}
