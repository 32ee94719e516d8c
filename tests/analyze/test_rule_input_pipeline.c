/* input_pipeline at and around its thresholds: input_gap_ns (1 ms) and min_share (3 %);
 * pauses before the steady state left out of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "pauses.h"
#include "synth.h"

static const struct an_finding *run(struct synth *s, struct an_model **m,
                                    struct an_findings *out, unsigned cpus)
{
    s->cpus = cpus;
    *m = synth_model(s, NULL, 1ull << 30, 0);
    return synth_rule(*m, an_rule_input_pipeline, out, cpus);
}

static void loader_bound(void **state, int gpu)
{
    (void)state;
    struct synth s = {.gpu_records = gpu};
    struct loop L = {.steps = 40, .input_ns = 4 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    struct an_model *m;
    struct an_findings out = {0};
    const struct an_finding *f = run(&s, &m, &out, 8);
    assert_non_null(f);
    assert_string_equal(f->id, "input_pipeline");
    assert_int_equal(m->steps.count, 39);
    /* about 4 ms of input per step over 39 steps */
    assert_true(f->saving_ns > 39 * 3900 * US && f->saving_ns < 39 * 4300 * US);
    assert_non_null(strstr(f->change, "num_workers=7"));
    assert_non_null(strstr(f->change, "pin_memory=True"));
    assert_non_null(strstr(f->change, "persistent_workers=True"));
    assert_null(strstr(f->change, "py-spy"));
    const struct an_figure *graphs = synth_fig(f, "graph_replays_per_step");
    assert_non_null(graphs);
    assert_true(graphs->value == 0);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* The shim's CPU samples, every 25 ms over the whole run: the training thread (tid 1) on a
 * CPU train_cpu of the time, in calls that wait for the GPU `wait` of it, on a CPU wait_cpu
 * of that; `workers` descendants running, each per_worker of a CPU. */
static void add_cpu_samples(struct synth *s, double train_cpu, double wait, double wait_cpu,
                            unsigned workers, double per_worker)
{
    uint64_t end = s->now;
    for (uint64_t t = 0; t <= end; t += 25 * MS) {
        struct an_ev thread = {.ts = t, .end = t, .tid = 99, .kind = AN_CPU_THREAD, .ptr = 1,
                               .bytes = (uint64_t)((double)t * train_cpu),
                               .key = (uint64_t)((double)t * wait),
                               .stream = (uint64_t)((double)t * wait * wait_cpu)};
        synth_push(s, &thread);
        uint64_t worker_ns = (uint64_t)((double)t * workers * per_worker);
        struct an_ev proc = {.ts = t, .end = t, .tid = 99, .kind = AN_CPU_PROC,
                             .bytes = (uint64_t)((double)t * train_cpu) + worker_ns,
                             .ptr = worker_ns, .key = workers, .stream = workers};
        synth_push(s, &proc);
    }
}

/* The loader-bound loop with CPU samples: each of five host pictures gets its own change
 * (rule_input_advice.c), and the samples do not make the run longer. The training thread
 * counts as busy by its CPU time outside its waits for the GPU: a thread that spins in
 * them (CUDA's default) is not busy for that, and one that sleeps in them is not idle. */
