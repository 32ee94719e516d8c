/* tools/live/ alone: content negotiation on Accept headers as Prometheus and curl send
 * them, the counters that never go down, listening (a port in use says so), and reading a
 * request (path without its query, the Accept header whatever its case). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "counter_floor.h"
#include "http_server.h"

static void negotiation(void **state)
{
    (void)state;
    /* Prometheus 2.42's scrape */
    assert_int_equal(gw_http_wants_openmetrics(
                         "application/openmetrics-text;version=1.0.0,application/"
                         "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
                         "q=0.5,*/*;q=0.1"),
                     1);
    assert_int_equal(gw_http_wants_openmetrics("application/openmetrics-text; version=1.0.0"), 1);
    assert_int_equal(gw_http_wants_openmetrics("text/plain;version=0.0.4"), 0);
    assert_int_equal(gw_http_wants_openmetrics(""), 0);
    assert_int_equal(gw_http_wants_openmetrics("*/*"), 0);
    assert_int_equal(gw_http_wants_openmetrics("application/openmetrics-text;q=0,text/plain"), 0);
    assert_int_equal(gw_http_wants_openmetrics(
                         "text/plain;q=0.9, application/openmetrics-text;q=0.5"),
                     0);
    assert_int_equal(gw_http_wants_openmetrics(
                         "text/plain;q=0.3, application/openmetrics-text;q=0.5"),
                     1);
}

static void floor_never_down(void **state)
{
    (void)state;
    struct gw_counter_floor f = {0};
    assert_float_equal(gw_counter_floor(&f, "a{x=\"1\"}", 5), 5, 0);
    assert_float_equal(gw_counter_floor(&f, "a{x=\"1\"}", 3), 5, 0);
    assert_float_equal(gw_counter_floor(&f, "a{x=\"2\"}", 3), 3, 0);
    assert_float_equal(gw_counter_floor(&f, "a{x=\"1\"}", 7), 7, 0);
    char key[64];
    for (int i = 0; i < 2000; i++) {  /* grows past its first size, keeps every key */
        snprintf(key, sizeof key, "k%d", i);
        gw_counter_floor(&f, key, i);
    }
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_float_equal(gw_counter_floor(&f, key, 0), i, 0);
    }
    assert_int_equal(f.count, 2002);
    gw_counter_floor_free(&f);
}

static void listening(void **state)
{
    (void)state;
    char err[256];
    int fd = gw_http_listen("127.0.0.1:0", err, sizeof err);
    assert_true(fd >= 0);
    int port = gw_http_port(fd);
    assert_true(port > 0);
    char spec[64];
    snprintf(spec, sizeof spec, "127.0.0.1:%d", port);
    assert_int_equal(gw_http_listen(spec, err, sizeof err), -1);
    assert_non_null(strstr(err, "Address already in use"));
    assert_int_equal(gw_http_listen("nonsense", err, sizeof err), -1);
    assert_string_equal(err, "--listen expects HOST:PORT, got 'nonsense'");
    assert_int_equal(gw_http_listen("127.0.0.1:70000", err, sizeof err), -1);
    close(fd);
}

static void requests(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const char req[] = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\naccept: text/plain;q=1\r\n\r\n";
    assert_int_equal(write(sv[1], req, sizeof req - 1), (ssize_t)(sizeof req - 1));
    struct gw_http_request r;
    assert_int_equal(gw_http_read_request(sv[0], &r, 1000), 0);
    assert_string_equal(r.method, "GET");
    assert_string_equal(r.path, "/metrics");
    assert_string_equal(r.accept, "text/plain;q=1");
    const char bad[] = "HELLO\r\n\r\n";
    assert_int_equal(write(sv[1], bad, sizeof bad - 1), (ssize_t)(sizeof bad - 1));
    assert_int_equal(gw_http_read_request(sv[0], &r, 1000), -1);
    close(sv[1]);  /* the peer gone before a whole request */
    assert_int_equal(gw_http_read_request(sv[0], &r, 1000), -1);
    close(sv[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(negotiation),
        cmocka_unit_test(floor_never_down),
        cmocka_unit_test(listening),
        cmocka_unit_test(requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
