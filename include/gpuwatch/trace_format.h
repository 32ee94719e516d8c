/*
 * gpuwatch trace format, version 2. The single definition shared by the shim (writer)
 * and the tools (reader); docs/trace-format.md explains it in prose.
 *
 *   file   := file_header chunk*
 *   chunk  := chunk_header payload[payload_len]          (payload is whole records)
 *   record := u8 type, uvarint body_len, body[body_len]  (unknown types are skipped)
 *
 * Integers in bodies are LEB128 varints (gpuwatch/varint.h). Timed records (type
 * 0x01..0x3F) begin with a zigzag varint dt: nanoseconds since the previous timed record
 * of the same chunk, or since chunk_header.base_ts_ns for the first one. All times are
 * nanoseconds on the trace clock (header.clock_source), comparable across threads.
 * Everything on disk is little-endian and naturally aligned.
 */
#ifndef GPUWATCH_TRACE_FORMAT_H
#define GPUWATCH_TRACE_FORMAT_H

#include <stdint.h>

#define GW_FILE_MAGIC "GPUWATCH"        /* 8 bytes, no terminator on disk */
/* v2: the chunk CRC covers the chunk header's fields too (gpuwatch/chunk_crc.h); a v1
 * reader would find every chunk damaged, hence min_reader_version 2. */
#define GW_FORMAT_VERSION 2u
#define GW_MIN_READER_VERSION 2u
#define GW_ENDIAN_MARK 0x01020304u      /* reads 0x04030201 on a byte-swapped host */
#define GW_FILE_HEADER_SIZE 1024u
#define GW_CHUNK_MAGIC 0x4B435747u      /* "GWCK" as little-endian bytes */
#define GW_TRACE_SUFFIX ".gwt"

/*
 * The rings file, TRACE.gwt.rings beside the trace: each thread's ring of records not yet
 * written as a chunk lives in a MAP_SHARED slot of it, so what a process recorded survives
 * SIGKILL, a crash or the out-of-memory killer in the page cache. A clean exit removes the
 * file; a reader that finds it reads, after the trace's chunks, each slot's records that
 * the trace does not hold, as one more EVENTS chunk of that thread (GW_REC_CALL_BASE
 * first, as the writer would have written it).
 *
 * One slot holds the definitions appended since the last DEFS chunk (kind GW_RING_DEFS:
 * what the salvaged records' names need). A slot is GW_RING_SLOT_HEADER bytes of struct
 * gw_ring_slot, then `capacity` (a power of two) bytes of ring: the records at positions [tail, head) are at data[pos % capacity].
 * The writer, before writing the chunk of [tail, pending_tail), stores the state the ring
 * will have once it is in the file (pending_*) and sets pending; after the write it stores
 * that state as tail/last_ts/calls/seq and clears pending. A reader that read the chunk of
 * the thread's seq `pending_seq` takes the pending state, else the committed one: the
 * records of a chunk cut by the kill are then read from the ring.
 */
#define GW_RINGS_SUFFIX ".rings"
#define GW_RING_MAGIC "GWRING01"           /* 8 bytes, no terminator */
#define GW_RING_SLOT_HEADER 4096u

struct gw_ring_slot {
    char magic[8];                 /* GW_RING_MAGIC */
    uint64_t capacity;             /* ring bytes after the header */
    uint32_t pid;                  /* the process (the trace header's pid) */
    uint32_t tid;
    uint32_t serial;               /* the thread's CALL_BASE serial */
    uint32_t in_use;               /* 0: a free slot (its thread's records all written) */
    uint64_t head;                 /* end of the last whole record (producer, release) */
    uint64_t tail;                 /* the records before it are in the trace file */
    uint64_t last_ts;              /* the dt chain's time at tail */
    uint64_t calls;                /* the thread's call number at tail */
    uint32_t seq;                  /* the seq of the thread's next chunk */
    uint32_t pending;              /* 1: the chunk of seq pending_seq is being written */
    uint64_t pending_tail, pending_last_ts, pending_calls;
    uint32_t pending_seq;
    uint32_t kind;                 /* enum gw_ring_kind */
};

