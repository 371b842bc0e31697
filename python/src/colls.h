/*
 * colls.h — the Team methods of allgather(v), reduce_scatter(_block), alltoall(v),
 * gather(v), scatter(v), scan and exscan, blocking and split-phase (i…): colls.c (block
 * forms, scan, exscan, the shared helpers below), colls_v.c (v forms); the C calls they
 * end in: colls_exec.c.
 */
#ifndef PYCOLLIE_COLLS_H
#define PYCOLLIE_COLLS_H

#include "counts.h"

/* A collective's arguments: names[n] (the first nreq required) and how they become a call. */
typedef struct {
    int coll;
    const char *name, *iname;
    const char *const *names;
    int n, nreq;
    int (*prepare)(pyc_team *t, pyc_call *c, PyObject **v);
} pyc_coll_desc;

/* Parses, prepares and runs (split_phase: starts) one collective. */
PyObject *pyc_coll_call(pyc_team *t, const pyc_coll_desc *d, int split_phase,
                        PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* Helpers of the prepare functions; each returns 0, or -1 with CollieError set. */
/* x into c->x (C order required: collie's blocks are in C order); c->send, c->dtype. */
int pyc_coll_x(pyc_call *c, PyObject *x, int writable);
/* out (or, for None, a new C-order array of shape dims[nd] like `like`) into c->out and
 * c->result; its dtype must be c->dtype (taken from out when c->dtype is still 0), its
 * element count `need` (exact), or at least `need` when !exact.  c->recv. */
int pyc_coll_out(pyc_call *c, PyObject *out, PyObject *like, int nd, const Py_ssize_t *dims,
                 size_t need, int exact);
/* 1 when `small` is exactly the elements [off, off + n) of `big` (in place), 0 when the two
 * do not overlap, -1 (error) for any other overlap. */
int pyc_coll_within(const pyc_call *c, const pyc_buf *big, size_t off, size_t n,
                    const pyc_buf *small, const char *in_place);
/* In place where out is x's first block: x must be writable (the input is overwritten). */
int pyc_coll_x_writable(pyc_call *c, PyObject *x);
int pyc_coll_op(pyc_call *c, PyObject *op);

#define PYC_COLL_METHOD(name) \
    PyObject *pyc_t_##name(pyc_team *t, PyObject *const *a, Py_ssize_t n, PyObject *kw)
PYC_COLL_METHOD(allgather);
PYC_COLL_METHOD(iallgather);
PYC_COLL_METHOD(reduce_scatter_block);
PYC_COLL_METHOD(ireduce_scatter_block);
PYC_COLL_METHOD(alltoall);
PYC_COLL_METHOD(ialltoall);
PYC_COLL_METHOD(gather);
PYC_COLL_METHOD(igather);
PYC_COLL_METHOD(scatter);
PYC_COLL_METHOD(iscatter);
PYC_COLL_METHOD(scan);
PYC_COLL_METHOD(iscan);
PYC_COLL_METHOD(exscan);
PYC_COLL_METHOD(iexscan);
PYC_COLL_METHOD(allgatherv);
PYC_COLL_METHOD(iallgatherv);
PYC_COLL_METHOD(reduce_scatter);
PYC_COLL_METHOD(ireduce_scatter);
PYC_COLL_METHOD(alltoallv);
PYC_COLL_METHOD(ialltoallv);
PYC_COLL_METHOD(gatherv);
PYC_COLL_METHOD(igatherv);
PYC_COLL_METHOD(scatterv);
PYC_COLL_METHOD(iscatterv);

/* Defines name and i##name for descriptor d. */
#define PYC_COLL_DEFINE(name, d)                                                           \
    PYC_COLL_METHOD(name) { return pyc_coll_call(t, &(d), 0, a, n, kw); }                  \
    PYC_COLL_METHOD(i##name) { return pyc_coll_call(t, &(d), 1, a, n, kw); }

#endif
