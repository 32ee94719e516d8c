/* The report for people: a short summary, the findings ranked, then the details. */
#include <inttypes.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"
#include "text_out.h"

#define WIDTH 96

/* Writes text wrapped at WIDTH columns; the first line starts at column col, the others
 * are indented by `indent` spaces. */
static void wrap(FILE *out, const char *text, size_t col, size_t indent)
{
    int first = 1;
    for (const char *p = text;;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        size_t len = (size_t)(p - w);
        if (!first) {
            if (col + 1 + len > WIDTH) {
                fprintf(out, "\n%*s", (int)indent, "");
                col = indent;
            } else {
                fputc(' ', out);
                col++;
            }
        }
        fwrite(w, 1, len, out);
        col += len;
        first = 0;
    }
    fputc('\n', out);
}

static const struct an_model *primary(const struct an_run *run)
{
    if (!run->active)
        return NULL;
    return run->traces[run->primary].model;
}

static void header_line(FILE *out, const struct an_run *run)
{
    size_t readable = run->ntraces - run->unreadable;
    fprintf(out, "gpuwatch analyze: %zu trace%s, %zu process%s with GPU work", run->ntraces,
            run->ntraces == 1 ? "" : "s", run->active, run->active == 1 ? "" : "es");
    const struct an_model *m = primary(run);
    if (m) {
        const struct gw_file_header *h = &m->header;
        char cap[32];
        an_fmt_bytes(cap, sizeof cap, (double)m->mem.capacity);
        fprintf(out, " (main: pid %" PRIu32 " on ", h->pid);
        gw_put_escaped(out, h->hostname, an_field_len(h->hostname, sizeof h->hostname));
        fputs(", ", out);
        gw_put_escaped(out, h->device_name, an_field_len(h->device_name, sizeof h->device_name));
        fprintf(out, ", %s)", cap);
    }
    fputc('\n', out);
    if (readable < run->ntraces)
        fprintf(out, "  %zu trace%s could not be read (see below)\n", run->ntraces - readable,
                run->ntraces - readable == 1 ? "" : "s");
    if (an_run_from_profiler(run)) {
        fputs("Source: ", out);
        wrap(out, an_profiler_source(), 8, 8);
    }
    if (!m)
        return;
    if (run->gpu_timeline) {
        fprintf(out, "GPU timeline: from CUPTI activity records\n");
    } else if (m->gpu_sampled) {
        char covered[32], wall[32];
        an_fmt_ns(covered, sizeof covered, (double)m->gpu_window_ns);
        an_fmt_ns(wall, sizeof wall, (double)m->wall_ns);
        fprintf(out, "GPU timeline: sampled (the program's record rate was past what a whole "
                     "timeline may cost): %" PRIu64 " window%s of CUPTI records covered %s of "
                     "%s; the GPU was busy %.0f%% of them. Idle time, its causes and the "
                     "savings come from the host calls (what synchronizing calls prove), GPU "
                     "busy is an upper bound; GPUWATCH_TIMELINE=full records it all\n",
                m->gpu_windows, m->gpu_windows == 1 ? "" : "s", covered, wall,
                m->gpu_window_ns ? 100.0 * (double)m->gpu_window_busy_ns /
                                       (double)m->gpu_window_ns
                                 : 0.0);
    } else if (m->gpu_cut_ns) {
        char at[32], cut[32];
        an_fmt_ns(at, sizeof at, (double)(m->gpu_records_end - m->first_ts));
        an_fmt_ns(cut, sizeof cut, (double)m->gpu_cut_ns);
        fprintf(out, "GPU timeline: inferred from host calls: CUPTI's records stop %s into the "
                     "run, %s before the program's last GPU work (another profiler such as "
                     "torch.profiler or Nsight Systems took CUPTI's activity buffers, or the "
                     "process died before its last flush): idle time is what synchronizing "
                     "calls prove, GPU busy an upper bound\n", at, cut);
    } else {
        const char *why = gw_cupti_status_name(m->header.cupti_status);
        fprintf(out, "GPU timeline: inferred from host calls (CUPTI %s", why ? why : "?");
        size_t rl = an_field_len(m->header.cupti_reason, sizeof m->header.cupti_reason);
        if (rl) {
            fputs(": ", out);
            gw_put_escaped(out, m->header.cupti_reason, rl);
        }
        fprintf(out, "): idle time is what synchronizing calls prove, GPU busy an upper bound\n");
    }
}

