/* collie_run_heap.h — `collie-run --shared-heap` (header-only, used by tools/collie-run.c).
 *
 * Puts libcollie_heap.so (src/heap/) first in the ranks' LD_PRELOAD and sets
 * COLLIE_SHARED_HEAP=1 for them, by setting both in the launcher's own environment before
 * any rank starts (the launcher is already running: only the ranks' exec reads them).  The
 * library is looked for next to collie-run (build tree, Python package), then in
 * ../COLLIE_RUN_LIBDIR and ../lib (installed).  COLLIE_SHARED_HEAP=1 in the launcher's
 * environment does the same as the switch.
 */
#ifndef COLLIE_RUN_HEAP_H
#define COLLIE_RUN_HEAP_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef COLLIE_RUN_LIBDIR
#define COLLIE_RUN_LIBDIR "lib"
#endif
#define RUN_HEAP_LIB "libcollie_heap.so"

/* path = DIR/rel/libcollie_heap.so if it exists. */
static int run_heap_try(char *path, size_t size, const char *dir, const char *rel) {
    int n = snprintf(path, size, "%s/%s%s" RUN_HEAP_LIB, dir, rel, *rel ? "/" : "");
    return n > 0 && (size_t)n < size && access(path, R_OK) == 0;
}

static int run_heap_find(char *path, size_t size) {
    char dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0)
        return 0;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return run_heap_try(path, size, dir, "") || run_heap_try(path, size, dir, "../" COLLIE_RUN_LIBDIR) ||
           run_heap_try(path, size, dir, "../lib");
}

/* 0 ok (nothing to do, or the ranks' environment is set), -1 error (message printed). */
static int run_heap_setup(run_opts *o) {
    const char *env = getenv("COLLIE_SHARED_HEAP");
    if (env && *env && strcmp(env, "0") != 0 && strcmp(env, "1") != 0) {
        fprintf(stderr, "collie-run: COLLIE_SHARED_HEAP=\"%.40s\" must be 0 or 1\n", env);
        return -1;
    }
    if (!o->shared_heap && !(env && strcmp(env, "1") == 0))
        return 0;
    char path[PATH_MAX];
    if (!run_heap_find(path, sizeof path)) {
        fprintf(stderr, "collie-run: --shared-heap: " RUN_HEAP_LIB " is not next to collie-run "
                "nor in ../" COLLIE_RUN_LIBDIR " (was it built and installed?)\n");
        return -1;
    }
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(path) + (old ? strlen(old) + 1 : 0) + 1;
    char *preload = malloc(len);
    if (!preload) {
        fprintf(stderr, "collie-run: out of memory\n");
        return -1;
    }
    snprintf(preload, len, "%s%s%s", path, old && *old ? ":" : "", old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    setenv("COLLIE_SHARED_HEAP", "1", 1);
    free(preload);
    return 0;
}

#endif /* COLLIE_RUN_HEAP_H */
