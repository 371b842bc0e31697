/* flat_reduce.c — see flat_reduce.h. */
#include "algorithms/flat_reduce.h"
#include "algorithms/patterns.h"

/* The contribution of rank q as a REDUCE source on this rank. */
static sched_ref contribution(const collie_coll_args *a, int q) {
    return q == a->rank ? sched_at(SBUF_SEND, 0) : sched_in(q);
}

/* Link `link` of the rank-order chain: the accumulator (TMP) first, then the next
 * sources; the last link writes RECV. */
static void chain_link(collie_schedule *s, const collie_coll_args *a, int link, int nlinks) {
    sched_ref srcs[SCHED_MAX_SOURCES];
    int first, n, k = 0;
    pat_chain_link(a->size, SCHED_MAX_SOURCES, link, &first, &n);
    if (link > 0)
        srcs[k++] = sched_at(SBUF_TMP, 0);
    for (int i = 0; i < n; i++)
        srcs[k++] = contribution(a, first + i);
    sched_ref dst = link == nlinks - 1 ? sched_at(SBUF_RECV, 0) : sched_at(SBUF_TMP, 0);
    if (dst.buf == SBUF_TMP)
        sched_need_tmp(s, a->bytes);
    sched_round_begin(s);
    sched_reduce(s, dst, srcs, k, a->bytes);
}

void flat_reduce_all(collie_schedule *s, const collie_coll_args *a) {
    int nlinks = pat_chain_links(a->size, SCHED_MAX_SOURCES);
    for (int link = 0; link < nlinks; link++)
        chain_link(s, a, link, nlinks);
}
