/*
 * mcast.c — the two-stage multicast broadcast, practically constant in P.
 *
 * Source: T. Hoefler, C. Siebert, W. Rehm, "A practically constant-time MPI Broadcast
 *   Algorithm for large-scale InfiniBand Clusters with Multicast", IPDPS/CAC 2007:
 *   §2.1 stage 1 (unreliable): the root multicasts the whole message, cut into fragments
 *   that fit the path MTU, each datagram with a header (team, epoch, root, fragment,
 *   count, length); receivers keep a per-fragment bitmap.  Optional, as in §2.1: a root
 *   delay (COLLIE_MCAST_ROOT_DELAY_US) and the random single-process synchronisation
 *   (COLLIE_MCAST_SYNC=random: per call, a pseudo-random non-root rank drawn from the
 *   seed agreed at team creation sends the root one message, and the root waits for it).
 *   §2.2 stage 2 (reliable): the fragmented chain along the virtual ring over the team's
 *   channels (mcast_chain.c): every rank forwards each fragment it holds to its successor
 *   once, however it got it; the root's predecessor forwards nothing; a rank that got
 *   everything by multicast finishes as soon as it has forwarded it.  No acknowledgements,
 *   no timeouts on the fast path.
 * The multicast socket, group and fragment size are set up and verified when the team is
 *   created (core/mcast_team.c, transport/mcast.c).  Not a schedule: the request runs
 *   through the driver functions below (algorithm.h), in the team's queue like any other.
 *   build() emits the worst case — total loss, i.e. the chain of chain.c with 16 KiB
 *   segments — for the verifier and the simulator.
 * Late chain fragments: a rank that finished by multicast has not read all of its
 *   predecessor's chain chunks for this call (they may still be on the way).  It records
 *   how many in tp->discard[prev]; they are dropped unread, in channel order, before any
 *   later read from prev and whenever the team's queue progresses, so
 *   they can never be taken for a later call's messages.  A rank never finishes owing
 *   more chunks than the channel has slots (it reads and drops the excess first: for a
 *   message of more fragments than slots it waits for its predecessor's forwards, one
 *   pipelined hop): so the predecessor can always complete its forward, whatever its
 *   successor does after the call.
 * Rounds: stage 1 one multicast; stage 2 none for a rank whose predecessor got the
 *   message, else 1 + the number of predecessors in a row that lost fragments ("penalty
 *   rounds"; ε^k for k in a row at loss rate ε; P - 1 at total loss).
 * Bytes sent per rank: root n by multicast + n on the chain; others n on the chain (the
 *   root's predecessor 0).
 * Restrictions: the team's multicast must be set up and verified (COLLIE_MCAST,
 *   COLLIE_BCAST_ALGO=mcast or a tuning rule naming it); "auto" uses it only by rule.
 * Cost: T ≈ α_mc + nβ_mc + (nβ + α) (the forward) + penalty rounds · (α + fβ): constant
 *   in P for small n unless loss runs along the ring.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algorithms/bcast/mcast_call.h"
#include "base/base.h"

#define VERIFY_SEGMENT 16384
#define POLL_FIRST_NS 20000ull
#define POLL_MAX_NS 1000000ull

extern const collie_algorithm collie_algo_bcast_chain;

uint64_t mcast_frag_len(const collie_request_t *req, uint32_t frag) {
    const mcast_call *c = req->algo_state;
    uint64_t off = (uint64_t)frag * c->frag;
    return req->args.bytes - off < c->frag ? req->args.bytes - off : c->frag;
}

bool mcast_take_fragment(collie_request_t *req, uint32_t frag, const void *data, uint64_t len) {
    mcast_call *c = req->algo_state;
    if (c->have[frag])
        return false;
    memcpy((char *)req->buf[SBUF_RECV] + (uint64_t)frag * c->frag, data, len);
    c->have[frag] = 1;
    c->nhave++;
    if (c->next >= 0)
        c->forward[c->fwd_queued++] = frag;
    return true;
}

uint64_t mcast_owed(const collie_request_t *req) {
    const mcast_call *c = req->algo_state;
    return c->prev < 0 ? 0 : req->team->tp->discard[c->prev] + (c->nfrags - c->chain_got);
}

/* ---- stage 1 ----------------------------------------------------------------------------- */

