/* Two analyzed runs side by side (run_diff.h). */
#include "run_diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "model.h"
#include "rules.h"
#include "text_out.h"

static const struct an_model *main_model(const struct an_run *run)
{
    return run->active ? run->traces[run->primary].model : NULL;
}

static struct an_diff_value *add_value(struct an_diff *d, const char *name)
{
    if (d->nvalues == AN_DIFF_MAX_VALUES)
        return NULL;
    struct an_diff_value *v = &d->values[d->nvalues++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    return v;
}

/* A figure --fail-if knows, of each run. */
static void metric(struct an_diff *d, const char *name, const struct an_run *before,
                   const struct an_run *after)
{
    struct an_diff_value *v = add_value(d, name);
    if (!v)
        return;
    v->has_before = (uint8_t)an_metric_value(name, before, &v->before);
    v->has_after = (uint8_t)an_metric_value(name, after, &v->after);
}

/* The main process's copies: how many, how many from or to pageable memory, and the host
 * time in them. */
static void copies(const struct an_model *m, double out[3])
{
    out[0] = out[1] = out[2] = 0;
    for (int dir = 0; m && dir < AN_DIRS; dir++)
        for (int k = 0; k < AN_HOST_KINDS; k++) {
            out[0] += (double)m->xfer[dir][k].count;
            out[1] += k == GW_HOST_PAGEABLE ? (double)m->xfer[dir][k].count : 0;
            out[2] += (double)m->xfer[dir][k].host_ns / 1e9;
        }
}

static void figures(struct an_diff *d, const struct an_run *before, const struct an_run *after)
{
    static const char *const metrics[] = {"wall_s", "step_ms", "steps", "gpu_util",
                                          "steady_util"};
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
        metric(d, metrics[i], before, after);
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        char name[48];
        snprintf(name, sizeof name, "idle.%s", an_cause_name((enum an_cause)c));
        metric(d, name, before, after);
    }
    const struct an_model *mb = main_model(before), *ma = main_model(after);
    double cb[3], ca[3];
    copies(mb, cb);
    copies(ma, ca);
    static const char *const copy_names[3] = {"copies", "copies.pageable", "copies.host_s"};
    for (int i = 0; i < 3; i++) {
        struct an_diff_value *v = add_value(d, copy_names[i]);
        if (v) {
            v->before = cb[i], v->after = ca[i];
            v->has_before = mb != NULL, v->has_after = ma != NULL;
        }
    }
    struct an_diff_value *v = add_value(d, "memory.peak_gib");
    if (v) {
        v->before = mb ? (double)mb->mem.peak_total / (1 << 30) : 0;
        v->after = ma ? (double)ma->mem.peak_total / (1 << 30) : 0;
        v->has_before = mb != NULL, v->has_after = ma != NULL;
    }
    metric(d, "findings", before, after);
}

static struct an_diff_finding *finding_of(struct an_diff *d, const char *id)
{
    for (size_t i = 0; i < d->nfindings; i++)
        if (!strcmp(d->findings[i].id, id))
            return &d->findings[i];
    if (d->nfindings == AN_DIFF_MAX_FINDINGS)
        return NULL;
    struct an_diff_finding *f = &d->findings[d->nfindings++];
    memset(f, 0, sizeof *f);
    snprintf(f->id, sizeof f->id, "%s", id);
    return f;
}

/* Each finding id once (a finding of several processes: its first, the ranked highest). */
static void compare_findings(struct an_diff *d, const struct an_run *before,
                             const struct an_run *after)
{
    uint8_t seen[AN_DIFF_MAX_FINDINGS][2] = {{0}};
    for (int side = 0; side < 2; side++) {
        const struct an_findings *list = side ? &after->findings : &before->findings;
        for (size_t i = 0; i < list->count; i++) {
            const struct an_finding *src = &list->items[i];
            struct an_diff_finding *f = finding_of(d, src->id);
            if (!f || seen[f - d->findings][side])
                continue;
            seen[f - d->findings][side] = 1;
            f->risk = src->risk;
            *(side ? &f->after_ns : &f->before_ns) = src->saving_ns;
        }
    }
    for (size_t i = 0; i < d->nfindings; i++)
        d->findings[i].status = !seen[i][1] ? AN_DIFF_GONE
                              : !seen[i][0] ? AN_DIFF_NEW : AN_DIFF_KEPT;
}

