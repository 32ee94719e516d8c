/* gw_demangle: __cxa_demangle from the C++ runtime, found at run time so that the tools
 * stay C programs without a C++ dependency (and without a demangler of our own). */
#include "demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

static void find_demangler(void)
{
    void *found = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!found) {
        void *runtime = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        found = runtime ? dlsym(runtime, "__cxa_demangle") : NULL;
    }
    *(void **)&demangler = found;
}

const char *gw_demangle(const char *name, char *out, size_t size)
{
    if (!size)
        return out;
    out[0] = 0;
    if (!name)
        return out;
    char *readable = NULL;
    if (name[0] == '_' && name[1] == 'Z') {
        pthread_once(&demangler_once, find_demangler);
        int status = -1;
        readable = demangler ? demangler(name, NULL, NULL, &status) : NULL;
        if (status != 0) {
            free(readable);
            readable = NULL;
        }
    }
    const char *text = readable ? readable : name;
    size_t len = strlen(text);
    if (len >= size)
        len = size - 1;
    memcpy(out, text, len);
    out[len] = 0;
    free(readable);
    return out;
}