static void multicast_all(collie_request_t *req) {
    mcast_call *c = req->algo_state;
    const char *buf = req->buf[SBUF_RECV];
    for (uint32_t f = 0; f < c->nfrags; f++) {
        mcast_hdr h = { MCAST_MAGIC, MCAST_KIND_DATA, c->mc->team_id, req->call_seq,
                        req->args.root, f, c->nfrags, (uint32_t)mcast_frag_len(req, f),
                        (uint32_t)c->frag, req->args.bytes, req->check, req->id.dtype, { 0 } };
        mcast_send(&c->mc->sock, &h, buf + (uint64_t)f * c->frag);
        c->have[f] = 1;
        if (c->next >= 0)
            c->forward[c->fwd_queued++] = f;
    }
    c->nhave = c->nfrags;
}

/* An authentic datagram (only the team's ranks hold the key) of this call number that
 * does not fit this call: its root believes in another call. */
static int datagram_mismatch(const collie_request_t *req, const mcast_hdr *h, long n) {
    collie_call_id theirs = { .bytes = h->total, .seq_plus1 = h->epoch + 1, .check = h->check,
                              .root = h->root, .dtype = h->dtype, .coll = COLL_BCAST };
    char detail[128];
    snprintf(detail, sizeof detail, "fragment %u of %u, %u bytes (datagram of %ld bytes)",
             h->frag, h->nfrags, h->len, n);
    return collie_call_mismatch_req(req, h->root, "multicast", &theirs, detail);
}

/* What a datagram of m->buf is for this call: -1 ignore, 0 take, 1 later call (held). */
static int classify(const collie_request_t *req, mcast_call *c, long n) {
    const mcast_hdr *h = (const mcast_hdr *)c->mc->sock.buf;
    if ((size_t)n < sizeof *h || h->magic != MCAST_MAGIC || h->kind != MCAST_KIND_DATA ||
        h->team_id != c->mc->team_id)
        return -1;
    int32_t ahead = (int32_t)(h->epoch - req->call_seq);
    if (ahead < 0)
        c->mc->stale++;   /* late, or replayed: never taken for a later call */
    return ahead < 0 ? -1 : ahead > 0 ? 1 : 0;
}

/* Reads every queued datagram of this call; stops at one of a later call. */
static int receive_datagrams(collie_request_t *req, bool *moved) {
    mcast_call *c = req->algo_state;
    mcast_socket *s = &c->mc->sock;
    long n;
    while ((n = mcast_recv(s)) > 0) {
        int kind = classify(req, c, n);
        if (kind < 0)
            continue;
        if (kind > 0) {
            mcast_hold(s, (size_t)n);
            break;
        }
        const mcast_hdr *h = (const mcast_hdr *)s->buf;
        if (h->check != req->check || h->root != req->args.root || h->total != req->args.bytes ||
            h->nfrags != c->nfrags ||
            h->frag_bytes != c->frag || h->frag >= c->nfrags ||
            h->len != mcast_frag_len(req, h->frag) || (size_t)n != sizeof *h + h->len)
            return datagram_mismatch(req, h, n);
        if (mcast_drop_this(&s->drop, s->rank, h)) {
            s->dropped++;
            continue;
        }
        if (mcast_take_fragment(req, h->frag, h + 1, h->len)) {
            c->mc->frags_by_mcast++;
            *moved = true;
        } else {
            c->mc->duplicates++;
        }
    }
    if (n < 0)
        collie_log(COLLIE_LOG_DEBUG, "multicast receive failed (%s); stage 2 repairs", strerror((int)-n));
    return COLLIE_OK;
}

/* The root's own datagrams come back to it (loopback): drop them, keep later calls'. */
static void drain_own(collie_request_t *req) {
    mcast_call *c = req->algo_state;
    long n;
    while ((n = mcast_recv(&c->mc->sock)) > 0)
        if (classify(req, c, n) > 0) {
            mcast_hold(&c->mc->sock, (size_t)n);
            break;
        }
}

/* ---- driving a call ---------------------------------------------------------------------- */

