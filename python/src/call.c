/*
 * call.c — argument parsing, buffer preparation and blocking execution of one collective
 * (see call.h).  Split-phase requests: request.c.
 */
#include "call.h"

unsigned long pyc_generation = 1;
long pyc_active_requests;

int pyc_team_live(const pyc_team *t, const char *fn) {
    if (t->team && t->generation == pyc_generation)
        return 1;
    if (t->generation == pyc_generation)
        pyc_raise(COLLIE_ERR_ARG, "%s: this team was freed (Team.free())", fn);
    else
        pyc_raise(COLLIE_ERR_ARG, "%s: this team is gone (collie.finalize() was called)", fn);
    return 0;
}

static int keyword(const char *fn, PyObject *key, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0)
            return i;
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, key);
    return -1;
}

int pyc_parse(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              const char *const *names, int n, int nreq, PyObject **vals) {
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fn, n,
                     nargs);
        return -1;
    }
    for (int i = 0; i < n; i++)
        vals[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        int i = keyword(fn, PyTuple_GET_ITEM(kwnames, k), names, n);
        if (i < 0)
            return -1;
        if (vals[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                         names[i]);
            return -1;
        }
        vals[i] = args[nargs + k];
    }
    for (int i = 0; i < nreq; i++)
        if (!vals[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
            return -1;
        }
    return 0;
}

int pyc_call_root(pyc_call *c, PyObject *root) {
    if (!root || root == Py_None)
        return 0;
    long r = PyLong_AsLong(root);
    if (r == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        pyc_raise(COLLIE_ERR_ARG, "%s: root must be an int (a rank of the team)", c->fn);
        return -1;
    }
    if (r < -1 || r > 0x7fffffffL) {
        pyc_raise(COLLIE_ERR_ARG, "%s: root %ld is not a rank", c->fn, r);
        return -1;
    }
    c->root = (int)r;
    return 0;
}

/* bcast: the one buffer, in place. */
static int prepare_bcast(pyc_call *c, PyObject *x) {
    if (pyc_buf_get(x, 1, c->fn, "x", &c->out))
        return -1;
    c->recv = c->out.ptr;
    c->count = c->out.count;
    c->dtype = c->out.dtype;
    c->result = Py_NewRef(x);
    return 0;
}

/* allreduce, reduce, scan, exscan: x read, out written where the result goes (a new array
 * if None; none at a non-root of reduce nor at rank 0 of exscan, whose result is None). */
static int prepare_reduction(pyc_team *t, pyc_call *c, PyObject *x, PyObject *out,
                             PyObject *op) {
    if (pyc_buf_get(x, 0, c->fn, "x", &c->x))
        return -1;
    c->send = c->x.ptr;
    c->count = c->x.count;
    c->dtype = c->x.dtype;
    c->op = capi.builtin[0]; /* "sum" */
    if (op && pyc_op_resolve(op, c->fn, &c->op, &c->user))
        return -1;
    int exscan0 = c->coll == PYC_EXSCAN && t->rank == 0; /* result undefined: None */
    if ((c->coll == PYC_REDUCE && c->root != t->rank) ||
        (exscan0 && (!out || out == Py_None))) {
        c->result = Py_NewRef(Py_None);
        return 0;
    }
    if (!out || out == Py_None) {
        if (!(c->result = pyc_buf_new_like(x, &c->x)))
            return -1;
    } else {
        c->result = Py_NewRef(out);
    }
    if (pyc_buf_get(c->result, 1, c->fn, "out", &c->out) || pyc_buf_match(&c->x, &c->out, c->fn))
        return -1;
    c->recv = c->out.ptr;
    if (c->send == c->recv)
        c->send = COLLIE_IN_PLACE;
    if (exscan0)   /* out is checked and passed, and left untouched */
        Py_SETREF(c->result, Py_NewRef(Py_None));
    return 0;
}

int pyc_call_prepare(pyc_team *t, pyc_call *c, PyObject *x, PyObject *out, PyObject *op,
                     PyObject *root) {
    int st = 0;
    if (pyc_reentered(c->fn) || !pyc_team_live(t, c->fn) || pyc_call_root(c, root))
        st = -1;
    else if (c->coll == PYC_BCAST)
        st = prepare_bcast(c, x);
    else if (c->coll != PYC_BARRIER)
        st = prepare_reduction(t, c, x, out, op);
    else
        c->result = Py_NewRef(Py_None);
    if (st)
        pyc_call_release(c);
    return st;
}

void pyc_call_release(pyc_call *c) {
    PyMem_Free(c->arrays);
    c->arrays = NULL;
    pyc_buf_release(&c->x);
    pyc_buf_release(&c->out);
    Py_CLEAR(c->result);
}

static int run(pyc_team *t, pyc_call *c) {
    int st;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    switch (c->coll) {
    case PYC_ALLREDUCE:
        st = capi.allreduce(t->team, c->send, c->recv, c->count, c->dtype, c->op);
        break;
    case PYC_REDUCE:
        st = capi.reduce(t->team, c->send, c->recv, c->count, c->dtype, c->op, c->root);
        break;
    case PYC_BCAST:
        st = capi.bcast(t->team, c->recv, c->count, c->dtype, c->root);
        break;
    case PYC_BARRIER:
        st = capi.barrier(t->team);
        break;
    default:
        st = pyc_colls_run(t, c);
        break;
    }
    pyc_unlock();
    Py_END_ALLOW_THREADS
    return st;
}

PyObject *pyc_call_run(pyc_team *t, pyc_call *c) {
    int st = run(t, c);
    PyObject *result = c->result;
    c->result = NULL;
    pyc_call_release(c);
    if (pyc_user_op_check(c->user) == 0 && st == COLLIE_OK)
        return result;
    if (!PyErr_Occurred())
        pyc_raise_status(st);
    Py_DECREF(result);
    return NULL;
}
