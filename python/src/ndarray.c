/*
 * ndarray.c — see ndarray.h.
 */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "ndarray.h"

#include <numpy/arrayobject.h>

int pyc_ndarray_import(void) {
    import_array1(-1);
    return 0;
}

static collie_dtype_t dtype_of(PyArrayObject *a) {
    PyArray_Descr *d = PyArray_DESCR(a);
    if (!PyArray_ISNBO(d->byteorder))
        return 0;
    int size = (int)PyArray_ITEMSIZE(a);
    if (PyArray_ISSIGNED(a))
        return size == 1 ? COLLIE_INT8 : size == 2 ? COLLIE_INT16
             : size == 4 ? COLLIE_INT32 : size == 8 ? COLLIE_INT64 : 0;
    if (PyArray_ISUNSIGNED(a))
        return size == 1 ? COLLIE_UINT8 : size == 2 ? COLLIE_UINT16
             : size == 4 ? COLLIE_UINT32 : size == 8 ? COLLIE_UINT64 : 0;
    switch (PyArray_TYPE(a)) {
    case NPY_HALF: return COLLIE_FLOAT16;
    case NPY_FLOAT: return COLLIE_FLOAT32;
    case NPY_DOUBLE: return COLLIE_FLOAT64;
    default: return 0;
    }
}

int pyc_ndarray_get(PyObject *obj, int writable, pyc_buf *b) {
    if (!PyArray_Check(obj))
        return 0;
    PyArrayObject *a = (PyArrayObject *)obj;
    collie_dtype_t t = dtype_of(a);
    int c = PyArray_IS_C_CONTIGUOUS(a), f = PyArray_IS_F_CONTIGUOUS(a);
    if (!t || !(c || f) || (writable && !PyArray_ISWRITEABLE(a)))
        return 0;
    b->holder = Py_NewRef(obj);
    b->ptr = PyArray_DATA(a);
    b->count = (size_t)PyArray_SIZE(a);
    b->bytes = (size_t)PyArray_NBYTES(a);
    b->dtype = t;
    b->c_order = c;
    b->f_order = f;
    return 1;
}

PyObject *pyc_ndarray_new_like(PyObject *obj) {
    if (!PyArray_Check(obj))
        return NULL;
    return PyArray_NewLikeArray((PyArrayObject *)obj, NPY_KEEPORDER, NULL, 0);
}

PyObject *pyc_ndarray_empty(PyObject *obj, int nd, const Py_ssize_t *dims) {
    if (!PyArray_Check(obj))
        return NULL;
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)obj);
    Py_INCREF(d);   /* PyArray_Empty steals it */
    return PyArray_Empty(nd, (npy_intp *)dims, d, 0);
}

int pyc_ndarray_shape(PyObject *obj, Py_ssize_t *dims, int max) {
    if (!PyArray_Check(obj))
        return -1;
    PyArrayObject *a = (PyArrayObject *)obj;
    int nd = PyArray_NDIM(a);
    for (int i = 0; i < nd && i < max; i++)
        dims[i] = (Py_ssize_t)PyArray_DIM(a, i);
    return nd;
}
