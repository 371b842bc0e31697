/*
 * mpi_transport.c — the channels to peers on other nodes (p2p, the default of the shm+mpi
 * transport, mpi_transport_mixed.c): collie's notified writes carried by non-blocking
 * two-sided MPI on a private duplicate of the communicator.
 *
 * Every rank keeps the channel model of transport.h in its own memory: an inbox (for every
 * sender p, the counter `consumed` and the slot ring p -> me) and, per peer q, an outbox
 * (a shadow of the channel me -> q and of its `consumed` counter).  The executor writes a
 * chunk into the outbox slot and publishes its seq as usual, then calls wake(q): the
 * transport sends the new slots to q (MPI_Isend straight from the slot: header, meta and
 * payload; tag DATA).  q keeps nslots receives posted per sender into staging buffers;
 * progress() copies a completed one into the inbox slot and publishes its seq (release),
 * so the executor finds it exactly as on shm.  When the executor consumes a chunk it
 * publishes `consumed` and calls wake(p): the transport sends the new count back (tag
 * CREDIT), and progress() at p stores it into the outbox counter, after completing the
 * sends it covers (only then may the executor reuse those slots).  MPI keeps messages of
 * one sender and tag in order, so chunks arrive in seq order.
 *
 * Cost per chunk: one MPI message of 128 + payload bytes, one credit message of 8 bytes.
 * Waits poll MPI and sleep 20 µs at a time (there is nothing to sleep on).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "mpi/mpi_layer.h"
#include "transport/channels.h"
#include "transport/transport.h"
#include "mpi/mpi_transport.h"

enum { TAG_DATA = 1, TAG_CREDIT = 2 };
#define HEAD_BYTES (sizeof(collie_slot_hdr) + sizeof(collie_slot_meta))

static mpi_impl *impl_of(collie_transport *tp) { return tp->impl; }

static int message_bytes(const collie_slot_hdr *h) {
    uint32_t len = h->bytes & ~SLOT_DIRECT;
    return (int)(HEAD_BYTES + (len > SLOT_INLINE_BYTES ? len : 0));
}

static void post_recv(collie_transport *tp, int p, uint32_t k) {
    mpi_peer *pe = &impl_of(tp)->peers[p];
    PMPI_Irecv(pe->stage + (size_t)k * tp->slot_stride, (int)tp->slot_stride, MPI_BYTE, p, TAG_DATA,
               impl_of(tp)->comm, &pe->recv[k]);
}

/* Data sends handed to MPI and not yet seen complete, over every p2p transport of the
 * process.  A rank leaves a collective with its last chunk's send in flight, and under
 * MPICH 4.0.2 (ch4:ucx) a message of about 12 to 100 KB moves only while its sender is
 * inside MPI: a rank then waiting in collie on a team that never calls MPI (shm: a
 * communicator within one node) starved the peer that waited for that chunk — and that
 * peer was the one it waited for (mpi_rma_progress.c, pattern biggather; found by mpi_soak
 * under COLLIE_MPI_NODE_SPLIT=2).  While some are in flight, cm_outside_progress runs
 * MPI's progress from those waits, as for RMA windows. */
static _Atomic long sends_in_flight;

/* Completes (wait) or tests the data send *r; counts it off once done. */
static void send_check(MPI_Request *r, bool wait) {
    if (*r == MPI_REQUEST_NULL)
        return;
    int done = 1;
    if (wait)
        PMPI_Wait(r, MPI_STATUS_IGNORE);
    else
        PMPI_Test(r, &done, MPI_STATUS_IGNORE);
    if (done)
        atomic_fetch_sub_explicit(&sends_in_flight, 1, memory_order_relaxed);
}

bool cm_outside_progress(void) {
    if (cm_rma_outside_progress())
        return true;
    if (atomic_load_explicit(&sends_in_flight, memory_order_relaxed) == 0)
        return false;
    cm_poke_quiet();
    return true;
}

/* Sends the chunks the executor published for q since the last flush. */
static void flush_data(collie_transport *tp, int q) {
    mpi_peer *pe = &impl_of(tp)->peers[q];
    while (pe->flushed < tp->sent[q]) {
        uint64_t s = ++pe->flushed;
        uint32_t k = (uint32_t)((s - 1) % tp->nslots);
        collie_slot_hdr *h = collie_slot(tp, &tp->to[q], s);
        send_check(&pe->send[k], true);   /* done: the credit covered it */
        PMPI_Isend(h, message_bytes(h), MPI_BYTE, q, TAG_DATA, impl_of(tp)->comm, &pe->send[k]);
        atomic_fetch_add_explicit(&sends_in_flight, 1, memory_order_relaxed);
    }
}

