/*
 * gwtrace: the streaming, version-aware reader of gpuwatch traces (format in
 * gpuwatch/trace_format.h).
 *
 * Memory is bounded by the largest chunk plus the definition tables, never by the file:
 * chunks are read one at a time into a reused buffer with pread.
 *
 *   struct gw_reader *r;
 *   char err[512];
 *   if (gw_reader_open("trace.gwt", &r, err, sizeof err) != 0) { fputs(err, stderr); ... }
 *   gw_reader_load_defs(r);              // optional: resolve names defined later in the file
 *   struct gw_event ev;
 *   while (gw_reader_next(r, &ev) > 0) { ... }
 *   gw_reader_close(r);
 *
 * Every call event carries its call id (tid << 32 | per-thread number, trace_format.h), which
 * CORRELATION events name: GPU record -> correlation id -> call id -> the host call. GPU
 * records carry CUPTI's stream ids; gw_reader_stream_by_cupti() gives ours.
 *
 * Damage (bad chunk magic, impossible lengths, CRC mismatches, broken record framing,
 * truncation, per-thread chunk sequence gaps) never stops the reader: it is reported
 * through the damage callback and kept in gw_reader_damage(), the reader resynchronises on
 * the next chunk whose header and CRC check out, and everything intact is still returned.
 */
#ifndef GPUWATCH_TRACE_READER_H
#define GPUWATCH_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "gpuwatch/trace_format.h"

/* The newest format version this reader understands. */
#define GW_READER_VERSION GW_FORMAT_VERSION

/* The magic of the header gw_reader_header gives for a PyTorch profiler (Kineto) trace,
 * which has none of its own (8 bytes with the NUL). */
#define GW_READER_KINETO_MAGIC "KINETO\0"

/* Raw payload words kept per call event; later words (from newer writers) are ignored. */
#define GW_EVENT_MAX_WORDS 8

/* Damage reports kept in memory (all of them reach the callback and the counters). */
#define GW_READER_KEEP_DAMAGE 64

enum gw_event_kind {
    GW_EV_CALL = 1,   /* GW_REC_CALL or GW_REC_CALL_ERR */
    GW_EV_LOST,       /* GW_REC_LOST */
    GW_EV_STRING,     /* definitions, in the order they appear */
    GW_EV_SHAPE,
    GW_EV_STREAM,
    GW_EV_DEVICE,
    GW_EV_CLOCK,
    GW_EV_THREAD,
    /* issue 3: GPU timeline, correlation and NVTX (see trace_format.h) */
    GW_EV_GPU_KERNEL,     /* ts_ns = GPU start, dur_ns = end - start */
    GW_EV_GPU_MEMCPY,
    GW_EV_GPU_MEMSET,
    GW_EV_GPU_LOST,
    GW_EV_CORRELATION,    /* untimed */
    GW_EV_RANGE_PUSH,
    GW_EV_RANGE_POP,
    GW_EV_MARK,
    GW_EV_RANGE_START,
    GW_EV_RANGE_END,
    GW_EV_STACK,          /* a definition: an allocation's call stack (gw_reader_stack) */
    GW_EV_CPU_THREAD,     /* CPU samples (trace_format.h: GW_REC_CPU_THREAD, _PROC) */
    GW_EV_CPU_PROC,
    GW_EV_PYSTACK,        /* a definition: a Python call stack (gw_reader_pystack) */
    GW_EV_PYSITE,         /* untimed: calls of this thread made from one Python stack */
    GW_EV_PYTHON,         /* a definition: the process runs CPython, stacks recorded */
    GW_EV_STACKSITE,      /* untimed: calls of this thread made from one native stack */
    GW_EV_GPU_WINDOW,     /* a sampled timeline's window opened (u.gpu_window.open) or shut */
    GW_EV_MEM_BLOCK,      /* PyTorch profiler traces only: a caching allocator's block */
    GW_EV_HOST_COPY,      /* a definition: the host's memcpy rate and a sleeping thread's
                             wake-up latency (u.host_copy) */
};

struct gw_shape {
    uint64_t id;
    uint64_t name_id;      /* string id of the kernel name, 0 unknown */
    uint64_t func;         /* CUfunction / CUkernel handle */
    uint64_t grid[3];
    uint64_t block[3];
    uint64_t shared_mem;   /* dynamic shared memory of the launch, bytes */
    /* GPU shapes (from CUPTI; optional words, 0 when absent) */
    uint64_t registers;    /* registers per thread */
    uint64_t static_shared_mem;  /* bytes */
};

