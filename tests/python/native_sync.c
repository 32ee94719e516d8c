/*
 * For the Python-lines tests: waits for the GPU on a thread of its own that never ran
 * Python (as autograd's backward threads and a DataLoader's pin-memory thread are), so
 * its calls have no Python frames; the report must say so rather than name a line.
 */
#include <pthread.h>
#include <stdint.h>

#include <cuda.h>

struct job {
    CUcontext ctx;
    CUdeviceptr src;
    int count;
    CUresult rc;
};

static void *run(void *arg)
{
    struct job *job = arg;
    job->rc = cuCtxSetCurrent(job->ctx);
    for (int i = 0; i < job->count && job->rc == CUDA_SUCCESS; i++) {
        float value;
        job->rc = cuMemcpyDtoH(&value, job->src, sizeof value);  /* waits for the queue */
    }
    return NULL;
}

/* count device-to-host reads of src on a new thread in the caller's context; 0 or the
 * first error. */
int native_thread_reads(uint64_t src, int count)
{
    struct job job = {.src = (CUdeviceptr)src, .count = count};
    CUresult rc = cuCtxGetCurrent(&job.ctx);
    if (rc != CUDA_SUCCESS)
        return (int)rc;
    pthread_t thread;
    if (pthread_create(&thread, NULL, run, &job) != 0)
        return -1;
    pthread_join(thread, NULL);
    return (int)job.rc;
}
