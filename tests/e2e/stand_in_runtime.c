/* A library that stands in for a CUDA runtime in test_gpu_timeline: linked under the name
 * libcudart.so.13 in a directory with a CUPTI beside it, it shows the shim where the
 * program's CUDA would find CUPTI, without a real runtime's start-up and teardown. */
int gw_stand_in_runtime(void);

int gw_stand_in_runtime(void)
{
    return 13;
}
