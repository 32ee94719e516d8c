/* The run's figures as Prometheus / OpenMetrics text (metrics.h). */
#include "metrics.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gpuwatch/trace_format.h"
#include "live_run.h"
#include "trace_reader.h"

struct writer {
    FILE *out;
    int openmetrics;
    struct gw_counter_floor *floor;
    const char *family;      /* the family being written, and whether it is a counter */
    int counter;
};

/* A family's header. name: without "_total"; a counter's samples get it. In the text
 * format 0.0.4 the TYPE names the samples (name_total), in OpenMetrics the family. */
static void family(struct writer *w, const char *name, int counter, const char *help)
{
    const char *suffix = counter && !w->openmetrics ? "_total" : "";
    fprintf(w->out, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix,
            counter ? "counter" : "gauge");
    w->family = name;
    w->counter = counter;
}

static void put_label_value(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        if (s[i] == '\\' || s[i] == '"')
            fputc('\\', out), fputc(s[i], out);
        else if (s[i] == '\n')
            fputs("\\n", out);
        else
            fputc(s[i], out);
    }
}

/* The labels every series of a process carries (and, extra, its own: ",k=\"v\""). */
static void process_labels(char *buf, size_t size, const struct gw_file_header *h)
{
    char host[sizeof h->hostname * 2 + 1];
    FILE *m = fmemopen(host, sizeof host, "w");
    if (!m) {
        buf[0] = 0;
        return;
    }
    put_label_value(m, h->hostname, an_field_len(h->hostname, sizeof h->hostname));
    fputc(0, m);
    fclose(m);
    host[sizeof host - 1] = 0;
    if (h->rank >= 0)
        snprintf(buf, size, "host=\"%s\",pid=\"%" PRIu32 "\",rank=\"%" PRId32 "\"", host, h->pid,
                 h->rank);
    else
        snprintf(buf, size, "host=\"%s\",pid=\"%" PRIu32 "\",rank=\"none\"", host, h->pid);
}

static void sample(struct writer *w, const char *labels, const char *extra, double v)
{
    char key[1024];
    snprintf(key, sizeof key, "%s%s{%s%s}", w->family, w->counter ? "_total" : "", labels,
             extra ? extra : "");
    if (w->counter)
        v = gw_counter_floor(w->floor, key, v);
    if (!isfinite(v))
        v = 0;
    if (v == (double)(int64_t)v && fabs(v) < 9e15)
        fprintf(w->out, "%s %" PRId64 "\n", key, (int64_t)v);
    else
        fprintf(w->out, "%s %.9g\n", key, v);
}

static int active(const struct an_trace *t)
{
    return t->readable && t->model && t->active;
}

/* 1 when trace i is the first analyzed of its host, pid and rank: a copy of a trace, or a
 * pid used again in the directory, would give two series one name and labels, which no
 * scraper takes. The first is exported. */
static int first_of_its_labels(const struct an_run *run, size_t i)
{
    const struct gw_file_header *h = &run->traces[i].hdr;
    for (size_t k = 0; k < i; k++)
        if (active(&run->traces[k]) && run->traces[k].hdr.pid == h->pid &&
            run->traces[k].hdr.rank == h->rank && an_same_host(&run->traces[k], &run->traces[i]))
            return 0;
    return 1;
}

/* For each process analyzed: labels in lab. */
#define EACH_PROCESS(run, t, lab)                                                       \
    for (size_t i_ = 0; i_ < (run)->ntraces; i_++)                                       \
        for (const struct an_trace *t = &(run)->traces[i_];                              \
             t && active(t) && first_of_its_labels(run, i_); t = NULL)                    \
            for (int once_ = (process_labels(lab, sizeof lab, &t->hdr), 1); once_; once_ = 0)

static void time_figures(struct writer *w, const struct an_run *run)
{
    char lab[512], extra[128];
    family(w, "gpuwatch_wall_seconds", 1, "Wall time of the process read so far.");
    EACH_PROCESS(run, t, lab)
        sample(w, lab, NULL, (double)t->model->wall_ns / 1e9);
    family(w, "gpuwatch_gpu_busy_seconds", 1,
           "GPU busy time of the process (from the GPU timeline; without one an upper bound "
           "inferred from host calls), as gpuwatch analyze prints it.");
    EACH_PROCESS(run, t, lab) {
        snprintf(extra, sizeof extra, ",device=\"%" PRId32 "\"", t->hdr.device_ordinal);
        const struct an_model *m = t->model;
        sample(w, lab, extra, (double)an_busy_ns(m, &m->total, m->wall_ns) / 1e9);
    }
    family(w, "gpuwatch_gpu_idle_seconds", 1,
           "GPU idle time of the process by cause, as gpuwatch analyze attributes it.");
    EACH_PROCESS(run, t, lab)
        for (int c = 0; c < AN_CAUSE_COUNT; c++) {
            snprintf(extra, sizeof extra, ",cause=\"%s\"", an_cause_name((enum an_cause)c));
            sample(w, lab, extra, an_idle_ns(t->model, &t->model->total, (enum an_cause)c) / 1e9);
        }
    family(w, "gpuwatch_steps", 1, "Training steps found so far (NVTX ranges or the loop's "
                                   "repeating calls).");
    EACH_PROCESS(run, t, lab)
        sample(w, lab, NULL, (double)t->model->steps.count);
    family(w, "gpuwatch_collective_wait_seconds", 1,
           "Time the rank spent inside collectives waiting for the last rank to arrive.");
    EACH_PROCESS(run, t, lab)
        sample(w, lab, NULL, (double)t->comm_wait_ns / 1e9);
}

