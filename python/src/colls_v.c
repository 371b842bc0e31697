/*
 * colls_v.c — collie.Team's v forms (counts and displacements in elements, one per rank:
 * any sequence of ints; displacements left out are packed).  Results are 1-D arrays of
 * x's dtype spanning max(displs[j] + counts[j]) elements (gaps left as they were); an out
 * given must hold at least that many.
 *   allgatherv(x, counts, out=None, displs=None)      x has counts[rank] elements
 *   reduce_scatter(x, counts, out=None, op="sum")     x has sum(counts); -> counts[rank]
 *   alltoallv(x, sendcounts, recvcounts, out=None, sdispls=None, rdispls=None)
 *   gatherv(x, counts=None, root=0, out=None, displs=None)    counts/displs: root only
 *   scatterv(x, counts=None, root=0, out=None, displs=None)   -> counts[rank] elements
 * and the i… forms.  In place as in colls.c: x = out[displs[rank]:…] (allgatherv; gatherv
 * at the root), out = x[:counts[rank]] (reduce_scatter: x is overwritten), out = x
 * (alltoallv: the recv arrays then describe both directions; sendcounts/sdispls must be
 * None or the same), out = x[displs[root]:…] (scatterv at the root).  scatterv off the
 * root: out, or else counts and x (which give the count and the dtype).
 */
#include "colls.h"

static const char *const x_counts_out_displs[] = { "x", "counts", "out", "displs" };
static const char *const x_counts_out_op[] = { "x", "counts", "out", "op" };
static const char *const x_counts_root_out_displs[] = { "x", "counts", "root", "out",
                                                        "displs" };
static const char *const alltoallv_names[] = { "x", "sendcounts", "recvcounts", "out",
                                               "sdispls", "rdispls" };

/* counts and displs (from v[ic], v[id]) into c's arrays: the 1-D result's extent. */
static int layout(pyc_team *t, pyc_call *c, PyObject *counts, PyObject *displs,
                  size_t *extent) {
    size_t *a = pyc_call_arrays(c, 2, t->size);
    if (!a || pyc_counts(counts, t->size, c->fn, "counts", a) ||
        pyc_displs(displs, t->size, a, c->fn, "displs", a + t->size))
        return -1;
    c->counts = a;
    c->displs = a + t->size;
    *extent = pyc_extent(c->counts, c->displs, t->size);
    return 0;
}

static int own_count(const pyc_call *c, int rank) {
    if (c->x.count == c->counts[rank])
        return 0;
    pyc_raise(COLLIE_ERR_ARG, "%s: x has %zu elements but counts[%d] is %zu", c->fn,
              c->x.count, rank, c->counts[rank]);
    return -1;
}

/* A 1-D out of at least `extent` elements (new: exactly). */
static int out_1d(pyc_call *c, PyObject *out, PyObject *like, size_t extent) {
    Py_ssize_t dims[1] = { (Py_ssize_t)extent };
    return pyc_coll_out(c, out, like, 1, dims, extent, 0);
}

/* x is the block of out at displs[j] (in place: sendbuf COLLIE_IN_PLACE)? */
static int x_in_out(pyc_call *c, int j, const char *text) {
    int in = pyc_coll_within(c, &c->out, c->displs[j], c->counts[j], &c->x, text);
    if (in > 0)
        c->send = COLLIE_IN_PLACE;
    return in < 0 ? -1 : 0;
}

static int prep_allgatherv(pyc_team *t, pyc_call *c, PyObject **v) {
    size_t extent;
    if (pyc_coll_x(c, v[0], 0) || layout(t, c, v[1], v[3], &extent) || own_count(c, t->rank) ||
        out_1d(c, v[2], v[0], extent))
        return -1;
    c->own = c->x.count;
    return x_in_out(c, t->rank, "x = out[displs[rank]:displs[rank] + counts[rank]]");
}

