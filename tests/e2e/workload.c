/*
 * A small driver-API program run under the shim by the end-to-end tests. Each --mode
 * exercises one way a program reaches the driver or one lifecycle event; the program
 * checks the driver's answers itself and exits 1 (with a message) when one is wrong, so
 * the tests see both "the program got real results" and "the trace holds the calls".
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

static const char module_ptx[] =
    ".version 8.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry tiny_kernel()\n{\n ret;\n}\n"
    ".visible .entry step_50us()\n{\n ret;\n}\n"
    ".visible .entry stream_a_20us()\n{\n ret;\n}\n"
    ".visible .entry stream_b_30us()\n{\n ret;\n}\n"
    ".visible .entry per_thread_c_40us()\n{\n ret;\n}\n"
    ".visible .entry graph_g1_10us()\n{\n ret;\n}\n"
    ".visible .entry graph_g2_15us()\n{\n ret;\n}\n";

static int launches = 100;
static int threads = 8;
static const char *self_path;

#define CHECK(call)                                                                     \
    do {                                                                                \
        CUresult check_rc = (call);                                                     \
        if (check_rc != CUDA_SUCCESS) {                                                 \
            fprintf(stderr, "workload: %s failed: %d (line %d)\n", #call, (int)check_rc,  \
                    __LINE__);                                                          \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static void fail(const char *what)
{
    fprintf(stderr, "workload: %s\n", what);
    exit(1);
}

/* The same driver functions, however the program got hold of them. */
struct driver {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*module_load_data)(CUmodule *, const void *);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*mem_alloc_host)(void **, size_t);
    CUresult (*mem_free_host)(void *);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*stream_sync)(CUstream);
};

static void direct_driver(struct driver *d)
{
    *d = (struct driver){cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent,
                         cuModuleLoadData, cuModuleGetFunction, cuMemAlloc_v2, cuMemFree_v2,
                         cuMemAllocHost_v2, cuMemFreeHost, cuMemcpyHtoD_v2, cuMemcpyDtoH_v2,
                         cuLaunchKernel, cuStreamSynchronize};
}

static void *must_dlsym(void *handle, const char *name)
{
    void *symbol = dlsym(handle, name);
    if (!symbol) {
        fprintf(stderr, "workload: dlsym(%s) failed\n", name);
        exit(1);
    }
    return symbol;
}

static void *open_driver(void)
{
    void *handle = dlopen("libcuda.so.1", RTLD_NOW);
    if (!handle)
        fail(dlerror());
    return handle;
}

static void dlsym_driver(struct driver *d)
{
    void *h = open_driver();
    d->init = must_dlsym(h, "cuInit");
    d->device_get = must_dlsym(h, "cuDeviceGet");
    d->primary_retain = must_dlsym(h, "cuDevicePrimaryCtxRetain");
    d->ctx_set_current = must_dlsym(h, "cuCtxSetCurrent");
    d->module_load_data = must_dlsym(h, "cuModuleLoadData");
    d->module_get_function = must_dlsym(h, "cuModuleGetFunction");
    d->mem_alloc = must_dlsym(h, "cuMemAlloc_v2");
    d->mem_free = must_dlsym(h, "cuMemFree_v2");
    d->mem_alloc_host = must_dlsym(h, "cuMemAllocHost_v2");
    d->mem_free_host = must_dlsym(h, "cuMemFreeHost");
    d->htod = must_dlsym(h, "cuMemcpyHtoD_v2");
    d->dtoh = must_dlsym(h, "cuMemcpyDtoH_v2");
    d->launch = must_dlsym(h, "cuLaunchKernel");
    d->stream_sync = must_dlsym(h, "cuStreamSynchronize");
}

typedef CUresult (*resolver_v2)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

/* Resolves like the CUDA runtime does, and checks that the answer is the function that
 * the exact versioned name denotes in this process (the shim's wrapper when preloaded). */
static void *resolve(resolver_v2 p, const char *base, int version, cuuint64_t flags,
                     const char *exact)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult status = -1;
    CUresult rc = p(base, &fn, version, flags, &status);
    if (rc != CUDA_SUCCESS || !fn || status != CU_GET_PROC_ADDRESS_SUCCESS) {
        fprintf(stderr, "workload: cuGetProcAddress_v2(%s, %d, %llu) = %d, status %d\n", base,
                version, (unsigned long long)flags, (int)rc, (int)status);
        exit(1);
    }
    void *expected = dlsym(RTLD_DEFAULT, exact);
    if (fn != expected) {
        fprintf(stderr, "workload: %s@%d flags %llu is not %s\n", base, version,
                (unsigned long long)flags, exact);
        exit(1);
    }
    return fn;
}

