/*
 * api.h — the public calls' common path (api.c: plan cache, blocking, split-phase and
 * persistent forms; api_check.c: argument checks), used by api.c's four original
 * collectives and api_colls.c's allgather … exscan.
 */
#ifndef COLLIE_API_H
#define COLLIE_API_H

#include <stdbool.h>
#include <stddef.h>
#include "collie.h"
#include "algorithms/algorithm.h"

typedef struct collie_call {
    const char *fn;             /* the public function, for messages */
    int coll;                   /* enum collie_coll */
    const void *sendbuf;
    void *recvbuf;
    size_t count;               /* the block's count; v forms: this rank's own count */
    const collie_coll_v *v;     /* v forms: the arrays (names in messages: vnames), else NULL */
    collie_dtype_t dtype;
    collie_op_t op;             /* NULL unless the collective reduces */
    int root;
} collie_call;

/* Whether the call is in place on this rank: sendbuf == COLLIE_IN_PLACE, or (scatter's
 * root) recvbuf == COLLIE_IN_PLACE; a broadcast always is. */
bool collie_call_in_place(const collie_call *c);

/* A v form's own count on this rank once checked: its entry of the counts where the
 * call is in place or the counts are shared (reduce_scatter), 0 for alltoallv, else the
 * count passed (sendcount, recvcount). */
size_t collie_call_own(const collie_call *c, int rank);

/* COLLIE_OK or COLLIE_ERR_ARG (or the team's failure) naming the function, the argument
 * and what is wrong with it. */
int collie_api_check(collie_team_t *team, const collie_call *c);

/* Forgets the ranges found mapped at earlier calls (collie_free unmapped some). */
void collie_api_forget_mapped(void);

int collie_api_blocking(collie_team_t *team, collie_call *c);
int collie_api_nonblocking(collie_team_t *team, const collie_call *c, collie_request_t **req);
int collie_api_persistent(collie_team_t *team, const collie_call *c, collie_request_t **req);
/* A persistent request matched by start order, as the blocking calls' cached plans are
 * (so the algorithms with their own protocol may serve it): for a caller that knows every
 * rank starts the team's persistent calls in one order (libcollie_mpi under MPI-4's
 * mpi_assert_strict_persistent_collective_ordering). */
int collie_api_persistent_ordered(collie_team_t *team, const collie_call *c, collie_request_t **req);

#endif