static int prep_reduce_scatter(pyc_team *t, pyc_call *c, PyObject **v) {
    size_t *a = pyc_call_arrays(c, 1, t->size), total;
    if (!a || pyc_coll_x(c, v[0], 0) || pyc_coll_op(c, v[3]) ||
        pyc_counts(v[1], t->size, c->fn, "counts", a) ||
        pyc_total(a, t->size, c->fn, "counts", &total))
        return -1;
    c->counts = a;
    if (c->x.count != total) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x has %zu elements but the counts add up to %zu",
                  c->fn, c->x.count, total);
        return -1;
    }
    Py_ssize_t dims[1] = { (Py_ssize_t)a[t->rank] };
    if (pyc_coll_out(c, v[2], v[0], 1, dims, a[t->rank], 1))
        return -1;
    int in = pyc_coll_within(c, &c->x, 0, a[t->rank], &c->out,
                             "out = x[:counts[rank]]: x is overwritten");
    return in < 0 ? -1 : in > 0 ? pyc_coll_x_writable(c, v[0]) : 0;
}

/* alltoallv in place: the send arrays, if given, must be the receive arrays. */
static int same_arrays(pyc_team *t, pyc_call *c, PyObject **v, size_t *scratch) {
    const char *names[2] = { "sendcounts", "sdispls" };
    const size_t *recv[2] = { c->rcounts, c->rdispls };
    for (int k = 0; k < 2; k++) {
        PyObject *given = v[1 + 3 * k];
        if (!given || given == Py_None)
            continue;
        if (pyc_counts(given, t->size, c->fn, names[k], scratch))
            return -1;
        for (int j = 0; j < t->size; j++)
            if (scratch[j] != recv[k][j]) {
                pyc_raise(COLLIE_ERR_ARG, "%s: in place (out = x) %s must be None or equal "
                          "to the receive side's (entry %d differs)", c->fn, names[k], j);
                return -1;
            }
    }
    c->counts = c->rcounts;
    c->displs = c->rdispls;
    return 0;
}

static int prep_alltoallv(pyc_team *t, pyc_call *c, PyObject **v) {
    int P = t->size;
    size_t *a = pyc_call_arrays(c, 5, P);
    if (!a || pyc_coll_x(c, v[0], 0) || pyc_counts(v[2], P, c->fn, "recvcounts", a + 2 * P) ||
        pyc_displs(v[5], P, a + 2 * P, c->fn, "rdispls", a + 3 * P))
        return -1;
    c->rcounts = a + 2 * P;
    c->rdispls = a + 3 * P;
    if (out_1d(c, v[3], v[0], pyc_extent(c->rcounts, c->rdispls, P)))
        return -1;
    /* out = x (empty ones too: the send arrays are then not needed) */
    int in = c->x.ptr == c->out.ptr && c->x.count == c->out.count
                 ? 1 : pyc_coll_within(c, &c->out, 0, c->out.count, &c->x, "out = x");
    if (in < 0)
        return -1;
    if (in > 0) {
        c->send = COLLIE_IN_PLACE;
        return same_arrays(t, c, v, a + 4 * P);
    }
    if (pyc_counts(v[1], P, c->fn, "sendcounts", a) ||
        pyc_displs(v[4], P, a, c->fn, "sdispls", a + P))
        return -1;
    c->counts = a;
    c->displs = a + P;
    size_t need = pyc_extent(c->counts, c->displs, P);
    if (need > c->x.count) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x has %zu elements; sendcounts and sdispls reach "
                  "element %zu", c->fn, c->x.count, need);
        return -1;
    }
    return 0;
}

static int prep_gatherv(pyc_team *t, pyc_call *c, PyObject **v) {
    if (pyc_call_root(c, v[2]) || pyc_coll_x(c, v[0], 0))
        return -1;
    c->own = c->x.count;
    if (t->rank != c->root) {   /* counts, displs and out are the root's */
        c->result = Py_NewRef(Py_None);
        return 0;
    }
    size_t extent;
    if (layout(t, c, v[1], v[4], &extent) || own_count(c, c->root) ||
        out_1d(c, v[3], v[0], extent))
        return -1;
    return x_in_out(c, c->root, "x = out[displs[root]:displs[root] + counts[root]]");
}

