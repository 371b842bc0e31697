/*
 * mpi_comm_setup_bench.c — what a new communicator costs: a loop of MPI_Comm_dup +
 * MPI_Comm_free, and of MPI_Comm_dup + MPI_Barrier + MPI_Comm_free, timed per iteration
 * on rank 0 (a plain MPI program: run it plain and with LD_PRELOAD=libcollie_mpi.so,
 * which sets up a collie team in every constructor).
 *
 *   mpirun -n P mpi_comm_setup_bench_<flavour> [ITERATIONS]   (default 200)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 1)
        n = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_free(&c);
    }
    double t1 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Barrier(c);
        MPI_Comm_free(&c);
    }
    double t2 = MPI_Wtime();
    if (rank == 0)
        printf("P=%d: MPI_Comm_dup + free %.1f us, dup + MPI_Barrier + free %.1f us "
               "(%d iterations)\n", size, (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6, n);
    MPI_Finalize();
    return 0;
}