static void memory_figures(struct writer *w, const struct an_run *run)
{
    char lab[512], extra[128];
    family(w, "gpuwatch_device_memory_used_bytes", 0,
           "Device memory the process holds now (its allocations).");
    EACH_PROCESS(run, t, lab) {
        snprintf(extra, sizeof extra, ",device=\"%" PRId32 "\"", t->hdr.device_ordinal);
        sample(w, lab, extra, (double)t->model->mem.live_total);
    }
    family(w, "gpuwatch_device_memory_peak_bytes", 0, "Most device memory the process held.");
    EACH_PROCESS(run, t, lab)
        sample(w, lab, NULL, (double)t->model->mem.peak_total);
    family(w, "gpuwatch_device_memory_capacity_bytes", 0, "The device's total memory.");
    EACH_PROCESS(run, t, lab)
        if (t->model->mem.capacity)
            sample(w, lab, NULL, (double)t->model->mem.capacity);
    family(w, "gpuwatch_oom", 1, "Allocations that failed with CUDA_ERROR_OUT_OF_MEMORY.");
    EACH_PROCESS(run, t, lab)
        sample(w, lab, NULL, (double)t->model->mem.ooms);
}

static void call_figures(struct writer *w, const struct an_run *run)
{
    static const struct { int dir; const char *name; } dirs[] = {
        {GW_COPY_HTOD, "htod"}, {GW_COPY_DTOH, "dtoh"}, {GW_COPY_DTOD, "dtod"}};
    static const struct { int kind; const char *name; } kinds[] = {
        {GW_HOST_PAGEABLE, "pageable"}, {GW_HOST_PINNED, "pinned"}, {GW_HOST_NONE, "device"},
        {GW_HOST_MANAGED, "managed"}};
    char lab[512], extra[160];
    family(w, "gpuwatch_copy_bytes", 1, "Bytes copied by direction and host memory kind.");
    EACH_PROCESS(run, t, lab)
        for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++)
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
                snprintf(extra, sizeof extra, ",direction=\"%s\",memory=\"%s\"", dirs[d].name,
                         kinds[k].name);
                sample(w, lab, extra, (double)t->model->xfer[dirs[d].dir][kinds[k].kind].bytes);
            }
    family(w, "gpuwatch_driver_calls", 1, "CUDA driver calls by entry point.");
    EACH_PROCESS(run, t, lab)
        for (unsigned api = 0; api < GW_API_ID_LIMIT; api++) {
            if (!t->model->calls_by_api[api])
                continue;
            const char *name = gw_api_name(api);
            snprintf(extra, sizeof extra, ",api=\"%s\"", name ? name : "unknown");
            sample(w, lab, extra, (double)t->model->calls_by_api[api]);
        }
    family(w, "gpuwatch_lost_events", 1,
           "Records the process could not write (host calls) or CUPTI dropped (GPU records).");
    EACH_PROCESS(run, t, lab)
        sample(w, lab, NULL, (double)(t->rs.lost_events + t->rs.gpu_lost_events));
}

/* The trace exported for a finding: the first analyzed of its process's pid and rank. */
static const struct an_trace *trace_of(const struct an_run *run, uint32_t pid, int32_t rank)
{
    for (size_t i = 0; i < run->ntraces; i++)
        if (active(&run->traces[i]) && run->traces[i].hdr.pid == pid &&
            run->traces[i].hdr.rank == rank)
            return first_of_its_labels(run, i) ? &run->traces[i] : NULL;
    return NULL;
}

/* A sample of a phase: its name (and cause) as labels. */
static void phase_sample(struct writer *w, const char *lab, const struct an_phase *p,
                         const char *cause, double v)
{
    char extra[256];
    FILE *m = fmemopen(extra, sizeof extra, "w");
    if (!m)
        return;
    fputs(",phase=\"", m);
    put_label_value(m, p->name[0] ? p->name : "(unnamed)", sizeof p->name);
    fputc('"', m);
    if (cause)
        fprintf(m, ",cause=\"%s\"", cause);
    fputc(0, m);
    fclose(m);
    extra[sizeof extra - 1] = 0;
    sample(w, lab, extra, v);
}

/* One sample per time-saving finding, labelled by its process and id: its saving as a
 * share of wall time, or (price > 0) in dollars. */
