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

#endif
