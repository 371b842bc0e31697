/*
 * direct_segments.h — the driver shared by allreduce and reduce `direct_segments`
 * (direct_segments.c): every rank reduces its 1/P segment straight out of all inputs and
 * writes it into every output (allreduce) or the root's (reduce).
 */
#ifndef COLLIE_DIRECT_SEGMENTS_H
#define COLLIE_DIRECT_SEGMENTS_H

#include "algorithms/algorithm.h"

typedef struct direct_segment {
    uint64_t off, bytes;
} direct_segment;

/* Rank q's segment of the vector (element-aligned, the first count % P one element longer). */
direct_segment direct_seg_of(const collie_coll_args *a, int q);
/* Declines teams larger than SCHED_MAX_SOURCES. */
bool direct_segments_accepts(const collie_coll_args *a, const char **why);

extern const collie_algo_driver collie_direct_segments_driver;

#endif
