#include "trace_stats.h"

#include <stdlib.h>
#include <string.h>

int gw_stats_init(struct gw_stats *st, size_t ntraces)
{
    memset(st, 0, sizeof *st);
    st->traces = calloc(ntraces ? ntraces : 1, sizeof *st->traces);
    if (!st->traces)
        return -1;
    st->ntraces = ntraces;
    return 0;
}

void gw_stats_pass_begin(struct gw_stats_pass *p, struct gw_trace_stat *t,
                         const struct gw_reader *r)
{
    memset(p, 0, sizeof *p);
    p->trace = t;
    p->reader = r;
}

static int gpu_kernel(struct gw_stats *st, struct gw_stats_pass *p, const struct gw_event *ev)
{
    struct gw_device_stat *d = gw_devices_add(&p->trace->devices, ev->u.gpu_kernel.device,
                                              ev->ts_ns, ev->dur_ns);
    if (!d)
        return -1;
    d->kernels++;
    d->kernel_ns += ev->dur_ns;
    struct gw_kernel_stat *k =
        gw_kernel_by_shape(&st->gpu_kernels, &p->gpu, p->reader, ev->u.gpu_kernel.shape_id);
    if (!k)
        return -1;
    k->launches++;
    k->total_ns += ev->dur_ns;
    return 0;
}

static int gpu_memcpy(struct gw_stats *st, struct gw_stats_pass *p, const struct gw_event *ev)
{
    struct gw_device_stat *d = gw_devices_add(&p->trace->devices, ev->u.gpu_memcpy.device,
                                              ev->ts_ns, ev->dur_ns);
    if (!d)
        return -1;
    d->memcpys++;
    d->memcpy_ns += ev->dur_ns;
    struct gw_transfer_stat *x = gw_transfer_get(&st->memcpys, ev->u.gpu_memcpy.copy_kind,
                                                 ev->u.gpu_memcpy.src_kind,
                                                 ev->u.gpu_memcpy.dst_kind);
    if (!x)
        return -1;
    x->count++;
    x->bytes += ev->u.gpu_memcpy.bytes;
    x->total_ns += ev->dur_ns;
    return 0;
}

static int gpu_memset(struct gw_stats *st, struct gw_stats_pass *p, const struct gw_event *ev)
{
    struct gw_device_stat *d = gw_devices_add(&p->trace->devices, ev->u.gpu_memset.device,
                                              ev->ts_ns, ev->dur_ns);
    if (!d)
        return -1;
    d->memsets++;
    d->memset_ns += ev->dur_ns;
    struct gw_transfer_stat *x = gw_transfer_get(&st->memsets, ev->u.gpu_memset.memory_kind,
                                                 0, 0);
    if (!x)
        return -1;
    x->count++;
    x->bytes += ev->u.gpu_memset.bytes;
    x->total_ns += ev->dur_ns;
    return 0;
}

static int call(struct gw_stats *st, struct gw_stats_pass *p, const struct gw_event *ev)
{
    if (gw_api_table_add(&st->apis, ev->api_id, ev->result, ev->dur_ns) != 0)
        return -1;
    /* launches without a shape (graphs, host functions) name no kernel */
    if (ev->family != GW_FAM_LAUNCH || ev->u.launch.shape_id == 0)
        return 0;
    struct gw_kernel_stat *k =
        gw_kernel_by_shape(&st->kernels, &p->launches, p->reader, ev->u.launch.shape_id);
    if (!k)
        return -1;
    k->launches++;
    k->total_ns += ev->dur_ns;
    return 0;
}

int gw_stats_add(struct gw_stats *st, struct gw_stats_pass *p, const struct gw_event *ev)
{
    int rc = 0;
    switch (ev->kind) {
    case GW_EV_CALL: rc = call(st, p, ev); break;
    case GW_EV_GPU_KERNEL: rc = gpu_kernel(st, p, ev); break;
    case GW_EV_GPU_MEMCPY: rc = gpu_memcpy(st, p, ev); break;
    case GW_EV_GPU_MEMSET: rc = gpu_memset(st, p, ev); break;
    case GW_EV_RANGE_PUSH:
    case GW_EV_RANGE_START:
        p->trace->nvtx_ranges++;
        break;
    case GW_EV_MARK:
        p->trace->nvtx_marks++;
        break;
    default:
        break;
    }
    if (rc)
        st->out_of_memory = 1;
    return rc;
}

void gw_stats_pass_end(struct gw_stats_pass *p)
{
    gw_devices_settle(&p->trace->devices);
    gw_shape_cache_reset(&p->launches);
    gw_shape_cache_reset(&p->gpu);
}

int gw_stats_read(struct gw_stats *st, struct gw_trace_stat *t, gw_damage_fn on_damage,
                  void *user)
{
    struct gw_reader *r;
    if (gw_reader_open(t->path, &r, t->error, sizeof t->error) != 0)
        return -1;
    t->readable = 1;
    t->bytes = gw_reader_file_size(r);
    t->hdr = *gw_reader_header(r);
    gw_reader_load_defs(r);
    if (on_damage)
        gw_reader_on_damage(r, on_damage, user);
    struct gw_stats_pass p;
    gw_stats_pass_begin(&p, t, r);
    struct gw_event ev;
    int rc = 0;
    while (rc == 0 && gw_reader_next(r, &ev) > 0)
        rc = gw_stats_add(st, &p, &ev);
    gw_stats_pass_end(&p);
    t->rs = *gw_reader_stats(r);
    gw_reader_close(r);
    return rc;
}

void gw_stats_sort(struct gw_stats *st)
{
    gw_api_table_sort(&st->apis);
    gw_kernel_sort_by_launches(&st->kernels);
    gw_kernel_sort_by_time(&st->gpu_kernels);
    gw_transfer_sort(&st->memcpys);
    gw_transfer_sort(&st->memsets);
}

void gw_stats_free(struct gw_stats *st)
{
    gw_api_table_free(&st->apis);
    gw_kernel_table_free(&st->kernels);
    gw_kernel_table_free(&st->gpu_kernels);
    gw_transfer_table_free(&st->memcpys);
    gw_transfer_table_free(&st->memsets);
    for (size_t i = 0; i < st->ntraces; i++)
        gw_devices_free(&st->traces[i].devices);
    free(st->traces);
    memset(st, 0, sizeof *st);
}
