/* Address ranges the program got from the driver, so a copy can be classified (device,
 * pinned host, managed, or else pageable host) without asking the driver on every copy. */
#ifndef GW_RANGES_H
#define GW_RANGES_H

#include <stdint.h>

enum gw_range_kind { GW_RANGE_DEVICE, GW_RANGE_PINNED, GW_RANGE_MANAGED, GW_RANGE_KINDS };

void gw_ranges_add(enum gw_range_kind kind, uint64_t start, uint64_t size);
/* Removes the range starting at start; returns its size, or 0 when there was none. */
uint64_t gw_ranges_remove(enum gw_range_kind kind, uint64_t start);
/* 1 when addr lies inside a range of this kind. */
int gw_ranges_contains(enum gw_range_kind kind, uint64_t addr);
/* Classification of a host-side pointer: enum gw_host_kind. */
unsigned gw_host_kind(uint64_t addr);
/* 1 when the pointer is device (or managed) memory. */
int gw_is_device_pointer(uint64_t addr);
void gw_ranges_reset(void);

#endif
