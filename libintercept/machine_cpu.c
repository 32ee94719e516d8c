/* /proc/stat's per-CPU lines, summed over the CPUs this process may use (machine_cpu.h). */
#include "machine_cpu.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int gw_machine_busy_ns(uint64_t *ns)
{
    /* a few hundred CPUs at about 60 bytes a line */
    static char buf[1 << 16];
    /* the CPUs the process may use, read again once a second (a syscall a round saved) */
    static cpu_set_t usable;
    static int masked;
    static time_t masked_at = -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);  /* (the vDSO's: no syscall) */
    if (now.tv_sec != masked_at) {
        masked = sched_getaffinity(0, sizeof usable, &usable) == 0;
        masked_at = now.tv_sec;
    }
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    ssize_t n;
    /* (a read that fills less than it asked for has reached the end: /proc/stat is made
     * whole on the first read, so the usual second read for the end is a syscall saved) */
    while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0) {
        len += (size_t)n;
        if ((size_t)n < sizeof buf - 1 - (len - (size_t)n))
            break;
    }
    close(fd);
    buf[len] = '\0';
    long ticks = sysconf(_SC_CLK_TCK);
    uint64_t tick_ns = 1000000000ull / (uint64_t)(ticks > 0 ? ticks : 100), busy = 0;
    int cpus = 0;
    for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        unsigned cpu;
        unsigned long long user, nice, system, idle, iowait, irq, softirq, steal = 0;
        /* "cpu " (the total) does not match: only the numbered lines */
        if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9' ||
            sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &user, &nice,
                   &system, &idle, &iowait, &irq, &softirq, &steal) < 8)
            continue;
        if (masked && (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &usable)))
            continue;
        /* niced work too: across sessions the scheduler shares between their groups
         * (autogroups), whatever the nice value of a process inside */
        busy += (uint64_t)(user + nice + system + irq + softirq + steal) * tick_ns;
        cpus++;
    }
    if (!cpus)
        return -1;
    *ns = busy;
    return 0;
}
