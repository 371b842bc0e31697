/*
 * mpi_team_api.c — collie's own API inside an MPI program linked with libcollie_mpi:
 * collie_team_from_mpi on MPI_COMM_WORLD and on a split communicator, errors for bad
 * arguments, and collie_init()/collie_world() under mpirun.  With --collie-init-first
 * the program never calls MPI_Init: collie_init initialises MPI and collie_finalize
 * finalizes it.  Results are checked against values computed here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie_mpi.h"

static int failures;

static void expect(int cond, const char *what) {
    if (cond)
        return;
    failures++;
    fprintf(stderr, "FAIL: %s (%s)\n", what, collie_last_error());
}

/* Sum over the team of (rank + 1) * (i + 1), checked element by element. */
static void check_allreduce(collie_team_t *team, const char *name) {
    int r = collie_rank(team), p = collie_size(team);
    enum { N = 5000 };
    static long v[N];
    for (int i = 0; i < N; i++)
        v[i] = (long)(r + 1) * (i + 1);
    int st = collie_allreduce(team, COLLIE_IN_PLACE, v, N, COLLIE_INT64, COLLIE_SUM);
    expect(st == COLLIE_OK, name);
    long ranks = (long)p * (p + 1) / 2;
    for (int i = 0; i < N; i++)
        if (v[i] != ranks * (i + 1)) {
            failures++;
            fprintf(stderr, "FAIL: %s: element %d is %ld, not %ld\n", name, i, v[i], ranks * (i + 1));
            return;
        }
}

static void teams_from_mpi(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    collie_team_t *world = NULL, *again = NULL, *half = NULL;
    expect(collie_team_from_mpi(MPI_COMM_WORLD, &world) == COLLIE_OK, "team of MPI_COMM_WORLD");
    expect(world && collie_rank(world) == rank && collie_size(world) == size, "world rank and size");
    expect(collie_team_from_mpi(MPI_COMM_WORLD, &again) == COLLIE_OK && again == world,
           "the same team again");
    check_allreduce(world, "allreduce on the team of MPI_COMM_WORLD");
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &sub);   /* reversed order */
    int sub_rank;
    MPI_Comm_rank(sub, &sub_rank);
    expect(collie_team_from_mpi(sub, &half) == COLLIE_OK, "team of a split communicator");
    expect(half && collie_rank(half) == sub_rank, "split team rank = MPI rank");
    int b = sub_rank == 0 ? 4242 + rank % 2 : -1;
    expect(collie_bcast(half, &b, 1, COLLIE_INT32, 0) == COLLIE_OK && b == 4242 + rank % 2,
           "bcast on the split team");
    check_allreduce(half, "allreduce on the split team");
    MPI_Comm_free(&sub);   /* frees its team */
    expect(collie_team_from_mpi(MPI_COMM_WORLD, NULL) == COLLIE_ERR_ARG, "NULL output is an error");
    collie_team_t *none = world;
    int st = collie_team_from_mpi(MPI_COMM_NULL, &none);
    expect(st == COLLIE_ERR_UNSUPPORTED && none == NULL, "MPI_COMM_NULL is refused");
    expect(strstr(collie_last_error(), "MPI_COMM_NULL") != NULL, "the message names MPI_COMM_NULL");
}

static void world_from_collie_init(void) {
    int size;
    expect(collie_init() == COLLIE_OK, "collie_init under mpirun");
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    expect(collie_size(collie_world()) == size, "collie_world() has the MPI world's size");
    check_allreduce(collie_world(), "allreduce on collie_world()");
    expect(collie_barrier(collie_world()) == COLLIE_OK, "barrier on collie_world()");
}

int main(int argc, char **argv) {
    int init_first = argc > 1 && strcmp(argv[1], "--collie-init-first") == 0;
    if (init_first) {
        world_from_collie_init();
        int up = 0;
        MPI_Initialized(&up);
        expect(up, "collie_init initialised MPI");
        teams_from_mpi();
    } else {
        MPI_Init(&argc, &argv);
        teams_from_mpi();
        world_from_collie_init();
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("%s: %d failures\n", total ? "FAILED" : "passed", total);
    expect(collie_finalize() == COLLIE_OK, "collie_finalize");
    if (!init_first)
        MPI_Finalize();
    int down = 0;
    MPI_Finalized(&down);
    if (!down) {
        fprintf(stderr, "FAIL: MPI is not finalized at the end\n");
        return 1;
    }
    return total || failures ? 1 : 0;
}
