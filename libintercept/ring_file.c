/*
 * The rings file: TRACE.gwt.rings, one slot per live thread (trace_format.h). Slots are
 * appended as threads start, with their blocks reserved (fallocate) so that no later store
 * into the mapping can fault for want of disk; one above the process's file-size limit is
 * never made (growing past it would send the program SIGXFSZ). The descriptor is open only
 * while a slot is added. A slot whose thread has ended is reused by the next thread.
 */
#include "ring_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "quiet_io.h"
#include "recorder_internal.h"

#define FREE_SLOTS_KEPT 64

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t nslots;                      /* slots in the file */
static struct gw_ring_slot *free_slots[FREE_SLOTS_KEPT];
static size_t nfree;
static size_t slot_capacity;               /* every slot's (the recorder's ring size) */

static void rings_path(char *out, size_t size)
{
    snprintf(out, size, "%s%s", gw_rec.path, GW_RINGS_SUFFIX);
}

/* A new slot at the end of the file, mapped; NULL when the file cannot give one (*limited:
 * because of the process's file-size limit, which the trace meets first and warns of). */
static struct gw_ring_slot *append_slot(size_t capacity, int *limited)
{
    if (!gw_rec.path[0])
        return NULL;
    size_t size = GW_RING_SLOT_HEADER + capacity;
    off_t at = (off_t)(nslots * size);
    if (!gw_below_file_size_limit(at + (off_t)size)) {
        *limited = 1;
        return NULL;
    }
    char path[sizeof gw_rec.path + sizeof GW_RINGS_SUFFIX];
    rings_path(path, sizeof path);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    void *map = MAP_FAILED;
    if (gw_quiet_fallocate(fd, at, (off_t)size) == 0)
        map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at);
    close(fd);
    if (map == MAP_FAILED)
        return NULL;
    nslots++;
    return map;
}

struct gw_ring_slot *gw_ring_slot_new(uint32_t tid, uint32_t serial, size_t capacity,
                                      int *shared)
{
    struct gw_ring_slot *slot = NULL;
    int limited = 0;
    pthread_mutex_lock(&slots_lock);
    if (slot_capacity != capacity) {  /* (a new trace with another ring size) */
        nfree = 0;
        slot_capacity = capacity;
    }
    if (nfree)
        slot = free_slots[--nfree];
    else
        slot = append_slot(capacity, &limited);
    pthread_mutex_unlock(&slots_lock);
    *shared = slot != NULL;
    if (!slot) {
        if (limited)
            gw_debug("the file-size limit leaves no room for a ring slot in %s%s",
                     gw_rec.path, GW_RINGS_SUFFIX);
        else
            gw_warn_once(GW_WARN_RINGS, "cannot keep the rings in %s%s; a kill may lose the "
                         "last flush interval of records", gw_rec.path, GW_RINGS_SUFFIX);
        slot = aligned_alloc(4096, GW_RING_SLOT_HEADER + capacity);
        if (!slot)
            return NULL;
    }
    memset(slot, 0, sizeof *slot);
    slot->capacity = capacity;
    slot->pid = gw_rec.header.pid;
    slot->tid = tid;
    slot->serial = serial;
    __atomic_store_n(&slot->in_use, 1, __ATOMIC_RELEASE);
    memcpy(slot->magic, GW_RING_MAGIC, sizeof slot->magic);
    return slot;
}

void gw_ring_slot_release(struct gw_ring_slot *slot, int shared, int reuse)
{
    if (!shared) {
        free(slot);
        return;
    }
    __atomic_store_n(&slot->in_use, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&slots_lock);
    if (reuse && nfree < FREE_SLOTS_KEPT && slot->capacity == slot_capacity)
        free_slots[nfree++] = slot;
    else
        munmap(slot, GW_RING_SLOT_HEADER + slot->capacity);  /* (its place in the file stays) */
    pthread_mutex_unlock(&slots_lock);
}

void gw_ring_slot_put(struct gw_ring_slot *slot, uint64_t at, const void *bytes, size_t len)
{
    uint8_t *data = (uint8_t *)slot + GW_RING_SLOT_HEADER;
    uint64_t offset = at & (slot->capacity - 1);
    uint64_t first = slot->capacity - offset < len ? slot->capacity - offset : len;
    memcpy(data + offset, bytes, first);
    memcpy(data, (const uint8_t *)bytes + first, len - first);
}

void gw_ring_slot_writing(struct gw_ring_slot *slot, uint64_t up_to, uint64_t last_ts,
                          uint64_t calls, uint32_t seq)
{
    slot->pending_tail = up_to;
    slot->pending_last_ts = last_ts;
    slot->pending_calls = calls;
    slot->pending_seq = seq;
    __atomic_store_n(&slot->pending, 1, __ATOMIC_RELEASE);
}

void gw_ring_slot_written(struct gw_ring_slot *slot)
{
    slot->tail = slot->pending_tail;
    slot->last_ts = slot->pending_last_ts;
    slot->calls = slot->pending_calls;
    slot->seq = slot->pending_seq + 1;
    __atomic_store_n(&slot->pending, 0, __ATOMIC_RELEASE);
}

void gw_ring_file_remove(void)
{
    char path[sizeof gw_rec.path + sizeof GW_RINGS_SUFFIX];
    pthread_mutex_lock(&slots_lock);
    if (gw_rec.path[0] && nslots) {
        rings_path(path, sizeof path);
        unlink(path);
    }
    nslots = nfree = 0;
    pthread_mutex_unlock(&slots_lock);
}

void gw_ring_file_forget(void)
{
    pthread_mutex_init(&slots_lock, NULL);
    nslots = nfree = 0;
}
