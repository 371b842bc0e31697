/* blocks_sched.c — see blocks_sched.h. */
#include "algorithms/blocks_sched.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_blocks.h"

bb bb_of(const collie_coll_args *a) {
    bb g;
    g.a = a;
    g.b = pat_bb_block_of(a->rank, a->size);
    g.e = pat_bb_exp(g.b, a->size);
    g.e0 = pat_bb_exp(0, a->size);
    g.first = pat_bb_first(g.b, a->size);
    g.local = a->rank - g.first;
    g.nblocks = pat_bb_nblocks(a->size);
    g.dst = a->coll == COLL_REDUCE && a->rank != a->root ? SBUF_TMP : SBUF_RECV;
    return g;
}

block bb_seg_range(const bb *g, int first, int nseg) {
    int p2 = 1 << g->e0;
    size_t lo = pat_seg_start(g->a->count, p2, first);
    size_t hi = pat_seg_start(g->a->count, p2, first + nseg);
    block r = { lo * g->a->elem_size, (hi - lo) * g->a->elem_size };
    return r;
}

block bb_held(const bb *g, int local, int e) {
    int first, nseg;
    pat_hd_block(local, e, 1 << g->e0, &first, &nseg);
    return bb_seg_range(g, first, nseg);
}

void bb_put(collie_schedule *s, int peer, int buf, block r) {
    if (r.bytes > 0)
        sched_put(s, peer, sched_at(buf, r.off), r.bytes);
}

void bb_recv(collie_schedule *s, int peer, int buf, block r) {
    if (r.bytes > 0)
        sched_recv(s, peer, sched_at(buf, r.off), r.bytes);
}

void bb_reduce(collie_schedule *s, int peer, const bb *g, int src, block r, bool peer_lower) {
    if (r.bytes > 0)
        sched_recv_reduce(s, peer, sched_at(g->dst, r.off), sched_at(src, r.off), peer_lower,
                          r.bytes);
}
