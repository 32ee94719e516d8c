/* The toolkit's real CUDA runtime starting up (cudaGetDeviceCount): on the simulated
 * driver it makes its 440 driver lookups and then stops for lack of the driver's private
 * tables, which is all the lookup test needs. */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void)
{
    int count = -1;
    cudaError_t rc = cudaGetDeviceCount(&count);
    printf("cudaGetDeviceCount: %d (%s), count %d\n", (int)rc, cudaGetErrorName(rc), count);
    return 0;
}
