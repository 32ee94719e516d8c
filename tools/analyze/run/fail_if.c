/*
 * --fail-if EXPR, the CI gate. EXPR is one comparison:
 *   finding=ID | finding!=ID          a finding with that id is (not) reported
 *   METRIC OP NUMBER[%]               OP: < <= > >= == !=; "60%" is 0.6
 * Metrics (of the run; per-process figures are the main process's):
 *   gpu_util, steady_util (0..1), wall_s, step_ms (median steady step), steps, findings,
 *   saving_s, saving_share (the top finding's), idle.CAUSE (steady share of one cause:
 *   idle.input_pipeline ...), damaged_bytes.
 * A metric that has no value for this run (step_ms without steps) never holds.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"

enum op { OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };

struct an_condition {
    int is_finding;
    char name[64];
    enum op op;
    double value;
};

const char *an_condition_metrics(void)
{
    return "gpu_util, steady_util, wall_s, step_ms, steps, findings, saving_s, saving_share, "
           "idle.<cause>, damaged_bytes; or finding=ID / finding!=ID";
}

static int known_metric(const char *name)
{
    static const char *const metrics[] = {"gpu_util", "steady_util", "wall_s", "step_ms",
                                          "steps", "findings", "saving_s", "saving_share",
                                          "damaged_bytes"};
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
        if (!strcmp(name, metrics[i]))
            return 1;
    if (!strncmp(name, "idle.", 5))
        for (int c = 0; c < AN_CAUSE_COUNT; c++)
            if (!strcmp(name + 5, an_cause_name((enum an_cause)c)))
                return 1;
    return 0;
}

size_t an_condition_name(const char *expr, const char *p, char *name, size_t size, char *err,
                         size_t errlen)
{
    size_t n = 0;
    while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '.'))
        n++;
    if (!n || n >= size) {
        snprintf(err, errlen, "'%s': expected a metric or 'finding' first", expr);
        return 0;
    }
    memcpy(name, p, n);
    name[n] = 0;
    return n;
}

int an_condition_number(const char *expr, const char *p, double *value, int *percent,
                        char *err, size_t errlen)
{
    char *end;
    *value = strtod(p, &end);
    *percent = 0;
    if (end == p) {
        snprintf(err, errlen, "'%s': expected a number after the operator", expr);
        return -1;
    }
    if (*end == '%') {
        *value /= 100;
        *percent = 1;
        end++;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end) {
        snprintf(err, errlen, "'%s': unexpected '%s' after the number", expr, end);
        return -1;
    }
    return 0;
}

int an_condition_parse(const char *expr, struct an_condition **out, char *err, size_t errlen)
{
    struct an_condition c = {0};
    const char *p = expr;
    while (isspace((unsigned char)*p))
        p++;
    size_t n = an_condition_name(expr, p, c.name, sizeof c.name, err, errlen);
    if (!n)
        return -1;
    p += n;
    while (isspace((unsigned char)*p))
        p++;
    static const struct { const char *text; enum op op; } ops[] = {
        {"<=", OP_LE}, {">=", OP_GE}, {"==", OP_EQ}, {"!=", OP_NE},
        {"<", OP_LT},  {">", OP_GT},  {"=", OP_EQ},
    };
    size_t k = 0;
    for (; k < sizeof ops / sizeof ops[0]; k++)
        if (!strncmp(p, ops[k].text, strlen(ops[k].text)))
            break;
    if (k == sizeof ops / sizeof ops[0]) {
        snprintf(err, errlen, "'%s': expected one of < <= > >= = == != after '%s'", expr,
                 c.name);
        return -1;
    }
    c.op = ops[k].op;
    p += strlen(ops[k].text);
    while (isspace((unsigned char)*p))
        p++;
    if (!strcmp(c.name, "finding")) {
        if (c.op != OP_EQ && c.op != OP_NE) {
            snprintf(err, errlen, "'%s': finding takes = or != and a rule id", expr);
            return -1;
        }
        size_t len = strcspn(p, " \t");
        int known = 0;
        for (size_t r = 0; r < an_nrules; r++)
            known |= strlen(an_rules[r].id) == len && !strncmp(an_rules[r].id, p, len);
        for (size_t r = 0; r < an_nrun_rules; r++)
            known |= strlen(an_run_rule_ids[r]) == len && !strncmp(an_run_rule_ids[r], p, len);
        if (!known || p[len]) {
            int at = snprintf(err, errlen, "'%s': unknown finding id (known:", expr);
            for (size_t r = 0; r < an_nrules && at >= 0 && (size_t)at < errlen; r++)
                at += snprintf(err + at, errlen - (size_t)at, "%s %s", r ? "," : "",
                               an_rules[r].id);
            if (at >= 0 && (size_t)at < errlen)
                snprintf(err + at, errlen - (size_t)at, ")");
            return -1;
        }
        c.is_finding = 1;
        memcpy(c.name, p, len);
        c.name[len] = 0;
    } else {
        if (!known_metric(c.name)) {
            snprintf(err, errlen, "'%s': unknown metric '%s' (known: %s)", expr, c.name,
                     an_condition_metrics());
            return -1;
        }
        int percent;
        if (an_condition_number(expr, p, &c.value, &percent, err, errlen) != 0)
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

int an_metric_known(const char *name) { return known_metric(name); }

int an_metric_value(const char *name, const struct an_run *run, double *v)
{
    const struct an_model *m = run->active ? run->traces[run->primary].model : NULL;
    const struct an_finding *top = NULL;  /* the top time finding (risks rank first) */
    for (size_t i = 0; i < run->findings.count && !top; i++)
        if (!run->findings.items[i].risk)
            top = &run->findings.items[i];
    if (!strcmp(name, "findings"))
        *v = (double)run->findings.count;
    else if (!strcmp(name, "damaged_bytes"))
        *v = (double)run->damaged_bytes;
    else if (!strcmp(name, "saving_s"))
        *v = top && !top->risk ? (double)top->saving_ns / 1e9 : 0;
    else if (!strcmp(name, "saving_share"))
        *v = top && !top->risk ? top->saving_share : 0;
    else if (!m)
        return 0;
    else if (!strcmp(name, "gpu_util"))
        *v = an_run_util(run);
    else if (!strcmp(name, "steady_util"))
        *v = an_steady_util(m);
    else if (!strcmp(name, "wall_s"))
        *v = (double)m->wall_ns / 1e9;
    else if (!strcmp(name, "steps"))
        *v = (double)m->steps.count;
    else if (!strcmp(name, "step_ms")) {
        if (!m->steps.steady)
            return 0;
        *v = (double)m->steps.median_ns / 1e6;
    } else {
        for (int k = 0; k < AN_CAUSE_COUNT; k++)
            if (!strcmp(name + 5, an_cause_name((enum an_cause)k)))
                *v = an_steady_share(m, (enum an_cause)k);
    }
    return 1;
}

int an_condition_holds(const struct an_condition *c, const struct an_run *run)
{
    if (c->is_finding) {
        int present = an_findings_find(&run->findings, c->name) != NULL;
        return c->op == OP_EQ ? present : !present;
    }
    double v = 0;
    if (!an_metric_value(c->name, run, &v))
        return 0;
    switch (c->op) {
    case OP_LT: return v < c->value;
    case OP_LE: return v <= c->value;
    case OP_GT: return v > c->value;
    case OP_GE: return v >= c->value;
    case OP_EQ: return v == c->value;
    case OP_NE: return v != c->value;
    }
    return 0;
}

void an_condition_free(struct an_condition *c)
{
    free(c);
}
