/* The rings' memory: slots of TRACE.gwt.rings mapped shared (trace_format.h), so that what
 * a thread recorded and the writer has not written yet outlives a killed process. */
#ifndef GW_RING_FILE_H
#define GW_RING_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "gpuwatch/trace_format.h"

/* A slot for a ring of `capacity` bytes (its data follows the header), marked in use; or
 * a private one in plain memory when the file cannot give one (then *shared is 0: a kill
 * loses its records). NULL when there is no memory at all. */
struct gw_ring_slot *gw_ring_slot_new(uint32_t tid, uint32_t serial, size_t capacity,
                                      int *shared);
/* The slot's thread is gone and its records are all in the trace: free for another thread
 * (reuse) or given back (a trace that has ended). */
void gw_ring_slot_release(struct gw_ring_slot *slot, int shared, int reuse);
/* Writes len bytes at ring position `at` of the slot's ring (wrapping at its capacity). */
void gw_ring_slot_put(struct gw_ring_slot *slot, uint64_t at, const void *bytes, size_t len);
/* Around writing [tail, up_to) as the chunk of seq `seq` (trace_format.h: the commit): before
 * it, the state the slot will have once the chunk is in the file (the dt chain's time and
 * the call number at up_to); after it, that state made the slot's. */
void gw_ring_slot_writing(struct gw_ring_slot *slot, uint64_t up_to, uint64_t last_ts,
                          uint64_t calls, uint32_t seq);
void gw_ring_slot_written(struct gw_ring_slot *slot);
/* A clean end: every record is in the trace; the rings file goes. */
void gw_ring_file_remove(void);
/* A forked child: the parent's slots are the parent's (left mapped, never touched). */
void gw_ring_file_forget(void);

#endif
