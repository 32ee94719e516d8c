/*
 * The what-if replay (replay.h): one pass over the run's events, every what-if replayed
 * side by side. Each host thread and each stream keeps a replayed clock per what-if; an
 * event moves them by its measured lengths as the what-if transforms them (whatif.c).
 *
 * Order: a drain may be replayed only once the GPU records of the work it waited for have
 * been matched, and CUPTI's records reach the trace long after the calls. So, when GPU
 * records are expected, host events wait here (in release order) until the GPU side has
 * been released past their end, within a bounded queue. A GPU record whose issuing call
 * has not been replayed yet waits on its stream for it.
 */
#include "replay.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpuwatch/trace_format.h"
#include "stream_map.h"
#include "trace_reader.h"
#include "whatif.h"

/* host events waiting for the GPU side, at most (64 MiB): CUPTI hands its records over
 * every flush (50 ms by default), and a loop launching a kernel every 300 ns makes 170 k
 * calls in that time; one that outran the queue replayed the rest without their records */
#define FIFO_MAX (1u << 20)
#define PENDING_MAX (1u << 20)      /* GPU records waiting for their call, per stream (the
                                        reorder windows hold no more) */
#define QUEUE_MAX (1u << 16)         /* issued operations not matched yet, per stream */
#define MAX_THREADS 4096
#define DONE_KEEP 256               /* operations an event may be recorded after, per stream */

/*
 * Lazy clocks. Most events move every world's clock of their thread alike, by the stretch
 * before them and their own time, but for one change which takes some of that away, the
 * same in every world making it: cuda_graphs a kernel launch (and the launch overhead
 * before it), a warm allocator an allocator call (whatif.c, an_wi_removes). Moving 7-22
 * clocks for every event was a fifth of the replay's work; a thread keeps that time aside
 * instead, and its clock in slot w is
 *     base + h[w] - (removed[k] for each change k that w's world makes)
 * (replay.h, remover_set: a bit per such change), modulo 2^64. An
 * operation it issues copies the same as its call's start. What reads or moves the clocks
 * world by world settles them first: base and removed folded into h, which then holds each
 * world's clock again.
 */
struct an_rp_lazy {
    int on;                          /* base or removed may be non-zero */
    uint64_t base, removed[AN_RP_REMOVERS];
};

/* removed[]'s index for the change an_wi_removes names, -1 for none */
static int remover_of(int change)
{
    return change == AN_WI_GRAPHS ? 0 : change == AN_WI_NO_CHURN ? 1 : -1;
}

/* what to add to a lazy clock for the world of a slot whose remover_set is `set` */
static inline uint64_t lazy_offset(const struct an_rp_lazy *lazy, unsigned set)
{
    uint64_t off = lazy->base;
    for (unsigned k = 0; k < AN_RP_REMOVERS; k++)
        off -= (set >> k) & 1u ? lazy->removed[k] : 0;
    return off;
}

static void settle(const struct an_replay_state *st, struct an_rp_lazy *lazy, uint64_t *clock)
{
    if (!lazy->on)
        return;
    for (unsigned w = 0; w < st->nlive; w++)
        clock[w] += lazy_offset(lazy, st->remover_set[w]);
    memset(lazy, 0, sizeof *lazy);
}

/* to[w] = from[w] for the live slots, and some dead ones: a copy of fixed size is a few
 * moves inline, where one of the live slots' was a call to memcpy, a tenth of issuing a
 * launch; the first AN_RP_FEW slots (most runs wake no more) and the rest only where more
 * are live (the dead slots' values are never read: a world woken late copies its slot
 * whole, copy_slot) */
#define AN_RP_FEW 12
static inline void copy_clocks(uint64_t *restrict to, const uint64_t *restrict from,
                               unsigned nlive)
{
    memcpy(to, from, AN_RP_FEW * sizeof *to);
    if (nlive > AN_RP_FEW)
        memcpy(to + AN_RP_FEW, from + AN_RP_FEW, (AN_WORLDS - AN_RP_FEW) * sizeof *to);
}

/* An operation issued and not yet matched to its GPU record. */
struct an_rp_op {
    struct an_ev call;               /* the issuing call */
    uint64_t seq;                    /* its place on its stream: 0, 1, ... */
    uint64_t issued_meas;            /* when the host had issued it (measured) */
    unsigned touched;                /* the changes that transform it (an_wi_touched) */
    int waits;                       /* its call waited for the GPU as measured */
    int ckpt;                        /* ... a checkpoint read (replay.h, ckpt_read) */
    int wanted;                      /* an event was recorded right after it (want_done) */
    uint64_t gathered;               /* ... bytes it stages (replay.h, gathered) */
    uint64_t from;                   /* its issuer, where sim is a thread's h as it stood in
                                        an epoch (op_from), else 0 (stream maps) */
    struct an_rp_lazy lazy;          /* sim's, as its thread's when issued (lazy clocks) */
    uint64_t sim[AN_WORLDS];       /* the call's replayed start */
};

/* When the host had issued op in world w, replayed: its call's start, plus its own time
 * where it did not wait (so it was not kept per world: only a drain's first and last
 * operation need it, and copying it as each was issued cost a tenth of the replay). */
static uint64_t issued_sim(const struct an_replay_state *st, const struct an_rp_op *op, int w)
{  /* (op settled) */
    if (op->waits)
        return op->sim[w];
    return op->sim[w] + an_wi_cost(st, st->changes[w] & op->touched, &op->call,
                                   op->call.end - op->call.ts, op->gathered);
}

/* (its sim no longer its thread's h as issued: no stream map takes it) */
static void settle_op(const struct an_replay_state *st, struct an_rp_op *op)
{
    settle(st, &op->lazy, op->sim);
    op->from = 0;
}

struct an_rp_record {
    uint64_t ts, end, corr;
    int graph;                       /* run by a graph launch */
    uint8_t kind;                    /* AN_GPU_KERNEL, AN_GPU_COPY, AN_GPU_SET */
};

/* cuStreamWaitEvent: the stream's operations from seq on wait for stream `other`'s first
 * `upto` operations (those before the event's record). */
struct an_rp_barrier {
    uint64_t seq, upto;
    size_t other;
};
#define BARRIERS 4

struct an_rp_stream {
    uint64_t id;
    unsigned device;                 /* its records' device ordinal + 1 (0: none seen yet) */
    struct an_rp_barrier bar[BARRIERS];  /* oldest first */
    unsigned nbar;
    struct an_rp_op *q;              /* ring */
    size_t q_head, q_n, q_cap;
    struct an_rp_record *pend;       /* ring */
    size_t p_head, p_n, p_cap;
    uint64_t g[AN_WORLDS];         /* replayed end of its latest operation */
    uint64_t g_meas;                 /* measured end of its latest operation */
    uint64_t last_corr;              /* the record matched last (graph launches: many) */
    struct an_rp_op cur;             /* ... and its call: here, or where cur_queued, still in
                                        q's slot cur_slot, left behind by q_head (cur_op) */
    size_t cur_slot;
    int have_cur, cur_queued;
    uint64_t latency;                /* call start to operation start, when not queued */
    uint64_t issued;                 /* operations issued on it so far */
    /* when its latest DONE_KEEP operations ended, by seq: what an event sync waits for.
     * The seq of each slot's latest (done_seq) is kept for every operation, when it ended
     * only for the latest (latest_seq) and for those an event was recorded after (done:
     * copied there from latest where the event came after it ended, else when it ends, op's
     * wanted; each was a cache miss or three, a sixth of a record's replay) */
    uint64_t done_seq[DONE_KEEP];
    uint64_t latest_seq;
    struct an_rp_done {
        uint64_t meas, sim[AN_WORLDS];
    } latest, done[DONE_KEEP];
    /* the operations replayed since g was last settled, as one map (stream_map.h); and
     * latest's sim is g, settled or not (copied only where read: settle_latest) */
    struct an_rp_map map;
    int latest_lazy;
};

/* The call of the record matched last (an_rp_stream, cur): matching a record took a copy
 * of its operation out of the queue, a sixth of a record's replay; it stays in its slot
 * until a new operation needs that slot or the queue grows (cur_out). */
static inline struct an_rp_op *cur_op(struct an_rp_stream *s)
{
    return s->cur_queued ? &s->q[s->cur_slot] : &s->cur;
}

static void cur_out(struct an_rp_stream *s)
{
    if (s->cur_queued)
        memcpy(&s->cur, &s->q[s->cur_slot], sizeof s->cur);
    s->cur_queued = 0;
}

struct an_rp_thread {
    uint32_t tid;
    uint32_t slot;                   /* its index in threads, + 1 */
    /* small uploads (whatif.c, small_upload): their bytes in its current iteration and in
     * the one before, and whether one of the current iteration's was replayed (gather_of) */
    uint64_t gather_cur, gather_prev;
    int gather_started;
    uint64_t last_end;               /* measured end of its latest call */
    int after_kernel;                /* its latest call was a kernel launch */
    int after_small;                 /* ... one of a step's small uploads (whatif.c) */
    struct an_rp_lazy lazy;          /* h's (lazy clocks) */
    uint64_t h[AN_WORLDS];         /* replayed */
    /* NVTX: ranges pushed and not popped, the depth of the open step range (0: none),
     * the id of its open step range started with nvtxRangeStart (0: none) */
    uint32_t nvtx_depth, step_depth;
    uint64_t step_range;
    /* iterations of its loop since its latest stretch of pause_min_ns or more, counted
     * three ways (whatif.c, an_wi_loop_pause): waits for the GPU, and uploads, each after
     * the thread launched kernels since the previous one; step ranges ended */
    uint32_t waits_after_work, uploads_after_work, steps_ended;
    uint8_t launched_since_wait, launched_since_upload;
    /* its loop has run an iteration (counted as above; kept across pauses): stretches
     * before are start-up (imports, building the model and the data set, a first compile),
     * no batch loads (whatif.c, an_wi_batch_load) */
    uint8_t looping;
    /* a stretch of pause_min_ns or more came while it looped: a later one that is no pause
     * repeats it, the input's rhythm (a batch load, an_wi_batch_load); a first one is the
     * loop's start-up (a DataLoader starting its workers after a first step) */
    uint8_t long_seen;
    /* its latest call that issued work was an upload to this stream (+ 1; 0: not one): a
     * sync of that stream next is the upload's wait (replay.h, upload_wait) */
    uint64_t upload_to;
    /* its latest call read a tensor back (a device-to-host copy of more than a scalar): the
     * stretch after it uses what it read (an offloaded optimizer step, a metric), no batch
     * load: a batch reaches the GPU by an upload that waits on no read-back */
    uint8_t after_readback;
    /* its latest call waited for the GPU (a sync, a read-back of any size): the stretch
     * after it is the step's own work on what it read, up to input_gap_after_wait_ns, a
     * step range opening after the read or not (where a profiler's step opens at the read,
     * the logging follows it; PyTorch's opens at prof.step(), after the logging) */
    uint8_t after_wait;
    /* since its latest pause, stretches of input_gap_ns or more after a read-back that were
     * no pause, and tensor read-backs in another iteration of its loop than the latest's
     * (read_iter, when read_seen): the loop's rhythm, not a rare save (an_wi_loop_pause;
     * per-step downloads under a CPU hog made a preempted stretch a "pause" otherwise) */
    uint32_t readback_stretches;
    uint32_t read_iter;
    uint8_t read_seen;
    /* iterations of its loop before its latest pause (the counts above, summed where a
     * pause reset them), and per size of a bulk download into pageable memory (the bytes'
     * power of two) the iteration of its latest one, counted so, + 1 (0: none): what the
     * loop downloads each step apart from its state read every so many (rare_download) */
    uint32_t iterations_before;
    uint32_t download_iter[64];
    /* its latest call read the GPU's results and the worlds holding `held` took its wait
     * away: when each would have waited until (restored where a pause follows it) */
    int holding;
    uint64_t held[AN_WORLDS];
    /* the worlds (a bit per slot) holding it only because AN_WI_BACKGROUND took a
     * checkpoint read off the thread (replay.h, ckpt_read) */
    uint32_t bg_held;
    /* it loaded a batch itself (a stretch taken as one): the thread whose waits for the GPU
     * the workers' CPU budget weighs (loader_wait) */
    uint8_t loaded;
    /* its latest batch loads that followed no wait for the GPU, by length (a ring): how
     * long a load is where the loop reads every few steps (step_own_of) */
#define RECENT_LOADS 8
    uint64_t recent_load[RECENT_LOADS];
    uint32_t nrecent_loads;
    /* its waits for the GPU slept (cudaDeviceScheduleBlockingSync): over its latest CPU
     * sample's interval they were more off the CPU than on it or waiting for one; each then
     * ended a wake-up (an_replay_state.wake_ns) after the GPU's work (waits_sleep_from) */
    uint8_t waits_sleep;
    uint64_t sample_wait_ns, sample_wait_cpu_ns, sample_runq_ns;
};

/* A read-back of this much or less is a scalar (loss.item(), a metric): what follows it is
 * the loop's next step; more is a tensor the host goes on to use. */
#define AN_SCALAR_READ_BYTES 4096u

/* More CPUs than any machine a trace comes from has (the largest have a few hundred). */
#define AN_REPLAY_MAX_CPUS 4096u

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static void wake_worlds(struct an_replay_state *st, unsigned touched);

