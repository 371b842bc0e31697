/*
 * env.c — the COLLIE_* environment, checked once at collie_init: every numeric variable is
 * parsed strictly (a whole number in its range, sizes with an optional K/M/G suffix; the
 * error shows the text the user set),
 * COLLIE_LOG must name a level, and a COLLIE_* name that collie does not know is warned
 * about with the nearest known name (a typo would otherwise be ignored silently).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "base/size_suffix.h"

extern char **environ;

typedef struct env_var {
    const char *name;
    int numeric;                /* 1: a whole number in [min, max] */
    long long min, max;
} env_var;

#define NUM(n, lo, hi) { n, 1, lo, hi }
#define STR(n) { n, 0, 0, 0 }
#define BIG (1LL << 62)

/* Every variable collie, its tools, its MPI layer and its tests read. */
static const env_var known[] = {
    NUM("COLLIE_TIMEOUT_MS", 0, BIG / 1000000), NUM("COLLIE_SPIN_NS", 0, BIG),
    NUM("COLLIE_YIELDS", 0, 1 << 30), NUM("COLLIE_SHM_SLOTS", 2, 1024),
    NUM("COLLIE_SHM_SLOT_BYTES", 64, 64LL << 20), NUM("COLLIE_SHM_DIRECT", 0, 1),
    NUM("COLLIE_SHM_DIRECT_MIN", 0, BIG), NUM("COLLIE_SHM_DIRECT_MID_MIN", 0, BIG),
    NUM("COLLIE_SHM_DIRECT_MID_MAX", 0, BIG), NUM("COLLIE_SHM_BY_REFERENCE_MIN", 0, BIG),
    NUM("COLLIE_SHM_BY_REFERENCE_MAX", 0, BIG), NUM("COLLIE_SHM_CELL_BYTES", 4096, 64LL << 20),
    NUM("COLLIE_SHM_CELLS", 2, 64), NUM("COLLIE_SHM_CELLS_WINDOW", 2, 64),
    NUM("COLLIE_SHM_CELLS_PER_STEP", 1, 64), NUM("COLLIE_SHM_SLOTS_MAX", 0, BIG), NUM("COLLIE_SHM_CELLS_MAX_BYTES", 0, BIG),
    NUM("COLLIE_SHM_KERNEL_MIN", 0, BIG), NUM("COLLIE_SHM_STREAM", 0, 1),
    NUM("COLLIE_SHM_STREAM_OUT_MIN", 0, BIG), NUM("COLLIE_SHM_DEMOTE_MAX", 0, BIG), NUM("COLLIE_SHM_CELLS_LEND_MIN", 0, BIG),
    NUM("COLLIE_SHM_MAP_PEERS", 0, 1), NUM("COLLIE_SHM_CELLS_ROTATE", 0, 1), NUM("COLLIE_PEER_COPY", 0, 1),
    NUM("COLLIE_MCAST_DROP_SEED", -BIG, BIG),
    NUM("COLLIE_MCAST_RCVBUF", 0, 1LL << 31), NUM("COLLIE_MCAST_TTL", 0, 255),
    NUM("COLLIE_MCAST_PROBE_MS", 0, BIG / 1000000), NUM("COLLIE_MCAST_ROOT_DELAY_US", 0, BIG / 1000),
    NUM("COLLIE_MCAST_FRAG", 0, 1 << 30), NUM("COLLIE_MPI", 0, 1), STR("COLLIE_MPI_LOG"),
    NUM("COLLIE_MPI_NODE_SPLIT", 0, 1 << 30), NUM("COLLIE_CHECK", 0, 1),
    NUM("COLLIE_SHARED_HEAP", 0, 1), NUM("COLLIE_HEAP_MIN", 0, BIG), NUM("COLLIE_HEAP_BYTES", 0, BIG),
    STR("COLLIE_LOG"), STR("COLLIE_REDUCE_ISA"), STR("COLLIE_TUNING_FILE"),
    STR("COLLIE_ALLREDUCE_ALGO"), STR("COLLIE_REDUCE_ALGO"), STR("COLLIE_BCAST_ALGO"),
    STR("COLLIE_BARRIER_ALGO"), STR("COLLIE_ALLGATHER_ALGO"), STR("COLLIE_REDUCE_SCATTER_ALGO"),
    STR("COLLIE_ALLTOALL_ALGO"), STR("COLLIE_GATHER_ALGO"), STR("COLLIE_SCATTER_ALGO"),
    STR("COLLIE_SCAN_ALGO"), STR("COLLIE_EXSCAN_ALGO"), STR("COLLIE_MCAST"), STR("COLLIE_MCAST_SYNC"),
    STR("COLLIE_MCAST_IF"), STR("COLLIE_MCAST_DROP"), STR("COLLIE_MPI_TRANSPORT"),
    STR("COLLIE_RANK"), STR("COLLIE_SIZE"), STR("COLLIE_JOB"), STR("COLLIE_LOCAL_RANK"),
    STR("COLLIE_LOCAL_SIZE"), STR("COLLIE_LAUNCHER"), STR("COLLIE_PY_LIBRARY"),
    NUM("COLLIE_JOB_CPUS", 1, 1 << 20), STR("COLLIE_BIND_TO"),
    /* build, test and benchmark scripts */
    STR("COLLIE_LONG_TESTS"), STR("COLLIE_TEST_DUMP"), STR("COLLIE_SANITIZE"),
    STR("COLLIE_TORCH_TESTS"), STR("COLLIE_WERROR"), STR("COLLIE_NETNS_BENCH"), STR("COLLIE_MPI_TEST"),
    STR("COLLIE_BENCH_CACHE"), STR("COLLIE_BENCH_START_ORDER"), STR("COLLIE_MPI_ABI_ROOT"),
};
#define NKNOWN (sizeof known / sizeof known[0])

