/*
 * One run: every trace file (a directory = every *.gwt in it, the processes of one run) is
 * read once, in file order, through the feeder into its own model; damage is kept to be
 * reported (which file, which bytes); then the rules run per process and findings with
 * the same id are merged across processes. Files share nothing while they are read, so
 * several are read at once (opt.jobs threads); everything after is in file order, so the
 * result does not depend on how many.
 */
#include "analyze.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event_convert.h"
#include "feeder.h"
#include "gw_map.h"
#include "py_lines.h"
#include "rules.h"

void an_options_default(struct an_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->th = AN_THRESHOLDS_DEFAULT;
    opt->window_ns = AN_FEEDER_MAX_WINDOW_NS;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_path(struct an_run *run, size_t *cap, const char *path)
{
    if (run->ntraces == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        struct an_trace *t = realloc(run->traces, ncap * sizeof *t);
        if (!t)
            return -1;
        run->traces = t;
        *cap = ncap;
    }
    struct an_trace *t = &run->traces[run->ntraces];
    memset(t, 0, sizeof *t);
    t->path = strdup(path);
    if (!t->path)
        return -1;
    run->ntraces++;
    return 0;
}

/* A trace by its name in a directory: ours, or a PyTorch profiler (Kineto) trace, which
 * the reader recognises by content. */
static int is_trace_name(const char *name)
{
    return ends_with(name, GW_TRACE_SUFFIX) || ends_with(name, ".json") ||
           ends_with(name, ".json.gz");
}

/* Every *.gwt, *.json and *.json.gz directly in dir, sorted by name. */
static int add_dir(struct an_run *run, size_t *cap, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "gpuwatch analyze: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, ncap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !is_trace_name(e->d_name))
            continue;
        if (n == ncap) {
            ncap = ncap ? ncap * 2 : 16;
            char **grown = realloc(names, ncap * sizeof *grown);
            if (!grown)
                break;
            names = grown;
        }
        names[n] = strdup(e->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (add_path(run, cap, path) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    if (!n)
        fprintf(stderr, "gpuwatch analyze: %s: no %s, .json or .json.gz files in this "
                "directory\n", dir, GW_TRACE_SUFFIX);
    return rc;
}

static const char *resolve(void *user, int what, uint64_t id)
{
    struct gw_reader *r = user;
    if (what == 0) {
        size_t len;
        return gw_reader_string(r, id, &len);
    }
    return gw_reader_kernel_name(r, id);
}

static const struct gw_stack *stack_of(void *user, uint64_t id)
{
    return gw_reader_stack(user, id);
}

/* Damage makes the next record of every thread "after a hole": the time since that
 * thread's previous record proves nothing (see an_ev.after_hole). */
struct holes {
    uint64_t generation;         /* damage reports so far */
    struct gw_map seen;          /* tid -> generation its last record saw */
};

static void on_damage(const struct gw_damage *damage, void *user)
{
    (void)damage;
    ((struct holes *)user)->generation++;
}

static void mark_hole(struct holes *h, const struct gw_event *ev, struct an_ev *a)
{
    uint64_t *seen = gw_map_get(&h->seen, ev->tid);
    if ((seen ? *seen : 0) != h->generation) {
        a->after_hole = 1;
        gw_map_put(&h->seen, ev->tid, h->generation);
    }
}

/* The header as the analysis takes it: --without-cpu-samples drops the CPU count too (a
 * profiler trace records neither). */
static struct gw_file_header header_seen(const struct an_options *opt,
                                         const struct gw_file_header *h)
{
    struct gw_file_header seen = *h;
    if (opt->without_cpu_samples)
        seen.feature_flags &= ~GW_FEAT_CPU_COUNT;
    return seen;
}

/* Reads one file into its own model; touches nothing but *t (the workers' job). */
/* (the header was read by an_run_open: an export may read it meanwhile, so it is left as
 * it is; a file that cannot be opened again now is analyzed as empty) */
static void analyze_pass(const struct an_options *opt, const struct an_thresholds *th,
                         struct an_trace *t, const struct an_worker_budget *budget,
                         const struct an_model *earlier)
{
    struct gw_reader *r;
    char error[sizeof t->error];
    if (!t->readable || gw_reader_open(t->path, &r, error, sizeof error) != 0)
        return;
    struct gw_file_header hdr = header_seen(opt, &t->hdr);
    t->model = an_model_new(th, &hdr);
    if (t->model && opt->cpus)
        an_model_set_cpus(t->model, opt->cpus);
    if (t->model && budget)
        an_model_set_workers(t->model, budget);
    if (t->model && earlier)
        an_model_seed_kernels(t->model, earlier);  /* (out of memory: learnt as it goes) */
    struct an_feeder feeder;
    if (!t->model || an_feeder_init(&feeder, t->model, opt->window_ns,
                                    AN_FEEDER_MAX_WAITING) != 0) {
        snprintf(t->error, sizeof t->error, "%s: out of memory", t->path);
        an_model_free(t->model);
        t->model = NULL;
        gw_reader_close(r);
        return;
    }
    snprintf(t->model->path, sizeof t->model->path, "%s", t->path);
    /* the definitions first: the best memcpy rate the writer timed over its rounds is the
     * replay's from the first event (host_copy.h) */
    gw_reader_load_defs(r);
    an_model_set_host_copy(t->model, gw_reader_host_copy_bps(r), gw_reader_wake_ns(r));
    an_model_set_resolver(t->model, resolve, stack_of, r);
    struct holes holes = {0};
    gw_reader_on_damage(r, on_damage, &holes);
    struct an_py_feed *py = NULL;  /* from the first Python stack on (py_lines.h) */
    struct gw_event ev;
    while (gw_reader_next(r, &ev) > 0) {
        if (opt->without_cpu_samples &&
            (ev.kind == GW_EV_CPU_THREAD || ev.kind == GW_EV_CPU_PROC))
            continue;
        /* converted straight into the reorder window where it can be */
        struct an_ev *a = an_feeder_slot(&feeder);
        if (!an_event_convert(&ev, r, a)) {
            if (!py && an_py_feed_starts_at(ev.kind))
                py = an_py_feed_new();
            if (py)
                an_py_feed_event(py, &ev, NULL);
            continue;
        }
        if (holes.generation)  /* (no cost at all in an undamaged trace) */
            mark_hole(&holes, &ev, a);
        if (py)
            an_py_feed_event(py, &ev, a);
        an_feeder_push_slot(&feeder, a);
    }
    an_py_feed_finish(py, r, &t->model->py);
    gw_map_free(&holes.seen);
    an_feeder_finish(&feeder);
    an_model_set_resolver(t->model, NULL, NULL, t->model->resolve_user);
    t->rs = *gw_reader_stats(r);
    const struct gw_damage *list;
    size_t n = gw_reader_damage(r, &list);
    t->ndamage = n < AN_KEEP_DAMAGE ? n : AN_KEEP_DAMAGE;
    memcpy(t->damage, list, t->ndamage * sizeof *list);
    t->active = t->model->total.work_calls > 0 || t->model->gpu_records > 0;
    gw_reader_close(r);
}

/* A sampled timeline's kernel records reach the replay a reorder window after the calls
 * they time: work drained before the first of them is worth a second pass that knows them
 * from the start, where it is this share of the run's or more (a run of minutes pays
 * nothing: its first 250 ms are under it). */
#define RELEARN_SHARE 0.05
/* The budget's passes at most: the first's workers world (cpus - 1 workers at the thread's
 * speed) tells the budget how long the loop waits for the GPU once the loads leave it; the
 * next ones' (the budget's workers) say it again where they load otherwise, until the
 * budget and the waits agree (an_worker_loading_next; random draws 207 and 232 were
 * predicted 40 % under what two workers gained after two budget passes, within 12 % after
 * four). */
#define BUDGET_PASSES 5

/* The first pass replays cpus - 1 workers at the thread's speed; where the CPU samples say
 * what the CPUs can give them (worker_budget.h) and that differs, the file is read again
 * with the workers a user would start, at the speed the CPUs leave them; so it is where a
 * sampled timeline taught the replay its kernels too late (RELEARN_SHARE). */
/* A loop whose steps are short loads its batches in stretches under input_gap_ns: where
 * the first pass saw such stretches worth a finding (replay.h, short_stretch_ns), the gap
 * becomes a share of the median step's batch (thresholds.h, AN_SHORT_LOAD_STEP_SHARE) in th, and
 * 1 is returned: the file is read again with it. Only where the steps keep a rhythm (the
 * p90 step within twice the median): a median of steps that differ more tells no step's
 * length (a profiler trace whose steps a kernel marked: 2.3 ms median, 608 ms p90). */
static int short_steps_gap(const struct an_model *m, struct an_thresholds *th)
{
    uint64_t step = m->steps.median_ns, wall = m->replay.wall_ns[AN_WI_AS_MEASURED];
    /* a step marked every few iterations (the loss read every second one) holds as many
     * batches, each loaded in its own stretch: the gap is a share of one batch's time
     * (random draw 165: 785 us loads of 2.4 ms iterations, steps of two; workers gained
     * 31 %, and no finding named them) */
    uint64_t steps = m->steps.count, batches = m->replay.iterations, batch = step;
    if (steps && batches > steps)
        batch /= (batches + steps / 2) / steps;
    uint64_t gap = (uint64_t)(AN_SHORT_LOAD_STEP_SHARE * (double)batch);
    if (gap < AN_SHORT_LOAD_MIN_NS)
        gap = AN_SHORT_LOAD_MIN_NS;
    if (!step || !wall || gap >= th->input_gap_ns || m->steps.p90_ns > 2 * step ||
        (double)m->replay.short_stretch_ns < th->min_share * (double)wall)
        return 0;
    th->input_gap_ns = gap;
    return 1;
}

static void analyze_trace(const struct an_options *opt, struct an_trace *t)
{
    struct an_thresholds th = opt->th;
    analyze_pass(opt, &th, t, NULL, NULL);
    if (t->model && short_steps_gap(t->model, &th)) {
        an_model_free(t->model);
        t->model = NULL;
        analyze_pass(opt, &th, t, NULL, NULL);
    }
    struct gw_file_header hdr = header_seen(opt, &t->hdr);
    unsigned cpus = opt->cpus ? opt->cpus
                    : (hdr.feature_flags & GW_FEAT_CPU_COUNT) ? hdr.cpus_usable
                                                            : 0;
    /* (another pass where the latest workers world waited for the GPU otherwise than the
     * one before, and the budget moves by it: worker_budget.c, spin_then, and
     * an_worker_loading_next; a pass after one that learnt the kernels' times is seeded
     * with them too) */
    int seeded = 0, tried = 0;
    double replayed[BUDGET_PASSES], left[BUDGET_PASSES];
    for (int pass = 2; pass <= BUDGET_PASSES; pass++) {
        struct an_worker_budget budget;
        struct an_model *previous = t->model;
        if (!previous)
            return;
        int budgeted = an_worker_budget(previous, cpus, &budget);
        if (budgeted && budget.workers && budget.load_cpu > 0.05) {
            replayed[tried] = previous->replay.workers * previous->replay.worker_speed;
            left[tried++] = budget.loading;
            an_worker_budget_at(&budget, cpus, an_worker_loading_next(replayed, left, tried));
        }
        /* (within 3 % of the speed replayed, or 0.01, the pass would change nothing the
         * findings say) */
        double moved = budget.speed - previous->replay.worker_speed, close =
            previous->replay.worker_speed * 0.03 > 0.01 ? previous->replay.worker_speed * 0.03
                                                         : 0.01;
        int rebudget = budgeted && (budget.replayed != previous->replay.workers ||
                                    moved <= -close || moved >= close);
        int relearn = pass == 2 && previous->kernel_time.count &&
                      (double)previous->replay.ops_unlearnt >=
                          RELEARN_SHARE * (double)previous->replay.ops_virtual;
        if (!rebudget && !relearn)
            return;
        seeded |= relearn;
        t->model = NULL;
        analyze_pass(opt, &th, t, budgeted ? &budget : NULL, seeded ? previous : NULL);
        if (!t->model) {
            t->model = previous;
            return;
        }
        an_model_free(previous);
    }
}

struct workers {
    struct an_run *run;
    size_t next;                 /* the next file to take */
    pthread_mutex_t lock;
};

static void *worker(void *arg)
{
    struct workers *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        size_t i = w->next++;
        pthread_mutex_unlock(&w->lock);
        if (i >= w->run->ntraces)
            return NULL;
        analyze_trace(&w->run->opt, &w->run->traces[i]);
    }
}

/* Every file, opt.jobs at a time (this thread is one of them). */
static void analyze_all(struct an_run *run)
{
    unsigned jobs = run->opt.jobs;
    if (!jobs) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n > 0 ? (unsigned)n : 1;
    }
    if (jobs > run->ntraces)
        jobs = (unsigned)run->ntraces;
    struct workers w = {.run = run};
    pthread_mutex_init(&w.lock, NULL);
    pthread_t threads[AN_MAX_JOBS];
    unsigned started = 0;
    while (started + 1 < jobs && started < sizeof threads / sizeof threads[0] &&
           pthread_create(&threads[started], NULL, worker, &w) == 0)
        started++;  /* (a thread that cannot start leaves its files to the others) */
    worker(&w);
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&w.lock);
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        run->unreadable += !t->readable;
        run->damage_reports += t->rs.damage_reports;
        run->damaged_bytes += t->rs.damaged_bytes;
    }
}