/* One frame of a STACK definition (trace_format.h): where the code is, by module and by
 * symbol. String ids resolve with gw_reader_string; 0 is unknown / no symbol. */
struct gw_stack_frame {
    uint64_t module_id;      /* path of the object */
    uint64_t module_offset;  /* address in the object's file (return address - 1) */
    uint64_t symbol_id;      /* dynamic symbol, 0 when none */
    uint64_t symbol_offset;  /* from the symbol's start */
};

/* A call stack, innermost frame first (the program's call into the driver API). frames
 * live as long as the reader. */
struct gw_stack {
    uint64_t id;
    unsigned nframes;        /* at most GW_STACK_MAX_FRAMES */
    const struct gw_stack_frame *frames;
};

/* One frame of a PYSTACK definition: the code object's file and qualified name (string
 * ids, 0 unknown) and the frame's line. */
struct gw_pyframe {
    uint64_t file_id;
    uint64_t line;
    uint64_t function_id;
};

/* A Python call stack, innermost frame first; frames live as long as the reader. */
struct gw_pystack {
    uint64_t id;
    unsigned nframes;        /* at most GW_STACK_MAX_FRAMES */
    const struct gw_pyframe *frames;
};

struct gw_device_def {
    uint64_t ordinal;
    uint64_t name_id;
    uint64_t total_bytes;
    uint64_t free_at_first_context;
};

struct gw_clock_point {
    uint64_t trace_ns;
    uint64_t realtime_ns;
    uint64_t monotonic_ns;
};

struct gw_event {
    enum gw_event_kind kind;
    uint32_t tid;           /* thread of the chunk the record came from (0 for DEFS) */
    uint64_t ts_ns;         /* absolute trace-clock time; 0 for definitions */
    uint64_t dur_ns;        /* calls and GPU kernels, memcpys and memsets */
    uint32_t api_id;        /* calls only */
    uint32_t result;        /* CUresult, 0 = CUDA_SUCCESS */
    int family;             /* enum gw_family of api_id, -1 when this reader lacks the id */
    uint64_t offset;        /* file offset of the record's type byte */
    unsigned nwords;        /* payload words present in the record (calls) */
    uint64_t words[GW_EVENT_MAX_WORDS];  /* raw payload words (calls) */
    union {
        struct { uint64_t symbol_id, cuda_version, flags, outcome; } proc;
        struct { uint64_t device, ctx; } ctx;
        struct { uint64_t free_bytes, total_bytes; } meminfo;
        /* aux: pitch (AllocPitch), flags (AllocManaged), pool (AllocFromPoolAsync);
         * stack_id: the allocating call's STACK (gw_reader_stack), 0 when not recorded */
        struct { uint64_t ptr, bytes, stream_id, aux, stack_id; } alloc;
        struct { uint64_t ptr, stream_id; } memfree;
        /* filled per entry point; fields a call does not carry stay 0 (stack_id:
         * cuMemCreate) */
        struct { uint64_t ptr, size, handle, alignment, device, stack_id; } vmm;
        /* stack_id: cuMemAllocHost and cuMemHostAlloc */
        struct { uint64_t ptr, bytes, flags, stack_id; } hostmem;
        /* handle: graphExec for cuGraphLaunch*, fn for cuLaunchHostFunc*, else 0 */
        struct { uint64_t shape_id, stream_id, handle; } launch;
        /* batch copies (cuMemcpyBatchAsync*): batch = 1, count = number of copies,
         * dst = src = 0 */
        struct {
            uint64_t bytes, stream_id, dst, src, count;
            unsigned dir, host_kind, batch;
        } copy;
        struct { uint64_t ptr, bytes, stream_id; } set;
        struct { uint64_t stream_id, event; } sync;
        struct { uint64_t handle, string_id; } name;
        /* count: records the thread dropped; calls: how many of them were calls (the
         * optional word; count when absent) */
        struct { uint64_t count, calls; } lost;
        /* text is NUL-terminated after len bytes and lives as long as the reader */
        struct { uint64_t id; const char *text; size_t len; } string;
        struct gw_shape shape;
        /* cupti_stream_id: cuStreamGetId's id, what GPU records carry; 0 when absent */
        struct { uint64_t id, handle, cupti_stream_id; } stream;
        struct gw_device_def device;
        struct gw_clock_point clock;
        struct { uint64_t tid, name_id; } thread;
        struct gw_stack stack;
        struct gw_pystack pystack;
        /* follows_releases: calls made with the GIL released get stacks too */
        struct { uint64_t version_id, follows_releases; } python;
        struct { uint64_t bytes_per_s, wake_ns; } host_copy;
        /* PYSITE, STACKSITE: the calls first_call_id..last_call_id of this thread (ids as
         * call_id) were made from the stack stack_id (a PYSTACK's, a STACK's); a call
         * named twice belongs to the first site */
        struct { uint64_t stack_id, first_call_id, last_call_id; } site;
        /* GPU records: stream_id is CUPTI's (cuStreamGetId), see gw_reader_stream_by_cupti */
        struct { uint64_t correlation_id, device, stream_id, shape_id, graph_id; } gpu_kernel;
        struct {
            uint64_t correlation_id, device, stream_id, bytes, graph_id;
            unsigned copy_kind, src_kind, dst_kind;   /* enum gw_gpu_copy_kind / _memory_kind */
        } gpu_memcpy;
        struct { uint64_t correlation_id, device, stream_id, bytes, graph_id; unsigned memory_kind; } gpu_memset;
        struct { uint64_t count; } gpu_lost;
        struct { uint64_t open, settle_ns; } gpu_window;  /* (trace_format.h) */
        /* MEM_BLOCK ([memory] events of a PyTorch profiler trace): a block of PyTorch's
         * caching allocator taken (bytes > 0) or given back (bytes < 0) at addr on device;
         * allocated, reserved: the allocator's totals on that device after it; before: on
         * the device's first block (in time), what it held when the trace began (the
         * totals say it; no block of it is seen taken), else 0 */
        struct {
            uint64_t addr;
            int64_t bytes;
            uint64_t device, allocated, reserved, before;
        } mem_block;
        struct { uint64_t correlation_id, call_id; } correlation;
        /* NVTX: domain_id/name_id are string ids (domain 0 = default); range_id for start/end */
        struct { uint64_t domain_id, name_id, range_id; } nvtx;
        /* CPU samples: cumulative CPU time (ns) of a thread, or of the process and of its
         * live descendants, and how many of those ran since the previous sample; a thread's
         * wait_ns and wait_cpu_ns: its time in driver calls that may wait for the GPU, and
         * its CPU time in them (0 from writers before them) */
        struct {
            uint64_t tid, cpu_ns, wait_ns, wait_cpu_ns;
            uint64_t runq_ns;    /* runnable, waiting for a CPU; UINT64_MAX: not recorded */
        } cpu_thread;
        /* machine_busy_ns: UINT64_MAX when the record has none */
        struct { uint64_t process_cpu_ns, descendants, descendants_cpu_ns, active,
                 machine_busy_ns; } cpu_proc;
    } u;
    /* Calls: this call's id (tid << 32 | number), what GW_EV_CORRELATION.call_id names. */
    uint64_t call_id;
    /* Calls: 1 when records of this thread were lost before this call without a LOST count
     * (a chunk sequence gap, a damaged chunk or record), so its number, and call_id, may
     * be too small: joins through it are unreliable. 0 otherwise. */
    unsigned call_id_unsure;
};

