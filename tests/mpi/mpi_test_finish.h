/*
 * mpi_test_finish.h — the end of the drop-in's test programs: every rank's failures
 * summed, "passed: N failures" printed by rank 0 (what their ctest entries match), MPI
 * finalised; the program's exit status.
 */
#ifndef COLLIE_TESTS_MPI_TEST_FINISH_H
#define COLLIE_TESTS_MPI_TEST_FINISH_H

#include <mpi.h>
#include <stdio.h>

static inline int mpi_test_finish(int my_failures) {
    int me = 0, total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Allreduce(&my_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("passed: %d failures\n", total);
    MPI_Finalize();
    return total != 0;
}

#endif
