/*
 * vcall.h — the unit tests' v-form calls for the symbolic verifier: every rank's counts and
 * displacements of an allgatherv, reduce_scatter, alltoallv, gatherv or scatterv with
 * irregular counts (zeros included), gaps between the blocks and, on odd ranks, the
 * blocks in reverse order.
 */
#ifndef COLLIE_TEST_VCALL_H
#define COLLIE_TEST_VCALL_H

#include <stdbool.h>
#include <stddef.h>
#include "algorithms/algorithm.h"

#define VMAX 300
typedef struct vcall {
    collie_coll_v v[VMAX];
    size_t c[VMAX][VMAX], d[VMAX][VMAX], rc[VMAX][VMAX], rd[VMAX][VMAX];
} vcall;

/* The collective has a v form. */
bool has_v(int coll);

/* Fills vc for call a (size <= VMAX; a->count the base count, a->in_place, a->root):
 * vc->v[r] is rank r's collie_coll_v, for sym_verify's args.v. */
void vcall_make(vcall *vc, const collie_coll_args *a);

#endif
