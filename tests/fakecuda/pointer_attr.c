/*
 * fakecuda: cuPointerGetAttribute(s). Device allocations, VMM mappings and pinned host
 * ranges are known; anything else is pageable host memory, for which the singular call
 * returns CUDA_ERROR_INVALID_VALUE and the plural call fills in null values (as the real
 * driver does).
 */
#include "fakecuda.h"

#include <string.h>

static CUresult put(CUpointer_attribute a, const fc_range_info *in, int known, CUdeviceptr ptr,
                    void *data)
{
    int dev = known && in->kind == FC_MEM_DEVICE;
    int managed = dev && in->alloc_kind == FC_ALLOC_MANAGED;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = known ? (CUcontext)in->ctx : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = !known ? 0u : dev ? (unsigned)CU_MEMORYTYPE_DEVICE
                                                  : (unsigned)CU_MEMORYTYPE_HOST;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = known ? ptr : 0;
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (known && dev && !managed)
            return CUDA_ERROR_INVALID_VALUE;    /* plain device memory has no host address */
        *(void **)data = known ? (void *)(uintptr_t)ptr : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
        *(int *)data = 0;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        *(unsigned long long *)data = known ? in->id : 0;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = managed;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = known ? 0 : -2;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        *(CUdeviceptr *)data = known ? (CUdeviceptr)in->base : 0;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        *(size_t *)data = known ? in->size : 0;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = known;
        break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = 0;
        break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        *(int *)data = known ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE : 0;
        break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(CUmemoryPool *)data = NULL;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static int lookup(CUdeviceptr ptr, fc_range_info *info)
{
    return ptr && fc_classify((uintptr_t)ptr, 1, info) == 0 && info->kind != FC_MEM_PAGEABLE;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    fc_range_info info;
    if (!lookup(ptr, &info))
        return CUDA_ERROR_INVALID_VALUE;
    return put(attribute, &info, 1, ptr, data);
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
                                        CUpointer_attribute *attributes, void **data,
                                        CUdeviceptr ptr)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (numAttributes == 0 || !attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    fc_range_info info;
    memset(&info, 0, sizeof info);
    int known = lookup(ptr, &info);
    for (unsigned i = 0; i < numAttributes; i++) {
        if (!data[i])
            return CUDA_ERROR_INVALID_VALUE;
        r = put(attributes[i], &info, known, ptr, data[i]);
        if (r == CUDA_ERROR_INVALID_VALUE && attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
            *(void **)data[i] = NULL;       /* the plural call reports "none" instead */
            r = CUDA_SUCCESS;
        }
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}
