/*
 * mpi_progress_coll.c — the blocking collectives collie never serves, MPI_Sendrecv_replace
 * and MPI_Buffer_detach, passed to the MPI underneath while collie's requests keep moving:
 * with active collie requests each runs between cm_help_begin and cm_help_end
 * (mpi_progress_help.c: a helper thread progresses collie's side while this thread blocks
 * in PMPI).  With none active: one load and a branch, then the PMPI call.
 *
 * Covered: MPI_Alltoallw, MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w),
 * MPI_Sendrecv_replace, MPI_Buffer_detach (it waits until the buffered sends are
 * received).  (MPI_Allgather(v), MPI_Alltoall(v), MPI_Gather(v), MPI_Scatter(v),
 * MPI_Reduce_scatter(_block), MPI_Scan and MPI_Exscan are mpi_xcoll_calls.c's: the calls
 * collie declines go to PMPI there the same way.)  The communicator and window
 * constructors and the window synchronisation calls: mpi_progress_ctor.c.
 */
#include "mpi/mpi_layer.h"





int MPI_Alltoallw(const void *sb, const int scs[], const int sds[], const MPI_Datatype sts[],
                  void *rb, const int rcs[], const int rds[], const MPI_Datatype rts[],
                  MPI_Comm comm) {
    bool helped = cm_help_begin();
    int rc_pmpi = PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
    return cm_help_end(helped, rc_pmpi);
}









int MPI_Neighbor_allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                           MPI_Datatype rt, MPI_Comm comm) {
    bool helped = cm_help_begin();
    int rc_pmpi = PMPI_Neighbor_allgather(sb, sc, st, rb, rc, rt, comm);
    return cm_help_end(helped, rc_pmpi);
}

int MPI_Neighbor_allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                            const int displs[], MPI_Datatype rt, MPI_Comm comm) {
    bool helped = cm_help_begin();
    int rc_pmpi = PMPI_Neighbor_allgatherv(sb, sc, st, rb, rcs, displs, rt, comm);
    return cm_help_end(helped, rc_pmpi);
}

int MPI_Neighbor_alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                          MPI_Datatype rt, MPI_Comm comm) {
    bool helped = cm_help_begin();
    int rc_pmpi = PMPI_Neighbor_alltoall(sb, sc, st, rb, rc, rt, comm);
    return cm_help_end(helped, rc_pmpi);
}

int MPI_Neighbor_alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                           void *rb, const int rcs[], const int rds[], MPI_Datatype rt,
                           MPI_Comm comm) {
    bool helped = cm_help_begin();
    int rc_pmpi = PMPI_Neighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm);
    return cm_help_end(helped, rc_pmpi);
}

int MPI_Neighbor_alltoallw(const void *sb, const int scs[], const MPI_Aint sds[],
                           const MPI_Datatype sts[], void *rb, const int rcs[],
                           const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm) {
    bool helped = cm_help_begin();
    int rc_pmpi = PMPI_Neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
    return cm_help_end(helped, rc_pmpi);
}

/* Waits until the buffered messages are delivered: the receivers must match them. */
int MPI_Buffer_detach(void *buffer, int *size) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Buffer_detach(buffer, size));
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    bool helped = cm_help_begin();
    int rc_pmpi = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
    return cm_help_end(helped, rc_pmpi);
}
