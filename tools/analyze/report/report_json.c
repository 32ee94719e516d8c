/* --json: one object, keys documented in docs/analyze-json.md (stable; only added to). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "analyze.h"
#include "text_out.h"

static void str(FILE *out, const char *s)
{
    gw_put_json_string(out, s, strlen(s));
}

static void field_str(FILE *out, const char *key, const char *s, size_t n)
{
    fprintf(out, "\"%s\": ", key);
    gw_put_json_string(out, s, n);
}

static void num(FILE *out, double v)
{
    if (!isfinite(v))
        fputs("null", out);
    else if (fabs(v) < 9e15 && v == (double)(int64_t)v)
        fprintf(out, "%" PRId64, (int64_t)v);
    else
        fprintf(out, "%.6g", v);
}

static void rank_field(FILE *out, const char *key, int32_t v)
{
    if (v < 0)
        fprintf(out, "\"%s\": null", key);
    else
        fprintf(out, "\"%s\": %" PRId32, key, v);
}

static const char *timeline(int gpu)
{
    return gpu ? "cupti" : "host_inferred";
}

static void steps(FILE *out, const struct an_model *m)
{
    const struct an_steps *s = &m->steps;
    static const char *const sources[] = {"none", "nvtx", "auto"};
    fprintf(out, "\"steps\": {\"source\": \"%s\", \"marker\": ", sources[s->source]);
    str(out, s->marker);
    fprintf(out, ", \"count\": %" PRIu64 ", \"warmup\": %" PRIu64 ", \"steady\": %" PRIu64
            ", \"median_ns\": %" PRIu64 ", \"mean_ns\": %" PRIu64 ", \"p90_ns\": %" PRIu64
            ", \"min_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 ", \"warmup_ns\": %" PRIu64
            ", \"steady_start_s\": %.6f, \"steady_end_s\": %.6f}",
            s->count, s->warmup, s->steady, s->median_ns, s->mean_ns, s->p90_ns, s->min_ns,
            s->max_ns, s->warmup_ns, an_rel_s(m, m->steady_start), an_rel_s(m, m->steady_end));
}

static void idle(FILE *out, const struct an_model *m)
{
    uint64_t span = an_steady_span(m);
    fputs("\"idle\": {", out);
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        double r = an_idle_ns(m, &m->total, (enum an_cause)c);
        double s = an_idle_ns(m, &m->steady, (enum an_cause)c);
        fprintf(out, "%s\"%s\": {\"run_ns\": ", c ? ", " : "", an_cause_name((enum an_cause)c));
        num(out, r);
        fputs(", \"wall_share\": ", out);
        num(out, m->wall_ns ? r / (double)m->wall_ns : 0);
        fputs(", \"steady_ns\": ", out);
        num(out, s);
        fputs(", \"step_share\": ", out);
        num(out, span ? s / (double)span : 0);
        fputc('}', out);
    }
    fputs("}, \"largest_idle\": [", out);
    for (size_t i = 0; i < m->nlargest; i++) {
        const struct an_interval *iv = &m->largest[i];
        fprintf(out, "%s{\"start_s\": %.6f, \"end_s\": %.6f, \"ns\": %" PRIu64 ", \"cause\": \"%s\"}",
                i ? ", " : "", an_rel_s(m, iv->start), an_rel_s(m, iv->end), iv->end - iv->start,
                an_cause_name((enum an_cause)iv->cause));
    }
    fputc(']', out);
}

static void transfers(FILE *out, const struct an_model *m)
{
    static const char *const dirs[AN_DIRS] = {"unknown", "HtoD", "DtoH", "DtoD", "HtoH", "peer"};
    static const char *const kinds[AN_HOST_KINDS] = {"device", "pageable", "pinned", "managed"};
    fputs("\"transfers\": [", out);
    int first = 1;
    for (int d = 0; d < AN_DIRS; d++)
        for (int k = 0; k < AN_HOST_KINDS; k++) {
            const struct an_xfer *x = &m->xfer[d][k];
            if (!x->count && !x->gpu_count)
                continue;
            fprintf(out, "%s{\"dir\": \"%s\", \"memory\": \"%s\", \"copies\": %" PRIu64
                    ", \"bytes\": %" PRIu64 ", \"host_ns\": %" PRIu64 ", \"blocking\": %" PRIu64
                    ", \"blocking_ns\": %" PRIu64 ", \"sync_api\": %" PRIu64 ", \"small\": %" PRIu64
                    ", \"gpu_copies\": %" PRIu64 ", \"gpu_bytes\": %" PRIu64 ", \"gpu_ns\": %" PRIu64 "}",
                    first ? "" : ", ", dirs[d], kinds[k], x->count, x->bytes, x->host_ns,
                    x->blocking, x->blocking_ns, x->sync_api, x->small, x->gpu_count,
                    x->gpu_bytes, x->gpu_ns);
            first = 0;
        }
    fputs("], \"best_bandwidth_bytes_per_s\": {", out);
    first = 1;
    for (int d = 1; d < AN_DIRS; d++)
        if (m->best_bw[d]) {
            fprintf(out, "%s\"%s\": %" PRIu64, first ? "" : ", ", dirs[d], m->best_bw[d]);
            first = 0;
        }
    fputc('}', out);
}

/* "kernels": the kernels with most GPU time (GPU records; empty without a timeline). */
static void kernels(FILE *out, const struct an_model *m)
{
    fputs("\"kernels\": [", out);
    for (size_t i = 0; i < m->nkernel_times; i++) {
        const struct an_kernel_time *k = &m->kernel_times[i];
        fputs(i ? ", {" : "{", out);
        field_str(out, "name", k->name, strlen(k->name));
        fprintf(out, ", \"shape\": %" PRIu64 ", \"records\": %" PRIu64 ", \"gpu_ns\": %" PRIu64
                     "}",
                k->shape_id, k->records, k->gpu_ns);
    }
    fputc(']', out);
}