static void cpu_samples_choose_the_change(void **state)
{
    (void)state;
    static const struct {
        double train_cpu, wait, wait_cpu;  /* the samples */
        double train_busy;                 /* outside the waits */
        unsigned workers;
        double per_worker;
        unsigned cpus;
        const char *says, *not_says;
    } cases[] = {
        {0.9, 0, 0, 0.9, 0, 0, 8,
         "the training thread prepared every batch itself (num_workers=0)", "py-spy"},
        {0.2, 0, 0, 0.2, 0, 0, 8, "off the CPU 80% of the time", "num_workers=0)"},
        {0.3, 0, 0, 0.3, 3, 0.95, 8,
         "cannot keep up. Raise num_workers: DataLoader(num_workers=7", "DALI"},
        {0.3, 0, 0, 0.3, 7, 0.95, 8, "already use the CPUs there are", "num_workers=7"},
        {0.9, 0, 0, 0.9, 4, 0.2, 8, "but the training thread was busy 90% of the time",
         "DataLoader("},
        {0.1, 0, 0, 0.1, 4, 0.2, 8, "the input waits on storage or the network", "DataLoader("},
        /* on a CPU 60% of the time, but 50% spinning in waits: 20% of the rest */
        {0.6, 0.5, 1, 0.2, 0, 0, 8, "off the CPU 80% of the time", "num_workers=0)"},
        /* on a CPU 45% of the time and asleep in its waits (50%): 90% of the rest */
        {0.45, 0.5, 0, 0.9, 0, 0, 8, "prepared every batch itself (num_workers=0)", "off the CPU"},
        /* workers keep up; the thread's 70% is spinning in waits (60%, all on a CPU) */
        {0.7, 0.6, 1, 0.25, 4, 0.2, 8, "the input waits on storage or the network",
         "per-step work"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct synth s = {.gpu_records = 1};
        struct loop L = {.steps = 40, .input_ns = 4 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                         .launch_ns = 5 * US, .item = 1};
        synth_loop(&s, &L);
        uint64_t program_end = s.now;
        add_cpu_samples(&s, cases[i].train_cpu, cases[i].wait, cases[i].wait_cpu,
                        cases[i].workers, cases[i].per_worker);
        struct an_model *m;
        struct an_findings out = {0};
        const struct an_finding *f = run(&s, &m, &out, cases[i].cpus);
        assert_non_null(f);
        assert_true(m->cpu.known);
        assert_int_equal(m->cpu.train_tid, 1);
        assert_int_equal(m->cpu.workers, cases[i].workers);
        if (!(m->cpu.train_busy > cases[i].train_busy - 0.02 &&
              m->cpu.train_busy < cases[i].train_busy + 0.02))
            fail_msg("case %zu: train_busy %.3f", i, m->cpu.train_busy);
        assert_true(m->cpu.train_wait > cases[i].wait - 0.02 &&
                    m->cpu.train_wait < cases[i].wait + 0.02);
        assert_true(m->last_ts <= program_end);
        if (!strstr(f->change, cases[i].says) || strstr(f->change, cases[i].not_says))
            fail_msg("case %zu: %s", i, f->change);
        assert_non_null(strstr(f->evidence, "Meanwhile the training thread was on a CPU"));
        if ((strstr(f->evidence, "did not wait for the GPU (it waited") != NULL) !=
            (cases[i].wait > 0))
            fail_msg("case %zu: %s", i, f->evidence);
        const struct an_figure *busy = synth_fig(f, "training_thread_busy");
        assert_non_null(busy);
        assert_true(busy->value == m->cpu.train_busy);
        const struct an_figure *running = synth_fig(f, "workers_running");
        assert_non_null(running);
        assert_true(running->value == cases[i].workers);
        const struct an_figure *waiting = synth_fig(f, "training_thread_waiting");
        assert_non_null(waiting);
        assert_true(waiting->value == m->cpu.train_wait);
        const struct an_figure *workers_cpus = synth_fig(f, "workers_cpus");
        assert_non_null(workers_cpus);
        assert_true(workers_cpus->value == m->cpu.workers_cpus);
        assert_true(cases[i].workers == 0 || workers_cpus->value > 0);
        an_findings_free(&out);
        an_model_free(m);
        synth_free(&s);
    }
}

/* A loader-bound loop: weights uploaded once, then 40 steps of a 4 ms load, a small upload
 * and 3 kernels of 1 ms, the loss read every read_every steps (0: never); the other steps
 * sync on the last step's event, done long since: the sync bounds how far the host runs
 * ahead and proves nothing of how long the kernels ran. */
static void loader_loop(struct synth *s, unsigned read_every)
{
    synth_alloc(s, 64ull << 20, 0);  /* weights, once */
    for (unsigned i = 0; i < 40; i++) {
        synth_idle(s, 4 * MS);
        synth_h2d(s, 4096, 1 * US, 0);
        for (unsigned k = 0; k < 3; k++)
            synth_launch(s, 5 * US, 1 * MS);
        if (read_every && i % read_every == 0) {
            synth_item(s);
            continue;
        }
        if (i)
            synth_call(s, AN_SYNC, GW_API_cuEventSynchronize, 2 * US, AN_F_DRAINS)->key = i;
        synth_call(s, AN_CALL, GW_API_cuEventRecord, 2 * US, 0)->key = i + 1;
    }
    synth_stream_sync(s);
}

/* A loader-bound loop that never waits for the GPU (an event sync two steps back that finds
 * its work done): host-only nothing proves the GPU idle while the host loads, and the
 * kernels may run as long as the loads, so the workers' replay (kernels taken as nil) is
 * said apart as an upper bound, no finding. With the GPU's records the same loop gets the
 * finding, and nothing unproven; so does a host-only loop whose reads wait. */
static void unproven_without_waits(void **state, int gpu, int item)
{
    (void)state;
    struct synth s = {.gpu_records = gpu, .now = 1000 * MS};
    loader_loop(&s, item ? 1 : 0);
    struct an_model *m;
    struct an_findings out = {0};
    const struct an_finding *f = run(&s, &m, &out, 8);
    if (!gpu && !item) {
        assert_null(f);
        assert_int_equal(out.nunproven, 1);
        const struct an_unproven *u = &out.unproven[0];
        assert_string_equal(u->id, "input_pipeline");
        assert_int_equal(u->whatif, AN_WI_INPUT_WORKERS);
        assert_int_equal(u->up_to_ns, an_whatif_saving(m, AN_WI_INPUT_WORKERS));
        /* 40 loads of 4 ms a step made by 7 workers (6 rounds of 4 ms where the thread took
         * 40), the kernels taken as nil: about 161 - 24 - 4 ms (the last kernels' wait) */
        assert_true(u->up_to_ns > 125 * MS && u->up_to_ns < 140 * MS);
        assert_true(u->share > 0.8 && u->share < 0.95);
        assert_string_equal(u->change,
                            "load batches in DataLoader workers (num_workers=7, pin_memory=True)");
    } else {
        assert_non_null(f);
        assert_string_equal(f->id, "input_pipeline");
        assert_int_equal(out.nunproven, 0);
    }
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* Host-only, the workers' saving said as unproven, and only it: the finding's saving f
 * its floor, the workers' replay with drained work at its least its ceiling. */
static const struct an_unproven *said_between(const struct an_findings *out,
                                              const struct an_model *m,
                                              const struct an_finding *f)
{
    assert_int_equal(out->nunproven, 1);
    const struct an_unproven *u = &out->unproven[0];
    assert_string_equal(u->id, "input_pipeline");
    assert_int_equal(u->proven_ns, f->saving_ns);
    assert_int_equal(u->up_to_ns, an_replay_ceiling(&m->replay, AN_WI_INPUT_WORKERS));
    return u;
}

/* The same loop reading its loss every fourth step (the read waits for that step's kernels)
 * and otherwise syncing on the last step's event: host-only the waits prove a quarter of the
 * kernels, the rest ran anything from nil to the loads' length. The finding claims what
 * the waits prove, and the replay's saving with the rest as nil, and the work the reads
 * waited for at its least (replay.h, AN_WI_LEAST), is said as the ceiling,
 * the finding's saving its floor (random draws 24 and 30 ranked their loads 84 and 104 ms
 * where workers gained 274 and 167, and said nothing more). With the GPU's records, no
 * ceiling: the records prove it all. */
static void partly_proven(void **state, int gpu)
{
    (void)state;
    struct synth s = {.gpu_records = gpu, .now = 1000 * MS};
    loader_loop(&s, 4);
    struct an_model *m;
    struct an_findings out = {0};
    const struct an_finding *f = run(&s, &m, &out, 8);
    assert_non_null(f);
    assert_string_equal(f->id, "input_pipeline");
    if (gpu) {
        assert_int_equal(out.nunproven, 0);
    } else {
        assert_true(m->replay.ops_unproven > 0);
        const struct an_unproven *u = said_between(&out, m, f);
        /* (the read every fourth step waits for two steps' kernels: the previous one's
         * may have run during this step's load, and the ceiling's replay takes them so) */
        assert_true(u->up_to_ns > an_whatif_saving(m, AN_WI_INPUT_WORKERS) + 30 * MS);
        assert_true(u->up_to_ns > f->saving_ns);
    }
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* A loop that loads each batch for 4 ms and runs 1 ms of kernels, every third step first
 * uploading three batches (1.5 ms on the GPU), and reads the loss every third step: the
 * read waits for three steps' work, issued over two loads. copy_stream: the upload on a
 * stream of its own, the read a context sync (every stream). */
static void reads_every_third_step(struct synth *s, int copy_stream)
{
    synth_alloc(s, 64ull << 20, 0);
    for (unsigned i = 0; i < 60; i++) {
        synth_idle(s, 4 * MS);
        if (i % 3 == 0) {
            synth_h2d(s, 3u << 20, 1500 * US, 0);
            if (copy_stream)
                s->ev[s->n - 1].stream = 2;
        }
        for (unsigned k = 0; k < 2; k++)
            synth_launch(s, 5 * US, 500 * US);
        if (i % 3 != 2)
            continue;
        if (!copy_stream) {
            synth_item(s);
            continue;
        }
        uint64_t wait = s->gpu_end > s->now ? s->gpu_end - s->now : 0;
        synth_call(s, AN_SYNC, GW_API_cuCtxSynchronize, wait + 2 * US,
                   AN_F_DRAINS | AN_F_ALL_STREAMS);
    }
    synth_stream_sync(s);
}

/* Host-only, the read proves three steps' work and not when it ran: busy from the first
 * upload on (the floor's replay), the workers hide little, the GPU taken busy through two
 * of the three loads. At its least (from the last step's calls on: replay.h, AN_WI_LEAST)
 * the workers hide the loads whole. The GPU's records tell: each step's work ran during
 * the next load, and the workers' saving lies between the floor and the ceiling said
 * (random draws 162, 169, 182 and 191: floors of 44-66 ms, where the users' workers gained
 * 143-358 ms). A stream of its own for the uploads and a context sync say the same: the
 * stream that ended last may be either. */
static void work_a_read_waits_for_over_loads(void **state)
{
    (void)state;
    uint64_t timeline = 0, ceiling[2] = {0, 0};
    for (int mode = 0; mode < 3; mode++) {
        int gpu = mode == 0, copy_stream = mode == 2;
        struct synth s = {.gpu_records = gpu, .now = 1000 * MS};
        reads_every_third_step(&s, copy_stream);
        struct an_model *m;
        struct an_findings out = {0};
        const struct an_finding *f = run(&s, &m, &out, 8);
        assert_non_null(f);
        assert_string_equal(f->id, "input_pipeline");
        if (gpu) {
            assert_int_equal(out.nunproven, 0);
            timeline = f->saving_ns;
            /* 60 loads of 4 ms hidden but for the GPU's 1.5 ms a step (and the reads'
             * waits, every third step, no longer after a load) */
            assert_true(timeline > 150 * MS && timeline < 190 * MS);
        } else {
            const struct an_unproven *u = said_between(&out, m, f);
            assert_true(f->saving_ns < timeline / 2);
            assert_true(u->up_to_ns >= timeline);
            ceiling[copy_stream] = u->up_to_ns;
        }
        an_findings_free(&out);
        an_model_free(m);
        synth_free(&s);
    }
    uint64_t lo = ceiling[0] < ceiling[1] ? ceiling[0] : ceiling[1];
    uint64_t hi = ceiling[0] < ceiling[1] ? ceiling[1] : ceiling[0];
    assert_true(hi - lo < hi / 20);
}

/* Host-only, a loop that uploads six steps' batches at once and reads its loss every sixth
 * step, the read waiting a little for the last kernels (under 1 % of the loop: the waits
 * prove no load's idle, AN_INPUT_WAITS_PROVE). That wait proves the six steps' work done
 * by then, not when it ran: the floor's replay has the GPU busy from the upload on,
 * through all six loads, and the workers hide nothing; at its least that work ran after
 * the last step's calls, and the workers hide the loads. The ceiling is said even where
 * the floor makes no finding (random draw 243: "No findings" and nothing said, where four
 * workers gained 257 ms of 592). */
static void ceiling_without_a_floor(void **state)
{
    (void)state;
    struct synth s = {.now = 1000 * MS};
    synth_alloc(&s, 64ull << 20, 0);
    for (unsigned i = 0; i < 60; i++) {  /* (six steps' batches uploaded before the first) */
        if (i % 6 == 0)
            synth_h2d(&s, 6u << 20, 3 * MS, 0);
        synth_idle(&s, 4 * MS);
        for (unsigned k = 0; k < 2; k++)
            synth_launch(&s, 5 * US, 50 * US);
        if (i % 6 == 5)
            synth_item(&s);
    }
    synth_stream_sync(&s);
    struct an_model *m;
    struct an_findings out = {0};
    const struct an_finding *f = run(&s, &m, &out, 8);
    assert_null(f);
    assert_int_equal(an_whatif_saving(m, AN_WI_INPUT_WORKERS), 0);
    assert_int_equal(out.nunproven, 1);
    const struct an_unproven *u = &out.unproven[0];
    assert_string_equal(u->id, "input_pipeline");
    assert_int_equal(u->proven_ns, 0);
    assert_int_equal(u->up_to_ns, an_replay_ceiling(&m->replay, AN_WI_INPUT_WORKERS));
    /* 60 loads of 4 ms, all but the GPU's 1 ms a step and a batch's upload hidden */
    assert_true(u->up_to_ns > 180 * MS && u->up_to_ns < 240 * MS);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* The loading thread's waits for the GPU in the workers world (replay.h, loader_wait_ns):
 * where workers load, a wait for a batch counts too, as far as the GPU ran work through it
 * that the thread's next wait waited for (replay.c, spun_through). Each step loads 4 ms on
 * the thread, then waits for the GPU (`back` steps' work ago), launches 3 ms of kernels.
 * One worker (2 CPUs) loads as long: the thread waits about 4 ms for each batch while the
 * previous step's kernels run 3 ms of it. A wait for them spins through those 3 ms where
 * the batch is ready; one for the work of two steps back, done long before, through none
 * (calibration's input_off_cpu). */
static void batch_waits_spun_through(void **state, unsigned back)
{
    (void)state;
    struct synth s = {.gpu_records = 1};
    synth_alloc(&s, 64ull << 20, 0);
    for (unsigned i = 0; i < 40; i++) {
        synth_idle(&s, 4 * MS);
        synth_h2d(&s, 1u << 20, 100 * US, 0);
        if (i >= back) {
            struct an_ev *e = synth_call(&s, AN_SYNC, GW_API_cuEventSynchronize, 2 * US,
                                         AN_F_DRAINS);
            e->key = i + 1 - back;
        }
        for (unsigned k = 0; k < 3; k++)
            synth_launch(&s, 5 * US, 1 * MS);
        synth_call(&s, AN_CALL, GW_API_cuEventRecord, 2 * US, 0)->key = i + 1;
    }
    synth_stream_sync(&s);
    struct an_model *m;
    struct an_findings out = {0};
    run(&s, &m, &out, 2);
    assert_int_equal(m->replay.workers, 1);
    const uint64_t *wait = m->replay.loader_wait_ns;
    int with_workers = an_world_of(1u << AN_WI_INPUT_WORKERS | 1u << AN_WI_LEAST);
    /* as measured the kernels were done by the end of each load: only the last sync
     * waited, for the last step's 3 ms */
    assert_true(wait[AN_WI_AS_MEASURED] > 3 * MS && wait[AN_WI_AS_MEASURED] < 3100 * US);
    if (back == 1) {  /* and 3 ms of each of the 38 batch waits after the first two */
        assert_true(wait[with_workers] - wait[AN_WI_AS_MEASURED] > 38 * 2990 * US);
        assert_true(wait[with_workers] - wait[AN_WI_AS_MEASURED] < 38 * 3010 * US);
    } else {
        assert_int_equal(wait[with_workers], wait[AN_WI_AS_MEASURED]);
    }
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}
static void batch_wait_spun_for_last_step(void **state) { batch_waits_spun_through(state, 1); }
static void batch_wait_not_spun_for_old_work(void **state) { batch_waits_spun_through(state, 2); }

static void partly_proven_host_only(void **state) { partly_proven(state, 0); }
static void partly_proven_gpu_records(void **state) { partly_proven(state, 1); }
static void unproven_host_only(void **state) { unproven_without_waits(state, 0, 0); }
static void proven_by_records(void **state) { unproven_without_waits(state, 1, 0); }
static void proven_by_waits(void **state) { unproven_without_waits(state, 0, 1); }

static void loader_bound_host_only(void **state) { loader_bound(state, 0); }
static void loader_bound_gpu_records(void **state) { loader_bound(state, 1); }

/* The same wait between CUDA graph replays (2 a step, as torch.compile's reduce-overhead
 * mode replays forward and backward): the host's own per-step work is named first. */
static void wait_between_graph_replays(void **state)
{
    (void)state;
    struct synth s = {.gpu_records = 1};
    struct loop L = {.steps = 40, .input_ns = 4 * MS, .graphs = 2, .graph_ns = 500 * US,
                     .kernels = 3, .kernel_ns = 10 * US, .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    struct an_model *m;
    struct an_findings out = {0};
    const struct an_finding *f = run(&s, &m, &out, 8);
    assert_non_null(f);
    assert_string_equal(f->id, "input_pipeline");
    assert_string_equal(f->title, "The GPU waits for the host between CUDA graph replays");
    const struct an_figure *graphs = synth_fig(f, "graph_replays_per_step");
    assert_non_null(graphs);
    assert_true(graphs->value == 2);
    const char *host = strstr(f->change, "py-spy top");
    const char *loader = strstr(f->change, "With a DataLoader, load batches");
    assert_non_null(host);
    assert_non_null(loader);
    assert_true(host < loader);
    assert_non_null(strstr(f->change, "num_workers=7"));
    assert_true(f->saving_ns > 39 * 3900 * US && f->saving_ns < 39 * 4300 * US);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* 0.9 ms with no call is under input_gap_ns: the idle is someone else's (sync bubble). */
static void gap_under_threshold(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop L = {.steps = 40, .input_ns = 900 * US, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    struct an_model *m;
    struct an_findings out = {0};
    assert_null(run(&s, &m, &out, 8));
    assert_true(an_idle_ns(m, &m->steady, AN_CAUSE_SYNC) > 30 * 800 * US);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* 1.2 ms gaps: 2.3 % of a 51 ms step (no finding), 3.8 % of a 31 ms step (finding). */
/* The rule fires exactly when the workers' replayed saving is min_share (thresholds.h)
 * of the replayed run or more: a sweep of GPU work per step that crosses it, both sides
 * seen; without the CPU count, the change gives the formula. */
static void share_around_threshold(void **state)
{
    (void)state;
    int below = 0, above = 0;
    for (unsigned kernels = 4; kernels <= 60; kernels += 2) {
        struct synth s = {0};
        struct loop L = {.steps = 20, .input_ns = 1200 * US, .kernels = kernels,
                         .kernel_ns = 1 * MS, .launch_ns = 5 * US, .item = 1};
        synth_loop(&s, &L);
        struct an_model *m;
        struct an_findings out = {0};
        const struct an_finding *f = run(&s, &m, &out, 0);
        double share;
        int worth;
        if (!synth_fires_at_min_share(m, f, AN_WI_INPUT_WORKERS, &share, &worth))
            fail_msg("%u kernels: saving share %.4f, min_share %.2f, finding %s", kernels,
                     share, m->th.min_share, f ? "yes" : "no");
        if (f && !strstr(f->change, "os.cpu_count() // local_world_size - 1"))
            fail_msg("%u kernels: no formula in %s", kernels, f->change);
        below += !worth;
        above += worth;
        an_findings_free(&out);
        an_model_free(m);
        synth_free(&s);
    }
    assert_true(below > 0 && above > 0);
}

/* A healthy loop (batches ready: 0.2 ms with no call) stalled once for 10 ms, as a
 * process preempted among others on too few CPUs is: an incident, no loader's, whatever
 * share of the run it holds. Stalled every eighth step alike: batch loads that recur, a
 * finding. */
static void stalls(void **state, int gpu)
{
    (void)state;
    for (unsigned every = 0; every <= 8; every += 8) {
        struct synth s = {.gpu_records = gpu};
        struct loop healthy = {.steps = 1, .input_ns = 200 * US, .kernels = 3,
                               .kernel_ns = 1 * MS, .launch_ns = 5 * US, .item = 1};
        struct loop stalled = healthy, first = healthy;
        stalled.input_ns = 10 * MS;
        first.input_ns = 2 * MS;  /* (iter(loader): the workers start there) */
        synth_loop(&s, &first);
        for (unsigned i = 0; i < 40; i++)
            synth_loop(&s, (every ? i % every == 4 : i == 20) ? &stalled : &healthy);
        struct an_model *m;
        struct an_findings out = {0};
        const struct an_finding *f = run(&s, &m, &out, 8);
        /* (once: 10 ms of the run's 138 ms, 7 %) */
        assert_true(an_whatif_share(m, an_whatif_saving(m, AN_WI_INPUT_WORKERS)) >
                    m->th.min_share);
        if (every) {
            assert_non_null(f);
            assert_string_equal(f->id, "input_pipeline");
            /* five stalls of about 10 ms */
            assert_true(f->saving_ns > 5 * 9 * MS && f->saving_ns < 5 * 11 * MS);
        } else {
            assert_null(f);
        }
        an_findings_free(&out);
        an_model_free(m);
        synth_free(&s);
    }
}
static void stalls_host_only(void **state) { stalls(state, 0); }
static void stalls_gpu_records(void **state) { stalls(state, 1); }

/* The loop of loader_bound after a 3 s start (DataLoader workers starting, data loaded)
 * and a first step: that stretch is a pause (pauses.c) of the warm-up, and takes nothing
 * from the steady state's per-step wait. */
static void startup_pause_outside_steady(void **state, int gpu)
{
    (void)state;
    struct synth s = {.gpu_records = gpu};
    struct loop first = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                         .item = 1};
    synth_loop(&s, &first);
    synth_idle(&s, 3000 * MS);
    struct loop L = {.steps = 40, .input_ns = 4 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    struct an_model *m;
    struct an_findings out = {0};
    const struct an_finding *f = run(&s, &m, &out, 8);
    assert_true(m->steady_start > 3000 * MS);
    uint64_t count = 0;
    assert_int_equal(an_pause_ns(m, &count), 3000 * MS + 4 * MS);  /* with step 2's wait */
    assert_int_equal(count, 1);
    assert_int_equal(an_pause_steady_ns(m, &count), 0);
    assert_int_equal(count, 0);
    assert_non_null(f);
    /* 4 ms a load: 39 loads after the pause, the first of which the workers, started by
     * it, cannot have ready: 38 hidden */
    assert_true(f->saving_ns >= 38 * 3950 * US && f->saving_ns <= 38 * 4050 * US);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* A PyTorch program's start-up: 400 stretches of 1.5-5 ms without a call (imports, building
 * the model, cuDNN and cuBLAS handles), an allocation between each, then a loop whose
 * batches are ready (workers, pinned): no stretch before the loop's first iteration (its
 * first wait for the GPU) is a batch load, so DataLoader workers save nothing. Counted as
 * loads, the workers hid them all: 1.3 s "saved" (seen on an H200: healthy.py, 10 % of its
 * steps' time). */
static void startup_stretches_no_batch_loads(void **state, int gpu)
{
    (void)state;
    struct synth s = {.gpu_records = gpu};
    s.now = 1000 * MS;
    for (unsigned i = 0; i < 400; i++) {
        synth_idle(&s, (1500 + (i * 37) % 3500) * US);
        synth_alloc(&s, 1ull << 20, 0);
    }
    struct loop L = {.steps = 100, .kernels = 20, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1, .item_every = 50};
    synth_loop(&s, &L);
    struct an_model *m;
    struct an_findings out = {0};
    assert_null(run(&s, &m, &out, 16));
    assert_int_equal(m->replay.loads, 0);
    assert_int_equal(an_whatif_saving(m, AN_WI_INPUT_WORKERS), 0);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

static void startup_stretches_host_only(void **state) { startup_stretches_no_batch_loads(state, 0); }
static void startup_stretches_gpu_records(void **state) { startup_stretches_no_batch_loads(state, 1); }

static void startup_pause_host_only(void **state) { startup_pause_outside_steady(state, 0); }
static void startup_pause_gpu_records(void **state) { startup_pause_outside_steady(state, 1); }

/* A batch reaches the GPU by an upload that waits on no read-back (issue 36 C9): host work
 * after loss.item() in a loop that uploads nothing is no batch load, also where the model's
 * weights went up once at start-up, as every PyTorch program's do (module.to("cuda"): on an
 * H200, per_step_sync.py's 10 start-up uploads let its Python after each .item() rank
 * input_pipeline first at 33 %, no workers change being possible); with a batch uploaded
 * each step the same stretch may be one (without NVTX the two look alike); and the stretch
 * between a 16 MiB read-back and the upload of its result (an optimizer step offloaded to
 * the CPU) uses what was read: no batch load either. */
static void readback_consumers_are_no_batch_loads(void **state)
{
    (void)state;
    /* uploads: 0 none, 1 the weights once at start-up, 2 a batch every step */
    for (int uploads = 0; uploads < 3; uploads++) {
        struct synth s = {.gpu_records = 1};
        struct loop L = {.steps = 40, .kernels = 40, .kernel_ns = 50 * US, .launch_ns = 5 * US,
                         .item = 1, .after_item_ns = 3 * MS, .h2d_bytes = uploads == 2 ? 65536 : 0,
                         .h2d_ns = 5 * US};
        s.now = 1000 * MS;
        synth_alloc(&s, 64ull << 20, 0);
        for (int k = 0; uploads == 1 && k < 10; k++)
            synth_h2d(&s, 8 << 20, 1 * MS, 1);
        synth_idle(&s, 200 * MS);  /* building the optimizer, the first batch */
        synth_loop(&s, &L);
        struct an_model *m;
        struct an_findings out = {0};
        const struct an_finding *f = run(&s, &m, &out, 8);
        if (uploads == 2) {
            assert_non_null(f);
        } else {
            assert_null(f);
            /* nor a pair: the workers change is moot beside any other */
            for (int w = AN_WI_NO_SYNC; w < AN_WI_COUNT; w++)
                assert_int_equal(an_world_saving(m, 1u << AN_WI_INPUT_WORKERS | 1u << w),
                                 w == AN_WI_INPUT_WORKERS ? 0 : an_whatif_saving(m, (enum an_whatif)w));
            assert_int_equal(m->steady.uploads, 0);
            assert_int_equal(m->total.uploads, uploads ? 10 : 0);
        }
        an_findings_free(&out);
        an_model_free(m);
        synth_free(&s);
    }
    struct synth s = {.gpu_records = 1};
    s.now = 1000 * MS;
    synth_alloc(&s, 64ull << 20, 0);
    for (int i = 0; i < 40; i++) {
        for (int k = 0; k < 4; k++)
            synth_launch(&s, 5 * US, 500 * US);
        uint64_t issued = s.now;  /* the gradients, read back to pageable memory */
        synth_gpu(&s, AN_GPU_COPY, issued, 2 * MS, GW_COPY_DTOH, GW_HOST_PAGEABLE, 16 << 20);
        struct an_ev *e = synth_call(&s, AN_COPY, GW_API_cuMemcpyDtoH_v2, s.gpu_end - issued,
                                     AN_F_BLOCKING | AN_F_DRAINS);
        e->dir = GW_COPY_DTOH;
        e->host_kind = GW_HOST_PAGEABLE;
        e->bytes = 16 << 20;
        synth_idle(&s, 4 * MS);  /* the optimizer step on the CPU */
        synth_h2d(&s, 16 << 20, 2 * MS, 1);  /* the parameters, back */
    }
    synth_stream_sync(&s);
    struct an_model *m;
    struct an_findings out = {0};
    assert_null(run(&s, &m, &out, 8));
    assert_int_equal(m->replay.loads, 0);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* Batches that take 100 ms or more each to make (big images, video, heavy augmentation):
 * a long stretch every iteration is the input's rhythm, not a pause of the loop, and the
 * workers take it over like a short one. Two shapes: every batch 150 ms; batches of 60 and
 * 180 ms by turns. (Under pause_min_ns only, an H200 loop whose batches took 85-160 ms kept
 * the longer ones in every world: 57 % predicted where 8 workers gained 85 %.) */
static void slow_batches_over_pause_min(void **state, int gpu, int alternate)
{
    (void)state;
    struct synth s = {.gpu_records = gpu};
    uint64_t loads = 0;
    for (int i = 0; i < 30; i++) {
        uint64_t input = alternate ? (i % 2 ? 180 * MS : 60 * MS) : 150 * MS;
        struct loop L = {.steps = 1, .input_ns = input, .kernels = 3, .kernel_ns = 5 * MS,
                         .launch_ns = 5 * US, .item = 1};
        synth_loop(&s, &L);
        loads += input;
    }
    struct an_model *m;
    struct an_findings out = {0};
    const struct an_finding *f = run(&s, &m, &out, 8);
    assert_non_null(f);
    assert_string_equal(f->id, "input_pipeline");
    assert_int_equal(m->replay.pauses, 0);
    /* 7 workers make a batch every 21 ms at most (26 ms at most by turns): the steps'
     * 15 ms of kernels and what is left of the loads; the saving is most of the loads
     * after the first (which the loop waits for whole) */
    assert_true(f->saving_ns > (loads - 180 * MS) * 8 / 10);
    assert_true(f->saving_ns < loads);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

static void slow_batches_host_only(void **state) { slow_batches_over_pause_min(state, 0, 0); }
static void slow_batches_gpu_records(void **state) { slow_batches_over_pause_min(state, 1, 0); }
static void slow_batches_by_turns(void **state) { slow_batches_over_pause_min(state, 1, 1); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loader_bound_host_only),
        cmocka_unit_test(unproven_host_only),
        cmocka_unit_test(ceiling_without_a_floor),
        cmocka_unit_test(batch_wait_spun_for_last_step),
        cmocka_unit_test(batch_wait_not_spun_for_old_work),
        cmocka_unit_test(partly_proven_host_only),
        cmocka_unit_test(work_a_read_waits_for_over_loads),
        cmocka_unit_test(partly_proven_gpu_records),
        cmocka_unit_test(proven_by_records),
        cmocka_unit_test(proven_by_waits),
        cmocka_unit_test(cpu_samples_choose_the_change),
        cmocka_unit_test(loader_bound_gpu_records),
        cmocka_unit_test(wait_between_graph_replays),
        cmocka_unit_test(gap_under_threshold),
        cmocka_unit_test(share_around_threshold),
        cmocka_unit_test(stalls_host_only),
        cmocka_unit_test(stalls_gpu_records),
        cmocka_unit_test(startup_pause_host_only),
        cmocka_unit_test(startup_pause_gpu_records),
        cmocka_unit_test(startup_stretches_host_only),
        cmocka_unit_test(startup_stretches_gpu_records),
        cmocka_unit_test(readback_consumers_are_no_batch_loads),
        cmocka_unit_test(slow_batches_host_only),
        cmocka_unit_test(slow_batches_gpu_records),
        cmocka_unit_test(slow_batches_by_turns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
