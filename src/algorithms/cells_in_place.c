/*
 * cells_in_place.c — allgather, alltoall and reduce_scatter through the copy cells when a
 * rank's data lie in registered memory (collie_alloc, the shared heap): its peers read
 * them there.
 *
 * A rank whose data of the call (allgather: its block; alltoall and reduce_scatter: its
 * input) lie in its registered memory, in blocks of at least COLLIE_SHM_CELLS_LEND_MIN
 * bytes, lends them: before its first step it writes where they are into its `lent` line
 * (transport.h), then takes the call's steps as every rank does but copies nothing into
 * its cells — its `in` of step k says that chunk k may be read.  Each peer, at its first
 * step of the call, reads that line and copies the lender's data from the lender's memory
 * mapped into its own (one copy where the cells take two; reduce_scatter reduces straight
 * out of it), or with process_vm_readv where the mapping fails.  The lender returns only
 * once every peer freed the call's last step: its memory is the user's again then.  Each
 * rank decides for itself, so buffers of both kinds mix across the ranks of a call, and
 * the selection, which cannot see the buffers, may take the cells for either kind.
 * In place nothing is lent: alltoall overwrites its input block q with q's data while q may
 * still be reading that block, reduce_scatter its block 0 with its result.
 * Cost: a lending rank saves its copy into the cells ((P−1)·n bytes for alltoall, n for
 * allgather) and its readers read its memory instead of its cells; it waits for the
 * slowest reader's last step at the end (one flag trip, more with ranks sharing cores).
 * So alltoall lends blocks from COLLIE_SHM_CELLS_LEND_MIN bytes and allgather, which saves
 * a P-th as much, from P − 1 times that.  Measured (2026-12-03, AMD EPYC VM, 2 cores,
 * `collie-bench --algo cells --collie-alloc --barrier-each [--fresh-data]` with
 * COLLIE_SHM_CELLS_LEND_MIN=0 and the default in turn, 2 rounds, µs): alltoall lent
 * against copied, P = 2 32 KiB / 512 KiB / 2 MiB 2.4 / 31 / 139-149 against 3.6 / 47 /
 * 208-225; P = 3 128 KiB 32 against 47-51 (fresh 45 against 66-70); P = 4 64 KiB 25
 * against 32-38; P = 8 32 KiB / 128 KiB 56 / 169-203 against 103-114 / 302-331; allgather
 * P = 2 32 KiB 2.2 against 3.3-3.7, P = 3 512 KiB 104-106 against 136-160, but 32 KiB
 * 10.4-11.5 against 9.5-10.3 at P = 3 and 50-52 against 38-40 at P = 8 (the wait at the
 * end), P = 4 64-128 KiB mixed, 256 KiB 66-68 against 81-87.
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/cells_impl.h"
#include "algorithms/direct_board.h"
#include "base/base.h"
#include "types/types.h"

enum { SOURCE_UNKNOWN = 0, SOURCE_CELLS, SOURCE_MAPPED, SOURCE_KERNEL, SOURCE_COPIED };

/* The data this rank's peers read in this call, if it may lend them (else false). */
static bool lendable(const collie_request_t *req, const char **data, uint64_t *len, uint64_t *block) {
    const collie_coll_args *a = &req->args;
    if (!a->single_copy || a->size < 2)
        return false;
    if ((a->coll == COLL_ALLTOALL || a->coll == COLL_REDUCE_SCATTER) && !a->in_place && !a->v) {
        uint64_t recv;
        collie_coll_buffer_bytes(a, a->rank, len, &recv);
        *data = req->buf[SBUF_SEND];
        *block = *len / (uint64_t)a->size;
        return true;   /* a send buffer overlapping recvbuf is a private copy (request.c) */
    }
    if (a->coll != COLL_ALLGATHER)
        return false;
    sched_ref own = collie_coll_own_block(a, len);
    *data = (const char *)req->buf[own.buf] + own.off;
    *block = *len / (uint64_t)(a->size - 1);   /* see the header: (P − 1) × the minimum */
    return true;
}

