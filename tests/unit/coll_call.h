/*
 * coll_call.h — the collie_coll_args of one call as the algorithm tests verify it
 * (test_algorithms.c, test_verifier.c): commutative, on shared memory, with copy cells and
 * (for the newer collectives) single-copy access, so the verifier sees those schedules too.
 */
#ifndef COLLIE_TEST_COLL_CALL_H
#define COLLIE_TEST_COLL_CALL_H

#include <string.h>
#include "algorithms/algorithm.h"
#include "core/core.h"

static inline collie_coll_args call(int coll, int P, size_t count, size_t es) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = coll;
    a.size = P;
    a.count = count;
    a.elem_size = es;
    a.bytes = count * es;
    a.commutative = true;
    a.shared_memory = true;
    a.cell_bytes = 128 * 1024;    /* so the verifier checks the `cells` schedules too */
    /* ... and those of issue 16's direct-access algorithms (those of the four older
     * collectives would add ~4 s of CPU to this sweep) */
    a.single_copy = coll > COLL_BARRIER;
    return a;
}

#endif
