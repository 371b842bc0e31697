/*
 * mpi_requests.h — the table of MPI requests served by collie, shared by the completion
 * calls on one request (mpi_requests.c: MPI_Wait, MPI_Test, MPI_Request_get_status,
 * MPI_Request_free, MPI_Start) and on arrays (mpi_requests_array.c: MPI_Waitall,
 * MPI_Testall, MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome).  Internal to those
 * two files.
 */
#ifndef COLLIE_MPI_REQUESTS_H
#define COLLIE_MPI_REQUESTS_H

#include "mpi/mpi_layer.h"

#pragma GCC visibility push(hidden)

typedef struct cm_req {
    MPI_Request handle;
    collie_request_t *req;
    bool persistent;
    bool active;                  /* started, not yet finished */
    bool unreported;              /* persistent, finished, not yet reported by a wait/test */
    bool deferred;                /* finished by the helper thread (mpi_progress_help.c):
                                     MPI's side of the completion is still to be done */
    int deferred_status;
    char *deferred_msg;           /* the helper thread's collie_last_error() (malloc'd) */
    int error;                    /* finished with this MPI error (cm_error's code), else 0 */
    cm_call call;                 /* for error messages; a packed broadcast's buffers */
} cm_req;

/* The entry of handle h, NULL when collie does not serve it (or no entry exists). */
cm_req *cm_req_find(MPI_Request h);
/* Progresses e (and every other request, collie's and MPI's) until it is finished
 * (block) or one step; true when e is finished.  A finished persistent entry counts as
 * reported. */
bool cm_req_progress(cm_req *e, bool block);
/* Copies of the handles of reqs (PMPI sets completed ones to MPI_REQUEST_NULL), then,
 * after PMPI completed them, drops the entries of finished split-phase requests among
 * them (and frees the copy). */
MPI_Request *cm_req_save(int n, const MPI_Request *reqs);
void cm_req_drop_done(int n, MPI_Request *saved);
/* True when some handle of reqs is served by collie. */
bool cm_req_any(int n, const MPI_Request *reqs);
/* The error of a finished entry, for the call that reports it (then cleared: an inactive
 * persistent request reported again has none). */
int cm_req_take_error(cm_req *e);
/* The status of a collie request: empty (no source, tag, elements), no error. */
void cm_req_set_empty(MPI_Status *status);

#pragma GCC visibility pop

#endif
