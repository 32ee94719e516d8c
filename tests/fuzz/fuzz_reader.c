/*
 * libFuzzer entry point for the trace reader: the input bytes become a file (a memfd),
 * which is opened, its definitions loaded, read to the end, and every name looked up.
 * scripts/fuzz.sh builds and runs it (CI: 10 s). By hand:
 *
 *   clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
 *     -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
 *     -Iinclude -Itools/reader tests/fuzz/fuzz_reader.c tools/reader/trace_*.c tools/reader/gw_map.c \
 *     -o fuzz_reader
 *   mkdir -p fuzz-corpus && build/tests/make_sample_trace fuzz-corpus/sample.gwt
 *   ./fuzz_reader -max_len=65536 fuzz-corpus
 *
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION makes the reader accept chunks whatever their
 * CRC, so that mutated payloads reach the record decoder; build once without it too, to
 * fuzz the CRC-guarded resynchronisation as shipped.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace_reader.h"

static void lookups(struct gw_reader *r, const struct gw_event *ev)
{
    size_t len;
    switch (ev->kind) {
    case GW_EV_CALL:
        (void)gw_api_name(ev->api_id);
        if (ev->family == GW_FAM_LAUNCH)
            (void)gw_reader_kernel_name(r, ev->u.launch.shape_id);
        if (ev->family == GW_FAM_COPY) {
            (void)gw_copy_dir_name(ev->u.copy.dir);
            (void)gw_host_kind_name(ev->u.copy.host_kind);
        }
        if (ev->family == GW_FAM_NAME)
            (void)gw_reader_string(r, ev->u.name.string_id, &len);
        (void)gw_cu_result_name(ev->result);
        break;
    case GW_EV_STRING:
        /* the text must be readable up to its terminator */
        if (strlen(ev->u.string.text) > ev->u.string.len)
            __builtin_trap();
        break;
    case GW_EV_SHAPE:
        (void)gw_reader_shape(r, ev->u.shape.id);
        break;
    case GW_EV_THREAD:
        (void)gw_reader_thread_name(r, ev->u.thread.tid);
        break;
    case GW_EV_DEVICE:
        (void)gw_reader_device(r, ev->u.device.ordinal);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz.gwt", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return 0;
        }
        done += (size_t)n;
    }
    struct gw_reader *r;
    char err[512];
    if (gw_reader_open_fd(fd, "fuzz.gwt", &r, err, sizeof err) == 0) {
        gw_reader_load_defs(r);
        struct gw_event ev;
        uint64_t events = 0;
        while (gw_reader_next(r, &ev) > 0) {
            lookups(r, &ev);
            events++;
        }
        const struct gw_reader_stats *s = gw_reader_stats(r);
        const struct gw_damage *list;
        size_t n = gw_reader_damage(r, &list);
        /* (an abrupt end is kept in the list but counted apart from damage) */
        if (n > GW_READER_KEEP_DAMAGE || n > s->damage_reports + s->ended_abruptly ||
            s->damaged_bytes > size)
            __builtin_trap();
        const struct gw_clock_point *clocks;
        (void)gw_reader_clocks(r, &clocks);
        gw_reader_rewind(r);
        uint64_t again = 0;
        while (gw_reader_next(r, &ev) > 0)
            again++;
        if (again != events)  /* reading is deterministic */
            __builtin_trap();
        gw_reader_close(r);
    }
    close(fd);
    return 0;
}
