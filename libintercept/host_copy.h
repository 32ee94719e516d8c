/*
 * The host's memcpy rate (GW_REC_HOST_COPY): what the fix for many small uploads (the
 * tensors gathered into one pinned staging buffer, copied once) costs the host, which
 * the analyzer cannot tell from the calls.
 */
#ifndef GW_HOST_COPY_H
#define GW_HOST_COPY_H

#include <stdint.h>

/* Bytes per second one thread's memcpy moves between two buffers of HOST_COPY_BYTES
 * (the best of a few tries); 0 when the buffers cannot be had. Takes a few ms: the writer
 * thread's, once. */
uint64_t gw_host_copy_bps(void);

#endif
