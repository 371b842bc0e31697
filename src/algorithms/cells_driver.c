/*
 * cells_driver.c — the driver of the `cells` algorithms (allreduce, reduce, bcast,
 * allgather, reduce_scatter, alltoall): the copy-cell engine (cells.c, cells_blocks.c)
 * runs the call; then the checks that ranks which read nothing from their peers need to
 * learn that those called the same (a bcast's root, a reduce's non-root at P = 2).
 */
#include "algorithms/cells_impl.h"
#include "algorithms/direct_access.h"
#include "core/internal.h"

static int driver_prepare(collie_request_t *req) {
    req->algo_state = cells_new(req);
    return req->algo_state ? COLLIE_OK : COLLIE_ERR_NOMEM;
}

static void driver_start(collie_request_t *req) { cells_reset(req->algo_state); }

/* bcast `cells`, once this rank's part is over: it marks the call done on the board, and
 * the root waits until every rank did and checks that all did this call.  A reader
 * learns the root from the root's cell (its check word); the root learns nothing from
 * the readers' `freed` (a rank that also believes itself the root frees its own steps),
 * so without this two ranks that disagree about the root would both return OK (seen:
 * run_mismatch.sh bcast_root with COLLIE_BCAST_ALGO=cells, P = 2, 3, 4).  Measured
 * (P = 2, 128 KiB, fast state): the root then ends a cache-line trip after the reader
 * (3.0-3.2 us) instead of after its last copy-in (2.3-2.4). */
static int bcast_agree(collie_request_t *req, cells_run *c) {
    if (!c->marked_done) {
        direct_mark_done(req);
        c->marked_done = true;
    }
    return direct_bcast_root_done(req);
}

/* reduce `cells` at P = 2 (the whole vector through the cells), the non-root once its
 * copy-in is over: it reads nothing from the root, so it learns only from the root's
 * record of this call number (collie_board_publish, at the call's start) that the root
 * did the same call; it waits until the root started it.  Without this, two ranks that
 * each named the other as the root both returned OK (run_mismatch.sh reduce_root_next,
 * COLLIE_REDUCE_ALGO=cells, P = 2).  The root may already be several calls further (it
 * needed nothing more from this rank), its record of this call overwritten by a later
 * one (the history holds COLLIE_CALL_HISTORY calls): then it did start this call and
 * took this rank's steps, and this rank cannot check it (seen waiting for ever in
 * mp.cells_mixed.P2 before that case was allowed).  A peer that ran ahead so far without
 * being this call's root is a mismatch that may go unreported. */
static int reduce_root_agrees(collie_request_t *req) {
    int root = req->args.root;
    const collie_transport *tp = req->team->tp;
    if (!tp->board || collie_board_past_call(tp, root, req->call_seq))
        return COLLIE_OK;   /* no board, or the root is past this call */
    collie_call_id theirs;
    if (!collie_board_call(tp, root, req->call_seq, &theirs)) {
        req->blocked_peer = root;
        return COLLIE_TIMEOUT;
    }
    return theirs.check == req->check ? COLLIE_OK
                                      : collie_call_mismatch_req(req, root, "called", &theirs, NULL);
}

static int driver_progress(collie_request_t *req) {
    cells_run *c = req->algo_state;
    /* allgatherv: this rank's block may be empty while the others' are not */
    if (req->args.size == 1 || (req->args.bytes == 0 && !cells_moves_blocks(req->args.coll)))
        return collie_exec_progress(req);
    int st = cells_progress(req, c);
    if (st == COLLIE_OK && req->args.coll == COLL_BCAST)
        st = bcast_agree(req, c);
    if (st == COLLIE_OK && cells_whole_vector(req) && req->args.rank != req->args.root)
        st = reduce_root_agrees(req);
    if (st == COLLIE_OK)
        cells_finish(req, c);
    return st;
}

static void driver_release(collie_request_t *req) {
    cells_free(req->algo_state);
    req->algo_state = NULL;
}

const collie_algo_driver collie_cells_driver = {
    driver_prepare, driver_start, driver_progress, NULL, driver_release,
};
