/* flat_reduce.c — see flat_reduce.h. */
#include "algorithms/flat_reduce.h"
#include "algorithms/patterns.h"

/* Link `link` of the rank-order chain over ranks 0 … nranks-1: the accumulator (TMP at
 * tmp_off) first, then the next sources (own for this rank, else incoming); the last link
 * writes dst. */
static void chain_link(collie_schedule *s, const collie_coll_args *a, const flat_range *f,
                       int link, int nlinks) {
    sched_ref srcs[SCHED_MAX_SOURCES];
    int first, n, k = 0;
    pat_chain_link(f->nranks, SCHED_MAX_SOURCES, link, &first, &n);
    if (link > 0)
        srcs[k++] = sched_at(SBUF_TMP, f->tmp_off);
    for (int i = 0; i < n; i++)
        srcs[k++] = first + i == a->rank ? f->own : sched_in(first + i);
    sched_ref dst = link == nlinks - 1 ? f->dst : sched_at(SBUF_TMP, f->tmp_off);
    if (link < nlinks - 1)
        sched_need_tmp(s, f->tmp_off + f->bytes);
    sched_round_begin(s);
    sched_reduce(s, dst, srcs, k, f->bytes);
}

void flat_reduce_range(collie_schedule *s, const collie_coll_args *a, const flat_range *f) {
    int nlinks = pat_chain_links(f->nranks, SCHED_MAX_SOURCES);
    for (int link = 0; link < nlinks; link++)
        chain_link(s, a, f, link, nlinks);
}

void flat_reduce_all(collie_schedule *s, const collie_coll_args *a) {
    flat_range f = { a->size, sched_at(SBUF_SEND, 0), sched_at(SBUF_RECV, 0), a->bytes, 0 };
    flat_reduce_range(s, a, &f);
}
