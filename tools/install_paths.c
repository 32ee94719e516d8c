#include "install_paths.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuwatch/cupti_search.h"

#ifndef GPUWATCH_INSTALL_LIBDIR
#define GPUWATCH_INSTALL_LIBDIR "lib"
#endif

static int readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* The directory this program lies in; 0 where /proc/self/exe cannot be read. */
static int own_dir(char *out, size_t outlen)
{
    ssize_t n = readlink("/proc/self/exe", out, outlen - 1);
    if (n <= 0)
        return 0;
    out[n] = 0;
    char *slash = strrchr(out, '/');
    if (!slash)
        return 0;
    *slash = 0;
    return 1;
}

/* dir/rel resolved into out when it is a readable file. */
static int found(const char *dir, const char *rel, char *out, size_t outlen)
{
    char candidate[PATH_MAX + 256], resolved[PATH_MAX];
    snprintf(candidate, sizeof candidate, "%s/%s", dir, rel);
    if (!readable_file(candidate) || !realpath(candidate, resolved))
        return 0;
    snprintf(out, outlen, "%s", resolved);
    return 1;
}

const char *gw_find_shim(char *out, size_t outlen)
{
    const char *env = getenv(GW_SHIM_ENV);
    if (env && *env) {
        snprintf(out, outlen, "%s", env);
        return readable_file(env) ? GW_SHIM_ENV : GW_SHIM_ENV ", not a readable file";
    }
    static const struct { const char *rel, *why; } places[] = {
        {"../" GPUWATCH_INSTALL_LIBDIR "/" GW_SHIM_NAME, "installed beside this program"},
        /* (the Python package's layout: site-packages/gpuwatch/bin, .../lib) */
        {"../lib/" GW_SHIM_NAME, "installed beside this program"},
        {"../libintercept/" GW_SHIM_NAME, "the build tree this program was built in"},
    };
    char dir[PATH_MAX];
    for (size_t i = 0; own_dir(dir, sizeof dir) && i < sizeof places / sizeof places[0]; i++)
        if (found(dir, places[i].rel, out, outlen))
            return places[i].why;
    snprintf(out, outlen, "%s", GW_SHIM_NAME);
    return "not beside this program: by name, from the loader's path";
}

/* The first of dir + each place beside a runtime holding CUPTI, into out. */
static int beside_runtime(const char *dir, char *out, size_t outlen)
{
    for (size_t i = 0; i < GW_CUPTI_BESIDE_RUNTIME; i++) {
        char sub[PATH_MAX + 64];
        snprintf(sub, sizeof sub, "%s%s", dir, gw_cupti_beside_runtime[i]);
        if (found(sub, GW_CUPTI_SONAME, out, outlen))
            return 1;
    }
    return 0;
}

/* Which CUPTI a program would load, and why: gpuwatch/cupti_search.h's order, from outside
 * the program. Step 2, the program's own CUDA, is known only inside it; a PyTorch installed
 * in the same Python environment as this command is what it will most often be. */
static void say_cupti(FILE *out)
{
    const char *env = getenv(GW_CUPTI_ENV);
    if (env && !strcmp(env, "0")) {
        fprintf(out, "CUPTI: off (" GW_CUPTI_ENV "=0): host calls only, no GPU timeline\n");
        return;
    }
    if (env && *env) {
        fprintf(out, "CUPTI: %s (" GW_CUPTI_ENV ")%s\n", env,
                readable_file(env) ? "" : ": not a readable file, the timeline will be off");
        return;
    }
    char path[PATH_MAX], dir[PATH_MAX], torch[PATH_MAX + 32];
    const char *why = NULL;
    if (own_dir(dir, sizeof dir)) {
        snprintf(torch, sizeof torch, "%s/../../torch/lib", dir);
        if (beside_runtime(torch, path, sizeof path))
            why = "beside the CUDA of the PyTorch installed with gpuwatch";
    }
    const char *cuda_home = getenv("CUDA_HOME");
    if (!why && cuda_home && *cuda_home) {
        snprintf(dir, sizeof dir, "%s" GW_CUPTI_UNDER_TOOLKIT, cuda_home);
        if (found(dir, GW_CUPTI_SONAME, path, sizeof path))
            why = "the toolkit CUDA_HOME names";
    }
    if (!why) {
        void *handle = dlopen(GW_CUPTI_SONAME, RTLD_LAZY | RTLD_LOCAL);
        struct link_map *map = NULL;
        if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) {
            snprintf(path, sizeof path, "%s", map->l_name);
            why = "found by the loader: LD_LIBRARY_PATH, the ld.so cache";
        }
        if (handle)
            dlclose(handle);
    }
    for (size_t i = 0; !why && i < GW_CUPTI_LAST_DIRS; i++)
        if (found(gw_cupti_last_dirs[i], GW_CUPTI_SONAME, path, sizeof path))
            why = "the usual toolkit place";
    if (why)
        fprintf(out, "CUPTI: %s (%s)\n", path, why);
    else
        fprintf(out, "CUPTI: %s not found: the timeline will be off, host calls only (set "
                     GW_CUPTI_ENV "=/path/to/%s)\n", GW_CUPTI_SONAME, GW_CUPTI_SONAME);
    fprintf(out, "  unless the program's own CUDA runtime has one beside it, which comes first\n");
}

void gw_print_version(FILE *out, const char *version, unsigned format_version)
{
    char shim[PATH_MAX];
    const char *why = gw_find_shim(shim, sizeof shim);
    fprintf(out, "gpuwatch %s (trace format v%u)\n", version, format_version);
    fprintf(out, "shim: %s (%s)\n", shim, why);
    say_cupti(out);
}
