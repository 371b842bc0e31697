/*
 * mpi_threads.c — libcollie_mpi under MPI_THREAD_MULTIPLE (mpi4py's default request):
 *   - two threads per process, each with its own duplicate of MPI_COMM_WORLD, run
 *     blocking MPI_Allreduce and MPI_Bcast at once; every result exact, and collie (not
 *     PMPI) served them (the communicators' teams counted the calls);
 *   - two threads calling MPI_Allreduce on one communicator at once (erroneous in MPI):
 *     the second gets MPI_ERR_ARG from collie (MPI_ERRORS_RETURN), the first's result is
 *     exact;
 *   - the layer's shared caches from two threads on their own communicators at once:
 *     derived datatypes made, used and freed (the datatype map and its delete callback),
 *     user ops made, used and freed (the user-op lists, the memo's epoch), repeated calls
 *     (each thread's memo), communicators duplicated, used and freed (the records' map);
 *   - four threads making communicators from MPI_COMM_WORLD at once (MPI_Comm_create_group
 *     with a tag per thread, as MPICH's threads/comm/comm_create_group_threads2), each
 *     then used by an MPI_Allreduce and freed: the drop-in sets up every new
 *     communicator's team inside the constructor, and a set-up that made a communicator
 *     of its own (MPI_Comm_split_type) deadlocked Open MPI's context-id agreement
 *     (argv[1]: iterations, default 20; 100 at 4 ranks hung in 1 of 3 runs then).
 * Prints "passed: 0 failures" on rank 0 when everything held.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collie_mpi.h"
#include "core/internal.h"

#define CALLS 200

static int rank, size;
static long failures;

typedef struct worker {
    MPI_Comm comm;
    int id;
    long wrong;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    int64_t *in = malloc(10000 * 8), *out = malloc(10000 * 8);
    for (int it = 0; it < CALLS; it++) {
        int n = it % 3 == 0 ? 1 : it % 3 == 1 ? 100 : 10000;
        for (int i = 0; i < n; i++)
            in[i] = (int64_t)i + rank * 7 + it + w->id * 1000;
        if (MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_SUM, w->comm) != MPI_SUCCESS)
            w->wrong++;
        for (int i = 0; i < n; i++) {
            int64_t want = ((int64_t)i + it + w->id * 1000) * size + 7LL * size * (size - 1) / 2;
            w->wrong += out[i] != want;
        }
        int root = it % size;
        for (int i = 0; i < n; i++)
            out[i] = rank == root ? (int64_t)i * 3 + it + w->id : -1;
        if (MPI_Bcast(out, n, MPI_INT64_T, root, w->comm) != MPI_SUCCESS)
            w->wrong++;
        for (int i = 0; i < n; i++)
            w->wrong += out[i] != (int64_t)i * 3 + it + w->id;
    }
    free(in);
    free(out);
    return NULL;
}

static void check(int ok, const char *what) {
    if (!ok) {
        failures++;
        printf("FAIL rank %d: %s\n", rank, what);
    }
}

/* Runs fn in two threads, each on its own duplicate of MPI_COMM_WORLD; checks that neither
 * saw a wrong result and that collie served at least min_calls calls on each. */
static void two_threads(void *(*fn)(void *), uint32_t min_calls, const char *wrong,
                        const char *not_served) {
    worker w[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (worker){ MPI_COMM_NULL, i, 0 };
        MPI_Comm_dup(MPI_COMM_WORLD, &w[i].comm);
    }
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, fn, &w[i]);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        check(w[i].wrong == 0, wrong);
        collie_team_t *team = NULL;
        check(collie_team_from_mpi(w[i].comm, &team) == COLLIE_OK && team &&
              team->coll_seq >= min_calls, not_served);
        MPI_Comm_free(&w[i].comm);
    }
}

static void different_comms(void) {
    two_threads(work, 2 * CALLS, "wrong results with two threads on two communicators",
                "collie did not serve the threads' calls");
}

static void add_i64(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int64_t *)inout)[i] += ((const int64_t *)in)[i];
}