/* Declared in cells_impl.h. */
void cells_lend_begin(collie_request_t *req, cells_run *c) {
    collie_transport *tp = req->team->tp;
    const char *data;
    uint64_t len, block;
    collie_mem_ref ref;
    memset(c->source, SOURCE_UNKNOWN, (size_t)req->args.size);
    c->lent = false;
    if (!c->nsteps || !lendable(req, &data, &len, &block) || !block ||
        block < tp->cells->lend_min || !collie_find_ref(tp, data, len, &ref))
        return;
    collie_cells_lent *l = &tp->cells->ctrl[req->args.rank].lent;
    l->addr = (uint64_t)(uintptr_t)data;
    l->len = len;
    l->ref = ref;
    l->pid = (int32_t)collie_self_pid();
    /* published with the first step's `in` (a release store) */
    atomic_store_explicit(&l->first, cells_first_number(c, 0), memory_order_relaxed);
    c->lent = true;
    static _Atomic bool logged[COLL_COUNT];   /* once per collective and process */
    if (!atomic_exchange(&logged[req->args.coll], true))
        collie_log(COLLIE_LOG_DEBUG, "rank %d: its peers read its %s data straight from its "
                   "registered memory (blocks from COLLIE_SHM_CELLS_LEND_MIN, %llu bytes)",
                   req->args.rank, collie_coll_name(req->args.coll),
                   (unsigned long long)tp->cells->lend_min);
}

/* Where this rank copies q's data of this call from (looked at once per call, after q's
 * first `in` of it: q's line then describes this call or an earlier one). */
static int source_of(collie_request_t *req, cells_run *c, int q) {
    if (c->source[q] != SOURCE_UNKNOWN)
        return c->source[q];
    collie_transport *tp = req->team->tp;
    const collie_cells_lent *l = &tp->cells->ctrl[q].lent;
    if (atomic_load_explicit(&l->first, memory_order_acquire) != cells_first_number(c, 0))
        return c->source[q] = SOURCE_CELLS;
    c->view[q] = collie_map_peer(tp, q, l->pid, &l->ref, l->len);
    static _Atomic bool logged[COLL_COUNT];
    if (!atomic_exchange(&logged[req->args.coll], true))
        collie_log(COLLIE_LOG_DEBUG, "rank %d: reads rank %d's lent %s data %s", req->args.rank,
                   q, collie_coll_name(req->args.coll),
                   c->view[q] ? "from its memory mapped here" : "with process_vm_readv");
    return c->source[q] = c->view[q] ? SOURCE_MAPPED : SOURCE_KERNEL;
}

const char *cells_lent_source(collie_request_t *req, cells_run *c, int q, uint64_t from,
                              uint64_t n, int *st) {
    int source = source_of(req, c, q);
    *st = COLLIE_OK;
    if (source == SOURCE_MAPPED)
        return c->view[q] + from;
    if (source == SOURCE_CELLS)
        return NULL;
    if (!c->scratch && !(c->scratch = malloc((size_t)req->args.size * c->chunk))) {
        *st = collie_fail(COLLIE_ERR_NOMEM, "rank %d: no memory to read rank %d's lent %s data",
                          req->args.rank, q, collie_coll_name(req->args.coll));
        return NULL;
    }
    char *into = c->scratch + (size_t)q * c->chunk;
    const collie_cells_lent *l = &req->team->tp->cells->ctrl[q].lent;
    *st = direct_read_pid(req, q, l->pid, l->addr + from, into, n);
    return *st ? NULL : into;
}

int cells_lent_fetch(collie_request_t *req, cells_run *c, int q, uint64_t from, char *dst,
                     uint64_t n, bool *done) {
    int source = source_of(req, c, q);
    *done = source != SOURCE_CELLS;
    if (source == SOURCE_CELLS || source == SOURCE_COPIED)
        return COLLIE_OK;
    c->source[q] = SOURCE_COPIED;
    if (source == SOURCE_MAPPED) {
        collie_cell_read(c->out.stream, dst, c->view[q] + from, n);
        return COLLIE_OK;
    }
    const collie_cells_lent *l = &req->team->tp->cells->ctrl[q].lent;
    return direct_read_pid(req, q, l->pid, l->addr + from, dst, n);
}