/* scatterv off the root: out (any count: the library checks it against the root's), or a
 * new array of counts[rank] elements of x's dtype. */
static int scatterv_leaf(pyc_team *t, pyc_call *c, PyObject **v) {
    size_t n = 0;
    if (!v[3] || v[3] == Py_None) {
        if (!v[0] || v[0] == Py_None || !v[1] || v[1] == Py_None) {
            pyc_raise(COLLIE_ERR_ARG, "%s: rank %d is not the root: give out (the block to "
                      "receive), or counts and x (its count and dtype)", c->fn, t->rank);
            return -1;
        }
        size_t *a = pyc_call_arrays(c, 1, t->size);
        if (!a || pyc_counts(v[1], t->size, c->fn, "counts", a) || pyc_coll_x(c, v[0], 0))
            return -1;
        n = a[t->rank];
    }
    Py_ssize_t dims[1] = { (Py_ssize_t)n };
    if (pyc_coll_out(c, v[3], v[0], 1, dims, n, !v[3] || v[3] == Py_None))
        return -1;
    PyMem_Free(c->arrays);   /* counts and displs are significant at the root only */
    c->arrays = NULL;
    c->send = NULL;
    c->own = c->out.count;
    return 0;
}

static int prep_scatterv(pyc_team *t, pyc_call *c, PyObject **v) {
    if (pyc_call_root(c, v[2]))
        return -1;
    if (t->rank != c->root)
        return scatterv_leaf(t, c, v);
    size_t extent;
    if (pyc_coll_x(c, v[0], 0) || layout(t, c, v[1], v[4], &extent))
        return -1;
    if (extent > c->x.count) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x has %zu elements; counts and displs reach element "
                  "%zu", c->fn, c->x.count, extent);
        return -1;
    }
    c->own = c->counts[c->root];
    Py_ssize_t dims[1] = { (Py_ssize_t)c->own };
    if (pyc_coll_out(c, v[3], v[0], 1, dims, c->own, 1))
        return -1;
    int in = pyc_coll_within(c, &c->x, c->displs[c->root], c->own, &c->out,
                             "out = x[displs[root]:displs[root] + counts[root]]");
    if (in > 0)
        c->recv = COLLIE_IN_PLACE;
    return in < 0 ? -1 : 0;
}

static const pyc_coll_desc allgatherv_d = { PYC_ALLGATHERV, "allgatherv", "iallgatherv",
                                            x_counts_out_displs, 4, 2, prep_allgatherv };
static const pyc_coll_desc reduce_scatter_d = { PYC_REDUCE_SCATTER, "reduce_scatter",
                                                "ireduce_scatter", x_counts_out_op, 4, 2,
                                                prep_reduce_scatter };
static const pyc_coll_desc alltoallv_d = { PYC_ALLTOALLV, "alltoallv", "ialltoallv",
                                           alltoallv_names, 6, 3, prep_alltoallv };
static const pyc_coll_desc gatherv_d = { PYC_GATHERV, "gatherv", "igatherv",
                                         x_counts_root_out_displs, 5, 1, prep_gatherv };
static const pyc_coll_desc scatterv_d = { PYC_SCATTERV, "scatterv", "iscatterv",
                                          x_counts_root_out_displs, 5, 0, prep_scatterv };

PYC_COLL_DEFINE(allgatherv, allgatherv_d)
PYC_COLL_DEFINE(reduce_scatter, reduce_scatter_d)
PYC_COLL_DEFINE(alltoallv, alltoallv_d)
PYC_COLL_DEFINE(gatherv, gatherv_d)
PYC_COLL_DEFINE(scatterv, scatterv_d)
