/*
 * blocks_sched.h — schedule pieces shared by the binary-blocks allreduce and reduce
 * (Rabenseifner 2004 §3.6): a rank's place in the block layout (index math in
 * patterns_blocks.h) and PUT / receive / receive-reduce of byte ranges of the 2^e0
 * segments, skipping empty ranges.
 */
#ifndef COLLIE_BLOCKS_SCHED_H
#define COLLIE_BLOCKS_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include "algorithms/algorithm.h"

typedef struct bb {
    const collie_coll_args *a;
    int b, e, e0, local, first, nblocks;
    int dst;               /* where results go: RECV (allreduce, reduce root), else TMP */
} bb;

typedef struct block {
    uint64_t off, bytes;
} block;

bb bb_of(const collie_coll_args *a);
/* Segments first … first+nseg-1 of the 2^e0 segments, as a byte range. */
block bb_seg_range(const bb *g, int first, int nseg);
/* What local rank `local` of a block with exponent e holds after its halving steps. */
block bb_held(const bb *g, int local, int e);
void bb_put(collie_schedule *s, int peer, int buf, block r);
void bb_recv(collie_schedule *s, int peer, int buf, block r);
/* g->dst[r] = in ∘ src[r] (peer lower) or src[r] ∘ in. */
void bb_reduce(collie_schedule *s, int peer, const bb *g, int src, block r, bool peer_lower);

#endif
