/*
 * mp_mismatch.c — ranks that disagree about a call must never all return COLLIE_OK with
 * different results, nor hang; the message names both calls and what differs.
 *
 *   collie-run -n P -- mp_mismatch MODE COUNT DIR      (every rank writes DIR/rank<r>)
 *   mp_mismatch verify MODE P DIR [all]                 (checks the files; "all": every rank
 *                                                        must report, as COLLIE_CHECK=1 promises)
 * MODE: op (rank 0 SUM, the others MAX, int32 allreduce), op_prod (float32, SUM against
 * PROD), dtype (rank 0 int32, the others
 * float32, same size), bcast_root (rank 0 root 0, the others root 1), reduce_root (the
 * same for reduce), bcast_root_next and reduce_root_next (every rank names the next rank
 * as the root: no rank believes it is the root); issue 16's collectives: allgather_count and scan_count (rank 0 count
 * + 1), gather_root, reduce_scatter_counts (rank 0's recvcounts[1] differs),
 * gatherv_count (the root expects another count from rank 1), alltoallv_counts (rank 0
 * sends rank 1 another count than it expects).  After the call every rank runs one more
 * allreduce (a mismatch left in the channels shows there at the latest).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"

typedef struct outcome {
    int call, next;       /* status of the mismatched call and of the allreduce after it */
    uint64_t hash;        /* of the call's result (recv buffer / bcast buffer) */
    char msg[400];
} outcome;

