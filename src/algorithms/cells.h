/*
 * cells.h — the copy-cell engine (cells.c, cells_blocks.c): allreduce and reduce as a pipelined
 * reduce-scatter + allgather (gather) through every rank's ring of shared cells, bcast as
 * a pipeline through the root's cells, allgather and alltoall as every rank's copy-in and
 * its peers' copy-out, reduce_scatter as alltoall's copy-in and each rank's reduction of
 * its block.  Used by the `cells` algorithms (their driver) and
 * by direct_access.c for calls whose buffers cannot all be mapped.
 */
#ifndef COLLIE_CELLS_H
#define COLLIE_CELLS_H

#include "algorithms/algorithm.h"

struct collie_request;
typedef struct cells_run cells_run;

/* Declines without copy cells (a->cell_bytes == 0), elements larger than a cell, or teams
 * larger than SCHED_MAX_SOURCES. */
bool cells_accepts(const collie_coll_args *a, const char **why);
cells_run *cells_new(struct collie_request *req);       /* NULL (and a message): no memory */
void cells_free(cells_run *c);
void cells_reset(cells_run *c);                          /* at every start */
/* As collie_exec_progress: COLLIE_OK when this rank's part is done, COLLIE_TIMEOUT while
 * it waits, or an error.  Takes the call's cell steps at its first call after a reset. */
int cells_progress(struct collie_request *req, cells_run *c);
/* After cells_progress: COLLIE_OK once every rank freed every step of this call (has
 * copied out of the cells all it takes from them), else COLLIE_TIMEOUT or an error.  A
 * call timed to choose its way waits for it: through the mapped buffers or the kernel
 * copy a rank's call ends only once its peers read its buffer, through the cells it
 * could end while they still copy out of its cells. */
int cells_all_freed(struct collie_request *req, const cells_run *c);
/* The whole call is over on this rank (after any wait that follows cells_progress, such as
 * a bcast root's for its readers): times the way this rank copied into its cells, or a
 * bcast reader out of the root's (core/fill_tune.c).  Harmless for a call that did not
 * take the cells (c may be NULL). */
void cells_finish(struct collie_request *req, cells_run *c);

extern const collie_algo_driver collie_cells_driver;

#endif
