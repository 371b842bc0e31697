/*
 * direct_access_impl.h — what the two files of the direct-access driver share:
 * direct_access.c (the driver, allreduce and reduce `direct_segments`, the choice of path)
 * and direct_access_bcast.c (bcast `direct_copy`).  Not for other files: they use
 * direct_access.h.
 */
#ifndef COLLIE_DIRECT_ACCESS_IMPL_H
#define COLLIE_DIRECT_ACCESS_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "algorithms/cells.h"
#include "core/internal.h"

/* Where a call of the driver is (direct_state.phase). */
enum direct_phase {
    DIRECT_POST = 0,        /* not yet posted on the board */
    DIRECT_WAIT_READY,      /* posted; waits for the peers' posts */
    DIRECT_WAIT_DONE,       /* its own part done; waits for the peers' (or returns) */
    DIRECT_CELLS,           /* moving through the copy cells (cells.c) */
    DIRECT_SLOTS,           /* running the algorithm's schedule through the slots */
    DIRECT_WAIT_WRITERS,    /* a split bcast's reader: its part copied, waits for every
                               rank's `done` (the writers of its buffer) */
};

typedef struct peer_view {
    const char *in;             /* mapped input (segment reads), or NULL: process_vm_readv */
    char *out;                  /* mapped output, or NULL: process_vm_writev */
} peer_view;

typedef struct direct_state {
    int phase;
    uint64_t chunk;             /* bytes per chunk, an element multiple */
    peer_view *view;            /* [size] */
    const void **srcs;          /* [size] */
    char *scratch;              /* [size][chunk]: chunks read from unmapped inputs */
    char *out_scratch;          /* [chunk]: a reduced chunk for an unmapped reduce root */
    cells_run *cells;           /* the copy-cell engine (with copy cells) */
    bool via_cells;             /* this call goes through them */
    bool had_choice;            /* the way of this call was chosen (path_tune.c) */
    bool all_mapped;            /* ... for buffers that are all mapped */
    int path;                   /* ... and is this (PATH_USER, PATH_KERNEL, PATH_CELLS,
                                   PATH_MAPPED) */
    uint64_t posted_ns;         /* the decider: when it posted this call */
    bool deliver_stream;        /* writes into mapped peers' outputs use streaming stores
                                   (allreduce past the caches: reduce_segment) */
} direct_state;

/* Maps (or leaves NULL, for the kernel copy) every peer's posted input and output. */
void direct_map_peers(collie_request_t *req, direct_state *d);
/* Writes len bytes at `from` into rank q's output at off: mapped, or process_vm_writev. */
int direct_deliver(collie_request_t *req, direct_state *d, int q, const char *from, uint64_t off,
                   uint64_t len);
/* Every rank posted: does a bcast split the copy among the ranks (direct_access_bcast.c)? */
bool direct_bcast_splits(const collie_request_t *req);
/* Does the call go through the copy cells (or the slots: direct_use_slots) rather than the
 * buffers themselves? */
bool direct_use_cells(const collie_request_t *req, direct_state *d);
bool direct_use_slots(const collie_request_t *req, const direct_state *d);
/* The slots path: the schedule, then the phase DIRECT_WAIT_DONE. */
int direct_progress_slots(collie_request_t *req, direct_state *d);
/* bcast `direct_copy` once posted (direct_access_bcast.c). */
int direct_progress_bcast(collie_request_t *req, direct_state *d);

#endif
