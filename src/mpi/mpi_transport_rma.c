/*
 * mpi_transport_rma.c — the channels to peers on other nodes, RMA variant
 * (COLLIE_MPI_TRANSPORT=rma; used by the shm+mpi transport, mpi_transport_mixed.c):
 * collie's notified writes as MPI-3 one-sided operations.
 *
 * The memory peers write to comes from mpi_rma_window.c (one dynamic window of the
 * process, or a window per communicator, by MPI; its release blocks nowhere): first one
 * credit counter per peer (written by that peer), then the inbox of transport.h (for
 * every sender its `consumed` counter and its slot ring).  The executor writes a chunk
 * into a local outbox shadow of the channel me -> q and calls wake(q): the transport
 * MPI_Puts the new slots (all but the seq word) into q's inbox, flushes, then writes each
 * seq with MPI_Accumulate(MPI_REPLACE) — the notification, ordered after its payload by
 * the flush — and flushes again.  When the executor consumes a chunk from p, the new
 * `consumed` count is written into p's credit counter for this rank the same way.
 * progress() calls MPI_Win_sync (and pokes MPI's progress engine) so loads of the memory
 * see what peers wrote.  Every write is flushed before the call that made it moves on.
 *
 * Cost per batch of chunks to one peer: the puts, two flushes (two round trips), per
 * chunk one 8-byte accumulate; per consumed batch one 8-byte accumulate and a flush.
 *
 * The target must run MPI's progress for a flush to it to return: MPICH 4.0 (ch4:ucx)
 * completes a passive-target MPI_Put or MPI_Accumulate only while the target is inside
 * MPI (Open MPI 4.1 on one node does not need it).  A rank waiting in collie on a team whose
 * transport never calls MPI (shm: a sub-communicator within one node) would leave a peer
 * blocked in MPI_Win_flush to it — and that peer may be the one it waits for.  So while
 * this process has such memory, cm_rma_outside_progress (collie_outside_progress,
 * called by those waits at every turn and at least every 100 µs) pokes MPI's progress.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "mpi/mpi_layer.h"
#include "mpi/mpi_transport.h"
#include "transport/channels.h"
#include "transport/transport.h"

#define HEAD_BYTES (sizeof(collie_slot_hdr) + sizeof(collie_slot_meta))

static rma_impl *impl_of(collie_transport *tp) { return tp->impl; }

static bool remote(const rma_impl *im, int peer) { return !im->local_of || im->local_of[peer] < 0; }

static size_t chunk_bytes(const collie_slot_hdr *h) {
    uint32_t len = h->bytes & ~SLOT_DIRECT;
    return HEAD_BYTES + (len > SLOT_INLINE_BYTES ? len : 0);
}

/* Address of slot s of the channel me -> q inside q's memory. */
static MPI_Aint slot_disp(collie_transport *tp, int q, uint64_t s) {
    size_t chan = collie_channel_bytes(tp->nslots, tp->slot_bytes);
    size_t off = impl_of(tp)->credits_bytes + (size_t)tp->size * sizeof(collie_counter) +
                 (size_t)tp->rank * chan + ((s - 1) % tp->nslots) * tp->slot_stride;
    return MPI_Aint_add(impl_of(tp)->disp[q], (MPI_Aint)off);
}

static void write_u64(collie_transport *tp, const uint64_t *value, int q, MPI_Aint disp) {
    PMPI_Accumulate(value, 1, MPI_UINT64_T, impl_of(tp)->world_of[q], disp, 1, MPI_UINT64_T,
                    MPI_REPLACE, impl_of(tp)->win);
}

static void flush_data(collie_transport *tp, int q) {
    rma_impl *im = impl_of(tp);
    uint64_t first = im->flushed[q] + 1, last = tp->sent[q];
    if (first > last)
        return;
    for (uint64_t s = first; s <= last; s++) {
        collie_slot_hdr *h = collie_slot(tp, &tp->to[q], s);
        int n = (int)(chunk_bytes(h) - sizeof h->seq);
        PMPI_Put((char *)h + sizeof h->seq, n, MPI_BYTE, im->world_of[q],
                 MPI_Aint_add(slot_disp(tp, q, s), (MPI_Aint)sizeof h->seq), n, MPI_BYTE, im->win);
    }
    PMPI_Win_flush(im->world_of[q], im->win);
    for (uint64_t s = first; s <= last; s++) {
        collie_slot_hdr *h = collie_slot(tp, &tp->to[q], s);
        write_u64(tp, (const uint64_t *)&h->seq, q, slot_disp(tp, q, s));
    }
    PMPI_Win_flush(im->world_of[q], im->win);
    im->flushed[q] = last;
}