static void summary(FILE *out, const struct an_run *run)
{
    const struct an_model *m = primary(run);
    char buf[32], buf2[32];
    fprintf(out, "\nSummary\n");
    if (!m) {
        fprintf(out, "  no process issued GPU work: nothing to analyze\n");
        return;
    }
    an_fmt_ns(buf, sizeof buf, (double)m->wall_ns);
    fprintf(out, "  wall          %s", buf);
    if (run->active > 1) {
        an_fmt_ns(buf, sizeof buf, (double)run->wall_ns);
        fprintf(out, " (main process; %s for all %zu)", buf, run->active);
    }
    uint64_t busy = an_busy_ns(m, &m->total, m->wall_ns);
    an_fmt_ns(buf, sizeof buf, (double)busy);
    fprintf(out, "\n  GPU busy      %s%s, utilization %.0f%%%s", m->gpu_timeline ? "" : "at most ",
            buf, an_gpu_util(m) * 100, m->gpu_timeline ? "" : " at most");
    if (m->steps.steady)
        fprintf(out, " (steady state %.0f%%)", an_steady_util(m) * 100);
    fputc('\n', out);
    const struct an_steps *s = &m->steps;
    if (s->steady) {
        an_fmt_ns(buf, sizeof buf, (double)s->median_ns);
        an_fmt_ns(buf2, sizeof buf2, (double)s->p90_ns);
        fprintf(out, "  steps         %" PRIu64 " (%" PRIu64 " warm-up, %" PRIu64
                " steady), step time %s median, %s p90; marked by %s\n",
                s->count, s->warmup, s->steady, buf, buf2, s->marker);
        an_fmt_ns(buf, sizeof buf, (double)s->warmup_ns);
        fprintf(out, "  %-13s %s before the steady state (one-off: findings rank the steady "
                     "state)\n", s->warmup ? "warm-up" : "start-up", buf);
    } else {
        fprintf(out, "  steps         none found (no NVTX step range, no repeating pattern): "
                     "figures are over the whole run\n");
    }
    if (m->py.present)
        fprintf(out, "  python        %s: findings name the lines of calls made %s\n",
                m->py.version[0] ? m->py.version : "(version unknown)",
                m->py.follows_releases
                    ? "holding the GIL or with it released"
                    : "holding the GIL only (this interpreter links libpython statically: "
                      "calls made with the GIL released, as PyTorch's are, get no line)");
    if (m->comm_kernels) {
        char comm[32], exposed[32];
        an_fmt_ns(comm, sizeof comm, (double)m->comm_ns);
        an_fmt_ns(exposed, sizeof exposed, (double)m->comm_exposed_ns);
        fprintf(out, "  collectives   %" PRIu64 " NCCL kernels, %s on the GPU; %s of it exposed "
                     "(no compute kernel beside it: the step waits), %.0f%% overlapped\n",
                m->comm_kernels, comm, exposed, 100.0 * an_comm_overlap_share(m));
    }
    const struct an_run_comm *c = &run->comm;
    if (c->sampled)
        fprintf(out, "  ranks         not lined up: %zu rank%s recorded the GPU timeline in "
                     "windows (sampled past its record rate); the collectives' waits, the "
                     "straggler and exposed communication need it whole: "
                     "GPUWATCH_TIMELINE=full\n",
                c->sampled, c->sampled == 1 ? "" : "s");
    else if (c->candidates >= 2 && c->ranks < 2)
        fprintf(out, "  ranks         not lined up: the %zu ranks ran %" PRIu64 " to %" PRIu64
                     " collectives, not one sequence (groups of their own: tensor, pipeline "
                     "or data parallel; or records lost)\n",
                c->candidates, c->count_min, c->count_max);
    if (c->ranks >= 2) {
        char med[32], p90[32], max[32], residual[32];
        an_fmt_ns(med, sizeof med, (double)c->skew_median_ns);
        an_fmt_ns(p90, sizeof p90, (double)c->skew_p90_ns);
        an_fmt_ns(max, sizeof max, (double)c->skew_max_ns);
        an_fmt_ns(residual, sizeof residual, (double)c->residual_ns);
        fprintf(out, "  ranks         %zu lined up on %" PRIu64 " collectives (%" PRIu64
                     " in the steady state, %" PRIu64 " compared); the last arrives %s after "
                     "the first (median per collective; p90 %s, max %s)\n",
                c->ranks, c->collectives, c->steady_collectives, c->joined, med, p90, max);
        fprintf(out, "  clocks        %u host%s: %s; collective ends agree within %s (p90)\n",
                c->hosts, c->hosts == 1 ? "" : "s",
                c->hosts == 1 ? "one clock" : "aligned on the collectives' ends", residual);
    }
    uint64_t total = 0;
    double hours = 0;
    for (size_t i = 0; i < run->findings.count; i++) {
        if (!run->findings.items[i].risk && run->findings.items[i].saving_ns > total)
            total = run->findings.items[i].saving_ns;
        hours += run->findings.items[i].gpu_hours_saved;
    }
    if (!run->findings.count) {
        fprintf(out, "  findings      none\n");
        return;
    }
    an_fmt_ns(buf, sizeof buf, (double)total);
    fprintf(out, "  findings      %zu; the largest would save up to %s", run->findings.count, buf);
    if (m->wall_ns)
        fprintf(out, " (%.0f%% of wall)", 100.0 * (double)total / (double)m->wall_ns);
    if (run->opt.gpu_price > 0)
        fprintf(out, "; $%.4f at $%.2f per GPU-hour", hours * run->opt.gpu_price,
                run->opt.gpu_price);
    fputc('\n', out);
}

