/* The loop header above a line of the user's source (py_source.h). */
#include "py_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_SOURCE_MAX_LINES 200000  /* past this a file is not a training script */
#define PY_LINE_MAX 4096

/* Indentation of a line (tabs to the next multiple of 8, as Python's tokenizer does), or -1
 * for a blank or comment-only line, which says nothing of the block structure. */
static int indent_of(const char *s)
{
    int col = 0;
    for (; *s == ' ' || *s == '\t'; s++)
        col = *s == '\t' ? (col / 8 + 1) * 8 : col + 1;
    return *s == '\0' || *s == '\n' || *s == '\r' || *s == '#' ? -1 : col;
}

static int starts_with_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    return strncmp(s, word, n) == 0 && (s[n] == ' ' || s[n] == '\t' || s[n] == '(');
}

int an_py_loop_header(const char *path, uint64_t line, uint64_t *loop_line, char *text,
                      size_t size)
{
    if (!path || !*path || *path == '<' || !line || line > PY_SOURCE_MAX_LINES)
        return 0;
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    /* the lines before `line`, each line's indentation and its first characters kept */
    int *indent = malloc((size_t)line * sizeof *indent);
    char (*head)[160] = malloc((size_t)line * sizeof *head);
    char buf[PY_LINE_MAX];
    uint64_t n = 0;
    while (indent && head && n < line && fgets(buf, sizeof buf, f)) {
        indent[n] = indent_of(buf);
        const char *s = buf + strspn(buf, " \t");
        snprintf(head[n], sizeof head[n], "%.*s", (int)strcspn(s, "\r\n"), s);
        n++;
    }
    fclose(f);
    int found = 0;
    if (indent && head && n == line && indent[line - 1] >= 0) {
        int limit = indent[line - 1];  /* headers enclosing it sit left of every line since */
        for (uint64_t i = line - 1; i-- > 0;) {
            if (indent[i] < 0 || indent[i] >= limit)
                continue;
            limit = indent[i];
            const char *h = head[i];
            if (starts_with_word(h, "def") || starts_with_word(h, "async def") ||
                starts_with_word(h, "class"))
                break;  /* the function's own start: no loop of its encloses the line */
            if ((starts_with_word(h, "for") || starts_with_word(h, "async")) &&
                strstr(h, " in ")) {
                *loop_line = i + 1;
                snprintf(text, size, "%s", h);
                found = 1;
                break;
            }
            if (!limit)
                break;
        }
    }
    free(indent);
    free(head);
    return found;
}