static void memory(FILE *out, const struct an_model *m)
{
    const struct an_memory *mem = &m->mem;
    fprintf(out, "\"memory\": {\"capacity_bytes\": %" PRIu64 ", \"others_at_start_bytes\": %" PRIu64
            ", \"peak_bytes\": %" PRIu64 ", \"peak_s\": %.6f, \"peak_by_kind\": {\"plain\": %" PRIu64
            ", \"pool\": %" PRIu64 ", \"vmm\": %" PRIu64 ", \"managed\": %" PRIu64 "}"
            ", \"pinned_peak_bytes\": %" PRIu64 ", \"allocs\": %" PRIu64 ", \"frees\": %" PRIu64
            ", \"failed\": %" PRIu64 ", \"ooms\": %" PRIu64 ", \"ooms_fragmented\": %" PRIu64
            ", \"retry_storms\": %" PRIu64 ", \"retry_storm_ns\": %" PRIu64
            ", \"held_at_exit_bytes\": %" PRIu64 ", \"held_at_exit_blocks\": %" PRIu64
            ", \"steady_first_bytes\": %" PRIu64 ", \"steady_last_bytes\": %" PRIu64
            ", \"steady_growth_steps\": %" PRIu64,
            mem->capacity, mem->others_at_start, mem->peak_total, an_rel_s(m, mem->peak_ts),
            mem->peak_by_kind[AN_MEM_PLAIN], mem->peak_by_kind[AN_MEM_POOL],
            mem->peak_by_kind[AN_MEM_VMM], mem->peak_by_kind[AN_MEM_MANAGED], mem->pinned_peak,
            mem->allocs, mem->frees, mem->failed, mem->ooms, mem->ooms_fragmented, mem->storms,
            mem->storm_ns, mem->at_exit_bytes, mem->at_exit_count, m->steps.live_first,
            m->steps.live_last, m->steps.growth_steps);
    if (mem->blocks_taken || mem->blocks_given_back)  /* (a PyTorch profiler trace's) */
        fprintf(out, ", \"caching_allocator\": {\"blocks_taken\": %" PRIu64 ", \"blocks_given_back\": %"
                PRIu64 ", \"peak_allocated_bytes\": %" PRIu64 ", \"peak_reserved_bytes\": %"
                PRIu64 "}", mem->blocks_taken, mem->blocks_given_back, mem->peak_total,
                mem->reserved_peak);
    fputs("}, \"memory_timeline\": [", out);
    for (size_t i = 0; i < m->nmem_series; i++)
        fprintf(out, "%s{\"t_s\": %.6f, \"bytes\": %" PRIu64 "}", i ? ", " : "",
                an_rel_s(m, m->mem_series[i].ts), m->mem_series[i].bytes);
    fputc(']', out);
}

