/*
 * buffers.h — turning a Python object into (pointer, count, collie datatype) without a
 * copy: the buffer protocol first (numpy arrays, bytearray, memoryview, array.array ...),
 * then DLPack (__dlpack__: a CPU torch.Tensor ...), then collie's Python adapter (bfloat16
 * arrays of ml_dtypes, which numpy cannot export as a buffer).  Non-contiguous data is
 * refused with an error, never copied.
 */
#ifndef PYCOLLIE_BUFFERS_H
#define PYCOLLIE_BUFFERS_H

#include "dlpack.h"

typedef struct {
    Py_buffer view;      /* view.obj != NULL while held (buffer protocol) */
    pyc_dlpack dl;       /* dl.managed != NULL while held (DLPack) */
    PyObject *holder;    /* the adapter's object (owned), or NULL */
    void *ptr;
    size_t bytes, count;
    collie_dtype_t dtype;
    int c_order, f_order;
} pyc_buf;

/* 0 on success; -1 with CollieError set (naming fn and what, e.g. "allreduce: out"). */
int pyc_buf_get(PyObject *obj, int writable, const char *fn, const char *what, pyc_buf *b);
void pyc_buf_release(pyc_buf *b);
/* A new numpy array of b's shape and datatype (for out=None); `obj` is what b came from. */
PyObject *pyc_buf_new_like(PyObject *obj, const pyc_buf *b);
/* x and out must agree: same datatype and count, the same memory order, no partial overlap. */
int pyc_buf_match(const pyc_buf *x, const pyc_buf *out, const char *fn);
/* The shape of the object b views (obj: what b came from) into dims[PYC_MAXDIM]: the
 * number of dimensions, or -1 with CollieError set. */
enum { PYC_MAXDIM = 64 };
int pyc_buf_shape(PyObject *obj, const pyc_buf *b, Py_ssize_t *dims, const char *fn);
/* A new C-order array of shape dims[nd] and b's datatype (a numpy array of obj's dtype when
 * obj is one, so ml_dtypes' bfloat16 stays bfloat16). */
PyObject *pyc_buf_new_shape(PyObject *obj, const pyc_buf *b, int nd, const Py_ssize_t *dims);
const char *pyc_dtype_name(collie_dtype_t t);
size_t pyc_dtype_size(collie_dtype_t t);

#endif
