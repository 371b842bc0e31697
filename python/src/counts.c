/*
 * counts.c — see counts.h.
 */
#include "counts.h"

#include <stdint.h>

size_t *pyc_call_arrays(pyc_call *c, int n, int P) {
    PyMem_Free(c->arrays);
    c->arrays = PyMem_Calloc((size_t)n * (size_t)(P > 0 ? P : 1), sizeof(size_t));
    if (!c->arrays)
        PyErr_NoMemory();
    return c->arrays;
}

/* One entry: a non-negative int (anything with __index__). */
static int entry(PyObject *item, const char *fn, const char *what, Py_ssize_t i, size_t *dst) {
    PyObject *n = PyNumber_Index(item);
    Py_ssize_t v = n ? PyLong_AsSsize_t(n) : -1;
    Py_XDECREF(n);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        pyc_raise(COLLIE_ERR_ARG, "%s: %s[%zd] is not an int of C range (a %.100s)", fn, what,
                  i, Py_TYPE(item)->tp_name);
        return -1;
    }
    if (v < 0) {
        pyc_raise(COLLIE_ERR_ARG, "%s: %s[%zd] is %zd (negative)", fn, what, i, v);
        return -1;
    }
    *dst = (size_t)v;
    return 0;
}

int pyc_counts(PyObject *seq, int P, const char *fn, const char *what, size_t *dst) {
    if (!seq || seq == Py_None) {
        pyc_raise(COLLIE_ERR_ARG, "%s: %s is required (one int per rank)", fn, what);
        return -1;
    }
    PyObject *fast = PySequence_Fast(seq, "");
    if (!fast) {
        PyErr_Clear();
        pyc_raise(COLLIE_ERR_ARG, "%s: %s must be a sequence of ints, one per rank, not a "
                  "%.100s", fn, what, Py_TYPE(seq)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int st = 0;
    if (n != P) {
        pyc_raise(COLLIE_ERR_ARG, "%s: %s has %zd entries for a team of %d ranks", fn, what, n,
                  P);
        st = -1;
    }
    for (Py_ssize_t i = 0; i < n && !st; i++)
        st = entry(PySequence_Fast_GET_ITEM(fast, i), fn, what, i, &dst[i]);
    Py_DECREF(fast);
    return st;
}

int pyc_total(const size_t *counts, int P, const char *fn, const char *what, size_t *sum) {
    size_t s = 0;
    for (int j = 0; j < P; j++) {
        if (counts[j] > (size_t)PY_SSIZE_T_MAX - s) {
            pyc_raise(COLLIE_ERR_ARG, "%s: the sum of %s overflows", fn, what);
            return -1;
        }
        s += counts[j];
    }
    *sum = s;
    return 0;
}

int pyc_displs(PyObject *seq, int P, const size_t *counts, const char *fn, const char *what,
               size_t *dst) {
    if (seq && seq != Py_None)
        return pyc_counts(seq, P, fn, what, dst);
    size_t at = 0;
    if (pyc_total(counts, P, fn, "counts", &at))
        return -1;
    at = 0;
    for (int j = 0; j < P; j++) {
        dst[j] = at;
        at += counts[j];
    }
    return 0;
}

size_t pyc_extent(const size_t *counts, const size_t *displs, int P) {
    size_t end = 0;
    for (int j = 0; j < P; j++)   /* entries < 2^63 each: the sum fits a size_t */
        if (counts[j] && displs[j] + counts[j] > end)
            end = displs[j] + counts[j];
    return end;
}