enum gw_damage_kind {
    GW_DAMAGE_CHUNK_MAGIC = 1,  /* no chunk magic where a chunk was expected */
    GW_DAMAGE_CHUNK_LENGTH,     /* payload_len over the limit or past the end of the file */
    GW_DAMAGE_CHUNK_CRC,        /* header fields or payload do not match the chunk's crc32
                                   (v1 files: the payload) */
    GW_DAMAGE_CHUNK_KIND,       /* unknown chunk kind in a file of our version or older */
    GW_DAMAGE_RECORD,           /* record framing or body inconsistent inside a good chunk */
    GW_DAMAGE_TRUNCATED,        /* the file ends inside a chunk (writer killed): an abrupt
                                   end, counted in ended_abruptly, not in damage_reports */
    GW_DAMAGE_LOST_CHUNKS,      /* a thread's chunk sequence skips numbers */
    GW_DAMAGE_IO,               /* read error; reading stops */
    GW_DAMAGE_SECOND_HEADER,    /* another trace's file header where a chunk was expected
                                   (two files joined); reading stops there */
};

struct gw_damage {
    enum gw_damage_kind kind;
    uint64_t offset;        /* where the problem was found */
    uint64_t lost_bytes;    /* bytes of the file not read because of it */
    uint64_t resume_offset; /* where reading went on (the file size when it did not) */
    uint32_t tid;           /* LOST_CHUNKS: the thread; else the chunk's tid when known */
    uint32_t lost_chunks;   /* LOST_CHUNKS: how many sequence numbers are missing */
    char message[384];      /* "file: offset N: expected ..., found ...; ..." */
};

