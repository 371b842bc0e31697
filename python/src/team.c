/*
 * team.c — collie.Team: rank, size and the collectives.
 *   allreduce(x, out=None, op="sum")        -> out (a new array when None)
 *   reduce(x, root=0, out=None, op="sum")   -> out at the root, None elsewhere
 *   bcast(x, root=0)                        -> x (in place)
 *   barrier()
 *   iallreduce / ireduce / ibcast / ibarrier (same arguments) -> collie.Request
 *   allgather(v), reduce_scatter(_block), alltoall(v), gather(v), scatter(v), scan, exscan
 *   and their i… forms: colls.c, colls_v.c
 *   split(color, key=0) -> Team or None, dup() -> Team, free(), with-block: team_split.c
 */
#include "colls.h"

static const char *const reduction_names[] = { "x", "out", "op" };
static const char *const reduce_names[] = { "x", "root", "out", "op" };
static const char *const bcast_names[] = { "x", "root" };

static PyObject *reduction(pyc_team *t, int coll, const char *fn, int split_phase,
                           PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *v[4];
    pyc_call c = { .coll = coll, .fn = fn };
    if (coll == PYC_ALLREDUCE) {
        if (pyc_parse(fn, args, nargs, kwnames, reduction_names, 3, 1, v) ||
            pyc_call_prepare(t, &c, v[0], v[1], v[2], NULL))
            return NULL;
    } else {
        if (pyc_parse(fn, args, nargs, kwnames, reduce_names, 4, 1, v) ||
            pyc_call_prepare(t, &c, v[0], v[2], v[3], v[1]))
            return NULL;
    }
    return split_phase ? pyc_call_start(t, &c) : pyc_call_run(t, &c);
}

static PyObject *bcast(pyc_team *t, const char *fn, int split_phase, PyObject *const *args,
                       Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *v[2];
    pyc_call c = { .coll = PYC_BCAST, .fn = fn };
    if (pyc_parse(fn, args, nargs, kwnames, bcast_names, 2, 1, v) ||
        pyc_call_prepare(t, &c, v[0], NULL, NULL, v[1]))
        return NULL;
    return split_phase ? pyc_call_start(t, &c) : pyc_call_run(t, &c);
}

static PyObject *barrier(pyc_team *t, const char *fn, int split_phase) {
    pyc_call c = { .coll = PYC_BARRIER, .fn = fn };
    if (pyc_call_prepare(t, &c, NULL, NULL, NULL, NULL))
        return NULL;
    return split_phase ? pyc_call_start(t, &c) : pyc_call_run(t, &c);
}

static PyObject *t_allreduce(pyc_team *t, PyObject *const *a, Py_ssize_t n, PyObject *kw) {
    return reduction(t, PYC_ALLREDUCE, "allreduce", 0, a, n, kw);
}
static PyObject *t_iallreduce(pyc_team *t, PyObject *const *a, Py_ssize_t n, PyObject *kw) {
    return reduction(t, PYC_ALLREDUCE, "iallreduce", 1, a, n, kw);
}
static PyObject *t_reduce(pyc_team *t, PyObject *const *a, Py_ssize_t n, PyObject *kw) {
    return reduction(t, PYC_REDUCE, "reduce", 0, a, n, kw);
}
static PyObject *t_ireduce(pyc_team *t, PyObject *const *a, Py_ssize_t n, PyObject *kw) {
    return reduction(t, PYC_REDUCE, "ireduce", 1, a, n, kw);
}
static PyObject *t_bcast(pyc_team *t, PyObject *const *a, Py_ssize_t n, PyObject *kw) {
    return bcast(t, "bcast", 0, a, n, kw);
}
static PyObject *t_ibcast(pyc_team *t, PyObject *const *a, Py_ssize_t n, PyObject *kw) {
    return bcast(t, "ibcast", 1, a, n, kw);
}
static PyObject *t_barrier(pyc_team *t, PyObject *unused) { return barrier(t, "barrier", 0); }
static PyObject *t_ibarrier(pyc_team *t, PyObject *unused) { return barrier(t, "ibarrier", 1); }

static PyObject *t_rank(pyc_team *t, void *unused) { return PyLong_FromLong(t->rank); }
static PyObject *t_size(pyc_team *t, void *unused) { return PyLong_FromLong(t->size); }

static PyObject *t_repr(pyc_team *t) {
    return PyUnicode_FromFormat("<collie.Team rank %d of %d%s>", t->rank, t->size,
                                t->generation != pyc_generation ? " (finalized)" :
                                !t->team ? " (freed)" : "");
}

