/*
 * mp_path_tune.c — the per-call choice of way for buffers that are not mapped
 * (core/path_tune.c): while the decider of a size class times both ways and after it
 * chose, every call must give the exact result, on every rank, whichever way it took.
 *
 *   collie-run -n P mp_path_tune [CALLS [rotate|mapped|late|revisit]]   (default 40 calls per
 *                                  collective and size; rotate: reduce and bcast with the
 *                                  root moving every call; mapped: every rank's buffers
 *                                  collie_alloc memory, 1, 2 and 4 MiB (per block for
 *                                  allgather, alltoall and reduce_scatter_block, which
 *                                  this mode adds), where the decider times the mapped
 *                                  buffers against the copy cells; late: bcast of 32 KiB
 *                                  only at P = 2, the reader sleeping LATE_US before each
 *                                  call and marking in a shared page that it entered it;
 *                                  the root prints the calls from which it returned
 *                                  before its reader entered them, "early: ...";
 *                                  revisit: allreduce and reduce of 32 KiB only, enough
 *                                  calls for the choice to be revisited (path_revisit.c:
 *                                  calls of the chosen way, then some of another, maybe
 *                                  taken for good), every call checked as ever)
 *
 * allreduce, reduce at root P - 1 and bcast at root P - 1 (a decider other than rank 0; with
 * `rotate`, root = call mod P: every rank decides some calls of a size class, each from its
 * own timings, while the others follow),
 * float64 sums of integers (exact), new input before every call (call number mixed in),
 * collie_alloc buffers on even ranks but the last, malloc buffers on the others (so the
 * roots' are not mapped: else a bcast has no choice), 32 KiB to 1 MiB.  run_path_tune.sh
 * checks the log for both ways timed and a choice made.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collie.h"

/* `late`: how long the reader sleeps before each call, and the page shared by the two
 * ranks (children of one collie-run) where it notes the last call it entered. */
#define LATE_US 2000
static volatile int *late_entered;

static int open_late_page(void) {
    char name[64];
    snprintf(name, sizeof name, "/mp_path_tune_late_%d", (int)getppid());
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0)
        return -1;
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    late_entered = p;
    return 0;
}

static void close_late_page(collie_team_t *w) {
    char name[64];
    collie_barrier(w);
    snprintf(name, sizeof name, "/mp_path_tune_late_%d", (int)getppid());
    if (collie_rank(w) == 0)
        shm_unlink(name);
}

static double input(int rank, size_t i, int call) {
    return (double)((rank + 1) * 1000 + (int)(i % 977) + call);
}

static double expected_sum(int P, size_t i, int call) {
    double s = 0;
    for (int r = 0; r < P; r++)
        s += input(r, i, call);
    return s;
}

/* 0: the output matches; else reports the first wrong element. */
static int verify(const char *what, int rank, const double *out, size_t n, int P, int call,
                  int bcast_root) {
    for (size_t i = 0; i < n; i++) {
        double want = bcast_root >= 0 ? input(bcast_root, i, call) : expected_sum(P, i, call);
        if (out[i] != want) {
            fprintf(stderr, "rank %d: %s call %d of %zu doubles: element %zu is %.17g, want "
                    "%.17g\n", rank, what, call, n, i, out[i], want);
            return 1;
        }
    }
    return 0;
}

static int one_call(collie_team_t *w, int coll, double *in, double *out, size_t n, int call,
                    bool rotate, bool late) {
    int rank = collie_rank(w), P = collie_size(w), root = rotate ? call % P : P - 1;
    for (size_t i = 0; i < n; i++) {
        in[i] = input(rank, i, call);
        out[i] = -1;
    }
    if (late && rank != root) {
        usleep(LATE_US);
        __atomic_store_n(late_entered, call + 1, __ATOMIC_SEQ_CST);
    }
    int st;
    if (coll == 0)
        st = collie_allreduce(w, in, out, n, COLLIE_FLOAT64, COLLIE_SUM);
    else if (coll == 1)
        st = collie_reduce(w, in, out, n, COLLIE_FLOAT64, COLLIE_SUM, root);
    else
        st = collie_bcast(w, rank == root ? in : out, n, COLLIE_FLOAT64, root);
    static const char *names[] = { "allreduce", "reduce", "bcast" };
    if (st != COLLIE_OK) {
        fprintf(stderr, "rank %d: %s call %d: %s\n", rank, names[coll], call, collie_last_error());
        return 1;
    }
    if (coll == 1 && rank != root)
        return 0;
    if (late && rank == root && __atomic_load_n(late_entered, __ATOMIC_SEQ_CST) < call + 1)
        printf("rank %d: early: %d\n", rank, call);
    if (coll == 2 && rank == root)
        return 0;
    return verify(names[coll], rank, out, n, P, call, coll == 2 ? root : -1);
}

