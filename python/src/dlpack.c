/*
 * dlpack.c — see dlpack.h.
 */
#include "dlpack.h"

#include <string.h>

enum { DL_CPU = 1, DL_CUDA_HOST = 3 };
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4 };

typedef struct {
    int32_t device_type, device_id;
} dl_device;
typedef struct {
    uint8_t code, bits;
    uint16_t lanes;
} dl_datatype;
typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_datatype dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} dl_tensor;
typedef struct dl_managed {
    dl_tensor t;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *self);
} dl_managed;

int pyc_dlpack_has(PyObject *obj) { return PyObject_HasAttrString(obj, "__dlpack__"); }

static collie_dtype_t dtype_of(dl_datatype t) {
    static const collie_dtype_t ints[] = { COLLIE_INT8, COLLIE_INT16, COLLIE_INT32, COLLIE_INT64 };
    static const collie_dtype_t uints[] = { COLLIE_UINT8, COLLIE_UINT16, COLLIE_UINT32,
                                            COLLIE_UINT64 };
    int k = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 3 : -1;
    if (t.lanes != 1 || k < 0)
        return 0;
    if (t.code == DL_INT)
        return ints[k];
    if (t.code == DL_UINT)
        return uints[k];
    if (t.code == DL_FLOAT)
        return k == 1 ? COLLIE_FLOAT16 : k == 2 ? COLLIE_FLOAT32 : k == 3 ? COLLIE_FLOAT64 : 0;
    if (t.code == DL_BFLOAT)
        return k == 1 ? COLLIE_BFLOAT16 : 0;
    return 0;
}

/* Dense in C (row-major) or Fortran order?  strides NULL means C order.  An empty tensor
 * is both, whatever its strides (as numpy and torch see it: torch hands out empty tensors
 * with any strides, e.g. (1, 1) for shape (3, 0), and .contiguous() keeps them). */
static void layout(const dl_tensor *t, int *c_order, int *f_order) {
    *c_order = *f_order = 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            return;
    if (!t->strides)
        return;
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != expect)
            *c_order = 0;
        expect *= t->shape[i];
    }
    expect = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] != 1 && t->strides[i] != expect)
            *f_order = 0;
        expect *= t->shape[i];
    }
}

static int check(const dl_tensor *t, const char *fn, const char *what, pyc_dlpack *d) {
    if (t->device.device_type != DL_CPU && t->device.device_type != DL_CUDA_HOST) {
        pyc_raise(COLLIE_ERR_ARG, "%s: %s is on DLPack device type %d; collie needs CPU memory",
                  fn, what, (int)t->device.device_type);
        return -1;
    }
    d->dtype = dtype_of(t->dtype);
    if (!d->dtype) {
        pyc_raise(COLLIE_ERR_ARG, "%s: %s has DLPack type code %d, %d bits, %d lanes, which "
                  "collie does not reduce", fn, what, t->dtype.code, t->dtype.bits,
                  t->dtype.lanes);
        return -1;
    }
    layout(t, &d->c_order, &d->f_order);
    if (!d->c_order && !d->f_order) {
        pyc_raise(COLLIE_ERR_ARG, "%s: %s is not contiguous (strided tensor); collie works in "
                  "place and does not copy: pass a contiguous tensor (.contiguous())", fn, what);
        return -1;
    }
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= (size_t)t->shape[i];
    d->bytes = n * (t->dtype.bits / 8);
    d->data = (char *)t->data + t->byte_offset;
    d->ndim = t->ndim;
    d->shape = t->shape;
    return 0;
}

int pyc_dlpack_get(PyObject *obj, const char *fn, const char *what, pyc_dlpack *d) {
    memset(d, 0, sizeof *d);
    PyObject *capsule = PyObject_CallMethod(obj, "__dlpack__", NULL);
    if (!capsule)
        return -1;
    dl_managed *m = PyCapsule_GetPointer(capsule, "dltensor");
    if (!m) {
        Py_DECREF(capsule);
        return -1;
    }
    /* The consumer owns the tensor from here: rename the capsule so it does not free it. */
    if (PyCapsule_SetName(capsule, "used_dltensor")) {
        Py_DECREF(capsule);
        return -1;
    }
    Py_DECREF(capsule);
    d->managed = m;
    if (check(&m->t, fn, what, d)) {
        pyc_dlpack_release(d);
        return -1;
    }
    return 0;
}

void pyc_dlpack_release(pyc_dlpack *d) {
    dl_managed *m = d->managed;
    d->managed = NULL;
    if (m && m->deleter)
        m->deleter(m);
}
