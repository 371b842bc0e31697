/*
 * call.h — one collective call from Python: the arguments parsed and checked, the buffers
 * held (no copies), then run blocking (GIL released) or started split-phase.
 */
#ifndef PYCOLLIE_CALL_H
#define PYCOLLIE_CALL_H

#include "buffers.h"
#include "ops.h"

enum { PYC_ALLREDUCE, PYC_REDUCE, PYC_BCAST, PYC_BARRIER,
       /* the collectives of colls.c / colls_v.c (run by colls_exec.c) */
       PYC_ALLGATHER, PYC_ALLGATHERV, PYC_REDUCE_SCATTER_BLOCK, PYC_REDUCE_SCATTER,
       PYC_ALLTOALL, PYC_ALLTOALLV, PYC_GATHER, PYC_GATHERV, PYC_SCATTER, PYC_SCATTERV,
       PYC_SCAN, PYC_EXSCAN };

typedef struct {
    int coll;
    const char *fn;          /* "allreduce", ... for messages */
    pyc_buf x, out;          /* held views (bcast: out only) */
    const void *send;
    void *recv;
    size_t count;
    collie_dtype_t dtype;
    collie_op_t op;
    pyc_user_op *user;
    int root;
    PyObject *result;        /* what the call returns (owned) */
    /* v forms: counts and displacements in elements (pointers into `arrays`, or NULL);
     * alltoallv: counts/displs send, rcounts/rdispls receive; own: this rank's sendcount
     * (allgatherv, gatherv) or recvcount (scatterv). */
    size_t *arrays;          /* owned (PyMem), kept until the call is released */
    const size_t *counts, *displs, *rcounts, *rdispls;
    size_t own;
} pyc_call;

/* The team a Python Team object stands for; NULL with CollieError set after finalize. */
typedef struct {
    PyObject_HEAD
    collie_team_t *team;     /* NULL once freed (Team.free()) */
    int rank, size;
    unsigned long generation;
    int sub;                 /* made by split()/dup(): free() frees it */
} pyc_team;

extern PyTypeObject pyc_team_type;
extern PyTypeObject pyc_request_type;
extern unsigned long pyc_generation;    /* incremented by collie.finalize() */
extern long pyc_active_requests;        /* started, not yet completed */

int pyc_team_live(const pyc_team *t, const char *fn);
/* Parses positional + keyword arguments by name; -1 with TypeError set. */
int pyc_parse(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              const char *const *names, int n, int nreq, PyObject **vals);
/* c->root from a Python int (None/NULL: 0); -1 with CollieError set. */
int pyc_call_root(pyc_call *c, PyObject *root);
/* Fills c from the Python arguments (op/root may be NULL: defaults). -1 on error (c released). */
int pyc_call_prepare(pyc_team *t, pyc_call *c, PyObject *x, PyObject *out, PyObject *op,
                     PyObject *root);
void pyc_call_release(pyc_call *c);
/* Runs c blocking; returns c->result (new reference) or NULL.  Releases c. */
PyObject *pyc_call_run(pyc_team *t, pyc_call *c);
/* Starts c split-phase; returns a Request owning c, or NULL (c released). */
PyObject *pyc_call_start(pyc_team *t, pyc_call *c);
PyObject *pyc_team_new(collie_team_t *team);
/* colls_exec.c: the C call of a collective of colls.c / colls_v.c (lock held, no GIL). */
int pyc_colls_run(pyc_team *t, const pyc_call *c);
int pyc_colls_start(pyc_team *t, const pyc_call *c, collie_request_t **req);
/* split / dup / free / the context manager (team_split.c). */
PyObject *pyc_team_split(pyc_team *t, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *pyc_team_dup(pyc_team *t, PyObject *unused);
PyObject *pyc_team_free(pyc_team *t, PyObject *unused);
PyObject *pyc_team_enter(pyc_team *t, PyObject *unused);
PyObject *pyc_team_exit(pyc_team *t, PyObject *const *args, Py_ssize_t nargs);

#endif
