/*
 * mpi_progress_ctor.c — the blocking MPI calls that are neither point-to-point, nor
 * completion calls, nor collectives, passed to the MPI underneath while collie's requests
 * keep moving: the communicator constructors, the window constructors, MPI_Win_free and
 * the window synchronisation calls that can wait for a peer.  A rank blocked in one of
 * them (MPI_Comm_dup waits for every rank of the communicator) while a peer waits in
 * MPI_Wait for a collie request this rank started would otherwise deadlock; plain MPI
 * moves its own nonblocking collectives there.  As in mpi_progress_coll.c: with active
 * collie requests each call runs between cm_help_begin and cm_help_end
 * (mpi_progress_help.c: a helper thread runs collie's side of them, no MPI call, while
 * this thread is inside PMPI; not used when a team of an active request needs MPI for its
 * own progress, unless MPI provides MPI_THREAD_MULTIPLE).  With none active: one counter
 * test, then the PMPI call.
 *
 * Covered: MPI_Comm_dup(_with_info), MPI_Comm_split(_type), MPI_Comm_create(_group),
 * MPI_Intercomm_create, MPI_Intercomm_merge, MPI_Cart_create, MPI_Cart_sub,
 * MPI_Graph_create, MPI_Dist_graph_create(_adjacent), MPI-4's MPI_Comm_create_from_group
 * and MPI_Intercomm_create_from_groups; MPI_Win_create, MPI_Win_allocate(_shared),
 * MPI_Win_create_dynamic, MPI_Win_free, MPI_Win_fence, MPI_Win_start, MPI_Win_complete,
 * MPI_Win_wait, MPI_Win_lock(_all), MPI_Win_unlock(_all), MPI_Win_flush(_all,_local,
 * _local_all).  Not covered (docs/design.md, "Progress shared with MPI"): MPI_Comm_free
 * and MPI_Comm_disconnect (local in both MPIs, and their delete callbacks destroy collie's
 * teams, which must not run beside the helper thread), MPI_Win_post/test/sync/attach/
 * detach (never wait for a peer), MPI_Comm_spawn/accept/connect.  MPI-IO's collective
 * calls: mpi_progress_io.c.
 *
 * The constructors of intracommunicators also set up the new communicator's collie team
 * (cm_made, mpi_team.c), every rank of it being inside the call.
 *
 * collie's own teams are made with PMPI_Comm_split/dup (mpi_team.c, mpi_split.c) and its
 * RMA transport's windows with PMPI_Win_* (mpi_transport_rma.c), never through these names.
 */
#include "mpi/mpi_layer.h"

/* ---- communicators ---------------------------------------------------------------------- */

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Comm_dup(comm, newcomm);
    return cm_made(cm_help_end(helped, rc), comm, newcomm);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
    return cm_made(cm_help_end(helped, rc), comm, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    return cm_made(cm_help_end(helped, rc), comm, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    return cm_made(cm_help_end(helped, rc), comm, newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Comm_create(comm, group, newcomm);
    return cm_made(cm_help_end(helped, rc), comm, newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
    return cm_made(cm_help_end(helped, rc), comm, newcomm);
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int
                         remote_leader, int tag, MPI_Comm *newintercomm) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Intercomm_create(local_comm, local_leader, peer_comm,
                                                     remote_leader, tag, newintercomm));
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Intercomm_merge(intercomm, high, newintracomm);
    return cm_made(cm_help_end(helped, rc), MPI_COMM_NULL, newintracomm);
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int
                    reorder, MPI_Comm *comm_cart) {
    bool helped = cm_help_begin();
    int rc = PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
    return cm_made(cm_help_end(helped, rc), comm_old, comm_cart);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Cart_sub(comm, remain_dims, newcomm);
    return cm_made(cm_help_end(helped, rc), comm, newcomm);
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int
                     reorder, MPI_Comm *comm_graph) {
    bool helped = cm_help_begin();
    int rc = PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph);
    return cm_made(cm_help_end(helped, rc), comm_old, comm_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int
                          reorder, MPI_Comm *comm_dist_graph) {
    bool helped = cm_help_begin();
    int rc = PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                    reorder, comm_dist_graph);
    return cm_made(cm_help_end(helped, rc), comm_old, comm_dist_graph);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const
                                   int sourceweights[], int outdegree, const int destinations[],
                                   const int destweights[], MPI_Info info, int reorder, MPI_Comm
                                   *comm_dist_graph) {
    bool helped = cm_help_begin();
    int rc = PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
                                             outdegree, destinations, destweights, info,
                                             reorder, comm_dist_graph);
    return cm_made(cm_help_end(helped, rc), comm_old, comm_dist_graph);
}

#if MPI_VERSION >= 4   /* MPI-4's sessions: collective over the group */

int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm *newcomm) {
    bool helped = cm_help_begin();
    int rc = PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
    return cm_made(cm_help_end(helped, rc), MPI_COMM_NULL, newcomm);
}

int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group
                                     remote_group, int remote_leader, const char *stringtag,
                                     MPI_Info info, MPI_Errhandler errhandler, MPI_Comm
                                     *newintercomm) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Intercomm_create_from_groups(local_group, local_leader,
                                                                 remote_group, remote_leader,
                                                                 stringtag, info, errhandler,
                                                                 newintercomm));
}

#endif


/* ---- windows: constructors, MPI_Win_free, synchronisation ------------------------------ */

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_create(base, size, disp_unit, info, comm, win));
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void
                            *baseptr, MPI_Win *win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr,
                                                        win));
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_create_dynamic(info, comm, win));
}

int MPI_Win_free(MPI_Win *win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_free(win));
}

int MPI_Win_fence(int assert, MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_fence(assert, win));
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_start(group, assert, win));
}

int MPI_Win_complete(MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_complete(win));
}

int MPI_Win_wait(MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_wait(win));
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_lock(lock_type, rank, assert, win));
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_lock_all(assert, win));
}

int MPI_Win_unlock(int rank, MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_unlock(rank, win));
}

int MPI_Win_unlock_all(MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_unlock_all(win));
}

int MPI_Win_flush(int rank, MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_flush(rank, win));
}

int MPI_Win_flush_all(MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_flush_all(win));
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_flush_local(rank, win));
}

int MPI_Win_flush_local_all(MPI_Win win) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Win_flush_local_all(win));
}