enum gw_ring_kind {
    GW_RING_EVENTS = 0,            /* a thread's records: salvaged as its EVENTS chunk */
    GW_RING_DEFS = 1,              /* definitions not yet written (tid 0): a DEFS chunk */
};
_Static_assert(sizeof(struct gw_ring_slot) <= GW_RING_SLOT_HEADER, "slot header fits");

enum gw_clock_source {
    GW_CLOCK_MONOTONIC = 1,  /* clock_gettime(CLOCK_MONOTONIC) ns */
    GW_CLOCK_TSC = 2,        /* TSC scaled to CLOCK_MONOTONIC ns at start (see CLOCK records) */
};

enum gw_feature_flags {
    GW_FEAT_HOST_CALLS = 1u << 0,
    GW_FEAT_GPU_ACTIVITY = 1u << 1,  /* CUPTI records present */
    GW_FEAT_NVTX = 1u << 2,
    GW_FEAT_CPU_COUNT = 1u << 3,     /* cpus_online and cpus_usable are filled */
    GW_FEAT_CPU_SAMPLES = 1u << 4,   /* the writer samples CPU time (GW_REC_CPU_THREAD/PROC) */
    GW_FEAT_CORR_DELTA = 1u << 5,    /* GPU records' correlation_id words are deltas */
    GW_FEAT_GPU_SAMPLED = 1u << 6,   /* the GPU timeline has gaps: activity was collected in
                                        windows (GW_REC_GPU_WINDOW); set when one first shuts */
};

/* Why the GPU-side timeline is or is not in this trace (file_header.cupti_status). */
enum gw_cupti_status {
    GW_CUPTI_NOT_TRIED = 0,
    GW_CUPTI_ACTIVE = 1,
    GW_CUPTI_DISABLED = 2,      /* GPUWATCH_CUPTI=0 */
    GW_CUPTI_NOT_FOUND = 3,
    GW_CUPTI_INCOMPATIBLE = 4,
    GW_CUPTI_IN_USE = 5,        /* another subscriber (torch.profiler, nsys) holds it */
    GW_CUPTI_FAILED = 6,
};

struct gw_file_header {
    char magic[8];                 /* GW_FILE_MAGIC */
    uint16_t version;              /* format version of the writer */
    uint16_t min_reader_version;   /* oldest reader that can read this file */
    uint32_t header_size;          /* GW_FILE_HEADER_SIZE; chunks start here */
    uint32_t endian_mark;          /* GW_ENDIAN_MARK */
    uint32_t feature_flags;        /* enum gw_feature_flags */
    uint32_t clock_source;         /* enum gw_clock_source */
    uint32_t pid;
    uint32_t ppid;
    int32_t rank;                  /* RANK or SLURM_PROCID; -1 when unset */
    int32_t local_rank;            /* LOCAL_RANK or SLURM_LOCALID; -1 when unset */
    int32_t world_size;            /* WORLD_SIZE or SLURM_NTASKS; -1 when unset */
    int32_t device_ordinal;        /* first device a context was made on; -1 before */
    int32_t cupti_status;          /* enum gw_cupti_status */
    int64_t realtime_minus_trace_ns; /* CLOCK_REALTIME - trace clock, at start */
    uint64_t start_ns;             /* trace clock when tracing began */
    uint64_t device_total_mem;     /* bytes; 0 until a context exists */
    uint64_t device_free_at_start; /* cuMemGetInfo free bytes at the first context */
    char hostname[64];
    char device_name[128];
    char cupti_reason[128];        /* human-readable, NUL-terminated */
    char cmdline[608];             /* argv joined by spaces, truncated, NUL-terminated */
    /* With GW_FEAT_CPU_COUNT (without it, older files' cmdline ran on here): the
     * machine's CPUs online, and those this process may run on (its affinity, as
     * os.sched_getaffinity sees it), which DataLoader workers share. */
    uint32_t cpus_online;
    uint32_t cpus_usable;
};
_Static_assert(sizeof(struct gw_file_header) == GW_FILE_HEADER_SIZE, "header is 1 KiB");

