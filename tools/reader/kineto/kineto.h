/*
 * Kineto (PyTorch profiler) traces behind the reader API: a Chrome-trace JSON file, plain or
 * gzip'd, whose top-level object holds "traceEvents". gw_reader_open recognises one by its
 * content and hands it here; gw_reader_next then returns the same struct gw_event a .gwt
 * gives, in time order.
 *
 *   kineto_stream.c  the file: zlib in, yajl's streaming callbacks out, offsets for errors
 *   kineto_events.c  the callbacks: one traceEvents element's fields, the metadata
 *   kineto_map.c     one Kineto event into records (calls, GPU records, NVTX, correlations)
 *   kineto_names.c   runtime and driver names to api ids, copy kinds, interned strings
 *   kineto_python.c  python_function events into the Python stacks of the calls they
 *                    enclose (PYSTACK definitions and PYSITEs, as the shim writes)
 *   kineto_memory.c  [memory] instant events into the caching allocator's blocks
 *   kineto_sort.c    records into time order: sorted runs of KIN_WINDOW, spilled to an
 *                    anonymous temporary file past the first, merged on the way out
 *
 * Memory: KIN_WINDOW records (about 8 MB) + one read buffer per spilled run + the strings
 * (distinct names) + 40 bytes per correlated call or GPU record (the join of a call to the
 * stream, bytes and kinds its GPU work shows, which Kineto never puts on the call).
 */
#ifndef GPUWATCH_KINETO_H
#define GPUWATCH_KINETO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gw_map.h"
#include "trace_reader.h"

struct gw_reader;

enum kin_cat {
    KIN_CAT_OTHER, KIN_CAT_RUNTIME, KIN_CAT_DRIVER, KIN_CAT_KERNEL, KIN_CAT_MEMCPY,
    KIN_CAT_MEMSET, KIN_CAT_SYNC, KIN_CAT_ANNOTATION, KIN_CAT_CPU_OP, KIN_CAT_NVTX,
    KIN_CAT_PYTHON, KIN_CAT_INSTANT,
};

/* Records of the sort that are not handed out as events: a python_function's start and end
 * (kineto_python.c keeps each thread's stack from them as the records come out). */
enum { KIN_REC_PY_PUSH = 0x100, KIN_REC_PY_POP };

/* One record waiting for its turn: a gw_event without what Kineto never fills. */
struct kin_rec {
    uint64_t ts, dur, call_id, corr;
    uint64_t u[7];          /* the first 56 bytes of gw_event.u */
    uint32_t tid;
    uint16_t kind;          /* enum gw_event_kind */
    uint16_t api_id;
    uint32_t order;         /* ties: pops before pushes, then tie, then file order */
    uint64_t tie;           /* ranges: the inner one pops first and pushes last */
    uint32_t seq;
};

/* What the GPU side says of a correlation (filled as records are read, read at output). */
struct kin_join {
    uint64_t stream, bytes, event;
    uint64_t shape;         /* a kernel's launch shape (its name) */
    uint64_t call_stream;   /* the stream the call names (gpuwatch's export), 0 none */
    uint8_t copy_kind, src_kind, dst_kind, has_copy;
};

struct kin_sort {
    struct kin_rec *buf;
    size_t n, cap;
    FILE *spill;            /* sorted runs, one after another */
    uint64_t *run_start;    /* record index of each run in spill */
    size_t nruns, runs_cap;
    uint64_t spilled;
    /* merge */
    struct kin_cursor *cursors;
    size_t *heap;
    size_t heap_len;
    size_t next;            /* in-memory output position when nothing was spilled */
    int merging;
    uint32_t seq;
};

/* One open python_function of a thread (serial: which event, so its end finds it). */
struct kin_py_frame {
    uint64_t serial, file_id, line, function_id;
};
struct kin_py_stack {
    struct kin_py_frame *frames;   /* outermost first */
    size_t n, cap;
};

/* The event being read from traceEvents. */
struct kin_event {
    char ph;
    int cat;                /* enum kin_cat */
    char *name;
    size_t name_len, name_cap;
    int64_t pid, tid;
    int pid_numeric;
    uint64_t ts, dur;
    int has_ts;
    uint64_t id;            /* "id" of b/e */
    /* args */
    uint64_t correlation, device, stream, bytes, wait_stream, wait_corr, gw_stream, address;
    int has_device, has_stream, has_gw_stream, has_bytes, has_address;
    /* [memory] events: PyTorch's caching allocator (Bytes < 0: a free) */
    int64_t mem_bytes, mem_device, mem_device_type;
    uint64_t mem_addr, mem_allocated, mem_reserved;
    int has_mem_bytes, has_mem_device_type, has_mem_allocated;
    char direction[16], host_memory[16];
};

