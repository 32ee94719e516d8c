/* py_source.c: the loop header above a line, read from a Python file written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "py_source.h"

static const char source[] =
    "import torch\n"                                   /* 1 */
    "\n"                                               /* 2 */
    "def train(loader, model):\n"                      /* 3 */
    "    for epoch in range(3):\n"                     /* 4 */
    "        for step, (x, y) in enumerate(loader):\n" /* 5 */
    "            # the batch goes to the GPU\n"        /* 6 */
    "\n"                                               /* 7 */
    "            x = x.cuda()\n"                       /* 8 */
    "            if step % 10 == 0:\n"                 /* 9 */
    "                print(step)\n"                    /* 10 */
    "        model.eval()\n"                           /* 11 */
    "\n"                                               /* 12 */
    "def helper():\n"                                  /* 13 */
    "    return torch.zeros(1).cuda()\n"               /* 14 */
    "\ttotal = 0\n";                                   /* 15: a tab, 8 columns */

static void loop_headers(void **state)
{
    (void)state;
    char path[] = "/tmp/test_py_source_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, source, sizeof source - 1), (ssize_t)(sizeof source - 1));
    close(fd);
    uint64_t at = 0;
    char text[64];
    /* the call under comments and blank lines: the inner loop */
    assert_int_equal(an_py_loop_header(path, 8, &at, text, sizeof text), 1);
    assert_int_equal(at, 5);
    assert_string_equal(text, "for step, (x, y) in enumerate(loader):");
    /* inside an if inside the loop: still the inner loop */
    assert_int_equal(an_py_loop_header(path, 10, &at, text, sizeof text), 1);
    assert_int_equal(at, 5);
    /* after the inner loop: the outer one */
    assert_int_equal(an_py_loop_header(path, 11, &at, text, sizeof text), 1);
    assert_int_equal(at, 4);
    assert_string_equal(text, "for epoch in range(3):");
    /* no loop in the function (the loops of the one above do not count) */
    assert_int_equal(an_py_loop_header(path, 14, &at, text, sizeof text), 0);
    assert_int_equal(an_py_loop_header(path, 15, &at, text, sizeof text), 0);
    /* a line past the end, line 0, a blank line, a missing file */
    assert_int_equal(an_py_loop_header(path, 99, &at, text, sizeof text), 0);
    assert_int_equal(an_py_loop_header(path, 0, &at, text, sizeof text), 0);
    assert_int_equal(an_py_loop_header(path, 7, &at, text, sizeof text), 0);
    assert_int_equal(an_py_loop_header("/nonexistent/train.py", 8, &at, text, sizeof text), 0);
    assert_int_equal(an_py_loop_header("<stdin>", 8, &at, text, sizeof text), 0);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loop_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
