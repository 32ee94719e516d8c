/*
 * libFuzzer entry point for the model and the rules on well-formed runs: the input bytes
 * drive the random run generator (random_run.h; the first byte picks GPU records or host
 * only), the run is analyzed, and every invariant (invariants.h) and the busy-time oracle
 * (run_oracle.h) must hold: a violation aborts with what broke. Where fuzz_analyze.c looks
 * for crashes on any bytes, this looks for wrong figures on runs that could happen. Not
 * part of the default build: scripts/fuzz.sh builds and runs it (CI: 10 s). By hand:
 *
 *   clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
 *     -Iinclude -Itools/reader -Itools/analyze{,/input,/replay,/model,/rules,/run,/report} \
 *     -Itests/analyze tests/analyze/fuzz_model.c \
 *     tools/analyze/{input,replay,model,rules,run,report}/[a-z]*.c tools/reader/[a-z]*.c -lm \
 *     -o fuzz_model
 *   mkdir -p corpus_model && ./fuzz_model -max_len=4096 corpus_model
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "invariants.h"
#include "random_run.h"
#include "run_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int gpu_records = data[0] & 1;
    struct rr *r = malloc(sizeof *r);
    if (!r)
        return 0;
    uint64_t others = data[0] & 2 ? 256ull << 20 : 0;
    struct an_model *m;
    struct an_findings found = {0};
    struct inv v;
    if (oracle_check_run(data + 1, size - 1, gpu_records, others, r, &m, &found, &v)) {
        fprintf(stderr, "invariant broken (%s): %s\n", gpu_records ? "GPU records" : "host only",
                v.why);
        abort();
    }
    an_findings_free(&found);
    an_model_free(m);
    synth_free(&r->s);
    free(r);
    return 0;
}
