/* The details part of the text report. */
#include <inttypes.h>
#include <string.h>

#include "analyze.h"
#include "pauses.h"
#include "text_out.h"

static void idle_by_cause(FILE *out, const struct an_model *m)
{
    uint64_t span = an_steady_span(m);
    fprintf(out, "  GPU idle by cause%s\n", m->gpu_timeline ? "" : " (proven by host calls)");
    fprintf(out, "    %-16s %12s %8s %12s %8s\n", "cause", "run", "% wall", "steady",
            m->steps.steady ? "% step" : "% span");
    double run_sum = 0, steady_sum = 0;
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        double r = an_idle_ns(m, &m->total, (enum an_cause)c);
        double s = an_idle_ns(m, &m->steady, (enum an_cause)c);
        run_sum += r;
        steady_sum += s;
        char a[32], b[32];
        an_fmt_ns(a, sizeof a, r);
        an_fmt_ns(b, sizeof b, s);
        fprintf(out, "    %-16s %12s %7.1f%% %12s %7.1f%%\n", an_cause_name((enum an_cause)c), a,
                m->wall_ns ? 100 * r / (double)m->wall_ns : 0, b,
                span ? 100 * s / (double)span : 0);
    }
    char a[32], b[32];
    an_fmt_ns(a, sizeof a, run_sum);
    an_fmt_ns(b, sizeof b, steady_sum);
    fprintf(out, "    %-16s %12s %7.1f%% %12s %7.1f%%\n", "all idle", a,
            m->wall_ns ? 100 * run_sum / (double)m->wall_ns : 0, b,
            span ? 100 * steady_sum / (double)span : 0);
    uint64_t pauses = 0, pause_ns = an_pause_ns(m, &pauses);
    if (pauses) {
        an_fmt_ns(a, sizeof a, (double)pause_ns);
        an_fmt_ns(b, sizeof b, (double)an_pause_threshold(m));
        fprintf(out, "    of input_pipeline, %s in %" PRIu64 " idle stretch%s of %s or more "
                "(pauses, not batch loads)\n", a, pauses, pauses == 1 ? "" : "es", b);
    }
}

static void largest(FILE *out, const struct an_model *m)
{
    if (!m->nlargest)
        return;
    fprintf(out, "  Largest idle intervals (seconds since the process's first call)\n");
    for (size_t i = 0; i < m->nlargest && i < 5; i++) {
        const struct an_interval *iv = &m->largest[i];
        char len[32];
        an_fmt_ns(len, sizeof len, (double)(iv->end - iv->start));
        int warm = iv->start + m->th.drain_slack_ns < m->steady_start ||
                   iv->end > m->steady_end + m->th.drain_slack_ns;
        fprintf(out, "    %10s  %.6f-%.6f s  %s%s\n", len, an_rel_s(m, iv->start),
                an_rel_s(m, iv->end), an_cause_name((enum an_cause)iv->cause),
                warm ? " (outside the steady state)" : "");
    }
}

static void transfers(FILE *out, const struct an_model *m)
{
    static const char *const dirs[AN_DIRS] = {"?", "HtoD", "DtoH", "DtoD", "HtoH", "peer"};
    static const char *const kinds[AN_HOST_KINDS] = {"device", "pageable", "pinned", "managed"};
    int any = 0;
    for (int d = 0; d < AN_DIRS; d++) {
        for (int k = 0; k < AN_HOST_KINDS; k++) {
            const struct an_xfer *x = &m->xfer[d][k];
            if (!x->count && !x->gpu_count)
                continue;
            if (!any)
                fprintf(out, "  Transfers\n    %-5s %-9s %8s %10s %10s %9s %8s %8s %10s\n",
                        "dir", "memory", "copies", "bytes", "host time", "blocking", "sync",
                        "<64KiB", "GPU GB/s");
            any = 1;
            char bytes[32], t[32], bw[32] = "-";
            an_fmt_bytes(bytes, sizeof bytes, (double)(x->count ? x->bytes : x->gpu_bytes));
            an_fmt_ns(t, sizeof t, (double)x->host_ns);
            if (x->gpu_ns)
                snprintf(bw, sizeof bw, "%.2f", (double)x->gpu_bytes / (double)x->gpu_ns);
            fprintf(out, "    %-5s %-9s %8" PRIu64 " %10s %10s %9" PRIu64 " %8" PRIu64
                    " %8" PRIu64 " %10s\n",
                    dirs[d], kinds[k], x->count ? x->count : x->gpu_count, bytes, t,
                    x->blocking, x->sync_api, x->small, bw);
        }
    }
    for (int d = 1; d < AN_DIRS && any; d++)
        if (m->best_bw[d])
            fprintf(out, "    best %s bandwidth seen: %.2f GB/s\n", dirs[d],
                    (double)m->best_bw[d] / 1e9);
}

