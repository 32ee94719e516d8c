/*
 * A tiny HTTP/1.1 server for `gpuwatch serve`: one listening socket, one request per
 * connection (answered, then closed), GET only. Enough for Prometheus and curl; no TLS,
 * no keep-alive, no chunked bodies.
 */
#ifndef GPUWATCH_LIVE_HTTP_SERVER_H
#define GPUWATCH_LIVE_HTTP_SERVER_H

#include <stddef.h>

/* Listens on HOST:PORT ("127.0.0.1:9464", "[::1]:9464", ":9464" = every address).
 * Returns the socket, or -1 with a message in err (an address in use says so). */
int gw_http_listen(const char *spec, char *err, size_t errlen);

/* The port a listening socket is bound to (after HOST:0). */
int gw_http_port(int fd);

struct gw_http_request {
    char method[16];
    char path[256];        /* without the query string */
    char accept[512];      /* the Accept header, "" when absent */
};

/* Reads one request from a connected socket, waiting at most timeout_ms in all.
 * 0, or -1 when it was not an HTTP request (or timed out). */
int gw_http_read_request(int fd, struct gw_http_request *req, int timeout_ms);

/* Writes a whole response (status line, Content-Type, Content-Length, Connection: close). */
int gw_http_respond(int fd, int status, const char *content_type, const char *body,
                    size_t len);

/* Content negotiation between the two exposition formats, as Prometheus does it: the
 * Accept header's media types by their q-value. 1: OpenMetrics 1.0.0 text; 0: the
 * Prometheus text format 0.0.4 (also when the header is absent or names neither). */
int gw_http_wants_openmetrics(const char *accept);

#endif