/* Kinds never held are left out of "kinds" and of every bin; "total" is always there. */
static void held_values(FILE *out, const struct an_mem_timeline *tl, const uint64_t *v)
{
    fputc('{', out);
    for (int k = 0; k < AN_HELD_VALUES; k++)
        if (k != AN_HELD_TOTAL && ((tl->ever >> k) & 1))
            fprintf(out, "\"%s\": %" PRIu64 ", ", an_held_name(k), v[k]);
    fprintf(out, "\"total\": %" PRIu64 "}", v[AN_HELD_TOTAL]);
}

static void held_over_time(FILE *out, const struct an_model *m)
{
    const struct an_mem_timeline *tl = &m->held;
    fprintf(out, "\"memory_over_time\": {\"bin_ns\": %" PRIu64 ", \"kinds\": [",
            tl->nbins ? tl->width : 0);
    int first = 1;
    for (int k = 0; k < AN_HELD_VALUES; k++)
        if (k != AN_HELD_TOTAL && ((tl->ever >> k) & 1)) {
            fprintf(out, "%s\"%s\"", first ? "" : ", ", an_held_name(k));
            first = 0;
        }
    fputs("], \"bins\": [", out);
    for (size_t i = 0; i < tl->nbins; i++) {
        uint64_t t = tl->origin + i * tl->width;
        fprintf(out, "%s{\"t_ns\": %" PRIu64 ", \"max_bytes\": ", i ? ",\n     " : "\n     ",
                t > m->first_ts ? t - m->first_ts : 0);
        held_values(out, tl, tl->bin[i].max);
        fputs(", \"end_bytes\": ", out);
        held_values(out, tl, tl->bin[i].end);
        fputc('}', out);
    }
    fputs("]}", out);
}

/* The steady state's CPU use (null without CPU samples over it). */
static void cpu(FILE *out, const struct an_model *m)
{
    const struct an_cpu_use *c = &m->cpu;
    if (!c->known) {
        fputs("\"cpu\": null", out);
        return;
    }
    fprintf(out, "\"cpu\": {\"training_tid\": %" PRIu32 ", \"training_busy\": ", c->train_tid);
    num(out, c->train_busy);
    fputs(", \"training_waiting\": ", out);
    num(out, c->train_wait);
    fputs(", \"training_waiting_on_cpu\": ", out);
    num(out, c->train_wait_cpu);
    fputs(", \"training_preempted\": ", out);
    if (c->runq_known)
        num(out, c->train_runq);
    else
        fputs("null", out);
    fputs(", \"process_cpus\": ", out);
    num(out, c->process_cpus);
    fprintf(out, ", \"workers_running\": %" PRIu32 ", \"child_processes\": %" PRIu32
            ", \"workers_cpus\": ", c->workers, c->processes);
    num(out, c->workers_cpus);
    fputs(", \"other_processes_cpus\": ", out);
    if (c->others_known)
        num(out, c->others_cpus);
    else
        fputs("null", out);
    fputc('}', out);
}

