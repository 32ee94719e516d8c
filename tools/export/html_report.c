/*
 * gpuwatch report: one self-contained HTML page of an analyzed run (no network: inline CSS
 * and SVG, no script), readable on a laptop and printable: per process the summary, the
 * findings (risks first) with evidence, change, saving and the lines or sites that cause
 * them, and plots from the model: GPU idle by cause, GPU busy and idle by cause over the
 * run (96 equal slices: a long run is no wider), where a steady step goes (busy, idle
 * by cause), device memory held over time against capacity, the longest idle intervals on
 * the run's time axis, host time in copies by direction and memory kind with the bandwidth
 * they got, and the training thread's CPU use and the workers'. Colours are the Okabe-Ito palette, told apart by colour-blind
 * readers; every axis says its unit.
 */
#include "html_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"

/* Okabe-Ito, one per idle cause (enum an_cause order), then the memory line. */
static const char *const cause_colour[AN_CAUSE_COUNT] = {
    "#E69F00", "#56B4E9", "#D55E00", "#009E73", "#CC79A7", "#999999",
};
#define MEMORY_COLOUR "#0072B2"

#define PLOT_W 720
#define PLOT_H 200
#define MARGIN_L 70
#define MARGIN_B 36

static void text(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

static void head(FILE *out)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>gpuwatch report</title>\n<style>\n"
          "body{font:14px/1.45 system-ui,sans-serif;max-width:960px;margin:2em auto;"
          "padding:0 1em;color:#222}\n"
          "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc}\n"
          "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left}\n"
          ".finding{border-left:4px solid #0072B2;padding:4px 10px;margin:10px 0;"
          "page-break-inside:avoid}\n.risk{border-color:#D55E00}\n"
          ".k{color:#555;font-size:.9em}svg{display:block;margin:8px 0}\n"
          ".axis{font-size:11px;fill:#444}.legend{font-size:12px}\n"
          "@media print{body{margin:0}}\n</style></head><body>\n"
          "<h1>gpuwatch report</h1>\n",
          out);
}

static void summary(FILE *out, const struct an_trace *t)
{
    const struct an_model *m = t->model;
    char wall[32], busy[32], step[32];
    an_fmt_ns(wall, sizeof wall, (double)m->wall_ns);
    an_fmt_ns(busy, sizeof busy, (double)an_busy_ns(m, &m->total, m->wall_ns));
    an_fmt_ns(step, sizeof step, (double)m->steps.median_ns);
    fputs("<table>\n<tr><th>process</th><td>", out);
    text(out, t->hdr.cmdline[0] ? t->hdr.cmdline : t->path);
    fprintf(out, " (pid %" PRIu32 ")</td></tr>\n<tr><th>GPU</th><td>", t->hdr.pid);
    text(out, t->hdr.device_name[0] ? t->hdr.device_name : "unknown");
    fprintf(out, "</td></tr>\n<tr><th>wall</th><td>%s</td></tr>\n"
                 "<tr><th>GPU busy</th><td>%s%s, utilization %.0f%%</td></tr>\n",
            wall, m->gpu_timeline ? "" : "at most ", busy, an_gpu_util(m) * 100);
    if (m->steps.steady)
        fprintf(out, "<tr><th>steps</th><td>%" PRIu64 " (%" PRIu64 " steady), median %s; "
                     "marked by ", m->steps.count, m->steps.steady, step);
    else
        fputs("<tr><th>steps</th><td>none found; ", out);
    text(out, m->steps.steady ? m->steps.marker : "figures are over the whole run");
    fputs("</td></tr>\n</table>\n", out);
}

static void say_line(void *user, const char *label, const char *sentence)
{
    FILE *out = user;
    fprintf(out, "<div><span class=\"k\">%s</span> ", label);
    text(out, sentence);
    fputs("</div>\n", out);
}

static void lines(FILE *out, const struct an_finding *f)
{
    an_py_cat_sentences(&f->lines, f->lines_cat, say_line, out);
}