void an_replay_init(struct an_replay_state *st, const struct an_thresholds *th, int expect_gpu,
                    unsigned cpus)
{
    memset(st, 0, sizeof *st);
    st->th = *th;
    st->expect_gpu = expect_gpu;
    /* (the CPU count comes from the trace's header: a damaged one must not size memory) */
    if (cpus > AN_REPLAY_MAX_CPUS)
        cpus = AN_REPLAY_MAX_CPUS;
    an_replay_set_workers(st, cpus > 2 ? cpus - 1 : 1, 1.0);
    st->nlive = 1;  /* the run as measured; its changes and making[]: none */
    /* host-only, the run with drained work at its least, from the start (replay.h,
     * AN_WI_LEAST: the ceilings' worlds come alive with their change, as copies of it) */
    if (!expect_gpu) {
        st->changes[st->nlive++] = AN_WI_BIT(AN_WI_LEAST);
        st->active = AN_WI_BIT(AN_WI_LEAST);
        wake_worlds(st, 0);
    }
    st->nowait_ns = malloc(GW_API_ID_LIMIT * sizeof *st->nowait_ns);
    if (st->nowait_ns)
        for (size_t i = 0; i < GW_API_ID_LIMIT; i++)
            st->nowait_ns[i] = UINT64_MAX;
}

int an_replay_set_workers(struct an_replay_state *st, unsigned workers, double speed)
{
    free(st->worker_free);
    free(st->taken);
    st->nworkers = workers ? (workers < AN_REPLAY_MAX_CPUS ? workers : AN_REPLAY_MAX_CPUS) : 1;
    st->worker_speed = speed > 0.01 && speed < 1 ? speed : 1;
    st->ntaken = st->nworkers * AN_PREFETCH_FACTOR;
    st->worker_free = calloc(st->nworkers * AN_WORLDS, sizeof *st->worker_free);
    st->taken = calloc(st->ntaken * AN_WORLDS, sizeof *st->taken);
    if (st->worker_free && st->taken)
        return 0;
    st->nworkers = 0;
    return -1;
}

void an_replay_free(struct an_replay_state *st)
{
    for (size_t i = 0; i < st->nstreams; i++) {
        free(st->streams[i].q);
        free(st->streams[i].pend);
    }
    free(st->streams);
    free(st->threads);
    free(st->fifo);
    free(st->worker_free);
    free(st->taken);
    free(st->nowait_ns);
    gw_map_free(&st->stream_index);
    gw_map_free(&st->event_at);
    gw_map_free(&st->kernel_time);
    gw_map_free(&st->name_of_shape);
    memset(st, 0, sizeof *st);
}

unsigned an_world_changes(int world)
{
    /* 0, then 1 << w for each change, then each pair, in a fixed order */
    if (world <= 0 || world >= AN_WORLDS)
        return 0;
    /* (then each ceiling's world, and the run at its least: replay.h, AN_WI_LEAST) */
    static const enum an_whatif ceilings[AN_CEILINGS] = {AN_WI_INPUT_WORKERS,
                                                         AN_WI_BACKGROUND};
    if (world >= AN_PAIRS_END)
        return AN_WI_BIT(AN_WI_LEAST) |
               (world < AN_PAIRS_END + AN_CEILINGS ? AN_WI_BIT(ceilings[world - AN_PAIRS_END])
                                                   : 0);
    if (world <= AN_CHANGES)
        return 1u << world;
    int k = world - AN_CHANGES - 1;
    for (int a = 1; a <= AN_CHANGES; a++)
        for (int b = a + 1; b <= AN_CHANGES; b++)
            if (k-- == 0)
                return 1u << a | 1u << b;
    return 0;
}

int an_world_of(unsigned changes)
{
    for (int world = 0; world < AN_WORLDS; world++)
        if (an_world_changes(world) == changes)
            return world;
    return -1;
}

static uint64_t saving_between(const struct an_replay *r, unsigned from, unsigned to)
{
    int a = an_world_of(from), b = an_world_of(to);
    if (!r->done || a < 0 || b < 0)
        return 0;
    return r->wall_ns[b] < r->wall_ns[a] ? r->wall_ns[a] - r->wall_ns[b] : 0;
}

uint64_t an_replay_saving(const struct an_replay *r, enum an_whatif w)
{
    if (w <= AN_WI_AS_MEASURED || w >= AN_WI_COUNT)
        return 0;
    return saving_between(r, 0, 1u << w);
}

uint64_t an_replay_ceiling(const struct an_replay *r, enum an_whatif w)
{
    if (w <= AN_WI_AS_MEASURED || w >= AN_WI_COUNT)
        return 0;
    if (an_world_of(AN_WI_BIT(w) | AN_WI_BIT(AN_WI_LEAST)) < 0)
        return an_replay_saving(r, w);
    return saving_between(r, AN_WI_BIT(AN_WI_LEAST), AN_WI_BIT(w) | AN_WI_BIT(AN_WI_LEAST));
}

uint64_t an_replay_saving_after(const struct an_replay *r, enum an_whatif first,
                                enum an_whatif w)
{
    if (w <= AN_WI_AS_MEASURED || w >= AN_WI_COUNT || first <= AN_WI_AS_MEASURED ||
        first >= AN_WI_COUNT || first == w)
        return 0;
    return saving_between(r, 1u << first, 1u << first | 1u << w);
}

/* The slot replaying the world that makes `changes`: a live one, as every set of active
 * changes of a world's is (an_replay_state, live worlds). */
static unsigned slot_of(const struct an_replay_state *st, unsigned changes)
{
    unsigned slot = 0;
    while (slot < st->nlive && st->changes[slot] != changes)
        slot++;
    return slot < st->nlive ? slot : 0;
}

/* Slot `to` starts as a copy of slot `from`: every clock the replay keeps per world. */
static void copy_slot(struct an_replay_state *st, unsigned to, unsigned from)
{
    for (size_t i = 0; i < st->nthreads; i++) {
        st->threads[i].h[to] = st->threads[i].h[from];
        st->threads[i].held[to] = st->threads[i].held[from];
        st->threads[i].bg_held &= ~(1u << to);
        st->threads[i].bg_held |= ((st->threads[i].bg_held >> from) & 1u) << to;
    }
    for (size_t i = 0; i < st->nstreams; i++) {
        struct an_rp_stream *s = &st->streams[i];
        s->g[to] = s->g[from];
        cur_op(s)->sim[to] = cur_op(s)->sim[from];
        for (size_t k = 0; k < DONE_KEEP; k++)
            s->done[k].sim[to] = s->done[k].sim[from];
        s->latest.sim[to] = s->latest.sim[from];
        for (size_t k = 0; k < s->q_n; k++) {
            struct an_rp_op *op = &s->q[(s->q_head + k) & (s->q_cap - 1)];
            op->sim[to] = op->sim[from];
        }
    }
    for (size_t d = 0; d < AN_RP_DEVICES; d++)
        st->devices[d].kernel_end[to] = st->devices[d].kernel_end[from];
    st->first_ask[to] = st->first_ask[from];
    st->first_fetched[to] = st->first_fetched[from];
    st->bg_free[to] = st->bg_free[from];
    st->bg_from[to] = st->bg_from[from];
    st->loader_wait[to] = st->loader_wait[from];
    if (st->nworkers) {
        memcpy(st->worker_free + to * st->nworkers, st->worker_free + from * st->nworkers,
               st->nworkers * sizeof *st->worker_free);
        memcpy(st->taken + to * st->ntaken, st->taken + from * st->ntaken,
               st->ntaken * sizeof *st->taken);
    }
}

static void settle_streams(struct an_replay_state *st);

/* The loading thread's wait for a batch in the worlds of `in` (whatif.c, worker_gap): until
 * when the GPU ran work issued before it. Its next wait for the GPU counts that part of it,
 * as far as it waited for that work, among the thread's waits (loader_wait,
 * spun_in_batch_wait).
 * A fluid budget has the thread wait for each batch off the CPU while the GPU runs the
 * previous step's kernels, and spin only for the rest; but workers deliver in bursts, a
 * batch each as the CPUs' scheduler runs them and their prefetched ones at once, and the
 * thread, its batch ready, spins through that work. Random draw 6 (a 1.9 ms load, 0.6 ms of
 * kernels, a synchronous pageable upload after them): four workers ran it at 1.55 ms a
 * step, the thread waiting for the GPU on a CPU 61 % of the time (0.94 ms a step) and the
 * loads getting 1.18 CPUs of 2; counting only the waits its world replayed, the budget
 * gave the loads 1.4 CPUs and two workers 155 ms for 106-132 measured. (A loop whose
 * waits are for work steps old spins through none of it: input_off_cpu in calibration.) */
static void spun_through(struct an_replay_state *st, const struct an_world_set *in,
                         int loaded)
{
    int waited = 0;
    for (unsigned i = 0; i < in->n; i++)
        waited |= st->batch_wait[in->world[i]] > 0;
    if (!waited)
        return;
    if (!loaded) {  /* (its first batch: no thread's waits weighed yet) */
        memset(st->batch_wait, 0, sizeof st->batch_wait);
        return;
    }
    settle_streams(st);
    for (unsigned i = 0; i < in->n; i++) {
        int w = in->world[i];
        uint64_t busy_until = 0;
        for (size_t k = 0; k < st->nstreams; k++)
            busy_until = max64(busy_until, st->streams[k].g[w]);
        st->batch_busy[w] = busy_until;
    }
}

/* What of the latest wait for a batch in world w the loading thread would have spun
 * through at this wait for the GPU, done at `ready` (spun_through): the work the GPU ran
 * through it, as far as this wait waited for it. */
static uint64_t spun_in_batch_wait(const struct an_replay_state *st, unsigned w, uint64_t ready)
{
    uint64_t wait = st->batch_wait[w], from = st->batch_from[w];
    uint64_t until = st->batch_busy[w] < ready ? st->batch_busy[w] : ready;
    uint64_t ran = until > from ? until - from : 0;
    return ran < wait ? ran : wait;
}

/* The changes of `touched` not active yet become so: the worlds making them (with active
 * ones) come alive, each a copy of the world it was until now, the one without them. */
static void wake_worlds(struct an_replay_state *st, unsigned touched)
{
    unsigned active = st->active | touched;
    /* (operations keep their lazy clocks: the time a change not active yet took away is
     * nil, and a slot's new world is its old one with such changes added; the stream maps'
     * classes change) */
    for (size_t i = 0; i < st->nthreads; i++)
        settle(st, &st->threads[i].lazy, st->threads[i].h);
    settle_streams(st);
    st->h_epoch++;
    for (int w = 1; w < AN_WORLDS && st->nlive < AN_WORLDS; w++) {
        unsigned changes = an_world_changes(w);
        if ((changes & ~active) || !(changes & ~st->active))
            continue;  /* not alive now, or alive already */
        copy_slot(st, st->nlive, slot_of(st, changes & st->active));
        st->changes[st->nlive] = changes;
        for (int c = 1; c < AN_WI_COUNT; c++)
            if ((changes & AN_WI_BIT(c)) && remover_of(c) >= 0)
                st->remover_set[st->nlive] |= (uint8_t)(1u << remover_of(c));
        st->nlive++;
    }
    st->active = active;
    for (unsigned mask = 0; mask < 1u << AN_WI_COUNT; mask++) {
        struct an_world_set *in = &st->making[mask];
        in->n = in->ngroups = 0;
        for (unsigned slot = 0; slot < st->nlive; slot++) {
            unsigned c = st->changes[slot] & mask;
            in->group_of[slot] = 0;
            if (!c)
                continue;
            in->world[in->n++] = (uint8_t)slot;
            unsigned g = 0;
            while (g < in->ngroups && in->group_changes[g] != c)
                g++;
            if (g == in->ngroups)
                in->group_changes[in->ngroups++] = (uint8_t)c;
            in->group_of[slot] = (uint8_t)(g + 1);
        }
        in->nclasses = 0;
        for (unsigned slot = 0; slot < st->nlive; slot++) {
            unsigned k = 0;
            while (k < in->nclasses && (in->class_group[k] != in->group_of[slot] ||
                                        in->class_set[k] != st->remover_set[slot]))
                k++;
            if (k == in->nclasses) {
                unsigned group = in->group_of[slot];
                in->class_group[k] = (uint8_t)group;
                in->class_set[k] = st->remover_set[slot];
                in->class_bits[k] = (uint8_t)(
                    st->remover_set[slot] |
                    (group && (in->group_changes[group - 1] & AN_WI_BIT(AN_WI_GRAPHS))
                         ? 1u << AN_RP_REMOVERS : 0));
                in->nclasses++;
            }
            in->class_of[slot] = (uint8_t)k;
        }
    }
}

void an_replay_wake_all(struct an_replay_state *st)
{
    wake_worlds(st, (1u << AN_WI_COUNT) - 2);  /* (every change: bit 0 is the run as is) */
}

static struct an_rp_thread *known_thread(struct an_replay_state *st, uint32_t tid)
{
    for (size_t i = st->nthreads; i-- > 0;)
        if (st->threads[i].tid == tid)
            return &st->threads[i];
    return NULL;
}

static struct an_rp_thread *new_thread(struct an_replay_state *st, uint32_t tid, uint64_t ts);

/* (the thread replayed last first, inline: nearly every call is on it) */
static inline struct an_rp_thread *thread_of(struct an_replay_state *st, uint32_t tid,
                                            uint64_t ts)
{
    if (st->last_thread && st->threads[st->last_thread - 1].tid == tid)
        return &st->threads[st->last_thread - 1];
    struct an_rp_thread *known = known_thread(st, tid);
    return known ? known : new_thread(st, tid, ts);
}

