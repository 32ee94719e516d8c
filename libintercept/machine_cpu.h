/*
 * How busy the CPUs this process may run on are, all processes together (/proc/stat): the
 * CPU samples (cpu_sampler.c) set the process's own use beside it, so that what other
 * processes took from the CPUs a DataLoader's workers would need shows in the trace.
 */
#ifndef GW_MACHINE_CPU_H
#define GW_MACHINE_CPU_H

#include <stdint.h>

/* Cumulative busy time (user, system, irq, softirq, steal; not nice: niced processes
 * yield to the program's threads) of the CPUs in this
 * thread's affinity mask, in ns: 0, or -1 when /proc/stat cannot be read. Writer thread
 * only (a static buffer). */
int gw_machine_busy_ns(uint64_t *ns);

#endif