/* Returns consumed chunks to p (one message with the newest count). */
static void flush_credit(collie_transport *tp, int p) {
    mpi_peer *pe = &impl_of(tp)->peers[p];
    if (tp->received[p] <= pe->credit_out)
        return;
    if (pe->credit_send != MPI_REQUEST_NULL) {
        int done = 0;
        PMPI_Test(&pe->credit_send, &done, MPI_STATUS_IGNORE);
        if (!done)
            return;   /* progress() retries */
    }
    pe->credit_out = tp->received[p];
    pe->credits_sent++;
    PMPI_Isend(&pe->credit_out, 1, MPI_UINT64_T, p, TAG_CREDIT, impl_of(tp)->comm, &pe->credit_send);
}

void cm_mpi_wake(collie_transport *tp, int peer) {
    if (peer == tp->rank || !cm_mpi_remote(impl_of(tp), peer))
        return;
    flush_data(tp, peer);
    flush_credit(tp, peer);
}

/* Moves completed receives from p into the inbox, in order. */
static void drain_data(collie_transport *tp, int p) {
    mpi_peer *pe = &impl_of(tp)->peers[p];
    for (;;) {
        uint32_t k = pe->recv_next;
        int done = 0;
        PMPI_Test(&pe->recv[k], &done, MPI_STATUS_IGNORE);
        if (!done)
            return;
        collie_slot_hdr *staged = (collie_slot_hdr *)(pe->stage + (size_t)k * tp->slot_stride);
        uint64_t s = atomic_load_explicit(&staged->seq, memory_order_relaxed);
        collie_slot_hdr *slot = collie_slot(tp, &tp->from[p], s);
        int n = message_bytes(staged);
        memcpy((char *)slot + sizeof slot->seq, (char *)staged + sizeof staged->seq,
               (size_t)n - sizeof slot->seq);
        atomic_store_explicit(&slot->seq, s, memory_order_release);
        post_recv(tp, p, k);
        pe->recv_next = (k + 1) % tp->nslots;
    }
}

/* Applies credits from q: completes the sends they cover, then frees the slots. */
static void drain_credit(collie_transport *tp, int q) {
    mpi_peer *pe = &impl_of(tp)->peers[q];
    for (;;) {
        int done = 0;
        PMPI_Test(&pe->credit_recv, &done, MPI_STATUS_IGNORE);
        if (!done)
            return;
        uint64_t v = pe->credit_in;
        pe->credits_received++;
        for (uint32_t k = 0; k < tp->nslots; k++)
            send_check(&pe->send[k], false);
        uint64_t first = pe->flushed > tp->nslots ? pe->flushed - tp->nslots + 1 : 1;
        for (uint64_t s = first; s <= v; s++)
            send_check(&pe->send[(s - 1) % tp->nslots], true);
        atomic_store_explicit(&tp->to[q].consumed->value, v, memory_order_release);
        PMPI_Irecv(&pe->credit_in, 1, MPI_UINT64_T, q, TAG_CREDIT, impl_of(tp)->comm, &pe->credit_recv);
    }
}

void cm_mpi_progress(collie_transport *tp) {
    for (int p = 0; p < tp->size; p++) {
        if (p == tp->rank || !cm_mpi_remote(impl_of(tp), p))
            continue;
        drain_data(tp, p);
        drain_credit(tp, p);
        flush_credit(tp, p);
    }
}

void cm_mpi_sleep(collie_transport *tp, uint32_t token, uint64_t timeout_ns) {
    cm_mpi_progress(tp);
    struct timespec ts = { 0, (long)(timeout_ns < 20000 ? timeout_ns : 20000) };
    nanosleep(&ts, NULL);
}

/* ---- release ---------------------------------------------------------------------------
 *
 * The credit messages still on their way must be received before the private communicator
 * goes (every peer says how many it sent), and the sends must complete.  That is
 * collective over the communicator, but a rank releases its transport at a time of its
 * own: in MPI_Comm_free, or, when the program freed the communicator with requests
 * pending, when its last request completes — inside an MPI_Wait or MPI_Test, while other
 * collie requests may need this rank to run.  A blocking exchange there deadlocked (rank
 * 2 in the release's MPI_Alltoall, rank 0 waiting in an MPI_Ireduce for rank 2's chunk;
 * found by mpi_soak under COLLIE_MPI_NODE_SPLIT=2 on MPICH).  So the release only starts
 * it: the counts go by MPI_Ialltoall, and the retiring channels are finished by
 * cm_mpi_retire_poll (every progress pass of the layer) — at MPI_Finalize at the latest,
 * where every rank is.  The collie team itself is gone at once. */

typedef struct cm_retiring {
    struct cm_retiring *next;
    MPI_Comm comm;
    int size;
    uint32_t nslots;
    mpi_peer *peers;              /* taken over from the transport */
    char *inbox;
    bool *remote;                 /* [size]: the peers with MPI channels */
    uint64_t *sent, *expect;      /* [size]: credit messages sent to / coming from each */
    MPI_Request exchange;         /* the Ialltoall of the counts */
} retiring;