/* The table shows the timeline's bins in groups, so that a run of any length fits here. */
#define HELD_ROWS 16

/* Memory held over time, the most held within each row's interval: growth and peaks. */
static void held_over_time(FILE *out, const struct an_model *m)
{
    const struct an_mem_timeline *tl = &m->held;
    if (!tl->nbins || !tl->ever)
        return;
    /* device kinds, their total, pinned host last; only what was ever held */
    static const int order[] = {AN_MEM_PLAIN, AN_MEM_POOL, AN_MEM_VMM, AN_MEM_MANAGED,
                                AN_HELD_TOTAL, AN_HELD_PINNED};
    static const char *const labels[AN_HELD_VALUES] = {"plain", "pool", "vmm", "managed",
                                                       "pinned host", "total"};
    int cols[AN_HELD_VALUES], ncols = 0;
    int device_any = (tl->ever & ((1ull << AN_MEM_KINDS) - 1)) != 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        int v = order[i];
        if (v == AN_HELD_TOTAL ? device_any : (int)((tl->ever >> v) & 1))
            cols[ncols++] = v;
    }
    size_t group = 1;
    while ((tl->nbins + group - 1) / group > HELD_ROWS)
        group *= 2;
    char width[32];
    an_fmt_ns(width, sizeof width, (double)tl->width * (double)group);
    fprintf(out, "    held over time (MiB, the most within each %s; total: device, pinned host "
            "apart)\n      %9s", width, "from (s)");
    for (int c = 0; c < ncols; c++)
        fprintf(out, " %11s", labels[cols[c]]);
    fputc('\n', out);
    int peak_shown = 0;
    for (size_t first = 0; first < tl->nbins; first += group) {
        uint64_t most[AN_HELD_VALUES] = {0};
        for (size_t i = first; i < first + group && i < tl->nbins; i++)
            for (int v = 0; v < AN_HELD_VALUES; v++)
                if (tl->bin[i].max[v] > most[v])
                    most[v] = tl->bin[i].max[v];
        fprintf(out, "      %9.3f", an_rel_s(m, tl->origin + first * tl->width));
        for (int c = 0; c < ncols; c++)
            fprintf(out, " %11.1f", (double)most[cols[c]] / (1024.0 * 1024.0));
        int peak = !peak_shown && m->mem.peak_total && most[AN_HELD_TOTAL] == m->mem.peak_total;
        peak_shown |= peak;
        fputs(peak ? "  peak\n" : "\n", out);
    }
}

static void memory(FILE *out, const struct an_model *m)
{
    static const char *const kinds[AN_MEM_KINDS] = {"plain", "pool", "vmm", "managed"};
    const struct an_memory *mem = &m->mem;
    char a[32], b[32], c[32];
    an_fmt_bytes(a, sizeof a, (double)mem->peak_total);
    an_fmt_bytes(b, sizeof b, (double)mem->capacity);
    an_fmt_bytes(c, sizeof c, (double)mem->others_at_start);
    fprintf(out, "  Memory\n    peak %s at %.3f s (", a, an_rel_s(m, mem->peak_ts));
    int first = 1;
    for (int k = 0; k < AN_MEM_KINDS; k++) {
        if (!mem->peak_by_kind[k])
            continue;
        an_fmt_bytes(a, sizeof a, (double)mem->peak_by_kind[k]);
        fprintf(out, "%s%s %s", first ? "" : ", ", kinds[k], a);
        first = 0;
    }
    fprintf(out, "%s) of %s capacity; in use by others at start %s\n", first ? "none" : "", b,
            mem->capacity ? c : "unknown");
    an_fmt_bytes(a, sizeof a, (double)mem->pinned_peak);
    an_fmt_bytes(b, sizeof b, (double)mem->at_exit_bytes);
    fprintf(out, "    allocations %" PRIu64 ", frees %" PRIu64 ", failed %" PRIu64
            " (out of memory %" PRIu64 ", retry storms %" PRIu64 "); pinned host peak %s; "
            "held at exit %s in %" PRIu64 " blocks\n",
            mem->allocs, mem->frees, mem->failed, mem->ooms, mem->storms, a, b,
            mem->at_exit_count);
    if (mem->blocks_taken || mem->blocks_given_back) {
        an_fmt_bytes(a, sizeof a, (double)mem->peak_total);
        an_fmt_bytes(b, sizeof b, (double)mem->reserved_peak);
        fprintf(out, "    PyTorch's caching allocator: %" PRIu64 " blocks taken, %" PRIu64
                " given back; peak allocated %s (the peak above), peak reserved %s\n",
                mem->blocks_taken, mem->blocks_given_back, a, b);
    }
    for (size_t i = 0; i < mem->nleftover && i < 3; i++) {
        const struct an_leftover *l = &mem->leftover[i];
        an_fmt_bytes(a, sizeof a, (double)l->bytes_each);
        fprintf(out, "    held at exit: %" PRIu64 " x %s %s, thread %" PRIu32 ", first at %.3f s\n",
                l->count, a, kinds[l->kind % AN_MEM_KINDS], l->tid, an_rel_s(m, l->first_ts));
    }
    if (m->steps.sampled_steps) {
        an_fmt_bytes(a, sizeof a, (double)m->steps.live_first);
        an_fmt_bytes(b, sizeof b, (double)m->steps.live_last);
        fprintf(out, "    held at steady step boundaries: %s first, %s last; grew in %" PRIu64
                " of %" PRIu64 " steps\n", a, b, m->steps.growth_steps, m->steps.sampled_steps);
    }
    held_over_time(out, m);
}

