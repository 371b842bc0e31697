/*
 * mcast_chain.c — stage 2 of the multicast broadcast (Hoefler 2007 §2.2): the reliable
 * fragmented chain along the virtual ring, on the team's channels (transport.h).
 *
 * Every rank but the root's predecessor forwards each fragment it holds to its successor
 * exactly once, in the order it got them, whether by multicast or by the chain; so every
 * rank but the root receives exactly nfrags chain chunks from its predecessor per call.
 * One chunk is one fragment (fragments are at most one slot): the slot header's check
 * word is the call's hash, its meta line names the call (call_seq) and, in `addr`, the
 * fragment index.  Chunks that a rank did not wait for (it had the fragment by multicast)
 * are consumed later through tp->discard (see mcast.c) — in order, so the channel's FIFO
 * is the same for both sides.
 */
#include <string.h>

#include "algorithms/bcast/mcast_call.h"
#include "base/base.h"

static uint32_t chain_check(const collie_request_t *req) {
    return (req->check ^ 0xC4A1Eu) * 0x9E3779B1u;
}

static uint32_t sync_check(const collie_request_t *req) {
    return (req->check ^ 0x5F7Cu) * 0x85EBCA6Bu;
}

/* The next free slot of channel me -> q, or NULL while q has not returned one. */
static collie_slot_hdr *claim_slot(collie_transport *tp, int q) {
    uint64_t s = tp->sent[q] + 1;
    if (s > tp->nslots + tp->credit[q]) {
        tp->credit[q] = atomic_load_explicit(&tp->to[q].consumed->value, memory_order_acquire);
        if (s > tp->nslots + tp->credit[q])
            return NULL;
    }
    return collie_slot(tp, &tp->to[q], s);
}

static void publish(collie_transport *tp, int q, collie_slot_hdr *h, const collie_request_t *req,
                    uint32_t check, uint64_t frag, uint64_t len) {
    collie_slot_meta *m = collie_slot_meta_of(h);
    h->check = check;
    h->bytes = (uint32_t)len;
    m->pid = 0;
    m->call_seq = req->call_seq;
    m->addr = frag;
    m->msg_bytes = req->args.bytes;
    m->call_bytes = req->args.bytes;
    m->coll = (uint8_t)req->args.coll;
    uint64_t s = tp->sent[q] + 1;
    atomic_store_explicit(&h->seq, s, memory_order_release);
    tp->sent[q] = s;
}

/* peer's next chunk after what this rank still owes to drop, or NULL. */
static collie_slot_hdr *next_chunk(collie_transport *tp, int peer) {
    if (tp->discard[peer] && !collie_discard_progress(tp, peer))
        return NULL;
    uint64_t s = tp->received[peer] + 1;
    collie_slot_hdr *h = collie_slot(tp, &tp->from[peer], s);
    return atomic_load_explicit(&h->seq, memory_order_acquire) == s ? h : NULL;
}

static void release_chunk(collie_transport *tp, int peer) {
    uint64_t s = ++tp->received[peer];
    atomic_store_explicit(&tp->from[peer].consumed->value, s, memory_order_release);
    collie_wake_later(tp, peer);
}

static int mismatch(const collie_request_t *req, int peer, collie_slot_hdr *h, const char *what) {
    const collie_slot_meta *m = collie_slot_meta_of(h);
    return collie_fail(COLLIE_ERR_MISMATCH,
                       "bcast #%u (mcast, %llu bytes, root %d) got %s from rank %d: a message of "
                       "%s #%u (%llu bytes): ranks called different collectives, counts, roots "
                       "or algorithms", req->call_seq, (unsigned long long)req->args.bytes,
                       req->args.root, what, peer, collie_coll_name(m->coll), m->call_seq,
                       (unsigned long long)m->call_bytes);
}

int mcast_chain_forward(collie_request_t *req, bool *moved) {
    mcast_call *c = req->algo_state;
    collie_transport *tp = req->team->tp;
    bool wrote = false;
    while (c->fwd_sent < c->fwd_queued) {
        collie_slot_hdr *h = claim_slot(tp, c->next);
        if (!h)
            break;
        uint32_t f = c->forward[c->fwd_sent];
        uint64_t len = mcast_frag_len(req, f);
        memcpy(collie_slot_payload(h, len), (char *)req->buf[SBUF_RECV] + f * c->frag, len);
        publish(tp, c->next, h, req, chain_check(req), f, len);
        c->fwd_sent++;
        wrote = true;
    }
    if (wrote) {
        collie_wake_later(tp, c->next);
        *moved = true;
    }
    return COLLIE_OK;
}

int mcast_chain_receive(collie_request_t *req, uint64_t max_owed, bool *moved) {
    mcast_call *c = req->algo_state;
    collie_transport *tp = req->team->tp;
    while (c->chain_got < c->nfrags && (c->nhave < c->nfrags || mcast_owed(req) > max_owed)) {
        collie_slot_hdr *h = next_chunk(tp, c->prev);
        if (!h)
            break;
        const collie_slot_meta *m = collie_slot_meta_of(h);
        if (h->check != chain_check(req) || m->call_seq != req->call_seq || m->addr >= c->nfrags ||
            h->bytes != mcast_frag_len(req, (uint32_t)m->addr))
            return mismatch(req, c->prev, h, "a chain fragment");
        if (mcast_take_fragment(req, (uint32_t)m->addr, collie_slot_payload(h, h->bytes), h->bytes)) {
            c->mc->frags_by_chain++;
            c->by_chain++;
        }
        release_chunk(tp, c->prev);
        c->chain_got++;
        *moved = true;
    }
    return COLLIE_OK;
}

int mcast_sync_send(collie_request_t *req, bool *done) {
    collie_transport *tp = req->team->tp;
    int root = req->args.root;
    collie_slot_hdr *h = claim_slot(tp, root);
    *done = h != NULL;
    if (h) {
        publish(tp, root, h, req, sync_check(req), 0, 0);
        collie_wake_later(tp, root);
    }
    return COLLIE_OK;
}

int mcast_sync_receive(collie_request_t *req, bool *done) {
    mcast_call *c = req->algo_state;
    collie_transport *tp = req->team->tp;
    collie_slot_hdr *h = next_chunk(tp, c->sync_rank);
    *done = h != NULL;
    if (!h)
        return COLLIE_OK;
    if (h->check != sync_check(req) || h->bytes != 0)
        return mismatch(req, c->sync_rank, h, "the synchronisation message");
    release_chunk(tp, c->sync_rank);
    return COLLIE_OK;
}