__attribute__((noinline))
static struct an_rp_thread *new_thread(struct an_replay_state *st, uint32_t tid, uint64_t ts)
{
    if (st->nthreads == st->threads_cap) {
        if (st->threads_cap >= MAX_THREADS)
            return &st->threads[st->nthreads - 1];  /* absurdly many: lump the rest */
        size_t cap = st->threads_cap ? st->threads_cap * 2 : 8;
        struct an_rp_thread *grown = realloc(st->threads, cap * sizeof *grown);
        if (!grown)
            return st->nthreads ? &st->threads[st->nthreads - 1] : NULL;
        st->threads = grown;
        st->threads_cap = cap;
    }
    /* a new thread starts where the host's replayed time stood when it was made: the
     * thread replayed last, replayed minus measured; never before the run's first event
     * (made while that thread was in a call, the time it gained by that call's end is more
     * than it had gained by then: a thread started before the run beat the device) */
    uint64_t delta[AN_WORLDS] = {0};
    st->h_epoch++;
    if (st->last_thread) {
        struct an_rp_thread *l = &st->threads[st->last_thread - 1];
        settle(st, &l->lazy, l->h);
        for (unsigned w = 0; w < st->nlive; w++)
            delta[w] = l->last_end > l->h[w] ? l->last_end - l->h[w] : 0;
    }
    struct an_rp_thread *t = &st->threads[st->nthreads++];
    /* (every field from zero: its upload_to, after_readback and long_seen were read
     * before they were first written, and a change of an unrelated struct's layout moved
     * what the realloc'd memory held: one Kineto trace's batch loads went 14 -> 15) */
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->slot = (uint32_t)st->nthreads;
    t->last_end = ts;
    for (unsigned w = 0; w < st->nlive; w++) {
        t->h[w] = ts - (delta[w] < ts ? delta[w] : ts);
        if (t->h[w] < st->first_ts)
            t->h[w] = st->first_ts;
    }
    return t;
}

/* NVTX on a thread: where a step range starts or ends, the host's stretch is cut in two
 * (the work before a step ends is that step's own, logging the loss it read; the work
 * after the next starts loads its batch: whatif.c's batch loads). Returns the mark that
 * cuts it, written into mark, or NULL where ev cuts nothing (other ranges take no time).
 * Kept out of line: inlined, it slowed replay_call, which runs for every call, by 6 %. */
__attribute__((noinline, cold))
static const struct an_ev *step_boundary(struct an_replay_state *st, const struct an_ev *ev,
                                         struct an_ev *mark)
{
    int step = (ev->flags & AN_F_STEP_NAME) != 0, end = 0;
    /* threads are made by their calls and step ranges, not by other ranges */
    struct an_rp_thread *t = step && ev->kind != AN_RANGE_POP && ev->kind != AN_RANGE_END
                                 ? thread_of(st, ev->tid, ev->ts)
                                 : known_thread(st, ev->tid);
    if (!t)
        return NULL;
    switch (ev->kind) {
    case AN_RANGE_PUSH:
        t->nvtx_depth++;
        if (step)
            t->step_depth = t->nvtx_depth;
        break;
    case AN_RANGE_POP:
        end = t->step_depth && t->nvtx_depth == t->step_depth;
        if (end)
            t->step_depth = 0;
        if (t->nvtx_depth)
            t->nvtx_depth--;
        break;
    case AN_RANGE_START:
        if (step)
            t->step_range = ev->ptr;
        break;
    case AN_RANGE_END:
        end = t->step_range && ev->ptr == t->step_range;
        if (end)
            t->step_range = 0;
        break;
    default:  /* AN_MARK */
        break;
    }
    if (!step && !end)
        return NULL;
    memset(mark, 0, sizeof *mark);
    mark->ts = mark->end = ev->ts;
    mark->tid = ev->tid;
    mark->kind = AN_CALL;
    mark->flags = end ? AN_F_STEP_END : 0;
    return mark;
}

static struct an_rp_stream *other_stream(struct an_replay_state *st, uint64_t id);

static inline struct an_rp_stream *stream_of(struct an_replay_state *st, uint64_t id)
{
    if (st->last_stream && st->streams[st->last_stream - 1].id == id)
        return &st->streams[st->last_stream - 1];  /* (nearly every call: the same one) */
    return other_stream(st, id);
}

__attribute__((noinline))
static struct an_rp_stream *other_stream(struct an_replay_state *st, uint64_t id)
{
    uint64_t *at = gw_map_get(&st->stream_index, id);
    if (at) {
        st->last_stream = (size_t)*at;
        return &st->streams[*at - 1];
    }
    if (st->nstreams == st->streams_cap) {
        size_t cap = st->streams_cap ? st->streams_cap * 2 : 8;
        struct an_rp_stream *grown = realloc(st->streams, cap * sizeof *grown);
        if (!grown)
            return NULL;
        st->streams = grown;
        st->streams_cap = cap;
    }
    if (gw_map_put(&st->stream_index, id, st->nstreams + 1) != 0)
        return NULL;
    struct an_rp_stream *s = &st->streams[st->nstreams++];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->latest_seq = UINT64_MAX;  /* (none ended yet: done_seq's zeros are no seq 0) */
    return s;
}

/* Ring growth for the per-stream queues: returns 0, or -1 when full or out of memory. */
static int ring_room(void **buf, size_t *head, size_t n, size_t *cap, size_t size, size_t max)
{
    if (n < *cap)
        return 0;
    if (*cap >= max)
        return -1;
    size_t ncap = *cap ? *cap * 2 : 16;
    char *grown = malloc(ncap * size);
    if (!grown)
        return -1;
    for (size_t i = 0; i < n; i++)
        memcpy(grown + i * size, (char *)*buf + ((*head + i) & (*cap - 1)) * size, size);
    free(*buf);
    *buf = grown;
    *head = 0;
    *cap = ncap;
    return 0;
}

/*
 * Stream maps (stream_map.h): run_op composes the operations one thread issues in its
 * rhythm into its stream's map instead of moving every world's clock. What reads a
 * stream's g or latest's sim, moves g otherwise, or reads the kernel_end of a device whose
 * kernels the map's stream runs one at a time, settles them first.
 */
static void settle_stream(struct an_replay_state *st, struct an_rp_stream *s)
{
    struct an_rp_map *m = &s->map;
    if (!m->on)
        return;
    struct an_rp_device *dev = m->device ? &st->devices[m->device - 1] : NULL;
    an_rp_map_apply(m, &st->making[m->touched], st->nlive, s->g, dev ? dev->kernel_end : NULL);
    if (dev)
        dev->follower = 0;
    m->on = 0;
}

/* (latest's sim read, or g about to move otherwise than by an operation marked done) */
static void settle_latest(struct an_replay_state *st, struct an_rp_stream *s)
{
    settle_stream(st, s);
    if (s->latest_lazy)
        copy_clocks(s->latest.sim, s->g, st->nlive);
    s->latest_lazy = 0;
}

static void settle_device(struct an_replay_state *st, struct an_rp_device *dev)
{
    if (dev->follower)
        settle_stream(st, &st->streams[dev->follower - 1]);
}

static void settle_streams(struct an_replay_state *st)
{
    for (size_t i = 0; i < st->nstreams; i++)
        settle_latest(st, &st->streams[i]);
}

/* When s's first `upto` operations were done (what an event recorded after them waits
 * for); NULL when there were none, or that was too long ago to be kept. */
static const struct an_rp_done *done_after(struct an_replay_state *st, struct an_rp_stream *s,
                                           uint64_t upto)
{
    if (!upto || s->done_seq[(upto - 1) % DONE_KEEP] != upto - 1)
        return NULL;
    if (s->latest_seq != upto - 1)
        return &s->done[(upto - 1) % DONE_KEEP];
    settle_latest(st, s);
    return &s->latest;
}

/* (latest's sim is g as it stands: copied where read, settle_latest) */
static void mark_done(struct an_replay_state *st, struct an_rp_stream *s, uint64_t seq,
                      int wanted)
{
    s->done_seq[seq % DONE_KEEP] = seq;
    s->latest_seq = seq;
    s->latest.meas = s->g_meas;
    s->latest_lazy = 1;
    if (wanted) {
        settle_latest(st, s);
        s->done[seq % DONE_KEEP] = s->latest;
    }
}

/* An event recorded on s now waits for its latest operation (seq s->issued - 1): kept
 * when that ends (mark_done), or now where it ended already, which no later one has (none
 * is issued yet). One that ran unmarked (a drain's work but its last) is none to wait for,
 * as before. */
static void want_done(struct an_replay_state *st, struct an_rp_stream *s)
{
    if (!s->issued)
        return;
    uint64_t seq = s->issued - 1;
    if (s->done_seq[seq % DONE_KEEP] == seq && s->latest_seq == seq) {
        settle_latest(st, s);
        s->done[seq % DONE_KEEP] = s->latest;
    } else if (s->q_n && s->q[(s->q_head + s->q_n - 1) & (s->q_cap - 1)].seq == seq)
        s->q[(s->q_head + s->q_n - 1) & (s->q_cap - 1)].wanted = 1;
}

static void run_virtual(struct an_replay_state *st, struct an_rp_stream *s,
                        const struct an_ev *drain, int waited, uint64_t upto, int depth);
static int known_chain(struct an_replay_state *st, struct an_rp_stream *s, size_t n,
                       uint64_t from, int waited, const struct an_ev *drain,
                       const uint64_t *other);

/* The barriers operation seq of s passes (they are dropped: later operations follow it on
 * its stream): when the other streams' work they wait for ended, measured (returned) and
 * per world (sim). Host-only, that work is replayed first from what `drain` proved. */
static uint64_t pass_barriers(struct an_replay_state *st, struct an_rp_stream *s, uint64_t seq,
                              uint64_t *sim, const struct an_ev *drain, int waited, int depth)
{
    uint64_t meas = 0;
    memset(sim, 0, st->nlive * sizeof *sim);
    while (s->nbar && s->bar[0].seq <= seq) {
        struct an_rp_barrier b = s->bar[0];
        memmove(s->bar, s->bar + 1, --s->nbar * sizeof *s->bar);
        struct an_rp_stream *o = &st->streams[b.other];
        if (drain && depth < 4)
            run_virtual(st, o, drain, waited, b.upto, depth + 1);
        const struct an_rp_done *d = done_after(st, o, b.upto);
        if (!d)
            continue;
        meas = max64(meas, d->meas);
        for (unsigned w = 0; w < st->nlive; w++)
            sim[w] = max64(sim[w], d->sim[w]);
    }
    return meas;
}

/* A kernel of stream s measured [ts, end): its device, where that has not run two streams'
 * kernels at once so far (replay.h, devices), else NULL. */
static struct an_rp_device *one_at_a_time(struct an_replay_state *st,
                                          const struct an_rp_stream *s, uint64_t ts,
                                          uint64_t end)
{
    struct an_rp_device *dev = s->device ? &st->devices[s->device - 1] : NULL;
    if (!dev || dev->overlapped)
        return NULL;
    /* (1 us: a record's clock against another stream's, not two kernels at once) */
    if (ts + 1000 < dev->kernel_end_meas && dev->kernel_stream != s->id) {
        dev->overlapped = 1;
        return NULL;
    }
    if (end >= dev->kernel_end_meas) {
        dev->kernel_end_meas = end;
        dev->kernel_stream = s->id;
    }
    return dev;
}

/* The kernel just replayed on s, dur[w] long in each world, starts no earlier than the
 * device's latest kernel there ended, whichever stream ran it. */
static void after_device(struct an_replay_state *st, struct an_rp_device *dev,
                         struct an_rp_stream *s, const uint64_t *dur)
{
    settle_device(st, dev);
    for (unsigned w = 0; w < st->nlive; w++) {
        uint64_t start = s->g[w] - dur[w];
        if (dev->kernel_end[w] > start)
            s->g[w] = dev->kernel_end[w] + dur[w];
        dev->kernel_end[w] = s->g[w];
    }
}

/* A record no call issued (its call's host record was lost): its work still held its
 * stream, in every world for as long as measured, and as long after the stream's previous
 * work (its call's lateness is unknown, and kept). */
static void run_orphan(struct an_replay_state *st, struct an_rp_stream *s,
                       const struct an_rp_record *r)
{
    settle_latest(st, s);
    uint64_t dur = r->end > r->ts ? r->end - r->ts : 0;
    uint64_t gap = r->ts > s->g_meas ? r->ts - s->g_meas : 0;
    struct an_rp_device *dev =
        r->kind == AN_GPU_KERNEL ? one_at_a_time(st, s, r->ts, r->end) : NULL;
    uint64_t durs[AN_WORLDS];
    for (unsigned w = 0; w < st->nlive; w++) {
        s->g[w] += gap + dur;
        durs[w] = dur;
    }
    if (dev)
        after_device(st, dev, s, durs);
    if (r->end > s->g_meas)
        s->g_meas = r->end;
    st->unmatched++;
}

