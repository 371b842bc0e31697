/*
 * mp_soak.h — what mp_soak.c (the sequence, the fixed-size collectives) and mp_soak_v.c
 * (the v forms, with `vforms`) share.
 */
#ifndef MP_SOAK_H
#define MP_SOAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collie.h"

/* The collectives; those from C_COUNT on are the v forms (mp_soak_v.c). */
enum coll { C_ALLREDUCE, C_REDUCE, C_BCAST, C_BARRIER, C_ALLGATHER, C_RSB, C_ALLTOALL,
            C_GATHER, C_SCATTER, C_SCAN, C_EXSCAN, C_COUNT,
            C_ALLGATHERV = C_COUNT, C_REDUCE_SCATTER, C_ALLTOALLV, C_GATHERV, C_SCATTERV,
            C_ALL_COUNT };
enum op { O_SUM, O_MAX, O_BXOR, O_COUNT };

#define MAX_BYTES_PER_RANK (2u << 20)
#define MAX_BATCH 4
#define SENTINEL ((int64_t)0x5A5A5A5A5A5A5A5Bll)   /* what a call must leave alone */

/* A v form's counts and displacements (elements, one entry per rank of the team), kept
 * until the request is freed (mp_soak_v.c). */
typedef struct vlayout {
    size_t *cnt, *displ;        /* this rank's receive side (allgatherv, gatherv at the
                                   root, reduce_scatter's counts), or the root's send side
                                   (scatterv); alltoallv: what it receives from each */
    size_t *scnt, *sdispl;      /* alltoallv: what it sends to each */
} vlayout;

typedef struct call {
    int step, coll, op, root, in_place, sub;
    size_t count;               /* elements per rank (per block for the block collectives) */
    collie_team_t *team;
    int rank, size;             /* in `team` */
    int64_t *send, *recv;       /* what the call is given (offsets applied) */
    void *send_base, *recv_base;
    bool send_shared, recv_shared;
    collie_request_t *req;
    bool persistent;            /* req is a collie_*_init request (mp_soak_p.c) */
    vlayout v;
} call;

/* A (collective, count) pair that comes back often in a sequence. */
typedef struct shape {
    int coll;
    size_t count;
} shape;
#define HOT 4

extern _Thread_local uint64_t seed;
extern int world_rank;

uint64_t mix(uint64_t x);
/* The sequence's draws (the same on every rank) and this rank's own. */
uint64_t draw(int step, int what);
uint64_t draw_mine(int step, int what);
/* Input element i of rank r (in the call's team) at call `step`. */
int64_t input(int step, int sub, int r, size_t i);
/* op over ranks lo..hi-1 of element i. */
int64_t reduced(const call *c, int lo, int hi, size_t i);
collie_op_t op_handle(int op);
bool is_root(const call *c);

/* mp_soak.c: a call's buffers and input (soak_prepare), its input and sentinels again
 * (soak_fill), the check of its results, its release (buffers, request, layout), and
 * exit on an error status. */
void soak_prepare(call *c);
void soak_fill(call *c);
void soak_check(const call *c);
void soak_release(call *c);
void soak_must(int st, const call *c, const char *what);
bool soak_in_place_allowed(const call *c);
/* What a call passes: COLLIE_IN_PLACE where it runs in place (the receive buffer at a
 * scatter's root, the send buffer elsewhere), its op's handle, int64. */
typedef struct call_args {
    collie_team_t *t;
    size_t n;
    const void *sb;
    void *rb;
    collie_op_t op;
    collie_dtype_t ty;
} call_args;
call_args soak_args(const call *c);
bool soak_rooted(int coll);

/* mp_soak_p.c (`persistent`): HOT persistent requests made at the start of a sequence, in
 * the same order on every rank, on the world or its half; at some steps a few of them are
 * started in an order of each rank's own and waited for in another (matched by
 * initialization order, as MPI-4's persistent collectives), with new input each time. */
typedef struct pers_set {
    call pc[HOT];
    int n;
} pers_set;
void pers_begin(pers_set *ps, const shape *hot, collie_team_t *world, collie_team_t *half);
bool pers_step(pers_set *ps, int step);   /* true when `step` was theirs */
void pers_end(pers_set *ps);

/* mp_soak_v.c: the v forms' layout (planned on every rank from the draws), buffers'
 * extents, inputs, expected outputs (SENTINEL in the gaps), the call, and the layout's
 * release. */
bool v_layout(call *c);
void v_extents(const call *c, size_t *ns, size_t *nr);
int64_t v_given(const call *c, size_t j);
bool v_expected(const call *c, size_t j, int64_t *want);
int v_issue(call *c, collie_request_t **req);
void v_free(call *c);

#endif