static retiring *retiring_list;
static pthread_mutex_t retiring_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int nretiring;

static void cancel_recv(MPI_Request *r) {
    if (*r == MPI_REQUEST_NULL)
        return;
    PMPI_Cancel(r);
    PMPI_Wait(r, MPI_STATUS_IGNORE);
}

/* Has p's side finished: every credit message p sent received, every send done? */
static bool peer_quiet(retiring *r, int p) {
    mpi_peer *pe = &r->peers[p];
    int done = 0;
    while (pe->credits_received < r->expect[p] && pe->credit_recv != MPI_REQUEST_NULL) {
        PMPI_Test(&pe->credit_recv, &done, MPI_STATUS_IGNORE);
        if (!done)
            return false;
        if (++pe->credits_received < r->expect[p])
            PMPI_Irecv(&pe->credit_in, 1, MPI_UINT64_T, p, TAG_CREDIT, r->comm, &pe->credit_recv);
    }
    for (uint32_t k = 0; pe->send && k < r->nslots; k++) {
        send_check(&pe->send[k], false);
        if (pe->send[k] != MPI_REQUEST_NULL)
            return false;
    }
    PMPI_Test(&pe->credit_send, &done, MPI_STATUS_IGNORE);
    return done;
}

static void free_peer(retiring *r, mpi_peer *pe) {
    for (uint32_t k = 0; pe->recv && k < r->nslots; k++)
        cancel_recv(&pe->recv[k]);
    cancel_recv(&pe->credit_recv);
    free(pe->outbox);
    free(pe->stage);
    free(pe->send);
    free(pe->recv);
}

static void free_retiring(retiring *r) {
    free(r->peers);
    free(r->inbox);
    free(r->remote);
    free(r->sent);
    free(r->expect);
    free(r);
}

/* One step of r; true when it is finished (and freed). */
static bool retire_step(retiring *r) {
    int done = 0;
    PMPI_Test(&r->exchange, &done, MPI_STATUS_IGNORE);
    if (!done)
        return false;
    for (int p = 0; p < r->size; p++)
        if (r->remote[p] && !peer_quiet(r, p))
            return false;
    for (int p = 0; p < r->size; p++)
        if (r->remote[p])
            free_peer(r, &r->peers[p]);
    PMPI_Comm_free(&r->comm);
    free_retiring(r);
    return true;
}

/* The p2p channels' releases; true while some are unfinished. */
static bool p2p_retire_poll(void) {
    if (atomic_load_explicit(&nretiring, memory_order_acquire) == 0)
        return false;
    pthread_mutex_lock(&retiring_lock);
    for (retiring **pp = &retiring_list; *pp;) {
        retiring *r = *pp, *next = r->next;
        if (retire_step(r)) {   /* r is freed */
            *pp = next;
            atomic_fetch_sub(&nretiring, 1);
        } else {
            pp = &r->next;
        }
    }
    pthread_mutex_unlock(&retiring_lock);
    return atomic_load_explicit(&nretiring, memory_order_acquire) > 0;
}

void cm_mpi_retire_poll(void) {
    p2p_retire_poll();
    cm_rma_retire_poll();
}

void cm_mpi_retire_all(void) {
    for (;;) {
        bool p2p = p2p_retire_poll(), rma = cm_rma_retire_poll();
        if (!p2p && !rma)
            return;
        sched_yield();
    }
}

/* The release's record, made when the channels are (so that the release cannot fail). */
static retiring *retiring_new(int size) {
    retiring *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->remote = calloc((size_t)size, sizeof *r->remote);
    r->sent = calloc((size_t)size, sizeof *r->sent);
    r->expect = calloc((size_t)size, sizeof *r->expect);
    if (!r->remote || !r->sent || !r->expect) {
        free_retiring(r);
        return NULL;
    }
    return r;
}

/* The release after a failed set-up (every rank takes this path: the failure was agreed,
 * and no channel carried anything): the posted receives cancelled, the buffers and the
 * private communicator freed.  A rank that had failed to allocate its release record
 * (im->retire) skipped the count exchange here while its peers started it and waited for
 * it to finish — at MPI_Finalize for good. */
static void release_failed(collie_transport *tp, mpi_impl *im) {
    if (im->retire)
        free_retiring(im->retire);
    im->retire = NULL;
    for (int p = 0; im->peers && p < tp->size; p++)
        if (p != tp->rank && cm_mpi_remote(im, p)) {
            retiring r = { .nslots = tp->nslots };
            free_peer(&r, &im->peers[p]);
        }
    if (im->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&im->comm);
    free(im->peers);
    free(im->inbox);
    im->peers = NULL;
    im->inbox = NULL;
}