static void findings(FILE *out, const struct an_run *run)
{
    fputs("<h2>Findings</h2>\n", out);
    if (!run->findings.count)
        fputs("<p>No findings: nothing in this run wastes the GPU.</p>\n", out);
    for (size_t i = 0; i < run->findings.count; i++) {
        const struct an_finding *f = &run->findings.items[i];
        fprintf(out, "<div class=\"finding%s\" data-id=\"", f->risk ? " risk" : "");
        text(out, f->id);
        fputs("\"><b>", out);
        text(out, f->id);
        fputs("</b>: ", out);
        text(out, f->title);
        fputs("<div><span class=\"k\">evidence</span> ", out);
        text(out, f->evidence);
        fputs("</div><div><span class=\"k\">change</span> ", out);
        text(out, f->change);
        fputs("</div>\n", out);
        lines(out, f);
        if (!f->risk) {
            char buf[32];
            an_fmt_ns(buf, sizeof buf, (double)f->saving_ns);
            fprintf(out, "<div><span class=\"k\">saves</span> %s%s (%.1f%% of wall)",
                    f->whatif ? "" : "up to ", buf, f->saving_share * 100);
            if (run->opt.gpu_price > 0)
                fprintf(out, ", $%.4f at $%.2f per GPU-hour",
                        f->gpu_hours_saved * run->opt.gpu_price, run->opt.gpu_price);
            fputs("</div>\n", out);
        }
        fputs("</div>\n", out);
    }
}

static void svg_open(FILE *out, const char *id, const char *title, int height)
{
    fprintf(out, "<h3>");
    text(out, title);
    fprintf(out, "</h3>\n<svg id=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "role=\"img\" aria-label=\"",
            id, PLOT_W, height, PLOT_W, height);
    text(out, title);
    fputs("\">\n", out);
}

/* GPU idle by cause: one horizontal bar, each cause's share of the (steady) step time. */
static void idle_plot(FILE *out, const struct an_model *m)
{
    const struct an_totals *t = m->steps.steady ? &m->steady : &m->total;
    uint64_t span = m->steps.steady ? an_steady_span(m) : m->wall_ns;
    if (!span)
        return;
    svg_open(out, "idle", "GPU idle time by cause (% of the steady state's wall time)", 90);
    double x = MARGIN_L, w = PLOT_W - MARGIN_L - 20;
    fprintf(out, "<rect x=\"%d\" y=\"10\" width=\"%.1f\" height=\"28\" fill=\"#eee\"/>\n",
            MARGIN_L, w);
    double legend_x = MARGIN_L;
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        double share = an_idle_ns(m, t, (enum an_cause)c) / (double)span;
        if (share <= 0)
            continue;
        if (share > 1)
            share = 1;
        fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"10\" width=\"%.1f\" height=\"28\" "
                     "fill=\"%s\"><title>%s %.1f%%</title></rect>\n",
                x, share * w, cause_colour[c], an_cause_name((enum an_cause)c), share * 100);
        fprintf(out, "<rect x=\"%.0f\" y=\"55\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                     "<text class=\"legend\" x=\"%.0f\" y=\"66\">%s %.1f%%</text>\n",
                legend_x, cause_colour[c], legend_x + 16, an_cause_name((enum an_cause)c),
                share * 100);
        legend_x += 150;
        x += share * w;
    }
    fprintf(out, "<text class=\"axis\" x=\"4\" y=\"28\">0 %%</text>"
                 "<text class=\"axis\" x=\"%d\" y=\"52\" text-anchor=\"end\">100 %% of wall</text>\n"
                 "</svg>\n",
            PLOT_W - 20);
}

static void y_axis(FILE *out, int height, const char *top_label, const char *unit)
{
    int bottom = height - MARGIN_B;
    fprintf(out, "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>"
                 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n"
                 "<text class=\"axis\" x=\"%d\" y=\"16\" text-anchor=\"end\">%s</text>"
                 "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>"
                 "<text class=\"axis\" x=\"4\" y=\"%d\">%s</text>\n",
            MARGIN_L, MARGIN_L, bottom, MARGIN_L, bottom, PLOT_W - 10, bottom, MARGIN_L - 4,
            top_label, MARGIN_L - 4, bottom, height / 2, unit);
}

static void x_axis(FILE *out, int height, double seconds)
{
    fprintf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\">0 s</text>"
                 "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3f s "
                 "(time since the process's first call)</text>\n",
            MARGIN_L, height - MARGIN_B + 16, PLOT_W - 10, height - MARGIN_B + 16, seconds);
}