/* One thread's mix of new types, new ops, repeated calls and new communicators. */
static void *churn(void *arg) {
    worker *w = arg;
    int64_t in[8], out[8];
    int64_t ranks = (int64_t)size * (size - 1) / 2;
    for (int it = 0; it < 40; it++) {
        MPI_Datatype four;
        MPI_Type_contiguous(4, MPI_INT64_T, &four);
        MPI_Type_commit(&four);
        for (int i = 0; i < 8; i++)
            in[i] = rank + i + it + w->id;
        MPI_Allreduce(in, out, 2, four, MPI_SUM, w->comm);
        for (int i = 0; i < 8; i++)
            w->wrong += out[i] != ranks + (int64_t)(i + it + w->id) * size;
        MPI_Type_free(&four);
        MPI_Op op;
        MPI_Op_create(add_i64, 1, &op);
        for (int again = 0; again < 2; again++) {   /* the second call: the memo */
            MPI_Allreduce(in, out, 8, MPI_INT64_T, op, w->comm);
            for (int i = 0; i < 8; i++)
                w->wrong += out[i] != ranks + (int64_t)(i + it + w->id) * size;
        }
        MPI_Op_free(&op);
        if (it % 10 == 0) {
            MPI_Comm dup;
            MPI_Comm_dup(w->comm, &dup);
            int64_t one = 1, sum = 0;
            MPI_Allreduce(&one, &sum, 1, MPI_INT64_T, MPI_SUM, dup);
            w->wrong += sum != size;
            MPI_Comm_free(&dup);
        }
    }
    return NULL;
}

static void caches_in_threads(void) {
    two_threads(churn, 3 * 40, "wrong results with types, ops and communicators made in two threads",
                "collie did not serve the churning threads' calls");
}

typedef struct racer {
    MPI_Comm comm;
    int rc;
    int64_t in, out;
} racer;

static void *first_caller(void *arg) {
    racer *r = arg;
    r->rc = MPI_Allreduce(&r->in, &r->out, 1, MPI_INT64_T, MPI_SUM, r->comm);
    return NULL;
}

static void same_comm(void) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int64_t one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT64_T, MPI_SUM, comm);   /* the team exists */
    racer r = { comm, -1, rank + 1, 0 };
    if (rank == 0) {
        pthread_t a;
        pthread_create(&a, NULL, first_caller, &r);
        usleep(100000);   /* the other ranks join after 300 ms: A is inside */
        int64_t x = 1, y = 0;
        int rc = MPI_Allreduce(&x, &y, 1, MPI_INT64_T, MPI_SUM, comm);
        check(rc != MPI_SUCCESS, "a second thread on the same communicator was not refused");
        pthread_join(a, NULL);
    } else {
        usleep(300000);
        first_caller(&r);
    }
    check(r.rc == MPI_SUCCESS && r.out == (int64_t)size * (size + 1) / 2,
          "the first thread's allreduce on the shared communicator");
    MPI_Allreduce(&one, &sum, 1, MPI_INT64_T, MPI_SUM, comm);
    check(sum == size, "the communicator is usable after the collision");
    MPI_Comm_free(&comm);
}

#define MAKERS 4
static int made = 20;      /* iterations of threads_make_comms: argv[1] */

/* An MPI_Barrier and an MPI_Allreduce on a new communicator of n ranks: the sum must be n. */
static void use_comm(MPI_Comm c, int n, int tag) {
    long one = 1, sum = 0;
    MPI_Barrier(c);
    MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, c);
    if (sum != n) {
        fprintf(stderr, "FAIL: rank %d thread %d: sum %ld on a new communicator, expected %d\n",
                rank, tag, sum, n);
        __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    }
}

/* Each iteration: a communicator of ranks 0 … size/2 (only they call), then one of all. */
static void *make_comms(void *arg) {
    int tag = *(int *)arg;
    MPI_Group world, half;
    int range[1][3] = { { 0, size / 2, 1 } };
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_range_incl(world, 1, range, &half);
    for (int i = 0; i < made; i++) {
        MPI_Comm c;
        if (rank <= size / 2) {
            MPI_Comm_create_group(MPI_COMM_WORLD, half, tag, &c);
            use_comm(c, size / 2 + 1, tag);
            MPI_Comm_free(&c);
        }
        MPI_Comm_create_group(MPI_COMM_WORLD, world, tag, &c);
        use_comm(c, size, tag);
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&half);
    MPI_Group_free(&world);
    return NULL;
}

static void threads_make_comms(void) {
    pthread_t t[MAKERS];
    int tags[MAKERS];
    for (int i = 0; i < MAKERS; i++) {
        tags[i] = i;
        pthread_create(&t[i], NULL, make_comms, &tags[i]);
    }
    for (int i = 0; i < MAKERS; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (argc > 1 && atoi(argv[1]) > 0)
        made = atoi(argv[1]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("passed: 0 failures (skipped: the MPI provides thread level %d)\n", provided);
        MPI_Finalize();
        return 0;
    }
    different_comms();
    caches_in_threads();
    same_comm();
    threads_make_comms();
    long all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_threads passed: %ld failures\n", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