/* The what-if replay: the wall time replayed as measured, its error, and each change's. */
static void replay(FILE *out, const struct an_model *m)
{
    const struct an_replay *r = &m->replay;
    if (!r->done) {
        fputs("\"replay\": null", out);
        return;
    }
    fprintf(out, "\"replay\": {\"replayed_ns\": %" PRIu64 ", \"replay_error\": ",
            r->wall_ns[AN_WI_AS_MEASURED]);
    num(out, r->error);
    fprintf(out, ", \"ops_matched\": %" PRIu64 ", \"ops_virtual\": %" PRIu64
            ", \"ops_unproven\": %" PRIu64 ", \"records_unmatched\": %" PRIu64
            ", \"host_forced\": %" PRIu64 ", \"batch_loads\": %" PRIu64
            ", \"pauses\": %" PRIu64 ", \"workers\": %u, \"whatif\": {",
            r->ops_matched, r->ops_virtual, r->ops_unproven, r->records_unmatched, r->forced,
            r->loads, r->pauses, r->workers);
    for (int w = AN_WI_AS_MEASURED + 1; w < AN_WI_COUNT; w++)
        fprintf(out, "%s\"%s\": {\"wall_ns\": %" PRIu64 ", \"saving_ns\": %" PRIu64 "}",
                w > AN_WI_AS_MEASURED + 1 ? ", " : "", an_whatif_name(w),
                r->wall_ns[an_world_of(1u << w)], an_replay_saving(r, w));
    /* each pair of changes made together: what "after" figures are read from */
    fputs("}, \"pairs\": {", out);
    int listed = 0;
    for (int world = 1 + AN_CHANGES; world < AN_WORLDS; world++) {
        unsigned changes = an_world_changes(world);
        const char *names[2];
        int n = 0;
        for (int w = AN_WI_AS_MEASURED + 1; w < AN_WI_COUNT && n < 2; w++)
            if (changes & 1u << w)
                names[n++] = an_whatif_name(w);
        if (n != 2)
            continue;
        fprintf(out, "%s\"%s+%s\": %" PRIu64, listed++ ? ", " : "", names[0], names[1],
                r->wall_ns[world]);
    }
    /* host-only, each change's world with drained work at its least (replay.h) */
    fputs("}, \"at_least\": {", out);
    listed = 0;
    for (int w = AN_WI_AS_MEASURED + 1; w < AN_WI_COUNT; w++) {
        int world = an_world_of(1u << w | 1u << AN_WI_LEAST);
        if (world >= 0)
            fprintf(out, "%s\"%s\": %" PRIu64, listed++ ? ", " : "", an_whatif_name(w),
                    r->wall_ns[world]);
    }
    fputs("}}", out);
}

