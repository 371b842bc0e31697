/*
 * path_tune.h — which way a call of the direct-access driver (allreduce and reduce
 * `direct_segments`, bcast `direct_copy`) moves buffers that are not mapped: in user space
 * through the shared segment (the slots up to COLLIE_SHM_SLOTS_MAX, the copy cells above)
 * or by the kernel's single copy (process_vm_readv/writev).  Decided per collective and
 * size class by the rank that decides the call, from timed calls (path_tune.c).
 */
#ifndef COLLIE_PATH_TUNE_H
#define COLLIE_PATH_TUNE_H

#include <stdint.h>

#include "core/internal.h"

enum { PATH_USER = 0, PATH_KERNEL = 1 };

/* Does the team choose the way per call (COLLIE_SHM_KERNEL_MIN unset)? */
bool path_tune_on(const collie_request_t *req);
/* The rank whose choice every rank follows for req: the root of a bcast or reduce, rank 0
 * of an allreduce. */
int path_tune_decider(const collie_request_t *req);
/* The way this rank, the decider, chooses for req's call (posted on the board). */
int path_tune_pick(collie_request_t *req);
/* The decider's time for a call that went `path` (a call whose buffers were all mapped
 * has no choice and is not recorded). */
void path_tune_record(collie_request_t *req, int path, uint64_t ns);

#endif