/* "after 1:" the finding's saving replayed on the run with the top finding fixed */
/* The number a time finding is listed under (risks are listed apart, R1, R2 ...). */
static size_t saving_number(const struct an_run *run, const char *id)
{
    size_t n = 0;
    for (size_t i = 0; i < run->findings.count; i++) {
        n += !run->findings.items[i].risk;
        if (!strcmp(run->findings.items[i].id, id))
            return run->findings.items[i].risk ? 0 : n;
    }
    return 0;
}

/* "after 1:" the finding's saving replayed on the run with the top finding fixed */
static void after_line(FILE *out, const struct an_run *run, const struct an_finding *f)
{
    size_t top = f->after_id[0] ? saving_number(run, f->after_id) : 0;
    if (!top)
        return;
    char buf[32];
    an_fmt_ns(buf, sizeof buf, (double)f->after_ns);
    const struct an_model *m = run->traces[run->primary].model;
    if (f->after_ns)
        fprintf(out, "    after %zu:  %s (%.1f%% of wall) once %s is fixed\n", top, buf,
                m && m->wall_ns ? 100.0 * (double)f->after_ns / (double)m->wall_ns : 0.0,
                f->after_id);
    else
        fprintf(out, "    after %zu:  nothing more: fixing %s gives this time back too\n", top,
                f->after_id);
}

/* A finding whose change removes the same wait as another's: either fix is enough. */
static void same_wait_line(FILE *out, const struct an_run *run, const struct an_finding *f)
{
    const struct an_finding *o = an_finding_same_wait(&run->findings, f);
    if (!o)
        return;
    size_t n = 1;  /* its number among the time savings */
    for (const struct an_finding *g = run->findings.items; g < o; g++)
        n += !g->risk;
    char buf[32];
    an_fmt_ns(buf, sizeof buf, (double)o->saving_ns);
    fprintf(out, "    or:       %zu (%s) removes the same wait: %s; either fix alone is enough\n",
            n, o->id, buf);
}

/* When the risk strikes, at the rate the run showed. */
static void strikes_line(FILE *out, const struct an_finding *f)
{
    char buf[32];
    if (f->strikes_s == 0) {
        fprintf(out, "    strikes:  already: allocations failed in this run");
    } else if (f->strikes_s > 0) {
        an_fmt_ns(buf, sizeof buf, f->strikes_s * 1e9);
        fprintf(out, "    strikes:  in about %s at the rate this run showed", buf);
    } else {
        fprintf(out, "    strikes:  when the memory needed grows (a larger input, another "
                     "process); not dated by this run");
    }
    fputc('\n', out);
}

/* The user's lines that cause it, heaviest first; and how much was on threads without
 * Python frames, rather than name a wrong line for it. */
static void say_line(void *user, const char *label, const char *text)
{
    FILE *out = user;
    fprintf(out, "    %s:     ", label);
    wrap(out, text, 14, 14);
}

static void python_lines(FILE *out, const struct an_finding *f)
{
    an_py_cat_sentences(&f->lines, f->lines_cat, say_line, out);
}

