/*
 * mp_colls.h — shared parts of mp_colls (issue 16's collectives under collie-run): the
 * call of one case through the public API (mp_colls_calls.c) and the misuse checks
 * (mp_colls_misuse.c).
 */
#ifndef MP_COLLS_H
#define MP_COLLS_H

#include <stdbool.h>
#include <stddef.h>
#include "collie.h"

enum { FORM_BLOCKING, FORM_SPLIT, FORM_PERSISTENT, FORM_COUNT };

/* The arguments of one call, for every collective but bcast and barrier: count is the
 * block form's count, own the v form's own count (sendcount, recvcount); c/d the counts
 * and displacements (alltoallv: send ones), rc/rd alltoallv's recv ones. */
typedef struct mp_call {
    int coll;                   /* enum collie_coll (algorithms/algorithm.h) */
    bool v;
    const void *send;
    void *recv;
    size_t count, own;
    const size_t *c, *d, *rc, *rd;
    collie_dtype_t dt;
    collie_op_t op;
    int root;
} mp_call;

/* Runs the call in the form given (blocking; collie_i… then collie_wait; …_init, start,
 * wait, free).  The status, and the algorithm that ran in *algo when a request showed it. */
int mp_colls_call(collie_team_t *team, const mp_call *c, int form, const char **algo);

/* The public function's name of a call ("collie_allgatherv"). */
const char *mp_colls_fn(const mp_call *c);

/* Misuse: bad roots, NULL buffers, COLLIE_IN_PLACE where invalid, counts that differ
 * between ranks.  Returns the number of failures (this rank). */
int mp_colls_misuse(collie_team_t *team, int rank, int P);

/* Persistent requests started in a different order on every rank (mp_colls_porder.c).
 * Returns the number of failures (this rank). */
int mp_colls_porder(collie_team_t *team, int rank, int P);

#endif
