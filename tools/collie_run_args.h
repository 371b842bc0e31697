/* collie_run_args.h — command-line parsing for collie-run (static inline, header-only;
 * used by collie-run's files through run_job.h).  Usage errors print a message plus the
 * usage text.
 */
#ifndef COLLIE_RUN_ARGS_H
#define COLLIE_RUN_ARGS_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_MAX_RANKS 4096

enum { RUN_BIND_DEFAULT, RUN_BIND_CORE, RUN_BIND_NONE };

typedef struct {
    long nranks;      /* 0 = not given */
    double timeout;   /* seconds; 0 = none */
    int tag_output;
    int shared_heap;  /* --shared-heap (or COLLIE_SHARED_HEAP=1): preload libcollie_heap.so */
    int bind;         /* --bind-to (or COLLIE_BIND_TO): RUN_BIND_* */
    char **argv;      /* PROGRAM ARGS... (NULL-terminated, from main's argv) */
} run_opts;

static inline void usage(FILE *f) {
    fprintf(f,
            "usage: collie-run -n P [--timeout S] [--tag-output] [--shared-heap] [--bind-to core|none]\n"
            "                  [--] PROGRAM [ARGS...]\n"
            "  -n, -np P        number of ranks to start (1..%d)\n"
            "  --timeout S      kill the job after S seconds (fractional allowed), exit 124\n"
            "  --tag-output     prefix every output line with \"[rank] \"\n"
            "  --shared-heap    preload libcollie_heap.so: large malloc buffers come from\n"
            "                   shared memory peers map (also COLLIE_SHARED_HEAP=1)\n"
            "  --bind-to core   bind each rank to a core of its own (a CPU of its own when\n"
            "                   there are more ranks than cores); the default when\n"
            "                   2 <= P <= the CPUs collie-run may run on\n"
            "  --bind-to none   let ranks run on any of those CPUs (the default otherwise)\n"
            "                   (also COLLIE_BIND_TO=core|none)\n"
            "  -h, --help       show this help\n"
            "  --version        print the version and exit\n",
            RUN_MAX_RANKS);
}

static inline int usage_error(const char *what, const char *arg) {
    fprintf(stderr, "collie-run: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
    usage(stderr);
    return -1;
}

static inline int parse_nranks(const char *s, run_opts *o) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > RUN_MAX_RANKS)
        return usage_error("invalid number of ranks (must be 1..4096)", s);
    o->nranks = v;
    return 0;
}

static inline int parse_timeout(const char *s, run_opts *o) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e9)
        return usage_error("invalid timeout (must be a positive number of seconds)", s);
    o->timeout = v;
    return 0;
}

static inline int parse_bind(const char *s, run_opts *o) {
    if (!strcmp(s, "core"))
        o->bind = RUN_BIND_CORE;
    else if (!strcmp(s, "none"))
        o->bind = RUN_BIND_NONE;
    else
        return usage_error("invalid --bind-to (must be core or none)", s);
    return 0;
}

/* COLLIE_BIND_TO, unless --bind-to was given. */
static inline int bind_from_env(run_opts *o) {
    const char *env = getenv("COLLIE_BIND_TO");
    if (o->bind != RUN_BIND_DEFAULT || !env || !*env)
        return 0;
    o->bind = !strcmp(env, "core") ? RUN_BIND_CORE : !strcmp(env, "none") ? RUN_BIND_NONE : -1;
    if (o->bind >= 0)
        return 0;
    fprintf(stderr, "collie-run: COLLIE_BIND_TO=\"%.40s\" must be core or none\n", env);
    return -1;
}

/* Handles argv[*i] (an option); may consume the next argument.  0 ok, -1 error. */
static inline int parse_option(int argc, char **argv, int *i, run_opts *o) {
    const char *a = argv[*i];
    int takes_value = !strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np") ||
                      !strcmp(a, "--timeout") || !strcmp(a, "--bind-to");
    if (takes_value && *i + 1 >= argc)
        return usage_error("missing value for option", a);
    if (!strcmp(a, "--tag-output")) {
        o->tag_output = 1;
        return 0;
    }
    if (!strcmp(a, "--shared-heap")) {
        o->shared_heap = 1;
        return 0;
    }
    if (!strcmp(a, "--timeout"))
        return parse_timeout(argv[++*i], o);
    if (!strcmp(a, "--bind-to"))
        return parse_bind(argv[++*i], o);
    if (!strncmp(a, "--bind-to=", 10))
        return parse_bind(a + 10, o);
    if (!strncmp(a, "--timeout=", 10))
        return parse_timeout(a + 10, o);
    if (takes_value)
        return parse_nranks(argv[++*i], o);
    if (a[1] == 'n' && a[2] >= '0' && a[2] <= '9')
        return parse_nranks(a + 2, o);
    return usage_error("unknown option", a);
}

/* 0 = run, 1 = help printed, -1 = usage error (message printed). */
static inline int parse_args(int argc, char **argv, run_opts *o) {
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        if (parse_option(argc, argv, &i, o) != 0)
            return -1;
    }
    if (o->nranks == 0)
        return usage_error("missing -n P", NULL);
    if (i >= argc)
        return usage_error("missing PROGRAM", NULL);
    o->argv = argv + i;
    return bind_from_env(o);
}

#endif /* COLLIE_RUN_ARGS_H */
