/* What a file is, by its first bytes, and the error that says a JSON file is no Kineto
 * trace (kineto.h): built with or without the Kineto reader itself. */
#include <string.h>
#include <unistd.h>

#include "kineto.h"

int gw_kineto_sniff(int fd)
{
    unsigned char head[64];
    ssize_t n = pread(fd, head, sizeof head, 0);
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
        return 1;
    for (ssize_t i = 0; i < n; i++) {
        if (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')
            continue;
        return head[i] == '{' || head[i] == '[';
    }
    return 0;
}

int gw_reader_error_not_trace(const char *err)
{
    return err && strstr(err, GW_KINETO_NOT_TRACE) != NULL;
}