static uint64_t fnv(const void *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

/* The collectives of issue 16 (buffers of P·count + P int32): rank 0 passes other counts
 * or another root than the others. */
static int run_colls(const char *mode, int rank, size_t count, void *send, void *recv) {
    collie_team_t *w = collie_world();
    int P = collie_size(w);
    size_t c = count + (rank == 0), counts[64], displs[64];
    for (int j = 0; j < P && j < 64; j++) {
        counts[j] = count + (rank == 0 && j == 1);   /* rank 0's view of rank 1 differs */
        displs[j] = (size_t)j * (count + 1);
    }
    if (strcmp(mode, "allgather_count") == 0)
        return collie_allgather(w, send, recv, c, COLLIE_INT32);
    if (strcmp(mode, "scan_count") == 0)
        return collie_scan(w, send, recv, c, COLLIE_INT32, COLLIE_SUM);
    if (strcmp(mode, "gather_root") == 0)
        return collie_gather(w, send, recv, count, COLLIE_INT32, rank == 0 ? 0 : 1);
    if (strcmp(mode, "reduce_scatter_counts") == 0)
        return collie_reduce_scatter(w, send, recv, counts, COLLIE_INT32, COLLIE_SUM);
    if (strcmp(mode, "gatherv_count") == 0)   /* the root (0) expects count + 1 from rank 1 */
        return collie_gatherv(w, send, count, recv, counts, displs, COLLIE_INT32, 0);
    if (strcmp(mode, "alltoallv_counts") == 0)   /* rank 0 sends count + 1 to rank 1 */
        return collie_alltoallv(w, send, counts, displs, recv, counts, displs, COLLIE_INT32);
    fprintf(stderr, "unknown mode %s\n", mode);
    exit(2);
}

static int run_call(const char *mode, int rank, size_t count, void *send, void *recv) {
    collie_team_t *w = collie_world();
    if (strcmp(mode, "op") == 0)
        return collie_allreduce(w, send, recv, count, COLLIE_INT32, rank == 0 ? COLLIE_SUM : COLLIE_MAX);
    if (strcmp(mode, "op_prod") == 0)
        return collie_allreduce(w, send, recv, count, COLLIE_FLOAT32, rank == 0 ? COLLIE_SUM : COLLIE_PROD);
    if (strcmp(mode, "dtype") == 0)
        return collie_allreduce(w, send, recv, count, rank == 0 ? COLLIE_INT32 : COLLIE_FLOAT32,
                                COLLIE_SUM);
    int next = (rank + 1) % collie_size(w);
    if (strcmp(mode, "bcast_root") == 0)
        return collie_bcast(w, recv, count, COLLIE_INT32, rank == 0 ? 0 : 1);
    if (strcmp(mode, "reduce_root") == 0)
        return collie_reduce(w, send, recv, count, COLLIE_INT32, COLLIE_SUM, rank == 0 ? 0 : 1);
    if (strcmp(mode, "bcast_root_next") == 0)
        return collie_bcast(w, recv, count, COLLIE_INT32, next);
    if (strcmp(mode, "reduce_root_next") == 0)
        return collie_reduce(w, send, recv, count, COLLIE_INT32, COLLIE_SUM, next);
    return run_colls(mode, rank, count, send, recv);
}

static void release(bool mapped, int32_t *send, int32_t *recv) {
    if (mapped) {
        collie_free(collie_world(), send);
        collie_free(collie_world(), recv);
    } else {
        free(send);
        free(recv);
    }
}

static int rank_main(const char *mode, size_t count, const char *dir) {
    int st = collie_init();
    if (st) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    int rank = collie_rank(collie_world());
    size_t room = ((size_t)collie_size(collie_world()) + 1) * (count + 2);
    /* MP_MISMATCH_ALLOC=1: buffers in collie_alloc memory (the mapped paths: a bcast at
     * P = 2 splits its copy between the root and the reader). */
    bool mapped = getenv("MP_MISMATCH_ALLOC") && strcmp(getenv("MP_MISMATCH_ALLOC"), "1") == 0;
    int32_t *send = mapped ? collie_alloc(collie_world(), room * 4) : calloc(room, 4);
    int32_t *recv = mapped ? collie_alloc(collie_world(), room * 4) : calloc(room, 4);
    if (!send || !recv) {
        fprintf(stderr, "mp_mismatch: no memory for %zu bytes\n", room * 4);
        return 1;
    }
    memset(send, 0, room * 4);
    memset(recv, 0, room * 4);
    for (size_t i = 0; i < count; i++) {
        send[i] = (int32_t)(i % 1000) + rank;
        recv[i] = (int32_t)(rank * 100 + i % 7);   /* bcast: every rank's own data */
    }
    outcome o = { 0 };
    o.call = run_call(mode, rank, count, send, recv);
    if (o.call)
        snprintf(o.msg, sizeof o.msg, "%s", collie_last_error());
    o.hash = fnv(recv, count * 4);
    int64_t one = 1, sum = 0;
    o.next = collie_allreduce(collie_world(), &one, &sum, 1, COLLIE_INT64, COLLIE_SUM);
    char path[512];
    snprintf(path, sizeof path, "%s/rank%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        release(mapped, send, recv);
        return 1;
    }
    for (char *c = o.msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    fprintf(f, "%d %d %llu %s\n", o.call, o.next, (unsigned long long)o.hash, o.msg);
    fclose(f);
    release(mapped, send, recv);
    collie_finalize();
    return 0;
}

/* The phrase the message must carry for this mode. */
static const char *expected_phrase(const char *mode) {
    return strncmp(mode, "op", 2) == 0  ? "the ops differ"
           : strcmp(mode, "dtype") == 0 ? "the datatypes differ"
           : strstr(mode, "count")      ? "counts differ"
           : strcmp(mode, "gather_root") == 0 ? "differ"   /* the root may meet the next call */
                                        : "roots";
}

static int verify(const char *mode, int P, const char *dir, bool all) {
    int bad = 0, reported = 0, ok = 0, named = 0;
    uint64_t ok_hash = 0;
    for (int r = 0; r < P; r++) {
        char path[512], line[600];
        snprintf(path, sizeof path, "%s/rank%d", dir, r);
        FILE *f = fopen(path, "r");
        if (!f || !fgets(line, sizeof line, f)) {
            printf("FAIL %s: rank %d wrote no outcome (crashed or hung)\n", mode, r);
            bad++;
            if (f)
                fclose(f);
            continue;
        }
        fclose(f);
        outcome o = { 0 };
        unsigned long long h = 0;
        int off = 0;
        sscanf(line, "%d %d %llu %n", &o.call, &o.next, &h, &off);
        const char *msg = line + off;
        printf("rank %d: call %s, next %s: %s", r, collie_strerror(o.call), collie_strerror(o.next), msg);
        if (o.call == COLLIE_ERR_MISMATCH) {
            reported++;
            named += strstr(msg, "but rank") != NULL;
            if (!(strstr(msg, expected_phrase(mode)) && strstr(msg, "but rank")) &&
                !strstr(msg, "stopped after an error")) {
                printf("FAIL %s: rank %d's message does not name both calls and \"%s\"\n", mode, r,
                       expected_phrase(mode));
                bad++;
            }
        } else if (o.call == COLLIE_OK) {
            /* A reduce leaves non-roots' buffers alone.  Ranks that both believe they are
             * the root of a bcast only send: without COLLIE_CHECK the mismatch may show
             * only where their messages are read, possibly in the next call. */
            bool per_rank = strstr(mode, "count") || strcmp(mode, "gather_root") == 0;
            bool compare = strncmp(mode, "reduce_root", 11) != 0 && !per_rank &&
                           (all || strcmp(mode, "bcast_root") != 0);
            if (compare && ok++ && h != ok_hash) {
                printf("FAIL %s: rank %d returned OK with a result other OK ranks do not have\n", mode, r);
                bad++;
            }
            ok_hash = h;
            reported += o.next == COLLIE_ERR_MISMATCH;
        } else if (o.call != COLLIE_ERR_PEER) {
            printf("FAIL %s: rank %d returned %s\n", mode, r, collie_strerror(o.call));
            bad++;
        }
        if (all && o.call != COLLIE_ERR_MISMATCH) {
            printf("FAIL %s: with COLLIE_CHECK=1 rank %d did not report the mismatch\n", mode, r);
            bad++;
        }
    }
    if (!reported) {
        printf("FAIL %s: no rank reported COLLIE_ERR_MISMATCH\n", mode);
        bad++;
    } else if (!named && !((strcmp(mode, "bcast_root") == 0 || strcmp(mode, "reduce_root_next") == 0) &&
                           !all)) {
        /* (ranks that only send — two bcast roots, reduce non-roots of a reduce with no
         * root — may meet only in the next call, whose message names that call) */
        printf("FAIL %s: no rank's message names both calls\n", mode);
        bad++;
    }
    printf("%s %s: %d of %d ranks reported the mismatch\n", bad ? "FAIL" : "PASS", mode, reported, P);
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "verify") == 0)
        return verify(argv[2], atoi(argv[3]), argv[4], argc > 5 && strcmp(argv[5], "all") == 0);
    if (argc != 4) {
        fprintf(stderr, "usage: mp_mismatch MODE COUNT DIR | verify MODE P DIR [all]\n");
        return 2;
    }
    return rank_main(argv[1], (size_t)strtoull(argv[2], NULL, 10), argv[3]);
}