enum gw_chunk_kind {
    GW_CHUNK_EVENTS = 1,   /* one thread's timed records */
    GW_CHUNK_DEFS = 2,     /* definitions (strings, shapes, streams, devices); tid 0 */
};

struct gw_chunk_header {
    uint32_t magic;        /* GW_CHUNK_MAGIC */
    uint32_t payload_len;  /* bytes after this header */
    uint32_t tid;          /* kernel thread id of the producer (0 for DEFS) */
    uint16_t kind;         /* enum gw_chunk_kind */
    uint16_t flags;        /* reserved, 0 */
    uint64_t base_ts_ns;   /* time the first record's dt is relative to */
    uint32_t seq;          /* per-thread chunk counter, from 0: gaps mean lost chunks */
    uint32_t crc32;        /* CRC-32C of the fields above, then the payload (v1 files: of
                              the payload alone); gpuwatch/chunk_crc.h */
};
_Static_assert(sizeof(struct gw_chunk_header) == 32, "chunk header is 32 bytes");

#define GW_MAX_CHUNK_PAYLOAD (64u << 20)  /* readers reject larger lengths as corrupt */

/*
 * Record types. Bodies, in order (all varints unless said otherwise):
 *
 * GW_REC_CALL      dt(zigzag) api_id dur_ns payload...      result was CUDA_SUCCESS
 * GW_REC_CALL_ERR  dt(zigzag) api_id dur_ns result payload...
 *   payload by the api's family (api_list.h):
 *   PLAIN    (none)
 *   PROC     symbol_string_id cuda_version flags outcome(enum gw_proc_outcome)
 *   CTX      device_ordinal ctx_handle
 *   MEMINFO  free_bytes total_bytes
 *   ALLOC    ptr bytes stream_id aux [stack_id]   (aux: pitch for AllocPitch, flags for
 *                                        Managed, pool handle for AllocFromPoolAsync, else 0)
 *   FREE     ptr stream_id
 *   VMM      a b c   Reserve: ptr size alignment | AddressFree: ptr size 0 |
 *                    Create: handle size device [stack_id] | Release: handle 0 0 |
 *                    Map: ptr size handle | Unmap: ptr size 0
 *   HOSTMEM  ptr bytes flags           (FreeHost/Unregister: bytes known from the alloc, or 0)
 *                    [stack_id]        (AllocHost and HostAlloc only)
 *   stack_id: optional word after the family's own, on allocating calls only: the
 *   GW_REC_STACK of the program's call; 0 or absent when not captured.
 *   LAUNCH   shape_id stream_id        (+ handle for cuGraphLaunch* = graphExec and
 *                                        cuLaunchHostFunc* = fn; shape_id 0 for both)
 *   COPY     bytes kind stream_id dst src
 *            kind = direction | host_kind << 4 (enum gw_copy_dir, enum gw_host_kind);
 *            batch copies: dst = number of copies, src = 0
 *   SET      ptr bytes stream_id
 *   SYNC     stream_id event_handle    (0 where the call has none)
 *   NAME     handle string_id          (the function/kernel handle and its name; 0 unknown)
 * GW_REC_LOST      dt(zigzag) count [calls]   records this thread dropped before this point;
 *                  calls = how many of them were CALL/CALL_ERR (count when absent)
 *
 * Host call ids: each thread numbers its CALL/CALL_ERR records 0, 1, 2... in order, a LOST
 * record's calls advancing the number as if the dropped calls were there. Every EVENTS
 * chunk starts with GW_REC_CALL_BASE: the thread's serial (unique in the process, unlike a
 * reused tid) and the number of its first call, so numbering survives lost chunks. The call
 * id of a host call is serial << 32 | number (tid << 32 | number in files without
 * CALL_BASE); GPU records link to it through GW_REC_CORRELATION, or through their own
 * optional last word, `call`.
 *
 * GPU timeline (CUPTI activity, written by whichever thread drains CUPTI's buffers; dt is
 * the GPU start time, dur its end minus start, on the trace clock):
 * GW_REC_GPU_KERNEL  dt(zigzag) dur correlation_id device cupti_stream_id shape_id graph_id
 *                    (shape: a SHAPE definition with func_handle 0, the kernel's own name,
 *                     and the registers/static shared memory words appended)
 * GW_REC_GPU_MEMCPY  dt(zigzag) dur correlation_id device cupti_stream_id bytes copy_kind
 *                    src_kind dst_kind graph_id
 *                    copy_kind is CUPTI's: HTOD 1, DTOH 2, DTOD 8, HTOH 9, PTOP 10;
 *                    src/dst kind CUPTI's: PAGEABLE 1, PINNED 2, DEVICE 3, ARRAY 4, MANAGED 5
 * GW_REC_GPU_MEMSET  dt(zigzag) dur correlation_id device cupti_stream_id bytes memory_kind graph_id
 *   each of the three may end with one more word, `call`: the host call that issued the
 *   work, so that no CORRELATION record is needed for it. 0: none; else the call id is
 *   link_base + unzigzag(call - 1), and link_base becomes that id. link_base starts each
 *   chunk at its CALL_BASE's third word: consecutive GPU records of a thread's calls differ
 *   by a few calls, so `call` takes one or two bytes, not five.
 *   With GW_FEAT_CORR_DELTA in the header, their correlation_id word is zigzag(id -
 *   corr_base), and corr_base becomes id: CUPTI numbers its records in order, so the word
 *   takes a byte, not three. corr_base starts each chunk at its CALL_BASE's fourth word (0
 *   without one: the ids then read shifted, the same for all the chunk's records).
 * GW_REC_GPU_LOST    dt(zigzag) count   activity records CUPTI dropped
 * GW_REC_GPU_WINDOW  dt(zigzag) open [settle]   (GW_FEAT_GPU_SAMPLED; on the writer thread)
 *                    open 1: GPU activity collection turned on at dt, 0: turned off. Work
 *                    issued while it was off has no GPU record. A sampled timeline
 *                    (GPUWATCH_TIMELINE=sampled) opens its first window when tracing starts;
 *                    one still open at the end lasts to it. settle: ns the change took
 *                    after dt (0 when absent). Opening: a call that began before dt has no
 *                    linked record; one that began at dt + settle or later has all of its
 *                    work's. Shutting: a call that ended before dt has all of its work's;
 *                    one that began after dt + settle has none linked.
 * GW_REC_CORRELATION correlation_id call_id   (untimed; the host call that issued the work)
 * GW_REC_CALL_BASE   thread_serial next_call_number [link_base [corr_base]]   (untimed;
 *                    first in each EVENTS chunk; link_base: where the chunk's `call` words
 *                    start from; without it, `call` words in the chunk cannot be read and
 *                    link nothing; corr_base: where its correlation deltas start from)
 *
 * NVTX (on the calling thread; domain_id and name_id are string ids, domain 0 = default):
 * GW_REC_RANGE_PUSH  dt(zigzag) domain_id name_id
 * GW_REC_RANGE_POP   dt(zigzag) domain_id
 * GW_REC_MARK        dt(zigzag) domain_id name_id
 * GW_REC_RANGE_START dt(zigzag) domain_id name_id range_id
 * GW_REC_RANGE_END   dt(zigzag) range_id
 *
 * CPU samples (GW_FEAT_CPU_SAMPLES; on the writer thread, about every 50 ms; times in ns,
 * each cumulative since its thread or process started, in /proc's clock ticks for all but
 * the process's own):
 * GW_REC_CPU_THREAD  dt(zigzag) tid cpu_ns [wait_ns wait_cpu_ns [runq_ns]]
 *                    a thread with records of its own (user + system); then how long its
 *                    driver calls that may wait for the GPU took (synchronizes; copies
 *                    between host and device, synchronous or pageable) and its CPU time in
 *                    them (exact, from CLOCK_THREAD_CPUTIME_ID: CUDA spins in such waits by
 *                    default); those two count calls that have returned; then how long
 *                    it was runnable but waited for a CPU (/proc schedstat: preempted,
 *                    not busy; absent where the kernel keeps no schedstat)
 * GW_REC_CPU_PROC    dt(zigzag) process_cpu_ns descendants descendants_cpu_ns active
 *                    [machine_busy_ns]
 *                    this process (all threads), the child processes alive and theirs, the
 *                    CPU time those have used (DataLoader and compile workers, a
 *                    forkserver's children included), and how many of them used some since
 *                    the previous sample; then the busy time of the CPUs the process may
 *                    run on, every process's, since the trace started (/proc/stat: what
 *                    others take from the CPUs its workers would use; absent where it
 *                    cannot be read); not written where the kernel does not list
 *                    children (/proc/PID/task/TID/children)
 *
 * Bodies only ever grow at the end: readers ignore words they do not know and read absent
 * trailing words as 0.
 *
 * Definitions (untimed; in DEFS chunks, GW_REC_CORRELATION also in EVENTS chunks):
 * GW_REC_STRING    id bytes...        (rest of body, no terminator)
 * GW_REC_SHAPE     id name_string_id func_handle gx gy gz bx by bz shared_mem_bytes
 *                  [registers static_shared_mem_bytes]   (GPU shapes, from CUPTI)
 * GW_REC_STREAM    id handle [cupti_stream_id]  (id 0 is the NULL/legacy stream: defined
 *                  only to give its cupti_stream_id; cupti_stream_id is cuStreamGetId's,
 *                  what GPU records carry)
 * GW_REC_DEVICE    ordinal name_string_id total_bytes free_bytes_at_first_context
 * GW_REC_CLOCK     trace_ns realtime_ns monotonic_ns   (a calibration point)
 * GW_REC_THREAD    tid name_string_id
 * GW_REC_STACK     id nframes frame[nframes]   (a native call stack, innermost first: the
 *                  program's call into the driver API, the shim's own frames left out)
 *                  frame := module_string_id module_offset symbol_string_id symbol_offset
 *                  (GW_STACK_FRAME_WORDS words; module: path of the object holding the code;
 *                  module_offset: the return address - 1 minus the object's load bias, the
 *                  address addr2line -e module takes; symbol: the dynamic symbol dladdr
 *                  finds there, 0 and 0 when none; symbol_offset: from the symbol's start)
 * GW_REC_PYSTACK   id nframes frame[nframes]   (a Python call stack, innermost first: the
 *                  interpreter's frames of the thread that made the calls)
 *                  frame := file_string_id line function_string_id   (GW_PYSTACK_FRAME_WORDS
 *                  words: the code object's co_filename, the frame's line number, its
 *                  co_qualname, or co_name before Python 3.11)
 * GW_REC_PYSITE    pystack_id first_call_number ncalls   (untimed, in the thread's EVENTS
 *                  chunks, after the calls it names: this thread's calls numbered
 *                  first_call_number .. + ncalls - 1 were made while the Python stack was
 *                  pystack_id. Written when the thread held the GIL at the call, or when it
 *                  took the GIL back after releasing it around them; a call named by two
 *                  sites belongs to the first one written)
 * GW_REC_STACKSITE stack_id first_call_number ncalls   (untimed, like PYSITE: the calls
 *                  were made from the native STACK stack_id; written for calls that waited
 *                  for the GPU, frees, pinned-memory and VMM calls and the first call after
 *                  a stretch, at most one per thread every GPUWATCH_SITE_EVERY_MS (10 ms):
 *                  a sample in time; allocating calls carry theirs in their own record)
 * GW_REC_PYTHON    version_string_id follows_releases   (the process runs CPython and its
 *                  Python stacks are recorded: Py_GetVersion()'s text; follows_releases 1
 *                  when calls made with the GIL released get stacks too (the interpreter's
 *                  C API comes from a shared libpython), 0 when only calls made holding it do)
 * GW_REC_HOST_COPY bytes_per_second [wake_ns]   (the machine, measured outside the program
 *                  by its launcher (gpuwatch run, before exec) and written once by the shim
 *                  from GPUWATCH_HOST_COPY_BPS and GPUWATCH_WAKE_NS: the host's memcpy rate
 *                  of a 4 MiB batch just written into a reused staging buffer, 0 when not
 *                  given (readers take the largest; what gathering small tensors into one
 *                  pinned staging buffer costs the host, which the trace shows nowhere
 *                  else); then how late a sleeping thread runs after its wake-up is due, the
 *                  median of timed sleeps without timer slack (what a wait for the GPU that
 *                  sleeps adds after the GPU's work, which a host-only trace cannot tell
 *                  from it; absent or 0: not given))
 * GW_REC_SHIM_STATS rounds writer_cpu_ns late_max_ns flush_ns {bucket rounds}*
 *                  (the shim's own cost, written once by its writer thread as tracing stops:
 *                  the writer's rounds, the CPU time its thread used (every shim thread's:
 *                  the CPU sampler and CUPTI's buffers are handled in its rounds), and how
 *                  late each round drained after its deadline (the flush interval after
 *                  the previous round, or a wake-up if sooner; the first round's counts from
 *                  the writer's creation) as pairs of a bucket (gw_late_bucket) and the
 *                  rounds in it, buckets in ascending order, empty ones left out)
 */