/* Device memory held over time (the most within each bin) and the device's capacity. */
static void memory_plot(FILE *out, const struct an_model *m)
{
    const struct an_mem_timeline *tl = &m->held;
    if (!tl->nbins)
        return;
    uint64_t top = m->mem.capacity;
    for (size_t i = 0; i < tl->nbins; i++)
        if (tl->bin[i].max[AN_HELD_TOTAL] > top)
            top = tl->bin[i].max[AN_HELD_TOTAL];
    if (!top)
        return;
    double seconds = (double)(tl->nbins * tl->width) / 1e9;
    int h = PLOT_H, bottom = h - MARGIN_B;
    double w = PLOT_W - MARGIN_L - 10, per_bin = w / (double)tl->nbins;
    svg_open(out, "memory", "Device memory held over time (MiB), and the device's capacity", h);
    char top_label[32];
    snprintf(top_label, sizeof top_label, "%.0f", (double)top / (1 << 20));
    y_axis(out, h, top_label, "MiB");
    x_axis(out, h, seconds);
    fprintf(out, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                 "points=\"",
            MEMORY_COLOUR);
    for (size_t i = 0; i < tl->nbins; i++) {
        double y = bottom - (double)tl->bin[i].max[AN_HELD_TOTAL] / (double)top * (bottom - 10);
        fprintf(out, "%.1f,%.1f %.1f,%.1f ", MARGIN_L + i * per_bin, y,
                MARGIN_L + (i + 1) * per_bin, y);
    }
    fputs("\"/>\n", out);
    if (m->mem.capacity) {
        double y = bottom - (double)m->mem.capacity / (double)top * (bottom - 10);
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#D55E00\" "
                     "stroke-dasharray=\"6 4\"/><text class=\"legend\" x=\"%d\" y=\"%.1f\">"
                     "capacity</text>\n",
                MARGIN_L, y, PLOT_W - 10, y, MARGIN_L + 6, y + 14);
    }
    fputs("</svg>\n", out);
}

/* GPU busy and idle by cause over the run, one stacked column per slice of time. */
static void over_time_plot(FILE *out, const struct an_model *m)
{
    if (!m->nover_time)
        return;
    int h = PLOT_H + 16, bottom = h - MARGIN_B - 16;  /* (room for the legend) */
    double w = PLOT_W - MARGIN_L - 10, col = w / (double)m->nover_time;
    svg_open(out, "over_time", "GPU busy and idle by cause over the run (% of each slice)", h);
    y_axis(out, h - 16, "100 %", "");
    x_axis(out, h - 16, (double)m->wall_ns / 1e9);
    for (size_t i = 0; i < m->nover_time; i++) {
        const struct an_time_slice *s = &m->over_time[i];
        double span = (double)(s->end - s->start), y = bottom;
        if (span <= 0)
            continue;
        double x = MARGIN_L + (double)i * col;
        double busy = (double)s->busy_ns / span;
        if (busy > 0) {
            double hgt = (busy > 1 ? 1 : busy) * (bottom - 10);
            y -= hgt;
            fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                         "height=\"%.1f\" fill=\"%s\"/>\n",
                    x, y, col, hgt, MEMORY_COLOUR);
        }
        for (int c = 0; c < AN_CAUSE_COUNT; c++) {
            double share = (double)s->idle_ns[c] / span;
            if (share <= 0)
                continue;
            double hgt = share * (bottom - 10);
            if (hgt > y - 10)
                hgt = y - 10;
            if (hgt <= 0)
                break;
            y -= hgt;
            fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                         "height=\"%.1f\" fill=\"%s\"/>\n",
                    x, y, col, hgt, cause_colour[c]);
        }
    }
    double legend_x = MARGIN_L;
    fprintf(out, "<rect x=\"%.0f\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                 "<text class=\"legend\" x=\"%.0f\" y=\"%d\">busy</text>\n",
            legend_x, h - 14, MEMORY_COLOUR, legend_x + 14, h - 5);
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        double lx = legend_x + 55 + c * 100.0;
        fprintf(out, "<rect x=\"%.0f\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                     "<text class=\"legend\" x=\"%.0f\" y=\"%d\" style=\"font-size:10px\">%s"
                     "</text>\n",
                lx, h - 14, cause_colour[c], lx + 13, h - 5, an_cause_name((enum an_cause)c));
    }
    fputs("</svg>\n", out);
}