static void finding_samples(struct writer *w, const struct an_run *run, double price)
{
    char lab[512], extra[96];
    for (size_t i = 0; i < run->findings.count; i++) {
        const struct an_finding *f = &run->findings.items[i];
        const struct an_trace *t = trace_of(run, f->pid, f->rank);
        if (!t || f->risk)
            continue;
        process_labels(lab, sizeof lab, &t->hdr);
        snprintf(extra, sizeof extra, ",finding=\"%s\"", f->id);
        sample(w, lab, extra, price > 0 ? f->gpu_hours_saved * price : f->saving_share);
    }
}

static void finding_figures(struct writer *w, const struct an_run *run)
{
    char lab[512];
    family(w, "gpuwatch_finding_saving_ratio", 0,
           "What each finding's change would save, as a share of the process's wall time "
           "(the what-if replay's figure).");
    finding_samples(w, run, 0);
    if (run->opt.gpu_price > 0) {
        family(w, "gpuwatch_finding_saving_dollars", 0,
               "What each finding's change would have saved of the run so far, in dollars "
               "(GPU-hours saved over the processes that show it times the price).");
        finding_samples(w, run, run->opt.gpu_price);
        family(w, "gpuwatch_cost_dollars", 1,
               "What the process's GPU time cost so far: wall hours times the price of a "
               "GPU-hour.");
        EACH_PROCESS(run, t, lab)
            sample(w, lab, NULL, an_usd(run, (double)t->model->wall_ns));
        family(w, "gpuwatch_phase_cost_dollars", 1,
               "What each phase (top-level NVTX range, by name) cost so far.");
        EACH_PROCESS(run, t, lab)
            for (size_t k = 0; k < t->model->phases.count; k++)
                phase_sample(w, lab, &t->model->phases.phase[k], NULL,
                             an_usd(run, (double)t->model->phases.phase[k].ns));
        family(w, "gpuwatch_phase_idle_cost_dollars", 1,
               "What the GPU's idle time in each phase cost, by cause.");
        EACH_PROCESS(run, t, lab)
            for (size_t k = 0; k < t->model->phases.count; k++)
                for (int c = 0; c < AN_CAUSE_COUNT; c++) {
                    const struct an_phase *p = &t->model->phases.phase[k];
                    phase_sample(w, lab, p, an_cause_name((enum an_cause)c),
                                 an_usd(run, an_phase_idle_ns(t->model, p, (enum an_cause)c)));
                }
    }
}

/* A file a process is creating: shorter than a header, young, and what it holds so far
 * the start of one (nothing, or a prefix of the magic). Not damage yet. */
static int being_created(const struct an_trace *t)
{
    struct stat st;
    if (t->readable || stat(t->path, &st) != 0 ||
        (size_t)st.st_size >= sizeof(struct gw_file_header) ||
        time(NULL) - st.st_mtime >= GW_METRICS_YOUNG_S)
        return 0;
    char head[8] = {0};
    FILE *f = fopen(t->path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return !memcmp(head, GW_FILE_MAGIC, n);
}

static void error_figures(struct writer *w, const struct an_run *run)
{
    char lab[512], extra[600];
    family(w, "gpuwatch_trace_errors", 1,
           "Trace files that could not be read (1) or the damage found in them (one per "
           "report, once the process has exited); what is intact is analyzed.");
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (being_created(t))
            continue;
        const char *base = strrchr(t->path, '/');
        base = base ? base + 1 : t->path;
        if (t->readable)
            process_labels(lab, sizeof lab, &t->hdr);
        else
            snprintf(lab, sizeof lab, "host=\"\",pid=\"\",rank=\"none\"");
        FILE *m = fmemopen(extra, sizeof extra, "w");
        if (!m)
            continue;
        fputs(",file=\"", m);
        put_label_value(m, base, strlen(base));
        fputc('"', m);
        fputc(0, m);
        fclose(m);
        extra[sizeof extra - 1] = 0;
        /* A file read while its process writes it can show a chunk missing that is on its
         * way (the reader's "chunk lost" on a live trace): its damage counts once the
         * process has exited. */
        double errors = !t->readable ? 1.0
                        : gw_live_running(t) ? 0.0
                                             : (double)t->rs.damage_reports;
        sample(w, lab, extra, errors);
    }
}

void gw_metrics_write(FILE *out, const struct an_run *run, int openmetrics,
                      struct gw_counter_floor *floor)
{
    struct writer w = {.out = out, .openmetrics = openmetrics, .floor = floor};
    static const struct an_run none;
    if (!run)
        run = &none;
    family(&w, "gpuwatch_processes", 0, "Trace files read, and of them the processes that "
                                        "issued GPU work.");
    fprintf(out, "gpuwatch_processes{state=\"traced\"} %zu\ngpuwatch_processes{state=\"active\"} "
                 "%zu\n",
            run->ntraces, run->active);
    time_figures(&w, run);
    memory_figures(&w, run);
    call_figures(&w, run);
    finding_figures(&w, run);
    error_figures(&w, run);
    if (openmetrics)
        fputs("# EOF\n", out);
}
