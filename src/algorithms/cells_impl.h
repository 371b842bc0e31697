/*
 * cells_impl.h — what the copy-cell engine's files share: cells.c (bcast, the engine's
 * loop and the step helpers), cells_reduce.c (allreduce, reduce), cells_blocks.c
 * (allgather, allgatherv, alltoall, reduce_scatter) and cells_driver.c (the `cells`
 * algorithms' driver).
 * Not for other files: they use cells.h.
 */
#ifndef COLLIE_CELLS_IMPL_H
#define COLLIE_CELLS_IMPL_H

#include "algorithms/cells.h"
#include "core/fill_tune.h"
#include "core/internal.h"

struct cells_run {
    uint64_t base;          /* global step before this call's first */
    uint64_t nsteps, chunk; /* steps, bytes per step (an element multiple): of the vector,
                               or (allgather, alltoall, reduce_scatter) of every block */
    uint64_t width;         /* cells per step (their step numbers): 1, or for a large
                               allreduce / reduce 2 or more adjacent cells (cells.c) */
    uint64_t lap;           /* steps before the call wraps back to its first cell: the
                               ring's window / width */
    uint64_t ring;          /* the ring's cells (collie_cells.ncells) */
    bool rotate;            /* this call's steps rotate between the rings (collie_cell) */
    uint64_t floor;         /* the team's last step number before this call: numbers from
                               floor + 1 to base were skipped (aligning wide steps) */
    uint64_t next_in, next_red, next_out;   /* the next step of each stage (0-based) */
    const void **srcs;      /* [size] */
    fill_way fill;          /* how this rank copies into its cells in this call */
    fill_way out;           /* how a bcast reader copies out of the root's cells */
    bool lent;              /* this call: the peers read this rank's data straight from
                               its registered memory (cells_in_place.c) */
    uint8_t *source;        /* [size]: where this rank reads peer q's data of this call
                               from (cells_in_place.c; 0: not looked at yet) */
    const char **view;      /* [size]: q's lent data, mapped here (or NULL) */
    char *scratch;          /* reduce_scatter: [size][chunk] read from lenders not mapped */
    bool begun;
    bool marked_done;       /* bcast `cells`: this rank marked the call done on the board */
    bool root_reduced;      /* reduce at P = 2, the non-root: the root freed the first step */
};

/* allgather, alltoall and reduce_scatter move blocks (cells_blocks.c); the others a
 * vector. */
bool cells_moves_blocks(int coll);
/* A reduce at P = 2 goes whole through the cells: the non-root copies in, the root
 * reduces. */
bool cells_whole_vector(const collie_request_t *req);

/* Bytes per step for a vector (or the longest block) of `bytes` (see cells.c), at most
 * `cell`; bcast's steps are smaller. */
uint64_t cells_step_bytes(uint64_t bytes, uint64_t elem, uint64_t cell, bool bcast);
/* The cells a step of `chunk` bytes spans, `cell` bytes of each used: the least power of
 * two of them that holds it, at most `widest`. */
uint64_t cells_width(uint64_t cell, uint64_t chunk, uint64_t widest);
/* Takes steps of `chunk` bytes each, `width` cells (step numbers) per step, from the team's
 * step counter (every rank the same), within a window of `window` cells (the ring's, or
 * fewer: cells.c's call_window); width divides the window and the ring's cells. */
void cells_take_steps(collie_request_t *req, cells_run *c, uint64_t nsteps, uint64_t chunk,
                      uint64_t width, uint32_t window);

/* The global step numbers of the call's k-th step (0-based): its first cell's and its
 * last's (the same unless the step is wide).  Every `lap` steps the numbers jump ahead
 * by a whole ring less the lap's cells, so that step k + lap lands in step k's cells
 * (numbers in between are skipped); a call of at most `lap` steps numbers them one after
 * the other. */