/* Processes of the run on the same host with a local rank: they share its CPUs. */
static unsigned local_world(const struct an_run *run, const struct an_trace *t)
{
    if (t->hdr.local_rank < 0)
        return 1;
    unsigned n = 0;
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *o = &run->traces[i];
        n += o->readable && o->active && o->hdr.local_rank >= 0 &&
             an_same_host(o, t);
    }
    return n ? n : 1;
}

const char *an_cpus_source_name(enum an_cpus_source source)
{
    switch (source) {
    case AN_CPUS_OPTION: return "option";
    case AN_CPUS_TRACE: return "trace";
    case AN_CPUS_HERE: return "this machine";
    default: return "unknown";
    }
}

static void cpu_count(struct an_run *run, const struct an_trace *t)
{
    if (run->opt.cpus) {
        run->cpus = run->opt.cpus;
        run->cpus_source = AN_CPUS_OPTION;
        return;
    }
    if ((t->hdr.feature_flags & GW_FEAT_CPU_COUNT) && t->hdr.cpus_usable) {
        run->cpus = t->hdr.cpus_usable;
        run->cpus_source = AN_CPUS_TRACE;
        return;
    }
    char here[256] = "";
    if (gethostname(here, sizeof here - 1) != 0)
        return;
    if (strncmp(here, t->hdr.hostname, sizeof t->hdr.hostname) != 0)
        return;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0) {
        run->cpus = (unsigned)n;
        run->cpus_source = AN_CPUS_HERE;
    }
}

