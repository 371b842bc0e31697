/*
 * mpi_interlock.h — what mpi_interlock.c shares with its pattern files
 * (mpi_interlock_ctor.c): the rank, the failure count, the allreduce input and its check.
 */
#ifndef MPI_INTERLOCK_H
#define MPI_INTERLOCK_H

#include <stdbool.h>
#include <stddef.h>

extern int rank, size, failures;

void fail(const char *what, size_t bytes, long i, double got, double want);
/* allreduce input: (rank + 1) * (i % 1000 + 1); check_sum: its sum over the ranks */
void fill(double *v, size_t n);
void check_sum(const double *v, size_t n, size_t bytes, const char *what);

/* mpi_interlock_ctor.c: a few constructors and window calls, or all of them */
void pattern_ctor(size_t bytes, bool all);

#endif
