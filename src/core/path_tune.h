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
 * slots: path_tune_pick's cells_trial, or against PATH_MAPPED);
 * PATH_MAPPED: loads and stores in the peers' buffers themselves, when every buffer the
 * call touches is mapped (collie_alloc or the shared heap). */
enum { PATH_USER = 0, PATH_KERNEL = 1, PATH_CELLS = 2, PATH_MAPPED = 3, PATH_WAYS = 4 };

/* From this size a call whose buffers are all mapped tries the copy cells against the
 * mapped buffers (path_tune_pick_mapped) when every rank has a core; below, the mapped
 * buffers.  Measured (bench/compare, 2026-11-27, AMD EPYC VM): with fresh data the cells
 * beat the mapped buffers for allreduce at P = 2 from 8 MiB (32 MiB: 3.0 against 3.9 ms);
 * the mapped buffers won everywhere below 1 MiB. */
#define PATH_MAPPED_TRIAL_MIN (1u << 20)

/* A trial block's time from its counted calls' times ns[0..n) (n <= 3; 0 for none): with
 * `median` (every rank has a core) their median, of two the slower; else the fastest.  A
 * way's time is the best of its blocks' times. */
uint64_t path_tune_block_time(const uint64_t *ns, int n, bool median);
/* Does the team choose the way per call (COLLIE_SHM_KERNEL_MIN unset)? */
bool path_tune_on(const collie_request_t *req);
/* The rank whose choice every rank follows for req: the root of a bcast or reduce, else
 * rank 0. */
int path_tune_decider(const collie_request_t *req);
/* The way this rank, the decider, chooses for req's call (posted on the board); with
 * cells_trial (the call would take the slots) PATH_CELLS is tried too, else only
 * PATH_USER and PATH_KERNEL.  A size class keeps the ways of its first call. */
int path_tune_pick(collie_request_t *req, bool cells_trial);
/* Would a call like req whose buffers are all mapped time the copy cells against the
 * mapped buffers (path tuning on, at least PATH_MAPPED_TRIAL_MIN bytes, every rank has a
 * core)?  The same answer on every rank. */
bool path_tune_mapped_trial(const collie_request_t *req);
/* The way the decider chooses for req's call if every buffer turns out mapped:
 * PATH_MAPPED, or from PATH_MAPPED_TRIAL_MIN bytes where every rank has a core PATH_MAPPED
 * or PATH_CELLS from timed calls (posted on the board beside the other). */
int path_tune_pick_mapped(collie_request_t *req);
/* The decider's time for a call that went `path` with a choice: buffers not all mapped
 * (path_tune_record) or all mapped (path_tune_record_mapped). */
void path_tune_record(collie_request_t *req, int path, uint64_t ns);
void path_tune_record_mapped(collie_request_t *req, int path, uint64_t ns);
/* Is this rank the decider of req's call, and does the call's time count in a trial not
 * yet decided (that of buffers all mapped, or of the others)?  Such a call ends only once
 * its peers took what it moved (the direct drivers: collie_exec_sends_consumed,
 * cells_all_freed). */
bool path_tune_timed(collie_request_t *req, bool all_mapped);
/* The same for the messages a rank sends in a schedule's call (executor_prepare.c): the way
 * of this rank's large messages in req's call, and its time for a call that went `path`. */
int path_tune_sched_pick(collie_request_t *req);
/* Is req's call (its way picked) one whose time counts in the trial (not yet decided)? */
bool path_tune_sched_timed(collie_request_t *req);
void path_tune_sched_record(collie_request_t *req, int path, uint64_t ns);
/* How many of the first calls through the copy cells of req's size class may be the way
 * trial's own (its untimed calls and its timed blocks through the cells; 0 with path tuning
 * off): fill_tune.c starts its trials of the copies into and out of the cells after them,
 * so that no call the way trial counts is one of the copy trial's slower tries.  The same
 * on every rank. */
int path_tune_cells_calls_in_trial(const collie_request_t *req);
/* Is the n-th call (from 0) through the copy cells of req's size class one of the way
 * trial's last block (allgather and alltoall from 1 MiB blocks: the trial of the cells
 * against the kernel copy)?  There the copies out of the cells go the other way
 * (fill_tune.c), so that the cells' time in the trial is the better of the two ways out.
 * The same on every rank. */
bool path_tune_cells_last_block(const collie_request_t *req, uint64_t n);

#endif
