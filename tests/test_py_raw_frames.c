/*
 * libintercept/py_raw_frames.c on an interpreter's memory built here by CPython 3.12's
 * layout (a thread state, its _PyCFrame, _PyInterpreterFrames, code objects, compact ASCII
 * strings): the stack it reads, innermost first with each frame's line, a C stack's entry
 * frame skipped; and, before any walk has found a frame, a frame pointing at unmapped
 * memory read without a fault, and a reader that gives up after 64 such walks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "py_raw_frames.h"

/* What the reader takes from the shim and the interpreter, here. */
static char code_type[64], str_type[64];
static int addr2line(void *code, int offset) { (void)code; return 100 + offset / 2; }

void *gw_global_symbol(const char *name)
{
    if (!strcmp(name, "PyCode_Type"))
        return code_type;
    if (!strcmp(name, "PyUnicode_Type"))
        return str_type;
    if (!strcmp(name, "PyCode_Addr2Line"))
        return (void *)(uintptr_t)addr2line;
    return NULL;
}

static const char *strings[16];
static unsigned nstrings;
uint64_t gw_rec_string(const char *text)
{
    for (unsigned i = 0; i < nstrings; i++)
        if (!strcmp(strings[i], text))
            return i + 1;
    strings[nstrings] = strdup(text);
    return ++nstrings;
}

/* 3.12: PyASCIIObject is 40 bytes, its text after it; state bits 5 and 6: compact, ascii */
struct str {
    int64_t refcnt;
    void *type;
    int64_t length, hash;
    uint32_t state, pad;
    char text[48];
};
static void make_str(struct str *s, const char *text)
{
    memset(s, 0, sizeof *s);
    s->type = str_type;
    s->length = (int64_t)strlen(text);
    s->state = 1u << 5 | 1u << 6;
    strcpy(s->text, text);
}

/* a code object: co_filename at 112, co_qualname at 128, its code units from 192 */
static void make_code(unsigned char *code, struct str *file, struct str *name)
{
    memset(code, 0, 256);
    void *type = code_type;
    memcpy(code + 8, &type, sizeof type);
    memcpy(code + 112, &file, sizeof file);
    memcpy(code + 128, &name, sizeof name);
}

/* a frame: f_code at 0, previous at 8, prev_instr at 56, owner at 70 */
static void make_frame(unsigned char *frame, const void *code, const void *previous,
                       size_t unit, unsigned char owner)
{
    memset(frame, 0, 80);
    memcpy(frame, &code, sizeof code);
    memcpy(frame + 8, &previous, sizeof previous);
    const unsigned char *instr = (const unsigned char *)code + 192 + 2 * unit;
    memcpy(frame + 56, &instr, sizeof instr);
    frame[70] = owner;
}

static struct str file, inner_name, outer_name;
#define ALIGNED __attribute__((aligned(16)))
static ALIGNED unsigned char code_inner[256], code_outer[256], code_lost[256];
static ALIGNED unsigned char f_inner[80], f_entry[80], f_outer[80], f_lost[80];
static ALIGNED unsigned char cframe[16], tstate[128];

/* tstate -> cframe -> inner (line 103) -> an entry frame -> outer (line 110) */
static void build(void)
{
    make_str(&file, "/job/train.py");
    make_str(&inner_name, "read_loss");
    make_str(&outer_name, "train");
    make_code(code_inner, &file, &inner_name);
    make_code(code_outer, &file, &outer_name);
    make_frame(f_outer, code_outer, NULL, 10, 0);
    make_frame(f_entry, code_outer, f_outer, 0, 3);
    make_frame(f_inner, code_inner, f_entry, 3, 0);
    void *p = f_inner;
    memcpy(cframe, &p, sizeof p);
    p = cframe;
    memcpy(tstate + 56, &p, sizeof p);
}

/* A frame whose code object lies in memory no longer mapped. */
static const void *lost_thread(void)
{
    static ALIGNED unsigned char lost_cframe[16], lost_tstate[128];
    long page = sysconf(_SC_PAGESIZE);
    void *gone = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    assert_true(gone != MAP_FAILED);
    munmap(gone, (size_t)page);
    make_frame(f_lost, gone, NULL, 0, 0);
    void *p = f_lost;
    memcpy(lost_cframe, &p, sizeof p);
    p = lost_cframe;
    memcpy(lost_tstate + 56, &p, sizeof p);
    (void)code_lost;
    return lost_tstate;
}

static void reads_the_stack(void **state)
{
    (void)state;
    build();
    assert_int_equal(gw_py_raw_init(12, "3.12.1 (main, Nov 27 2026)"), 0);
    /* unproven: the walk into unmapped memory ends without a fault, and finds nothing */
    uint64_t keys[16];
    assert_int_equal(gw_py_raw_stack(lost_thread(), keys, 8), 0);
    assert_int_equal(gw_py_raw_stack(tstate, keys, 8), 2);
    uint64_t words[3];
    gw_py_raw_describe(&keys[0], words);
    assert_string_equal(strings[words[0] - 1], "/job/train.py");
    assert_int_equal(words[1], 103);
    assert_string_equal(strings[words[2] - 1], "read_loss");
    gw_py_raw_describe(&keys[2], words);
    assert_int_equal(words[1], 110);
    assert_string_equal(strings[words[2] - 1], "train");
    assert_true(keys[0] >> 63);  /* (never a code object's address) */
    /* at most max frames */
    assert_int_equal(gw_py_raw_stack(tstate, keys, 1), 1);
    /* no thread state, no stack */
    assert_int_equal(gw_py_raw_stack(NULL, keys, 8), 0);
}

/* 64 walks that meet memory not of the layout, before any found a frame: no more walks. */
static void gives_up(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        build();
        if (gw_py_raw_init(12, "3.12.1") != 0)
            _exit(10);
        uint64_t keys[16];
        const void *lost = lost_thread();
        for (int i = 0; i < 64; i++)
            if (gw_py_raw_stack(lost, keys, 8) != 0)
                _exit(11);
        _exit(gw_py_raw_stack(tstate, keys, 8) == 0 ? 0 : 12);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Unknown versions and free-threaded builds: no layout. */
static void unknown_builds(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(gw_py_raw_init(14, "3.14.0") == -1 &&
                      gw_py_raw_init(13, "3.13.0 experimental free-threading build") == -1
                  ? 0
                  : 1);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gives_up),
        cmocka_unit_test(unknown_builds),
        cmocka_unit_test(reads_the_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