/* The longest idle intervals where they were, coloured by cause. */
static void intervals_plot(FILE *out, const struct an_model *m)
{
    if (!m->nlargest || !m->wall_ns)
        return;
    int h = 90, bottom = h - MARGIN_B;
    double w = PLOT_W - MARGIN_L - 10;
    svg_open(out, "intervals", "Longest GPU idle intervals in time, by cause", h);
    x_axis(out, h, (double)m->wall_ns / 1e9);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n", MARGIN_L,
            bottom, PLOT_W - 10, bottom);
    for (size_t i = 0; i < m->nlargest; i++) {
        const struct an_interval *iv = &m->largest[i];
        if (iv->start < m->first_ts || iv->cause >= AN_CAUSE_COUNT)
            continue;
        double x0 = MARGIN_L + (double)(iv->start - m->first_ts) / (double)m->wall_ns * w;
        double x1 = MARGIN_L + (double)(iv->end - m->first_ts) / (double)m->wall_ns * w;
        char len[32];
        an_fmt_ns(len, sizeof len, (double)(iv->end - iv->start));
        fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"14\" width=\"%.1f\" height=\"%d\" "
                     "fill=\"%s\"><title>%s %s</title></rect>\n",
                x0, x1 - x0 < 1 ? 1 : x1 - x0, bottom - 14, cause_colour[iv->cause],
                an_cause_name((enum an_cause)iv->cause), len);
    }
    fputs("</svg>\n", out);
}

/* One horizontal bar of labelled parts scaled to `total`, and their legend below. */
struct part {
    const char *label, *colour;
    double value;
};

static void parts_bar(FILE *out, const struct part *parts, size_t n, double total,
                      const char *unit)
{
    double x = MARGIN_L, w = PLOT_W - MARGIN_L - 20, legend_x = MARGIN_L;
    int legend_y = 55;
    for (size_t i = 0; i < n; i++) {
        if (parts[i].value <= 0)
            continue;
        double width = parts[i].value / total * w;
        fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"10\" width=\"%.1f\" height=\"28\" "
                     "fill=\"%s\"><title>%s %.3f %s</title></rect>\n",
                x, width, parts[i].colour, parts[i].label, parts[i].value, unit);
        if (legend_x > PLOT_W - 150) {
            legend_x = MARGIN_L;
            legend_y += 18;
        }
        fprintf(out, "<rect x=\"%.0f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                     "<text class=\"legend\" x=\"%.0f\" y=\"%d\">%s %.2f %s</text>\n",
                legend_x, legend_y, parts[i].colour, legend_x + 16, legend_y + 11,
                parts[i].label, parts[i].value, unit);
        legend_x += 165;
        x += width;
    }
}

/* Where one steady step goes on the GPU: busy, and idle by cause (ms per step). */
static void step_plot(FILE *out, const struct an_model *m)
{
    uint64_t steps = an_steady_steps(m);
    uint64_t span = an_steady_span(m);
    if (!m->steps.steady || !steps || !span)
        return;
    struct part parts[AN_CAUSE_COUNT + 1];
    double busy = (double)an_busy_ns(m, &m->steady, span) / (double)steps / 1e6;
    parts[0] = (struct part){"GPU busy", MEMORY_COLOUR, busy};
    double total = busy;
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        double ms = an_idle_ns(m, &m->steady, (enum an_cause)c) / (double)steps / 1e6;
        parts[c + 1] = (struct part){an_cause_name((enum an_cause)c), cause_colour[c], ms};
        total += ms;
    }
    if (total <= 0)
        return;
    svg_open(out, "step", "Where a steady step goes on the GPU (ms per step)", 110);
    parts_bar(out, parts, AN_CAUSE_COUNT + 1, total, "ms");
    fputs("</svg>\n", out);
}

/* One bar of a ranked list: the label left of the bar (cut to what the margin holds), the
 * bar's length as value/most of the width, and what it says right of it. */
