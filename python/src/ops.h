/*
 * ops.h — reduction operations from Python: a name ("sum", "max", ...) is a built-in
 * collie operation; any other callable f becomes a collie user-defined operation computing
 * inout = f(in, inout) on numpy arrays, called with the GIL taken (collectives run with
 * it released).  User operations live until collie.finalize(): collie caches plans by
 * operation, so a handle is never reused within a run.
 */
#ifndef PYCOLLIE_OPS_H
#define PYCOLLIE_OPS_H

#include "capi.h"

typedef struct pyc_user_op pyc_user_op;

/* op (a str or a callable) -> collie op; *user is set for user ops (else NULL). */
int pyc_op_resolve(PyObject *op, const char *fn, collie_op_t *out, pyc_user_op **user);
/* After a call that used a user op: re-raises the first exception its function raised. */
int pyc_user_op_check(pyc_user_op *user);
/* At finalize: frees every user operation. */
void pyc_user_ops_free(void);

#endif
