/*
 * The recorder: what hooks call to put events into the trace. It knows nothing of CUDA
 * beyond the record layouts, so unit tests drive it directly, without preloading.
 *
 * Each thread appends encoded records to its own ring (no lock, no syscall); the writer
 * thread drains the rings into chunks of the trace file every flush interval.
 */
#ifndef GW_RECORDER_H
#define GW_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Opens the trace file and starts the writer thread. 0 on success; -1 (after one warning
 * on stderr) when no trace can be written. */
int gw_recorder_start(const struct gw_config *cfg);
/* Drains every ring, writes the final chunks and closes the file. Idempotent. */
void gw_recorder_stop(void);
/* Asks the writer for an immediate drain and waits up to timeout_ms; async-signal-safe. */
void gw_recorder_flush_now(unsigned timeout_ms);
int gw_recorder_active(void);
/* The process the trace file belongs to. */
uint32_t gw_recorder_pid(void);
/* Path of the trace file being written ("" when none). */
const char *gw_recorder_path(void);
/* In a forked child: forget the parent's file, rings and definitions without touching them. */
void gw_recorder_after_fork_child(void);

/* One hooked call. words are the family payload (trace_format.h), at most 5. */
void gw_rec_call(unsigned api_id, uint64_t start_ns, uint64_t end_ns, int result,
                 const uint64_t *words, unsigned nwords);

/* A call that may wait for the GPU took wall_ns, cpu_ns of them on a CPU (spinning, or
 * staging a pageable copy): added to the thread's totals, which its CPU samples carry. */
void gw_rec_wait(uint64_t wall_ns, uint64_t cpu_ns);

/* Told of a recorded call after its record, on the calling thread, when the call reported a
 * wait (gw_rec_wait: waited 1), came gap_ns >= GW_PY_STRETCH_NS after the thread's previous
 * call ended, or is of an api the observer asked for; call_number is the low word of its
 * call id. */
typedef void (*gw_call_observer_fn)(unsigned api_id, uint64_t start_ns, uint64_t end_ns,
                                    int result, int waited, uint64_t gap_ns,
                                    uint64_t call_number);
/* One observer at most (call_sites.c); apis: GW_API_ID_LIMIT entries, 1 for the apis whose
 * every call it is told of. NULL removes it. */
void gw_rec_set_call_observer(gw_call_observer_fn observer, const uint8_t *apis);

/* The id the next gw_rec_call on this thread will get: tid << 32 | number. */
uint64_t gw_rec_next_call_id(void);
/* Any other timed record (GPU activity, NVTX): words follow the dt. */
void gw_rec_timed(uint8_t type, uint64_t ts_ns, const uint64_t *words, unsigned nwords);
/* A GPU record (GW_REC_GPU_KERNEL, _MEMCPY, _MEMSET) at ts_ns, words following the dt,
 * and the host call that issued the work (0: not known) as its `call` word. */
void gw_rec_gpu(uint8_t type, uint64_t ts_ns, const uint64_t *words, unsigned nwords,
                uint64_t call_id);
/* An untimed record among this thread's events (GPU-to-call correlations). */
void gw_rec_untimed(uint8_t type, const uint64_t *words, unsigned nwords);

/* Definitions: each returns a small id, emitting the definition record the first time. */
uint64_t gw_rec_string(const char *text);
/* The id of a stream handle already defined, or 0. */
uint64_t gw_rec_stream_known(uint64_t handle);
/* Defines the stream (once) with the id CUPTI's records use for it (0 unknown). */
uint64_t gw_rec_stream(uint64_t handle, uint64_t cupti_stream_id);
/* Gives the NULL (legacy) stream, id 0, the id CUPTI's records use for it; once. */
void gw_rec_stream_default(uint64_t cupti_stream_id);
/* Host launch shapes have a function handle; GPU shapes (from CUPTI) have func_handle 0
 * and carry registers and static shared memory. */
uint64_t gw_rec_shape(uint64_t func_handle, uint64_t name_id, const uint32_t dims[6],
                      uint32_t shared_mem, uint32_t registers, uint32_t static_shared_mem);
/* The name id remembered for a function or kernel handle; 0 when unknown. */
uint64_t gw_rec_handle_name(uint64_t handle);
void gw_rec_set_handle_name(uint64_t handle, uint64_t name_id);
void gw_rec_device(int ordinal, const char *name, uint64_t total_bytes, uint64_t free_bytes);
/* The call stack of code addresses pcs[0..n) (innermost first, at most
 * GW_STACK_MAX_FRAMES), symbolized with dladdr and defined the first time it is seen;
 * 0 when n is 0 or memory runs out. */
uint64_t gw_rec_stack(const uint64_t *pcs, unsigned n);
/* The process runs this Python (Py_GetVersion()), whose stacks are recorded; follows: GIL
 * releases are followed. Once per trace. */
void gw_rec_python(const char *version, int follows);
/* Fills one frame's words of a stack definition from its key, the first time the stack
 * is seen. */
typedef void (*gw_frame_describe_fn)(const uint64_t *key, uint64_t *frame);
/* A Python call stack: keys are (code object address, line) pairs, innermost first, at
 * most GW_STACK_MAX_FRAMES; describe gives each frame's GW_PYSTACK_FRAME_WORDS words the
 * first time (it must keep the code objects alive: their addresses key the stack). */
uint64_t gw_rec_pystack(const uint64_t *keys, unsigned n, gw_frame_describe_fn describe);

/* Changes when a new trace starts (a forked child's, a restarted recorder): ids and rings
 * cached before it are void. */
extern unsigned gw_recorder_generation_now;
static inline unsigned gw_recorder_generation(void) { return gw_recorder_generation_now; }

/* Records in the header whether the GPU timeline is on, and why not (enum gw_cupti_status). */
void gw_recorder_set_cupti(int status, const char *reason);
/* Sets feature flags of the trace's header (enum gw_feature_flags). */
void gw_recorder_add_features(uint32_t flags);
/* Adds a source the writer thread asks, at each flush and before it drains the rings, to
 * hand over what it holds (CUPTI's buffers, the CPU samples); urgent when a signal asked
 * for the flush. Once per source; a forked child's writer starts with none. */
void gw_writer_add_round_hook(void (*hook)(int urgent));

/* Counters for tests and benchmarks. */
struct gw_recorder_stats {
    uint64_t events;     /* records committed to rings */
    uint64_t lost;       /* records dropped because a ring was full */
    uint64_t chunks;     /* chunks written */
    uint64_t bytes;      /* bytes written to the file, header included */
};
void gw_recorder_get_stats(struct gw_recorder_stats *out);

#endif