struct kineto {
    char *path;
    void *gz;               /* gzFile */
    void *yajl;             /* yajl_handle */
    int gzip;
    int header_only;        /* the scan at open */
    int stop;               /* the scan found what it needed */
    int is_kineto;          /* a traceEvents array was found */
    int parsed;             /* the whole file went into sort */
    int failed;             /* damage met: the rest is lost */
    char error[384];
    uint64_t bytes_in;      /* uncompressed bytes given to yajl */

    /* the parse state */
    int depth;
    int section;            /* enum kin_section */
    int key;                /* enum kin_key of the last key at the level that names it */
    int arg_key;
    struct kin_event ev;
    struct gw_device_def dev;
    int dev_has;

    /* what the header gets */
    int32_t rank, world_size;
    uint32_t host_pid;
    uint64_t first_ts;
    char device_name[128];
    uint64_t device_total_mem;
    int device_ordinal;

    /* names and ids (kineto_names.c) */
    struct gw_map string_ids;   /* hash of text -> string id */
    uint64_t next_string;
    struct gw_map streams;      /* stream defined */
    struct gw_map devices;
    struct gw_map call_seq;     /* tid -> next call number */
    struct gw_map joins;        /* correlation -> index in join */
    struct gw_map stream_alias; /* a call's stream (gpuwatch's own id) -> the GPU's */
    struct kin_join *join;
    size_t njoin, join_cap;

    /* Python stacks (kineto_python.c) */
    uint64_t py_frames;         /* python_function events with a file and line */
    struct gw_map py_threads;   /* tid -> index + 1 in py_stacks */
    struct kin_py_stack *py_stacks;
    size_t npy_stacks;
    struct gw_map py_stack_ids; /* hash of a stack's frames -> PYSTACK id */
    uint64_t next_py_stack;
    struct gw_event py_pending[2];  /* handed out after the PYSTACK definition before them */
    unsigned npy_pending, py_pending_at;
    /* [memory] events (kineto_memory.c) */
    struct gw_map mem_devices;  /* device -> 1 once its first block set what came before */
    uint64_t mem_blocks;

    struct kin_sort sort;
    size_t def_at;          /* next definition handed out; SIZE_MAX when done */
    uint64_t unknown_calls, events;
};

/* kineto_sniff.c (always built) */
int gw_kineto_sniff(int fd);    /* 1: gzip or JSON (first non-space byte '{') */
#define GW_KINETO_NOT_TRACE "is JSON but not a Kineto trace"

/* kineto_stream.c (kineto_absent.c where yajl or zlib is missing: open refuses) */
int gw_kineto_open(struct gw_reader *r, const char *path, char *err, size_t errlen);
int gw_kineto_next(struct gw_reader *r, struct gw_event *ev);
void gw_kineto_rewind(struct gw_reader *r);
void gw_kineto_load_defs(struct gw_reader *r);
void gw_kineto_close(struct gw_reader *r);

/* kineto_events.c: yajl's callbacks, ctx = the reader */
extern const void *gw_kineto_callbacks;

/* kineto_map.c */
void kin_map_event(struct gw_reader *r, struct kineto *k);
void kin_fill_event(struct gw_reader *r, struct kineto *k, const struct kin_rec *rec,
                    struct gw_event *ev);

/* kineto_names.c */
unsigned kin_api_of(const char *name, int driver);
uint64_t kin_string(struct gw_reader *r, struct kineto *k, const char *text, size_t len);
void kin_copy_kinds(const char *name, unsigned *kind, unsigned *src, unsigned *dst);
unsigned kin_memory_kind(const char *word, size_t len);
unsigned kin_copy_dir(const char *text);
unsigned kin_host_kind(const char *text);
struct kin_join *kin_join_of(struct kineto *k, uint64_t corr, int make);

/* kineto_python.c */
void kin_py_map(struct gw_reader *r, struct kineto *k, const struct kin_event *e);
/* rec came out of the sort: a frame's start or end is taken (1: no event for it); a call
 * is filled into ev, and 1 returned with ev holding what to hand out first (the call, or
 * a PYSTACK definition its stack needs) and the rest queued in py_pending. */
int kin_py_record(struct gw_reader *r, struct kineto *k, const struct kin_rec *rec);
int kin_py_call(struct gw_reader *r, struct kineto *k, struct gw_event *ev);
int kin_py_pending(struct kineto *k, struct gw_event *ev);
void kin_py_reset(struct kineto *k);
void kin_py_free(struct kineto *k);

/* kineto_memory.c */
void kin_memory_map(struct kineto *k, const struct kin_event *e);
/* A block as it comes out of the sort: the first of its device, in time, says what the
 * device held before (ev->u.mem_block.before). */
void kin_memory_block(struct kineto *k, struct gw_event *ev);

/* kineto_sort.c */
int kin_sort_add(struct kin_sort *s, const struct kin_rec *rec);
int kin_sort_finish(struct kin_sort *s);
int kin_sort_next(struct kin_sort *s, struct kin_rec *out);
void kin_sort_free(struct kin_sort *s);

#endif