enum gw_record_type {
    GW_REC_CALL = 0x01,
    GW_REC_CALL_ERR = 0x02,
    GW_REC_GPU_KERNEL = 0x10,
    GW_REC_GPU_MEMCPY = 0x11,
    GW_REC_GPU_MEMSET = 0x12,
    GW_REC_GPU_LOST = 0x13,
    GW_REC_GPU_WINDOW = 0x14,
    GW_REC_RANGE_PUSH = 0x20,
    GW_REC_RANGE_POP = 0x21,
    GW_REC_MARK = 0x22,
    GW_REC_RANGE_START = 0x23,
    GW_REC_RANGE_END = 0x24,
    GW_REC_CPU_THREAD = 0x30,
    GW_REC_CPU_PROC = 0x31,
    GW_REC_LOST = 0x3F,
    GW_REC_TIMED_MAX = 0x3F,
    GW_REC_STRING = 0x40,
    GW_REC_SHAPE = 0x41,
    GW_REC_STREAM = 0x42,
    GW_REC_DEVICE = 0x43,
    GW_REC_CLOCK = 0x44,
    GW_REC_THREAD = 0x45,
    GW_REC_CORRELATION = 0x46,
    GW_REC_CALL_BASE = 0x47,
    GW_REC_STACK = 0x48,
    GW_REC_PYSTACK = 0x49,
    GW_REC_PYSITE = 0x4A,
    GW_REC_PYTHON = 0x4B,
    GW_REC_STACKSITE = 0x4C,
    GW_REC_HOST_COPY = 0x4D,
    GW_REC_SHIM_STATS = 0x4E,
};