static void process(FILE *out, const struct an_run *run, const struct an_trace *t)
{
    const struct an_model *m = t->model;
    const struct gw_file_header *h = &t->hdr;
    fprintf(out, "  {\"pid\": %" PRIu32 ", ", h->pid);
    rank_field(out, "rank", h->rank);
    fputs(", \"path\": ", out);
    str(out, t->path);
    fputs(", \"device\": {", out);
    field_str(out, "name", h->device_name, an_field_len(h->device_name, sizeof h->device_name));
    fprintf(out, ", \"ordinal\": %" PRId32 "}, \"gpu_timeline\": \"%s\", \"wall_ns\": %" PRIu64
            ", \"gpu_busy_ns\": %" PRIu64 ", \"gpu_util\": ",
            h->device_ordinal, timeline(m->gpu_timeline), m->wall_ns,
            an_busy_ns(m, &m->total, m->wall_ns));
    num(out, an_gpu_util(m));
    fputs(", \"steady_util\": ", out);
    num(out, an_steady_util(m));
    fprintf(out, ", \"host_calls\": %" PRIu64 ", \"gpu_records\": %" PRIu64
            ", \"gpu_cut_ns\": %" PRIu64 ", \"kernel_launches\": %" PRIu64
            ", \"late_events\": %" PRIu64 ", \"assumed_drains\": %" PRIu64 ",\n   ",
            m->host_calls, m->gpu_records, m->gpu_cut_ns, m->total.launches, m->late_events,
            m->assumed_drains);
    if (m->gpu_sampled)
        fprintf(out, "\"gpu_windows\": {\"count\": %" PRIu64 ", \"covered_ns\": %" PRIu64
                     ", \"busy_ns\": %" PRIu64 "},\n   ",
                m->gpu_windows, m->gpu_window_ns, m->gpu_window_busy_ns);
    steps(out, m);
    if (m->py.present) {
        fputs(",\n   \"python\": {", out);
        field_str(out, "version", m->py.version, strlen(m->py.version));
        fprintf(out, ", \"follows_gil_releases\": %s}",
                m->py.follows_releases ? "true" : "false");
    }
    fputs(",\n   ", out);
    replay(out, m);
    fputs(",\n   ", out);
    cpu(out, m);
    fputs(",\n   ", out);
    idle(out, m);
    fputs(",\n   ", out);
    transfers(out, m);
    fputs(",\n   ", out);
    kernels(out, m);
    fprintf(out, ",\n   \"communication\": {\"kernels\": %" PRIu64 ", \"gpu_ns\": %" PRIu64
                 ", \"exposed_ns\": %" PRIu64 ", \"waited_ns\": %" PRIu64
                 ", \"waited_steady_ns\": %" PRIu64 ", \"last_arrivals\": %" PRIu64
                 ", \"clock_offset_ns\": %" PRId64
                 ", \"overlap\": ",
            m->comm_kernels, m->comm_ns, m->comm_exposed_ns, t->comm_wait_ns,
            t->comm_wait_steady_ns, t->comm_last, t->clock_offset_ns);
    num(out, an_comm_overlap_share(m));
    fputc('}', out);
    fputs(",\n   ", out);
    memory(out, m);
    fputs(",\n   ", out);
    held_over_time(out, m);
    fputs(",\n   ", out);
    an_report_cost_json_process(out, run, t);
    fputc('}', out);
}

/* "native_sites": where native stacks say its calls were made; absent when none did. */
static void native_sites(FILE *out, const struct an_finding *f)
{
    const struct an_py_cat *c = &f->lines;
    if (!an_native_any(c))
        return;
    fputs(", \"native_sites\": {\"calls\": ", out);
    str(out, an_line_cat_name(f->lines_cat));
    fputs(", \"unit\": ", out);
    str(out, an_line_cat_unit(f->lines_cat));
    fprintf(out, ", \"with_stack\": %" PRIu64 ", \"sites\": [", c->native_with_stack);
    for (size_t i = 0; i < c->nnative; i++) {
        const struct an_native_site *n = &c->native[i];
        fputs(i ? ", {" : "{", out);
        field_str(out, "where", n->where, strlen(n->where));
        fprintf(out, ", \"stack\": %" PRIu64 ", \"weight\": %" PRIu64 ", \"calls\": %" PRIu64 "}",
                n->stack, n->weight, n->calls);
    }
    fputs("]}", out);
}

/* "python_lines": the user's lines behind the finding, each with its whole stack
 * (innermost first); absent when the trace has no Python stacks. */
