/*
 * ops.c — see ops.h.
 */
#include "ops.h"

#include "buffers.h"

struct pyc_user_op {
    collie_op_t op;
    PyObject *fn;      /* the callable (owned) */
    PyObject *exc;     /* the first exception fn raised during the current call, or NULL */
};

static PyObject *registry; /* dict: the op object given -> capsule of its pyc_user_op */

/* COLLIE_OPID_USER_ANY of src/types/types.h: an op identity that matches any other. */
#define PYC_OPID_USER_ANY 0xFFFFFFFFu

static int builtin(PyObject *op, collie_op_t *out) {
    for (int i = 0; i < PYC_NOPS; i++)
        if (PyUnicode_CompareWithASCIIString(op, pyc_op_names[i]) == 0) {
            *out = capi.builtin[i];
            return 0;
        }
    return -1;
}

/* The pending exception as one object (its traceback attached); clears it. */
static PyObject *fetch_exception(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

static void trampoline(const void *in, void *inout, size_t count, collie_dtype_t dtype,
                       void *ctx) {
    pyc_user_op *u = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!u->exc) {
        size_t bytes = count * pyc_dtype_size(dtype);
        PyObject *a = PyMemoryView_FromMemory((char *)in, (Py_ssize_t)bytes, PyBUF_READ);
        PyObject *b = PyMemoryView_FromMemory(inout, (Py_ssize_t)bytes, PyBUF_WRITE);
        PyObject *r = a && b ? PyObject_CallFunction(helpers.apply, "OOOK", u->fn, a, b,
                                                     (unsigned long long)dtype)
                             : NULL;
        if (!r)
            u->exc = fetch_exception();
        Py_XDECREF(r);
        Py_XDECREF(a);
        Py_XDECREF(b);
    }
    PyGILState_Release(g);
}

static void free_capsule(PyObject *capsule) {
    pyc_user_op *u = PyCapsule_GetPointer(capsule, "collie.user_op");
    if (!u)
        return;
    if (capi_loaded && u->op)
        capi.op_free(u->op);
    Py_XDECREF(u->fn);
    Py_XDECREF(u->exc);
    PyMem_Free(u);
}

static pyc_user_op *create(PyObject *op, const char *fn) {
    PyObject *spec = PyObject_CallOneArg(helpers.user_op, op); /* (callable, flags) */
    if (!spec)
        return NULL;
    PyObject *callable;
    unsigned flags;
    if (!PyArg_ParseTuple(spec, "OI", &callable, &flags)) {
        Py_DECREF(spec);
        return NULL;
    }
    pyc_user_op *u = PyMem_Calloc(1, sizeof *u);
    if (!u) {
        Py_DECREF(spec);
        return (pyc_user_op *)PyErr_NoMemory();
    }
    u->fn = Py_NewRef(callable);
    Py_DECREF(spec);
    PyObject *capsule = PyCapsule_New(u, "collie.user_op", free_capsule);
    if (!capsule) {
        Py_DECREF(u->fn);
        PyMem_Free(u);
        return NULL;
    }
    int st = capi.op_create(trampoline, u, flags, &u->op);
    /* A C user op's identity in the calls' mismatch check is its creation index on the
     * rank, which assumes every rank creates its ops in the same order.  Here an op is
     * created at a callable's first use on this rank, so ranks that used other callables
     * before (on a sub-team, or different ones) would disagree on the same call's op:
     * "any", as libcollie_mpi gives the MPI ops it wraps lazily. */
    if (!st && capi.op_set_identity)
        capi.op_set_identity(u->op, PYC_OPID_USER_ANY);
    if (st || PyDict_SetItem(registry, op, capsule)) {
        Py_DECREF(capsule);
        return st ? (pyc_user_op *)pyc_raise_status(st) : NULL;
    }
    Py_DECREF(capsule);
    return u;
}

int pyc_op_resolve(PyObject *op, const char *fn, collie_op_t *out, pyc_user_op **user) {
    *user = NULL;
    if (PyUnicode_Check(op)) {
        if (builtin(op, out) == 0)
            return 0;
        pyc_raise(COLLIE_ERR_ARG, "%s: unknown op '%s' (sum, prod, min, max, land, lor, lxor, "
                  "band, bor, bxor, or a callable f(a, b))", fn, PyUnicode_AsUTF8(op));
        return -1;
    }
    if (!PyCallable_Check(op)) {
        pyc_raise(COLLIE_ERR_ARG, "%s: op must be a name such as \"sum\" or a callable, not "
                  "a %.100s", fn, Py_TYPE(op)->tp_name);
        return -1;
    }
    if (!registry && !(registry = PyDict_New()))
        return -1;
    PyObject *capsule = PyDict_GetItemWithError(registry, op);
    pyc_user_op *u = capsule ? PyCapsule_GetPointer(capsule, "collie.user_op")
                             : (PyErr_Occurred() ? NULL : create(op, fn));
    if (!u)
        return -1;
    *out = u->op;
    *user = u;
    return 0;
}

int pyc_user_op_check(pyc_user_op *u) {
    if (!u || !u->exc)
        return 0;
    PyObject *exc = u->exc;
    u->exc = NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return -1;
}

void pyc_user_ops_free(void) { Py_CLEAR(registry); }
