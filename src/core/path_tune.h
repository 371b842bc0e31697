/*
 * path_tune.h — which way buffers that are not mapped move: in user space through the
 * shared segment (the slots, or the copy cells of the direct-access driver) or by the
 * kernel's single copy (process_vm_readv/writev).  Decided per collective and size class
 * from timed calls (path_tune.c): for a call of the direct-access driver (allreduce and
 * reduce `direct_segments`, bcast `direct_copy`) by the rank that decides the call, for
 * the messages of a schedule by each rank that sends them.
 */
#ifndef COLLIE_PATH_TUNE_H
#define COLLIE_PATH_TUNE_H

#include <stdint.h>

#include "core/internal.h"

/* PATH_USER: the slots for calls up to the slots' limit, else the copy cells;
 * PATH_CELLS: the copy cells at any size (a way tried only where PATH_USER means the
 * slots: path_tune_pick's cells_trial). */
enum { PATH_USER = 0, PATH_KERNEL = 1, PATH_CELLS = 2, PATH_WAYS = 3 };

/* Does the team choose the way per call (COLLIE_SHM_KERNEL_MIN unset)? */
bool path_tune_on(const collie_request_t *req);
/* The rank whose choice every rank follows for req: the root of a bcast or reduce, else
 * rank 0. */
int path_tune_decider(const collie_request_t *req);
/* The way this rank, the decider, chooses for req's call (posted on the board); with
 * cells_trial (the call would take the slots) PATH_CELLS is tried too, else only
 * PATH_USER and PATH_KERNEL.  A size class keeps the ways of its first call. */
int path_tune_pick(collie_request_t *req, bool cells_trial);
/* The decider's time for a call that went `path` (a call whose buffers were all mapped
 * has no choice and is not recorded). */
void path_tune_record(collie_request_t *req, int path, uint64_t ns);
/* The same for the messages a rank sends in a schedule's call (executor_prepare.c): the way
 * of this rank's large messages in req's call, and its time for a call that went `path`. */
int path_tune_sched_pick(collie_request_t *req);
void path_tune_sched_record(collie_request_t *req, int path, uint64_t ns);

#endif
