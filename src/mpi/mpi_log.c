/*
 * mpi_log.c — COLLIE_MPI_LOG: what libcollie_mpi did with each intercepted call.
 *
 *   COLLIE_MPI_LOG=1 (or calls)  one line per call on stderr: function, count, datatype,
 *                                 ranks, and the route — collie, or PMPI with the reason
 *   COLLIE_MPI_LOG=summary        nothing per call; at MPI_Finalize rank 0 prints one table:
 *                                 calls per function and route, summed over all ranks
 *   unset or 0                    nothing
 *
 * The counts are kept in a small table per rank (function and route are the key; routes
 * are a few fixed strings and the reasons cm_prepare gives), gathered to rank 0 as text at
 * MPI_Finalize over MPI_COMM_WORLD (every rank calls MPI_Finalize, so the gather is safe).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mpi/mpi_layer.h"

typedef struct log_row {
    char fn[32];
    char route[160];
    long long calls;
} log_row;

static log_row *rows;
static int nrows, caprows;
static int mode = -1;           /* CM_LOG_OFF, CM_LOG_CALLS, CM_LOG_SUMMARY */

int cm_log_mode(void) {
    if (mode >= 0)
        return mode;
    const char *v = collie_env_str("COLLIE_MPI_LOG", NULL);
    mode = CM_LOG_OFF;
    if (!v || !strcmp(v, "0") || !*v)
        return mode;
    if (!strcmp(v, "1") || !strcmp(v, "calls"))
        mode = CM_LOG_CALLS;
    else if (!strcmp(v, "summary"))
        mode = CM_LOG_SUMMARY;
    else
        fprintf(stderr, "collie_mpi: COLLIE_MPI_LOG=%s is not one of 0, 1 (or calls), summary; "
                "logging is off\n", v);
    return mode;
}

/* Adds calls to the row (fn, route), making it when new. */
static void add_calls(const char *fn, const char *route, long long calls) {
    for (int i = 0; i < nrows; i++)
        if (!strcmp(rows[i].fn, fn) && !strcmp(rows[i].route, route)) {
            rows[i].calls += calls;
            return;
        }
    if (nrows == caprows) {
        int cap = caprows ? 2 * caprows : 32;
        log_row *r = realloc(rows, (size_t)cap * sizeof *r);
        if (!r)
            return;   /* the summary misses this row; the program goes on */
        rows = r;
        caprows = cap;
    }
    log_row *r = &rows[nrows++];
    snprintf(r->fn, sizeof r->fn, "%s", fn);
    snprintf(r->route, sizeof r->route, "%s", route);
    r->calls = calls;
}

void cm_log_count(const char *fn, const char *route) { add_calls(fn, route, 1); }

/* This rank's rows as text, "calls\tfunction\troute\n" each. */
static char *rows_text(int *len) {
    size_t cap = 1, n = 0;
    for (int i = 0; i < nrows; i++)
        cap += strlen(rows[i].fn) + strlen(rows[i].route) + 24;
    char *s = malloc(cap);
    if (!s) {
        *len = 0;
        return NULL;
    }
    s[0] = 0;
    for (int i = 0; i < nrows; i++)
        n += (size_t)snprintf(s + n, cap - n, "%lld\t%s\t%s\n", rows[i].calls, rows[i].fn,
                              rows[i].route);
    *len = (int)n;
    return s;
}

/* Adds one line of another rank's rows_text. */
static void merge_line(char *line) {
    char *fn = strchr(line, '\t'), *route = fn ? strchr(fn + 1, '\t') : NULL;
    if (!route)
        return;
    *fn++ = 0;
    *route++ = 0;
    add_calls(fn, route, atoll(line));
}

static int row_cmp(const void *x, const void *y) {
    const log_row *a = x, *b = y;
    int c = strcmp(a->fn, b->fn);
    return c ? c : strcmp(a->route, b->route);
}

static void print_table(int nranks) {
    long long total = 0, served = 0;
    qsort(rows, (size_t)nrows, sizeof *rows, row_cmp);
    fprintf(stderr, "collie_mpi: summary of %d ranks (COLLIE_MPI_LOG=summary)\n"
            "collie_mpi: %12s  %-24s %s\n", nranks, "calls", "function", "route");
    for (int i = 0; i < nrows; i++) {
        fprintf(stderr, "collie_mpi: %12lld  %-24s %s\n", rows[i].calls, rows[i].fn, rows[i].route);
        total += rows[i].calls;
        served += strncmp(rows[i].route, "collie", 6) == 0 ? rows[i].calls : 0;
    }
    fprintf(stderr, "collie_mpi: %12lld  calls, %lld served by collie, %lld passed to PMPI\n",
            total, served, total - served);
}

/* Rank 0 adds every other rank's rows (text) to its own and prints the table. */
void cm_log_summary(void) {
    static bool printed;
    if (cm_log_mode() != CM_LOG_SUMMARY || printed)
        return;
    printed = true;
    int rank = 0, size = 1, len = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    char *mine = rows_text(&len);
    int *lens = rank == 0 ? calloc((size_t)size, sizeof *lens) : NULL, *displs = NULL;
    PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    if (rank == 0) {
        displs = calloc((size_t)size, sizeof *displs);
        long long sum = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = (int)sum;
            sum += lens[r];
        }
        all = malloc((size_t)sum + 1);
        if (all)
            all[sum] = 0;
    }
    PMPI_Gatherv(mine, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0 && all) {
        for (char *line = all + lens[0], *nl; (nl = strchr(line, '\n')); line = nl + 1) {
            *nl = 0;
            merge_line(line);
        }
        print_table(size);
    }
    free(all);
    free(lens);
    free(displs);
    free(mine);
}
