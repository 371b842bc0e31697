/*
 * bench_osu.h — collie-bench for people used to the OSU micro-benchmarks:
 *   - OSU's flags, rewritten into collie-bench's own before parsing: -m [MIN:]MAX
 *     (--message-size), -i N (--iterations), -x N (--warmup), -c (--validation: --check),
 *     -f (--full: min, max and iterations columns), -T mpi_char|mpi_int|mpi_float (--type);
 *   - `--format osu`: OSU's column layout ("# Size  Avg Latency(us)", and with -f
 *     "Min Latency(us)  Max Latency(us)  Iterations");
 *   - a warning on stderr when the ranks outnumber the cores this process may run on
 *     (times then include being descheduled and are often bimodal);
 *   - a progress line on stderr every 10 s of a long run.
 */
#ifndef COLLIE_BENCH_OSU_H
#define COLLIE_BENCH_OSU_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "transport/shm_segment.h"

typedef struct osu_args {
    int argc;
    char **argv;                  /* rewritten arguments (collie-bench's own names) */
    char *own[64];                /* strings made here, freed by osu_args_free */
    int nown;
    bool osu_format, full;
} osu_args;

static inline char *osu_keep(osu_args *o, char *s) {
    if (s && o->nown < 64)
        o->own[o->nown++] = s;
    return s;
}

static inline void osu_push(osu_args *o, const char *s) { o->argv[o->argc++] = (char *)s; }

/* -m [MIN:]MAX → --min-bytes MIN --max-bytes MAX. */
static inline bool osu_sizes(osu_args *o, const char *v, char *err, size_t n) {
    const char *colon = strchr(v, ':');
    if (colon == v || (colon && !colon[1]))
        return snprintf(err, n, "-m %s: expected MAX or MIN:MAX", v), false;
    osu_push(o, "--max-bytes");
    osu_push(o, colon ? colon + 1 : v);
    if (colon) {
        osu_push(o, "--min-bytes");
        osu_push(o, osu_keep(o, strndup(v, (size_t)(colon - v))));
    }
    return true;
}

static inline const char *osu_type(const char *v) {
    return !strcmp(v, "mpi_char") ? "int8" : !strcmp(v, "mpi_int") ? "int32"
         : !strcmp(v, "mpi_float") ? "float32" : NULL;
}

/* The long option an OSU flag with a value stands for ("" for -m: special). */
static inline const char *osu_value_flag(const char *a) {
    static const char *const map[][2] = {
        { "-m", "" }, { "--message-size", "" }, { "-i", "--iters" }, { "--iterations", "--iters" },
        { "-x", "--warmup" }, { "-T", "--dtype" }, { "--type", "--dtype" },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(a, map[i][0]))
            return map[i][1];
    return NULL;
}

/* Rewrites argv; false with a message for a bad OSU argument. */
static inline bool osu_translate(int argc, char **argv, osu_args *o, char *err, size_t n) {
    memset(o, 0, sizeof *o);
    o->argv = calloc((size_t)argc * 2 + 1, sizeof *o->argv);
    if (!o->argv)
        return snprintf(err, n, "out of memory"), false;
    osu_push(o, argv[0]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *flag = osu_value_flag(a);
        if (!strcmp(a, "-c") || !strcmp(a, "--validation")) {
            osu_push(o, "--check");
        } else if (!strcmp(a, "-f") || !strcmp(a, "--full")) {
            o->full = true;
        } else if (!strcmp(a, "--format") || !strncmp(a, "--format=", 9)) {
            const char *v = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : "";
            if (strcmp(v, "osu") && strcmp(v, "collie"))
                return snprintf(err, n, "--format %s: expected osu or collie", v), false;
            o->osu_format = !strcmp(v, "osu");
        } else if (flag) {
            if (i + 1 >= argc)
                return snprintf(err, n, "option %s needs a value", a), false;
            const char *v = argv[++i];
            if (!*flag && !osu_sizes(o, v, err, n))
                return false;
            if (!strcmp(flag, "--dtype") && !(v = osu_type(v)))
                return snprintf(err, n, "%s %s: expected mpi_char, mpi_int or mpi_float (or use "
                                "--dtype)", a, argv[i]), false;
            if (*flag) {
                osu_push(o, flag);
                osu_push(o, v);
            }
        } else {
            osu_push(o, a);
        }
    }
    return true;
}

static inline void osu_args_free(osu_args *o) {
    for (int i = 0; i < o->nown; i++)
        free(o->own[i]);
    free(o->argv);
}

static inline void osu_header(const char *coll, bool full) {
    char name[32];
    snprintf(name, sizeof name, "%s", coll);
    name[0] = (char)(name[0] >= 'a' && name[0] <= 'z' ? name[0] - 32 : name[0]);
    printf("# OSU-style %s Latency Test (collie-bench %s)\n", name, collie_version());
    printf("%-10s%18s", "# Size", "Avg Latency(us)");
    if (full)
        printf("%18s%18s%12s", "Min Latency(us)", "Max Latency(us)", "Iterations");
    printf("\n");
}

static inline void osu_row(unsigned long long bytes, double avg, double mn, double mx, long iters,
                           bool full) {
    printf("%-10llu%18.2f", bytes, avg);
    if (full)
        printf("%18.2f%18.2f%12ld", mn, mx, iters);
    printf("\n");
}

/* CPUs the job may run on, as the library counts them (COLLIE_JOB_CPUS under collie-run,
 * whose ranks are bound to one core each, else this process's mask); at least 1. */
static inline int osu_cores(void) {
    int n = collie_shm_count_cpus();
    return n > 0 ? n : 1;
}

static inline void osu_warn_oversubscribed(int ranks) {
    int cores = osu_cores();
    if (ranks > cores)
        fprintf(stderr, "collie-bench: warning: %d ranks on %d cores: ranks share cores, so times "
                "include waiting to be scheduled and are often bimodal; latencies are best "
                "measured with at most %d ranks\n", ranks, cores, cores);
}

/* Every 10 s of a run, one line on stderr: rows done of rows planned. */
typedef struct osu_progress {
    uint64_t start_ns, last_ns;
    int done, total;
} osu_progress;

static inline void osu_progress_row(osu_progress *p) {
    uint64_t now = collie_now_ns();
    p->done++;
    if (now - p->last_ns < 10000000000ull)
        return;
    p->last_ns = now;
    fprintf(stderr, "collie-bench: %d of %d rows done, %.0f s\n", p->done, p->total,
            (double)(now - p->start_ns) / 1e9);
}

#endif