static void finding(FILE *out, const struct an_run *run, const struct an_finding *f,
                    const char *number)
{
    fprintf(out, "%2s. %s: ", number, f->id);
    wrap(out, f->title, 6 + strlen(f->id), 6);
    fprintf(out, "    evidence: ");
    wrap(out, f->evidence, 14, 14);
    fprintf(out, "    change:   ");
    wrap(out, f->change, 14, 14);
    python_lines(out, f);
    const char *caveat = an_profiler_caveat(run, f->id);
    if (caveat) {
        char why[512];
        snprintf(why, sizeof why, "confidence lowered: %s", caveat);
        fputs("    caveat:   ", out);
        wrap(out, why, 14, 14);
    }
    if (f->risk) {
        strikes_line(out, f);
    } else {
        char buf[32];
        an_fmt_ns(buf, sizeof buf, (double)f->saving_ns);
        /* a replayed saving is a prediction; the others are upper bounds */
        fprintf(out, "    saves:    %s%s (%.1f%% of wall",
                f->whatif && !f->upper_bound ? (f->lower_bound ? "at least " : "") : "up to ",
                buf,
                f->saving_share * 100);
        if (f->step_share != f->saving_share)
            fprintf(out, ", %.1f%% of step time", f->step_share * 100);
        fputc(')', out);
        if (run->opt.gpu_price > 0)
            fprintf(out, ", $%.4f at $%.2f per GPU-hour",
                    f->gpu_hours_saved * run->opt.gpu_price, run->opt.gpu_price);
        fputc('\n', out);
        after_line(out, run, f);
        same_wait_line(out, run, f);
    }
    if (run->active > 1) {
        fprintf(out, "    seen in:  %u of %zu processes", f->processes, run->active);
        if (f->nranks) {  /* ranks as runs: 0-3, 5, 7-8 */
            fputs(f->nranks > 1 ? ", ranks " : ", rank ", out);
            for (unsigned i = 0; i < f->nranks; i++) {
                unsigned j = i;
                while (j + 1 < f->nranks && f->ranks[j + 1] == f->ranks[j] + 1)
                    j++;
                fprintf(out, "%s%" PRId32, i ? ", " : "", f->ranks[i]);
                if (j > i)
                    fprintf(out, "-%" PRId32, f->ranks[j]);
                i = j;
            }
        }
        if (f->rank >= 0)
            fprintf(out, " (evidence from rank %" PRId32 ", pid %" PRIu32 ")\n", f->rank,
                    f->pid);
        else
            fprintf(out, " (evidence from pid %" PRIu32 ")\n", f->pid);
    }
}

/* The change the replay makes for an idle cause (AN_WI_AS_MEASURED: none). */
static enum an_whatif change_for(enum an_cause c)
{
    switch (c) {
    case AN_CAUSE_INPUT:
        return AN_WI_INPUT_WORKERS;
    case AN_CAUSE_H2D:
        return AN_WI_PINNED_ASYNC;
    case AN_CAUSE_SYNC:
        return AN_WI_NO_SYNC;
    case AN_CAUSE_LAUNCH:
        return AN_WI_GRAPHS;
    case AN_CAUSE_ALLOC:
        return AN_WI_NO_CHURN;
    default:
        return AN_WI_AS_MEASURED;
    }
}

/* No finding: say so, and when the GPU still sat idle a findings' share of the time, on
 * what, and what the change for that gives back here (a DataLoader that no number of this
 * machine's CPUs can speed up, say): idle time is never passed over in silence. */
static void no_findings(FILE *out, const struct an_run *run)
{
    fprintf(out, "\nNo findings: no change gpuwatch replays would save %.0f%% of this run%s.\n",
            run->opt.th.min_share * 100,
            run->findings.nunproven ? " by what the trace proves" : "");
    const struct an_model *m = run->traces[run->primary].model;
    double share;
    int top = m ? an_top_idle_cause(m, m->th.min_share, &share) : -1;
    if (top < 0)
        return;
    fprintf(out, "  The GPU still sat idle %.0f%% of the steady state on %s%s", share * 100,
            an_cause_name((enum an_cause)top), m->gpu_timeline ? "" : " (what host calls prove)");
    enum an_whatif w = change_for((enum an_cause)top);
    if (w != AN_WI_AS_MEASURED && m->replay.done) {
        char back[32];
        an_fmt_ns(back, sizeof back, (double)an_whatif_saving(m, w));
        fprintf(out, ": its change (%s) gives back %s here", an_whatif_name(w), back);
        if (top == AN_CAUSE_INPUT && run->cpus)
            fprintf(out, ", with the %u CPUs this machine has: cheaper batches (decoding, "
                         "augmentation, a cached dataset) or more CPUs are what would",
                    run->cpus);
    }
    fputs(".\n", out);
}

static void findings(FILE *out, const struct an_run *run)
{
    if (!run->active)
        return;
    if (!run->findings.count) {
        no_findings(out, run);
        return;
    }
    size_t risks = 0, savings = 0;
    char number[16];
    for (size_t i = 0; i < run->findings.count; i++) {  /* ranked: risks first */
        const struct an_finding *f = &run->findings.items[i];
        if (f->risk && !risks++)
            fprintf(out, "\nRisks to the run, soonest first\n");
        if (!f->risk && !savings++)
            fprintf(out, "\nFindings, ranked by the time they would save (the what-if "
                         "replay's)\n");
        snprintf(number, sizeof number, f->risk ? "R%zu" : "%zu", f->risk ? risks : savings);
        finding(out, run, f, number);
    }
}