static int driver_prepare(collie_request_t *req) {
    collie_mcast *mc = req->team->mcast;
    if (!mc)
        return collie_fail(COLLIE_ERR_INTERNAL, "mcast planned on a team without multicast");
    mcast_call *c = calloc(1, sizeof *c);
    req->algo_state = c;
    if (!c)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate a multicast broadcast");
    c->mc = mc;
    c->frag = mc->frag_bytes;
    uint64_t n = (req->args.bytes + c->frag - 1) / c->frag;
    if (n > UINT32_MAX / 2)
        return collie_fail(COLLIE_ERR_UNSUPPORTED, "mcast: %llu bytes need more than 2^31 "
                           "fragments", (unsigned long long)req->args.bytes);
    c->nfrags = (uint32_t)n;
    c->have = calloc(n ? n : 1, 1);
    c->forward = calloc(n ? n : 1, sizeof *c->forward);
    if (!c->have || !c->forward)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate a multicast broadcast of %llu "
                           "fragments", (unsigned long long)n);
    return COLLIE_OK;
}

static void driver_start(collie_request_t *req) {
    mcast_call *c = req->algo_state;
    int P = req->args.size, me = req->args.rank, root = req->args.root;
    memset(c->have, 0, c->nfrags);
    c->nhave = c->fwd_sent = c->fwd_queued = c->chain_got = c->by_chain = 0;
    c->phase = PHASE_SYNC;
    c->sync_done = false;
    c->delay_until_ns = 0;
    c->poll_ns = POLL_FIRST_NS;
    c->prev = me == root ? -1 : (me + P - 1) % P;
    c->next = (me + 1) % P == root ? -1 : (me + 1) % P;
    c->sync_rank = -1;
    uint64_t state = c->mc->seed ^ req->call_seq;
    if (c->mc->sync_random && P > 1)
        c->sync_rank = (int)((root + 1 + collie_splitmix64(&state) % (uint64_t)(P - 1)) % (uint64_t)P);
    c->mc->calls++;
}

/* Root: wait for the synchronisation partner and the delay, then multicast. */
static int root_begin(collie_request_t *req, mcast_call *c, bool *moved) {
    if (c->sync_rank >= 0 && !c->sync_done) {
        int st = mcast_sync_receive(req, &c->sync_done);
        if (st || !c->sync_done) {
            req->blocked_peer = c->sync_rank;
            req->blocked_on_credit = false;
            return st ? st : COLLIE_TIMEOUT;
        }
        *moved = true;
    }
    if (c->mc->root_delay_ns) {
        uint64_t now = collie_now_ns();
        if (!c->delay_until_ns)
            c->delay_until_ns = now + c->mc->root_delay_ns;
        if (now < c->delay_until_ns) {
            req->blocked_peer = -1;
            return COLLIE_TIMEOUT;
        }
    }
    multicast_all(req);
    *moved = true;
    return COLLIE_OK;
}

/* Non-root: the synchronisation partner tells the root it is here. */
static int partner_begin(collie_request_t *req, mcast_call *c, bool *moved) {
    if (c->sync_rank != req->args.rank || c->sync_done)
        return COLLIE_OK;
    int st = mcast_sync_send(req, &c->sync_done);
    if (st || !c->sync_done) {
        req->blocked_peer = req->args.root;
        req->blocked_on_credit = true;
        return st ? st : COLLIE_TIMEOUT;
    }
    *moved = true;
    return COLLIE_OK;
}

/* Done: owe the predecessor's unread chunks, drop own datagrams. */
static int complete(collie_request_t *req, mcast_call *c) {
    collie_transport *tp = req->team->tp;
    if (c->prev >= 0 && c->chain_got < c->nfrags) {
        tp->discard[c->prev] += c->nfrags - c->chain_got;
        tp->discard_total += c->nfrags - c->chain_got;
    }
    if (c->prev >= 0 && c->by_chain == 0)
        c->mc->finished_by_mcast++;
    if (c->prev < 0)
        drain_own(req);
    c->phase = PHASE_DONE;
    return COLLIE_OK;
}

