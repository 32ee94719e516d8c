/*
 * CPU time of the traced threads and of the process's descendants (DataLoader workers,
 * compile workers), sampled by the writer thread every GW_CPU_SAMPLE_INTERVAL_NS. The driver
 * calls show when the GPU waits for the host; these samples show what the host did
 * meanwhile: a training thread busy loading batches itself, workers that cannot keep up,
 * or nothing on a CPU at all (the input waits on storage).
 */
#ifndef GW_CPU_SAMPLER_H
#define GW_CPU_SAMPLER_H

#include <stdint.h>

/* One flush round at the default GPUWATCH_FLUSH_MS: a 250 ms loop still gets five. */
#define GW_CPU_SAMPLE_INTERVAL_NS 50000000ull
/* Descendants read per sample, the first found (breadth first) */
#define GW_CPU_MAX_DESCENDANTS 256

/* A new trace (started, or a forked child's): samples from the writer's next round on
 * (each round writes CPU_THREAD and CPU_PROC records when a sample is due). */
void gw_cpu_sampler_start(void);

#endif