/* What the replay finds and the trace cannot prove (host-only, a loop that never waited for
 * the GPU, or only in some steps): said apart, as an upper bound, so that "No findings", or
 * the part the waits prove, is not all a host-only trace says of a loop its loads may bound. */
static void unproven(FILE *out, const struct an_run *run)
{
    if (!run->active || !run->findings.nunproven)
        return;
    fputc('\n', out);
    wrap(out, "Not proven by this trace (host-only: the kernels no call of the loop waited for, "
              "and those a wait came for only steps later, ran anything from nothing to all "
              "of the time before it)", 0, 2);
    for (size_t i = 0; i < run->findings.nunproven; i++) {
        const struct an_unproven *u = &run->findings.unproven[i];
        char up_to[32], proven[32], floor[96] = "nothing", text[768];
        an_fmt_ns(up_to, sizeof up_to, (double)u->up_to_ns);
        if (u->proven_ns) {
            an_fmt_ns(proven, sizeof proven, (double)u->proven_ns);
            snprintf(floor, sizeof floor, "the %s the waits prove (the finding above)", proven);
        }
        snprintf(text, sizeof text,
                 "%s: to %s gives back up to %s (%.0f%% of the loop) if the GPU's kernels are "
                 "short, %s if they run as long as the loop; a trace with the GPU's timeline "
                 "(CUPTI: GPUWATCH_CUPTI unset or 1) tells which.",
                 u->id, u->change, up_to, u->share * 100, floor);
        fputs("  ", out);
        wrap(out, text, 2, 4);
    }
}

/* The details: idle by cause, largest intervals, transfers, memory (main process). */
void an_report_details(FILE *out, const struct an_run *run);

/* The steady state's largest idle cause of a process, and its share ("-" when idle is
 * nowhere above 1 %). */
static void top_idle(const struct an_model *m, char *buf, size_t size)
{
    double share;
    int top = an_top_idle_cause(m, 0.01, &share);
    if (top < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%s %.0f%%", an_cause_name((enum an_cause)top), share * 100);
}

/* Several processes (ranks): one line each, so a slow one stands out next to the others. */
static void processes(FILE *out, const struct an_run *run)
{
    if (run->active < 2)
        return;
    fprintf(out, "\nProcesses\n  %-5s %-8s %11s %11s %5s %11s %11s  %-24s %s\n", "rank", "pid",
            "wall", "step", "GPU", "comm exp.", "waited", "most idle (steady)",
            "top finding (its evidence)");
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (!t->active || !t->model)
            continue;
        const struct an_model *m = t->model;
        char rank[16], wall[32], step[32], idle[48];
        if (t->hdr.rank >= 0)
            snprintf(rank, sizeof rank, "%" PRId32, t->hdr.rank);
        else
            snprintf(rank, sizeof rank, "-");
        an_fmt_ns(wall, sizeof wall, (double)m->wall_ns);
        if (m->steps.steady)
            an_fmt_ns(step, sizeof step, (double)m->steps.median_ns);
        else
            snprintf(step, sizeof step, "-");
        top_idle(m, idle, sizeof idle);
        const char *top = "-";
        for (size_t k = 0; k < run->findings.count; k++)
            if (run->findings.items[k].pid == t->hdr.pid) {
                top = run->findings.items[k].id;
                break;
            }
        double util = m->steps.steady ? an_steady_util(m) : an_gpu_util(m);
        /* exposed communication, and the wait for the last rank inside collectives */
        char comm[32] = "-", waited[32] = "-";
        if (m->comm_kernels)
            an_fmt_ns(comm, sizeof comm, (double)m->comm_exposed_ns);
        if (run->comm.ranks >= 2 && an_run_lined_up(t))
            an_fmt_ns(waited, sizeof waited, (double)t->comm_wait_ns);
        fprintf(out, "  %-5s %-8" PRIu32 " %11s %11s %4.0f%% %11s %11s  %-24s %s\n", rank,
                t->hdr.pid, wall, step, util * 100, comm, waited, idle, top);
    }
}

void an_report_text(FILE *out, const struct an_run *run, int details)
{
    header_line(out, run);
    summary(out, run);
    processes(out, run);
    findings(out, run);
    unproven(out, run);
    an_report_cost_text(out, run);
    if (details)
        an_report_details(out, run);
}
