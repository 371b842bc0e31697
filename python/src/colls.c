/*
 * colls.c — collie.Team's block-form collectives of issue 16, numpy style (a new array
 * unless out= is given; the v forms: colls_v.c):
 *   allgather(x, out=None)                      -> shape (size, *x.shape): row j from rank j
 *   reduce_scatter_block(x, out=None, op="sum") -> block `rank` of the reduction of x
 *   alltoall(x, out=None)                       -> x's shape: block j came from rank j
 *   gather(x, root=0, out=None)                 -> (size, *x.shape) at the root, else None
 *   scatter(x, root=0, out=None)                -> this rank's block of the root's x
 *   scan(x, out=None, op="sum")                 -> x0 ∘ … ∘ x(rank)
 *   exscan(x, out=None, op="sum")               -> x0 ∘ … ∘ x(rank-1); None at rank 0
 * and the i… forms (same arguments) returning a Request.  x of P blocks (reduce_scatter_block,
 * alltoall, scatter) has P·n elements; its blocks are x[j] when x.shape[0] == P (a block's
 * result then has shape x.shape[1:]), else n consecutive elements (result shape (n,)).
 * Blocks are in C order: x and out must be C-contiguous.  In place is read from memory:
 * x = out[rank] (allgather; gather at the root), out = x[0] (reduce_scatter_block: x is
 * overwritten), out = x[root] (scatter at the root), out = x (alltoall, scan, exscan).
 * scatter off the root: x may be None when out is given (else x only gives the shape and
 * dtype).  exscan at rank 0: MPI leaves the result undefined; here it is None and an out
 * given is left untouched.
 */
#include "colls.h"

#include <string.h>

PyObject *pyc_coll_call(pyc_team *t, const pyc_coll_desc *d, int split_phase,
                        PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *v[8];
    pyc_call c = { .coll = d->coll, .fn = split_phase ? d->iname : d->name };
    if (pyc_parse(c.fn, args, nargs, kwnames, d->names, d->n, d->nreq, v))
        return NULL;
    if (pyc_reentered(c.fn) || !pyc_team_live(t, c.fn) || d->prepare(t, &c, v)) {
        pyc_call_release(&c);
        return NULL;
    }
    return split_phase ? pyc_call_start(t, &c) : pyc_call_run(t, &c);
}

static int c_order(const pyc_call *c, const pyc_buf *b, const char *what) {
    if (b->c_order)
        return 0;
    pyc_raise(COLLIE_ERR_ARG, "%s: %s is in Fortran order; %s lays its blocks out in C order: "
              "pass a C-contiguous array (numpy.ascontiguousarray)", c->fn, what, c->fn);
    return -1;
}

int pyc_coll_x(pyc_call *c, PyObject *x, int writable) {
    if (!x || x == Py_None) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x is required here", c->fn);
        return -1;
    }
    if (pyc_buf_get(x, writable, c->fn, "x", &c->x) || c_order(c, &c->x, "x"))
        return -1;
    c->send = c->x.ptr;
    c->dtype = c->x.dtype;
    return 0;
}

int pyc_coll_out(pyc_call *c, PyObject *out, PyObject *like, int nd, const Py_ssize_t *dims,
                 size_t need, int exact) {
    if (need > (size_t)PY_SSIZE_T_MAX) {
        pyc_raise(COLLIE_ERR_ARG, "%s: out would need %zu elements (too many)", c->fn, need);
        return -1;
    }
    if (!out || out == Py_None)
        c->result = pyc_buf_new_shape(like, &c->x, nd, dims);
    else
        c->result = Py_NewRef(out);
    if (!c->result || pyc_buf_get(c->result, 1, c->fn, "out", &c->out) ||
        c_order(c, &c->out, "out"))
        return -1;
    if (!c->dtype)
        c->dtype = c->out.dtype;
    if (c->out.dtype != c->dtype || (exact ? c->out.count != need : c->out.count < need)) {
        pyc_raise(COLLIE_ERR_ARG, "%s: out is %zu x %s; expected %s%zu x %s", c->fn,
                  c->out.count, pyc_dtype_name(c->out.dtype), exact ? "" : "at least ", need,
                  pyc_dtype_name(c->dtype));
        return -1;
    }
    c->recv = c->out.ptr;
    return 0;
}

