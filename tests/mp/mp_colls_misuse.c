/*
 * mp_colls_misuse.c — bad arguments to the collectives of issue 16, each passed by every
 * rank at once (so no rank waits for one that refused): bad roots, NULL buffers where
 * bytes move, COLLIE_IN_PLACE where MPI does not allow it, NULL or inconsistent v arrays,
 * counts that overflow.  Each must return COLLIE_ERR_ARG at once with a message naming
 * the function and the argument, and leave the team usable (a checked allgather after
 * every case).  Counts that differ between ranks: mp_mismatch (run_mismatch.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_colls.h"

static int fails;

static void expect_arg(int rank, int st, const char *what, const char *phrase) {
    const char *msg = collie_last_error();
    if (st == COLLIE_ERR_ARG && strstr(msg, phrase))
        return;
    fails++;
    fprintf(stderr, "FAIL: rank %d: misuse '%s' returned %s (%s); want COLLIE_ERR_ARG naming "
            "'%s'\n", rank, what, collie_strerror(st), st ? msg : "no error", phrase);
}

/* The team still works: an allgather of one int32 per rank. */
static void still_usable(collie_team_t *team, int rank, int P, const char *after) {
    int32_t mine = rank * 3 + 1, all[64];
    int st = collie_allgather(team, &mine, all, 1, COLLIE_INT32);
    for (int j = 0; st == COLLIE_OK && j < P; j++)
        if (all[j] != j * 3 + 1)
            st = COLLIE_ERR_INTERNAL;
    if (st == COLLIE_OK)
        return;
    fails++;
    fprintf(stderr, "FAIL: rank %d: allgather after misuse '%s': %s\n", rank, after,
            collie_last_error());
}

typedef struct mctx {
    collie_team_t *team;
    int rank, P;
} mctx;

/* One misuse: st is what the call returned. */
static void one(const mctx *m, int st, const char *what, const char *phrase) {
    expect_arg(m->rank, st, what, phrase);
    still_usable(m->team, m->rank, m->P, what);
}

static void roots_and_buffers(const mctx *m, int32_t *a, int32_t *b) {
    collie_team_t *team = m->team;
    int P = m->P;
    one(m, collie_gather(team, a, b, 1, COLLIE_INT32, P), "gather root P", "root");
    one(m, collie_scatter(team, a, b, 1, COLLIE_INT32, -1), "scatter root -1", "root");
    one(m, collie_gatherv(team, a, 1, b, NULL, NULL, COLLIE_INT32, P + 3), "gatherv root",
         "root");
    one(m, collie_allgather(team, NULL, b, 2, COLLIE_INT32), "allgather NULL sendbuf",
         "sendbuf is NULL");
    one(m, collie_alltoall(team, a, NULL, 1, COLLIE_INT32), "alltoall NULL recvbuf",
         "recvbuf is NULL");
    one(m, collie_reduce_scatter_block(team, NULL, b, 1, COLLIE_INT32, COLLIE_SUM),
         "reduce_scatter_block NULL sendbuf", "sendbuf is NULL");
    one(m, collie_scan(team, a, b, 1, COLLIE_INT32, NULL), "scan NULL op", "op");
    one(m, collie_exscan(team, a, b, 1, COLLIE_DTYPE_INVALID, COLLIE_SUM), "exscan bad dtype",
         "datatype");
    one(m, collie_allgather(team, a, b, SIZE_MAX / 2, COLLIE_INT32), "allgather count overflow",
         "overflows");
}

static void in_place(const mctx *m, int32_t *a, int32_t *b) {
    collie_team_t *team = m->team;
    int rank = m->rank, P = m->P;
    one(m, collie_allgather(team, a, COLLIE_IN_PLACE, 1, COLLIE_INT32), "allgather recvbuf "
         "IN_PLACE", "recvbuf cannot be COLLIE_IN_PLACE");
    one(m, collie_scan(team, a, COLLIE_IN_PLACE, 1, COLLIE_INT32, COLLIE_SUM), "scan recvbuf "
         "IN_PLACE", "recvbuf cannot be COLLIE_IN_PLACE");
    /* Roots pass another invalid in place, so that every rank refuses. */
    int root = P - 1;
    if (rank == root)
        one(m, collie_gather(team, a, COLLIE_IN_PLACE, 1, COLLIE_INT32, root), "gather IN_PLACE",
             "recvbuf cannot be COLLIE_IN_PLACE");
    else
        one(m, collie_gather(team, COLLIE_IN_PLACE, b, 1, COLLIE_INT32, root), "gather IN_PLACE",
             "only valid at the root");
    if (rank == root)
        one(m, collie_scatter(team, COLLIE_IN_PLACE, b, 1, COLLIE_INT32, root), "scatter IN_PLACE",
             "sendbuf cannot be COLLIE_IN_PLACE");
    else
        one(m, collie_scatter(team, a, COLLIE_IN_PLACE, 1, COLLIE_INT32, root), "scatter IN_PLACE",
             "only valid at the root");
}

static void v_arrays(const mctx *m, int32_t *a, int32_t *b) {
    collie_team_t *team = m->team;
    int rank = m->rank, P = m->P;
    size_t counts[64], displs[64], big[64];
    for (int j = 0; j < P; j++) {
        counts[j] = 1;
        displs[j] = (size_t)j;
        big[j] = SIZE_MAX / 4;
    }
    one(m, collie_allgatherv(team, a, 1, b, NULL, displs, COLLIE_INT32), "allgatherv NULL "
         "recvcounts", "recvcounts is NULL");
    one(m, collie_allgatherv(team, a, 1, b, counts, NULL, COLLIE_INT32), "allgatherv NULL "
         "displs", "displs is NULL");
    one(m, collie_allgatherv(team, a, 2, b, counts, displs, COLLIE_INT32), "allgatherv "
         "sendcount", "sendcount 2 differs from recvcounts");
    one(m, collie_alltoallv(team, a, counts, displs, b, counts, NULL, COLLIE_INT32),
         "alltoallv NULL rdispls", "rdispls is NULL");
    size_t same[64] = { 0 };                   /* every block at displacement 0 */
    if (P > 1) {
        one(m, collie_allgatherv(team, a, 1, b, counts, same, COLLIE_INT32), "allgatherv "
            "overlapping blocks", "overlap");
        one(m, collie_alltoallv(team, a, counts, displs, b, counts, same, COLLIE_INT32),
            "alltoallv overlapping blocks", "overlap");
    }
    one(m, collie_reduce_scatter(team, a, b, big, COLLIE_INT32, COLLIE_SUM), "reduce_scatter "
         "counts overflow", "overflows");
    if (rank == 0)
        one(m, collie_scatterv(team, a, NULL, displs, b, 1, COLLIE_INT32, 0), "scatterv NULL "
             "sendcounts", "sendcounts is NULL");
    else
        one(m, collie_scatterv(team, NULL, NULL, NULL, COLLIE_IN_PLACE, 1, COLLIE_INT32, 0),
             "scatterv NULL sendcounts", "only valid at the root");
}

int mp_colls_misuse(collie_team_t *team, int rank, int P) {
    int32_t a[64 * 4], b[64 * 4];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    fails = 0;
    mctx m = { team, rank, P };
    roots_and_buffers(&m, a, b);
    in_place(&m, a, b);
    v_arrays(&m, a, b);
    return fails;
}
