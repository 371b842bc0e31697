/*
 * mpi_persistent_order_bench.c — a persistent MPI_Allreduce_init with and without MPI-4's
 * info key mpi_assert_strict_persistent_collective_ordering, and the blocking
 * MPI_Allreduce, interleaved in blocks; run through libcollie_mpi to see what start-order
 * matching (src/mpi/mpi_ordered.c) gains (docs/performance.md).
 *
 *   mpirun -np P [LD_PRELOAD=libcollie_mpi.so] mpi_persistent_order_bench [BYTES [BLOCKS [PER]]]
 *
 * Defaults: 2 MiB, 21 blocks of 10 calls each.  Prints the median over blocks of the
 * slowest rank's time per call, and the ratios.  Checks the result.
 */
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#define ALLREDUCE_INIT MPIX_Allreduce_init
#else
#define ALLREDUCE_INIT MPI_Allreduce_init
#endif
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 2u << 20;
    int blocks = argc > 2 ? atoi(argv[2]) : 21, per = argc > 3 ? atoi(argv[3]) : 10;
    int n = (int)(bytes / sizeof(double));
    if (n < 1 || blocks < 1 || per < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_persistent_order_bench [BYTES [BLOCKS [PER]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *in = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < n; i++)
        in[i] = rank + i % 7;
    MPI_Request p[2];
    MPI_Info info = MPI_INFO_NULL;
    static const char key[] = "mpi_assert_strict_persistent_collective_ordering";
    if (sizeof key <= MPI_MAX_INFO_KEY) {   /* Open MPI 4.1: 36, too short for the key */
        MPI_Info_create(&info);
        MPI_Info_set(info, key, "true");
    }
    ALLREDUCE_INIT(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &p[0]);
    ALLREDUCE_INIT(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, info, &p[1]);
    double *t[3];
    for (int k = 0; k < 3; k++)
        t[k] = malloc(sizeof(double) * (size_t)blocks);
    for (int b = -1; b < blocks; b++)   /* block -1: warm-up */
        for (int k = 0; k < 3; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < per; i++) {
                if (k == 0)
                    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else {
                    MPI_Start(&p[k - 1]);
                    MPI_Wait(&p[k - 1], MPI_STATUS_IGNORE);
                }
            }
            double dt = (MPI_Wtime() - t0) / per, slowest;
            MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (b >= 0)
                t[k][b] = slowest;
        }
    int bad = 0;
    for (int i = 0; i < n && !bad; i++)
        bad = out[i] != (double)size * (i % 7) + (double)size * (size - 1) / 2;
    if (bad)
        fprintf(stderr, "rank %d: wrong result\n", rank);
    if (rank == 0) {
        static const char *const names[3] = { "blocking", "persistent", "persistent + key" };
        double med[3];
        for (int k = 0; k < 3; k++) {
            qsort(t[k], (size_t)blocks, sizeof(double), cmp);
            med[k] = t[k][blocks / 2];
            printf("%zu B, P = %d, %-16s median %9.1f us per call (fastest block %9.1f)\n", bytes,
                   size, names[k], med[k] * 1e6, t[k][0] * 1e6);
        }
        printf("ratio persistent / persistent + key: %.2f; persistent / blocking: %.2f%s\n",
               med[1] / med[2], med[1] / med[0],
               info == MPI_INFO_NULL ? " (this MPI cannot carry the key)" : "");
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    free(in), free(out);
    for (int k = 0; k < 3; k++)
        free(t[k]);
    MPI_Finalize();
    return bad;
}
