/*
 * module.c — collie._collie, the extension behind the collie package: loading the library
 * (_load), joining and leaving the world (_init, _finalize), the Python helpers the C code
 * calls (_set_helpers).  The public API is collie/__init__.py.
 */
#include "call.h"
#include "ndarray.h"

static PyObject *world;   /* the world Team while initialised */

static PyObject *m_load(PyObject *self, PyObject *arg) {
    const char *path = PyUnicode_AsUTF8(arg);
    if (!path || capi_load(path))
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *m_init(PyObject *self, PyObject *unused) {
    if (!capi_loaded)
        return pyc_raise(COLLIE_ERR_ARG, "collie: no library loaded (call collie.init())");
    if (pyc_reentered("collie.init"))
        return NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    st = capi.init();
    pyc_unlock();
    Py_END_ALLOW_THREADS
    if (st)
        return pyc_raise_status(st);
    world = pyc_team_new(capi.world());
    return Py_XNewRef(world);
}

static PyObject *m_finalize(PyObject *self, PyObject *unused) {
    if (!capi_loaded)
        return pyc_raise(COLLIE_ERR_ARG, "collie.finalize: collie.init() was not called");
    if (pyc_reentered("collie.finalize"))
        return NULL;
    if (pyc_active_requests > 0)
        return pyc_raise(COLLIE_ERR_ARG, "collie.finalize: %ld split-phase collectives are "
                         "still in progress (wait() for them first)", pyc_active_requests);
    int st;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    st = capi.finalize();
    pyc_unlock();
    Py_END_ALLOW_THREADS
    if (st)
        return pyc_raise_status(st);
    pyc_generation++;
    Py_CLEAR(world);
    pyc_user_ops_free();
    Py_RETURN_NONE;
}

static PyObject *m_world(PyObject *self, PyObject *unused) {
    return Py_NewRef(world ? world : Py_None);
}

static PyObject *m_version(PyObject *self, PyObject *unused) {
    return capi_loaded ? PyUnicode_FromString(capi.version()) : Py_NewRef(Py_None);
}

static PyObject *m_library(PyObject *self, PyObject *unused) {
    return capi_loaded ? PyUnicode_DecodeFSDefault(capi_path()) : Py_NewRef(Py_None);
}

static int set_helper(PyObject *dict, const char *name, PyObject **slot) {
    PyObject *v = PyDict_GetItemString(dict, name);
    if (!v) {
        PyErr_Format(PyExc_KeyError, "_set_helpers: missing %s", name);
        return -1;
    }
    Py_XSETREF(*slot, Py_NewRef(v));
    return 0;
}

static PyObject *m_set_helpers(PyObject *self, PyObject *dict) {
    if (!PyDict_Check(dict))
        return PyErr_Format(PyExc_TypeError, "_set_helpers takes a dict");
    if (set_helper(dict, "CollieError", &helpers.error) ||
        set_helper(dict, "adapt", &helpers.adapt) || set_helper(dict, "empty", &helpers.empty) ||
        set_helper(dict, "apply", &helpers.apply) || set_helper(dict, "user_op", &helpers.user_op))
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    { "_load", m_load, METH_O, "_load(path): dlopen the collie library to use" },
    { "_init", m_init, METH_NOARGS, "_init() -> the world Team (collie_init)" },
    { "_finalize", m_finalize, METH_NOARGS, "_finalize() (collie_finalize)" },
    { "_world", m_world, METH_NOARGS, "_world() -> the world Team or None" },
    { "_version", m_version, METH_NOARGS, "_version() -> the loaded library's version" },
    { "_library", m_library, METH_NOARGS, "_library() -> the loaded library's path" },
    { "_set_helpers", m_set_helpers, METH_O, "_set_helpers(dict): Python helpers" },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "collie._collie", "collie's C extension (use the collie package)", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__collie(void) {
    if (pyc_ndarray_import() || pyc_lock_init() || PyType_Ready(&pyc_team_type) < 0 ||
        PyType_Ready(&pyc_request_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (PyModule_AddObjectRef(m, "Team", (PyObject *)&pyc_team_type) ||
        PyModule_AddObjectRef(m, "Request", (PyObject *)&pyc_request_type) ||
        PyModule_AddIntConstant(m, "BFLOAT16", COLLIE_BFLOAT16) ||
        PyModule_AddIntConstant(m, "OP_COMMUTATIVE", COLLIE_OP_COMMUTATIVE)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
