/*
 * buffers.c — see buffers.h.
 */
#include "buffers.h"

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

/* The buffer protocol refused obj: ask the adapter for (object, dtype code) and view that.
 * -1 with CollieError set (with the refusal's text) when nothing works. */
static int adapt(PyObject *obj, int writable, const char *fn, const char *what, pyc_buf *b) {
    PyObject *why = take_error_text();
    PyObject *r = helpers.adapt ? PyObject_CallOneArg(helpers.adapt, obj) : NULL;
    if (!r) {
        Py_XDECREF(why);
        return -1; /* the adapter raised a clear error of its own */
    }
    if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
        b->holder = Py_NewRef(PyTuple_GET_ITEM(r, 0));
        b->dtype = (collie_dtype_t)PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(r, 1));
        if (!PyErr_Occurred() && try_view(b->holder, writable, b) == 0) {
            Py_DECREF(r);
            Py_XDECREF(why);
            return 0;
        }
        Py_CLEAR(b->holder);
        Py_XDECREF(why);
        why = take_error_text();
    }
    Py_DECREF(r);
    const char *text = why ? PyUnicode_AsUTF8(why) : NULL;
    pyc_raise(COLLIE_ERR_ARG, "%s: %s: a %.100s is not a buffer collie can use%s%s", fn, what,
              Py_TYPE(obj)->tp_name, text ? ": " : "", text ? text : "");
    Py_XDECREF(why);
    return -1;
}

static int check_layout(pyc_buf *b, const char *fn, const char *what) {
    b->c_order = PyBuffer_IsContiguous(&b->view, 'C');
    b->f_order = PyBuffer_IsContiguous(&b->view, 'F');
    if (b->c_order || b->f_order)
        return 0;
    pyc_raise(COLLIE_ERR_ARG,
              "%s: %s is not contiguous (strided view); collie works in place and does not "
              "copy: pass a contiguous array (numpy.ascontiguousarray)", fn, what);
    return -1;
}

int pyc_buf_get(PyObject *obj, int writable, const char *fn, const char *what, pyc_buf *b) {
    memset(b, 0, sizeof *b);
    if (try_view(obj, writable, b) == 0) {
        b->dtype = parse_format(b->view.format, b->view.itemsize);
        if (!b->dtype) {
            const char *fmt = b->view.format ? b->view.format : "B";
            pyc_buf_release(b);
            PyErr_Clear();
            pyc_raise(COLLIE_ERR_ARG,
                      "%s: %s has element type '%s' (%zd bytes), which collie does not reduce "
                      "(integers of 8-64 bits, float16/32/64, bfloat16)",
                      fn, what, fmt, b->view.itemsize);
            return -1;
        }
    } else if (adapt(obj, writable, fn, what, b)) {
        return -1;
    }
    if (check_layout(b, fn, what)) {
        pyc_buf_release(b);
        return -1;
    }
    size_t es = pyc_dtype_size(b->dtype);
    if ((size_t)b->view.len % es) {
        pyc_buf_release(b);
        pyc_raise(COLLIE_ERR_ARG, "%s: %s has %zd bytes, not a multiple of its element size %zu",
                  fn, what, b->view.len, es);
        return -1;
    }
    b->count = (size_t)b->view.len / es;
    return 0;
}

void pyc_buf_release(pyc_buf *b) {
    if (b->view.obj)
        PyBuffer_Release(&b->view);
    Py_CLEAR(b->holder);
}

PyObject *pyc_buf_new_like(PyObject *obj, const pyc_buf *b) {
    if (!b->holder && Py_IS_TYPE(obj, (PyTypeObject *)helpers.ndarray))
        return PyObject_CallOneArg(helpers.empty_like, obj);
    int nd = b->view.ndim;
    PyObject *shape = PyTuple_New(nd);
    if (!shape)
        return NULL;
    for (int i = 0; i < nd; i++)
        PyTuple_SET_ITEM(shape, i, PyLong_FromSsize_t(b->view.shape[i]));
    PyObject *r = PyObject_CallFunction(helpers.empty, "OKi", shape,
                                        (unsigned long long)b->dtype, b->f_order && !b->c_order);
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
    if (x->view.ndim > 1 && !((x->c_order && out->c_order) || (x->f_order && out->f_order))) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x and out have different memory orders (C / Fortran)",
                  fn);
        return -1;
    }
    const char *xa = x->view.buf, *oa = out->view.buf;
    size_t n = (size_t)x->view.len;
    if (xa != oa && n && xa < oa + n && oa < xa + n) {
        pyc_raise(COLLIE_ERR_ARG, "%s: x and out overlap partially (only out=x, the same "
                  "memory, means in place)", fn);
        return -1;
    }
    return 0;
}