static void ranked_bar(FILE *out, int y, int left, double width, const char *label,
                       double value, double most, const char *colour, const char *says)
{
    char shown[40];
    size_t n = strlen(label);
    if (n < sizeof shown) {
        memcpy(shown, label, n + 1);
    } else {  /* (the end of a kernel name says least: templates' arguments) */
        memcpy(shown, label, sizeof shown - 4);
        memcpy(shown + sizeof shown - 4, "...", 4);
    }
    double len = most > 0 ? value / most * width : 0;
    fprintf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 4,
            y + 13);
    if (n >= sizeof shown) {  /* (the whole label as a tooltip where it was cut) */
        fputs("<title>", out);
        text(out, label);
        fputs("</title>", out);
    }
    text(out, shown);
    fprintf(out, "</text><rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"18\" "
                 "fill=\"%s\"/><text class=\"legend\" x=\"%.0f\" y=\"%d\">",
            left, y, len + 1, colour, left + len + 6, y + 13);
    text(out, says);
    fputs("</text>\n", out);
}

/* Host time in copies, by direction and host memory kind, with the bandwidth they got. */
static void copies_plot(FILE *out, const struct an_model *m)
{
    static const char *const dirs[AN_DIRS] = {"?", "HtoD", "DtoH", "DtoD", "HtoH", "peer"};
    static const char *const kinds[AN_HOST_KINDS] = {"device", "pageable", "pinned", "managed"};
    static const char *const colours[AN_HOST_KINDS] = {"#009E73", "#D55E00", "#0072B2",
                                                       "#CC79A7"};
    uint64_t most = 0;
    size_t rows = 0;
    for (int d = 0; d < AN_DIRS; d++)
        for (int k = 0; k < AN_HOST_KINDS; k++)
            if (m->xfer[d][k].count) {
                rows++;
                if (m->xfer[d][k].host_ns > most)
                    most = m->xfer[d][k].host_ns;
            }
    if (!rows || !most)
        return;
    int h = 20 + (int)rows * 24 + MARGIN_B;
    svg_open(out, "copies", "Host time in copies by direction and memory kind (ms)", h);
    const int left = 110;  /* room for "DtoH pageable" */
    double w = PLOT_W - left - 260;
    int y = 12;
    for (int d = 0; d < AN_DIRS; d++)
        for (int k = 0; k < AN_HOST_KINDS; k++) {
            const struct an_xfer *x = &m->xfer[d][k];
            if (!x->count)
                continue;
            char rate[48] = "", label[32], says[96];
            /* (a copy of a few bytes says nothing of the bandwidth: latency is all of it) */
            if (x->host_ns && x->bytes / x->count >= (64u << 10))
                snprintf(rate, sizeof rate, ", %.2f GB/s", (double)x->bytes / (double)x->host_ns);
            snprintf(label, sizeof label, "%s %s", dirs[d], kinds[k]);
            snprintf(says, sizeof says, "%.2f ms, %" PRIu64 " copies%s",
                     (double)x->host_ns / 1e6, x->count, rate);
            ranked_bar(out, y, left, w, label, (double)x->host_ns, (double)most, colours[k],
                       says);
            y += 24;
        }
    fprintf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\">host time in the calls, ms "
                 "(bandwidth: bytes over that time, for copies of 64 KiB or more)</text>\n"
                 "</svg>\n",
            left, h - 12);
}

/* The kernels that took most GPU time (GPU records), or without a timeline the most
 * launched ones (host calls). */
static void kernels_plot(FILE *out, const struct an_model *m)
{
    size_t rows = m->nkernel_times ? m->nkernel_times : m->ntop_kernels;
    if (!rows)
        return;
    int h = 20 + (int)rows * 24 + MARGIN_B;
    svg_open(out, "kernels",
             m->nkernel_times ? "Top kernels by GPU time (ms)" : "Most launched kernels (launches)",
             h);
    const int left = 250;  /* room for 36 characters of a kernel's name */
    double w = PLOT_W - left - 230;
    int y = 12;
    char says[96];
    for (size_t i = 0; i < rows; i++, y += 24) {
        if (m->nkernel_times) {
            const struct an_kernel_time *k = &m->kernel_times[i];
            snprintf(says, sizeof says, "%.2f ms, %" PRIu64 " runs, mean %.1f \xC2\xB5s",
                     (double)k->gpu_ns / 1e6, k->records,
                     (double)k->gpu_ns / 1e3 / (double)k->records);
            ranked_bar(out, y, left, w, k->name, (double)k->gpu_ns,
                       (double)m->kernel_times[0].gpu_ns, "#0072B2", says);
        } else {
            const struct an_kernel_count *k = &m->top_kernels[i];
            snprintf(says, sizeof says, "%" PRIu64 " launches", k->launches);
            ranked_bar(out, y, left, w, k->name, (double)k->launches,
                       (double)m->top_kernels[0].launches, "#E69F00", says);
        }
    }
    fprintf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\">%s</text>\n</svg>\n", left, h - 12,
            m->nkernel_times ? "GPU time in the kernel's records, ms (of "
                               "the kernels with most, at most 10)"
                             : "launches of the kernel (no GPU timeline in this trace)");
}