/* The shim's own cost, as its writer thread wrote it when tracing stopped (SHIM_STATS;
 * rounds 0: the trace has none, as a killed process's has not). */
struct gw_shim_stats {
    uint64_t rounds;          /* writer rounds */
    uint64_t cpu_ns;          /* CPU time of the writer thread, every shim thread's work */
    uint64_t late_max_ns;     /* the latest a round drained after its deadline */
    uint64_t flush_ns;        /* the flush interval */
    uint64_t late_rounds[GW_LATE_BUCKETS];  /* rounds by lateness (gw_late_bucket) */
};

/* The lateness under which fraction q (0..1) of the rounds drained: a bucket's upper end. */
uint64_t gw_shim_late_quantile_ns(const struct gw_shim_stats *shim, double q);

struct gw_reader_stats {
    uint64_t chunks;          /* intact chunks read */
    uint64_t calls;           /* CALL + CALL_ERR records */
    uint64_t call_errors;     /* CALL_ERR records */
    uint64_t lost_records;    /* LOST records */
    uint64_t lost_events;     /* sum of LOST counts (records of any type) */
    uint64_t lost_chunks;     /* chunks missing from per-thread sequences */
    uint64_t definitions;     /* definition records */
    uint64_t unknown_records; /* records of types this reader does not know (skipped) */
    uint64_t damage_reports;  /* damage in the file (an abrupt end is not) */
    uint64_t damaged_bytes;   /* bytes skipped because of damage or truncation */
    uint64_t ended_abruptly;  /* 1: the file ends inside a chunk, as a killed writer's does */
    uint64_t ended_at;        /* ... at this offset */
    uint64_t salvaged_chunks; /* threads whose last records came from the rings file */
    uint64_t salvaged_bytes;  /* ... and their bytes (trace_format.h: the rings file) */
    uint64_t first_ts_ns;     /* earliest timed record (host or GPU), 0 when none */
    uint64_t last_ts_ns;      /* latest timed record end (ts + dur) */
    /* issue 3 */
    uint64_t gpu_kernels;     /* GPU_KERNEL records */
    uint64_t gpu_memcpys;     /* GPU_MEMCPY records */
    uint64_t gpu_memsets;     /* GPU_MEMSET records */
    uint64_t gpu_lost_records; /* GPU_LOST records */
    uint64_t gpu_lost_events; /* sum of GPU_LOST counts (activity records CUPTI dropped) */
    uint64_t gpu_windows;     /* GPU_WINDOW records that opened a window */
    uint64_t correlations;    /* CORRELATION records, and GPU records that name their call */
    uint64_t links_unreadable; /* GPU records naming their call in a chunk without link_base */
    uint64_t nvtx_records;    /* RANGE_PUSH/POP, MARK, RANGE_START/END records */
    uint64_t calls_unsure;    /* calls returned with call_id_unsure set */
    uint64_t lost_calls;      /* sum of LOST calls words (of the counts when absent) */
    uint64_t cpu_samples;     /* CPU_THREAD and CPU_PROC records */
    struct gw_shim_stats shim; /* the shim's own cost (SHIM_STATS) */
};

struct gw_reader;

typedef void (*gw_damage_fn)(const struct gw_damage *damage, void *user);

/* Opens and validates the file header. On failure returns -1 and writes a message that
 * names the file (and the offset, or both versions) into err. */
int gw_reader_open(const char *path, struct gw_reader **out, char *err, size_t errlen);
/* The same on an open descriptor (duplicated; the caller keeps its own); name is used in
 * messages. */
int gw_reader_open_fd(int fd, const char *name, struct gw_reader **out, char *err,
                      size_t errlen);
void gw_reader_close(struct gw_reader *reader);
/* 1 when err is gw_reader_open's for a JSON file that is not a PyTorch profiler (Kineto)
 * trace: not a trace at all, which the commands answer with exit 2 rather than 1. */
int gw_reader_error_not_trace(const char *err);

const struct gw_file_header *gw_reader_header(const struct gw_reader *reader);
const char *gw_reader_name(const struct gw_reader *reader);
uint64_t gw_reader_file_size(const struct gw_reader *reader);

/* Called for every damage report, as it is found. */
void gw_reader_on_damage(struct gw_reader *reader, gw_damage_fn fn, void *user);

/* Reads the whole file once for its definitions only (damage is not reported in this
 * pass), so that names defined after their first use resolve; then rewinds. */
void gw_reader_load_defs(struct gw_reader *reader);

/* The next event in file order: 1 with *event filled, 0 at the end of the file. */
int gw_reader_next(struct gw_reader *reader, struct gw_event *event);