int pyc_coll_within(const pyc_call *c, const pyc_buf *big, size_t off, size_t n,
                    const pyc_buf *small, const char *in_place) {
    size_t es = pyc_dtype_size(c->dtype);
    const char *b = big->ptr, *s = small->ptr;
    if (n && small->count == n && off <= big->count && n <= big->count - off && s == b + off * es)
        return 1;
    if (!small->bytes || !big->bytes || s >= b + big->bytes || b >= s + small->bytes)
        return 0;
    pyc_raise(COLLIE_ERR_ARG, "%s: x and out overlap, but not as in place (%s)", c->fn,
              in_place);
    return -1;
}

int pyc_coll_x_writable(pyc_call *c, PyObject *x) {
    pyc_buf_release(&c->x);
    if (pyc_buf_get(x, 1, c->fn, "x (overwritten in place)", &c->x))
        return -1;
    c->send = COLLIE_IN_PLACE;
    return 0;
}

int pyc_coll_op(pyc_call *c, PyObject *op) {
    c->op = capi.builtin[0]; /* "sum" */
    return op && op != Py_None ? pyc_op_resolve(op, c->fn, &c->op, &c->user) : 0;
}

/* x's element count as P blocks: *n per block, and the result shape of one block. */
static int blocks(const pyc_call *c, PyObject *x, int P, size_t *n, Py_ssize_t *dims,
                  int *nd) {
    if (c->x.count % (size_t)P) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x has %zu elements, not a multiple of the team's %d "
                  "ranks", c->fn, c->x.count, P);
        return -1;
    }
    *n = c->x.count / (size_t)P;
    int xnd = pyc_buf_shape(x, &c->x, dims, c->fn);
    if (xnd < 0)
        return -1;
    if (xnd >= 1 && dims[0] == P) {
        memmove(dims, dims + 1, (size_t)(xnd - 1) * sizeof *dims);
        *nd = xnd - 1;
    } else {
        dims[0] = (Py_ssize_t)*n;
        *nd = 1;
    }
    return 0;
}

static const char *const x_out[] = { "x", "out" };
static const char *const x_out_op[] = { "x", "out", "op" };
static const char *const x_root_out[] = { "x", "root", "out" };

/* (size, *x.shape) for x's rows: allgather, gather. */
static int stacked(pyc_team *t, pyc_call *c, PyObject *x, PyObject *out) {
    Py_ssize_t dims[PYC_MAXDIM + 1];
    int nd = pyc_buf_shape(x, &c->x, dims + 1, c->fn);
    if (nd < 0)
        return -1;
    dims[0] = t->size;
    c->count = c->x.count;
    return pyc_coll_out(c, out, x, nd + 1, dims, (size_t)t->size * c->count, 1);
}

static int prep_allgather(pyc_team *t, pyc_call *c, PyObject **v) {
    if (pyc_coll_x(c, v[0], 0) || stacked(t, c, v[0], v[1]))
        return -1;
    int in = pyc_coll_within(c, &c->out, (size_t)t->rank * c->count, c->count, &c->x,
                             "x = out[rank]");
    if (in > 0)
        c->send = COLLIE_IN_PLACE;
    return in < 0 ? -1 : 0;
}

static int prep_reduce_scatter_block(pyc_team *t, pyc_call *c, PyObject **v) {
    Py_ssize_t dims[PYC_MAXDIM];
    int nd;
    if (pyc_coll_x(c, v[0], 0) || pyc_coll_op(c, v[2]) ||
        blocks(c, v[0], t->size, &c->count, dims, &nd) ||
        pyc_coll_out(c, v[1], v[0], nd, dims, c->count, 1))
        return -1;
    int in = pyc_coll_within(c, &c->x, 0, c->count, &c->out, "out = x[0]: x is overwritten");
    return in < 0 ? -1 : in > 0 ? pyc_coll_x_writable(c, v[0]) : 0;
}

static int prep_alltoall(pyc_team *t, pyc_call *c, PyObject **v) {
    Py_ssize_t dims[PYC_MAXDIM];
    int nd;
    if (pyc_coll_x(c, v[0], 0) || blocks(c, v[0], t->size, &c->count, dims, &nd))
        return -1;
    nd = pyc_buf_shape(v[0], &c->x, dims, c->fn);   /* the result has x's shape */
    if (nd < 0 || pyc_coll_out(c, v[1], v[0], nd, dims, c->x.count, 1))
        return -1;
    int in = pyc_coll_within(c, &c->out, 0, c->x.count, &c->x, "out = x");
    if (in > 0)
        c->send = COLLIE_IN_PLACE;
    return in < 0 ? -1 : 0;
}