/* map_for's map started anew: the one before settled */
__attribute__((noinline))
static struct an_rp_map *map_start(struct an_replay_state *st, struct an_rp_stream *s,
                                   const struct an_rp_op *op, struct an_rp_device *dev,
                                   const struct an_world_set *in, size_t device)
{
    struct an_rp_map *m = &s->map;
    settle_stream(st, s);
    if (dev) {  /* (it starts after the device's latest kernel: from now on, g's) */
        settle_device(st, dev);
        for (unsigned w = 0; w < st->nlive; w++)
            s->g[w] = max64(s->g[w], dev->kernel_end[w]);
    }
    an_rp_map_start(m, in, st->nlive, op->from, op->touched, device, op->sim);
    if (dev)
        dev->follower = (size_t)(s - st->streams) + 1;
    return m;
}

/* The map run_op's operation op composes into: s's, extended, or started where another
 * issuer's or another device's operations were composed so far (stream maps). */
static inline struct an_rp_map *map_for(struct an_replay_state *st, struct an_rp_stream *s,
                                        const struct an_rp_op *op, struct an_rp_device *dev,
                                        const struct an_world_set *in)
{
    struct an_rp_map *m = &s->map;
    size_t device = dev ? (size_t)(dev - st->devices) + 1 : 0;
    if (m->on && m->from == op->from && m->touched == op->touched && m->device == device)
        return m;
    return map_start(st, s, op, dev, in, device);
}

/* A copy composed into its map: its delay and length by class (run_op's arrays). */
static void map_copy(struct an_replay_state *st, struct an_rp_stream *s, const struct an_rp_op *op,
                     struct an_rp_device *dev, const uint64_t *off, const uint64_t *lat_adj,
                     const uint64_t *dur_in)
{
    const struct an_world_set *in = &st->making[op->touched];
    an_rp_map_compose(map_for(st, s, op, dev, in), in, off, lat_adj, dur_in);
}

/* Other work composed into its map: every world's length dur, its delay lat plus op's
 * lazy offset, but where a world's group removes launches (cuda_graphs) less `back`
 * (run_op; stream_map.h, an_rp_map_compose_work). */
static void map_work(struct an_replay_state *st, struct an_rp_stream *s, const struct an_rp_op *op,
                     struct an_rp_device *dev, const struct an_world_set *in, uint64_t lat,
                     uint64_t back, uint64_t dur)
{
    struct an_rp_map *m = map_for(st, s, op, dev, in);
    uint64_t minus[AN_RP_REMOVERS + 1] = {0}, base = lat;
    if (op->lazy.on) {
        base += op->lazy.base;
        memcpy(minus, op->lazy.removed, sizeof op->lazy.removed);
    }
    minus[AN_RP_REMOVERS] = back;
    an_rp_map_compose_work(m, in, base, minus, dur);
}

/* One GPU operation, its call known: each what-if's stream clock moves past it. */
static void run_op(struct an_replay_state *st, struct an_rp_stream *s, const struct an_rp_op *op,
                   uint64_t ts, uint64_t end, int kernel)
{
    uint64_t dur = end > ts ? end - ts : 0;
    uint64_t lat = ts > op->call.ts ? ts - op->call.ts : 0;
    uint64_t other[AN_WORLDS];
    int barred = s->nbar != 0;
    uint64_t other_meas = barred ? pass_barriers(st, s, op->seq, other, NULL, 0, 0) : 0;
    /* an operation that started after its stream's previous one ended waited for its call:
     * the delay from the call is the launch latency; a queued one started when the stream
     * (or the other stream it waited for) freed up, and at most the latency seen last */
    if ((ts > s->g_meas || !s->g_meas) && other_meas <= s->g_meas)
        s->latency = lat;
    else if (lat > s->latency)
        lat = s->latency;
    const struct an_world_set *in = &st->making[op->touched];
    if (!barred && op->from && op->call.kind != AN_COPY) {  /* (nearly every record) */
        struct an_rp_device *dev = kernel ? one_at_a_time(st, s, ts, end) : NULL;
        uint64_t back = an_wi_kernel_launch(&op->call) ? lat : 0;
        map_work(st, s, op, dev, in, lat, back, dur);
        if (end > s->g_meas)
            s->g_meas = end;
        mark_done(st, s, op->seq, op->wanted);
        return;
    }
    /* each world's delay and length: as measured, but in the worlds making a change that
     * touches the call (`in`): there its delay moves by lat_adj (modulo 2^64) and it lasts
     * dur_in, the same for the worlds of each group (index 0: the others) */
    uint64_t lat_adj[AN_WORLDS + 1], dur_in[AN_WORLDS + 1];
    lat_adj[0] = 0;
    dur_in[0] = dur;
    if (op->call.kind != AN_COPY) {  /* (whatif.h: a change alters a copy's length and
                                      * staging alone; a graph runs a kernel back to back) */
        uint64_t back = an_wi_kernel_launch(&op->call) ? lat : 0;
        for (unsigned g = 0; g < in->ngroups; g++) {
            dur_in[g + 1] = dur;
            lat_adj[g + 1] = in->group_changes[g] & AN_WI_BIT(AN_WI_GRAPHS) ? 0 - back : 0;
        }
    } else {
        for (unsigned g = 0; g < in->ngroups; g++) {
            unsigned c = in->group_changes[g];
            int back_to_back = an_wi_back_to_back(c, &op->call);
            /* (a checkpoint read saved in the background is copied into pinned memory) */
            if (op->ckpt && (c & AN_WI_BIT(AN_WI_BACKGROUND)))
                c |= AN_WI_BIT(AN_WI_PINNED_ASYNC);
            dur_in[g + 1] = an_wi_op_ns(st, c, &op->call, dur, op->gathered);
            lat_adj[g + 1] = an_wi_staged_ns(st, c, &op->call, op->gathered) -
                             (back_to_back ? lat : 0);
        }
    }
    /* it starts after the other streams' work it waits for, its call's start plus its
     * delay, and its stream's previous operation (and the device's latest kernel, where it
     * runs them one at a time); one loop over the worlds per case, where it is not
     * composed into the stream's map. The call's start is sim plus op's lazy offset, which
     * is one of four by the kinds of time a world's changes remove (remover_set) */
    uint64_t off[1u << AN_RP_REMOVERS];
    for (unsigned set = 0; set < 1u << AN_RP_REMOVERS; set++)
        off[set] = lat + (op->lazy.on ? lazy_offset(&op->lazy, set) : 0);
    struct an_rp_device *dev = kernel ? one_at_a_time(st, s, ts, end) : NULL;
    if (!barred && op->from) {
        map_copy(st, s, op, dev, off, lat_adj, dur_in);
        if (end > s->g_meas)
            s->g_meas = end;
        mark_done(st, s, op->seq, op->wanted);
        return;
    }
    settle_stream(st, s);
    if (dev)
        settle_device(st, dev);
    if (barred)
        for (unsigned w = 0; w < st->nlive; w++)
            s->g[w] = max64(s->g[w], other[w]);
    if (dev)
        for (unsigned w = 0; w < st->nlive; w++) {
            unsigned g = in->group_of[w];
            uint64_t l = off[st->remover_set[w]] + lat_adj[g], d = dur_in[g];
            uint64_t start = max64(max64(s->g[w], op->sim[w] + l), dev->kernel_end[w]);
            s->g[w] = dev->kernel_end[w] = start + d;
        }
    else
        for (unsigned w = 0; w < st->nlive; w++) {
            unsigned g = in->group_of[w];
            uint64_t l = off[st->remover_set[w]] + lat_adj[g], d = dur_in[g];
            s->g[w] = max64(s->g[w], op->sim[w] + l) + d;
        }
    if (end > s->g_meas)
        s->g_meas = end;
    mark_done(st, s, op->seq, op->wanted);
}

/* Whether r is another record of the call its stream matched last (a graph launch's records
 * share its correlation id). */
static int same_call(const struct an_rp_stream *s, const struct an_rp_record *r)
{
    return s->have_cur && r->corr && r->corr == s->last_corr;
}

/* Whether a call could have issued record r: a graph's records come from graph launches
 * only, a kernel's from kernel launches, a copy's from copies, a memset's from memsets. */
static int could_issue(const struct an_ev *call, const struct an_rp_record *r)
{
    if (r->graph || an_is_graph_launch(call))
        return r->graph && an_is_graph_launch(call);
    switch (r->kind) {
    case AN_GPU_KERNEL: return call->kind == AN_LAUNCH;
    case AN_GPU_COPY: return call->kind == AN_COPY;
    default: return call->kind == AN_SET;
    }
}

/* Records are matched to the calls of their stream in issue order. A record passes over
 * the calls ahead of it that could not have issued it. Before a graph's record those are
 * launches captured into the graph, which ran nothing (the trace does not say they were
 * captured). Otherwise they are calls whose records never came (lost, or never made): their
 * work ran before the record's, one virtual operation that kept the GPU busy until the
 * record started where that was later than its call handed it over, of unknown length
 * (nil) where not. With no call in the queue that could have issued it, the record waits
 * for the next one issued. Returns whether r was matched. */
static int match_record(struct an_replay_state *st, struct an_rp_stream *s,
                        const struct an_rp_record *r)
{
    if (!same_call(s, r)) {
        size_t n = 0;
        while (n < s->q_n && !could_issue(&s->q[(s->q_head + n) & (s->q_cap - 1)].call, r))
            n++;
        if (n == s->q_n)
            return 0;
        const struct an_rp_op *next = &s->q[(s->q_head + n) & (s->q_cap - 1)];
        if (n && !r->graph) {
            struct an_ev until = {.ts = r->ts, .end = r->ts};
            run_virtual(st, s, &until, r->ts > next->issued_meas + st->th.drain_slack_ns,
                        next->seq, 0);
        } else {
            s->q_head = (s->q_head + n) & (s->q_cap - 1);
            s->q_n -= n;
            st->virtual_ops += n;
        }
        s->cur_slot = s->q_head;  /* (copied out only before its slot is used again) */
        s->cur_queued = 1;
        s->q_head = (s->q_head + 1) & (s->q_cap - 1);
        s->q_n--;
        s->have_cur = 1;
        s->last_corr = r->corr;
    }
    st->matched++;
    run_op(st, s, cur_op(s), r->ts, r->end, r->kind == AN_GPU_KERNEL);
    return 1;
}

/* The records of s that started by `upto` meet their calls. A record waits until the
 * host's replay has reached its start: a drain that returned before it started proved
 * the work queued ahead of it done, and that work, whose record never came, must not take
 * this one (with records lost, every later record would meet the call before its own).
 * A record that no call replayed so far could have issued, when every call made before it
 * started has been replayed (host and GPU clocks agree to drain_slack_ns), has no call in
 * the trace (its call's host record was lost): it is left unmatched rather than held at
 * the head of its stream's records, where it would hold back the ones behind it. */
static void match_pending(struct an_replay_state *st, struct an_rp_stream *s, uint64_t upto)
{
    while (s->p_n && s->pend[s->p_head].ts <= upto) {
        const struct an_rp_record *r = &s->pend[s->p_head];
        int matched = (s->q_n || same_call(s, r)) && match_record(st, s, r);
        if (!matched && r->ts + st->th.drain_slack_ns >= st->replayed_to)
            return;
        if (!matched)
            run_orphan(st, s, r);
        s->p_head = (s->p_head + 1) & (s->p_cap - 1);
        s->p_n--;
        st->npending--;
    }
}

static void match_streams(struct an_replay_state *st, uint64_t upto);

/* Whether s's oldest waiting record started by upto: match_pending's first test, made
 * before the call (a launch's, nearly always false: its record has not started by its end) */
static inline int head_due(const struct an_rp_stream *s, uint64_t upto)
{
    return s->p_n && s->pend[s->p_head].ts <= upto;
}

static inline void match_all_pending(struct an_replay_state *st, uint64_t upto)
{
    if (upto > st->horizon)
        st->horizon = upto;
    if (st->npending)
        match_streams(st, upto);
}

static void match_streams(struct an_replay_state *st, uint64_t upto)
{
    for (size_t i = 0; st->npending && i < st->nstreams; i++)
        if (head_due(&st->streams[i], upto))
            match_pending(st, &st->streams[i], upto);
}

/* A sampled timeline's kernel record: what kernels of its name take (the sum in
 * the high bits, the count in the low 20; both halved when either would overflow, keeping
 * the mean). */
static uint64_t kernel_named(struct an_replay_state *st, uint64_t shape)
{
    const uint64_t *cached = gw_map_get(&st->name_of_shape, shape);
    if (cached)
        return *cached;
    const char *name = st->shape_name ? st->shape_name(st->shape_name_user, 1, shape) : NULL;
    if (!name || !*name)
        return 0;  /* (not cached: the names may come later) */
    uint64_t h = 14695981039346656037ull;  /* FNV-1a */
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ull;
    h |= 1;
    gw_map_put(&st->name_of_shape, shape, h);
    return h;
}

static void learn_kernel(struct an_replay_state *st, uint64_t shape, uint64_t ns)
{
    uint64_t name = kernel_named(st, shape);
    if (!name)
        return;
    uint64_t *at = gw_map_get(&st->kernel_time, name);
    uint64_t sum = at ? *at >> 20 : 0, n = at ? *at & ((1u << 20) - 1) : 0;
    if (ns > (1ull << 40))
        return;
    if (n + 1 >= (1u << 20) || sum + ns >= (1ull << 43)) {
        sum /= 2;
        n /= 2;
    }
    sum += ns;
    n++;
    if (at)
        *at = sum << 20 | n;
    else
        gw_map_put(&st->kernel_time, name, sum << 20 | n);
}

/* The mean time of op's kernel in a sampled timeline's windows; 0 unknown (not a kernel's
 * launch, or a kernel no window recorded). */
