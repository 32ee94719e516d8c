/*
 * gw_reader_next_briefs: runs of launches and GPU kernel records decoded in one loop that
 * keeps the reader's per-record state (offset, time, call number, counters, time span) in
 * registers, where gw_reader_next loads and stores it for every event. The records are
 * parsed by the same fast paths (trace_fast.h); anything they refuse ends the run and is
 * left to gw_reader_next.
 */
#include "trace_fast.h"

size_t gw_reader_next_briefs(struct gw_reader *r, struct gw_brief *briefs, size_t max,
                             uint32_t *tid)
{
    if (!r->in_chunk || r->defs_only)
        return 0;
    const uint8_t *buf = r->buf;
    size_t len = r->ch.payload_len, at = r->rec_off, n = 0;
    uint64_t ts = r->ts, number = r->call_next;
    uint64_t id_high = r->call_id_high;
    uint8_t unsure = (uint8_t)r->call_unsure;
    uint64_t first = r->stats.first_ts_ns, last = r->stats.last_ts_ns;
    uint64_t calls = 0, errors = 0, kernels = 0;
    *tid = r->ch.tid;
    while (n < max && at < len) {
        struct gw_brief *b = &briefs[n];
        uint8_t type = buf[at];
        uint64_t w[6];
        if ((uint8_t)(type - GW_REC_CALL) <= GW_REC_CALL_ERR - GW_REC_CALL) {
            struct gw_fast_call call;
            if (!gw_fast_launch_parse(buf, len, at, w, &call))
                break;
            at = call.next;
            ts += (uint64_t)gw_unzigzag(call.dt);
            b->ts_ns = ts;
            b->dur_ns = call.dur;
            b->stream_id = w[1];
            b->shape_id = w[0];
            b->id = id_high | (number & 0xFFFFFFFFu);
            b->handle = w[2];
            b->api_id = (uint32_t)call.api;  /* a launch's: below GW_API_ID_LIMIT */
            b->result = (uint32_t)call.result;
            b->device = 0;
            b->kind = GW_EV_CALL;
            b->call_id_unsure = unsure;
            number++;
            calls++;
            errors += type == GW_REC_CALL_ERR;
            gw_widen_span(&first, &last, ts, call.dur);
        } else if (type == GW_REC_GPU_KERNEL) {
            size_t next;
            uint64_t dt;
            if (!gw_fast_kernel_parse(buf, len, at, &next, &dt, w) || w[2] > UINT32_MAX)
                break;
            at = next;
            ts += (uint64_t)gw_unzigzag(dt);
            b->ts_ns = ts;
            b->dur_ns = w[0];
            b->stream_id = w[3];
            b->shape_id = w[4];
            b->id = w[1];
            b->handle = w[5];
            b->api_id = 0;
            b->result = 0;
            b->device = (uint32_t)w[2];
            b->kind = GW_EV_GPU_KERNEL;
            b->call_id_unsure = 0;
            kernels++;
            gw_widen_span(&first, &last, ts, w[0]);
        } else {
            break;
        }
        n++;
    }
    r->rec_off = at;
    r->ts = ts;
    r->call_next = number;
    r->stats.calls += calls;
    r->stats.call_errors += errors;
    r->stats.calls_unsure += unsure * calls;
    r->stats.gpu_kernels += kernels;
    r->stats.first_ts_ns = first;
    r->stats.last_ts_ns = last;
    return n;
}
