/* The driver API as the shim sees it: every exact versioned and per-thread name declared,
 * none renamed by cuda.h's macros (the driver's own internal view). Include this, never
 * <cuda.h> directly, in libintercept/. */
#ifndef GW_CUDA_H
#define GW_CUDA_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#define GW_EXPORT __attribute__((visibility("default")))
/* Code a sanitizer runtime may reach before it is initialized (its interceptors resolve
 * through the shim's dlsym): with the shim itself built with sanitizers, instrumented code
 * there would touch shadow memory that is not mapped yet. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define GW_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))
#endif
#endif
#ifndef GW_NO_SANITIZE
#define GW_NO_SANITIZE
#endif
#define GW_TLS __thread __attribute__((tls_model("initial-exec")))
#define GW_LIKELY(x) __builtin_expect(!!(x), 1)
#define GW_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
