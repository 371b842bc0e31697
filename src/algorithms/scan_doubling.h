/*
 * scan_doubling.h — the recursive-doubling prefix reduction shared by scan and exscan
 * (scan/recursive_doubling.c, exscan/recursive_doubling.c have the header comments).
 */
#ifndef COLLIE_SCAN_DOUBLING_H
#define COLLIE_SCAN_DOUBLING_H

#include <stdbool.h>
#include "algorithms/algorithm.h"

/* Appends this rank's schedule: RECV = x_0 ∘ … ∘ x_r (inclusive) or x_0 ∘ … ∘ x_{r-1}
 * (exclusive; rank 0's RECV untouched). */
void scan_doubling_build(collie_schedule *s, const collie_coll_args *a, bool exclusive);

#endif
