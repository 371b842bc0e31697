/*
 * mpi_histogram.c — an ordinary MPI program, with nothing of collie in it: run it under
 * mpirun as it is, and again with LD_PRELOAD=<prefix>/lib/<flavour>/libcollie_mpi.so to
 * have its MPI_Bcast, MPI_Allreduce, MPI_Reduce and MPI_Barrier served by collie:
 *
 *   mpicc.openmpi mpi_histogram.c -o mpi_histogram
 *   mpirun.openmpi -np 4 ./mpi_histogram
 *   mpirun.openmpi -np 4 -x LD_PRELOAD=$PWD/build/lib/openmpi/libcollie_mpi.so \
 *                  -x COLLIE_MPI_LOG=1 ./mpi_histogram
 *
 * Rank 0 broadcasts the parameters; every rank draws its own samples from a deterministic
 * generator; the global count, sum, minimum and maximum come from MPI_Allreduce, and a
 * 16-bin histogram from MPI_Reduce at rank 0.  The output is exact (integers), so both
 * runs must print the same lines.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#define BINS 16

static uint64_t next(uint64_t *s) {          /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long params[2] = { 0, 0 };           /* samples per rank, value range */
    if (rank == 0) {
        params[0] = 200000;
        params[1] = 1000000;
    }
    MPI_Bcast(params, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    uint64_t seed = 12345 + (uint64_t)rank;
    long long local[2] = { 0, 0 }, global[2], lo = params[1], hi = -1, glo, ghi;
    long long bins[BINS] = { 0 }, gbins[BINS];
    for (long long i = 0; i < params[0]; i++) {
        long long x = (long long)(next(&seed) % (uint64_t)params[1]);
        local[0]++;
        local[1] += x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
        bins[x * BINS / params[1]]++;
    }
    MPI_Allreduce(local, global, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&lo, &glo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&hi, &ghi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce(bins, gbins, BINS, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long total = 0;
        printf("%d ranks, %lld samples, sum %lld, min %lld, max %lld\n", size, global[0],
               global[1], glo, ghi);
        for (int b = 0; b < BINS; b++) {
            printf("bin %2d: %lld\n", b, gbins[b]);
            total += gbins[b];
        }
        printf("%s\n", total == global[0] ? "histogram complete" : "HISTOGRAM INCOMPLETE");
    }
    MPI_Finalize();
    return 0;
}