#define FASTKW (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) ((PyCFunction)(void (*)(void))(f))
static PyMethodDef team_methods[] = {
    { "allreduce", FN(t_allreduce), FASTKW, "allreduce(x, out=None, op='sum') -> out" },
    { "reduce", FN(t_reduce), FASTKW, "reduce(x, root=0, out=None, op='sum') -> out or None" },
    { "bcast", FN(t_bcast), FASTKW, "bcast(x, root=0) -> x (in place)" },
    { "barrier", FN(t_barrier), METH_NOARGS, "barrier()" },
    { "iallreduce", FN(t_iallreduce), FASTKW, "iallreduce(x, out=None, op='sum') -> Request" },
    { "ireduce", FN(t_ireduce), FASTKW, "ireduce(x, root=0, out=None, op='sum') -> Request" },
    { "ibcast", FN(t_ibcast), FASTKW, "ibcast(x, root=0) -> Request" },
    { "ibarrier", FN(t_ibarrier), METH_NOARGS, "ibarrier() -> Request" },
    { "allgather", FN(pyc_t_allgather), FASTKW,
      "allgather(x, out=None) -> out: shape (size, *x.shape), row j from rank j" },
    { "allgatherv", FN(pyc_t_allgatherv), FASTKW,
      "allgatherv(x, counts, out=None, displs=None) -> out (1-D)" },
    { "reduce_scatter_block", FN(pyc_t_reduce_scatter_block), FASTKW,
      "reduce_scatter_block(x, out=None, op='sum') -> block rank of the reduction of x "
      "(P blocks)" },
    { "reduce_scatter", FN(pyc_t_reduce_scatter), FASTKW,
      "reduce_scatter(x, counts, out=None, op='sum') -> counts[rank] elements of the reduction" },
    { "alltoall", FN(pyc_t_alltoall), FASTKW,
      "alltoall(x, out=None) -> out: block j came from rank j" },
    { "alltoallv", FN(pyc_t_alltoallv), FASTKW,
      "alltoallv(x, sendcounts, recvcounts, out=None, sdispls=None, rdispls=None) -> out (1-D)" },
    { "gather", FN(pyc_t_gather), FASTKW,
      "gather(x, root=0, out=None) -> (size, *x.shape) at the root, None elsewhere" },
    { "gatherv", FN(pyc_t_gatherv), FASTKW,
      "gatherv(x, counts=None, root=0, out=None, displs=None) -> 1-D at the root, None elsewhere" },
    { "scatter", FN(pyc_t_scatter), FASTKW,
      "scatter(x, root=0, out=None) -> this rank's block of the root's x" },
    { "scatterv", FN(pyc_t_scatterv), FASTKW,
      "scatterv(x, counts=None, root=0, out=None, displs=None) -> counts[rank] elements" },
    { "scan", FN(pyc_t_scan), FASTKW, "scan(x, out=None, op='sum') -> x0 op ... op x(rank)" },
    { "exscan", FN(pyc_t_exscan), FASTKW,
      "exscan(x, out=None, op='sum') -> x0 op ... op x(rank-1); None at rank 0" },
    { "iallgather", FN(pyc_t_iallgather), FASTKW, "iallgather(...) -> Request (see allgather)" },
    { "iallgatherv", FN(pyc_t_iallgatherv), FASTKW,
      "iallgatherv(...) -> Request (see allgatherv)" },
    { "ireduce_scatter_block", FN(pyc_t_ireduce_scatter_block), FASTKW,
      "ireduce_scatter_block(...) -> Request (see reduce_scatter_block)" },
    { "ireduce_scatter", FN(pyc_t_ireduce_scatter), FASTKW,
      "ireduce_scatter(...) -> Request (see reduce_scatter)" },
    { "ialltoall", FN(pyc_t_ialltoall), FASTKW, "ialltoall(...) -> Request (see alltoall)" },
    { "ialltoallv", FN(pyc_t_ialltoallv), FASTKW, "ialltoallv(...) -> Request (see alltoallv)" },
    { "igather", FN(pyc_t_igather), FASTKW, "igather(...) -> Request (see gather)" },
    { "igatherv", FN(pyc_t_igatherv), FASTKW, "igatherv(...) -> Request (see gatherv)" },
    { "iscatter", FN(pyc_t_iscatter), FASTKW, "iscatter(...) -> Request (see scatter)" },
    { "iscatterv", FN(pyc_t_iscatterv), FASTKW, "iscatterv(...) -> Request (see scatterv)" },
    { "iscan", FN(pyc_t_iscan), FASTKW, "iscan(...) -> Request (see scan)" },
    { "iexscan", FN(pyc_t_iexscan), FASTKW, "iexscan(...) -> Request (see exscan)" },
    { "split", FN(pyc_team_split), FASTKW,
      "split(color, key=0) -> a new Team of the ranks with the same color, ordered by key "
      "then rank; None for a negative color or None (collective)" },
    { "dup", FN(pyc_team_dup), METH_NOARGS, "dup() -> a new Team of the same ranks (collective)" },
    { "free", FN(pyc_team_free), METH_NOARGS,
      "free(): frees a team made by split() or dup() (collective; not the world)" },
    { "__enter__", FN(pyc_team_enter), METH_NOARGS, "with team: ... frees it at the end" },
    { "__exit__", FN(pyc_team_exit), METH_FASTCALL, "frees the team (see free())" },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef team_getset[] = {
    { "rank", (getter)t_rank, NULL, "this process's rank in the team", NULL },
    { "size", (getter)t_size, NULL, "the number of ranks", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject pyc_team_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "collie.Team",
    .tp_basicsize = sizeof(pyc_team),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A team of ranks (collie.init() returns the world)",
    .tp_repr = (reprfunc)t_repr,
    .tp_methods = team_methods,
    .tp_getset = team_getset,
};

PyObject *pyc_team_new(collie_team_t *team) {
    pyc_team *t = PyObject_New(pyc_team, &pyc_team_type);
    if (!t)
        return NULL;
    t->team = team;
    t->rank = capi.rank(team);
    t->size = capi.size(team);
    t->generation = pyc_generation;
    t->sub = 0;
    return (PyObject *)t;
}
