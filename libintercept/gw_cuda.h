/* The driver API as the shim sees it: every exact versioned and per-thread name declared,
 * none renamed by cuda.h's macros (the driver's own internal view). Include this, never
 * <cuda.h> directly, in libintercept/. */
#ifndef GW_CUDA_H
#define GW_CUDA_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#define GW_EXPORT __attribute__((visibility("default")))
#define GW_TLS __thread __attribute__((tls_model("initial-exec")))
#define GW_LIKELY(x) __builtin_expect(!!(x), 1)
#define GW_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