/* SHIM_STATS lateness buckets: 0 holds under 1 us; bucket 1 + 4k + f (f 0..3) holds
 * [(4 + f) 2^k / 4, (5 + f) 2^k / 4) us, four to a doubling (a percentile within 19 %). */
#define GW_LATE_BUCKETS 128

static inline unsigned gw_late_bucket(uint64_t late_ns)
{
    uint64_t us = late_ns / 1000;
    if (!us)
        return 0;
    unsigned msb = 63u - (unsigned)__builtin_clzll(us);
    unsigned frac = (unsigned)(msb >= 2 ? us >> (msb - 2) : us << (2 - msb)) & 3u;
    unsigned b = 1 + 4 * msb + frac;
    return b < GW_LATE_BUCKETS ? b : GW_LATE_BUCKETS - 1;
}

/* The bucket's upper end in ns (what a percentile in it is reported as). */
static inline uint64_t gw_late_bucket_upper_ns(unsigned bucket)
{
    if (!bucket)
        return 1000;
    unsigned msb = (bucket - 1) / 4, frac = (bucket - 1) % 4;
    return ((uint64_t)(5 + frac) << msb) * 1000 / 4;
}

#define GW_STACK_FRAME_WORDS 4   /* words per GW_REC_STACK frame */
#define GW_STACK_MAX_FRAMES 64   /* writers never write more frames; readers keep this many */
#define GW_PYSTACK_FRAME_WORDS 3 /* words per GW_REC_PYSTACK frame */
/* Which calls writers name in PYSITE (and STACKSITE) records, so that readers know which
 * calls lacking one were made without Python frames: every copy, allocation, free, VMM and pinned-memory
 * call, every call that waited for the GPU, and every call after GW_PY_STRETCH_NS or more
 * without calls on its thread (where a loop came back from host work); launches only one
 * in GW_PY_LAUNCH_EVERY. */