static void flush_credit(collie_transport *tp, int p) {
    rma_impl *im = impl_of(tp);
    if (tp->received[p] <= im->credit_out[p])
        return;
    im->credit_out[p] = tp->received[p];
    write_u64(tp, &im->credit_out[p], p,
              MPI_Aint_add(im->disp[p], (MPI_Aint)((size_t)tp->rank * sizeof(collie_counter))));
    PMPI_Win_flush(im->world_of[p], im->win);
}

void cm_rma_wake(collie_transport *tp, int peer) {
    if (peer == tp->rank || !remote(impl_of(tp), peer))
        return;
    flush_data(tp, peer);
    flush_credit(tp, peer);
}

void cm_rma_progress(collie_transport *tp) {
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, impl_of(tp)->comm, &flag, MPI_STATUS_IGNORE);
    PMPI_Win_sync(impl_of(tp)->win);
}

void cm_rma_sleep(collie_transport *tp, uint32_t token, uint64_t timeout_ns) {
    cm_rma_progress(tp);
    struct timespec ts = { 0, (long)(timeout_ns < 20000 ? timeout_ns : 20000) };
    nanosleep(&ts, NULL);
}

bool cm_rma_outside_progress(void) {
    if (!cm_rma_windows_live())
        return false;
    cm_poke_quiet();
    return true;
}

/* ---- release ------------------------------------------------------------------------------ */

/* Collective over the communicator, but blocks nowhere (mpi_rma_window.c). */
void cm_rma_release(collie_transport *tp) {
    rma_impl *im = tp->impl;
    for (int q = 0; im->outbox && q < tp->size; q++)
        free(im->outbox[q]);
    free(im->outbox);
    free(im->flushed);
    free(im->credit_out);
    im->outbox = NULL;
    im->flushed = im->credit_out = NULL;
    cm_rma_window_put(im);
}

/* ---- set-up ------------------------------------------------------------------------------- */

/* to[q] of remote peers: an outbox shadow, its consumed counter in my memory's credits. */
static int wire_remote(collie_transport *tp) {
    rma_impl *im = tp->impl;
    size_t chan = sizeof(collie_counter) + collie_channel_bytes(tp->nslots, tp->slot_bytes);
    for (int q = 0; q < tp->size; q++) {
        if (q == tp->rank || !remote(im, q))
            continue;
        im->outbox[q] = aligned_alloc(COLLIE_CACHELINE, chan);
        if (!im->outbox[q])
            return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the rma transport's outbox");
        memset(im->outbox[q], 0, chan);
        tp->to[q].slots = im->outbox[q] + sizeof(collie_counter);
        tp->to[q].consumed = (collie_counter *)im->base + q;   /* written by q */
    }
    return COLLIE_OK;
}

static int wire(collie_transport *tp) {
    rma_impl *im = tp->impl;
    char **inboxes = calloc((size_t)tp->size, sizeof *inboxes);
    im->outbox = calloc((size_t)tp->size, sizeof *im->outbox);
    im->flushed = calloc((size_t)tp->size, sizeof *im->flushed);
    im->credit_out = calloc((size_t)tp->size, sizeof *im->credit_out);
    if (!inboxes || !im->outbox || !im->flushed || !im->credit_out) {
        free(inboxes);
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the rma transport's tables");
    }
    for (int r = 0; r < tp->size; r++)
        inboxes[r] = im->base + im->credits_bytes;
    int st = collie_channels_wire(tp, inboxes);
    free(inboxes);
    if (st)
        return collie_fail(st, "cannot allocate the channel table");
    return wire_remote(tp);
}

/* My memory and the channels of remote peers (collective over im->comm; tp's rank, size
 * and slot geometry set).  On failure the caller still calls cm_rma_release. */
int cm_rma_wire(collie_transport *tp) {
    rma_impl *im = tp->impl;
    im->credits_bytes = (size_t)tp->size * sizeof(collie_counter);
    size_t bytes = im->credits_bytes + collie_inbox_bytes(tp->size, tp->nslots, tp->slot_bytes);
    int st = cm_rma_window_get(im, tp->size, bytes);
    if (!st)
        st = wire(tp);
    int all = st;
    PMPI_Allreduce(&st, &all, 1, MPI_INT, MPI_MIN, im->comm);
    if (all && !st)
        st = collie_fail(all, "another rank failed to set up the rma transport");
    if (st) {
        im->failed = true;   /* at every rank: the release frees at once */
        return st;
    }
    return cm_rma_window_share(im);
}