static inline uint64_t cells_first_number(const cells_run *c, uint64_t k) {
    return c->base + k / c->lap * c->ring + k % c->lap * c->width + 1;
}
static inline uint64_t cells_last_number(const cells_run *c, uint64_t k) {
    return cells_first_number(c, k) + c->width - 1;
}

/* A step of a vector: its cells' step numbers and its chunk of the vector. */
typedef struct step_view {
    uint64_t t;             /* global step number of the step's first cell */
    uint64_t last;          /* ... and of its last (t unless the step is wide) */
    uint64_t off, len;      /* the chunk in the vector */
    size_t count;           /* its elements */
} step_view;
/* The call's k-th step (0-based). */
step_view cells_view_of(const collie_request_t *req, const cells_run *c, uint64_t k);
/* Rank q's slice of a step: [*lo, *lo + *n) bytes inside the chunk. */
void cells_slice_of(const collie_request_t *req, const step_view *v, int q, uint64_t *lo, uint64_t *n);
/* Has q's word reached step t?  Else notes it as what this rank waits for. */
bool cells_reached(collie_request_t *req, int q, collie_counter *w, uint64_t t);
/* Stores step t in this rank's word w and wakes the peers that sleep. */
void cells_publish(collie_request_t *req, collie_counter *w, uint64_t t);
/* COLLIE_ERR_MISMATCH unless q's cell at step t holds this call (its check word). */
int cells_check_cell(collie_request_t *req, const cells_run *c, int q, uint64_t t);
/* COLLIE_OK when every rank freed the step numbers up to last − ncells that were used (this
 * rank may fill its cells up to step number `last`), else COLLIE_TIMEOUT (or a mismatch
 * found on the way). */
int cells_may_write(collie_request_t *req, const cells_run *c, uint64_t last);
/* COLLIE_OK when rank q published step number `last` in its `in` word and its cell of step
 * number `first` holds this call; else COLLIE_TIMEOUT or the error. */
int cells_wait_in(collie_request_t *req, const cells_run *c, int q, uint64_t first, uint64_t last);

/* Waits for word `in` (out false) or `out` of every other rank at the step of v, and
 * checks their cells: COLLIE_OK, COLLIE_TIMEOUT or the error. */
int cells_all_at(collie_request_t *req, const cells_run *c, const step_view *v, bool out);
/* allreduce and reduce (cells_reduce.c): one move (COLLIE_TIMEOUT: none can go yet), and
 * whether this rank's part of the call is over. */
int cells_reduction_move(collie_request_t *req, cells_run *c);
bool cells_reduction_done(const collie_request_t *req, const cells_run *c);
/* allgather(v), alltoall and reduce_scatter (cells_blocks.c): accepts adds their own
 * conditions to cells_accepts'; begin takes the call's steps; move makes one move
 * (COLLIE_TIMEOUT: none can go yet).  This rank's part is over once next_out reaches nsteps. */
bool cells_blocks_accepts(const collie_coll_args *a, const char **why);
void cells_blocks_begin(collie_request_t *req, cells_run *c);
int cells_blocks_move(collie_request_t *req, cells_run *c);

/* allgather, alltoall, reduce_scatter (cells_in_place.c): lend_begin, at the call's start once its
 * steps are taken, lets the peers copy this rank's data straight from its registered
 * memory when they lie there and are large enough (c->lent; the call then waits at its
 * end until every peer freed its last step).  fetch copies n bytes at `from` of peer q's
 * data (alltoall: its whole input; allgather: its block) into dst when q lent them, and
 * says so in *done; else the caller copies them out of q's cell. */
void cells_lend_begin(collie_request_t *req, cells_run *c);
/* reduce_scatter: n bytes at `from` of peer q's lent input, where this rank can reduce
 * them from (mapped, or read into scratch); NULL when q did not lend (or *st an error). */
const char *cells_lent_source(collie_request_t *req, cells_run *c, int q, uint64_t from,
                              uint64_t n, int *st);
int cells_lent_fetch(collie_request_t *req, cells_run *c, int q, uint64_t from, char *dst,
                     uint64_t n, bool *done);

#endif