static uint64_t kernel_time(struct an_replay_state *st, const struct an_rp_op *op)
{
    if (op->call.kind != AN_LAUNCH || !(op->call.flags & AN_F_KERNEL) || !op->call.key)
        return 0;
    uint64_t name = kernel_named(st, op->call.key);
    const uint64_t *at = name ? gw_map_get(&st->kernel_time, name) : NULL;
    if (!at || !(*at & ((1u << 20) - 1)))
        return 0;
    return (*at >> 20) / (*at & ((1u << 20) - 1));
}

void an_replay_gpu(struct an_replay_state *st, const struct an_ev *ev)
{
    /* (a timeline with gaps is replayed from the host's record: its records would be
     * matched by stream order to calls whose work went unrecorded) */
    if (!st->expect_gpu) {
        if (ev->kind == AN_GPU_KERNEL && ev->key && ev->end > ev->ts)
            learn_kernel(st, ev->key, ev->end - ev->ts);
        return;
    }
    if (ev->kind == AN_GPU_LOST)
        return;
    if (ev->ts > st->gpu_seen)
        st->gpu_seen = ev->ts;
    if (ev->kind == AN_GPU_COPY && ev->dir == GW_COPY_HTOD && ev->host_kind == GW_HOST_PINNED &&
        ev->bytes >= (256u << 10) && ev->end > ev->ts) {
        uint64_t bw = (uint64_t)((double)ev->bytes * 1e9 / (double)(ev->end - ev->ts));
        if (bw > st->best_pinned_bw)
            st->best_pinned_bw = bw;
    }
    struct an_rp_stream *s = stream_of(st, ev->stream);
    if (!s)
        return;
    if (!s->device && ev->tid < AN_RP_DEVICES)
        s->device = ev->tid + 1;
    struct an_rp_record r = {ev->ts, ev->end, ev->ptr, (ev->flags & AN_F_GRAPH_NODE) != 0,
                             ev->kind};
    if (!s->p_n && r.ts <= st->horizon && (s->q_n || same_call(s, &r)) &&
        match_record(st, s, &r))
        return;
    if (s->p_n == s->p_cap && ring_room((void **)&s->pend, &s->p_head, s->p_n, &s->p_cap,
                                        sizeof *s->pend, PENDING_MAX) != 0) {
        run_orphan(st, s, &s->pend[s->p_head]);  /* never matched: the oldest goes */
        s->p_head = (s->p_head + 1) & (s->p_cap - 1);
        s->p_n--;
        st->npending--;
    }
    s->pend[(s->p_head + s->p_n) & (s->p_cap - 1)] = r;
    s->p_n++;
    st->npending++;
}

/* How many of s's queued operations come before seq upto. Their seqs rise (not always by
 * one: a host-only blocking copy takes a seq and is replayed at once), and a drain takes
 * them all, mostly: the last one tells, else a binary search. */
static size_t ops_before(const struct an_rp_stream *s, uint64_t upto)
{
    size_t lo = 0, hi = s->q_n;  /* (the first hi ops: some may be before upto) */
    if (!hi || s->q[(s->q_head + hi - 1) & (s->q_cap - 1)].seq < upto)
        return hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->q[(s->q_head + mid) & (s->q_cap - 1)].seq < upto)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * Work issued on s that no GPU record was matched to, drained by `drain` (host-only
 * traces, lost records): one virtual operation. When the drain waited, the GPU was busy
 * until it returned, taken as busy since the first of that work was issued (or the stream's
 * previous work ended): host-only, the GPU's work is its upper bound, and savings on the
 * host's side lower bounds. When the drain did not wait, the work's length is unknown and
 * taken as nil.
 */
static void run_virtual(struct an_replay_state *st, struct an_rp_stream *s,
                        const struct an_ev *drain, int waited, uint64_t upto, int depth)
{
    size_t n = ops_before(s, upto);
    if (!n)
        return;
    settle_stream(st, s);
    /* work on other streams it waited for ran first: its time is not this work's (that
     * replay may come back to this stream: count again after it) */
    uint64_t other[AN_WORLDS];
    uint64_t other_meas = pass_barriers(st, s, s->q[(s->q_head + n - 1) & (s->q_cap - 1)].seq,
                                        other, drain, waited, depth);
    n = ops_before(s, upto);
    if (!n)
        return;
    struct an_rp_op *first = &s->q[s->q_head];
    struct an_rp_op *last = &s->q[(s->q_head + n - 1) & (s->q_cap - 1)];
    /* the work starts once its first call has handed it over (a call's own time, a copy's
     * staging, is host time, not the GPU's) */
    uint64_t from = max64(max64(first->issued_meas, s->g_meas), other_meas);
    if (!st->kernel_time.count || !known_chain(st, s, n, from, waited, drain, other)) {
        uint64_t work = waited && drain->end > from ? drain->end - from : 0;
        if (!work) {
            st->drained_unknown = 1;
            st->unproven_ops += n;
            if (!st->expect_gpu && !st->kernel_time.count)
                st->unlearnt_ops += n;
        }
        struct an_rp_op *from_op = work ? first : last;
        /* at its least, the work began when its last call had issued it, or a later one
         * on another stream the drain waited for */
        uint64_t from_least = max64(max64(from, last->issued_meas), st->drain_issued);
        uint64_t least = work && drain->end > from_least ? drain->end - from_least : 0;
        settle_op(st, first);
        settle_op(st, last);
        for (unsigned w = 0; w < st->nlive; w++) {
            if (st->changes[w] & AN_WI_BIT(AN_WI_LEAST))
                s->g[w] = max64(max64(max64(s->g[w], other[w]), st->drain_issued_sim[w]),
                                max64(issued_sim(st, first, w), issued_sim(st, last, w))) +
                          least;
            else
                s->g[w] = max64(max64(s->g[w], other[w]), issued_sim(st, from_op, w)) + work;
        }
        if (from + work > s->g_meas)
            s->g_meas = from + work;
    }
    mark_done(st, s, last->seq, last->wanted);
    st->virtual_ops += n;
    s->q_head = (s->q_head + n) & (s->q_cap - 1);
    s->q_n -= n;
    if (!s->q_n)
        s->have_cur = 0;
}

/*
 * A sampled timeline, replayed from the host's calls: the n operations run_virtual takes
 * are kernels whose shapes the windows recorded, each taking what its shape took there on
 * average, in stream order after its call issued it. Where the drain waited, what the
 * chain leaves before the drain's end is work nothing recorded (a kernel longer this
 * time), run last; every operation must be such a kernel. Where it did not wait, kernels
 * no window recorded take nil, as all did before (a read that returns within a kernel of
 * the last of 60 launches proves nothing of how long they ran, and nil made a graph
 * "save" the launches' whole time, 144 ms where it gained 54: issue 36 E12); a chain that
 * would end after the drain did is not this run's, and not taken. Replayed per world as
 * three bounds: the first operation's start plus all of them, the start of the one after
 * the GPU's last idle plus what followed, the last one's start plus its own. Returns 0
 * where the chain is not taken (run_virtual's bounds then).
 */
static int known_chain(struct an_replay_state *st, struct an_rp_stream *s, size_t n,
                       uint64_t from, int waited, const struct an_ev *drain,
                       const uint64_t *other)
{
    uint64_t end = from, sum = 0, d_last = 0, bind_from = from;
    size_t bind = 0, known = 0;
    for (size_t i = 0; i < n; i++) {
        const struct an_rp_op *op = &s->q[(s->q_head + i) & (s->q_cap - 1)];
        uint64_t d = kernel_time(st, op);
        if (!d && waited)
            return 0;
        known += d > 0;
        uint64_t at = max64(op->issued_meas, from);
        if (at >= end) {  /* (the GPU idle before it: the chain starts again here) */
            end = at;
            bind = i;
            bind_from = at;
        }
        end += d;
        sum += d;
        d_last = d;
    }
    /* (the records' clock and the host's agree within drain_slack_ns: a chain that ends
     * that little after the drain ends with it) */
    if (!known || end > drain->end + st->th.drain_slack_ns)
        return 0;
    if (end > drain->end) {
        uint64_t over = end - drain->end;
        sum = sum > over ? sum - over : 0;
        d_last = d_last > over ? d_last - over : 0;
        end = drain->end;
    }
    uint64_t unrecorded = waited ? drain->end - end : 0;
    struct an_rp_op *first = &s->q[s->q_head];
    struct an_rp_op *binding = &s->q[(s->q_head + bind) & (s->q_cap - 1)];
    struct an_rp_op *last = &s->q[(s->q_head + n - 1) & (s->q_cap - 1)];
    settle_op(st, first);
    settle_op(st, binding);
    settle_op(st, last);
    uint64_t after_bind = end > bind_from ? end - bind_from : 0;
    for (unsigned w = 0; w < st->nlive; w++) {
        uint64_t start = max64(max64(s->g[w], other[w]), issued_sim(st, first, w));
        uint64_t e = max64(start + sum, max64(start, issued_sim(st, binding, w)) + after_bind);
        s->g[w] = max64(e, issued_sim(st, last, w) + d_last) + unrecorded;
    }
    if (end + unrecorded > s->g_meas)
        s->g_meas = end + unrecorded;
    if (!waited)
        st->drained_unknown = 1;
    return 1;
}

/* Whether the copy ev on s drains work issued before it whose length nothing proved: its
 * stream's queue, or any stream's where it drains them all. */
static int work_pending(const struct an_replay_state *st, const struct an_rp_stream *s,
                        const struct an_ev *ev)
{
    if (!(ev->flags & AN_F_ALL_STREAMS))
        return s->q_n != 0;
    for (size_t i = 0; i < st->nstreams; i++)
        if (st->streams[i].q_n)
            return 1;
    return 0;
}

/* A download after work of unknown length (every one drains it), its move taken as `move`:
 * its wait and its move were told apart by the fastest rate so far, which waits may have
 * slowed too. The move is at least what the fastest copy that waited for nothing moved in
 * the time, else what the host's memcpy does (the driver's staging copy). What pinning it
 * gives back beyond that least move rests on the kernels having been short (replay.h,
 * pinned_unknown_ns; rule_pageable_h2d.c says it unproven). */
static void move_unknown(struct an_replay_state *st, const struct an_ev *ev,
                         const struct an_rp_op *op, uint64_t move)
{
    if (!st->best_clean_bps && !st->host_copy_bps)
        return;
    double bps = st->best_clean_bps ? st->best_clean_bps : (double)st->host_copy_bps;
    uint64_t least = (uint64_t)((double)ev->bytes * 1e9 / bps);
    unsigned pin = AN_WI_BIT(AN_WI_PINNED_ASYNC);
    if (move > least)
        st->pinned_unknown_ns += (move - an_wi_op_ns(st, pin, ev, move, op->gathered)) -
                                 (least - an_wi_op_ns(st, pin, ev, least, op->gathered));
}

/* A checkpoint read's move at its least: by the fastest rate that moved bytes while
 * waiting for nothing, or the host's memcpy rate where that is faster (the driver's
 * staging copy of a pageable read is at least that) */
static void note_ckpt_read(struct an_replay_state *st, const struct an_ev *ev)
{
    double bps = st->best_clean_bps > (double)st->host_copy_bps ? st->best_clean_bps
                                                                 : (double)st->host_copy_bps;
    if (bps > 0)
        st->ckpt_least_ns += (uint64_t)((double)ev->bytes * 1e9 / bps);
}

/* Host-only, a blocking upload: the copy is in stream order, so the call waited for its
 * stream's earlier work and then moved its bytes. The move takes what the fastest blocking
 * upload of the run so far took per byte (of 4 KiB or more; a small one's fixed cost makes
 * its rate low, its move long: the wait is not overstated); the rest of the call was the
 * wait, and proves the earlier work done by then. With no rate known yet, the whole call
 * is the move. Returns the move's length. */
static uint64_t host_only_upload(struct an_replay_state *st, struct an_rp_stream *s,
                                 const struct an_ev *ev, const struct an_rp_op *op)
{
    uint64_t dur = ev->end - ev->ts;
    int pending = work_pending(st, s, ev);
    if (ev->bytes >= (4u << 10) && dur) {
        double bps = (double)ev->bytes * 1e9 / (double)dur;
        if (bps > st->best_blocking_bps)
            st->best_blocking_bps = bps;
        if (!pending && bps > st->best_clean_bps)
            st->best_clean_bps = bps;
    }
    uint64_t move = dur;
    if (st->best_blocking_bps > 0) {
        double at_best = (double)ev->bytes * 1e9 / st->best_blocking_bps;
        if (at_best < (double)dur)
            move = (uint64_t)at_best;
    }
    if (ev->dir == GW_COPY_DTOH && pending)
        move_unknown(st, ev, op, move);
    struct an_ev waited = *ev;
    waited.end = ev->end - move;
    run_virtual(st, s, &waited, dur - move > st->th.drain_slack_ns, op->seq, 0);
    run_op(st, s, op, ev->end - move, ev->end, 0);
    st->matched++;
    return move;
}

/* (out of line: its operation on the stack made issue's frame, which runs for every
 * launch, costlier) */
