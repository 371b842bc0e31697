/*
 * mpi_rma_progress.c — a collective served over the RMA transport between nodes while
 * ranks wait in a collective on another communicator that lies within one node (shm).
 *
 * Run with 4 ranks, COLLIE_MPI_NODE_SPLIT=2 and COLLIE_MPI_TRANSPORT=rma: MPI_COMM_WORLD
 * is two "nodes" {0,1} {2,3} joined by MPI windows; the pair communicators {0,2} {1,3}
 * and {0,3} {1,2} are two ranks each, so one "node" each, served by shm alone.  Each
 * round rank 0 arrives late (20 ms) at an MPI_Gather to rank 0 on MPI_COMM_WORLD; the
 * other ranks send their part, leave, and wait in an MPI_Bcast from world rank 0 or 1 on
 * a pair communicator.  Rank 0's gather then writes into the windows of ranks 2 and 3
 * (credits: MPI_Accumulate + MPI_Win_flush), which under MPICH completes only while the
 * target runs MPI's progress — the ranks waiting for rank 0 on shm must run it, or rank 0
 * blocks in MPI_Win_flush and nobody moves (the hang of mpi.mpich.hierarchical_rma_np4).
 * Every result is checked against values computed here; the same with MPI_Allgather and
 * MPI_Alltoall to a late rank 0 (data, not only credits, written to a waiting rank).
 *
 * biggather: the gather with 16 KiB, 54 KiB and 1 MiB per rank (round by round), over
 * the default p2p transport too (COLLIE_MPI_TRANSPORT unset): a sender leaves the gather
 * with its last chunk's MPI_Isend still in flight, and under MPICH 4.0.2 (ch4:ucx) a
 * message of about 12 to 100 KB moves only while its sender is inside MPI — the ranks
 * waiting for rank 0 on shm must run MPI's progress while they have sends in flight, or
 * rank 0 never gets their data (found by mpi_soak under COLLIE_MPI_NODE_SPLIT=2).
 * Prints "passed: 0 failures".
 *
 * Usage: mpi_rma_progress PATTERN[,PATTERN...] [ROUNDS]  (patterns: gather, allgather,
 * alltoall, biggather; ROUNDS default 5)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size, failures;

static void late(void) {
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    if (rank == 0)
        nanosleep(&ts, NULL);
}

static int value(int r, int round, int k) { return 1000 * round + 10 * r + k; }

static void check(int got, int want, const char *what, int round) {
    if (got == want)
        return;
    if (failures++ < 10)
        fprintf(stderr, "rank %d round %d: %s gave %d, want %d\n", rank, round, what, got, want);
}

/* The pair communicator's broadcast from its lower rank (pair rank 0: world rank 0 or 1). */
static void pair_bcast(MPI_Comm pair, int world_root, int round, const char *what) {
    int b = rank == world_root ? value(world_root, round, 7) : -1;
    MPI_Bcast(&b, 1, MPI_INT, 0, pair);
    check(b, value(world_root, round, 7), what, round);
}

static void gather_round(MPI_Comm a, MPI_Comm b, int round) {
    int mine = value(rank, round, 0), all[4] = { -1, -1, -1, -1 };
    late();
    MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size; r++)
        check(all[r], value(r, round, 0), "MPI_Gather", round);
    pair_bcast(a, rank % 2, round, "MPI_Bcast on {0,2} {1,3}");
    pair_bcast(b, rank == 0 || rank == 3 ? 0 : 1, round, "MPI_Bcast on {0,3} {1,2}");
}

static void biggather_round(MPI_Comm a, MPI_Comm b, int round) {
    static const int ints[3] = { 4096, 13812, 1 << 18 };   /* per rank: 16 KiB, 54 KiB, 1 MiB */
    const int BIG = ints[round % 3];
    int *mine = malloc((size_t)BIG * sizeof *mine);
    int *all = rank == 0 ? malloc((size_t)size * (size_t)BIG * sizeof *all) : NULL;
    for (int k = 0; k < BIG; k++)
        mine[k] = value(rank, round, k);
    late();
    MPI_Gather(mine, BIG, MPI_INT, all, BIG, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size; r++)
        for (int k = 0; k < BIG; k++)
            if (all[(size_t)r * BIG + (size_t)k] != value(r, round, k)) {
                check(all[(size_t)r * BIG + (size_t)k], value(r, round, k), "MPI_Gather (large)", round);
                break;
            }
    pair_bcast(a, rank % 2, round, "MPI_Bcast on {0,2} {1,3}");
    pair_bcast(b, rank == 0 || rank == 3 ? 0 : 1, round, "MPI_Bcast on {0,3} {1,2}");
    free(mine);
    free(all);
}

static void allgather_round(MPI_Comm a, MPI_Comm b, int round) {
    int mine = value(rank, round, 1), all[4] = { -1, -1, -1, -1 };
    late();
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        check(all[r], value(r, round, 1), "MPI_Allgather", round);
    pair_bcast(b, rank == 0 || rank == 3 ? 0 : 1, round, "MPI_Bcast on {0,3} {1,2}");
    pair_bcast(a, rank % 2, round, "MPI_Bcast on {0,2} {1,3}");
}

static void alltoall_round(MPI_Comm a, MPI_Comm b, int round) {
    int send[4], recv[4] = { -1, -1, -1, -1 };
    for (int r = 0; r < size; r++)
        send[r] = value(rank, round, 2 + r);
    late();
    MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        check(recv[r], value(r, round, 2 + rank), "MPI_Alltoall", round);
    pair_bcast(a, rank % 2, round, "MPI_Bcast on {0,2} {1,3}");
    pair_bcast(b, rank == 0 || rank == 3 ? 0 : 1, round, "MPI_Bcast on {0,3} {1,2}");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *patterns = argc > 1 ? argv[1] : "gather,allgather,alltoall";
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (size != 4 || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_rma_progress: run with 4 ranks (got %d) and ROUNDS >= 1\n", size);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm a, b;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &a);                  /* {0,2} {1,3} */
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || rank == 3, rank, &b);    /* {0,3} {1,2} */
    for (int round = 0; round < rounds; round++) {
        if (strstr(patterns, "gather") == patterns || strstr(patterns, ",gather"))
            gather_round(a, b, round);
        if (strstr(patterns, "allgather"))
            allgather_round(a, b, round);
        if (strstr(patterns, "alltoall"))
            alltoall_round(a, b, round);
        if (strstr(patterns, "biggather"))
            biggather_round(a, b, round);
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failures\n", total ? "FAILED" : "passed", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
