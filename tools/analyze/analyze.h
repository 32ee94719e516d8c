/*
 * gpuwatch analyze: traces of one run (files, or directories of *.gwt) -> one model per
 * process -> rules -> findings merged across processes and ranked -> text or JSON.
 * Used by `gpuwatch analyze` (cmd_analyze.c) and at the end of `gpuwatch run`.
 */
#ifndef GPUWATCH_ANALYZE_ANALYZE_H
#define GPUWATCH_ANALYZE_ANALYZE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "findings.h"
#include "model.h"
#include "thresholds.h"
#include "trace_reader.h"

#define AN_KEEP_DAMAGE 16

struct an_trace {
    char *path;
    int readable;
    char error[512];
    uint64_t bytes;
    struct gw_file_header hdr;
    struct gw_reader_stats rs;
    struct gw_damage damage[AN_KEEP_DAMAGE];
    size_t ndamage;
    uint64_t reader_late;        /* events out of order beyond the reorder window */
    struct an_model *model;      /* NULL when unreadable */
    int active;                  /* the process issued GPU work (its model is analyzed) */
    /* lined up with the other ranks' collectives (run_collectives.c; 0 when not) */
    uint64_t comm_wait_ns;       /* inside collectives, waiting for the last rank to arrive */
    uint64_t comm_wait_steady_ns;  /* the same in the steady state (the start-up apart) */
    uint64_t comm_last;          /* collectives of the steady state it arrived last at */
    int64_t clock_offset_ns;     /* its host's clock minus the first rank's host's */
};

/* How far the ranks' counts of collectives may differ (share of the largest; 2 at least)
 * and still be one sequence: records lost now and then. */
#define AN_COMM_COUNT_SLACK 0.01

/* The ranks' collectives lined up by number (run_collectives.c). */
struct an_run_comm {
    size_t candidates;           /* ranks with a GPU timeline and collectives */
    size_t sampled;              /* ranks whose timeline was sampled with gaps, when two or
                                    more ranks could be lined up: they are not (their windows
                                    hold different collectives) */
    uint64_t count_min, count_max;  /* their counts of collectives */
    size_t ranks;                /* processes lined up (0: fewer than two had collectives, or
                                    their counts differ: not one sequence) */
    uint64_t collectives;        /* each rank's count (the first rank's) */
    uint64_t steady_collectives; /* of them, in every rank's steady state (all without steps):
                                    what the figures below are over */
    uint64_t joined;             /* of those, kept by every rank and compared */
    /* how far apart the ranks arrive at a collective (the last one's start minus the
     * first's, from their durations: a collective ends on every rank at once) */
    uint64_t skew_median_ns, skew_p90_ns, skew_max_ns;
    size_t straggler;            /* index in run->traces of the rank that arrives last most */
    uint64_t straggler_gain_ns;  /* the job's gain were it to arrive with the next-latest */
    unsigned hosts;              /* distinct host names */
    uint64_t residual_ns;        /* p90 of |a rank's collective end - the first rank's| after
                                    aligning hosts' clocks on them */
};

struct an_options {
    struct an_thresholds th;
    double gpu_price;            /* dollars per GPU hour, 0: no money figures */
    uint64_t window_ns;          /* reorder window */
    unsigned cpus;               /* override the CPU count (0: this machine's, when the
                                    trace was taken here) */
    unsigned jobs;               /* files analyzed at once, one thread each (0: one per
                                    CPU of this machine, up to AN_MAX_JOBS); memory grows
                                    with it */
    int without_cpu_samples;     /* analyze as if the traces had no CPU samples, as a
                                    PyTorch profiler trace has none (--without-cpu-samples:
                                    a .gwt against its Kineto export) */
};
#define AN_MAX_JOBS 64

/* Where an_run.cpus came from, best first. */
enum an_cpus_source {
    AN_CPUS_UNKNOWN = 0,
    AN_CPUS_OPTION,              /* --cpus */
    AN_CPUS_TRACE,               /* the trace header: the CPUs the process could use */
    AN_CPUS_HERE,                /* this machine, the traced one by its host name (a trace
                                    from before the header held the count) */
};
const char *an_cpus_source_name(enum an_cpus_source source);

struct an_run {
    struct an_trace *traces;
    size_t ntraces;
    size_t active;               /* processes analyzed */
    size_t primary;              /* index of the busiest process (most GPU work) */
    struct an_findings findings; /* merged across processes, ranked */
    struct an_options opt;
    unsigned cpus;               /* CPU count used for advice (0 unknown) */
    enum an_cpus_source cpus_source;
    /* run-level figures over the active processes */
    uint64_t wall_ns;            /* union span, aligned on CLOCK_REALTIME */
    uint64_t busy_ns, span_ns;   /* summed busy and wall of active processes */
    int gpu_timeline;            /* all active processes had GPU records */
    uint64_t damaged_bytes, damage_reports, unreadable;
    struct an_run_comm comm;     /* the ranks' collectives lined up */
};

