/* What the run cost (--gpu-price): the run, each process, each phase (top-level NVTX
 * ranges) and the idle time in it by cause; text and JSON. One GPU per process: a
 * process's GPU-hours are its wall time. */
#include <inttypes.h>
#include <math.h>

#include "analyze.h"
#include "text_out.h"

static int counted(const struct an_trace *t)
{
    return t->readable && t->model && t->active;
}

static double run_wall_ns(const struct an_run *run)
{
    double ns = 0;
    for (size_t i = 0; i < run->ntraces; i++)
        if (counted(&run->traces[i]))
            ns += (double)run->traces[i].model->wall_ns;
    return ns;
}

static void rank_name(char *buf, size_t size, const struct an_trace *t)
{
    if (t->hdr.rank >= 0)
        snprintf(buf, size, "rank %" PRId32, t->hdr.rank);
    else
        snprintf(buf, size, "pid %" PRIu32, t->hdr.pid);
}

void an_report_cost_text(FILE *out, const struct an_run *run)
{
    if (!(run->opt.gpu_price > 0))
        return;
    double wall = run_wall_ns(run);
    fprintf(out, "\nCost at $%.2f per GPU-hour\n", run->opt.gpu_price);
    fprintf(out, "  run           %.6f GPU-hours  $%.4f  (%zu processes)\n", an_gpu_hours(wall),
            an_usd(run, wall), run->active);
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (!counted(t))
            continue;
        const struct an_model *m = t->model;
        char who[32];
        rank_name(who, sizeof who, t);
        double idle = 0;
        for (int c = 0; c < AN_CAUSE_COUNT; c++)
            idle += an_idle_ns(m, &m->total, (enum an_cause)c);
        fprintf(out, "  %-12s  %.6f GPU-hours  $%.4f, idle $%.4f\n", who,
                an_gpu_hours((double)m->wall_ns), an_usd(run, (double)m->wall_ns),
                an_usd(run, idle));
        for (size_t k = 0; k < m->phases.count; k++) {
            const struct an_phase *p = &m->phases.phase[k];
            double pidle = 0;
            for (int c = 0; c < AN_CAUSE_COUNT; c++)
                pidle += an_phase_idle_ns(m, p, (enum an_cause)c);
            fprintf(out, "    phase %-16s %4" PRIu64 "x  %.6f GPU-hours  $%.4f, idle $%.4f",
                    p->name[0] ? p->name : "(unnamed)", p->count, an_gpu_hours((double)p->ns),
                    an_usd(run, (double)p->ns), an_usd(run, pidle));
            const char *sep = ": ";
            for (int c = 0; c < AN_CAUSE_COUNT; c++) {
                double ns = an_phase_idle_ns(m, p, (enum an_cause)c);
                if (an_usd(run, ns) < 0.00005)
                    continue;  /* (what rounds to $0.0000) */
                fprintf(out, "%s%s $%.4f", sep, an_cause_name((enum an_cause)c), an_usd(run, ns));
                sep = ", ";
            }
            fputc('\n', out);
        }
    }
}

static void num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.9g", v);
    else
        fputs("null", out);
}

static void usd(FILE *out, const struct an_run *run, double ns)
{
    if (run->opt.gpu_price > 0)
        num(out, an_usd(run, ns));
    else
        fputs("null", out);
}

void an_report_cost_json_run(FILE *out, const struct an_run *run)
{
    double wall = run_wall_ns(run);
    fputs("\"cost\": {\"gpu_hours\": ", out);
    num(out, an_gpu_hours(wall));
    fputs(", \"usd\": ", out);
    usd(out, run, wall);
    fputc('}', out);
}

static void idle_by_cause(FILE *out, const struct an_run *run, const double *ns, int dollars)
{
    fputc('{', out);
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        fprintf(out, "%s\"%s\": ", c ? ", " : "", an_cause_name((enum an_cause)c));
        if (dollars)
            usd(out, run, ns[c]);
        else
            num(out, ns[c]);
    }
    fputc('}', out);
}

void an_report_cost_json_process(FILE *out, const struct an_run *run, const struct an_trace *t)
{
    const struct an_model *m = t->model;
    double idle[AN_CAUSE_COUNT];
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        idle[c] = an_idle_ns(m, &m->total, (enum an_cause)c);
    fputs("\"cost\": {\"gpu_hours\": ", out);
    num(out, an_gpu_hours((double)m->wall_ns));
    fputs(", \"usd\": ", out);
    usd(out, run, (double)m->wall_ns);
    fputs(", \"idle_usd\": ", out);
    idle_by_cause(out, run, idle, 1);
    fputs(", \"phases\": [", out);
    for (size_t k = 0; k < m->phases.count; k++) {
        const struct an_phase *p = &m->phases.phase[k];
        double pidle[AN_CAUSE_COUNT];
        for (int c = 0; c < AN_CAUSE_COUNT; c++)
            pidle[c] = an_phase_idle_ns(m, p, (enum an_cause)c);
        fputs(k ? ",\n     {\"name\": " : "\n     {\"name\": ", out);
        gw_put_json_string(out, p->name, strlen(p->name));
        fprintf(out, ", \"ranges\": %" PRIu64 ", \"ns\": %" PRIu64 ", \"gpu_hours\": ", p->count,
                p->ns);
        num(out, an_gpu_hours((double)p->ns));
        fputs(", \"usd\": ", out);
        usd(out, run, (double)p->ns);
        fputs(", \"idle_ns\": ", out);
        idle_by_cause(out, run, pidle, 0);
        fputs(", \"idle_usd\": ", out);
        idle_by_cause(out, run, pidle, 1);
        fputc('}', out);
    }
    fprintf(out, "], \"phase_names_untold\": %" PRIu64 "}", m->phases.ranges_untold);
}