/* What BEFORE predicted the change would save (run_diff.h: basis). */
static void prediction(struct an_diff *d, const struct an_run *before, const struct an_run *after)
{
    const struct an_finding *gone[2] = {NULL, NULL};
    for (size_t i = 0; i < d->nfindings; i++) {
        const struct an_diff_finding *f = &d->findings[i];
        const struct an_finding *src = an_findings_find(&before->findings, f->id);
        if (f->status != AN_DIFF_GONE || f->risk || !src || !src->whatif)
            continue;  /* (a finding whose advice was not replayed names no change) */
        if (d->gone < 2)
            gone[d->gone] = src;
        d->gone++;
        d->predicted_ns += f->before_ns;
    }
    const struct an_model *mb = main_model(before), *ma = main_model(after);
    d->realized_ns = mb && ma ? (int64_t)mb->wall_ns - (int64_t)ma->wall_ns : 0;
    if (d->gone) {
        d->basis = AN_DIFF_BASIS_GONE;
        d->predicted_replayed = d->gone == 1;
        if (d->gone == 2 && mb && mb->replay.done) {
            /* the two changes made together, as BEFORE's replay ran them */
            const struct an_replay *r = &mb->replay;
            uint64_t both = r->wall_ns[an_world_of(1u << gone[0]->whatif | 1u << gone[1]->whatif)];
            uint64_t measured = r->wall_ns[AN_WI_AS_MEASURED];
            d->predicted_ns = measured > both ? measured - both : 0;
            d->predicted_replayed = 1;
        }
        return;
    }
    for (size_t i = 0; i < before->findings.count; i++) {
        const struct an_finding *f = &before->findings.items[i];
        if (f->risk)
            continue;
        d->basis = AN_DIFF_BASIS_TOP;
        snprintf(d->top_id, sizeof d->top_id, "%s", f->id);
        d->predicted_ns = f->saving_ns;
        d->predicted_replayed = f->whatif != 0;
        return;
    }
}

/* GPU time per kernel, the union of both runs' top kernels by name. */
static void kernels(struct an_diff *d, const struct an_run *before, const struct an_run *after)
{
    for (int side = 0; side < 2; side++) {
        const struct an_model *m = main_model(side ? after : before);
        for (size_t i = 0; m && i < m->nkernel_times; i++) {
            const struct an_kernel_time *k = &m->kernel_times[i];
            struct an_diff_kernel *dk = NULL;
            for (size_t j = 0; j < d->nkernels && !dk; j++)
                if (!strcmp(d->kernels[j].name, k->name))
                    dk = &d->kernels[j];
            if (!dk && d->nkernels < AN_DIFF_MAX_KERNELS) {
                dk = &d->kernels[d->nkernels++];
                memset(dk, 0, sizeof *dk);
                snprintf(dk->name, sizeof dk->name, "%s", k->name);
            }
            if (dk)
                *(side ? &dk->after_ns : &dk->before_ns) = k->gpu_ns;
        }
    }
}

void an_diff_runs(const struct an_run *before, const struct an_run *after, struct an_diff *d)
{
    memset(d, 0, sizeof *d);
    figures(d, before, after);
    compare_findings(d, before, after);
    prediction(d, before, after);
    kernels(d, before, after);
}

/* ---- text ---- */

static void change_text(char *buf, size_t size, const struct an_diff_value *v)
{
    if (!v->has_before || !v->has_after)
        snprintf(buf, size, "-");
    else if (v->before != 0)
        snprintf(buf, size, "%+.4g (%+.1f %%)", v->after - v->before,
                 100 * (v->after - v->before) / fabs(v->before));
    else
        snprintf(buf, size, "%+.4g", v->after - v->before);
}

static void value_text(char *buf, size_t size, int has, double v)
{
    if (has)
        snprintf(buf, size, "%.6g", v);
    else
        snprintf(buf, size, "-");
}

static const char *const status_names[] = {"gone", "new", "kept"};

