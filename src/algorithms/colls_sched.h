/*
 * colls_sched.h — schedule pieces shared by the allgather … exscan algorithms: where the
 * blocks of the buffer layout are (COLLS_SPEC.md's table; block and v forms), moving a
 * range of ranks' blocks, and local copies merged into runs.
 *
 * Blocks (byte offsets and lengths):
 *   allgather, gather: block j of RECV; reduce_scatter: block j of SEND (the v form's
 *   blocks follow each other, recvcounts being the same on every rank); alltoall: block j
 *   of SEND (to rank j) and of RECV (from rank j), each rank's own sendcounts/sdispls and
 *   recvcounts/rdispls (in place: the recv layout for both).
 */
#ifndef COLLIE_COLLS_SCHED_H
#define COLLIE_COLLS_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include "algorithms/algorithm.h"

bool cs_is_v(const collie_coll_args *a);

uint64_t cs_recv_off(const collie_coll_args *a, int j);     /* allgather, gather, alltoall */
uint64_t cs_recv_len(const collie_coll_args *a, int j);
uint64_t cs_send_off(const collie_coll_args *a, int j);     /* reduce_scatter, alltoall */
uint64_t cs_send_len(const collie_coll_args *a, int j);

/* The blocks of ranks lo … hi-1 of RECV (allgather) as messages to or from peer: the
 * block form as one message, the v form one message per non-empty block (displacements
 * may differ between ranks, so sender and receiver agree only on the blocks). */
void cs_put_ranks(collie_schedule *s, const collie_coll_args *a, int peer, int lo, int hi);
void cs_recv_ranks(collie_schedule *s, const collie_coll_args *a, int peer, int lo, int hi);

/* PUT / receive of a byte range, nothing for 0 bytes. */
void cs_put(collie_schedule *s, int peer, sched_ref src, uint64_t bytes);
void cs_recv(collie_schedule *s, int peer, sched_ref dst, uint64_t bytes);

/* Local copies of one round, adjacent ones (source and destination both continuing the
 * previous copy) merged into one: cs_copy appends, cs_copy_flush emits the last. */
typedef struct cs_copier {
    collie_schedule *s;
    sched_ref dst, src;
    uint64_t bytes;
} cs_copier;

void cs_copy_init(cs_copier *c, collie_schedule *s);
void cs_copy(cs_copier *c, sched_ref dst, sched_ref src, uint64_t bytes);
void cs_copy_flush(cs_copier *c);

#endif