/* allgather, alltoall, reduce_scatter_block (every buffer mapped: rank 0 decides), blocks
 * of n doubles; rank r's input element j is input(r, j, call) (allgather: j < n). */
static int one_block_call(collie_team_t *w, int coll, double *in, double *out, size_t n, int call) {
    int rank = collie_rank(w), P = collie_size(w);
    size_t nin = coll == 3 ? n : (size_t)P * n, nout = coll == 5 ? n : (size_t)P * n;
    for (size_t j = 0; j < nin; j++)
        in[j] = input(rank, j, call);
    for (size_t j = 0; j < nout; j++)
        out[j] = -1;
    static const char *names[] = { "allgather", "alltoall", "reduce_scatter_block" };
    int st = coll == 3 ? collie_allgather(w, in, out, n, COLLIE_FLOAT64)
           : coll == 4 ? collie_alltoall(w, in, out, n, COLLIE_FLOAT64)
                       : collie_reduce_scatter_block(w, in, out, n, COLLIE_FLOAT64, COLLIE_SUM);
    if (st != COLLIE_OK) {
        fprintf(stderr, "rank %d: %s call %d: %s\n", rank, names[coll - 3], call, collie_last_error());
        return 1;
    }
    for (size_t j = 0; j < nout; j++) {
        size_t q = j / n, i = j % n;
        double want = coll == 3 ? input((int)q, i, call)
                    : coll == 4 ? input((int)q, (size_t)rank * n + i, call)
                                : expected_sum(P, (size_t)rank * n + j, call);
        if (out[j] != want) {
            fprintf(stderr, "rank %d: %s call %d, blocks of %zu doubles: element %zu is %.17g, "
                    "want %.17g\n", rank, names[coll - 3], call, n, j, out[j], want);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    int calls = argc > 1 ? atoi(argv[1]) : 40;
    bool rotate = argc > 2 && strcmp(argv[2], "rotate") == 0;
    bool all_mapped = argc > 2 && strcmp(argv[2], "mapped") == 0;
    bool late = argc > 2 && strcmp(argv[2], "late") == 0;
    bool revisit = argc > 2 && strcmp(argv[2], "revisit") == 0;
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    collie_team_t *w = collie_world();
    int rank = collie_rank(w);
    if (late && (collie_size(w) != 2 || open_late_page() != 0)) {
        fprintf(stderr, "rank %d: `late` needs 2 ranks and a shared page\n", rank);
        return 1;
    }
    if (late)
        collie_barrier(w);   /* both mapped the page before any call */
    static const size_t mixed_sizes[] = { 32 << 10, 256 << 10, 1 << 20 };
    static const size_t mapped_sizes[] = { 1 << 20, 2 << 20, 4 << 20 };
    const size_t *sizes = all_mapped ? mapped_sizes : mixed_sizes;
    int bad = 0;
    int nsizes = late || revisit ? 1 : 3;
    for (size_t s = 0; s < (size_t)nsizes && !bad; s++) {
        size_t n = sizes[s] / sizeof(double);
        bool mapped = all_mapped || (rank % 2 == 0 && rank != collie_size(w) - 1);
        size_t bytes = all_mapped ? sizes[s] * (size_t)collie_size(w) : sizes[s];
        double *in = mapped ? collie_alloc(w, bytes) : malloc(bytes);
        double *out = mapped ? collie_alloc(w, bytes) : malloc(bytes);
        if (!in || !out) {
            fprintf(stderr, "rank %d: no memory for %zu bytes\n", rank, sizes[s]);
            return 1;
        }
        int last = all_mapped ? 6 : revisit ? 2 : 3;
        for (int coll = late ? 2 : rotate ? 1 : 0; coll < last && !bad; coll++)
            for (int call = 0; call < calls && !bad; call++)
                bad = coll < 3 ? one_call(w, coll, in, out, n, call, rotate, late)
                               : one_block_call(w, coll, in, out, n, call);
        if (mapped) {
            collie_free(w, in);
            collie_free(w, out);
        } else {
            free(in);
            free(out);
        }
    }
    if (late)
        close_late_page(w);
    collie_finalize();
    if (!bad)
        printf("rank %d: %d calls of each collective at %d sizes exact%s\n", rank, calls, nsizes,
               rotate ? " (roots rotating)" : all_mapped ? " (every buffer mapped)"
                      : late ? " (bcast 32 KiB, readers late)"
                      : revisit ? " (allreduce and reduce 32 KiB, the choice revisited)" : "");
    return bad;
}
