/*
 * libFuzzer entry point for the whole analysis: the input bytes become a trace file (a
 * memfd, analyzed through /proc/self/fd), which is read, modelled, run through every rule
 * and reported in text and JSON; --fail-if conditions are evaluated. It must never crash,
 * whatever the bytes. scripts/fuzz.sh builds and runs it (CI: 10 s). By hand:
 *
 *   clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
 *     -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -Iinclude -Itools/reader \
 *     -Itools/analyze{,/input,/replay,/model,/rules,/run,/report} tests/analyze/fuzz_analyze.c \
 *     tools/analyze/{input,replay,model,rules,run,report}/[a-z]*.c tools/reader/[a-z]*.c \
 *     -lm -o fuzz_analyze
 *   mkdir -p corpus && build/tests/analyze/make_analyze_trace corpus/gpu.gwt --gpu
 *   ./fuzz_analyze -max_len=65536 corpus
 *
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: chunks are accepted whatever their CRC, so
 * mutated records reach the decoder and the analyzer.)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz.gwt", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    char *paths[] = {path};
    struct an_options opt;
    an_options_default(&opt);
    opt.cpus = 8;
    opt.gpu_price = 2.5;
    struct an_run run;
    if (an_run_paths(&run, paths, 1, &opt) == 0) {
        static FILE *null;
        if (!null)
            null = fopen("/dev/null", "w");
        if (null) {
            an_report_text(null, &run, 1);
            an_report_json(null, &run);
        }
        static const char *const exprs[] = {"gpu_util<0.6", "step_ms>1", "finding=leak",
                                            "idle.input_pipeline>0.1", "saving_share>=0.5"};
        for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
            struct an_condition *c;
            char err[256];
            if (an_condition_parse(exprs[i], &c, err, sizeof err) == 0) {
                (void)an_condition_holds(c, &run);
                an_condition_free(c);
            }
        }
    }
    an_run_free(&run);
    close(fd);
    return 0;
}
