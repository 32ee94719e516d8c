/*
 * Shared by the planted-waste examples (dataloader_bound.c, pageable_h2d.c ...): driver
 * set-up, kernels built from names, launches, and host-side "work". Each example plants
 * ONE waste in an otherwise training-shaped loop, for `gpuwatch analyze` to find.
 *
 * Kernels are generated PTX that spin on %globaltimer for the duration passed as their
 * parameter, and their names carry the same duration (forward_2ms, tiny_20ns): the
 * simulated driver (tests/fakecuda) times a kernel by its name, a real GPU by the spin, so
 * an example behaves alike on both.
 */
#ifndef GPUWATCH_EXAMPLES_COMMON_H
#define GPUWATCH_EXAMPLES_COMMON_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#define EX_MAX_KERNELS 8

struct ex_ctx {
    const char *prog;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUstream stream;
    CUfunction fn[EX_MAX_KERNELS];
    unsigned long long ns[EX_MAX_KERNELS];  /* each kernel's duration, from its name */
    size_t nkernels;
    uint64_t start_ns;
};

void ex_check(CUresult r, const char *what, const char *prog);
#define EX_CK(ex, call) ex_check((call), #call, (ex)->prog)

/* --steps N (default `steps`), --fixed and --help; exits on a usage error. */
long ex_steps(int argc, char **argv, const char *prog, long steps, const char *what);
/* 1 when --fixed was given: run the loop with the advice applied (the calibration test,
 * tests/analyze/test_calibration.sh, compares the predicted saving with the difference). */
int ex_fixed(void);
/* The DataLoader workers a fixed variant starts (--workers N): what a user writes, 4 by
 * default, whatever the machine's CPU count (issue 36: not a count the analyzer assumes). */
#define EX_USER_WORKERS 4
#define EX_MAX_WORKERS 64
long ex_workers(void);
/* --read-every N: a loop that reads its loss back reads it every N steps (and at the
 * last), as a user who logs every N steps does (default 1: each step). */
long ex_read_every(void);
/* cuInit, primary context, a module with one kernel per name, a non-blocking stream. */
void ex_init(struct ex_ctx *ex, const char *prog, const char *const *kernels, size_t n);
/* Launches kernel k (one block of 32 threads) on the stream. */
void ex_launch(struct ex_ctx *ex, size_t k);
void ex_launch_on(struct ex_ctx *ex, size_t k, CUstream stream);
/* Duration a kernel name carries (_<N>ns/us/ms), 0 when none. */
unsigned long long ex_name_ns(const char *name);
/* Host work that makes no CUDA call: spinning (interpreter work) or sleeping (I/O). */
void ex_spin_ns(uint64_t ns);
/* Spins until this thread has used ns of CPU time: work, which shared CPUs slow down. */
void ex_work_ns(uint64_t ns);
void ex_sleep_ns(uint64_t ns);
uint64_t ex_now_ns(void);
/* Synchronizes, destroys the stream and context, prints "<prog>: N steps, T ms". */
void ex_finish(struct ex_ctx *ex, long steps);

#endif