/* Keeps one finding per id: the evidence of the process where it saves most, and the
 * ranks it holds on. */
static void merge_finding(struct an_run *run, const struct an_trace *t, struct an_finding *f)
{
    f->pid = t->hdr.pid;
    f->rank = t->hdr.rank;
    f->gpu_hours_saved = (double)f->saving_ns / 3.6e12;
    f->nranks = 0;
    an_finding_add_rank(f, t->hdr.rank);
    for (size_t i = 0; i < run->findings.count; i++) {
        struct an_finding *g = &run->findings.items[i];
        if (strcmp(g->id, f->id))
            continue;
        unsigned processes = g->processes + 1;
        double hours = g->gpu_hours_saved + f->gpu_hours_saved;
        int32_t ranks[AN_KEEP_RANKS];
        unsigned nranks = g->nranks;
        memcpy(ranks, g->ranks, sizeof ranks);
        if (f->saving_ns > g->saving_ns)
            *g = *f;
        g->processes = processes;
        g->gpu_hours_saved = hours;
        memcpy(g->ranks, ranks, sizeof ranks);
        g->nranks = nranks;
        an_finding_add_rank(g, t->hdr.rank);
        return;
    }
    struct an_finding *g = an_finding_add(&run->findings, f->id);
    if (g)
        *g = *f;
}

