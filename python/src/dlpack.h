/*
 * dlpack.h — reading a CPU tensor through the DLPack protocol (obj.__dlpack__(), the
 * unversioned "dltensor" capsule of dlpack.h, ABI-stable since DLPack 0.2) without a copy:
 * a torch.Tensor on the CPU, any array library that exports DLPack.  The structures below
 * are DLPack's layout (https://dmlc.github.io/dlpack), declared here, not copied.
 */
#ifndef PYCOLLIE_DLPACK_H
#define PYCOLLIE_DLPACK_H

#include "capi.h"

typedef struct {
    void *managed;          /* DLManagedTensor *, owned (its deleter runs at release) */
    void *data;
    size_t bytes;
    int ndim;
    const int64_t *shape;
    collie_dtype_t dtype;
    int c_order, f_order;
} pyc_dlpack;

/* 1 if obj has __dlpack__; then fills d (0) or raises CollieError (-1). */
int pyc_dlpack_has(PyObject *obj);
int pyc_dlpack_get(PyObject *obj, const char *fn, const char *what, pyc_dlpack *d);
void pyc_dlpack_release(pyc_dlpack *d);

#endif
