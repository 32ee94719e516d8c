/* One refresh of `gpuwatch top` as text (top_view.h). */
#include "top_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuwatch/trace_format.h"
#include "live_run.h"

static struct gw_top_process *process_of(struct gw_top_history *h, const struct an_trace *t)
{
    size_t hlen = an_field_len(t->hdr.hostname, sizeof t->hdr.hostname);
    if (hlen >= sizeof h->procs[0].host)
        hlen = sizeof h->procs[0].host - 1;
    for (size_t i = 0; i < h->count; i++) {
        struct gw_top_process *p = &h->procs[i];
        if (p->pid == t->hdr.pid && p->rank == t->hdr.rank && strlen(p->host) == hlen &&
            !memcmp(p->host, t->hdr.hostname, hlen))
            return p;
    }
    if (h->count == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        struct gw_top_process *procs = realloc(h->procs, cap * sizeof *procs);
        if (!procs)
            return NULL;
        h->procs = procs;
        h->cap = cap;
    }
    struct gw_top_process *p = &h->procs[h->count++];
    memset(p, 0, sizeof *p);
    memcpy(p->host, t->hdr.hostname, hlen);
    p->pid = t->hdr.pid;
    p->rank = t->hdr.rank;
    return p;
}

/* Keeps now; returns the snapshot the last 10 s are measured from (the newest one at least
 * 10 s of trace time older, else the oldest), NULL when there is none before now. */
static const struct gw_top_snapshot *remember(struct gw_top_process *p,
                                              const struct gw_top_snapshot *now)
{
    if (p->nseen && p->seen[p->nseen - 1].wall_ns == now->wall_ns)
        p->nseen--;  /* nothing new since: the same figures again */
    size_t base = 0;
    for (size_t i = 0; i < p->nseen; i++)
        if (p->seen[i].wall_ns + GW_TOP_WINDOW_NS <= now->wall_ns)
            base = i;
    if (base) {  /* older ones are not needed again */
        memmove(p->seen, p->seen + base, (p->nseen - base) * sizeof p->seen[0]);
        p->nseen -= base;
    }
    if (p->nseen == GW_TOP_KEEP) {
        memmove(p->seen + 1, p->seen + 2, (GW_TOP_KEEP - 2) * sizeof p->seen[0]);
        p->nseen--;
    }
    p->seen[p->nseen++] = *now;
    return p->nseen >= 2 ? &p->seen[0] : NULL;
}

static void bytes_text(char *buf, size_t size, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4)
        bytes /= 1024, u++;
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

static double share(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0;
}

/* H2D copies from one host memory kind: bytes and bandwidth (GPU time of the copies when
 * the timeline has them, else the host's time in the calls). */
static void h2d(FILE *out, const char *name, const struct an_xfer *x)
{
    char b[32];
    bytes_text(b, sizeof b, (double)x->bytes);
    uint64_t ns = x->gpu_ns ? x->gpu_ns : x->host_ns;
    if (x->bytes && ns)
        fprintf(out, "  %s %s at %.2f GB/s", name, b, (double)x->bytes / (double)ns);
    else
        fprintf(out, "  %s %s", name, b);
}

static const struct an_finding *top_finding(const struct an_run *run, const struct an_trace *t)
{
    for (size_t i = 0; i < run->findings.count; i++) {
        const struct an_finding *f = &run->findings.items[i];
        if (!f->risk && f->pid == t->hdr.pid && f->rank == t->hdr.rank)
            return f;
    }
    return NULL;
}

static void process_block(FILE *out, const struct an_run *run, const struct an_trace *t,
                          struct gw_top_history *history, int running)
{
    const struct an_model *m = t->model;
    struct gw_top_snapshot now = {.wall_ns = m->wall_ns,
                                  .busy_ns = an_busy_ns(m, &m->total, m->wall_ns)};
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        now.idle_ns[c] = an_idle_ns(m, &m->total, (enum an_cause)c);
    struct gw_top_process *p = process_of(history, t);
    const struct gw_top_snapshot *base = p ? remember(p, &now) : NULL;
    double window = base ? (double)(now.wall_ns - base->wall_ns) : 0;