static void processes(FILE *out, const struct an_run *run)
{
    fprintf(out, "  Processes\n    %-8s %-6s %10s %8s %7s  %s\n", "pid", "rank", "wall", "util",
            "steps", "trace");
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (!t->model)
            continue;
        const struct an_model *m = t->model;
        char wall[32], rank[16] = "-";
        an_fmt_ns(wall, sizeof wall, (double)m->wall_ns);
        if (t->hdr.rank >= 0)
            snprintf(rank, sizeof rank, "%" PRId32, t->hdr.rank);
        fprintf(out, "    %-8" PRIu32 " %-6s %10s %7.0f%% %7" PRIu64 "  ", t->hdr.pid, rank,
                wall, t->active ? an_gpu_util(m) * 100 : 0.0, m->steps.count);
        gw_put_escaped(out, t->path, strlen(t->path));
        fputs(t->active ? "\n" : "  (no GPU work)\n", out);
    }
}

static void damage(FILE *out, const struct an_run *run)
{
    int any = 0;
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (t->readable && !t->rs.damage_reports && !t->rs.lost_events && !t->rs.lost_chunks &&
            !(t->model && (t->model->gpu_lost || t->model->late_events)))
            continue;
        if (!any)
            fprintf(out, "  Trace problems (the analysis covers what was intact)\n");
        any = 1;
        if (!t->readable) {
            fprintf(out, "    ");
            gw_put_escaped(out, t->error, strlen(t->error));
            fputc('\n', out);
            continue;
        }
        for (size_t k = 0; k < t->ndamage; k++) {
            const struct gw_damage *d = &t->damage[k];
            fprintf(out, "    %s: bytes %" PRIu64 "-%" PRIu64 " lost (%s): ", t->path, d->offset,
                    d->offset + d->lost_bytes, gw_damage_kind_name(d->kind));
            gw_put_escaped(out, d->message, strlen(d->message));
            fputc('\n', out);
        }
        if (t->rs.damage_reports > t->ndamage)
            fprintf(out, "    %s: %" PRIu64 " damage reports in all, %" PRIu64 " bytes lost\n",
                    t->path, t->rs.damage_reports, t->rs.damaged_bytes);
        if (t->rs.lost_events || t->rs.lost_chunks)
            fprintf(out, "    %s: the shim dropped %" PRIu64 " records, %" PRIu64
                    " chunks missing\n", t->path, t->rs.lost_events, t->rs.lost_chunks);
        if (t->model && t->model->gpu_lost)
            fprintf(out, "    %s: CUPTI dropped %" PRIu64 " activity records\n", t->path,
                    t->model->gpu_lost);
        if (t->model && t->model->late_events)
            fprintf(out, "    %s: %" PRIu64 " events arrived later than the reorder window\n",
                    t->path, t->model->late_events);
    }
}

void an_report_details(FILE *out, const struct an_run *run);

void an_report_details(FILE *out, const struct an_run *run)
{
    fprintf(out, "\nDetails\n");
    if (run->active) {
        const struct an_model *m = run->traces[run->primary].model;
        idle_by_cause(out, m);
        largest(out, m);
        transfers(out, m);
        memory(out, m);
    }
    if (run->ntraces > 1)
        processes(out, run);
    damage(out, run);
}
