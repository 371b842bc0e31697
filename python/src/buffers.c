/*
 * buffers.c — see buffers.h.
 */
#include "buffers.h"

#include "ndarray.h"

#include <string.h>

/* Native-order format character + item size -> collie datatype; 0 if not supported. */
static collie_dtype_t dtype_of(char f, Py_ssize_t size) {
    switch (f) {
    case 'e': return size == 2 ? COLLIE_FLOAT16 : 0;
    case 'f': return size == 4 ? COLLIE_FLOAT32 : 0;
    case 'd': return size == 8 ? COLLIE_FLOAT64 : 0;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
        return size == 1 ? COLLIE_INT8 : size == 2 ? COLLIE_INT16
             : size == 4 ? COLLIE_INT32 : size == 8 ? COLLIE_INT64 : 0;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
        return size == 1 ? COLLIE_UINT8 : size == 2 ? COLLIE_UINT16
             : size == 4 ? COLLIE_UINT32 : size == 8 ? COLLIE_UINT64 : 0;
    default: return 0;
    }
}

static collie_dtype_t parse_format(const char *fmt, Py_ssize_t itemsize) {
    if (!fmt)
        return COLLIE_UINT8;
    if (*fmt == '@' || *fmt == '=' || *fmt == '<')
        fmt++;
    if (!fmt[0] || fmt[1])
        return 0;
    return dtype_of(fmt[0], itemsize);
}

static const char *const dtype_names[] = {
    "invalid", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64" };

const char *pyc_dtype_name(collie_dtype_t t) {
    return t < sizeof dtype_names / sizeof dtype_names[0] ? dtype_names[t] : "unsupported";
}

size_t pyc_dtype_size(collie_dtype_t t) {
    switch (t) {
    case COLLIE_INT8: case COLLIE_UINT8: return 1;
    case COLLIE_INT16: case COLLIE_UINT16: case COLLIE_FLOAT16: case COLLIE_BFLOAT16: return 2;
    case COLLIE_INT32: case COLLIE_UINT32: case COLLIE_FLOAT32: return 4;
    default: return 8;
    }
}

static int try_view(PyObject *obj, int writable, pyc_buf *b) {
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    return PyObject_GetBuffer(obj, &b->view, flags);
}

/* Clears the pending Python error and returns its text (new reference, or NULL). */
static PyObject *take_error_text(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
    return text;
}

static int from_dlpack(PyObject *obj, const char *fn, const char *what, pyc_buf *b) {
    if (pyc_dlpack_get(obj, fn, what, &b->dl))
        return -1;
    b->ptr = b->dl.data;
    b->bytes = b->dl.bytes;
    b->dtype = b->dl.dtype;
    b->c_order = b->dl.c_order;
    b->f_order = b->dl.f_order;
    return 0;
}

/* View the adapter's (object, dtype code) for obj: 0 done, 1 not adapted (the adapter
 * returned None), -1 error set. */
static int adapt(PyObject *obj, int writable, pyc_buf *b) {
    PyObject *r = helpers.adapt ? PyObject_CallOneArg(helpers.adapt, obj) : Py_NewRef(Py_None);
    if (!r)
        return -1; /* the adapter raised a clear error of its own */
    if (r == Py_None) {
        Py_DECREF(r);
        return 1;
    }
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "collie adapter: expected (object, dtype code)");
        return -1;
    }
    b->holder = Py_NewRef(PyTuple_GET_ITEM(r, 0));
    b->dtype = (collie_dtype_t)PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(r, 1));
    Py_DECREF(r);
    if (PyErr_Occurred() || try_view(b->holder, writable, b))
        return -1;
    b->ptr = b->view.buf;
    b->bytes = (size_t)b->view.len;
    b->c_order = PyBuffer_IsContiguous(&b->view, 'C');
    b->f_order = PyBuffer_IsContiguous(&b->view, 'F');
    return 0;
}

/* Nothing could view obj: CollieError with the buffer protocol's refusal `why`. */
static int refuse(PyObject *obj, PyObject *why, const char *fn, const char *what) {
    const char *text = why ? PyUnicode_AsUTF8(why) : NULL;
    PyErr_Clear();
    pyc_raise(COLLIE_ERR_ARG, "%s: %s: a %.100s is not a buffer collie can use%s%s", fn, what,
              Py_TYPE(obj)->tp_name, text ? ": " : "", text ? text : "");
    return -1;
}

/* Not a usable buffer: the adapter, then DLPack. */
static int fallback(PyObject *obj, int writable, const char *fn, const char *what, pyc_buf *b) {
    PyObject *why = take_error_text();
    int st = adapt(obj, writable, b);
    if (st < 0 && b->holder) {        /* the adapted object refused too: say why */
        Py_XDECREF(why);
        why = take_error_text();
        st = refuse(obj, why, fn, what);
    } else if (st > 0 && pyc_dlpack_has(obj)) {
        st = from_dlpack(obj, fn, what, b);
        if (st && !PyErr_ExceptionMatches(helpers.error))   /* say why the buffer failed */
            st = refuse(obj, why, fn, what);
    } else if (st > 0) {
        st = refuse(obj, why, fn, what);
    }
    Py_XDECREF(why);
    return st;
}