#define GW_PY_STRETCH_NS 1000000ull
#define GW_PY_LAUNCH_EVERY 256

/* CUPTI's memcpy and memory kinds, as GPU records carry them. */
enum gw_gpu_copy_kind {
    GW_GPU_COPY_HTOD = 1, GW_GPU_COPY_DTOH = 2, GW_GPU_COPY_DTOD = 8, GW_GPU_COPY_HTOH = 9,
    GW_GPU_COPY_PTOP = 10,
};
enum gw_gpu_memory_kind {
    GW_GPU_MEM_UNKNOWN = 0, GW_GPU_MEM_PAGEABLE = 1, GW_GPU_MEM_PINNED = 2, GW_GPU_MEM_DEVICE = 3,
    GW_GPU_MEM_ARRAY = 4, GW_GPU_MEM_MANAGED = 5,
};

enum gw_family {
    GW_FAM_PLAIN = 0,
    GW_FAM_PROC,
    GW_FAM_CTX,
    GW_FAM_MEMINFO,
    GW_FAM_ALLOC,
    GW_FAM_FREE,
    GW_FAM_VMM,
    GW_FAM_HOSTMEM,
    GW_FAM_LAUNCH,
    GW_FAM_COPY,
    GW_FAM_SET,
    GW_FAM_SYNC,
    GW_FAM_NAME,
};

