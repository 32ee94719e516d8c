/* [memory] instant events (torch.profiler's profile_memory=True): each block PyTorch's
 * caching allocator hands out or takes back, with its address, its size (negative when
 * given back) and the allocator's totals after it ("Total Allocated", "Total Reserved").
 * Device blocks ("Device Type" 1, CUDA) become MEM_BLOCK events, which the analysis adds to
 * the memory the process holds (memory_model.c); host blocks (type 0, device -1) are left
 * out, as the driver's view of a .gwt leaves pageable host memory out.
 *
 * A trace starts mid-run: what the device held then (weights, optimizer state) was taken
 * before it and is never seen taken. The first block of each device, in time, says it:
 * Total Allocated less the block's own bytes. */
#include <string.h>

#include "kineto.h"
#include "../trace_reader_internal.h"

#define CUDA_DEVICE_TYPE 1   /* c10::DeviceType::CUDA */
enum { ORDER_CALL = 3 };     /* (kineto_map.c's: with the calls at one time) */

void kin_memory_map(struct kineto *k, const struct kin_event *e)
{
    if (!e->has_mem_bytes || !e->mem_bytes || !e->has_mem_allocated ||
        !e->has_mem_device_type || e->mem_device_type != CUDA_DEVICE_TYPE ||
        e->mem_device < 0)
        return;
    struct kin_rec rec = {.ts = e->ts, .tid = (uint32_t)(e->tid ? e->tid : e->pid),
                          .kind = GW_EV_MEM_BLOCK, .order = ORDER_CALL};
    struct gw_event block = {0};
    block.u.mem_block.addr = e->mem_addr;
    block.u.mem_block.bytes = e->mem_bytes;
    block.u.mem_block.device = (uint64_t)e->mem_device;
    block.u.mem_block.allocated = e->mem_allocated;
    block.u.mem_block.reserved = e->mem_reserved;
    memcpy(rec.u, &block.u, sizeof rec.u);
    if (kin_sort_add(&k->sort, &rec) != 0 && !k->failed) {
        k->failed = 1;
        snprintf(k->error, sizeof k->error, "%s: out of memory or temporary space sorting "
                 "the events", k->path);
    }
}

void kin_memory_block(struct kineto *k, struct gw_event *ev)
{
    k->mem_blocks++;
    uint64_t device = ev->u.mem_block.device;
    if (gw_map_get(&k->mem_devices, device))
        return;
    gw_map_put(&k->mem_devices, device, 1);
    /* (allocated - bytes: before a block taken, less it; before one given back, more) */
    int64_t before = (int64_t)ev->u.mem_block.allocated - ev->u.mem_block.bytes;
    ev->u.mem_block.before = before > 0 ? (uint64_t)before : 0;
}
