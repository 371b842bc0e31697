/*
 * oneccl_glue.h — the C interface of bench/oneccl_glue.cpp, through which
 * bench/mpi_coll_bench.c (built with -DCOLLIE_BENCH_ONECCL) times oneCCL's allreduce,
 * reduce, broadcast, allgather, reduce_scatter and alltoall with its own MPI timing
 * harness: MPI starts the ranks, times, and carries the barriers; oneCCL (ATL transport
 * mpi, over the same MPI) makes the calls.
 */
#ifndef COLLIE_ONECCL_GLUE_H
#define COLLIE_ONECCL_GLUE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The same order as mpi_coll_bench.c's collectives. */
enum { GLUE_ALLREDUCE, GLUE_REDUCE, GLUE_BCAST, GLUE_ALLGATHER, GLUE_REDUCE_SCATTER, GLUE_ALLTOALL };

/* After MPI_Init_thread(MPI_THREAD_MULTIPLE): oneCCL's communicator over MPI_COMM_WORLD.
 * 0, or -1 with a message in err. */
int ccl_glue_init(char *err, size_t n);

/* One blocking call on float64 data (sum, root 0); in is the bcast buffer; count is per
 * block (allgather: sent by each rank; reduce_scatter: kept by each rank; alltoall: sent
 * to each rank).  0 or -1. */
int ccl_glue_call(int coll, double *in, double *out, size_t count, char *err, size_t n);

/* "oneCCL <version>" into text. */
void ccl_glue_version(char *text, size_t n);

void ccl_glue_finalize(void);

#ifdef __cplusplus
}
#endif
#endif
