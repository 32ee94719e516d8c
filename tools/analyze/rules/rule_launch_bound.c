/*
 * launch_bound: many small kernels, issued slower than the GPU runs them, so the GPU idles
 * between them. With the GPU timeline: the idle gaps during which the host was issuing
 * work, and kernels shorter than the time between launches. Host-only: many launches per
 * step, the host busy issuing most of the step and hardly ever waiting for the GPU (it
 * finished each step's work about as soon as it was queued).
 * Saving: the replay with every kernel launched from a CUDA graph (replay.h, AN_WI_GRAPHS:
 * no host time per launch or per op between launches, kernels back to back); host-only,
 * the kernels' own time is what the drains prove, nil where they did not wait. It fires
 * when that saving is min_share of the run, whatever the steps found.
 * CUDA graph replays do not count as launches here (one call runs a whole graph's kernels):
 * a program that already replays graphs is told that the launches left are those outside
 * them, rather than to capture a graph.
 */
#include <stdio.h>

#include "rules.h"

void an_rule_launch_bound(const struct an_model *m, const struct an_rule_ctx *ctx,
                          struct an_findings *out)
{
    (void)ctx;
    if (m->total.launches <= m->total.graph_launches || !an_whatif_worth(m, AN_WI_GRAPHS))
        return;
    /* the evidence is the steady state's, or the whole run's when the steady state (steps
     * found wrongly, or launches only at start-up) holds no kernel launch */
    int steady = m->steady.launches > m->steady.graph_launches && an_steady_span(m);
    const struct an_totals *c = steady ? &m->steady : &m->total;
    uint64_t steps = steady ? an_steady_steps(m) : 1;
    uint64_t span = steady ? an_steady_span(m) : m->wall_ns;
    if (!span)
        return;
    uint64_t graphs = c->graph_launches;
    double launches_per_step = (double)(c->launches - graphs) / (double)steps;
    double graphs_per_step = (double)graphs / (double)steps;
    double share, issue_share = 0, wait_share = 0;
    const struct an_replay *r = &m->replay;
    double unproven = r->ops_virtual ? (double)r->ops_unproven / (double)r->ops_virtual : 0;
    if (m->gpu_timeline) {
        share = an_idle_ns(m, c, AN_CAUSE_LAUNCH) / (double)span;
    } else {
        wait_share = (double)c->sync_wait_ns / (double)span;
        double gap_share = (double)c->host_gap_ns / (double)span;
        issue_share = 1 - wait_share - gap_share;
        if (issue_share < 0)
            issue_share = 0;
        share = issue_share;
    }
    struct an_finding *f = an_finding_add(out, "launch_bound");
    if (!f)
        return;
    char phrase[128], step[32];
    if (steady)
        an_steady_phrase(m, phrase, sizeof phrase);
    else
        snprintf(phrase, sizeof phrase, "whole run (%.2f s)", (double)m->wall_ns / 1e9);
    an_fmt_ns(step, sizeof step, (double)m->steps.median_ns);
    snprintf(f->title, sizeof f->title,
             "Launch-bound: many tiny kernels, queued slower than the GPU runs them");
    an_appendf(f->evidence, sizeof f->evidence, "In the %s the host launched %.0f kernels %s",
               phrase, launches_per_step, steady && m->steps.steady ? "per step" : "in all");
    if (graphs)
        an_appendf(f->evidence, sizeof f->evidence, " outside the %.0f CUDA graph replays",
                   graphs_per_step);
    if (m->ntop_kernels)
        an_appendf(f->evidence, sizeof f->evidence, " (most launched: %s, %llu times)",
                   m->top_kernels[0].name, (unsigned long long)m->top_kernels[0].launches);
    if (m->gpu_timeline) {
        char kernel[32], interval[32];
        double mean_kernel =
            c->gpu_kernels ? (double)c->gpu_kernel_ns / (double)c->gpu_kernels : 0;
        an_fmt_ns(kernel, sizeof kernel, mean_kernel);
        an_fmt_ns(interval, sizeof interval, (double)span / (double)c->launches);
        an_appendf(f->evidence, sizeof f->evidence,
                   ". Kernels ran %s on average but were launched one every %s: the GPU "
                   "idled between them %.0f%% of the time.", kernel, interval, share * 100);
    } else {
        an_appendf(f->evidence, sizeof f->evidence,
                   ". The host spent %.0f%% of the time issuing work and only %.0f%% waiting "
                   "for the GPU: the GPU finished each step's work about as soon as it was "
                   "queued (host-only trace: kernel durations not recorded).",
                   issue_share * 100, wait_share * 100);
        /* a drain that returns right after the last launch proves the GPU kept pace, not
         * how long its kernels ran: taken as nil, the graph's saving is the most it can be
         * (60 launches after 30 us of Python each, 20 us kernels: 145 ms said, 54 gained).
         * With no kernel timed at all, that work is where all of the saving comes from
         * (where a read waited, the GPU was busy, and a graph does not make it faster):
         * any of it makes the saving a bound (a fifth of a loop's steps keeping pace, the
         * host stalled a few ms, "saved" 12 ms where graphs gained nothing). A sampled
         * timeline's windows time most of it (known_chain): a bound where half or more is
         * still untimed. */
        if (unproven >= (m->gpu_sampled ? 0.5 : 0) && unproven > 0) {
            an_appendf(f->evidence, sizeof f->evidence,
                       " No call waited measurably for %.0f%% of the work it issued: the GPU "
                       "kept pace, and how long those kernels ran is unknown; taken as nil, "
                       "the saving is an upper bound (a trace with the GPU's timeline "
                       "measures it).", unproven * 100);
            f->upper_bound = 1;
        }
    }
    if (graphs)
        an_appendf(f->change, sizeof f->change,
                   "The step already replays CUDA graphs; what stays launch-bound is the work "
                   "outside them. Find what keeps it out (TORCH_LOGS=\"graph_breaks\" with "
                   "torch.compile; CPU syncs such as .item(), dynamic shapes and CPU tensors "
                   "stop a capture) and bring it into the graph, ");
    else
        an_appendf(f->change, sizeof f->change,
                   "Cut the cost per kernel launch: capture the step in a CUDA graph "
                   "(torch.compile(mode=\"reduce-overhead\"), or torch.cuda.CUDAGraph by "
                   "hand), ");
    an_appendf(f->change, sizeof f->change,
               "let torch.compile fuse the small ops, or raise the batch size so each kernel "
               "does more work.");
    an_set_whatif_saving(m, f, AN_WI_GRAPHS);
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "launches_per_step", launches_per_step);
    an_finding_fig(f, "graph_launches_per_step", graphs_per_step);
    an_finding_fig(f, "idle_share_steady", m->gpu_timeline ? share : 0);
    an_finding_fig(f, "issue_share", issue_share);
    an_finding_fig(f, "wait_share", wait_share);
    an_finding_fig(f, "unproven_share", m->gpu_timeline ? 0 : unproven);
}
