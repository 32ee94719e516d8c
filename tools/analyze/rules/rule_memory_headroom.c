/*
 * memory_headroom: device memory at its peak (this process + what others held) against
 * the capacity.
 *  - Low (< mem_low_share) while the GPU is underused and per-step fixed costs showed up
 *    (the GPU idle after each step's drain, or between launches issued too slowly): a
 *    larger batch fits and amortizes them. How much larger is estimated from the memory one
 *    step adds on top of what is held between steps. Saving (upper bound): that idle time
 *    x (1 - 1/k) for a batch k (at most 4) times larger. Idle waiting for input or copies
 *    is not spread: a larger batch takes longer to load and copy.
 *    No claim from a footprint under mem_batch_min_bytes (64 MiB): below that the memory a
 *    step adds is not a batch's activations that grow with the batch but what any step
 *    holds whatever its batch (cuBLAS workspaces, the caching allocator's 2 MiB blocks and
 *    20 MiB segments, a few staging buffers), so room / footprint (869x on a loop holding
 *    1 MiB) says nothing about how large a batch fits, and the per-step cost is then the
 *    sync's or the launches' own, which their findings remove outright. What fits is said
 *    only up to the 4x the saving takes ("4x or more"), never as a ratio past it.
 *  - High (>= mem_high_share): the run is near capacity; a risk, no time saving. When
 *    other processes hold more of it than this one, they are named first (shared_gpu,
 *    which leads the risks): this process's precision is not what filled the device.
 */
#include <stdio.h>

#include "rules.h"

static void near_capacity(const struct an_model *m, struct an_findings *out, double share)
{
    struct an_finding *f = an_finding_add(out, "memory_headroom");
    if (!f)
        return;
    char peak[32], cap[32], others[32];
    an_fmt_bytes(peak, sizeof peak, (double)m->mem.peak_total);
    an_fmt_bytes(cap, sizeof cap, (double)m->mem.capacity);
    an_fmt_bytes(others, sizeof others, (double)m->mem.others_at_start);
    snprintf(f->title, sizeof f->title, "Device memory is near capacity (%.0f%% at the peak)",
             share * 100);
    an_appendf(f->evidence, sizeof f->evidence,
               "This process peaked at %s at %.3f s; with %s held by others at start that is "
               "%.0f%% of the %s device.", peak, an_rel_s(m, m->mem.peak_ts), others,
               share * 100, cap);
    if (m->mem.others_at_start > m->mem.peak_total)
        snprintf(f->change, sizeof f->change,
                 "Most of it is other processes' (%s, see shared_gpu): give this run a GPU of "
                 "its own or cap the others first; then, to make room in this process, mixed "
                 "precision (torch.autocast(\"cuda\", dtype=torch.bfloat16)) or gradient "
                 "checkpointing (torch.utils.checkpoint).", others);
    else
        snprintf(f->change, sizeof f->change,
             "Make room before a larger input or another process tips it over: mixed precision "
             "(torch.autocast(\"cuda\", dtype=torch.bfloat16)), gradient checkpointing "
             "(torch.utils.checkpoint), or gradient accumulation over smaller micro-batches.");
    f->risk = 1;
    f->first_ts = f->last_ts = m->mem.peak_ts;
    an_finding_fig(f, "peak_share", share);
    an_finding_fig(f, "peak_bytes", (double)m->mem.peak_total);
    an_finding_fig(f, "capacity_bytes", (double)m->mem.capacity);
}

void an_rule_memory_headroom(const struct an_model *m, const struct an_rule_ctx *ctx,
                             struct an_findings *out)
{
    const struct an_memory *mem = &m->mem;
    if (!mem->capacity || !mem->peak_total)
        return;
    double used = (double)(mem->peak_total + mem->others_at_start);
    double share = used / (double)mem->capacity;
    if (share >= m->th.mem_high_share) {
        near_capacity(m, out, share);
        return;
    }
    if (share >= m->th.mem_low_share || an_steady_util(m) >= m->th.mem_low_util)
        return;
    /* the per-step fixed cost a larger batch would spread: the GPU's idle time right after
     * each step's drain and between launches the host issued too slowly. (Not the input
     * pipeline's, nor the copies': loading and copying a batch k times larger takes about
     * k times as long, so those do not shrink per sample.) */
    uint64_t fixed = an_run_idle(m, AN_CAUSE_SYNC) + an_run_idle(m, AN_CAUSE_LAUNCH);
    /* and never more than fixing the cause itself (the sync or launch finding) saves: the
     * batch spreads the cost, the fix removes it, so this finding ranks below that one */
    uint64_t direct = 0;
    const struct an_finding *sync = an_findings_find(ctx->so_far, "sync_bubble");
    const struct an_finding *launch = an_findings_find(ctx->so_far, "launch_bound");
    if (sync)
        direct = sync->saving_ns;
    if (launch && launch->saving_ns > direct)
        direct = launch->saving_ns;
    if (direct < fixed)
        fixed = direct;
    if (!fixed)
        return;
    double baseline = m->steps.steady ? (double)m->steps.live_min : 0;
    double transient = (double)mem->peak_total - baseline;
    if (transient <= 0)
        transient = (double)mem->peak_total;
    double room = m->th.mem_batch_target * (double)mem->capacity -
                  (double)mem->others_at_start - baseline;
    if (transient < (double)m->th.mem_batch_min_bytes)
        return;
    double k = room / transient;
    if (k < 1.5)
        return;
    /* what fits is reported; the step taken (and saved by) is at most 4x: past that,
     * convergence and the learning rate, not memory, limit the batch */
    double larger = k < 4 ? k : 4;
    uint64_t saving = an_u64((double)fixed * (1 - 1 / larger));
    if (!m->wall_ns || (double)saving / (double)m->wall_ns < m->th.min_share)
        return;
    struct an_finding *f = an_finding_add(out, "memory_headroom");
    if (!f)
        return;
    char peak[32], cap[32], step[32];
    an_fmt_bytes(peak, sizeof peak, (double)mem->peak_total);
    an_fmt_bytes(cap, sizeof cap, (double)mem->capacity);
    an_fmt_bytes(step, sizeof step, transient);
    if (k <= 4)
        snprintf(f->title, sizeof f->title,
                 "Memory to spare while the GPU is underused: a %.1fx larger batch fits", k);
    else
        snprintf(f->title, sizeof f->title,
                 "Memory to spare while the GPU is underused: a 4x larger batch fits");
    char factor[64] = "2-4x";
    if (k <= 4)
        snprintf(factor, sizeof factor, "about %.1fx", k);
    an_appendf(f->evidence, sizeof f->evidence,
               "Peak device memory %s (%.0f%% of %s with other processes' share), of which "
               "about %s comes and goes with each step; GPU utilization in the steady state "
               "%.0f%%%s.", peak, share * 100, cap, step, an_steady_util(m) * 100,
               m->gpu_timeline ? "" : " at most (host-only trace)");
    snprintf(f->change, sizeof f->change,
             "Raise the batch size %s (keeping %.0f%% of the device as margin), and scale the "
             "learning rate with it; per-step costs (synchronization, launches) are then "
             "spread over more samples.", factor, (1 - m->th.mem_batch_target) * 100);
    an_set_saving(m, f, saving);
    f->first_ts = f->last_ts = mem->peak_ts;
    an_finding_fig(f, "peak_share", share);
    an_finding_fig(f, "peak_bytes", (double)mem->peak_total);
    an_finding_fig(f, "batch_factor", larger);
}