enum gw_proc_outcome {
    GW_PROC_PASSED = 0,       /* not a hooked variant: the driver's pointer was returned */
    GW_PROC_SUBSTITUTED = 1,  /* the wrapper for that exact variant was returned */
    GW_PROC_FAILED = 2,       /* the driver returned an error or NULL */
};

enum gw_copy_dir {
    GW_COPY_UNKNOWN = 0, GW_COPY_HTOD = 1, GW_COPY_DTOH = 2, GW_COPY_DTOD = 3,
    GW_COPY_HTOH = 4, GW_COPY_PEER = 5,
};

enum gw_host_kind {
    GW_HOST_NONE = 0, GW_HOST_PAGEABLE = 1, GW_HOST_PINNED = 2, GW_HOST_MANAGED = 3,
};

/* A COPY record's kind word: direction | host_kind << 4. The one pack and unpack. */
static inline uint64_t gw_copy_kind(unsigned dir, unsigned host_kind)
{
    return (uint64_t)(dir & 0xF) | (uint64_t)(host_kind & 0xF) << 4;
}
static inline unsigned gw_copy_kind_dir(uint64_t kind) { return (unsigned)(kind & 0xF); }
static inline unsigned gw_copy_kind_host(uint64_t kind) { return (unsigned)((kind >> 4) & 0xF); }

/* Stable ids of the hooked entry points (written as api_id). */
enum gw_api_id {
#define GW_API(id, name, family, base, version, per_thread, async) GW_API_##name = id,
#include "gpuwatch/api_list.h"
#undef GW_API
    GW_API_ID_LIMIT = 128,    /* ids are < this; the tools size tables by it */
};

/* Per entry point, api_list.h's async column (GW_ASYNC_cuMemcpyHtoDAsync_v2 = 1). */
enum gw_api_async {
#define GW_API(id, name, family, base, version, per_thread, async) GW_ASYNC_##name = async,
#include "gpuwatch/api_list.h"
#undef GW_API
};

#endif
