/*
 * The trace reader: file header validation, open/close/rewind and accessors. The event
 * loop (gw_reader_next) is in trace_decode.c with the record decoding it inlines, chunk
 * framing in trace_chunks.c, definition tables in trace_tables.c and trace_stacks.c.
 */
#include "trace_reader.h"
#include "trace_reader_internal.h"
#include "kineto/kineto.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- open, close, rewind ---- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void printable(char *out, size_t outlen, const uint8_t *in, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < outlen; i++) {
        if (in[i] >= 0x20 && in[i] < 0x7F && in[i] != '"' && in[i] != '\\')
            out[o++] = (char)in[i];
        else
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02X", in[i]);
    }
    out[o] = 0;
}

static int validate_header(struct gw_reader *r, char *err, size_t errlen)
{
    const struct gw_file_header *h = &r->hdr;
    const char *name = r->name;
    if (memcmp(h->magic, GW_FILE_MAGIC, sizeof h->magic) != 0) {
        char found[48];
        printable(found, sizeof found, (const uint8_t *)h->magic, sizeof h->magic);
        return fail(err, errlen,
                    "%s: offset 0: expected magic \"%s\", found \"%s\": not a gpuwatch trace",
                    name, GW_FILE_MAGIC, found);
    }
    if (h->endian_mark != GW_ENDIAN_MARK) {
        if (h->endian_mark == 0x04030201u)
            return fail(err, errlen,
                        "%s: offset 16: expected endian mark 0x%08X, found 0x%08X: written "
                        "on a big-endian host; this reader reads little-endian traces",
                        name, GW_ENDIAN_MARK, h->endian_mark);
        return fail(err, errlen, "%s: offset 16: expected endian mark 0x%08X, found 0x%08X",
                    name, GW_ENDIAN_MARK, h->endian_mark);
    }
    if (h->min_reader_version > GW_READER_VERSION)
        return fail(err, errlen,
                    "%s: written by format v%u, needs a reader of v%u or newer; this reader "
                    "reads v%u",
                    name, (unsigned)h->version, (unsigned)h->min_reader_version,
                    (unsigned)GW_READER_VERSION);
    if (h->version == 0)
        return fail(err, errlen, "%s: offset 8: expected a format version of 1 or more, "
                    "found 0", name);
    if (h->header_size < GW_FILE_HEADER_SIZE)
        return fail(err, errlen,
                    "%s: offset 12: expected a header_size of at least %u, found %" PRIu32,
                    name, GW_FILE_HEADER_SIZE, h->header_size);
    if (h->header_size > r->file_size)
        return fail(err, errlen,
                    "%s: offset 12: header_size %" PRIu32 " runs past the end of the file "
                    "(%" PRIu64 " bytes)",
                    name, h->header_size, r->file_size);
    return 0;
}

int gw_reader_open_fd(int fd, const char *name, struct gw_reader **out, char *err,
                      size_t errlen)
{
    *out = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(err, errlen, "%s: %s", name, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return fail(err, errlen, "%s: is a directory, expected a trace file", name);
    struct gw_reader *r = calloc(1, sizeof *r);
    if (!r)
        return fail(err, errlen, "%s: out of memory", name);
    r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    r->name = strdup(name);
    r->file_size = (uint64_t)st.st_size;
    r->buf_offset = GW_NO_OFFSET;
    r->salvage_fd = -1;
    if (r->fd < 0 || !r->name) {
        fail(err, errlen, "%s: %s", name, r->fd < 0 ? strerror(errno) : "out of memory");
        gw_reader_close(r);
        return -1;
    }
    if (gw_kineto_sniff(r->fd)) {  /* recognised by content: gzip, or JSON */
        if (gw_kineto_open(r, name, err, errlen) != 0) {
            gw_reader_close(r);
            return -1;
        }
        *out = r;
        return 0;
    }
    if (r->file_size < sizeof r->hdr) {
        fail(err, errlen, "%s: offset 0: expected a %u-byte header, file has %" PRIu64 " bytes",
             name, GW_FILE_HEADER_SIZE, r->file_size);
        gw_reader_close(r);
        return -1;
    }
    r->quiet = 1;  /* a read error here is returned, not reported */
    if (gw_reader_read_at(r, 0, &r->hdr, sizeof r->hdr) != 0) {
        fail(err, errlen, "%s: offset 0: cannot read the header: %s", name,
             errno ? strerror(errno) : "short read");
        gw_reader_close(r);
        return -1;
    }
    r->quiet = 0;
    if (validate_header(r, err, errlen) != 0) {
        gw_reader_close(r);
        return -1;
    }
    r->data_start = r->hdr.header_size;
    gw_reader_rewind(r);
    *out = r;
    return 0;
}

int gw_reader_open(const char *path, struct gw_reader **out, char *err, size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, "%s: %s", path, strerror(errno));
    int rc = gw_reader_open_fd(fd, path, out, err, errlen);
    close(fd);
    return rc;
}

void gw_reader_rewind(struct gw_reader *r)
{
    gw_kineto_rewind(r);
    r->pos = r->data_start;
    r->in_chunk = 0;
    r->has_pending = 0;  /* (a linked GPU record's event not yet handed over) */
    r->stopped = 0;
    r->ndamage = 0;
    memset(&r->stats, 0, sizeof r->stats);
    gw_map_clear(&r->seq);
    gw_map_clear(&r->calls);
    r->call_key = r->call_next = 0;
    r->call_unsure = 0;
    r->second_header = 0;
    r->salvage_pos = 0;  /* (the rings file, once open, is read again from its start) */
}

void gw_reader_load_defs(struct gw_reader *r)
{
    if (r->kineto) {
        gw_kineto_load_defs(r);
        return;
    }
    struct gw_event ev;
    r->defs_only = 1;
    r->quiet = 1;
    gw_reader_rewind(r);
    while (gw_reader_next(r, &ev) > 0)
        ;
    r->defs_only = 0;
    r->quiet = 0;
    gw_reader_rewind(r);
}

void gw_reader_close(struct gw_reader *r)
{
    if (!r)
        return;
    gw_kineto_close(r);
    if (r->fd >= 0)
        close(r->fd);
    gw_salvage_close(r);
    free(r->name);
    free(r->buf);
    gw_map_free(&r->seq);
    gw_map_free(&r->calls);
    gw_tables_free(r);  /* (the definitions; the stacks are trace_stacks.c's, freed apart) */
    gw_stacks_free(r);
    free(r);
}

void gw_reader_on_damage(struct gw_reader *r, gw_damage_fn fn, void *user)
{
    r->on_damage = fn;
    r->on_damage_user = user;
}

const struct gw_file_header *gw_reader_header(const struct gw_reader *r)
{
    return &r->hdr;
}

const char *gw_reader_name(const struct gw_reader *r)
{
    return r->name;
}

uint64_t gw_reader_file_size(const struct gw_reader *r)
{
    return r->file_size;
}

const struct gw_reader_stats *gw_reader_stats(const struct gw_reader *r)
{
    return &r->stats;
}

size_t gw_reader_damage(const struct gw_reader *r, const struct gw_damage **list)
{
    *list = r->damage;
    return r->ndamage;
}