void an_diff_text(FILE *out, const struct an_diff *d, const char *before, const char *after)
{
    fprintf(out, "gpuwatch diff\n  before: %s\n  after:  %s\n\n", before, after);
    fprintf(out, "  %-24s %14s %14s  %s\n", "figure", "before", "after", "change");
    for (size_t i = 0; i < d->nvalues; i++) {
        const struct an_diff_value *v = &d->values[i];
        char b[32], a[32], c[48];
        value_text(b, sizeof b, v->has_before, v->before);
        value_text(a, sizeof a, v->has_after, v->after);
        change_text(c, sizeof c, v);
        fprintf(out, "  %-24s %14s %14s  %s\n", v->name, b, a, c);
    }
    fputs("\nfindings\n", out);
    if (!d->nfindings)
        fputs("  none in either run\n", out);
    for (int status = AN_DIFF_GONE; status <= AN_DIFF_KEPT; status++)
        for (size_t i = 0; i < d->nfindings; i++) {
            const struct an_diff_finding *f = &d->findings[i];
            if ((int)f->status != status)
                continue;
            char b[32], a[32];
            an_fmt_ns(b, sizeof b, (double)f->before_ns);
            an_fmt_ns(a, sizeof a, (double)f->after_ns);
            fprintf(out, "  %-5s %-22s", status_names[status], f->id);
            if (f->risk)
                fputs("  (a risk)\n", out);
            else if (status == AN_DIFF_GONE)
                fprintf(out, "  predicted saving %s\n", b);
            else if (status == AN_DIFF_NEW)
                fprintf(out, "  saving %s\n", a);
            else
                fprintf(out, "  saving %s -> %s\n", b, a);
        }
    fputs("\nthe change\n", out);
    char p[32], r[32];
    an_fmt_ns(p, sizeof p, (double)d->predicted_ns);
    an_fmt_ns(r, sizeof r, fabs((double)d->realized_ns));
    if (d->basis == AN_DIFF_BASIS_GONE)
        fprintf(out, "  predicted by BEFORE's analysis for the %u finding%s gone: %s%s\n",
                d->gone, d->gone > 1 ? "s" : "", p,
                d->predicted_replayed ? "" : " (the sum of their savings: an upper bound)");
    else if (d->basis == AN_DIFF_BASIS_TOP)
        fprintf(out, "  no finding of BEFORE is gone; its top finding, %s, predicted %s\n",
                d->top_id, p);
    else
        fputs("  BEFORE had no time finding to predict a saving\n", out);
    fprintf(out, "  realized (the main process's wall time): %s %s", r,
            d->realized_ns >= 0 ? "shorter" : "longer");
    if (d->predicted_ns && d->basis != AN_DIFF_BASIS_NONE)
        fprintf(out, " (%.2f of the prediction)", (double)d->realized_ns / (double)d->predicted_ns);
    fputc('\n', out);
    if (d->nkernels) {
        fputs("\nGPU time per kernel (the kernels with most in either run)\n", out);
        for (size_t i = 0; i < d->nkernels; i++) {
            const struct an_diff_kernel *k = &d->kernels[i];
            char b[32], a[32];
            an_fmt_ns(b, sizeof b, (double)k->before_ns);
            an_fmt_ns(a, sizeof a, (double)k->after_ns);
            fprintf(out, "  %-40.40s %12s -> %s\n", k->name, b, a);
        }
    }
}

/* ---- JSON ---- */

static void json_number(FILE *out, int has, double v)
{
    if (!has || !isfinite(v))
        fputs("null", out);
    else if (v == floor(v) && fabs(v) < 9e15)
        fprintf(out, "%" PRId64, (int64_t)v);
    else
        fprintf(out, "%.6g", v);
}

