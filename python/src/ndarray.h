/*
 * ndarray.h — the fast path for numpy arrays (numpy's C API): pointer, type and layout read
 * straight from the array, new arrays made without a Python call.  Anything it does not
 * take (other types, bfloat16, read-only, strided) goes the general way (buffers.c), which
 * explains refusals.
 */
#ifndef PYCOLLIE_NDARRAY_H
#define PYCOLLIE_NDARRAY_H

#include "buffers.h"

int pyc_ndarray_import(void);   /* at module init: 0, or -1 with an error */
/* 1: b filled (b->holder keeps obj); 0: not taken (nothing set). */
int pyc_ndarray_get(PyObject *obj, int writable, pyc_buf *b);
/* An uninitialised array like obj (same shape, dtype, memory order), or NULL if obj is not
 * an ndarray (no error set). */
PyObject *pyc_ndarray_new_like(PyObject *obj);
/* An uninitialised C-order array of obj's dtype and shape dims[nd], or NULL if obj is not an
 * ndarray (no error set). */
PyObject *pyc_ndarray_empty(PyObject *obj, int nd, const Py_ssize_t *dims);
/* obj's number of dimensions (its shape into dims[max]), or -1 if obj is not an ndarray. */
int pyc_ndarray_shape(PyObject *obj, Py_ssize_t *dims, int max);

#endif