__attribute__((noinline))
static uint64_t issue_host_only_copy(struct an_replay_state *st, struct an_rp_stream *s,
                                     const struct an_ev *ev, const uint64_t *h,
                                     struct an_rp_lazy lazy, int waits, unsigned touched)
{
    struct an_rp_op op = {.call = *ev, .seq = s->issued++, .issued_meas = ev->ts,
                          .touched = touched, .waits = waits, .ckpt = st->ckpt_read,
                          .gathered = st->gathered, .lazy = lazy};
    copy_clocks(op.sim, h, st->nlive);
    return host_only_upload(st, s, ev, &op);
}

/* s's queue is full: grown, or where it holds QUEUE_MAX already, emptied of what was never
 * matched so far. Returns 1 where no room could be made. */
__attribute__((noinline))
static int queue_full(struct an_replay_state *st, struct an_rp_stream *s, const struct an_ev *ev)
{
    cur_out(s);  /* (the ring moves) */
    if (ring_room((void **)&s->q, &s->q_head, s->q_n, &s->q_cap, sizeof *s->q, QUEUE_MAX) == 0)
        return 0;
    run_virtual(st, s, ev, 0, UINT64_MAX, 0);  /* never matched so far: drop what waits */
    return ring_room((void **)&s->q, &s->q_head, s->q_n, &s->q_cap, sizeof *s->q,
                     QUEUE_MAX) != 0;
}

/* h, lazy: the issuing thread's clocks, at ev's start in each world (its lazy clocks
 * passed by value: copied whole from the thread just after their fields were moved, the
 * copy's wide loads stalled on the narrow stores, half a launch's replay). Returns the part
 * of ev's own time that moved bytes where host-only told it from its wait
 * (host_only_upload), else 0. */
static inline uint64_t issue(struct an_replay_state *st, const struct an_ev *ev,
                             const uint64_t *h, struct an_rp_lazy lazy, int waits,
                             unsigned touched, uint64_t from)
{
    struct an_rp_stream *s = stream_of(st, ev->stream);
    if (!s)
        return 0;
    /* (a bulk download into pageable memory too: its wait and its move are told apart the
     * same way, so that pinning it has a move to shorten; whatif.c, pageable_download) */
    if (!st->expect_gpu && ev->kind == AN_COPY && waits &&
        (!(ev->flags & AN_F_DRAINS) ||
         (ev->dir == GW_COPY_DTOH && ev->host_kind == GW_HOST_PAGEABLE &&
          ev->bytes >= (64u << 10))))
        return issue_host_only_copy(st, s, ev, h, lazy, waits, touched);
    if (s->q_n == s->q_cap && queue_full(st, s, ev))
        return 0;
    size_t slot = (s->q_head + s->q_n) & (s->q_cap - 1);
    if (s->cur_queued && slot == s->cur_slot)
        cur_out(s);
    struct an_rp_op *op = &s->q[slot];  /* (in place) */
    op->call = *ev;
    op->seq = s->issued++;
    op->issued_meas = waits ? ev->ts : ev->end;
    op->touched = touched;
    op->waits = waits;
    op->ckpt = st->ckpt_read;
    op->wanted = 0;
    op->gathered = st->gathered;
    op->from = from;
    op->lazy = lazy;
    copy_clocks(op->sim, h, st->nlive);
    s->q_n++;
    if (head_due(s, ev->end))
        match_pending(st, s, ev->end);
    return 0;
}

static int is_stream_wait(const struct an_ev *ev)
{
    return ev->kind == AN_CALL && !(ev->flags & AN_F_ERROR) &&
           (ev->api == GW_API_cuStreamWaitEvent || ev->api == GW_API_cuStreamWaitEvent_ptsz);
}

/* cuStreamWaitEvent: what the stream issues from now on runs after what the event's stream
 * held when the event was recorded (a cross-stream edge). */
static void add_barrier(struct an_replay_state *st, const struct an_ev *ev)
{
    uint64_t *at = gw_map_get(&st->event_at, ev->key);
    struct an_rp_stream *s = stream_of(st, ev->stream);
    if (!at || !s || (size_t)(*at >> 40) == (size_t)(s - st->streams))
        return;
    if (s->nbar == BARRIERS)  /* (more pending than that: the oldest is dropped) */
        memmove(s->bar, s->bar + 1, --s->nbar * sizeof *s->bar);
    s->bar[s->nbar++] = (struct an_rp_barrier){s->issued, *at & ((1ull << 40) - 1),
                                               (size_t)(*at >> 40)};
}

static int is_event_record(const struct an_ev *ev)
{
    return ev->kind == AN_CALL && (ev->api == GW_API_cuEventRecord ||
                                   ev->api == GW_API_cuEventRecord_ptsz);
}

/* An event sync waits for what its stream held when the event was recorded: returns when
 * that was done, measured, and sets each what-if's replayed time. */
/* An event sync whose event's stream has had work issued since the record: it waits for
 * older work, not for the queue to drain (replay.h, run_ahead_bound). */
static int event_behind(const struct an_replay_state *st, const struct an_ev *ev)
{
    if (ev->kind != AN_SYNC || ev->api != GW_API_cuEventSynchronize)
        return 0;
    uint64_t *at = gw_map_get(&st->event_at, ev->key);
    if (!at || (*at >> 40) >= st->nstreams)
        return 0;
    return st->streams[*at >> 40].issued > (*at & ((1ull << 40) - 1));
}

static uint64_t event_drained(struct an_replay_state *st, const struct an_ev *ev, int waited_long,
                              uint64_t *ready_sim)
{
    uint64_t *at = gw_map_get(&st->event_at, ev->key);
    if (!at)
        return 0;
    struct an_rp_stream *s = &st->streams[*at >> 40];
    uint64_t upto = *at & ((1ull << 40) - 1);
    run_virtual(st, s, ev, waited_long, upto, 0);
    const struct an_rp_done *d = done_after(st, s, upto);
    if (!d)
        return 0;
    memcpy(ready_sim, d->sim, st->nlive * sizeof *ready_sim);
    return d->meas;
}

/* The streams a waiting call waited for: its own, all (context syncs, synchronous copies,
 * frees), or an event's. Returns the measured time the GPU side was done, and sets each
 * what-if's replayed one. */
static uint64_t drained(struct an_replay_state *st, const struct an_ev *ev, int waited_long,
                        uint64_t *ready_sim)
{
    uint64_t ready = 0;
    memset(ready_sim, 0, st->nlive * sizeof *ready_sim);
    if (ev->kind == AN_SYNC && ev->key)
        return event_drained(st, ev, waited_long, ready_sim);
    /* at their least, the work on every stream waited for began with the latest issued:
     * the stream that ended last may be any of them (AN_WI_LEAST; 0 outside a drain) */
    int least = (st->active & AN_WI_BIT(AN_WI_LEAST)) != 0;
    for (size_t i = 0; least && i < st->nstreams; i++) {
        struct an_rp_stream *s = &st->streams[i];
        if (!s->q_n || (!(ev->flags & AN_F_ALL_STREAMS) && s->id != ev->stream))
            continue;
        struct an_rp_op *last = &s->q[(s->q_head + s->q_n - 1) & (s->q_cap - 1)];
        settle_op(st, last);
        st->drain_issued = max64(st->drain_issued, last->issued_meas);
        for (unsigned w = 0; w < st->nlive; w++)
            st->drain_issued_sim[w] = max64(st->drain_issued_sim[w], issued_sim(st, last, w));
    }
    for (size_t i = 0; i < st->nstreams; i++) {
        struct an_rp_stream *s = &st->streams[i];
        if (!(ev->flags & AN_F_ALL_STREAMS) && s->id != ev->stream)
            continue;
        run_virtual(st, s, ev, waited_long, UINT64_MAX, 0);
        settle_stream(st, s);
        ready = max64(ready, s->g_meas);
        for (unsigned w = 0; w < st->nlive; w++)
            ready_sim[w] = max64(ready_sim[w], s->g[w]);
    }
    if (least) {
        st->drain_issued = 0;
        memset(st->drain_issued_sim, 0, st->nlive * sizeof *st->drain_issued_sim);
    }
    return ready;
}

/* The loop's iterations counted three ways (an_rp_thread), the most of them; with
 * in_progress, the one in progress too where it launched work, each way as it will be
 * counted at its end: what a pause comes after (pause_every_min). A checkpoint read
 * between a step's kernels and its end comes after that step: one every 20 steps came
 * after 19 ended, and was no checkpoint under pause_every_min 20. */
static uint32_t iterations_counted(const struct an_rp_thread *t, int in_progress)
{
    int launched = in_progress && (t->launched_since_wait || t->launched_since_upload);
    uint32_t waits = t->waits_after_work + (in_progress && t->launched_since_wait);
    uint32_t uploads = t->uploads_after_work + (in_progress && t->launched_since_upload);
    uint32_t steps = t->steps_ended + ((t->step_depth || t->step_range) && launched);
    uint32_t most = waits > uploads ? waits : uploads;
    return steps > most ? steps : most;
}

static uint32_t loop_iterations(const struct an_rp_thread *t)
{
    return iterations_counted(t, 0);
}

static uint32_t iterations_run(const struct an_rp_thread *t)
{
    return iterations_counted(t, 1);
}

/* Whether ev is a download into pageable memory that the thread made none of its size
 * (within a power of two either way) in the pause_every_min iterations of its loop before:
 * the loop's state read every so many steps (a checkpoint's torch.save, an evaluation's
 * metrics), not the tensor it reads every step or few, which the pinned change edits (the
 * user allocates its host copy once and fills it each step). A first download of its size
 * is rare only where the loop ran pause_every_min iterations before it. Notes ev's. */
static int rare_download(const struct an_replay_state *st, struct an_rp_thread *t,
                         const struct an_ev *ev)
{
    if (ev->kind != AN_COPY || ev->dir != GW_COPY_DTOH || ev->host_kind != GW_HOST_PAGEABLE ||
        !ev->bytes)
        return 0;
    uint32_t now = t->iterations_before + iterations_run(t) + 1;
    unsigned size = 63u - (unsigned)__builtin_clzll(ev->bytes);
    int rare = now > st->th.pause_every_min;  /* (fewer iterations before: not known) */
    for (unsigned s = size ? size - 1 : 0; s <= size + 1 && s < 64; s++)
        if (t->download_iter[s] && now - t->download_iter[s] < st->th.pause_every_min)
            rare = 0;
    t->download_iter[size] = now;
    return rare;
}


/* Whether the stretch of `gap` before the thread's next event is a pause of its loop
 * (st->pause, whatif.c): if so, a read of the GPU's results just before it keeps its wait
 * in every world (the pause used what it read). A step range's end (a mark) passes the
 * read on to the stretch after it. */
static void loop_pause(struct an_replay_state *st, struct an_rp_thread *t, uint64_t gap,
                       int mark)
{
    uint32_t iterations = iterations_run(t);
    if (loop_iterations(t))
        t->looping = 1;
    st->pause = an_wi_loop_pause(st, gap, iterations, t->after_readback, t->readback_stretches);
    if (!st->pause && t->after_readback && gap >= st->th.input_gap_ns && t->looping)
        t->readback_stretches++;
    int long_stretch = gap >= st->th.pause_min_ns && t->looping;
    st->long_rhythm = long_stretch && !st->pause && t->long_seen;
    t->long_seen |= long_stretch;
    /* a checkpoint read the background worlds took off the thread: followed by a pause,
     * the background thread does the pause once the read is done; followed by none, the
     * thread waited for it after all */
    if (t->holding) {
        settle(st, &t->lazy, t->h);
        for (unsigned w = 0; w < st->nlive; w++) {
            int bg = (t->bg_held >> w) & 1u;
            if (bg && st->pause)
                st->bg_from[w] = t->held[w];
            else if (st->pause || (bg && !mark))
                t->h[w] = max64(t->h[w], t->held[w]);
        }
    }
    if (!mark || st->pause) {
        t->holding = 0;
        t->bg_held = 0;
    }
    if (st->pause) {
        st->pauses++;
        st->pause_ns += gap;
        st->pause_cycles += iterations;
        st->readback_pauses += gap < st->th.pause_min_ns;
        if (!st->shortest_pause_ns || gap < st->shortest_pause_ns)
            st->shortest_pause_ns = gap;
    }
    if (gap >= st->th.pause_min_ns || st->pause) {
        t->iterations_before += iterations;
        t->waits_after_work = t->uploads_after_work = t->steps_ended = 0;
        t->readback_stretches = 0;
        t->read_seen = 0;
    }
}

/*
 * Threads that wait for each other. A stretch of a thread in which another thread issued
 * GPU work is, up to that work's end, a wait for that thread: PyTorch's training thread
 * waits in loss.backward() while the autograd engine's thread launches the backward
 * kernels, and that thread waits in turn while the next forward is launched. The trace
 * holds no edge between them (they hand over through the CPU), so the replay infers one:
 * the thread resumes no earlier than the other's latest call, replayed, and then spends
 * the part of its stretch after the other's work (alone) on its own. As measured that is
 * the stretch itself; where a change makes the other thread faster, the waiting one
 * follows, and only its own part can be a batch load or a pause.
 */
static uint64_t alone_until(struct an_replay_state *st, const struct an_rp_thread *t,
                            uint64_t ts, struct an_rp_thread **waited_for)
{
    const struct an_rp_busy *b = st->busy[0].tid != t->tid ? &st->busy[0] : &st->busy[1];
    uint64_t from = max64(t->last_end, b->end);
    *waited_for = NULL;
    if (b->thread && b->end > t->last_end && b->end <= ts) {
        struct an_rp_thread *o = &st->threads[b->thread - 1];
        if (o->last_end <= ts) {  /* (not in a call now: a sync still waiting, say) */
            *waited_for = o;
            from = o->last_end;  /* its latest call, which its replayed clock ends */
        }
    }
    return ts > from ? ts - from : 0;
}

