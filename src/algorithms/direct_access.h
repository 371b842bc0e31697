/*
 * direct_access.h — the driver of the algorithms that read and write other ranks' buffers
 * directly, synchronised through the team's board (direct_access.c): allreduce and reduce
 * `direct_segments` (every rank reduces its 1/P segment straight out of all inputs and
 * writes it into every output, or the root's) and bcast `direct_copy` (every rank copies
 * the root's buffer into its own); allgather, reduce_scatter and alltoall `direct`
 * (direct_colls.c: every rank reads what it needs of its peers' buffers into its own).
 */
#ifndef COLLIE_DIRECT_ACCESS_H
#define COLLIE_DIRECT_ACCESS_H

#include "algorithms/algorithm.h"
#include "algorithms/direct_board.h"

typedef struct direct_segment {
    uint64_t off, bytes;
} direct_segment;

/* Rank q's segment of the vector (element-aligned, the first count % P one element longer). */
direct_segment direct_seg_of(const collie_coll_args *a, int q);
/* Declines teams larger than SCHED_MAX_SOURCES (the sources of one reduction). */
bool direct_segments_accepts(const collie_coll_args *a, const char **why);

/* The schedules the verifier and the simulator see (the driver does not run them):
 * round 1 every rank sends segment q of its input to rank q, then reduces its own segment
 * from all P in rank order into `into` (its RECV segment, or TMP); returns that segment. */
direct_segment direct_schedule_reduce_scatter(collie_schedule *s, const collie_coll_args *a,
                                              bool into_tmp);
/* The whole schedules of allreduce direct_segments (flat reduce-scatter + allgather) and
 * reduce direct_segments (flat reduce-scatter + gather to the root); also the `cells`
 * algorithms'. */
void direct_schedule_allreduce(collie_schedule *s, const collie_coll_args *a);
void direct_schedule_reduce(collie_schedule *s, const collie_coll_args *a);
extern const collie_algo_driver collie_direct_access_driver;
/* The driver of allgather, reduce_scatter and alltoall `direct` (direct_colls.c). */
extern const collie_algo_driver collie_direct_colls_driver;

#endif