/* Once the ranks' collectives are lined up, each rank's exposed communication less its
 * wait for the last rank, which overlap cannot hide (the straggler finding has it). */
static void exposed_comm_lined_up(struct an_run *run)
{
    if (run->comm.ranks < 2)
        return;
    an_finding_remove(&run->findings, "exposed_communication");
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (!an_run_lined_up(t))
            continue;
        struct an_findings mine = {0};
        an_rule_exposed_comm_waited(t->model, t->comm_wait_ns, &mine);
        if (mine.count)
            merge_finding(run, t, &mine.items[0]);
        an_findings_free(&mine);
    }
}

/* Trace time to CLOCK_REALTIME, saturating (the offset of a corrupt header is anything). */
static int64_t to_realtime(uint64_t ts, int64_t offset)
{
    int64_t t = ts > INT64_MAX ? INT64_MAX : (int64_t)ts, r;
    if (__builtin_add_overflow(t, offset, &r))
        r = offset < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

static void run_figures(struct an_run *run)
{
    int64_t first = 0, last = 0;
    int any = 0, all_gpu = 1;
    uint64_t best = 0;
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (!t->model || !t->active)
            continue;
        const struct an_model *m = t->model;
        run->busy_ns += an_busy_ns(m, &m->total, m->wall_ns);
        run->span_ns += m->wall_ns;
        all_gpu &= m->gpu_timeline;
        uint64_t work = m->total.work_calls + m->gpu_records;
        if (work > best) {
            best = work;
            run->primary = i;
        }
        int64_t a = to_realtime(m->first_ts, t->hdr.realtime_minus_trace_ns);
        int64_t b = to_realtime(m->last_ts, t->hdr.realtime_minus_trace_ns);
        if (!any || a < first)
            first = a;
        if (!any || b > last)
            last = b;
        any = 1;
    }
    run->gpu_timeline = any && all_gpu;
    run->wall_ns = any && last > first ? (uint64_t)last - (uint64_t)first : 0;
}