void an_diff_json(FILE *out, const struct an_diff *d, const char *before, const char *after)
{
    fputs("{\"format\": \"gpuwatch-diff\", \"version\": 1, \"before\": ", out);
    gw_put_json_string(out, before, strlen(before));
    fputs(", \"after\": ", out);
    gw_put_json_string(out, after, strlen(after));
    fputs(",\n \"figures\": {", out);
    for (size_t i = 0; i < d->nvalues; i++) {
        const struct an_diff_value *v = &d->values[i];
        fprintf(out, "%s\n   \"%s\": {\"before\": ", i ? "," : "", v->name);
        json_number(out, v->has_before, v->before);
        fputs(", \"after\": ", out);
        json_number(out, v->has_after, v->after);
        fputc('}', out);
    }
    fputs("},\n \"findings\": [", out);
    for (size_t i = 0; i < d->nfindings; i++) {
        const struct an_diff_finding *f = &d->findings[i];
        fprintf(out, "%s\n   {\"id\": \"%s\", \"status\": \"%s\", \"risk\": %s, "
                     "\"before_saving_ns\": %" PRIu64 ", \"after_saving_ns\": %" PRIu64 "}",
                i ? "," : "", f->id, status_names[f->status], f->risk ? "true" : "false",
                f->before_ns, f->after_ns);
    }
    static const char *const basis[] = {"none", "findings_gone", "top_finding"};
    fprintf(out, "],\n \"change\": {\"basis\": \"%s\", \"replayed_findings_gone\": %u, \"top_finding\": ",
            basis[d->basis], d->gone);
    if (d->basis == AN_DIFF_BASIS_TOP)
        fprintf(out, "\"%s\"", d->top_id);
    else
        fputs("null", out);
    fprintf(out, ", \"predicted_ns\": %" PRIu64 ", \"predicted_replayed\": %s, \"realized_ns\": %" PRId64
                 "},\n \"kernels\": [",
            d->predicted_ns, d->predicted_replayed ? "true" : "false", d->realized_ns);
    for (size_t i = 0; i < d->nkernels; i++) {
        fprintf(out, "%s\n   {\"name\": ", i ? "," : "");
        gw_put_json_string(out, d->kernels[i].name, strlen(d->kernels[i].name));
        fprintf(out, ", \"before_gpu_ns\": %" PRIu64 ", \"after_gpu_ns\": %" PRIu64 "}",
                d->kernels[i].before_ns, d->kernels[i].after_ns);
    }
    fputs("]}\n", out);
}

/* ---- --fail-if ---- */

enum op { OP_LT, OP_LE, OP_GT, OP_GE };

struct an_diff_condition {
    int is_finding;
    char name[48];
    enum op op;
    double value;
    int relative;  /* value is a share of BEFORE's */
};

int an_diff_condition_parse(const char *expr, struct an_diff_condition **out, char *err,
                            size_t errlen)
{
    struct an_diff_condition c = {0};
    const char *p = expr;
    size_t n = an_condition_name(expr, p, c.name, sizeof c.name, err, errlen);
    if (!n)
        return -1;
    p += n;
    if (!strcmp(c.name, "finding")) {
        if (*p != '=' || !p[1]) {
            snprintf(err, errlen, "'%s': finding takes =ID (a finding new in AFTER)", expr);
            return -1;
        }
        snprintf(c.name, sizeof c.name, "%s", p + 1);
        c.is_finding = 1;
    } else {
        int known = an_metric_known(c.name) || !strncmp(c.name, "copies", 6) ||
                    !strcmp(c.name, "memory.peak_gib");
        if (!known) {
            snprintf(err, errlen, "'%s': unknown figure '%s' (known: %s; copies, "
                     "copies.pageable, copies.host_s, memory.peak_gib)", expr, c.name,
                     an_condition_metrics());
            return -1;
        }
        static const struct { const char *text; enum op op; } ops[] = {
            {"<=", OP_LE}, {">=", OP_GE}, {"<", OP_LT}, {">", OP_GT}};
        size_t k = 0;
        for (; k < sizeof ops / sizeof ops[0]; k++)
            if (!strncmp(p, ops[k].text, strlen(ops[k].text)))
                break;
        if (k == sizeof ops / sizeof ops[0]) {
            snprintf(err, errlen, "'%s': expected < <= > >= after '%s'", expr, c.name);
            return -1;
        }
        c.op = ops[k].op;
        p += strlen(ops[k].text);
        if (an_condition_number(expr, p, &c.value, &c.relative, err, errlen) != 0)
            return -1;
    }
    *out = malloc(sizeof c);
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    **out = c;
    return 0;
}

int an_diff_condition_holds(const struct an_diff_condition *c, const struct an_diff *d)
{
    if (c->is_finding) {
        for (size_t i = 0; i < d->nfindings; i++)
            if (!strcmp(d->findings[i].id, c->name))
                return d->findings[i].status == AN_DIFF_NEW;
        return 0;
    }
    for (size_t i = 0; i < d->nvalues; i++) {
        const struct an_diff_value *v = &d->values[i];
        if (strcmp(v->name, c->name))
            continue;
        if (!v->has_before || !v->has_after || (c->relative && v->before == 0))
            return 0;
        double change = c->relative ? (v->after - v->before) / fabs(v->before)
                                    : v->after - v->before;
        switch (c->op) {
        case OP_LT: return change < c->value;
        case OP_LE: return change <= c->value;
        case OP_GT: return change > c->value;
        case OP_GE: return change >= c->value;
        }
    }
    return 0;
}

void an_diff_condition_free(struct an_diff_condition *c) { free(c); }