static void note_busy(struct an_replay_state *st, const struct an_rp_thread *t, uint64_t end)
{
    struct an_rp_busy now = {end, t->tid, t->slot};
    if (st->busy[0].tid == t->tid) {
        st->busy[0].end = max64(st->busy[0].end, end);
    } else if (end >= st->busy[0].end) {
        st->busy[1] = st->busy[0];
        st->busy[0] = now;
    } else if (end > st->busy[1].end) {
        st->busy[1] = now;
    }
}

/*
 * Small uploads gathered (whatif.c, small_upload): the fix users write collates an
 * iteration's small tensors into one pinned buffer before the first is needed and copies
 * it once, so the kernels after the first wait for them all (uploaded one by one, each
 * copy ran beside the kernels before it). Where the trace measured the host's memcpy rate,
 * the first small upload of an iteration stages and moves what the iteration before
 * uploaded so, the others nothing; before a whole iteration was seen, each its own bytes.
 * An iteration ends at a wait that is no small upload (the loss read) or a step's end.
 * Returns the bytes ev stages in the worlds that coalesce (replay.h, gathered).
 */
static uint64_t gather_of(struct an_replay_state *st, struct an_rp_thread *t,
                          const struct an_ev *ev, int mark)
{
    if (!st->host_copy_bps)
        return ev->bytes;
    if (an_wi_small_upload(ev)) {
        t->gather_cur += ev->bytes;
        if (!t->gather_prev)
            return ev->bytes;
        if (t->gather_started)
            return 0;
        t->gather_started = 1;
        return t->gather_prev;
    }
    if (t->gather_cur &&
        (an_wi_waits_measured(ev) || (mark && (ev->flags & AN_F_STEP_END)))) {
        t->gather_prev = t->gather_cur;
        t->gather_cur = 0;
        t->gather_started = 0;
    }
    return 0;
}

/* The median of t's latest batch loads that followed no wait for the GPU (three or more
 * of them), else 0: how long a load is where the loop reads every few steps. */