/* Starts again at the first chunk; statistics and damage restart, tables stay. */
void gw_reader_rewind(struct gw_reader *reader);

const struct gw_reader_stats *gw_reader_stats(const struct gw_reader *reader);
/* The first GW_READER_KEEP_DAMAGE reports; returns how many there are. */
size_t gw_reader_damage(const struct gw_reader *reader, const struct gw_damage **list);

/* Definition tables (filled as definitions are read). NULL / -1 when unknown. */
const char *gw_reader_string(const struct gw_reader *reader, uint64_t id, size_t *len);
const struct gw_shape *gw_reader_shape(const struct gw_reader *reader, uint64_t id);
int gw_reader_stream_handle(const struct gw_reader *reader, uint64_t id, uint64_t *handle);
/* Our stream id (what host calls carry) of a CUPTI stream id (what GPU records carry),
 * from STREAM definitions that have one: 0 and *stream_id set, or -1 when no STREAM
 * definition names it (the NULL/legacy stream is never defined, see trace-format.md). */
int gw_reader_stream_by_cupti(const struct gw_reader *reader, uint64_t cupti_stream_id,
                              uint64_t *stream_id);
/* The CUPTI stream id of one of our streams: 0, or -1 when unknown (or not recorded). */
int gw_reader_stream_cupti(const struct gw_reader *reader, uint64_t id,
                           uint64_t *cupti_stream_id);
const struct gw_device_def *gw_reader_device(const struct gw_reader *reader,
                                             uint64_t ordinal);
/* Name string of a thread, from THREAD definitions. */
const char *gw_reader_thread_name(const struct gw_reader *reader, uint64_t tid);
size_t gw_reader_clocks(const struct gw_reader *reader, const struct gw_clock_point **points);
/* The best host memcpy rate the trace's HOST_COPY definitions hold, bytes/s (0: none):
 * all of them once gw_reader_load_defs has read them, else those read so far. */
uint64_t gw_reader_host_copy_bps(const struct gw_reader *reader);
/* How late a sleeping thread ran after its wake-up was due on the traced machine, ns, as its
 * launcher measured it (HOST_COPY's second word; 0: not given). */
uint64_t gw_reader_wake_ns(const struct gw_reader *reader);
/* Kernel name of a launch shape (shape → name string). */
const char *gw_reader_kernel_name(const struct gw_reader *reader, uint64_t shape_id);
/* A STACK definition by id (trace_stacks.c). */
const struct gw_stack *gw_reader_stack(const struct gw_reader *reader, uint64_t id);
/* A PYSTACK definition by id (trace_stacks.c). */
const struct gw_pystack *gw_reader_pystack(const struct gw_reader *reader, uint64_t id);
/* How many PYSTACK definitions have been read (all of them after gw_reader_load_defs). */
size_t gw_reader_pystack_count(const struct gw_reader *reader);

/* Names (trace_names.c). Unknown values give NULL unless said otherwise. */
const char *gw_api_name(unsigned api_id);          /* exact exported name */
int gw_api_family(unsigned api_id);                /* enum gw_family, -1 unknown */
int gw_api_async(unsigned api_id);                 /* api_list.h's async column (0 unknown) */
const char *gw_family_name(int family);            /* "launch", "copy", ... */
const char *gw_copy_dir_name(unsigned dir);        /* "HtoD", ...; "unknown" */
const char *gw_host_kind_name(unsigned kind);      /* "pageable", ...; "none" */
const char *gw_proc_outcome_name(unsigned outcome);
const char *gw_cupti_status_name(int status);
const char *gw_clock_source_name(unsigned source);
/* The header feature flag of that bit: "host_calls" (bit 0), ...; NULL past the known. */
const char *gw_feature_name(unsigned bit);
const char *gw_cu_result_name(uint32_t result);    /* "CUDA_ERROR_OUT_OF_MEMORY" */
const char *gw_event_kind_name(enum gw_event_kind kind); /* "call", "lost", "string" ...,
                                                           "gpu_kernel", "range_push" ... */
int gw_event_kind_is_def(enum gw_event_kind kind); /* 1 for STRING..THREAD, STACK,
                                                      PYSTACK and PYTHON definitions */
const char *gw_gpu_copy_kind_name(unsigned kind);  /* CUPTI copy kind: "HtoD", "PtoP"...;
                                                      "unknown" */
const char *gw_gpu_memory_kind_name(unsigned kind); /* CUPTI memory kind: "pageable",
                                                       "pinned", "device"...; "unknown" */
const char *gw_damage_kind_name(enum gw_damage_kind kind);

#endif