    fprintf(out, "host %.*s  pid %" PRIu32 "  rank ",
            (int)an_field_len(t->hdr.hostname, sizeof t->hdr.hostname), t->hdr.hostname,
            t->hdr.pid);
    if (t->hdr.rank >= 0)
        fprintf(out, "%" PRId32, t->hdr.rank);
    else
        fputs("none", out);
    fprintf(out, "  %s  wall %.6f s\n", running ? "running" : "exited", (double)m->wall_ns / 1e9);
    fprintf(out, "  GPU busy %5.1f %%  %.6f s%s\n", share((double)now.busy_ns, (double)m->wall_ns),
            (double)now.busy_ns / 1e9, m->gpu_timeline ? "" : "  (upper bound: no GPU timeline)");
    if (window > 0)
        fprintf(out, "  GPU idle by cause   last %4.1f s      since start\n", window / 1e9);
    else
        fputs("  GPU idle by cause   last 10 s        since start\n", out);
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        fprintf(out, "    %-15s ", an_cause_name((enum an_cause)c));
        if (window > 0)
            fprintf(out, "%5.1f %%   ", share(now.idle_ns[c] - base->idle_ns[c], window));
        else
            fputs("    -     ", out);
        fprintf(out, "   %5.1f %%  %.6f s\n", share(now.idle_ns[c], (double)m->wall_ns),
                now.idle_ns[c] / 1e9);
    }
    char used[32], peak[32], cap[32];
    bytes_text(used, sizeof used, (double)m->mem.live_total);
    bytes_text(peak, sizeof peak, (double)m->mem.peak_total);
    bytes_text(cap, sizeof cap, (double)m->mem.capacity);
    fprintf(out, "  memory  in use %s, peak %s (%" PRIu64 " B)", used, peak, m->mem.peak_total);
    if (m->mem.capacity)
        fprintf(out, " of %s", cap);
    fputs("\n  H2D   ", out);
    h2d(out, "pageable", &m->xfer[GW_COPY_HTOD][GW_HOST_PAGEABLE]);
    h2d(out, "pinned", &m->xfer[GW_COPY_HTOD][GW_HOST_PINNED]);
    fputc('\n', out);
    const struct an_finding *f = top_finding(run, t);
    if (f) {
        fprintf(out, "  top finding  %s: saves %.3f ms (%.1f %% of wall)", f->id,
                (double)f->saving_ns / 1e6, 100.0 * f->saving_share);
        if (run->opt.gpu_price > 0)
            fprintf(out, ", $%.4f", f->gpu_hours_saved * run->opt.gpu_price);
        fputc('\n', out);
    } else {
        fputs("  top finding  none so far\n", out);
    }
}

void gw_top_write(FILE *out, const char *dir, const struct an_run *run,
                  struct gw_top_history *history, size_t *running)
{
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%H:%M:%S", localtime_r(&now, &tm));
    *running = 0;
    if (!run) {
        fprintf(out, "== gpuwatch top  %s  %s: waiting for traces\n", when, dir);
        return;
    }
    int live[run->ntraces ? run->ntraces : 1];
    size_t shown = 0;
    for (size_t i = 0; i < run->ntraces; i++) {
        live[i] = run->traces[i].readable && gw_live_running(&run->traces[i]);
        *running += (size_t)live[i];
        shown += run->traces[i].model && run->traces[i].active;
    }
    fprintf(out, "== gpuwatch top  %s  %s: %zu processes, %zu running, %zu with GPU work\n",
            when, dir, run->ntraces, *running, shown);
    for (size_t i = 0; i < run->ntraces; i++)
        if (run->traces[i].model && run->traces[i].active)
            process_block(out, run, &run->traces[i], history, live[i]);
}

void gw_top_history_free(struct gw_top_history *history)
{
    free(history->procs);
    memset(history, 0, sizeof *history);
}
