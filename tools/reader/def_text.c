#include "def_text.h"

#include <inttypes.h>
#include <string.h>

#include "demangle.h"
#include "text_out.h"

void gw_text_string_value(FILE *out, const struct gw_reader *r, const char *key,
                          uint64_t id)
{
    size_t len;
    const char *s = gw_reader_string(r, id, &len);
    if (s) {
        fprintf(out, " %s=", key);
        gw_put_value(out, s, len);
    } else {
        fprintf(out, " %s_id=%" PRIu64, key, id);
    }
}

void gw_text_shape(FILE *out, const struct gw_shape *s)
{
    fprintf(out,
            " grid=%" PRIu64 ",%" PRIu64 ",%" PRIu64 " block=%" PRIu64 ",%" PRIu64 ",%" PRIu64
            " smem=%" PRIu64,
            s->grid[0], s->grid[1], s->grid[2], s->block[0], s->block[1], s->block[2],
            s->shared_mem);
}

/* frames=K, then per frame "frameI=module+0xOFF" and ",symbol+0xOFF" when known. */
static void put_frames(FILE *out, const struct gw_reader *r, const struct gw_stack *st)
{
    fprintf(out, " frames=%u", st->nframes);
    for (unsigned i = 0; i < st->nframes; i++) {
        const struct gw_stack_frame *f = &st->frames[i];
        const char *module = gw_reader_string(r, f->module_id, NULL);
        const char *symbol = f->symbol_id ? gw_reader_string(r, f->symbol_id, NULL) : NULL;
        char text[1024];
        int n = snprintf(text, sizeof text, "%s+0x%" PRIx64, module ? module : "?",
                         f->module_offset);
        char readable[512];
        if (symbol && n > 0 && (size_t)n < sizeof text)
            snprintf(text + n, sizeof text - (size_t)n, ",%s+0x%" PRIx64,
                     gw_demangle(symbol, readable, sizeof readable), f->symbol_offset);
        fprintf(out, " frame%u=", i);
        gw_put_value(out, text, strlen(text));
    }
}

/* frames=K, then per frame pyframeI="file:line function". */
static void put_pyframes(FILE *out, const struct gw_reader *r, const struct gw_pystack *st)
{
    fprintf(out, " frames=%u", st->nframes);
    for (unsigned i = 0; i < st->nframes; i++) {
        const struct gw_pyframe *f = &st->frames[i];
        const char *file = gw_reader_string(r, f->file_id, NULL);
        const char *function = gw_reader_string(r, f->function_id, NULL);
        char text[1024];
        snprintf(text, sizeof text, "%s:%" PRIu64 " %s", file ? file : "?", f->line,
                 function ? function : "?");
        fprintf(out, " pyframe%u=", i);
        gw_put_value(out, text, strlen(text));
    }
}

/* The calls a PYSITE or STACKSITE names and the stack they were made from, innermost
 * frame first. */
void gw_site_text(FILE *out, const struct gw_reader *r, const struct gw_event *ev)
{
    int python = ev->kind == GW_EV_PYSITE;
    fprintf(out, "- %" PRIu32 " %s - - - calls=0x%" PRIx64 "..0x%" PRIx64 " %s=%" PRIu64,
            ev->tid, python ? "pysite" : "stacksite", ev->u.site.first_call_id,
            ev->u.site.last_call_id, python ? "pystack" : "stack", ev->u.site.stack_id);
    if (python) {
        const struct gw_pystack *st = gw_reader_pystack(r, ev->u.site.stack_id);
        if (st)
            put_pyframes(out, r, st);
    } else {
        const struct gw_stack *st = gw_reader_stack(r, ev->u.site.stack_id);
        if (st)
            put_frames(out, r, st);
    }
}

void gw_def_text(FILE *out, const struct gw_reader *r, const struct gw_event *ev)
{
    fprintf(out, "- %" PRIu32 " def %s - -", ev->tid, gw_event_kind_name(ev->kind));
    switch (ev->kind) {
    case GW_EV_STRING:
        fprintf(out, " id=%" PRIu64 " text=", ev->u.string.id);
        gw_put_value(out, ev->u.string.text, ev->u.string.len);
        break;
    case GW_EV_SHAPE:
        fprintf(out, " id=%" PRIu64, ev->u.shape.id);
        gw_text_string_value(out, r, "kernel", ev->u.shape.name_id);
        fprintf(out, " func=0x%" PRIx64, ev->u.shape.func);
        gw_text_shape(out, &ev->u.shape);
        if (ev->u.shape.registers || ev->u.shape.static_shared_mem)
            fprintf(out, " regs=%" PRIu64 " static_smem=%" PRIu64, ev->u.shape.registers,
                    ev->u.shape.static_shared_mem);
        break;
    case GW_EV_STREAM:
        fprintf(out, " id=%" PRIu64 " handle=0x%" PRIx64, ev->u.stream.id,
                ev->u.stream.handle);
        if (ev->u.stream.cupti_stream_id)
            fprintf(out, " cupti_stream=%" PRIu64, ev->u.stream.cupti_stream_id);
        break;
    case GW_EV_DEVICE:
        fprintf(out, " ordinal=%" PRIu64, ev->u.device.ordinal);
        gw_text_string_value(out, r, "name", ev->u.device.name_id);
        fprintf(out, " total=%" PRIu64 " free_at_first_context=%" PRIu64,
                ev->u.device.total_bytes, ev->u.device.free_at_first_context);
        break;
    case GW_EV_CLOCK:
        fprintf(out, " trace_ns=%" PRIu64 " realtime_ns=%" PRIu64 " monotonic_ns=%" PRIu64,
                ev->u.clock.trace_ns, ev->u.clock.realtime_ns, ev->u.clock.monotonic_ns);
        break;
    case GW_EV_THREAD:
        fprintf(out, " tid=%" PRIu64, ev->u.thread.tid);
        gw_text_string_value(out, r, "name", ev->u.thread.name_id);
        break;
    case GW_EV_STACK:
        fprintf(out, " id=%" PRIu64, ev->u.stack.id);
        put_frames(out, r, &ev->u.stack);
        break;
    case GW_EV_PYTHON:
        gw_text_string_value(out, r, "version", ev->u.python.version_id);
        fprintf(out, " follows_gil_releases=%" PRIu64, ev->u.python.follows_releases);
        break;
    case GW_EV_HOST_COPY:
        fprintf(out, " bytes_per_s=%" PRIu64, ev->u.host_copy.bytes_per_s);
        if (ev->u.host_copy.wake_ns)
            fprintf(out, " wake_ns=%" PRIu64, ev->u.host_copy.wake_ns);
        break;
    case GW_EV_PYSTACK:
        fprintf(out, " id=%" PRIu64, ev->u.pystack.id);
        put_pyframes(out, r, &ev->u.pystack);
        break;
    default:
        break;
    }
}