/* Lines up the ranks' collectives into run->comm and each trace's comm_ and clock_ fields. */
void an_run_collectives(struct an_run *run);
/* 1 when traces a and b were written on one host (one monotonic clock, one set of CPUs). */
static inline int an_same_host(const struct an_trace *a, const struct an_trace *b)
{
    return !strncmp(a->hdr.hostname, b->hdr.hostname, sizeof a->hdr.hostname);
}
/* What to add to t's trace clock to read the first trace's: 0 on the same host (one
 * monotonic clock); from another host, through the wall clocks, corrected by the offset
 * the collectives' ends showed. */
int64_t an_run_clock_shift(const struct an_run *run, const struct an_trace *t);
/* 1 when the trace takes part in that: a rank with a GPU timeline and collectives. */
int an_run_lined_up(const struct an_trace *t);
void an_options_default(struct an_options *opt);
/* Expands directories (every *.gwt in them, sorted) and analyzes each file. Returns 0, or
 * -1 when no path could be used (the messages are on stderr). */
int an_run_paths(struct an_run *run, char *const *paths, int npaths,
                 const struct an_options *opt);
/* an_run_paths in two: the files found and their headers read (readable, hdr, bytes, error:
 * what does not change after), then the analysis, which another thread may run while the
 * first reads the files again (gpuwatch export). */
int an_run_open(struct an_run *run, char *const *paths, int npaths,
                const struct an_options *opt);
void an_run_analyze(struct an_run *run);
void an_run_free(struct an_run *run);

void an_report_text(FILE *out, const struct an_run *run, int details);
void an_report_json(FILE *out, const struct an_run *run);
/* report_source.c: what a PyTorch profiler (Kineto) trace lacks. 1 when a trace of the run
 * is one; the caveat of a finding of that rule (NULL when it rests on nothing the trace
 * lacks, or the run has no such trace); the report's sentence that says so. */
int an_run_from_profiler(const struct an_run *run);
const char *an_profiler_caveat(const struct an_run *run, const char *rule);
const char *an_profiler_source(void);

/* Cost (--gpu-price; report_cost.c): GPU-hours of a stretch of one process's wall time (one
 * GPU each), and their price in dollars (0 without a price). */
static inline double an_gpu_hours(double ns)
{
    return ns / 3.6e12;
}
static inline double an_usd(const struct an_run *run, double ns)
{
    return an_gpu_hours(ns) * run->opt.gpu_price;
}
/* The "Cost" section of the text report (nothing without a price): the run, each process
 * (rank), each phase with its idle time's price by cause. */
void an_report_cost_text(FILE *out, const struct an_run *run);
/* JSON: the run's "cost" object, and a process's (docs/analyze-json.md). */
void an_report_cost_json_run(FILE *out, const struct an_run *run);
void an_report_cost_json_process(FILE *out, const struct an_run *run, const struct an_trace *t);

/* --fail-if: parses EXPR (0, or -1 with a message in err), evaluates it (1 holds). */
struct an_condition;
int an_condition_parse(const char *expr, struct an_condition **out, char *err, size_t errlen);
int an_condition_holds(const struct an_condition *c, const struct an_run *run);
void an_condition_free(struct an_condition *c);
/* The metric name (letters, digits, _ and .) that starts a --fail-if comparison at p in
 * expr, copied into name: its length, or 0 with a message naming expr. */
size_t an_condition_name(const char *expr, const char *p, char *name, size_t size, char *err,
                         size_t errlen);
/* The NUMBER[%] that ends a --fail-if comparison, at p in expr: *value (with % a share,
 * *percent 1). 0, or -1 with a message naming expr. */
int an_condition_number(const char *expr, const char *p, double *value, int *percent,
                        char *err, size_t errlen);
/* One line naming the metrics --fail-if knows. */
const char *an_condition_metrics(void);
/* 1 when --fail-if knows the metric; its value for a run (0 when the run has none, as
 * step_ms without steps). */
int an_metric_known(const char *name);
int an_metric_value(const char *name, const struct an_run *run, double *v);

/* Length of a fixed-size header string field up to its NUL (or the whole field). */
static inline size_t an_field_len(const char *field, size_t size)
{
    size_t n = 0;
    while (n < size && field[n])
        n++;
    return n;
}

/* Run-level utilization (busy / wall over the active processes). */
double an_run_util(const struct an_run *run);

#endif
