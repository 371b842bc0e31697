/*
 * pairwise.c — alltoall by pairwise exchange.
 *
 * Source: Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)), the pairwise-exchange
 *   alltoall of the all-to-all section (MPICH's long-message alltoall): step s = 1 … P-1
 *   sends block rank+s to rank+s and receives rank-s's block for me (pat_pairwise_*; the
 *   paper's XOR pairing for P = 2^k is one of the schedules this cyclic one generalises).
 * In place: step s receives (overwrites) block rank-s, which goes out in step P-s; the
 *   blocks sent in steps s >= P-s (pat_a2a_saved_slot) are copied to TMP first.
 * Rounds: P - 1 (in place + 1 local round first).
 * Bytes sent per rank: n(P-1)/P (n = P·B; v form: Σ of the blocks for the others).
 * Restrictions: none — any P, any count; the v form (alltoallv) is served: every step
 *   moves one block of its own size (this rank's sendcounts/sdispls, recvcounts/rdispls);
 *   an empty block is a bare notification, so that counts that differ between the two
 *   ends show as a size mismatch.  One message per step and peer: long messages.
 * Scratch: in place ⌊P/2⌋ blocks (v form: their sizes), else none.
 * Cost: T = (P-1)(α + (n/P)β).
 */
#include <stdlib.h>
#include "collie.h"
#include "algorithms/algorithm.h"
#include "algorithms/colls_sched.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_colls.h"

/* In place: copies the blocks to save into TMP; *tmp_off[slot] gets their offsets. */
static void save_blocks(collie_schedule *s, const collie_coll_args *a, uint64_t *tmp_off) {
    int p = a->size;
    uint64_t off = 0;
    cs_copier c;
    cs_copy_init(&c, s);
    for (int step = 1; step < p; step++) {
        int slot = pat_a2a_saved_slot(step, p);
        if (slot < 0)
            continue;
        int to = pat_pairwise_to(a->rank, step, p);
        tmp_off[slot] = off;
        cs_copy(&c, sched_at(SBUF_TMP, off), sched_at(SBUF_RECV, cs_recv_off(a, to)),
                cs_recv_len(a, to));
        off += cs_recv_len(a, to);
    }
    cs_copy_flush(&c);
    sched_need_tmp(s, off);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank;
    uint64_t stack_off[64], *tmp_off = stack_off;
    int nsaved = a->in_place ? pat_a2a_nsaved(p) : 0;
    if (!cs_is_v(a) && a->bytes == 0)
        return;
    if (nsaved > 64 && !(tmp_off = calloc((size_t)nsaved, sizeof *tmp_off))) {
        s->error = COLLIE_ERR_NOMEM;
        return;
    }
    sched_round_begin(s);
    if (nsaved > 0) {
        save_blocks(s, a, tmp_off);
        sched_round_begin(s);
    }
    if (!a->in_place)      /* the own block shares the first step's round */
        sched_copy(s, sched_at(SBUF_RECV, cs_recv_off(a, r)),
                   sched_at(SBUF_SEND, cs_send_off(a, r)), cs_recv_len(a, r));
    for (int step = 1; step < p; step++) {
        int to = pat_pairwise_to(r, step, p), from = pat_pairwise_from(r, step, p);
        int slot = a->in_place ? pat_a2a_saved_slot(step, p) : -1;
        if (step > 1)
            sched_round_begin(s);
        sched_ref src = slot >= 0 ? sched_at(SBUF_TMP, tmp_off[slot])
                                  : sched_at(a->in_place ? SBUF_RECV : SBUF_SEND,
                                             a->in_place ? cs_recv_off(a, to)
                                                         : cs_send_off(a, to));
        /* every block, also empty ones: alltoallv's counts are each rank's own, so a count
         * that differs from the peer's shows as a size mismatch */
        sched_put(s, to, src, a->in_place ? cs_recv_len(a, to) : cs_send_len(a, to));
        sched_recv(s, from, sched_at(SBUF_RECV, cs_recv_off(a, from)), cs_recv_len(a, from));
    }
    if (tmp_off != stack_off)
        free(tmp_off);
}

const collie_algorithm collie_algo_alltoall_pairwise = {
    .name = "pairwise",
    .coll = COLL_ALLTOALL,
    .needs = 0,
    .summary = "pairwise exchange, P-1 steps of one block to rank+s (Thakur et al. 2005); "
               "long messages; alltoallv too",
    .accepts = NULL,
    .build = build,
};
