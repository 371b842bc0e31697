/*
 * buffers.h — turning a Python object into (pointer, count, collie datatype) without a
 * copy: the buffer protocol first (numpy arrays, bytearray, memoryview, array.array ...),
 * else collie's Python adapter (bfloat16 arrays of ml_dtypes, objects with __dlpack__ such
 * as a CPU torch.Tensor).  Non-contiguous data is refused, never copied silently.
 */
#ifndef PYCOLLIE_BUFFERS_H
#define PYCOLLIE_BUFFERS_H

#include "capi.h"

typedef struct {
    Py_buffer view;      /* view.obj != NULL while held */
    PyObject *holder;    /* the adapter's object (owned), or NULL */
    collie_dtype_t dtype;
    size_t count;
    int c_order, f_order;
} pyc_buf;

/* 0 on success; -1 with CollieError set (naming fn and what, e.g. "allreduce: out"). */
int pyc_buf_get(PyObject *obj, int writable, const char *fn, const char *what, pyc_buf *b);
void pyc_buf_release(pyc_buf *b);
/* A new numpy array of b's shape and datatype (for out=None); `obj` is what b came from. */
PyObject *pyc_buf_new_like(PyObject *obj, const pyc_buf *b);
/* x and out must agree: same datatype and count, the same memory order. */
int pyc_buf_match(const pyc_buf *x, const pyc_buf *out, const char *fn);

const char *pyc_dtype_name(collie_dtype_t t);
size_t pyc_dtype_size(collie_dtype_t t);

#endif