static void expect_status(resolver_v2 p, const char *base, int version,
                          CUresult want_rc, CUdriverProcAddressQueryResult want_status)
{
    void *fn = (void *)1;
    CUdriverProcAddressQueryResult status = -1;
    CUresult rc = p(base, &fn, version, 0, &status);
    if (rc != want_rc || status != want_status) {
        fprintf(stderr, "workload: %s@%d gave rc %d status %d, want %d %d\n", base, version,
                (int)rc, (int)status, (int)want_rc, (int)want_status);
        exit(1);
    }
}

static void procaddr_driver(struct driver *d, int use_v1)
{
    void *h = open_driver();
    resolver_v2 first = must_dlsym(h, "cuGetProcAddress_v2");
    /* The runtime's self-lookup: the answer for 12000 resolves everything after it. */
    resolver_v2 p = resolve(first, "cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
    if (use_v1) {
        CUresult (*v1)(const char *, void **, int, cuuint64_t) =
            resolve(p, "cuGetProcAddress", 11030, 0, "cuGetProcAddress");
        void *fn = NULL;
        if (v1("cuMemAlloc", &fn, 3020, 0) != CUDA_SUCCESS || fn != dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"))
            fail("cuGetProcAddress (v1) did not give cuMemAlloc_v2");
    }
    d->init = resolve(p, "cuInit", 2000, 0, "cuInit");
    d->device_get = resolve(p, "cuDeviceGet", 2000, 0, "cuDeviceGet");
    d->primary_retain = resolve(p, "cuDevicePrimaryCtxRetain", 7000, 0, "cuDevicePrimaryCtxRetain");
    d->ctx_set_current = resolve(p, "cuCtxSetCurrent", 4000, 0, "cuCtxSetCurrent");
    d->module_load_data = resolve(p, "cuModuleLoadData", 2000, 0, "cuModuleLoadData");
    d->module_get_function = resolve(p, "cuModuleGetFunction", 2000, 0, "cuModuleGetFunction");
    d->mem_alloc = resolve(p, "cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    d->mem_free = resolve(p, "cuMemFree", 3020, 0, "cuMemFree_v2");
    d->mem_alloc_host = resolve(p, "cuMemAllocHost", 3020, 0, "cuMemAllocHost_v2");
    d->mem_free_host = resolve(p, "cuMemFreeHost", 2000, 0, "cuMemFreeHost");
    d->htod = resolve(p, "cuMemcpyHtoD", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                      "cuMemcpyHtoD_v2_ptds");
    d->dtoh = resolve(p, "cuMemcpyDtoH", 3020, 0, "cuMemcpyDtoH_v2");
    d->launch = resolve(p, "cuLaunchKernel", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                        "cuLaunchKernel_ptsz");
    d->stream_sync = resolve(p, "cuStreamSynchronize", 7000,
                             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                             "cuStreamSynchronize_ptsz");
    /* Versions pick variants: the older ABI below 13000, the new one from it. */
    resolve(p, "cuCtxSynchronize", 12000, 0, "cuCtxSynchronize");
    resolve(p, "cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2");
    resolve(p, "cuMemcpyBatchAsync", 12080, 0, "cuMemcpyBatchAsync");
    resolve(p, "cuMemcpyBatchAsync", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            "cuMemcpyBatchAsync_v2_ptsz");
    resolve(p, "cuLaunchKernel", 12000, 0, "cuLaunchKernel");
    expect_status(p, "cuMemcpyBatchAsync", 12000, CUDA_ERROR_NOT_FOUND,
                  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    expect_status(p, "cuNoSuchFunction", 13000, CUDA_ERROR_NOT_FOUND,
                  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

/* The training-like sequence every entry-path mode runs; the tests count its calls:
 * cuInit 1, cuDevicePrimaryCtxRetain 1, cuModuleGetFunction 1, cuMemAlloc 1,
 * cuMemAllocHost 1, HtoD 2 (pinned, pageable), launches N, stream sync 1, DtoH 1,
 * cuMemFree 1, cuMemFreeHost 1. */
static void run_sequence(const struct driver *d)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction kernel;
    CUdeviceptr buffer;
    void *pinned;
    const size_t bytes = 4096;
    CHECK(d->init(0));
    CHECK(d->device_get(&dev, 0));
    CHECK(d->primary_retain(&ctx, dev));
    CHECK(d->ctx_set_current(ctx));
    CHECK(d->module_load_data(&module, module_ptx));
    CHECK(d->module_get_function(&kernel, module, "tiny_kernel"));
    CHECK(d->mem_alloc(&buffer, 1 << 20));
    CHECK(d->mem_alloc_host(&pinned, bytes));
    unsigned char *pageable = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        ((unsigned char *)pinned)[i] = (unsigned char)(i * 7);
    CHECK(d->htod(buffer, pinned, bytes));
    memset(pageable, 0, bytes);
    CHECK(d->htod(buffer + bytes, pageable, bytes));
    for (int i = 0; i < launches; i++)
        CHECK(d->launch(kernel, 64, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL));
    CHECK(d->stream_sync(NULL));
    CHECK(d->dtoh(pageable, buffer, bytes));
    if (memcmp(pageable, pinned, bytes) != 0)
        fail("data copied to the device and back differs");
    CHECK(d->mem_free(buffer));
    CHECK(d->mem_free_host(pinned));
    free(pageable);
}

/* The primary context of device 0, current, and one kernel of module_ptx by name. */
static void setup_kernel(CUfunction *kernel, const char *name)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&module, module_ptx));
    CHECK(cuModuleGetFunction(kernel, module, name));
}

static void setup_direct(CUfunction *kernel)
{
    setup_kernel(kernel, "tiny_kernel");
}

struct thread_job { CUfunction kernel; CUcontext ctx; };

static void *launch_thread(void *arg)
{
    struct thread_job *job = arg;
    CUstream stream;
    CHECK(cuCtxSetCurrent(job->ctx));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < launches; i++)
        CHECK(cuLaunchKernel(job->kernel, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
    CHECK(cuStreamSynchronize(stream));
    return NULL;
}

static void run_threads(void)
{
    struct thread_job job;
    setup_direct(&job.kernel);
    CHECK(cuCtxGetCurrent(&job.ctx));
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    for (int i = 0; i < threads; i++)
        pthread_create(&ids[i], NULL, launch_thread, &job);
    for (int i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    free(ids);
}

static void launch_some(CUfunction kernel, int count)
{
    for (int i = 0; i < count; i++)
        CHECK(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CHECK(cuCtxSynchronize());
}

/* Parent launches; child A uses the driver (its own trace); child B never does (no file). */
static void run_fork(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    launch_some(kernel, launches);
    pid_t with_cuda = fork();
    if (with_cuda == 0) {
        launch_some(kernel, 7);
        _exit(0);
    }
    pid_t without_cuda = fork();
    if (without_cuda == 0) {
        printf("child without cuda\n");
        exit(0);
    }
    int status_a, status_b;
    waitpid(with_cuda, &status_a, 0);
    waitpid(without_cuda, &status_b, 0);
    if (!WIFEXITED(status_a) || WEXITSTATUS(status_a) || !WIFEXITED(status_b) || WEXITSTATUS(status_b))
        fail("a child failed");
    launch_some(kernel, launches);
}

/* A daemon's start: closes every descriptor from 3 up, then writes its own file (the path
 * in WORKLOAD_OWN_FILE) between launches, across several of the shim's flushes. The file
 * must hold exactly what the program wrote. */
static void run_closefrom(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    launch_some(kernel, launches);
    for (int fd = 3; fd < 4096; fd++)
        close(fd);
    const char *path = getenv("WORKLOAD_OWN_FILE");
    int own = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    if (own < 0)
        fail("open WORKLOAD_OWN_FILE");
    for (int round = 0; round < 4; round++) {
        char line[64];
        int n = snprintf(line, sizeof line, "the program's own line %d\n", round);
        if (write(own, line, (size_t)n) != n)
            fail("write own file");
        launch_some(kernel, launches);
        struct timespec pause = {0, 80 * 1000000L};  /* past a flush of the shim */
        nanosleep(&pause, NULL);
    }
    /* (left open, as programs do: the shim's flush at exit comes after) */
}

/* Spins until this thread has used ms milliseconds of CPU: on a busy machine it takes
 * longer, and what the samples must see is the CPU time, whatever else runs. */
static void spin_ms(unsigned ms)
{
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    volatile uint64_t sink = 0;
    do {
        for (int i = 0; i < 100000; i++)
            sink += (uint64_t)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

/* DataLoader-like workers: one child spins 500 ms of CPU, another waits for a grandchild of
 * its own that spins as long (a forkserver's worker), while the traced thread launches a kernel every
 * 20 ms, 30 times, mostly asleep. */
static void run_cpu_workers(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    pid_t spinner = fork();
    if (spinner == 0) {
        spin_ms(500);
        _exit(0);
    }
    pid_t server = fork();
    if (server == 0) {
        pid_t worker = fork();
        if (worker == 0) {
            spin_ms(500);
            _exit(0);
        }
        int status;
        waitpid(worker, &status, 0);
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
    }
    for (int i = 0; i < 30; i++) {
        CHECK(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        usleep(20000);
    }
    int status_a, status_b;
    waitpid(spinner, &status_a, 0);
    waitpid(server, &status_b, 0);
    if (!WIFEXITED(status_a) || WEXITSTATUS(status_a) || !WIFEXITED(status_b) || WEXITSTATUS(status_b))
        fail("a child failed");
}

/* Runs `launches` launches, says so, and waits to be killed. */
static void run_wait_for_kill(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    for (int i = 0; i < launches; i++)
        CHECK(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

/* Handlers the way programs write them, each line written at once (stdout is a pipe). */
static void say(const char *line)
{
    ssize_t n = write(1, line, strlen(line));
    (void)n;
}

static void one_shot(int sig)
{
    (void)sig;
    say("one-shot handler ran\n");
}

static void reraise(int sig)
{
    say("cleaning up, then dying of it\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

static const char *describe(int sig, void (*mine)(int))
{
    struct sigaction now;
    if (sigaction(sig, NULL, &now) != 0)
        return "query failed\n";
    if (now.sa_handler == mine)
        return (now.sa_flags & SA_RESETHAND) ? "mine, one-shot\n" : "mine\n";
    return now.sa_handler == SIG_DFL ? "SIG_DFL\n" : now.sa_handler == SIG_IGN ? "SIG_IGN\n"
                                                                            : "another\n";
}

/* SIGTERM with a one-shot handler set before the first CUDA call: the first SIGTERM runs
 * it once, the second kills. Queries and what signal() hands back, in between. */
static void run_signal_one_shot(void)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = one_shot;
    a.sa_flags = SA_RESETHAND;
    sigemptyset(&a.sa_mask);
    sigaction(SIGTERM, &a, NULL);
    CUfunction kernel;
    setup_direct(&kernel);
    launch_some(kernel, launches);
    say(describe(SIGTERM, one_shot));
    raise(SIGTERM);
    say(describe(SIGTERM, one_shot));
    void (*before)(int) = signal(SIGINT, SIG_IGN);
    say(before == SIG_DFL ? "SIGINT was SIG_DFL\n" : "SIGINT was something else\n");
    say(describe(SIGINT, one_shot));
    raise(SIGINT);  /* ignored */
    launch_some(kernel, launches);
    raise(SIGTERM);
    say("still alive after the second SIGTERM\n");
}

/* SIGINT's handler set after the first CUDA call, with signal(): it cleans up, restores
 * the default and re-raises. */
static void run_signal_reraise(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    launch_some(kernel, launches);
    void (*before)(int) = signal(SIGINT, reraise);
    say(before == SIG_DFL ? "SIGINT was SIG_DFL\n" : "SIGINT was something else\n");
    say(describe(SIGINT, reraise));
    launch_some(kernel, launches);
    raise(SIGINT);
    say("still alive after SIGINT\n");
}

/* A burst of calls, then a crash right after the last one: a write to a page with no
 * access (SIGSEGV) or abort() (SIGABRT). */
static void run_crash(int how)
{
    CUfunction kernel;
    setup_direct(&kernel);
    launch_some(kernel, launches);
    for (int i = 0; i < launches; i++)
        CHECK(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    if (how == SIGABRT)
        abort();
    /* a page with no access: a fault a sanitizer does not see coming */
    volatile int *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *page = 1;
}

/* Launches until killed; after each launch returns, the count goes to the file named by
 * WORKLOAD_COUNTER (shared memory: it outlives the process as the shim's rings do). */
static void run_launch_until_killed(void)
{
    const char *path = getenv("WORKLOAD_COUNTER");
    int fd = path ? open(path, O_RDWR) : -1;
    volatile uint64_t *done = fd < 0 ? MAP_FAILED
                                     : mmap(NULL, sizeof *done, PROT_READ | PROT_WRITE,
                                            MAP_SHARED, fd, 0);
    if (done == MAP_FAILED)
        fail("map WORKLOAD_COUNTER");
    CUfunction kernel;
    setup_direct(&kernel);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        CHECK(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        *done = *done + 1;
    }
}

static void run_oom(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    CUdeviceptr ptr = 0xdead;
    CUresult rc = cuMemAlloc_v2(&ptr, (size_t)1 << 40);
    printf("oom result %d\n", (int)rc);
    if (rc != CUDA_ERROR_OUT_OF_MEMORY || ptr != 0xdead)
        fail("a too-large allocation did not fail with CUDA_ERROR_OUT_OF_MEMORY");
}

/* Allocation call sites for the call-stack tests: exported (the workload is linked with
 * -rdynamic) and neither inlined nor cloned, so dladdr names them. */
__attribute__((noinline, noclone)) void workload_alloc_site(CUdeviceptr *dev, void **host)
{
    CHECK(cuMemAlloc_v2(dev, 1 << 20));
    CHECK(cuMemAllocHost_v2(host, 4096));
}

__attribute__((noinline, noclone)) void workload_other_site(CUdeviceptr *dev)
{
    CHECK(cuMemAlloc_v2(dev, 2 << 20));
}

__attribute__((noinline, noclone)) void workload_stacks_caller(CUdeviceptr dev[3],
                                                                void *host[2])
{
    volatile int sites = 2;  /* one call site, not unrolled into two */
    for (int i = 0; i < sites; i++)
        workload_alloc_site(&dev[i], &host[i]);
    workload_other_site(&dev[2]);
    __asm__ volatile("" ::: "memory");  /* a call, not a tail jump: this frame stays */
}

/* Two allocations from one site, one from another; the unwinder the shim loads must not
 * reach the program's global scope (its _Unwind_* would take over C++ exceptions). */
static void run_stacks(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    CUdeviceptr dev[3];
    void *host[2];
    workload_stacks_caller(dev, host);
    if (dlsym(RTLD_DEFAULT, "unw_backtrace"))
        fail("libunwind's symbols are in the program's global scope");
    /* a call whose native stack is never read (it neither waits nor frees) */
    CHECK(cuMemsetD8_v2(dev[0], 0, 256));
    /* 3 ms without a call (a batch loaded, say): the call that ends it gets its stack */
    struct timespec stretch = {0, 3000000};
    nanosleep(&stretch, NULL);
    CHECK(cuMemsetD8_v2(dev[1], 0, 256));
    for (int i = 0; i < 3; i++)
        CHECK(cuMemFree_v2(dev[i]));
    for (int i = 0; i < 2; i++)
        CHECK(cuMemFreeHost(host[i]));
}

/* A child made by fork+exec of this program, running the direct sequence. */
static void run_exec_child(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    launch_some(kernel, 3);
    pid_t child = fork();
    if (child == 0) {
        execl(self_path, self_path, "--mode", "direct", "--launches", "5", (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        fail("exec child failed");
}

/* The set-up of the timeline modes: the step_50us kernel, a non-blocking stream and
 * `bytes` of device memory. */
static void timeline_setup(CUfunction *kernel, CUstream *stream, CUdeviceptr *device,
                           size_t bytes)
{
    setup_kernel(kernel, "step_50us");
    CHECK(cuStreamCreate(stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(device, bytes));
}

/* A known GPU timeline: per step a 50 us kernel, a 1 MiB pinned and a 1 MiB pageable
 * host-to-device copy and a 1 MiB memset, all on one stream; `launches` steps. */
static void run_timeline(void)
{
    CUfunction kernel;
    CUstream stream;
    CUdeviceptr device;
    void *pinned;
    const size_t bytes = 1 << 20;
    timeline_setup(&kernel, &stream, &device, bytes);
    CHECK(cuMemAllocHost_v2(&pinned, bytes));
    unsigned char *pageable = calloc(1, bytes);
    for (int step = 0; step < launches; step++) {
        CHECK(cuLaunchKernel(kernel, 8, 1, 1, 128, 1, 1, 0, stream, NULL, NULL));
        CHECK(cuMemcpyHtoDAsync_v2(device, pinned, bytes, stream));
        CHECK(cuMemcpyHtoDAsync_v2(device, pageable, bytes, stream));
        CHECK(cuMemsetD8Async(device, 0, bytes, stream));
        CHECK(cuStreamSynchronize(stream));
    }
    free(pageable);
}

/* The per-thread default stream's side of run_streams: its _ptsz entry points, as a
 * program built with --default-stream per-thread calls them. */
static void *per_thread_stream_job(void *arg)
{
    struct thread_job *job = arg;
    CUdeviceptr device;
    CHECK(cuCtxSetCurrent(job->ctx));
    CHECK(cuMemAlloc_v2(&device, 4096));
    for (int step = 0; step < launches; step++) {
        CHECK(cuLaunchKernel_ptsz(job->kernel, 4, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL));
        CHECK(cuMemsetD8Async_ptsz(device, 0, 4096, NULL));
    }
    CHECK(cuStreamSynchronize_ptsz(NULL));
    return NULL;
}

/* GPU work each record of which must link to the call that issued it, on several streams
 * at once: per step, stream_a_20us on stream 1; an event recorded after it that stream 2
 * waits for; stream_b_30us and a pinned copy on stream 2; a captured graph of two kernels
 * (graph_g1_10us, graph_g2_15us) replayed on stream 1; and on a second thread
 * per_thread_c_40us and a memset on its per-thread default stream. */
static void run_streams(void)
{
    CUfunction a, b, g1, g2;
    struct thread_job job;
    setup_kernel(&a, "stream_a_20us");
    setup_kernel(&b, "stream_b_30us");
    setup_kernel(&g1, "graph_g1_10us");
    setup_kernel(&g2, "graph_g2_15us");
    setup_kernel(&job.kernel, "per_thread_c_40us");
    CHECK(cuCtxGetCurrent(&job.ctx));
    CUstream s1, s2;
    CUevent after_a;
    CUdeviceptr device;
    void *pinned;
    CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&after_a, CU_EVENT_DISABLE_TIMING));
    CHECK(cuMemAlloc_v2(&device, 1 << 16));
    CHECK(cuMemAllocHost_v2(&pinned, 1 << 16));
    CUgraph graph;
    CUgraphExec exec;
    CHECK(cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CHECK(cuLaunchKernel(g1, 2, 1, 1, 32, 1, 1, 0, s1, NULL, NULL));
    CHECK(cuLaunchKernel(g2, 2, 1, 1, 32, 1, 1, 0, s1, NULL, NULL));
    CHECK(cuStreamEndCapture(s1, &graph));
    CHECK(cuGraphInstantiateWithFlags(&exec, graph, 0));
    pthread_t other;
    pthread_create(&other, NULL, per_thread_stream_job, &job);
    /* WORKLOAD_SYNC_EACH_STEP=1: the steps take the GPU's time, not only the host's */
    const char *sync_each = getenv("WORKLOAD_SYNC_EACH_STEP");
    for (int step = 0; step < launches; step++) {
        CHECK(cuLaunchKernel(a, 8, 1, 1, 128, 1, 1, 0, s1, NULL, NULL));
        CHECK(cuEventRecord(after_a, s1));
        CHECK(cuStreamWaitEvent(s2, after_a, 0));
        CHECK(cuLaunchKernel(b, 8, 1, 1, 128, 1, 1, 0, s2, NULL, NULL));
        CHECK(cuMemcpyHtoDAsync_v2(device, pinned, 1 << 16, s2));
        CHECK(cuGraphLaunch(exec, s1));
        if (sync_each && *sync_each == '1')
            CHECK(cuStreamSynchronize(s2));
    }
    pthread_join(other, NULL);
    CHECK(cuStreamSynchronize(s1));
    CHECK(cuStreamSynchronize(s2));
}

/* `.item()` each step: a tiny_kernel (FAKECUDA_KERNEL_NS long), the loss read back into
 * pageable memory (the copy waits for the kernel), and a stream synchronize. */
static void run_waits(void)
{
    CUfunction kernel;
    CUstream stream;
    CUdeviceptr device;
    float loss;
    setup_kernel(&kernel, "tiny_kernel");
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&device, sizeof loss));
    for (int step = 0; step < launches; step++) {
        CHECK(cuLaunchKernel(kernel, 8, 1, 1, 128, 1, 1, 0, stream, NULL, NULL));
        CHECK(cuMemcpyDtoHAsync_v2(&loss, device, sizeof loss, stream));
        CHECK(cuStreamSynchronize(stream));
    }
}

/* What torch.profiler's Kineto does when a profile starts: its own activity callbacks (CUPTI
 * keeps one pair for the process, the last registered) and its kinds. The few CUPTI
 * declarations it needs are spelled out (cupti_activity.h values): cupti.h does not mix
 * with the v1 driver names this program declares. */
#define WL_CUPTI_SUCCESS 0
#define WL_CUPTI_KIND_CONCURRENT_KERNEL 10
#define WL_CUPTI_FLUSH_FORCED 1u
typedef void (*wl_buffer_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*wl_done_fn)(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                           size_t valid);

static void profiler_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, 1 << 20);
    *size = *buffer ? 1 << 20 : 0;
    *max_records = 0;
}

static void profiler_done(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                          size_t valid)
{
    (void)ctx, (void)stream, (void)size, (void)valid;
    free(buffer);
}

static void take_cupti(void)
{
    const char *path = getenv("GPUWATCH_CUPTI");
    void *cupti = dlopen(path ? path : "libcupti.so.13", RTLD_NOW);
    if (!cupti)
        fail("no CUPTI to take");
    int (*flush)(uint32_t) = (int (*)(uint32_t))dlsym(cupti, "cuptiActivityFlushAll");
    int (*reg)(wl_buffer_fn, wl_done_fn) =
        (int (*)(wl_buffer_fn, wl_done_fn))dlsym(cupti, "cuptiActivityRegisterCallbacks");
    int (*enable)(int) = (int (*)(int))dlsym(cupti, "cuptiActivityEnable");
    if (!flush || !reg || !enable)
        fail("CUPTI lacks the activity API");
    /* (the records so far reach gpuwatch, so the cut falls exactly at this step) */
    flush(WL_CUPTI_FLUSH_FORCED);
    if (reg(profiler_buffer, profiler_done) != WL_CUPTI_SUCCESS ||
        enable(WL_CUPTI_KIND_CONCURRENT_KERNEL) != WL_CUPTI_SUCCESS)
        fail("CUPTI refused the profiler");
}

/* run_timeline's steps; half way another profiler takes CUPTI's activity buffers, and the
 * steps after it come 120 ms apart, so that the run goes on 1.2 s past the cut. */
static void run_profiler_takeover(void)
{
    CUfunction kernel;
    CUstream stream;
    CUdeviceptr device;
    const size_t bytes = 1 << 20;
    timeline_setup(&kernel, &stream, &device, bytes);
    for (int step = 0; step < launches; step++) {
        if (step == launches / 2)
            take_cupti();
        if (step >= launches / 2)
            usleep(120000);
        CHECK(cuLaunchKernel(kernel, 8, 1, 1, 128, 1, 1, 0, stream, NULL, NULL));
        CHECK(cuMemsetD8Async(device, 0, bytes, stream));
        CHECK(cuStreamSynchronize(stream));
    }
}

/* Every copy shape the shim classifies, once each, with known directions and host kinds. */
static void run_copies(void)
{
    CUfunction kernel;
    setup_direct(&kernel);
    const size_t bytes = 4096;
    CUdeviceptr a, b;
    void *pinned;
    unsigned char *pageable = calloc(1, bytes);
    CHECK(cuMemAlloc_v2(&a, bytes));
    CHECK(cuMemAlloc_v2(&b, bytes));
    CHECK(cuMemAllocHost_v2(&pinned, bytes));
    CUDA_MEMCPY2D two = {0};
    two.srcMemoryType = CU_MEMORYTYPE_HOST, two.srcHost = pageable, two.srcPitch = 64;
    two.dstMemoryType = CU_MEMORYTYPE_DEVICE, two.dstDevice = a, two.dstPitch = 64;
    two.WidthInBytes = 64, two.Height = 8;
    CHECK(cuMemcpy2D_v2(&two));                                /* HtoD pageable, 512 B */
    two.srcMemoryType = CU_MEMORYTYPE_DEVICE, two.srcDevice = a, two.srcHost = NULL;
    two.dstMemoryType = CU_MEMORYTYPE_HOST, two.dstHost = pinned, two.dstDevice = 0;
    CHECK(cuMemcpy2DAsync_v2(&two, NULL));                     /* DtoH pinned */
    CUDA_MEMCPY3D three = {0};
    three.srcMemoryType = CU_MEMORYTYPE_DEVICE, three.srcDevice = a, three.srcPitch = 64;
    three.srcHeight = 4;
    three.dstMemoryType = CU_MEMORYTYPE_DEVICE, three.dstDevice = b, three.dstPitch = 64;
    three.dstHeight = 4;
    three.WidthInBytes = 64, three.Height = 4, three.Depth = 2;
    CHECK(cuMemcpy3D_v2(&three));                              /* DtoD, 512 B */
    CHECK(cuMemcpy((CUdeviceptr)(uintptr_t)pinned, a, bytes)); /* unified: DtoH pinned */
    memset(pageable, 0xAB, bytes);
    CHECK(cuMemcpyAsync(b, (CUdeviceptr)(uintptr_t)pageable, bytes, NULL)); /* HtoD pageable */
    CHECK(cuCtxSynchronize());
    /* the bytes went where the program asked (DtoH pageable) */
    unsigned char *back = calloc(1, bytes);
    if (!back)
        fail("calloc");
    CHECK(cuMemcpyDtoH_v2(back, b, bytes));
    if (back[0] != 0xAB || back[bytes - 1] != 0xAB || pageable[0] != 0xAB)
        fail("cuMemcpyAsync did not copy the host buffer to the device");
    free(back);
    CHECK(cuMemcpyDtoDAsync_v2(b, a, bytes, NULL));            /* DtoD */
    /* memsets of each element size: 100 elements each, then 10 each on a stream */
    CHECK(cuMemsetD8_v2(a, 1, 100));
    CHECK(cuMemsetD16_v2(a, 1, 100));
    CHECK(cuMemsetD32_v2(a, 1, 100));
    CHECK(cuMemsetD8Async(a, 1, 10, NULL));
    CHECK(cuMemsetD16Async(a, 1, 10, NULL));
    CHECK(cuMemsetD32Async(a, 1, 10, NULL));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemFree_v2(a));
    CHECK(cuMemFree_v2(b));
    CHECK(cuMemFreeHost(pinned));
    free(pageable);
}

/* NVTX as PyTorch uses it: nested push/pop per thread, plus a named domain, a mark and a
 * start/end range. */
static void *nvtx_thread(void *arg)
{
    struct thread_job *job = arg;
    CUfunction kernel = job->kernel;
    CHECK(cuCtxSetCurrent(job->ctx));
    for (int step = 0; step < 3; step++) {
        nvtxRangePushA("step");
        nvtxRangePushA("forward");
        CHECK(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        nvtxRangePop();
        nvtxRangePushA("backward");
        CHECK(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        nvtxRangePop();
        nvtxRangePop();
    }
    return NULL;
}

static void run_nvtx(void)
{
    struct thread_job job;
    setup_direct(&job.kernel);
    CHECK(cuCtxGetCurrent(&job.ctx));
    CUfunction kernel = job.kernel;
    pthread_t ids[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&ids[i], NULL, nvtx_thread, &job);
    for (int i = 0; i < 4; i++)
        pthread_join(ids[i], NULL);
    nvtxDomainHandle_t domain = nvtxDomainCreateA("gpuwatch-test");
    nvtxEventAttributes_t attributes = {0};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = "epoch";
    nvtxDomainRangePushEx(domain, &attributes);
    nvtxMarkA("checkpoint");
    nvtxRangeId_t io = nvtxRangeStartA("io");
    launch_some(kernel, 1);
    nvtxRangeEnd(io);
    nvtxDomainRangePop(domain);
}

/* Resolves every (symbol, cudaVersion, flags) line of a lookup list the way the runtime
 * does and prints, per line, which exported function the answer is and which file holds
 * it, so a test can compare runs with and without the shim. */
static void run_replay(const char *list)
{
    FILE *in = fopen(list, "r");
    if (!in)
        fail("cannot open the lookup list");
    void *h = open_driver();
    resolver_v2 first = must_dlsym(h, "cuGetProcAddress_v2");
    void *p_raw = NULL;
    CUdriverProcAddressQueryResult status;
    CHECK(first("cuGetProcAddress", &p_raw, 12000, 0, &status));
    resolver_v2 p = (resolver_v2)p_raw;
    char line[512];
    while (fgets(line, sizeof line, in)) {
        char symbol[256];
        int version;
        unsigned long long flags;
        if (line[0] == '#' || sscanf(line, "%255s %d %llu", symbol, &version, &flags) != 3)
            continue;
        const char *name = strcmp(symbol, "(empty)") == 0 ? "" : symbol;
        void *fn = NULL;
        CUresult rc = p(name, &fn, version, flags, &status);
        Dl_info info = {0};
        const char *file = "-", *exact = "-";
        if (rc == CUDA_SUCCESS && fn && dladdr(fn, &info)) {
            file = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
            file = file ? file + 1 : info.dli_fname;
            exact = info.dli_sname ? info.dli_sname : "?";
        }
        printf("%s\t%d\t%llu\t%d\t%s\t%s\n", symbol, version, flags, (int)rc, exact, file);
    }
    fclose(in);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"mode", required_argument, NULL, 'm'},
        {"launches", required_argument, NULL, 'n'},
        {"threads", required_argument, NULL, 't'},
        {"list", required_argument, NULL, 'l'},
        {"dlopen", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    const char *mode = "direct", *list = NULL;
    int opt;
    self_path = argv[0];
    while ((opt = getopt_long(argc, argv, "m:n:t:l:o:", options, NULL)) != -1) {
        switch (opt) {
        case 'o':  /* a library loaded before any driver call, as a program's CUDA runtime */
            if (!dlopen(optarg, RTLD_NOW | RTLD_LOCAL))
                fail(dlerror());
            break;
        case 'm': mode = optarg; break;
        case 'n': launches = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        case 'l': list = optarg; break;
        default: return 2;
        }
    }
    struct driver d;
    if (strcmp(mode, "direct") == 0) {
        direct_driver(&d);
        run_sequence(&d);
    } else if (strcmp(mode, "dlsym") == 0) {
        dlsym_driver(&d);
        run_sequence(&d);
    } else if (strcmp(mode, "procaddr") == 0 || strcmp(mode, "procaddr-v1") == 0) {
        procaddr_driver(&d, strcmp(mode, "procaddr-v1") == 0);
        run_sequence(&d);
    } else if (strcmp(mode, "threads") == 0) {
        run_threads();
    } else if (strcmp(mode, "fork") == 0) {
        run_fork();
    } else if (strcmp(mode, "signal-one-shot") == 0) {
        run_signal_one_shot();
    } else if (strcmp(mode, "signal-reraise") == 0) {
        run_signal_reraise();
    } else if (strcmp(mode, "launch-until-killed") == 0) {
        run_launch_until_killed();
    } else if (strcmp(mode, "segv-after-burst") == 0) {
        run_crash(SIGSEGV);
    } else if (strcmp(mode, "abort-after-burst") == 0) {
        run_crash(SIGABRT);
    } else if (strcmp(mode, "closefrom") == 0) {
        run_closefrom();
    } else if (strcmp(mode, "cpu-workers") == 0) {
        run_cpu_workers();
    } else if (strcmp(mode, "wait-for-kill") == 0) {
        run_wait_for_kill();
    } else if (strcmp(mode, "oom") == 0) {
        run_oom();
    } else if (strcmp(mode, "timeline") == 0) {
        run_timeline();
    } else if (strcmp(mode, "waits") == 0) {
        run_waits();
    } else if (strcmp(mode, "streams") == 0) {
        run_streams();
    } else if (strcmp(mode, "profiler-takeover") == 0) {
        run_profiler_takeover();
    } else if (strcmp(mode, "copies") == 0) {
        run_copies();
    } else if (strcmp(mode, "nvtx") == 0) {
        run_nvtx();
    } else if (strcmp(mode, "stacks") == 0) {
        run_stacks();
    } else if (strcmp(mode, "exec") == 0) {
        run_exec_child();
    } else if (strcmp(mode, "replay") == 0 && list) {
        run_replay(list);
        return 0;
    } else {
        fprintf(stderr, "workload: unknown mode %s\n", mode);
        return 2;
    }
    printf("workload %s: ok\n", mode);
    return 0;
}
