/*
 * fakecuda: contexts. One simulated device (ordinal 0) with a primary context; cuCtxCreate
 * makes more. Each thread has a context stack (push/pop/set current as the real driver) and,
 * per context, a per-thread default stream used by the _ptsz/_ptds variants.
 *
 * Contexts are never freed: cuCtxDestroy marks them dead, so a stale handle on another thread
 * is detected instead of touching freed memory (a small, deliberate leak in a test double).
 */
#include "fakecuda.h"

#include <stdlib.h>

#define CTX_STACK_MAX 32

static fc_ctx primary;
static atomic_int primary_refs;
static pthread_once_t primary_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ctx_node { fc_ctx *ctx; struct ctx_node *next; } *ctx_list;

/* The top of the stack is read on every call: keep it in initial-exec TLS. */
static __thread fc_ctx *tls_current __attribute__((tls_model("initial-exec")));
static __thread fc_ctx *tls_stack[CTX_STACK_MAX];
static __thread int tls_depth;
static __thread fc_stream *tls_pts;

static pthread_key_t pts_key;
static pthread_once_t pts_key_once = PTHREAD_ONCE_INIT;

static void pts_free(void *p) { free(p); }
static void pts_key_make(void) { pthread_key_create(&pts_key, pts_free); }

static void ctx_setup(fc_ctx *c, int is_primary, CUdevice dev, unsigned flags)
{
    c->magic = FC_MAGIC_CTX;
    c->is_primary = is_primary;
    c->dev = dev;
    c->flags = flags;
    c->id = (unsigned long long)fc_next_id();
    c->legacy.magic = FC_MAGIC_STREAM;
    c->legacy.kind = FC_STREAM_LEGACY;
    c->legacy.ctx = c;
    c->legacy.id = (unsigned long long)fc_next_id();
}

static void primary_init(void) { ctx_setup(&primary, 1, 0, 0); }

int fc_ctx_valid(CUcontext h)
{
    fc_ctx *c = (fc_ctx *)h;
    if (!c)
        return 0;
    if (c == &primary)
        return primary.magic == FC_MAGIC_CTX;
    int ok = 0;
    pthread_mutex_lock(&ctx_lock);
    for (struct ctx_node *n = ctx_list; n; n = n->next)
        if (n->ctx == c) {
            ok = c->magic == FC_MAGIC_CTX;
            break;
        }
    pthread_mutex_unlock(&ctx_lock);
    return ok;
}

fc_ctx *fc_current_ctx(void) { return tls_current; }

CUresult fc_need_ctx(fc_ctx **out)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    fc_ctx *c = tls_current;
    if (!c || c->magic != FC_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

static fc_stream *per_thread_stream(fc_ctx *c)
{
    if (tls_pts && tls_pts->ctx == c)
        return tls_pts;
    fc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = FC_MAGIC_STREAM;
    s->kind = FC_STREAM_PER_THREAD;
    s->ctx = c;
    s->id = (unsigned long long)fc_next_id();
    pthread_once(&pts_key_once, pts_key_make);
    free(tls_pts);
    tls_pts = s;
    pthread_setspecific(pts_key, s);
    return s;
}

CUresult fc_stream_get(CUstream h, int per_thread, fc_stream **out)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    fc_stream *s;
    if (h == NULL)
        s = per_thread ? per_thread_stream(c) : &c->legacy;
    else if (h == CU_STREAM_LEGACY)
        s = &c->legacy;
    else if (h == CU_STREAM_PER_THREAD)
        s = per_thread_stream(c);
    else {
        s = (fc_stream *)h;
        if (s->magic != FC_MAGIC_STREAM)
            return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = s;
    return CUDA_SUCCESS;
}

/* ---- the thread's context stack ---- */

static void stack_sync(void) { tls_current = tls_depth ? tls_stack[tls_depth - 1] : NULL; }

static CUresult stack_push(fc_ctx *c)
{
    if (tls_depth == CTX_STACK_MAX)
        return CUDA_ERROR_OUT_OF_MEMORY;
    tls_stack[tls_depth++] = c;
    stack_sync();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (ctx && !fc_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ctx) {                     /* NULL pops the top, a no-op on an empty stack */
        if (tls_depth)
            tls_depth--;
    } else if (tls_depth) {
        tls_stack[tls_depth - 1] = (fc_ctx *)ctx;
    } else {
        tls_stack[tls_depth++] = (fc_ctx *)ctx;
    }
    stack_sync();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)tls_current;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return stack_push((fc_ctx *)ctx);
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!tls_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_ctx *c = tls_stack[--tls_depth];
    stack_sync();
    if (pctx)
        *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

/* ---- creation and destruction ---- */

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    fc_ctx *c = calloc(1, sizeof *c);
    struct ctx_node *n = malloc(sizeof *n);
    if (!c || !n) {
        free(c);
        free(n);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    ctx_setup(c, 0, dev, flags);
    pthread_mutex_lock(&ctx_lock);
    n->ctx = c;
    n->next = ctx_list;
    ctx_list = n;
    pthread_mutex_unlock(&ctx_lock);
    r = stack_push(c);
    if (r != CUDA_SUCCESS)
        return r;
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev)
{
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                unsigned int flags, CUdevice dev)
{
    if (ctxCreateParams && ctxCreateParams->numExecAffinityParams < 0)
        return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_ctx_valid(ctx) || ((fc_ctx *)ctx)->is_primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_ctx *c = (fc_ctx *)ctx;
    fc_sleep_until(atomic_load(&c->all_max));     /* outstanding work finishes first */
    c->magic = FC_MAGIC_DEAD;
    c->legacy.magic = FC_MAGIC_DEAD;
    /* pop it wherever it sits on this thread's stack */
    int j = 0;
    for (int i = 0; i < tls_depth; i++)
        if (tls_stack[i] != c)
            tls_stack[j++] = tls_stack[i];
    tls_depth = j;
    stack_sync();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    if (!ctx)
        return cuCtxGetDevice(device);
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = ((fc_ctx *)ctx)->dev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

/* ---- the primary context ---- */

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_once(&primary_once, primary_init);
    atomic_fetch_add(&primary_refs, 1);
    *pctx = (CUcontext)&primary;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    int cur = atomic_load(&primary_refs);
    do {
        if (cur <= 0)
            return CUDA_ERROR_INVALID_CONTEXT;
    } while (!atomic_compare_exchange_weak(&primary_refs, &cur, cur - 1));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = primary.flags;
    *active = atomic_load(&primary_refs) > 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_once(&primary_once, primary_init);
    primary.flags = flags;
    return CUDA_SUCCESS;
}
