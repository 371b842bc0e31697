/*
 * flat_reduce.h — the reduction step shared by the flat allreduce and the flat reduce:
 * combine all P contributions (this rank's from SBUF_SEND, the others' as incoming
 * messages) into SBUF_RECV in rank order, with one REDUCE of up to SCHED_MAX_SOURCES
 * sources, or a chain of them (index math: pat_chain_links / pat_chain_link).
 */
#ifndef COLLIE_FLAT_REDUCE_H
#define COLLIE_FLAT_REDUCE_H

#include "algorithms/algorithm.h"

/* Appends the chain's rounds to s (the accumulator of a chain lives in SBUF_TMP). */
void flat_reduce_all(collie_schedule *s, const collie_coll_args *a);

/* The general form (reduce_scatter's flat algorithm): dst = x0 ∘ … ∘ x(nranks-1) over
 * `bytes`, this rank's operand at own (when a->rank < nranks), the others' incoming; a
 * chain's accumulator at SBUF_TMP + tmp_off.  One round per link. */
typedef struct flat_range {
    int nranks;
    sched_ref own, dst;
    uint64_t bytes, tmp_off;
} flat_range;
void flat_reduce_range(collie_schedule *s, const collie_coll_args *a, const flat_range *f);

#endif