static const env_var *find_known(const char *name, size_t len) {
    for (size_t i = 0; i < NKNOWN; i++)
        if (strlen(known[i].name) == len && strncmp(known[i].name, name, len) == 0)
            return &known[i];
    return NULL;
}

int collie_env_parse(const char *name, const char *text, long long min, long long max,
                     long long *out) {
    long long x = 0;
    int parsed = collie_parse_size(text, &x);
    if (parsed == COLLIE_SIZE_NOT_A_NUMBER)
        return collie_fail(COLLIE_ERR_ARG, "%s=\"%.64s\" is not a whole number (sizes may end "
                           "in K, M or G)", name, text);
    if (parsed == COLLIE_SIZE_TOO_LARGE || x < min || x > max)
        return collie_fail(COLLIE_ERR_ARG, "%s=%.64s is out of range (%lld .. %lld)", name,
                           text, min, max);
    *out = x;
    return COLLIE_OK;
}

/* Levenshtein distance of two short strings (names are under 64 characters). */
static size_t edit_distance(const char *a, size_t la, const char *b) {
    size_t lb = strlen(b), row[65];
    if (la > 64 || lb > 64)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static const char *nearest(const char *name, size_t len) {
    const char *best = NULL;
    size_t dist = SIZE_MAX;
    for (size_t i = 0; i < NKNOWN; i++) {
        size_t d = edit_distance(name, len, known[i].name);
        if (d < dist) {
            dist = d;
            best = known[i].name;
        }
    }
    return best;
}

static void warn_unknown(const char *name, size_t len) {
    const char *near = nearest(name, len);
    fprintf(stderr, "collie warning: unknown environment variable %.*s is ignored%s%s%s\n",
            (int)(len > 80 ? 80 : len), name, near ? " (did you mean " : "", near ? near : "",
            near ? "?)" : "");
}

/* A variable that takes one of a few words (NULL-terminated list). */
static int check_word(const char *name, const char *v, const char *const *words, const char *valid) {
    for (int i = 0; words[i]; i++)
        if (strcasecmp(v, words[i]) == 0)
            return COLLIE_OK;
    return collie_fail(COLLIE_ERR_ARG, "%s=\"%.64s\" is not valid (valid: %s)", name, v, valid);
}

static int check_string(const env_var *v, const char *text) {
    static const char *const levels[] = { "error", "warn", "info", "debug", NULL };
    static const char *const isas[] = { "scalar", "avx2", "avx512", NULL };
    if (strcmp(v->name, "COLLIE_LOG") == 0)
        return check_word(v->name, text, levels, "error, warn, info, debug");
    if (strcmp(v->name, "COLLIE_REDUCE_ISA") == 0)
        return check_word(v->name, text, isas, "scalar, avx2, avx512");
    return COLLIE_OK;
}

int collie_env_check(void) {
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "COLLIE_", 7) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        const env_var *v = find_known(*e, len);
        if (!v) {
            warn_unknown(*e, len);
            continue;
        }
        const char *text = eq ? eq + 1 : "";
        long long x;
        int st = COLLIE_OK;
        if (v->numeric && *text)
            st = collie_env_parse(v->name, text, v->min, v->max, &x);
        else if (*text)
            st = check_string(v, text);
        if (st)
            return st;
    }
    return COLLIE_OK;
}
