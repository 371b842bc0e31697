/*
 * chain.c — fragmented, pipelined broadcast along the virtual ring starting at the root.
 *
 * Source: Hoefler 2007 §2.2 (stage 2 of the multicast broadcast, "fragmented chain
 *   broadcast": every process has a predefined predecessor and successor in a virtual
 *   ring; the root needs nothing, so the link from its predecessor is omitted; as soon as
 *   a process owns a fragment it sends it to its successor).  Here without stage 1, the
 *   root is the only source: relative rank v receives from v-1 and forwards to v+1, the
 *   root's predecessor (relative P-1) receives last and forwards nothing.
 *   Fragments: the vector is cut into segments of `segment` bytes (parameter, default
 *   64 KiB; rounded down to whole elements, at least one element, and raised so that
 *   there are at most 65536 segments) — pat_fseg_*.  Step t (pat_chain_*_seg): relative
 *   rank v receives segment t-v+1 from its predecessor while its PUT of segment t-v
 *   (received in step t-1) goes to its successor — one round per step, so the PUT of a
 *   segment trails (the executor lets a PUT run on into later rounds) while the next
 *   segment arrives: forwarding overlaps receiving, and P-1 links carry data at once.
 *   The same per-segment math (pat_chain_prev/next, pat_fseg_*, pat_chain_*_seg) is meant
 *   for the multicast broadcast's reliable stage 2.
 *   Versus binomial.c (Abuelsoud–Paznikov Alg. 2–3): binomial moves the whole vector over
 *   ⌈lg P⌉ tree levels (the root sends ⌈lg P⌉·n); the chain sends n once per rank and
 *   pipelines it, for long messages; its latency grows with P (P-1 hops).
 * Rounds: nseg + 1 for inner ranks, nseg for the root and for the last rank
 *   (nseg = ⌈n / segment⌉); the last rank finishes after nseg + P - 2 steps.
 * Bytes sent per rank: n, the root's predecessor 0.
 * Restrictions: none — any P, any root, any count; parameter segment >= 1 (declined
 *   otherwise).  Uses SBUF_RECV only.
 * Cost: T = (P - 2 + nseg)(α_uni + sβ_uni) with segment s = n / nseg bytes, i.e.
 *   (P-2)(α + sβ) + nβ + (n/s)α; minimal at s = sqrt(nα / ((P-2)β)).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns_bcast.h"

#define CHAIN_DEFAULT_SEGMENT 65536
#define CHAIN_MAX_SEGMENTS 65536

static size_t segment_elems(const collie_coll_args *a) {
    long long seg = collie_param(&a->params, "segment", CHAIN_DEFAULT_SEGMENT);
    return pat_fseg_elems(a->count, a->elem_size, seg, CHAIN_MAX_SEGMENTS);
}

static sched_ref seg_at(const collie_coll_args *a, size_t seg, long j) {
    return sched_at(SBUF_RECV, pat_fseg_start(a->count, seg, (size_t)j) * a->elem_size);
}

static uint64_t seg_bytes(const collie_coll_args *a, size_t seg, long j) {
    return pat_fseg_len(a->count, seg, (size_t)j) * a->elem_size;
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    size_t seg = segment_elems(a), nseg = pat_fseg_count(a->count, seg), first, last;
    int prev = pat_chain_prev(a->rank, a->root, a->size);
    int next = pat_chain_next(a->rank, a->root, a->size);
    if (!pat_chain_active_steps(a->rank, a->root, a->size, nseg, &first, &last))
        return;
    for (size_t t = first; t <= last; t++) {
        long in = pat_chain_recv_seg(a->rank, a->root, a->size, nseg, t);
        long out = pat_chain_send_seg(a->rank, a->root, a->size, nseg, t);
        sched_round_begin(s);
        if (out >= 0)
            sched_put(s, next, seg_at(a, seg, out), seg_bytes(a, seg, out));
        if (in >= 0)
            sched_recv(s, prev, seg_at(a, seg, in), seg_bytes(a, seg, in));
    }
}

static bool accepts(const collie_coll_args *a, const char **why) {
    if (collie_param(&a->params, "segment", CHAIN_DEFAULT_SEGMENT) < 1) {
        *why = "parameter segment must be at least 1 byte";
        return false;
    }
    return true;
}

const collie_algorithm collie_algo_bcast_chain = {
    .name = "chain",
    .coll = COLL_BCAST,
    .needs = 0,
    .summary = "pipelined chain along the ring from the root, segment=bytes (Hoefler 2007 "
               "§2.2); long messages",
    .accepts = accepts,
    .build = build,
};
