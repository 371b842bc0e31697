/*
 * capi.h — the collie C API as the Python extension sees it: a table of function pointers
 * filled by dlopen/dlsym from the library collie.init() chose (the packaged libcollie.so,
 * or libcollie_mpi.so of the MPI that mpi4py uses, whose world is MPI_COMM_WORLD).
 * The extension links no collie symbols itself, so the choice can be made at run time.
 */
#ifndef PYCOLLIE_CAPI_H
#define PYCOLLIE_CAPI_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "collie.h"

/* Built-in operations the binding names ("sum", "prod", ...), in this order. */
enum { PYC_NOPS = 10 };
extern const char *const pyc_op_names[PYC_NOPS];

typedef struct {
    int (*init)(void);
    int (*finalize)(void);
    collie_team_t *(*world)(void);
    int (*rank)(const collie_team_t *);
    int (*size)(const collie_team_t *);
    int (*team_split)(collie_team_t *, int, int, collie_team_t **);
    int (*team_dup)(collie_team_t *, collie_team_t **);
    int (*team_free)(collie_team_t **);
    const char *(*strerror)(int);
    const char *(*last_error)(void);
    const char *(*version)(void);
    int (*op_create)(collie_user_fn, void *, unsigned, collie_op_t *);
    void (*op_free)(collie_op_t);
    /* optional (NULL when the library lacks it): an op's identity in the calls' mismatch
     * check (src/types/types.h; ops.c sets "any" on the ops it creates) */
    void (*op_set_identity)(collie_op_t, uint32_t);
    int (*allreduce)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, collie_op_t);
    int (*reduce)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, collie_op_t,
                  int);
    int (*bcast)(collie_team_t *, void *, size_t, collie_dtype_t, int);
    int (*barrier)(collie_team_t *);
    int (*iallreduce)(collie_team_t *, const void *, void *, size_t, collie_dtype_t,
                      collie_op_t, collie_request_t **);
    int (*ireduce)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, collie_op_t,
                   int, collie_request_t **);
    int (*ibcast)(collie_team_t *, void *, size_t, collie_dtype_t, int, collie_request_t **);
    int (*ibarrier)(collie_team_t *, collie_request_t **);
    int (*test)(collie_request_t *, int);
    int (*wait)(collie_request_t *);
    void (*request_free)(collie_request_t *);
    /* the collectives of issue 16 (colls.c, colls_v.c; run by colls_exec.c) */
    int (*allgather)(collie_team_t *, const void *, void *, size_t, collie_dtype_t);
    int (*allgatherv)(collie_team_t *, const void *, size_t, void *, const size_t *,
                      const size_t *, collie_dtype_t);
    int (*reduce_scatter_block)(collie_team_t *, const void *, void *, size_t, collie_dtype_t,
                                collie_op_t);
    int (*reduce_scatter)(collie_team_t *, const void *, void *, const size_t *,
                          collie_dtype_t, collie_op_t);
    int (*alltoall)(collie_team_t *, const void *, void *, size_t, collie_dtype_t);
    int (*alltoallv)(collie_team_t *, const void *, const size_t *, const size_t *, void *,
                     const size_t *, const size_t *, collie_dtype_t);
    int (*gather)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, int);
    int (*gatherv)(collie_team_t *, const void *, size_t, void *, const size_t *,
                   const size_t *, collie_dtype_t, int);
    int (*scatter)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, int);
    int (*scatterv)(collie_team_t *, const void *, const size_t *, const size_t *, void *,
                    size_t, collie_dtype_t, int);
    int (*scan)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, collie_op_t);
    int (*exscan)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, collie_op_t);
    int (*iallgather)(collie_team_t *, const void *, void *, size_t, collie_dtype_t,
                      collie_request_t **);
    int (*iallgatherv)(collie_team_t *, const void *, size_t, void *, const size_t *,
                       const size_t *, collie_dtype_t, collie_request_t **);
    int (*ireduce_scatter_block)(collie_team_t *, const void *, void *, size_t,
                                 collie_dtype_t, collie_op_t, collie_request_t **);
    int (*ireduce_scatter)(collie_team_t *, const void *, void *, const size_t *,
                           collie_dtype_t, collie_op_t, collie_request_t **);
    int (*ialltoall)(collie_team_t *, const void *, void *, size_t, collie_dtype_t,
                     collie_request_t **);
    int (*ialltoallv)(collie_team_t *, const void *, const size_t *, const size_t *, void *,
                      const size_t *, const size_t *, collie_dtype_t, collie_request_t **);
    int (*igather)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, int,
                   collie_request_t **);
    int (*igatherv)(collie_team_t *, const void *, size_t, void *, const size_t *,
                    const size_t *, collie_dtype_t, int, collie_request_t **);
    int (*iscatter)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, int,
                    collie_request_t **);
    int (*iscatterv)(collie_team_t *, const void *, const size_t *, const size_t *, void *,
                     size_t, collie_dtype_t, int, collie_request_t **);
    int (*iscan)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, collie_op_t,
                 collie_request_t **);
    int (*iexscan)(collie_team_t *, const void *, void *, size_t, collie_dtype_t, collie_op_t,
                   collie_request_t **);
    collie_op_t builtin[PYC_NOPS];
} pyc_api;

extern pyc_api capi;
extern int capi_loaded;

/* dlopen `path` and resolve every symbol; 0 on success, -1 with a Python error set. */
int capi_load(const char *path);
const char *capi_path(void);

/* One thread at a time in the library (the C API makes no thread guarantees): lock and
 * unlock around every call, with the GIL released (a waiting thread never holds the GIL,
 * so a user operation run by the thread inside can always take it).  pyc_lock_init at
 * module init (-1 on failure).  pyc_reentered: 1 with CollieError set when called from
 * inside a user-defined operation of this thread's running collective. */
int pyc_lock_init(void);
void pyc_lock(void);
void pyc_unlock(void);
int pyc_reentered(const char *fn);
int pyc_inside(void);   /* this thread is inside the library (no error set) */

/* Raises collie.CollieError(message, status); returns NULL. */
PyObject *pyc_raise(int status, const char *fmt, ...);
/* Raises CollieError with the library's collie_last_error() for `status`. */
PyObject *pyc_raise_status(int status);

/* Python helpers registered by collie/__init__.py (borrowed from the module's dict). */
typedef struct {
    PyObject *error;      /* CollieError class */
    PyObject *adapt;      /* adapt(obj) -> (buffer object, dtype code) or None */
    PyObject *empty;      /* empty(shape tuple, dtype code) -> new numpy array */
    PyObject *apply;      /* apply(fn, in memoryview, inout memoryview, dtype code) */
    PyObject *user_op;    /* user_op(obj) -> (callable, flags) */
} pyc_helpers;
extern pyc_helpers helpers;

#endif
