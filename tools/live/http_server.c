/* The tiny HTTP/1.1 server of `gpuwatch serve` (http_server.h). */
#include "http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int gw_http_listen(const char *spec, char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon || !colon[1]) {
        snprintf(err, errlen, "--listen expects HOST:PORT, got '%s'", spec);
        return -1;
    }
    size_t hlen = (size_t)(colon - spec);
    if (hlen >= sizeof host) {
        snprintf(err, errlen, "host too long in '%s'", spec);
        return -1;
    }
    memcpy(host, spec, hlen);
    host[hlen] = 0;
    if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {  /* [::1] */
        memmove(host, host + 1, hlen - 2);
        host[hlen - 2] = 0;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535) {
        snprintf(err, errlen, "--listen expects a port from 0 to 65535, got '%s'", colon + 1);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res;
    int rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;  /* a restarted server gets its port back at once (TIME_WAIT) */
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 16) == 0)
            break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "cannot listen on %s: %s%s", spec, strerror(saved),
                 saved == EADDRINUSE ? " (another program has that port; pick another with "
                                       "--listen HOST:PORT)"
                                     : "");
    return fd;
}

int gw_http_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The value of header NAME in the header block (NUL-terminated), copied into out. */
static void header_value(const char *headers, const char *name, char *out, size_t size)
{
    size_t nlen = strlen(name);
    out[0] = 0;
    for (const char *line = headers; line && *line;) {
        const char *eol = strstr(line, "\r\n");
        if (!eol || eol == line)
            return;
        if ((size_t)(eol - line) > nlen && !strncasecmp(line, name, nlen) && line[nlen] == ':') {
            const char *v = line + nlen + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            size_t n = (size_t)(eol - v);
            if (n >= size)
                n = size - 1;
            memcpy(out, v, n);
            out[n] = 0;
            return;
        }
        line = eol + 2;
    }
}

int gw_http_read_request(int fd, struct gw_http_request *req, int timeout_ms)
{
    char buf[8192];
    size_t len = 0;
    long deadline = now_ms() + timeout_ms;
    memset(req, 0, sizeof *req);
    while (len < sizeof buf - 1) {
        buf[len] = 0;
        if (strstr(buf, "\r\n\r\n"))
            break;
        long left = deadline - now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return -1;
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
    }
    buf[len] = 0;
    char *eol = strstr(buf, "\r\n");
    if (!eol)
        return -1;
    *eol = 0;
    char target[sizeof req->path], version[16];
    if (sscanf(buf, "%15s %255s %15s", req->method, target, version) != 3 ||
        strncmp(version, "HTTP/1.", 7) != 0)
        return -1;
    target[strcspn(target, "?#")] = 0;
    snprintf(req->path, sizeof req->path, "%s", target);
    header_value(eol + 2, "Accept", req->accept, sizeof req->accept);
    return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 503: return "Service Unavailable";
    default: return "Internal Server Error";
    }
}

int gw_http_respond(int fd, int status, const char *content_type, const char *body,
                    size_t len)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "%sConnection: close\r\n\r\n",
                     status, reason(status), content_type, len,
                     status == 405 ? "Allow: GET, HEAD\r\n" : "");
    if (write_all(fd, head, (size_t)n) != 0)
        return -1;
    return write_all(fd, body, len);
}

/* The q-value of one media range ("type/sub;version=1.0.0;q=0.5"): 1 when not given. */
static double q_value(const char *range, size_t n)
{
    for (const char *p = range; p < range + n; p++)
        if (*p == ';') {
            const char *q = p + 1;
            while (q < range + n && *q == ' ')
                q++;
            if (q + 2 <= range + n && (q[0] == 'q' || q[0] == 'Q') && q[1] == '=')
                return strtod(q + 2, NULL);
        }
    return 1;
}

int gw_http_wants_openmetrics(const char *accept)
{
    double om = -1, text = -1;
    for (const char *p = accept; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        if (!n)
            break;
        double q = q_value(p, n);
        if (!strncasecmp(p, "application/openmetrics-text", 28)) {
            if (q > om)
                om = q;
        } else if (!strncasecmp(p, "text/plain", 10) || !strncmp(p, "*/*", 3)) {
            if (q > text)
                text = q;
        }
        p += n;
    }
    return om > 0 && om >= text;
}
