/* Shared between the recorder's files (rings, definitions, file, writer); not for hooks. */
#ifndef GW_RECORDER_INTERNAL_H
#define GW_RECORDER_INTERNAL_H

#include <pthread.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuwatch/trace_format.h"

struct gw_ring {
    uint8_t *data;                 /* the slot's ring bytes */
    struct gw_ring_slot *slot;     /* ring_file.c: what outlives the process (head, and the
                                      writer's committed state) */
    int shared;                    /* the slot is in the rings file */
    uint64_t mask;                 /* capacity - 1 (capacity is a power of two) */
    uint64_t tail;                 /* writer position; published with release */
    uint64_t producer_last_ts;     /* producer only: time the next dt is relative to */
    uint64_t lost;                 /* producer only: dropped since the last LOST record */
    uint64_t lost_calls;           /* producer only: how many of those were calls */
    uint64_t calls;                /* producer only: calls numbered so far (host call ids) */
    uint64_t producer_link_base;   /* producer only: the call id the next GPU record's `call`
                                      word is relative to (trace_format.h) */
    uint64_t producer_corr_base;   /* producer only: the correlation id the next GPU record's
                                      is relative to (GW_FEAT_CORR_DELTA) */
    int wake_sent;                 /* producer only: already asked the writer to drain */
    int waited;                    /* producer only: a call reported a wait (gw_rec_wait) since
                                      the observer, if any, was last told */
    uint64_t stretch_at;           /* producer only: end of the thread's latest call +
                                      GW_PY_STRETCH_NS, UINT64_MAX before its first; 0
                                      from a wait to its call's record */
    uint64_t stretch_before_wait;  /* producer only: stretch_at when a wait zeroed it */
    unsigned generation;           /* recorder generation it belongs to (fork resets) */
    uint32_t tid;
    uint32_t serial;               /* unique per ring in the process: call ids use it, not tid */
    int dead;                      /* the thread has exited; free once drained */
    /* producer writes, the CPU sampler reads (relaxed atomics): time in calls that may wait
     * for the GPU, and the thread's CPU time in them (hooks.h: GW_WAIT_BEGIN) */
    uint64_t wait_ns, wait_cpu_ns;
    uint64_t writer_last_ts;       /* writer only: time the next chunk's dt chain starts */
    uint32_t writer_seq;           /* writer only: next chunk sequence number */
    uint64_t writer_calls;         /* writer only: number of the next chunk's first call */
    uint64_t writer_link_base;     /* writer only: the next chunk's link_base (CALL_BASE) */
    uint64_t writer_corr_base;     /* writer only: the next chunk's corr_base (CALL_BASE) */
    struct gw_ring *next;
};

struct gw_recorder {
    int fd;                        /* kept high, checked before each write (trace_file.c) */
    dev_t dev;                     /* the trace file's identity, to tell it from a file the */
    ino_t ino;                     /* program opened on the same descriptor number */
    char path[1200];
    int failed;                    /* a write failed: tracing stopped */
    unsigned flush_ms;
    size_t ring_bytes;
    pthread_mutex_t rings_lock;    /* guards the ring list */
    struct gw_ring *rings;
    pthread_mutex_t file_lock;     /* guards fd writes and header patches */
    struct gw_file_header header;
    uint64_t events, lost, chunks, bytes;
};

extern struct gw_recorder gw_rec;

/* defs.c: the definitions buffer the writer drains before any ring. */
void gw_defs_append(const uint8_t *record, size_t len);
/* Moves the pending definitions into *out (caller frees); returns their length, and in
 * *mirrored how far the rings file's copy of them reaches. Around writing them as a DEFS
 * chunk of seq `seq`: gw_defs_writing before, gw_defs_written after (trace_format.h: the
 * rings file's commit). */
size_t gw_defs_take(uint8_t **out, uint64_t *mirrored);
void gw_defs_writing(uint64_t mirrored, uint32_t seq);
void gw_defs_written(void);
void gw_defs_reset(void);

/* trace_file.c */
int gw_trace_file_open(const char *dir);
int gw_trace_file_write_chunk(uint16_t kind, uint32_t tid, uint64_t base_ts, uint32_t seq,
                              const uint8_t *payload, size_t len);
void gw_trace_file_patch_header(void);
void gw_trace_file_close(void);
/* A forked child: closes its copy of the parent's descriptor, if it still is the trace. */
void gw_trace_file_forget(void);

/* writer.c */
int gw_writer_start(void);
void gw_writer_stop(void);
void gw_writer_wake(void);
void gw_writer_request_flush(unsigned timeout_ms);
/* Drains every ring once (writer thread, or the final drain at stop). */
void gw_writer_drain_all(void);
/* The last drain, at stop: also writes each ring's drops that no record followed (LOST). */
void gw_writer_drain_final(void);
void gw_writer_after_fork_child(void);

#endif
