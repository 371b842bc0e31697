/*
 * mpi_team_api.c — collie's own API inside an MPI program linked with libcollie_mpi:
 * collie_team_from_mpi on MPI_COMM_WORLD and on a split communicator, errors for bad
 * arguments, collie_team_split/dup/free on the communicator's team (and the refused free
 * of the communicator's own team), and collie_init_thread()/collie_world() under mpirun.  With --collie-init-first
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

/* collie_team_split / dup on the team of a communicator: PMPI_Comm_split / dup inside. */
static void sub_teams_of(collie_team_t *world, int rank, int size) {
    collie_team_t *third = NULL, *copy = NULL;
    expect(collie_team_split(world, rank % 3, rank, &third) == COLLIE_OK && third,
           "collie_team_split of the team of MPI_COMM_WORLD");
    if (!third)
        return;
    int n = (size - rank % 3 + 2) / 3;   /* ranks r < size with r % 3 == rank % 3 */
    expect(collie_rank(third) == rank / 3 && collie_size(third) == n, "split rank and size");
    check_allreduce(third, "allreduce on a split of the communicator's team");
    expect(collie_team_dup(third, &copy) == COLLIE_OK && copy, "collie_team_dup of a sub-team");
    if (copy) {
        expect(collie_rank(copy) == rank / 3 && collie_size(copy) == n, "dup rank and size");
        check_allreduce(copy, "allreduce on the dup");
        expect(collie_team_free(&copy) == COLLIE_OK && !copy, "free the dup");
    }
    expect(collie_team_free(&third) == COLLIE_OK && !third, "free the split");
    collie_team_t *none = world;
    expect(collie_team_split(world, rank == 0 ? COLLIE_UNDEFINED : 1, 0, &none) == COLLIE_OK &&
           (rank == 0) == (none == NULL), "a negative color gives no team");
    if (none) {
        check_allreduce(none, "allreduce on the team without rank 0");
        expect(collie_team_free(&none) == COLLIE_OK, "free it");
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
    collie_team_t *h = half;
    expect(collie_team_free(&h) == COLLIE_ERR_ARG && h == half &&
           strstr(collie_last_error(), "MPI communicator") != NULL,
           "collie_team_free refuses the team of a communicator");
    sub_teams_of(world, rank, size);
    MPI_Comm_free(&sub);   /* frees its team */
    expect(collie_team_from_mpi(MPI_COMM_WORLD, NULL) == COLLIE_ERR_ARG, "NULL output is an error");
    collie_team_t *none = world;
    int st = collie_team_from_mpi(MPI_COMM_NULL, &none);
    expect(st == COLLIE_ERR_UNSUPPORTED && none == NULL, "MPI_COMM_NULL is refused");
    expect(strstr(collie_last_error(), "MPI_COMM_NULL") != NULL, "the message names MPI_COMM_NULL");
}

/* MPI's thread level as collie's (the same order). */
static int as_collie_level(int mpi_level) {
    return mpi_level >= MPI_THREAD_MULTIPLE ? COLLIE_THREAD_MULTIPLE
         : mpi_level >= MPI_THREAD_SERIALIZED ? COLLIE_THREAD_SERIALIZED
         : mpi_level >= MPI_THREAD_FUNNELED ? COLLIE_THREAD_FUNNELED : COLLIE_THREAD_SINGLE;
}

/* collie_init_thread(MULTIPLE) under mpirun: collie initialises MPI at that level, or
 * (MPI_Init first) provides no more than MPI does — its transports call MPI from whichever
 * thread is in collie. */
static void world_from_collie_init(void) {
    int size, provided = -1, queried = -1, mpi_level = -1;
    expect(collie_init_thread(COLLIE_THREAD_MULTIPLE, &provided) == COLLIE_OK,
           "collie_init_thread under mpirun");
    MPI_Query_thread(&mpi_level);
    expect(provided == as_collie_level(mpi_level), "collie provides MPI's thread level");
    expect(collie_query_thread(&queried) == COLLIE_OK && queried == provided,
           "collie_query_thread says the level provided");
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
