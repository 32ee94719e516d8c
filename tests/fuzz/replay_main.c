/*
 * A plain driver for the libFuzzer harnesses where clang's libFuzzer is missing: runs the
 * harness on each file named, then on N pseudo-random inputs (fixed seed), so that the
 * harnesses are built and exercised everywhere (scripts/fuzz.sh).
 *   replay_main [--random N] [FILE...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 1;
}

int main(int argc, char **argv)
{
    unsigned long runs = 0, random_inputs = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--random") && i + 1 < argc)
            random_inputs = strtoul(argv[++i], NULL, 10);
        else
            runs += (unsigned long)run_file(argv[i]);
    }
    uint64_t state = 0x9e3779b97f4a7c15ull;
    static uint8_t buf[8192];
    for (unsigned long k = 0; k < random_inputs; k++) {
        size_t n = (size_t)(k % sizeof buf);
        for (size_t j = 0; j < n; j++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            buf[j] = (uint8_t)(state >> 56);
        }
        LLVMFuzzerTestOneInput(buf, n);
        runs++;
    }
    printf("replayed %lu inputs\n", runs);
    return 0;
}
