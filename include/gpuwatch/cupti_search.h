/*
 * Where CUPTI is looked for, in order: one list for the shim, which loads it inside the
 * program (libintercept/cupti_timeline.c), and for `gpuwatch --version`, which says from
 * outside the program which one that would be (tools/version.c).
 *   1. GPUWATCH_CUPTI, the user's choice.
 *   2. Beside the program's own CUDA (the directory of the first of gw_cupti_runtimes it
 *      loaded): each of gw_cupti_beside_runtime under it. A CUPTI of another version than
 *      the program's runtime does not work with it, and PyTorch brings its CUDA as wheels
 *      (nvidia-cuda-cupti-cu12's nvidia/cuda_cupti/lib; CUDA 13's one nvidia/cu13/lib).
 *   3. CUDA_HOME's GW_CUPTI_UNDER_TOOLKIT, the toolkit the user named.
 *   4. The loader's own search (LD_LIBRARY_PATH, the ld.so cache).
 *   5. gw_cupti_last_dirs: the usual toolkit place.
 */
#ifndef GPUWATCH_CUPTI_SEARCH_H
#define GPUWATCH_CUPTI_SEARCH_H

#define GW_CUPTI_SONAME "libcupti.so.13"
#define GW_CUPTI_ENV "GPUWATCH_CUPTI"
#define GW_CUPTI_UNDER_TOOLKIT "/extras/CUPTI/lib64"

/* Libraries whose directory says where the program's CUDA is (a name's prefix). */
static const char *const gw_cupti_runtimes[] = {"libcudart.so", "libtorch_cuda.so",
                                                "libcublas.so"};
#define GW_CUPTI_RUNTIMES (sizeof gw_cupti_runtimes / sizeof gw_cupti_runtimes[0])

/* Appended to such a library's directory. */
static const char *const gw_cupti_beside_runtime[] = {"", "/../../nvidia/cuda_cupti/lib",
                                                      "/../../nvidia/cu13/lib",
                                                      "/../extras/CUPTI/lib64"};
#define GW_CUPTI_BESIDE_RUNTIME (sizeof gw_cupti_beside_runtime / sizeof gw_cupti_beside_runtime[0])

static const char *const gw_cupti_last_dirs[] = {"/usr/local/cuda/extras/CUPTI/lib64",
                                                 "/usr/local/cuda/lib64"};
#define GW_CUPTI_LAST_DIRS (sizeof gw_cupti_last_dirs / sizeof gw_cupti_last_dirs[0])

#endif