static void python_lines(FILE *out, const struct an_finding *f)
{
    const struct an_py_cat *c = &f->lines;
    if (!an_py_cat_any(c))
        return;
    fputs(", \"python_lines\": {\"calls\": ", out);
    str(out, an_line_cat_name(f->lines_cat));
    fputs(", \"unit\": ", out);
    str(out, an_line_cat_unit(f->lines_cat));
    fprintf(out, ", \"with_stack\": %" PRIu64 ", \"without_python\": %" PRIu64 ", \"lines\": [",
            c->with_stack, c->without);
    for (size_t i = 0; i < c->ntop; i++) {
        const struct an_py_line *l = &c->top[i];
        fputs(i ? ", {" : "{", out);
        field_str(out, "file", l->file, strlen(l->file));
        fprintf(out, ", \"line\": %" PRIu64 ", ", l->line);
        field_str(out, "function", l->function, strlen(l->function));
        if (l->loop_line) {  /* input: the loop's header, where the batch was fetched */
            fprintf(out, ", \"loop_line\": %" PRIu64 ", ", l->loop_line);
            field_str(out, "loop", l->loop, strlen(l->loop));
        }
        fprintf(out, ", \"weight\": %" PRIu64 ", \"calls\": %" PRIu64 ", \"stack\": [",
                l->weight, l->calls);
        const char *frame = l->stack;
        for (int k = 0; *frame; k++) {
            const char *end = strchr(frame, '\n');
            size_t n = end ? (size_t)(end - frame) : strlen(frame);
            if (k)
                fputs(", ", out);
            gw_put_json_string(out, frame, n);
            frame += n + (end != NULL);
        }
        fputs("]}", out);
    }
    fputs("]}", out);
}

static void finding(FILE *out, const struct an_run *run, size_t i, size_t number)
{
    const struct an_finding *f = &run->findings.items[i];
    const struct an_model *m = run->traces[run->primary].model;
    for (size_t k = 0; k < run->ntraces; k++)  /* times relative to the finding's process */
        if (run->traces[k].model && run->traces[k].active && run->traces[k].hdr.pid == f->pid)
            m = run->traces[k].model;
    /* risks are listed apart: "risk_rank" in "risks", "rank" in "findings" */
    fprintf(out, "  {\"%s\": %zu, \"id\": ", f->risk ? "risk_rank" : "rank", number);
    str(out, f->id);
    fputs(", \"title\": ", out);
    str(out, f->title);
    fputs(", \"evidence\": ", out);
    str(out, f->evidence);
    fputs(", \"change\": ", out);
    str(out, f->change);
    /* (a PyTorch profiler trace's findings only: what it lacks, report_source.c) */
    const char *caveat = an_profiler_caveat(run, f->id);
    if (an_run_from_profiler(run)) {
        fputs(", \"confidence\": ", out);
        str(out, caveat ? "lowered" : "measured");
    }
    if (caveat) {
        fputs(", \"confidence_why\": ", out);
        str(out, caveat);
    }
    fprintf(out, ", \"risk\": %s, ", f->risk ? "true" : "false");
    if (f->risk) {
        fputs("\"strikes_s\": ", out);
        if (f->strikes_s >= 0)
            num(out, f->strikes_s);
        else
            fputs("null", out);
        fputs(", ", out);
    }
    fprintf(out, "\"saving_ns\": %" PRIu64 ", \"saving_share\": ", f->saving_ns);
    num(out, f->saving_share);
    fputs(", \"step_share\": ", out);
    num(out, f->step_share);
    if (f->lower_bound)  /* (only where it holds: the saving is a floor) */
        fputs(", \"saving_at_least\": true", out);
    if (f->after_id[0]) {
        fputs(", \"after\": {\"id\": ", out);
        str(out, f->after_id);
        fprintf(out, ", \"saving_ns\": %" PRIu64 "}", f->after_ns);
    } else {
        fputs(", \"after\": null", out);
    }
    const struct an_finding *same = an_finding_same_wait(&run->findings, f);
    fputs(", \"same_wait_as\": ", out);
    if (same)
        str(out, same->id);
    else
        fputs("null", out);
    fputs(", \"gpu_hours_saved\": ", out);
    num(out, f->gpu_hours_saved);
    fputs(", \"saving_usd\": ", out);
    if (run->opt.gpu_price > 0)
        num(out, f->gpu_hours_saved * run->opt.gpu_price);
    else
        fputs("null", out);
    fprintf(out, ", \"pid\": %" PRIu32 ", ", f->pid);
    rank_field(out, "process_rank", f->rank);
    fprintf(out, ", \"processes\": %u, \"ranks\": [", f->processes);
    for (unsigned k = 0; k < f->nranks; k++)
        fprintf(out, "%s%" PRId32, k ? ", " : "", f->ranks[k]);
    fprintf(out, "], \"first_s\": %.6f, \"last_s\": %.6f, \"figures\": {",
            m && f->first_ts ? an_rel_s(m, f->first_ts) : 0.0,
            m && f->last_ts ? an_rel_s(m, f->last_ts) : 0.0);
    for (size_t k = 0; k < f->nfig; k++) {
        fprintf(out, "%s\"%s\": ", k ? ", " : "", f->fig[k].key);
        num(out, f->fig[k].value);
    }
    fputc('}', out);
    python_lines(out, f);
    native_sites(out, f);
    if (f->nsites) {
        fputs(", \"alloc_sites\": [", out);
        for (size_t k = 0; k < f->nsites; k++) {
            const struct an_alloc_site *site = &f->sites[k];
            fprintf(out, "%s{\"stack\": %" PRIu64 ", ", k ? ", " : "", site->stack);
            field_str(out, "where", site->where, strlen(site->where));
            fprintf(out, ", \"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 "}", site->bytes,
                    site->count);
        }
        fputc(']', out);
    }
    fputc('}', out);
}