void cm_mpi_release(collie_transport *tp) {
    mpi_impl *im = tp->impl;
    if (!im)
        return;
    if (im->failed) {
        release_failed(tp, im);
        return;
    }
    retiring *r = im->retire;
    im->retire = NULL;
    if (r && im->comm != MPI_COMM_NULL) {
        r->comm = im->comm, r->size = tp->size, r->nslots = tp->nslots;
        r->peers = im->peers, r->inbox = im->inbox;
        for (int p = 0; p < tp->size; p++) {
            r->remote[p] = im->peers && p != tp->rank && cm_mpi_remote(im, p);
            r->sent[p] = r->remote[p] ? im->peers[p].credits_sent : 0;
        }
        PMPI_Ialltoall(r->sent, 1, MPI_UINT64_T, r->expect, 1, MPI_UINT64_T, r->comm, &r->exchange);
        im->comm = MPI_COMM_NULL, im->peers = NULL, im->inbox = NULL;
        pthread_mutex_lock(&retiring_lock);
        r->next = retiring_list;
        retiring_list = r;
        atomic_fetch_add(&nretiring, 1);
        pthread_mutex_unlock(&retiring_lock);
        cm_mpi_retire_poll();
        return;
    }
    if (r)
        free_retiring(r);
    if (im->comm != MPI_COMM_NULL)   /* wiring failed before any channel existed */
        PMPI_Comm_free(&im->comm);
    free(im->peers);
    free(im->inbox);
    im->peers = NULL;
    im->inbox = NULL;
}

/* ---- set-up ----------------------------------------------------------------------------- */

static int setup_peer(collie_transport *tp, int p) {
    mpi_peer *pe = &impl_of(tp)->peers[p];
    size_t chan = sizeof(collie_counter) + collie_channel_bytes(tp->nslots, tp->slot_bytes);
    pe->outbox = aligned_alloc(COLLIE_CACHELINE, chan);
    pe->stage = aligned_alloc(COLLIE_CACHELINE, (size_t)tp->nslots * tp->slot_stride);
    pe->send = malloc(tp->nslots * sizeof *pe->send);
    pe->recv = malloc(tp->nslots * sizeof *pe->recv);
    for (uint32_t k = 0; k < tp->nslots; k++) {   /* the release reads them after a failure */
        if (pe->send)
            pe->send[k] = MPI_REQUEST_NULL;
        if (pe->recv)
            pe->recv[k] = MPI_REQUEST_NULL;
    }
    if (!pe->outbox || !pe->stage || !pe->send || !pe->recv)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the mpi transport's buffers");
    memset(pe->outbox, 0, chan);
    tp->to[p].consumed = (collie_counter *)pe->outbox;
    tp->to[p].slots = pe->outbox + sizeof(collie_counter);
    for (uint32_t k = 0; k < tp->nslots; k++)
        post_recv(tp, p, k);
    PMPI_Irecv(&pe->credit_in, 1, MPI_UINT64_T, p, TAG_CREDIT, impl_of(tp)->comm, &pe->credit_recv);
    return COLLIE_OK;
}

/* Channels: from[p] in my inbox; to[q] in my outbox for q (to[me] unused); only remote
 * peers get MPI buffers and posted receives. */
int cm_mpi_wire(collie_transport *tp) {
    mpi_impl *im = tp->impl;
    size_t bytes = collie_inbox_bytes(tp->size, tp->nslots, tp->slot_bytes);
    im->retire = retiring_new(tp->size);
    if (!im->retire)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the mpi transport's release");
    im->inbox = aligned_alloc(COLLIE_CACHELINE, (bytes + COLLIE_CACHELINE - 1) & ~(size_t)(COLLIE_CACHELINE - 1));
    im->peers = calloc((size_t)tp->size, sizeof *im->peers);
    for (int p = 0; im->peers && p < tp->size; p++)   /* MPI_REQUEST_NULL is not 0 in MPICH */
        im->peers[p].credit_recv = im->peers[p].credit_send = MPI_REQUEST_NULL;
    if (!im->inbox || !im->peers)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the mpi transport's inbox");
    memset(im->inbox, 0, bytes);
    char **inboxes = calloc((size_t)tp->size, sizeof *inboxes);
    if (!inboxes)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the channel table");
    for (int r = 0; r < tp->size; r++)
        inboxes[r] = im->inbox;   /* to[] is rewired below */
    int st = collie_channels_wire(tp, inboxes);
    free(inboxes);
    if (st)
        return collie_fail(st, "cannot allocate the channel table");
    for (int p = 0; p < tp->size && !st; p++)
        if (p != tp->rank && cm_mpi_remote(im, p))
            st = setup_peer(tp, p);
    return st;
}