/* The buffer protocol's view of obj, or 1 (error pending) when obj has none. */
static int from_buffer(PyObject *obj, int writable, const char *fn, const char *what,
                       pyc_buf *b) {
    if (try_view(obj, writable, b))
        return 1;
    b->dtype = parse_format(b->view.format, b->view.itemsize);
    if (!b->dtype) {
        char fmt[16];
        snprintf(fmt, sizeof fmt, "%s", b->view.format ? b->view.format : "B");
        Py_ssize_t size = b->view.itemsize;
        PyBuffer_Release(&b->view);
        pyc_raise(COLLIE_ERR_ARG,
                  "%s: %s has element type '%s' (%zd bytes), which collie does not reduce "
                  "(integers of 8-64 bits, float16/32/64, bfloat16)", fn, what, fmt, size);
        return -1;
    }
    b->ptr = b->view.buf;
    b->bytes = (size_t)b->view.len;
    b->c_order = PyBuffer_IsContiguous(&b->view, 'C');
    b->f_order = PyBuffer_IsContiguous(&b->view, 'F');
    return 0;
}

int pyc_buf_get(PyObject *obj, int writable, const char *fn, const char *what, pyc_buf *b) {
    memset(b, 0, sizeof *b);
    if (pyc_ndarray_get(obj, writable, b))
        return 0;
    int st = from_buffer(obj, writable, fn, what, b);
    if (st > 0)
        st = fallback(obj, writable, fn, what, b);
    if (st) {
        pyc_buf_release(b);
        return -1;
    }
    if (!b->c_order && !b->f_order) {
        pyc_buf_release(b);
        pyc_raise(COLLIE_ERR_ARG,
                  "%s: %s is not contiguous (strided view); collie works in place and does "
                  "not copy: pass a contiguous array (numpy.ascontiguousarray)", fn, what);
        return -1;
    }
    size_t es = pyc_dtype_size(b->dtype);
    if (b->bytes % es) {
        pyc_buf_release(b);
        pyc_raise(COLLIE_ERR_ARG, "%s: %s has %zu bytes, not a multiple of its element size %zu",
                  fn, what, b->bytes, es);
        return -1;
    }
    b->count = b->bytes / es;
    return 0;
}

void pyc_buf_release(pyc_buf *b) {
    if (b->view.obj)
        PyBuffer_Release(&b->view);
    pyc_dlpack_release(&b->dl);
    Py_CLEAR(b->holder);
}

PyObject *pyc_buf_new_like(PyObject *obj, const pyc_buf *b) {
    PyObject *like = pyc_ndarray_new_like(obj);
    if (like || PyErr_Occurred())
        return like;
    int nd = b->dl.managed ? b->dl.ndim : b->view.ndim;
    PyObject *shape = PyTuple_New(nd);
    if (!shape)
        return NULL;
    for (int i = 0; i < nd; i++)
        PyTuple_SET_ITEM(shape, i, b->dl.managed ? PyLong_FromLongLong(b->dl.shape[i])
                                                 : PyLong_FromSsize_t(b->view.shape[i]));
    PyObject *r = PyObject_CallFunction(helpers.empty, "OKi", shape,
                                        (unsigned long long)b->dtype, b->f_order && !b->c_order);
    Py_DECREF(shape);
    return r;
}

int pyc_buf_shape(PyObject *obj, const pyc_buf *b, Py_ssize_t *dims, const char *fn) {
    const Py_buffer *v = &b->view;
    int nd = v->obj ? v->ndim : b->dl.managed ? b->dl.ndim
                              : pyc_ndarray_shape(obj, dims, PYC_MAXDIM);
    if (nd < 0 || nd > PYC_MAXDIM) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x has %d dimensions (at most %d)", fn, nd, PYC_MAXDIM);
        return -1;
    }
    for (int i = 0; i < nd && v->obj; i++)   /* PyBUF_STRIDES: shape is always given */
        dims[i] = v->shape ? v->shape[i] : v->len / v->itemsize;
    for (int i = 0; i < nd && !v->obj && b->dl.managed; i++)
        dims[i] = (Py_ssize_t)b->dl.shape[i];
    return nd;
}

PyObject *pyc_buf_new_shape(PyObject *obj, const pyc_buf *b, int nd, const Py_ssize_t *dims) {
    PyObject *r = obj ? pyc_ndarray_empty(obj, nd, dims) : NULL;
    if (r || PyErr_Occurred())
        return r;
    PyObject *shape = PyTuple_New(nd);
    if (!shape)
        return NULL;
    for (int i = 0; i < nd; i++)
        PyTuple_SET_ITEM(shape, i, PyLong_FromSsize_t(dims[i]));
    r = PyObject_CallFunction(helpers.empty, "OKi", shape, (unsigned long long)b->dtype, 0);
    Py_DECREF(shape);
    return r;
}

int pyc_buf_match(const pyc_buf *x, const pyc_buf *out, const char *fn) {
    if (x->dtype != out->dtype || x->count != out->count) {
        pyc_raise(COLLIE_ERR_ARG,
                  "%s: out must have x's element type and count (x: %zu x %s, out: %zu x %s)",
                  fn, x->count, pyc_dtype_name(x->dtype), out->count, pyc_dtype_name(out->dtype));
        return -1;
    }
    if (!((x->c_order && out->c_order) || (x->f_order && out->f_order))) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x and out have different memory orders (C / Fortran)",
                  fn);
        return -1;
    }
    const char *xa = x->ptr, *oa = out->ptr;
    size_t n = x->bytes;
    if (xa != oa && n && xa < oa + n && oa < xa + n) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x and out overlap partially (only out=x, the same "
                  "memory, means in place)", fn);
        return -1;
    }
    return 0;
}