static uint64_t median_load(const struct an_rp_thread *t)
{
    unsigned n = t->nrecent_loads < RECENT_LOADS ? t->nrecent_loads : RECENT_LOADS;
    if (n < 3)
        return 0;
    uint64_t v[RECENT_LOADS];
    memcpy(v, t->recent_load, n * sizeof *v);
    for (unsigned i = 1; i < n; i++)  /* (insertion sort: a few values, a load's rare) */
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

/* Whether a stretch `alone` long right after a wait for the GPU holds a batch load: from
 * input_gap_after_wait_ns on (under it, the step's own work on what it read: logging), or,
 * where the loop also loads after no wait, from as long as those loads (`load`,
 * median_load) on (random draw 165: 785 us loads, read every second step and logged for
 * 75 us; the stretches after the reads, 860 us, were taken as logging, and half the loads
 * stayed: 58 ms predicted, two workers gained 111). */
static int holds_a_load(const struct an_replay_state *st, uint64_t load, uint64_t alone)
{
    return alone >= st->th.input_gap_after_wait_ns || (load && alone >= load);
}

/* A batch load's stretch `alone` long just ended on t: of it, the step's own work before
 * the fetch (an_replay_state, step_own). After a wait for the GPU, what the stretch holds
 * beyond `load`, the median of t's latest loads that followed none (median_load): a loop
 * that reads the loss every second step and logs it for 0.8 ms loaded 3.6 ms batches, the
 * stretches after the reads 4.4 ms long, and two workers that load batch k on worker
 * k mod 2 put every log on one worker, which the replay's workers then waited for (random
 * draw 232: 183 ms predicted, two workers gained 308). Where every load follows a wait,
 * nothing tells the two apart: the stretch is all load. */
static uint64_t step_own_of(struct an_rp_thread *t, uint64_t load, uint64_t alone)
{
    if (!t->after_wait) {
        t->recent_load[t->nrecent_loads++ % RECENT_LOADS] = alone;
        return 0;
    }
    return load && alone > load ? alone - load : 0;
}

/*
 * A kernel launch in the loop's rhythm: by the thread replayed last or another, after a
 * stretch too short for a batch load or a pause, no wait of its own, the thread holding no
 * read, and cuda_graphs already alive. Nearly every event of a training loop is one, and
 * replay_call's cases for the others cost two thirds of its time; this is what replay_call
 * does for it, case by case, and nothing else. (Both must agree: test_replay_worlds and
 * the corpus, byte for byte, bench/replay_same.sh.)
 */
static int in_rhythm(const struct an_replay_state *st, const struct an_rp_thread *t,
                     const struct an_ev *ev)
{
    return ev->kind == AN_LAUNCH &&
           (ev->flags & (AN_F_KERNEL | AN_F_ERROR | AN_F_DRAINS | AN_F_BLOCKING)) ==
               AN_F_KERNEL &&
           !t->holding && st->alone < st->th.input_gap_ns && st->alone < st->th.pause_min_ns &&
           (st->active & AN_WI_BIT(AN_WI_GRAPHS)) && an_wi_issues(ev);
}

/* Who issued an operation in the rhythm, for the stream maps: operations with the same
 * issuer copied the same h (replay.h, h_epoch). */
static inline uint64_t op_from(const struct an_replay_state *st, const struct an_rp_thread *t)
{
    return st->h_epoch << 13 | t->slot;  /* (MAX_THREADS: 2^12) */
}

static inline __attribute__((always_inline)) void launch_in_rhythm(struct an_replay_state *st, struct an_rp_thread *t,
                             const struct an_ev *ev, uint64_t gap)
{
    /* loop_pause: no pause, no long stretch, nothing held */
    if (!t->looping && loop_iterations(t))
        t->looping = 1;
    st->pause = st->long_rhythm = 0;
    t->bg_held = 0;
    st->after_kernel = t->after_kernel;
    t->after_kernel = 1;
    t->after_small = 0;
    st->load = st->ckpt_read = st->run_ahead_bound = st->upload_wait = 0;
    st->gathered = st->host_copy_bps ? 0 : ev->bytes;  /* (gather_of: no upload) */
    /* an_wi_removes: cuda_graphs alone, the lazy clocks (moved in a copy, issue) */
    struct an_rp_lazy lazy = t->lazy;
    lazy.on = 1;
    lazy.base += gap;
    int graphs = remover_of(AN_WI_GRAPHS);
    if (an_wi_launch_overhead(st, ev, gap))
        lazy.removed[graphs] += gap;
    issue(st, ev, t->h, lazy, 0, AN_WI_BIT(AN_WI_GRAPHS), op_from(st, t));
    note_busy(st, t, ev->end);
    uint64_t dur = ev->end - ev->ts;
    lazy.base += dur;
    lazy.removed[graphs] += dur;
    t->lazy = lazy;
    t->launched_since_wait = t->launched_since_upload = 1;
    t->upload_to = 0;
    t->after_readback = t->after_wait = 0;
    if (ev->end > t->last_end)
        t->last_end = ev->end;
    st->last_thread = t->slot;
}

static void replay_other_call(struct an_replay_state *st, const struct an_ev *ev,
                              struct an_rp_thread *t, uint64_t gap, struct an_rp_thread *other,
                              int mark);

/* (inline into its callers, the slow path apart: most events are launches in rhythm, and
 * the whole replay's registers saved and restored for each was a tenth of their cost) */
static void note_cpu_sample(struct an_replay_state *st, const struct an_ev *ev);

static inline void replay_call(struct an_replay_state *st, const struct an_ev *ev)
{
    struct an_ev mark;
    if (__builtin_expect(ev->kind == AN_CPU_THREAD, 0)) {
        note_cpu_sample(st, ev);
        return;
    }
    if (ev->kind >= AN_RANGE_PUSH && ev->kind <= AN_RANGE_END &&
        !(ev = step_boundary(st, ev, &mark)))
        return;
    if (!st->first_ts || ev->ts < st->first_ts)
        st->first_ts = ev->ts;
    if (ev->ts > st->replayed_to)
        st->replayed_to = ev->ts;  /* every call that started before this one is replayed */
    match_all_pending(st, ev->ts);  /* (work that started before this call is not its) */
    struct an_rp_thread *t = thread_of(st, ev->tid, ev->ts);
    if (!t)
        return;
    uint64_t gap = ev->ts > t->last_end ? ev->ts - t->last_end : 0;
    struct an_rp_thread *other;
    st->alone = alone_until(st, t, ev->ts, &other);
    if (st->alone >= AN_SHORT_LOAD_MIN_NS && st->alone < st->th.input_gap_ns && !other &&
        t->looping && !t->after_wait)
        st->short_stretch_ns += st->alone;
    if (!other && in_rhythm(st, t, ev))
        launch_in_rhythm(st, t, ev, gap);
    else
        replay_other_call(st, ev, t, gap, other, ev == &mark);
}

/* Every other call (and step mark): each case of replay.h's graph. */
__attribute__((noinline))
static void replay_other_call(struct an_replay_state *st, const struct an_ev *ev,
                              struct an_rp_thread *t, uint64_t gap, struct an_rp_thread *other,
                              int mark)
{
    st->h_epoch++;  /* (threads' clocks move here: no stream map spans this call) */
    loop_pause(st, t, st->alone, mark);
    if (other) {  /* the stretch waited for the other thread: it resumes after it */
        settle(st, &t->lazy, t->h);
        settle(st, &other->lazy, other->h);
        for (unsigned w = 0; w < st->nlive; w++)
            t->h[w] = max64(t->h[w], other->h[w]);
        gap = st->alone;
    }
    /* worlds making none of the changes that touch ev replay it as measured */
    st->after_kernel = t->after_kernel;
    t->after_kernel = an_wi_kernel_launch(ev);
    st->after_small = t->after_small;
    t->after_small = an_wi_small_upload(ev);
    int batch = an_wi_batch_load(st, ev, st->alone) && !t->after_readback;
    uint64_t load_len = batch && t->after_wait ? median_load(t) : 0;  /* (once a stretch) */
    st->load = batch && (!t->after_wait || holds_a_load(st, load_len, st->alone));
    st->ckpt_read = t->looping && an_wi_checkpoint_read(st, ev, iterations_run(t),
                                                        t->readback_stretches,
                                                        AN_SCALAR_READ_BYTES);
    if (st->ckpt_read)
        note_ckpt_read(st, ev);
    st->rare_download = rare_download(st, t, ev);
    st->run_ahead_bound = event_behind(st, ev);
    st->upload_wait = ev->kind == AN_SYNC && t->upload_to &&
                      (t->upload_to == ev->stream + 1 || (ev->flags & AN_F_ALL_STREAMS));
    st->step_own = st->load && t->looping ? step_own_of(t, load_len, st->alone) : 0;
    if (st->load && !t->looping) {  /* start-up: the loop's first fetch is the latest */
        st->load = 0;
        if (!st->loads) {
            settle(st, &t->lazy, t->h);
            for (unsigned w = 0; w < st->nlive; w++) {
                st->first_ask[w] = t->h[w];
                st->first_fetched[w] = t->h[w] + gap;
            }
            st->asked = 1;
        }
    }
    st->gathered = gather_of(st, t, ev, mark);
    unsigned touched = an_wi_touched(st, ev);
    if (touched & ~st->active)
        wake_worlds(st, touched);
    const struct an_world_set *in = &st->making[touched];
    uint64_t dur = ev->end - ev->ts;
    /* every world moves alike in place, then the few that make a change touching ev move
     * otherwise (building the worlds' starts apart and copying them back cost a third of
     * the replay, the copy's wide loads stalling on the narrow stores just made); cost[w]
     * is set for those alone, the others' is dur */
    uint64_t cost[AN_WORLDS], gap_removed;
    int removes = an_wi_removes(st, touched, ev, gap, &gap_removed);
    int removed_by = removes >= 0 ? remover_of(removes) : -1;
    if (removes >= 0) {  /* (lazy clocks: no world moves otherwise than by what is removed) */
        t->lazy.on = 1;
        t->lazy.base += gap;
        if (removed_by >= 0)
            t->lazy.removed[removed_by] += gap_removed;
    } else {
        settle(st, &t->lazy, t->h);
        for (unsigned w = 0; w < st->nlive; w++)
            t->h[w] += gap;
        if (touched) {
            an_wi_transform(st, in, touched, ev, gap, dur, t->h, cost);
            if (st->load)
                spun_through(st, in, t->loaded);
        }
    }
    /* (t's clocks are each world's start of ev, until ev's cost is added) */
    if (st->load) {
        if (!st->loads)
            st->first_load_ts = ev->ts - st->alone;
        st->loads++;
        st->load_ns += st->alone - st->step_own;
        t->loaded = 1;
    }
    if (is_event_record(ev)) {
        struct an_rp_stream *s = stream_of(st, ev->stream);
        if (s && s->issued < (1ull << 40) &&
            gw_map_put(&st->event_at, ev->key, (uint64_t)(s - st->streams) << 40 | s->issued) == 0)
            want_done(st, s);
    } else if (is_stream_wait(ev)) {
        add_barrier(st, ev);
    }
    int waits = an_wi_waits_measured(ev);
    /* a waiting call's own cost: what calls of its kind took when they did not wait
     * (none seen: nil beyond what followed the GPU's end) */
    uint64_t nowait = st->nowait_ns && ev->api < GW_API_ID_LIMIT ? st->nowait_ns[ev->api] : 0;
    if (nowait == UINT64_MAX)
        nowait = 0;
    int issues = an_wi_issues(ev);
    uint64_t moved = 0;
    if (issues) {
        moved = issue(st, ev, t->h, t->lazy, waits, touched, 0);
        note_busy(st, t, ev->end);
    }
    /* (a loop's iteration: work launched, then its results waited for or the next batch
     * uploaded; uploads or waits with no launch between, as when a model's weights go to
     * the device one by one, are none) */
    if (ev->kind == AN_COPY && ev->dir == GW_COPY_HTOD && !(ev->flags & AN_F_ERROR)) {
        t->uploads_after_work += t->launched_since_upload;
        st->upload_iterations += t->launched_since_upload;
        t->launched_since_upload = 0;
    }
    if (removes >= 0) {  /* (no wait: ev's own time, taken away where removed) */
        t->lazy.base += dur;
        if (removed_by >= 0)
            t->lazy.removed[removed_by] += dur;
    } else if (!waits) {
        for (unsigned w = 0; w < st->nlive; w++)
            t->h[w] += dur;
        for (unsigned i = 0; i < in->n; i++)  /* (modulo 2^64: exactly h + cost) */
            t->h[in->world[i]] += cost[in->world[i]] - dur;
    } else {
        uint64_t ready_sim[AN_WORLDS];
        /* host-only, a blocking copy whose move was told from its wait (host_only_upload):
         * the other streams it drains were done when the move began, not when it ended (a
         * 7 MB download after a step's kernels on two streams: they were taken as running
         * until its end in every world, and pinning it saved nothing) */
        struct an_ev until = *ev;
        if (moved && ev->end - moved > ev->ts)
            until.end = ev->end - moved;
        /* a wait that slept returned a wake-up after the work it waited for: where no GPU
         * record says when that was, the work ends that much sooner (the GPU's idle, and
         * what taking the wait away gives back) */
        int woken = t->waits_sleep && st->wake_ns && until.end - until.ts > st->wake_ns;
        if (woken)
            until.end -= st->wake_ns;
        int waited_long = until.end - until.ts > nowait + st->th.drain_slack_ns;
        /* the work that started while it waited: by its end, as far as the GPU's clock
         * and the host's agree (drain_slack_ns; a record of the wait's own copy may start
         * a few us after the call returned) */
        match_all_pending(st, ev->end + st->th.drain_slack_ns);
        st->drained_unknown = 0;
        uint64_t virtual_before = st->virtual_ops;
        uint64_t ready = drained(st, &until, waited_long, ready_sim);
        /* (counted where no GPU record timed the work: elsewhere the records say when it
         * ended, and the wake-up is what followed) */
        if (woken && st->virtual_ops > virtual_before)
            st->waits_woken++;
        /* as measured: the call's own time, or its own cost, the wait, and what came after
         * the GPU was done (the copy back, the driver's return) */
        int waited = ready > ev->ts;
        uint64_t after = waited && ev->end > ready ? ev->end - ready : 0;
        uint64_t before = !waited ? dur : nowait < ready - ev->ts ? nowait : ready - ev->ts;
        /* (learnt only where nothing was pending: a call that drained work of unknown
         * length may have waited for it) */
        if (!waited && !st->drained_unknown && st->nowait_ns && ev->api < GW_API_ID_LIMIT &&
            (st->nowait_ns[ev->api] == UINT64_MAX || dur < st->nowait_ns[ev->api]))
            st->nowait_ns[ev->api] = dur;
        int gathers = an_wi_gathers(st, ev);
        t->holding = 0;
        for (unsigned w = 0; w < st->nlive; w++) {
            unsigned c = st->changes[w] & touched;
            if (!c || an_wi_waits(st, c, ev)) {
                uint64_t mine = t->h[w] + (c ? an_wi_cost(st, c, ev, before, st->gathered)
                                                 : before);
                t->h[w] = max64(mine, ready_sim[w] + after);
                t->held[w] = t->h[w];
                if (t->loaded)
                    st->loader_wait[w] +=
                        t->h[w] - mine + spun_in_batch_wait(st, w, ready_sim[w]);
            } else if (st->ckpt_read && an_wi_waits(st, c & ~AN_WI_BIT(AN_WI_BACKGROUND), ev)) {
                /* (the read copied on a side stream: the thread goes on at once) */
                t->held[w] = max64(t->h[w], ready_sim[w] + after);
                t->holding = 1;
                t->bg_held |= 1u << w;
            } else {
                uint64_t mine = t->h[w];
                t->h[w] += an_wi_cost(st, c, ev, before + after, st->gathered);
                t->held[w] = max64(mine + an_wi_cost(st, c, ev, before, st->gathered),
                                   ready_sim[w] + after);
                t->holding |= gathers;
            }
        }
        if (t->loaded)
            memset(st->batch_wait, 0, sizeof st->batch_wait);
        t->waits_after_work += t->launched_since_wait;
        st->wait_iterations += t->launched_since_wait;
        t->launched_since_wait = 0;
    }
    if (ev->kind == AN_LAUNCH && issues)
        t->launched_since_wait = t->launched_since_upload = 1;
    if (issues)
        t->upload_to = ev->kind == AN_COPY && ev->dir == GW_COPY_HTOD ? ev->stream + 1 : 0;
    if (an_is_host(ev)) {  /* (a step's NVTX end between them changes nothing) */
        t->after_readback = ev->kind == AN_COPY && ev->dir == GW_COPY_DTOH &&
                            ev->bytes > AN_SCALAR_READ_BYTES && !(ev->flags & AN_F_ERROR);
        if (!mark)  /* (a step's start after the read: logging what it read is no fetch) */
            t->after_wait = ev->kind == AN_SYNC || (ev->kind == AN_COPY && ev->dir == GW_COPY_DTOH);
        if (t->after_readback) {
            uint32_t iter = loop_iterations(t);
            if (t->read_seen && iter != t->read_iter)
                t->readback_stretches++;
            t->read_iter = iter;
            t->read_seen = 1;
        }
    }
    if (mark && (ev->flags & AN_F_STEP_END))
        t->steps_ended++;
    if (ev->end > t->last_end)
        t->last_end = ev->end;
    st->last_thread = t->slot;
}

static void release_host(struct an_replay_state *st, int all)
{
    while (st->fifo_n) {
        const struct an_ev *ev = &st->fifo[st->fifo_head];
        if (!all && ev->end + st->th.drain_slack_ns > st->gpu_seen)
            return;
        replay_call(st, ev);
        st->fifo_head = (st->fifo_head + 1) & (st->fifo_cap - 1);
        st->fifo_n--;
    }
}

/* A host event where GPU records are expected: replayed once the GPU side has been seen
 * past its end, queued until then (out of line: host-only replays need no frame for it). */
__attribute__((noinline))
static void replay_after_gpu(struct an_replay_state *st, const struct an_ev *ev)
{
    release_host(st, 0);
    if (!st->fifo_n && ev->end + st->th.drain_slack_ns <= st->gpu_seen) {
        replay_call(st, ev);
        return;
    }
    if (st->fifo_n == st->fifo_cap &&
        ring_room((void **)&st->fifo, &st->fifo_head, st->fifo_n, &st->fifo_cap,
                  sizeof *st->fifo, FIFO_MAX) != 0) {
        /* the GPU side lags too far (or stopped): replay the oldest without it */
        replay_call(st, &st->fifo[st->fifo_head]);
        st->fifo_head = (st->fifo_head + 1) & (st->fifo_cap - 1);
        st->fifo_n--;
        st->forced++;
    }
    st->fifo[(st->fifo_head + st->fifo_n) & (st->fifo_cap - 1)] = *ev;
    st->fifo_n++;
}

/* A thread's CPU sample (AN_CPU_THREAD, cumulative): whether its waits for the GPU slept
 * since the one before. Time in waits neither on a CPU nor waiting for one (its run-queue
 * time, all taken as in its waits: a spinning thread preempted is no sleeper) was asleep;
 * more than half asleep, over a millisecond of waits at least, is a sleeping schedule. */
static void note_cpu_sample(struct an_replay_state *st, const struct an_ev *ev)
{
    struct an_rp_thread *t = known_thread(st, (uint32_t)ev->ptr);
    if (!t)
        return;
    uint64_t wait = ev->key, cpu = ev->stream, runq = ev->bytes;
    if (wait < t->sample_wait_ns || cpu < t->sample_wait_cpu_ns)
        return;  /* (another thread with a reused id) */
    uint64_t d_wait = wait - t->sample_wait_ns, d_cpu = cpu - t->sample_wait_cpu_ns;
    uint64_t d_runq = runq > t->sample_runq_ns ? runq - t->sample_runq_ns : 0;
    if (d_wait >= 1000000) {
        uint64_t awake = d_cpu + d_runq;
        t->waits_sleep = awake < d_wait && d_wait - awake > d_wait / 2;
        t->sample_wait_ns = wait;
        t->sample_wait_cpu_ns = cpu;
        t->sample_runq_ns = runq;
    }
}

void an_replay_host(struct an_replay_state *st, const struct an_ev *ev)
{
    if (ev->kind == AN_CPU_THREAD) {
        /* in order with the calls (through the FIFO where they wait for the GPU's records),
         * ending where it starts (its run-queue time, end - ts, held in bytes: the thread's
         * own CPU time is not read here) */
        struct an_ev sample = *ev;
        sample.bytes = ev->dir && ev->end > ev->ts ? ev->end - ev->ts : 0;
        sample.end = sample.ts;
        sample.tid = 0;
        if (!st->expect_gpu)
            replay_call(st, &sample);
        else
            replay_after_gpu(st, &sample);
        return;
    }
    /* NVTX ranges go on to replay_call (step_boundary); LOST records hold no time of the
     * program's own */
    if ((ev->kind < AN_CALL || ev->kind > AN_CAPTURE) &&
        (ev->kind < AN_RANGE_PUSH || ev->kind > AN_RANGE_END))
        return;
    if (!st->expect_gpu)
        replay_call(st, ev);
    else
        replay_after_gpu(st, ev);
}

void an_replay_finish(struct an_replay_state *st, uint64_t first_ts, uint64_t measured_ns,
                      struct an_replay *out)
{
    release_host(st, 1);
    memset(out, 0, sizeof *out);
    uint64_t end[AN_WORLDS] = {0};  /* by slot */
    for (size_t i = 0; i < st->nstreams; i++) {
        struct an_rp_stream *s = &st->streams[i];
        match_pending(st, s, UINT64_MAX);
        for (; s->p_n; s->p_n--, s->p_head = (s->p_head + 1) & (s->p_cap - 1))
            run_orphan(st, s, &s->pend[s->p_head]);
        /* work never drained: its length is unknown, it ends when it was issued */
        struct an_ev none = {0};
        run_virtual(st, s, &none, 0, UINT64_MAX, 0);
        settle_stream(st, s);
        for (unsigned w = 0; w < st->nlive; w++)
            end[w] = max64(end[w], s->g[w]);
    }
    for (size_t i = 0; i < st->nthreads; i++) {
        settle(st, &st->threads[i].lazy, st->threads[i].h);
        for (unsigned w = 0; w < st->nlive; w++)
            end[w] = max64(end[w], st->threads[i].h[w]);
    }
    for (unsigned w = 0; w < st->nlive; w++)
        end[w] = max64(end[w], st->bg_free[w]);  /* the last pause's work is awaited */
    if (!first_ts || !st->nthreads)
        return;
    out->done = 1;
    out->measured_ns = measured_ns;
    for (int w = 0; w < AN_WORLDS; w++) {  /* (a world never alive is the one it stayed) */
        unsigned slot = slot_of(st, an_world_changes(w) & st->active);
        out->wall_ns[w] = end[slot] > first_ts ? end[slot] - first_ts : 0;
        out->loader_wait_ns[w] = st->loader_wait[slot];
    }
    uint64_t base = out->wall_ns[AN_WI_AS_MEASURED];
    out->error = measured_ns ? (base > measured_ns ? (double)(base - measured_ns)
                                                   : (double)(measured_ns - base)) /
                                   (double)measured_ns
                             : 0;
    out->workers = (unsigned)st->nworkers;
    out->worker_speed = st->worker_speed;
    out->loads = st->loads;
    out->load_ns = st->load_ns;
    out->loop_ns = st->loads && st->replayed_to > st->first_load_ts
                       ? st->replayed_to - st->first_load_ts
                       : 0;
    out->short_stretch_ns = st->short_stretch_ns;
    out->iterations = max64(st->upload_iterations, st->wait_iterations);
    out->pauses = st->pauses;
    out->pause_ns = st->pause_ns;
    out->pause_cycles = st->pause_cycles;
    out->readback_pauses = st->readback_pauses;
    out->shortest_pause_ns = st->shortest_pause_ns;
    out->ops_matched = st->matched;
    out->ops_virtual = st->virtual_ops;
    out->ops_unproven = st->unproven_ops;
    out->ops_unlearnt = st->unlearnt_ops;
    out->waits_woken = st->waits_woken;
    out->wake_ns = st->wake_ns;
    out->records_unmatched = st->unmatched;
    out->pinned_unknown_ns = st->pinned_unknown_ns;
    out->ckpt_least_ns = st->ckpt_least_ns;
    out->forced = st->forced;
}
