/*
 * flat.c — alltoall (block and v forms): every rank writes block j to rank j, in one round.
 *
 * Source: the direct ("linear"/pairwise-posted) alltoall of today's MPI libraries (MPICH's
 *   and Open MPI's basic linear alltoall); not from the papers.  Rank r PUTs block j of
 *   its input to rank j, starting at j = r + 1 so that the ranks spread their writes, and
 *   receives block j of its output from rank j; its own block is a local copy.  In place
 *   the blocks that leave are copied to SBUF_TMP first (a round before), since the
 *   incoming blocks overwrite them.  The v form sends every block, also empty ones: each
 *   rank knows only its own counts, and a count that differs from the peer's then shows
 *   as a message of another size (COLLIE_ERR_MISMATCH) instead of a hang.
 * Rounds: 1 (in place: 2).
 * Bytes sent per rank: (P-1)·n for blocks of n bytes; received the same.
 * Restrictions: none.  P(P-1) messages: a small-P or shared-memory algorithm.
 * Scratch: in place the RECV extent.
 * Cost: T = α + (P-1)nβ.
 */
#include "algorithms/algorithm.h"

/* In place: blocks j != rank to SBUF_TMP at their RECV offsets. */
static void save_outgoing(collie_schedule *s, const collie_coll_args *a) {
    uint64_t send, recv, off, len;
    collie_coll_buffer_bytes(a, a->rank, &send, &recv);
    sched_need_tmp(s, recv);
    for (int j = 0; j < a->size; j++) {
        collie_coll_block(a, SBUF_RECV, j, &off, &len);
        if (j != a->rank && len)
            sched_copy(s, sched_at(SBUF_TMP, off), sched_at(SBUF_RECV, off), len);
    }
    sched_round_begin(s);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int P = a->size, me = a->rank;
    if (!a->v && a->bytes == 0)
        return;
    int from_buf = a->in_place ? SBUF_TMP : SBUF_SEND;
    uint64_t off, len, roff, rlen;
    if (a->in_place)
        save_outgoing(s, a);
    collie_coll_block(a, SBUF_SEND, me, &off, &len);
    collie_coll_block(a, SBUF_RECV, me, &roff, &rlen);
    if (!a->in_place && len)
        sched_copy(s, sched_at(SBUF_RECV, roff), sched_at(SBUF_SEND, off), len);
    for (int i = 1; i < P; i++) {
        int to = (me + i) % P, from = (me - i + P) % P;
        collie_coll_block(a, SBUF_SEND, to, &off, &len);
        sched_put(s, to, sched_at(from_buf, off), len);
        collie_coll_block(a, SBUF_RECV, from, &roff, &rlen);
        sched_recv(s, from, sched_at(SBUF_RECV, roff), rlen);
    }
}

const collie_algorithm collie_algo_alltoall_flat = {
    .name = "flat",
    .coll = COLL_ALLTOALL,
    .needs = 0,
    .summary = "every rank writes block j to rank j in one round",
    .accepts = NULL,
    .build = build,
};