static int run(collie_request_t *req, mcast_call *c, bool *moved) {
    int st = COLLIE_OK;
    uint32_t nslots = req->team->tp->nslots;
    if (c->prev >= 0 && c->nhave < c->nfrags)
        st = receive_datagrams(req, moved);
    if (!st && c->prev >= 0)
        st = mcast_chain_receive(req, nslots, moved);
    if (!st && c->next >= 0)
        st = mcast_chain_forward(req, moved);
    if (st)
        return st;
    if (c->nhave < c->nfrags) {
        req->blocked_peer = c->prev;
        req->blocked_on_credit = false;
        return COLLIE_TIMEOUT;
    }
    if (c->next >= 0 && c->fwd_sent < c->nfrags) {
        req->blocked_peer = c->next;
        req->blocked_on_credit = true;
        return COLLIE_TIMEOUT;
    }
    if (mcast_owed(req) > nslots) {   /* the predecessor could block on this rank later */
        req->blocked_peer = c->prev;
        req->blocked_on_credit = false;
        return COLLIE_TIMEOUT;
    }
    return complete(req, c);
}

static int driver_progress(collie_request_t *req) {
    mcast_call *c = req->algo_state;
    bool moved = false;
    int st = COLLIE_OK;
    if (c->nfrags == 0 || c->phase == PHASE_DONE)
        return COLLIE_OK;
    if (c->phase == PHASE_SYNC) {
        st = c->prev < 0 ? root_begin(req, c, &moved) : partner_begin(req, c, &moved);
        if (st == COLLIE_OK)
            c->phase = PHASE_RUN;
    }
    if (c->phase == PHASE_RUN)
        st = run(req, c, &moved);
    if (moved)
        req->moves++;
    return st;
}

/* Datagrams wake no futex: while they may still come (nothing of this call arrived by the
 * chain yet, no datagram of a later call is held — the socket stays readable behind it),
 * sleep in ppoll on the socket with a growing slice (20 µs .. 1 ms) so chain chunks are
 * still seen soon; afterwards, or at the root, sleep on the transport. */
static void driver_sleep(collie_request_t *req, uint32_t token, uint64_t timeout_ns) {
    mcast_call *c = req->algo_state;
    collie_transport *tp = req->team->tp;
    if (c->phase == PHASE_RUN && c->prev >= 0 && c->nhave < c->nfrags && c->chain_got == 0 &&
        !c->mc->sock.held_len) {
        mcast_wait(&c->mc->sock, timeout_ns < c->poll_ns ? timeout_ns : c->poll_ns);
        c->poll_ns = c->poll_ns * 2 < POLL_MAX_NS ? c->poll_ns * 2 : POLL_MAX_NS;
        return;
    }
    uint64_t now = collie_now_ns();
    if (c->phase == PHASE_SYNC && c->delay_until_ns > now && (c->sync_rank < 0 || c->sync_done)) {
        uint64_t ns = c->delay_until_ns - now < timeout_ns ? c->delay_until_ns - now : timeout_ns;
        struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
        nanosleep(&ts, NULL);
        return;
    }
    tp->ops->sleep(tp, token, timeout_ns);
}

static void driver_release(collie_request_t *req) {
    mcast_call *c = req->algo_state;
    if (c) {
        free(c->have);
        free(c->forward);
        free(c);
    }
    req->algo_state = NULL;
}

static const collie_algo_driver mcast_driver = {
    driver_prepare, driver_start, driver_progress, driver_sleep, driver_release,
};

/* The worst case (every datagram lost): the fragmented chain from the root. */
static void build(collie_schedule *s, const collie_coll_args *a) {
    collie_coll_args chain = *a;
    memset(&chain.params, 0, sizeof chain.params);
    chain.params.count = 1;
    strcpy(chain.params.key[0], "segment");
    chain.params.value[0] = VERIFY_SEGMENT;
    collie_algo_bcast_chain.build(s, &chain);
}

const collie_algorithm collie_algo_bcast_mcast = {
    .name = "mcast",
    .coll = COLL_BCAST,
    .needs = ALGO_NEEDS_MULTICAST,
    .summary = "two-stage: unreliable UDP multicast, then the fragmented chain repairs (Hoefler "
               "2007); small messages, large P; needs COLLIE_MCAST",
    .build = build,
    .driver = &mcast_driver,
    .auto_by_rule_only = true,
};
