/*
 * The host's memcpy rate (GW_REC_HOST_COPY): what the fix for many small uploads (the
 * tensors gathered into one pinned staging buffer, copied once) costs the host, which
 * the analyzer cannot tell from the calls, from memory to memory (the buffers evicted
 * from the caches before each copy). Timed on the writer thread as it starts and
 * then a few copies each round for several rounds: one moment may find the CPUs busy
 * with the program's threads (a start-up beside CUPTI's, a rate half what the loop saw).
 */
#ifndef GW_HOST_COPY_H
#define GW_HOST_COPY_H

#include <stdint.h>

struct gw_host_copy {
    unsigned char *from, *to;    /* two buffers of HOST_COPY_BYTES, made once */
    unsigned rounds;             /* rounds timed so far */
    uint64_t best_bps;           /* the best rate so far, bytes/s (0: none yet) */
};

/* Times one round of `tries` copies, until HOST_COPY_ROUNDS are done. Returns the best
 * rate so far where this round bettered it by 5 % or more (or was the first), else 0 (0
 * too where the buffers cannot be had). Frees them after the last round. */
uint64_t gw_host_copy_round(struct gw_host_copy *hc, unsigned tries);
void gw_host_copy_free(struct gw_host_copy *hc);

#endif
