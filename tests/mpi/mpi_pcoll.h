/*
 * mpi_pcoll.h — the MPI-4 persistent collectives under one name for the tests:
 * PINIT(Allreduce_init)(...) is MPI_Allreduce_init, or Open MPI 4.1's MPIX_Allreduce_init
 * (its pcollreq extension); HAVE_PCOLL is 0 where the MPI has neither.
 */
#ifndef COLLIE_TESTS_MPI_PCOLL_H
#define COLLIE_TESTS_MPI_PCOLL_H

#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>   /* MPIX_*_init: Open MPI's persistent collectives (pcollreq) */
#endif

#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define HAVE_PCOLL 1
#define PINIT(name) MPIX_##name
#elif MPI_VERSION >= 4
#define HAVE_PCOLL 1
#define PINIT(name) MPI_##name
#else
#define HAVE_PCOLL 0
#endif

#endif