/* The training thread's and the worker processes' CPU use in the steady state. */
static void cpu_plot(FILE *out, const struct an_model *m)
{
    const struct an_cpu_use *c = &m->cpu;
    if (!c->known)
        return;
    struct part parts[] = {
        {"training thread busy", "#E69F00", c->train_busy * 100},
        {"waiting for the GPU", "#56B4E9", c->train_wait * 100},
        {"preempted", "#D55E00", c->runq_known ? c->train_runq * 100 : 0},
    };
    svg_open(out, "cpu", "The training thread's steady state (% of its time)", 90);
    parts_bar(out, parts, 3, 100, "%");
    fputs("</svg>\n", out);
    fprintf(out, "<p class=\"k\">Worker processes: %.2f CPUs busy on average, at most %" PRIu32
                 " running at once; the whole process: %.2f CPUs.</p>\n",
            c->workers_cpus, c->workers, c->process_cpus);
}

/* What the process and each of its phases cost (--gpu-price), idle time by cause priced. */
static void cost_table(FILE *out, const struct an_run *run, const struct an_model *m)
{
    if (!(run->opt.gpu_price > 0))
        return;
    fprintf(out, "<h3>Cost at $%.2f per GPU-hour</h3>\n<table>\n<tr><th>phase</th>"
                 "<th>ranges</th><th>GPU-hours</th><th>dollars</th>",
            run->opt.gpu_price);
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        fprintf(out, "<th>idle: %s</th>", an_cause_name((enum an_cause)c));
    fprintf(out, "</tr>\n<tr><td>whole process</td><td></td><td>%.6f</td><td>$%.4f</td>",
            an_gpu_hours((double)m->wall_ns), an_usd(run, (double)m->wall_ns));
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        fprintf(out, "<td>$%.4f</td>", an_usd(run, an_idle_ns(m, &m->total, (enum an_cause)c)));
    fputs("</tr>\n", out);
    for (size_t k = 0; k < m->phases.count; k++) {
        const struct an_phase *p = &m->phases.phase[k];
        fputs("<tr><td>", out);
        text(out, p->name[0] ? p->name : "(unnamed)");
        fprintf(out, "</td><td>%" PRIu64 "</td><td>%.6f</td><td>$%.4f</td>", p->count,
                an_gpu_hours((double)p->ns), an_usd(run, (double)p->ns));
        for (int c = 0; c < AN_CAUSE_COUNT; c++)
            fprintf(out, "<td>$%.4f</td>", an_usd(run, an_phase_idle_ns(m, p, (enum an_cause)c)));
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void process_section(FILE *out, const struct an_run *run, const struct an_trace *t)
{
    fputs("<h2>Process</h2>\n", out);
    summary(out, t);
    cost_table(out, run, t->model);
    idle_plot(out, t->model);
    over_time_plot(out, t->model);
    step_plot(out, t->model);
    memory_plot(out, t->model);
    intervals_plot(out, t->model);
    copies_plot(out, t->model);
    kernels_plot(out, t->model);
    cpu_plot(out, t->model);
}

int gw_report_html(FILE *out, const struct an_run *run)
{
    head(out);
    findings(out, run);
    for (size_t i = 0; i < run->ntraces; i++)
        if (run->traces[i].readable && run->traces[i].active && run->traces[i].model)
            process_section(out, run, &run->traces[i]);
    fputs("<p class=\"k\">Made by gpuwatch report; the figures and their definitions: "
          "docs/analyze.md.</p>\n</body></html>\n",
          out);
    return ferror(out) ? -1 : 0;
}