static int prep_gather(pyc_team *t, pyc_call *c, PyObject **v) {
    if (pyc_call_root(c, v[1]) || pyc_coll_x(c, v[0], 0))
        return -1;
    c->count = c->x.count;
    if (t->rank != c->root) {   /* out is not used off the root */
        c->result = Py_NewRef(Py_None);
        return 0;
    }
    if (stacked(t, c, v[0], v[2]))
        return -1;
    int in = pyc_coll_within(c, &c->out, (size_t)c->root * c->count, c->count, &c->x,
                             "x = out[root]");
    if (in > 0)
        c->send = COLLIE_IN_PLACE;
    return in < 0 ? -1 : 0;
}

/* scatter off the root: out, or a new array shaped like one block of x. */
static int scatter_leaf(pyc_team *t, pyc_call *c, PyObject **v) {
    Py_ssize_t dims[PYC_MAXDIM];
    int nd = 0;
    size_t n = 0;
    if (!v[2] || v[2] == Py_None) {
        if (!v[0] || v[0] == Py_None) {
            pyc_raise(COLLIE_ERR_ARG, "%s: rank %d is not the root: give out (the block to "
                      "receive) or x (its shape and dtype, like the root's)", c->fn, t->rank);
            return -1;
        }
        if (pyc_coll_x(c, v[0], 0) || blocks(c, v[0], t->size, &n, dims, &nd))
            return -1;
    }
    if (pyc_coll_out(c, v[2], v[0], nd, dims, n, !v[2] || v[2] == Py_None))
        return -1;
    c->send = NULL;
    c->count = c->out.count;
    return 0;
}

static int prep_scatter(pyc_team *t, pyc_call *c, PyObject **v) {
    if (pyc_call_root(c, v[1]))
        return -1;
    if (t->rank != c->root)
        return scatter_leaf(t, c, v);
    Py_ssize_t dims[PYC_MAXDIM];
    int nd;
    if (pyc_coll_x(c, v[0], 0) || blocks(c, v[0], t->size, &c->count, dims, &nd) ||
        pyc_coll_out(c, v[2], v[0], nd, dims, c->count, 1))
        return -1;
    int in = pyc_coll_within(c, &c->x, (size_t)c->root * c->count, c->count, &c->out,
                             "out = x[root]");
    if (in > 0)
        c->recv = COLLIE_IN_PLACE;
    return in < 0 ? -1 : 0;
}

/* scan, exscan: as allreduce (call.c), exscan's rank 0 excepted. */
static int prep_scan(pyc_team *t, pyc_call *c, PyObject **v) {
    return pyc_call_prepare(t, c, v[0], v[1], v[2], NULL);
}

static const pyc_coll_desc allgather_d = { PYC_ALLGATHER, "allgather", "iallgather", x_out, 2,
                                           1, prep_allgather };
static const pyc_coll_desc rsb_d = { PYC_REDUCE_SCATTER_BLOCK, "reduce_scatter_block",
                                     "ireduce_scatter_block", x_out_op, 3, 1,
                                     prep_reduce_scatter_block };
static const pyc_coll_desc alltoall_d = { PYC_ALLTOALL, "alltoall", "ialltoall", x_out, 2, 1,
                                          prep_alltoall };
static const pyc_coll_desc gather_d = { PYC_GATHER, "gather", "igather", x_root_out, 3, 1,
                                        prep_gather };
static const pyc_coll_desc scatter_d = { PYC_SCATTER, "scatter", "iscatter", x_root_out, 3, 0,
                                         prep_scatter };
static const pyc_coll_desc scan_d = { PYC_SCAN, "scan", "iscan", x_out_op, 3, 1, prep_scan };
static const pyc_coll_desc exscan_d = { PYC_EXSCAN, "exscan", "iexscan", x_out_op, 3, 1,
                                        prep_scan };

PYC_COLL_DEFINE(allgather, allgather_d)
PYC_COLL_DEFINE(reduce_scatter_block, rsb_d)
PYC_COLL_DEFINE(alltoall, alltoall_d)
PYC_COLL_DEFINE(gather, gather_d)
PYC_COLL_DEFINE(scatter, scatter_d)
PYC_COLL_DEFINE(scan, scan_d)
PYC_COLL_DEFINE(exscan, exscan_d)