static void trace(FILE *out, const struct an_trace *t)
{
    fputs("  {\"path\": ", out);
    str(out, t->path);
    if (!t->readable) {
        fputs(", \"readable\": false, \"error\": ", out);
        str(out, t->error);
        fputc('}', out);
        return;
    }
    fprintf(out, ", \"readable\": true, \"bytes\": %" PRIu64 ", \"pid\": %" PRIu32
            ", \"ppid\": %" PRIu32 ", ", t->bytes, t->hdr.pid, t->hdr.ppid);
    field_str(out, "host", t->hdr.hostname, an_field_len(t->hdr.hostname, sizeof t->hdr.hostname));
    fprintf(out, ", \"active\": %s, \"events\": %" PRIu64 ", \"lost_events\": %" PRIu64
            ", \"lost_chunks\": %" PRIu64 ", \"damaged_bytes\": %" PRIu64
            ", \"ended_abruptly_at\": ",
            t->active ? "true" : "false", t->rs.calls, t->rs.lost_events, t->rs.lost_chunks,
            t->rs.damaged_bytes);
    if (t->rs.ended_abruptly)  /* (a killed run's file: not damage) */
        fprintf(out, "%" PRIu64, t->rs.ended_at);
    else
        fputs("null", out);
    fprintf(out, ", \"salvaged_bytes\": %" PRIu64 ", \"damage\": [", t->rs.salvaged_bytes);
    for (size_t k = 0; k < t->ndamage; k++) {
        const struct gw_damage *d = &t->damage[k];
        fprintf(out, "%s{\"kind\": \"%s\", \"offset\": %" PRIu64 ", \"end\": %" PRIu64
                ", \"lost_bytes\": %" PRIu64 ", \"message\": ",
                k ? ", " : "", gw_damage_kind_name(d->kind), d->offset,
                d->offset + d->lost_bytes, d->lost_bytes);
        str(out, d->message);
        fputc('}', out);
    }
    fputs("]}", out);
}