double an_run_util(const struct an_run *run)
{
    return run->span_ns ? (double)run->busy_ns / (double)run->span_ns : 0;
}

int an_run_open(struct an_run *run, char *const *paths, int npaths,
                const struct an_options *opt)
{
    memset(run, 0, sizeof *run);
    run->opt = *opt;
    size_t cap = 0;
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
            add_dir(run, &cap, paths[i]);
        else
            add_path(run, &cap, paths[i]);
    }
    if (!run->ntraces)
        return -1;
    /* Files analyzed one after another each free megabytes of state at their end: kept in
     * the heap for the next file rather than unmapped and faulted in again (a fifth of the
     * time of 64 rank files, bench/bench_ranks.sh). One file keeps glibc's default, which
     * gives that memory back. (Set here, before any thread of ours starts.) */
    if (run->ntraces > 1) {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
    }
    for (size_t i = 0; i < run->ntraces; i++) {  /* each file's header */
        struct an_trace *t = &run->traces[i];
        struct gw_reader *r;
        if (gw_reader_open(t->path, &r, t->error, sizeof t->error) != 0)
            continue;
        t->readable = 1;
        t->bytes = gw_reader_file_size(r);
        t->hdr = *gw_reader_header(r);
        gw_reader_close(r);
    }
    return 0;
}

int an_run_paths(struct an_run *run, char *const *paths, int npaths,
                 const struct an_options *opt)
{
    if (an_run_open(run, paths, npaths, opt) != 0)
        return -1;
    an_run_analyze(run);
    return 0;
}

void an_run_analyze(struct an_run *run)
{
    analyze_all(run);
    run_figures(run);
    for (size_t i = 0; i < run->ntraces; i++) {
        struct an_trace *t = &run->traces[i];
        if (!t->model || !t->active)
            continue;
        run->active++;
        if (!run->cpus)
            cpu_count(run, t);
        struct an_rule_ctx ctx = {.cpus = run->cpus, .local_world = local_world(run, t)};
        struct an_findings mine = {0};
        an_run_rules(t->model, &ctx, &mine);
        for (size_t k = 0; k < mine.count; k++)
            merge_finding(run, t, &mine.items[k]);
        for (size_t k = 0; k < mine.nunproven; k++) {
            mine.unproven[k].pid = t->hdr.pid;
            mine.unproven[k].rank = t->hdr.rank;
            an_unproven_keep(&run->findings, &mine.unproven[k]);
        }
        an_findings_free(&mine);
    }
    an_run_collectives(run);
    exposed_comm_lined_up(run);
    an_rule_straggler(run);
    an_findings_rank(&run->findings);
}

void an_run_free(struct an_run *run)
{
    for (size_t i = 0; i < run->ntraces; i++) {
        free(run->traces[i].path);
        an_model_free(run->traces[i].model);
    }
    free(run->traces);
    an_findings_free(&run->findings);
    memset(run, 0, sizeof *run);
}
