/*
 * request.c — collie.Request: a split-phase collective started by Team.iallreduce & co.
 * It holds the call's buffers (exported, so they stay valid) until it completes.
 * test(timeout_ms=0) -> bool (True once complete), wait() -> the call's result.
 * Dropping an unfinished request waits for it (collie_request_free does).
 */
#include "call.h"

typedef struct {
    PyObject_HEAD
    collie_request_t *req;   /* NULL once completed */
    pyc_call call;
    unsigned long generation;
    int status;              /* the completion status (reported once) */
} pyc_request;

static int start(pyc_team *t, pyc_call *c, collie_request_t **req) {
    int st;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    switch (c->coll) {
    case PYC_ALLREDUCE:
        st = capi.iallreduce(t->team, c->send, c->recv, c->count, c->dtype, c->op, req);
        break;
    case PYC_REDUCE:
        st = capi.ireduce(t->team, c->send, c->recv, c->count, c->dtype, c->op, c->root, req);
        break;
    case PYC_BCAST:
        st = capi.ibcast(t->team, c->recv, c->count, c->dtype, c->root, req);
        break;
    case PYC_BARRIER:
        st = capi.ibarrier(t->team, req);
        break;
    default:
        st = pyc_colls_start(t, c, req);
        break;
    }
    pyc_unlock();
    Py_END_ALLOW_THREADS
    return st;
}

PyObject *pyc_call_start(pyc_team *t, pyc_call *c) {
    pyc_request *r = PyObject_New(pyc_request, &pyc_request_type);
    if (!r) {
        pyc_call_release(c);
        return NULL;
    }
    r->req = NULL;
    r->call = *c;
    r->generation = pyc_generation;
    r->status = COLLIE_OK;
    int st = start(t, &r->call, &r->req);
    if (st) {
        r->req = NULL;
        pyc_raise_status(st);
        Py_DECREF(r);
        return NULL;
    }
    pyc_active_requests++;
    return (PyObject *)r;
}

/* The request ended with status st: free it, release the buffers. */
static void complete(pyc_request *r, int st) {
    collie_request_t *req = r->req;
    r->req = NULL;
    r->status = st;
    pyc_active_requests--;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    capi.request_free(req);
    pyc_unlock();
    Py_END_ALLOW_THREADS
    pyc_buf_release(&r->call.x);
    pyc_buf_release(&r->call.out);
}

/* Runs collie_test (or wait when timeout is COLLIE_BLOCK): 1 complete, 0 not yet, -1 error. */
static int progress(pyc_request *r, int timeout_ms, const char *fn) {
    if (!r->req && r->status != COLLIE_OK) {
        pyc_raise(r->status, "%s: this request failed earlier (status %d)", fn, r->status);
        return -1;
    }
    if (!r->req)
        return 1;
    if (r->generation != pyc_generation) {
        pyc_raise(COLLIE_ERR_ARG, "%s: the request's team is gone (collie.finalize())", fn);
        return -1;
    }
    int st;
    collie_request_t *req = r->req;
    if (pyc_reentered(fn))
        return -1;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    st = timeout_ms == COLLIE_BLOCK ? capi.wait(req) : capi.test(req, timeout_ms);
    pyc_unlock();
    Py_END_ALLOW_THREADS
    if (st == COLLIE_TIMEOUT)
        return 0;
    if (st != COLLIE_OK)
        pyc_raise_status(st);  /* the message is this thread's last error: take it first */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    complete(r, st);
    PyErr_Restore(type, value, tb);
    if (st != COLLIE_OK)
        return -1;
    return pyc_user_op_check(r->call.user) ? -1 : 1;
}

static PyObject *request_test(pyc_request *r, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
    static const char *const names[] = { "timeout_ms" };
    PyObject *v[1];
    if (pyc_parse("test", args, nargs, kwnames, names, 1, 0, v))
        return NULL;
    long t = 0;
    if (v[0] && v[0] != Py_None && (t = PyLong_AsLong(v[0])) == -1 && PyErr_Occurred())
        return NULL;
    if (t < 0 || t > 0x7fffffffL)
        return pyc_raise(COLLIE_ERR_ARG, "test: timeout_ms must be >= 0 (use wait() to block)");
    int done = progress(r, (int)t, "test");
    return done < 0 ? NULL : PyBool_FromLong(done);
}

static PyObject *request_wait(pyc_request *r, PyObject *unused) {
    if (progress(r, COLLIE_BLOCK, "wait") < 0)
        return NULL;
    return Py_NewRef(r->call.result ? r->call.result : Py_None);
}

static PyObject *request_done(pyc_request *r, void *unused) { return PyBool_FromLong(!r->req); }

static void request_dealloc(pyc_request *r) {
    /* collie_request_free waits for an active request; not from inside a user operation
     * (this thread holds the library: the request is leaked instead). */
    if (r->req && r->generation == pyc_generation && !pyc_inside())
        complete(r, COLLIE_OK);
    pyc_call_release(&r->call);
    PyObject_Free(r);
}

static PyMethodDef request_methods[] = {
    { "test", (PyCFunction)(void (*)(void))request_test, METH_FASTCALL | METH_KEYWORDS,
      "test(timeout_ms=0) -> True once the collective is complete" },
    { "wait", (PyCFunction)request_wait, METH_NOARGS,
      "wait() -> blocks until complete; returns the call's result (out, or None)" },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef request_getset[] = {
    { "done", (getter)request_done, NULL, "True once the collective completed", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject pyc_request_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "collie.Request",
    .tp_basicsize = sizeof(pyc_request),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A split-phase collective: test(timeout_ms=0) -> bool, wait()",
    .tp_dealloc = (destructor)request_dealloc,
    .tp_methods = request_methods,
    .tp_getset = request_getset,
};