void an_report_json(FILE *out, const struct an_run *run)
{
    fputs("{\n\"format\": \"gpuwatch-analyze\",\n\"version\": 1,\n\"gpu_price_per_hour\": ", out);
    if (run->opt.gpu_price > 0)
        num(out, run->opt.gpu_price);
    else
        fputs("null", out);
    fputs(",\n\"cpus\": ", out);
    if (run->cpus)
        fprintf(out, "%u", run->cpus);
    else
        fputs("null", out);
    fprintf(out, ",\n\"cpus_source\": \"%s\"", an_cpus_source_name(run->cpus_source));
    fprintf(out, ",\n\"run\": {\"traces\": %zu, \"processes\": %zu, \"wall_ns\": %" PRIu64
            ", \"gpu_busy_ns\": %" PRIu64 ", \"gpu_util\": ",
            run->ntraces, run->active, run->wall_ns, run->busy_ns);
    num(out, an_run_util(run));
    fprintf(out, ", \"gpu_timeline\": \"%s\", \"findings\": %zu, \"unreadable\": %" PRIu64
            ", \"damage_reports\": %" PRIu64 ", \"damaged_bytes\": %" PRIu64,
            timeline(run->gpu_timeline), run->findings.count, run->unreadable,
            run->damage_reports, run->damaged_bytes);
    const struct an_run_comm *c = &run->comm;
    if ((c->candidates >= 2 && c->ranks < 2) || c->sampled)
        fprintf(out, ", \"collectives\": {\"ranks\": 0, \"candidates\": %zu, \"count_min\": %"
                     PRIu64 ", \"count_max\": %" PRIu64 ", \"sampled\": %zu}",
                c->candidates, c->count_min, c->count_max, c->sampled);
    else if (c->ranks >= 2)
        fprintf(out, ", \"collectives\": {\"ranks\": %zu, \"collectives\": %" PRIu64
                     ", \"steady\": %" PRIu64 ", \"compared\": %" PRIu64
                     ", \"skew_median_ns\": %" PRIu64 ", \"skew_p90_ns\": %" PRIu64
                     ", \"skew_max_ns\": %" PRIu64 ", \"hosts\": %u, \"clock_residual_ns\": %"
                     PRIu64 "}",
                c->ranks, c->collectives, c->steady_collectives, c->joined, c->skew_median_ns,
                c->skew_p90_ns, c->skew_max_ns, c->hosts, c->residual_ns);
    else
        fputs(", \"collectives\": null", out);
    fputs(", ", out);
    an_report_cost_json_run(out, run);
    fputs("},\n\"traces\": [", out);
    for (size_t i = 0; i < run->ntraces; i++) {
        fputs(i ? ",\n" : "\n", out);
        trace(out, &run->traces[i]);
    }
    fputs("\n],\n\"processes\": [", out);
    int first = 1;
    for (size_t i = 0; i < run->ntraces; i++) {
        if (!run->traces[i].model || !run->traces[i].active)
            continue;
        fputs(first ? "\n" : ",\n", out);
        process(out, run, &run->traces[i]);
        first = 0;
    }
    /* risks first and apart (the ranking puts them first), then the time findings */
    for (int risks = 1; risks >= 0; risks--) {
        fputs(risks ? "\n],\n\"risks\": [" : "\n],\n\"findings\": [", out);
        size_t listed = 0;
        for (size_t i = 0; i < run->findings.count; i++) {
            if (run->findings.items[i].risk != risks)
                continue;
            fputs(listed ? ",\n" : "\n", out);
            finding(out, run, i, ++listed);
        }
    }
    fputs("\n],\n\"unproven\": [", out);
    for (size_t i = 0; i < run->findings.nunproven; i++) {
        const struct an_unproven *u = &run->findings.unproven[i];
        fprintf(out, "%s\n  {\"id\": ", i ? "," : "");
        str(out, u->id);
        fprintf(out, ", \"whatif\": ");
        str(out, an_whatif_name((enum an_whatif)u->whatif));
        fprintf(out, ", \"up_to_ns\": %" PRIu64 ", \"proven_ns\": %" PRIu64
                ", \"share\": %g, \"change\": ", u->up_to_ns, u->proven_ns, u->share);
        str(out, u->change);
        fprintf(out, ", \"pid\": %" PRIu32 "}", u->pid);
    }
    fputs("\n]\n}\n", out);
}
