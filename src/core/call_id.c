/*
 * call_id.c — what a call is, as far as every rank must agree (collective, sequence
 * number, count and datatype, op identity, root), and the message that names both calls
 * of a mismatch and what differs between them:
 *   "allreduce #3 (int32 x4, sum) here, but rank 1 sent allreduce #3 (float32 x4, sum):
 *    the datatypes differ"
 * Used wherever calls meet: chunk headers (executor), the board (direct drivers, stall
 * check), multicast datagrams and the COLLIE_CHECK agreement step.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "core/internal.h"
#include "types/types.h"

/* What every rank of a v form agrees on: a hash of the counts all ranks pass
 * (allgatherv, reduce_scatter); 0 where each rank passes its own (gatherv, scatterv,
 * alltoallv: there a count mismatch is a message of another size, which the receiver
 * reports). */
static uint64_t counts_hash(const collie_coll_args *a) {
    if (a->coll != COLL_ALLGATHER && a->coll != COLL_REDUCE_SCATTER)
        return 0;
    uint64_t h = 1469598103934665603ull;
    for (int j = 0; j < a->size; j++)
        h = (h ^ (uint64_t)a->v->counts[j]) * 1099511628211ull;
    return h | 1;
}

void collie_call_id_init(collie_request_t *req) {
    collie_call_id *id = &req->id;
    memset(id, 0, sizeof *id);
    id->bytes = req->args.v ? counts_hash(&req->args) : req->args.bytes;
    id->vform = req->args.v != NULL;
    id->root = collie_coll_rooted(req->args.coll) ? req->args.root : 0;
    id->dtype = req->args.coll == COLL_BARRIER ? 0 : collie_dtype_compact(req->dtype);
    id->op = req->op ? collie_op_identity(req->op) : 0;
    id->coll = (uint8_t)req->args.coll;
}

void collie_call_id_from_meta(const collie_slot_meta *m, uint32_t check, collie_call_id *id) {
    memset(id, 0, sizeof *id);
    id->bytes = m->call_bytes;
    id->seq_plus1 = m->call_seq + 1;
    id->check = check;
    id->root = m->root;
    id->dtype = m->dtype;
    id->op = m->op;
    id->coll = m->coll;
    id->vform = m->vform;
}

/* The public name of the call: "allgatherv", "reduce_scatter_block", "scan". */
static void call_name(const collie_call_id *id, char *buf, size_t size) {
    const char *coll = collie_coll_name(id->coll);
    if (id->coll == COLL_REDUCE_SCATTER)
        snprintf(buf, size, "%s", id->vform ? coll : "reduce_scatter_block");
    else
        snprintf(buf, size, "%s%s", coll, id->vform ? "v" : "");
}

/* "int32 x4", or for a v form its counts. */
static void call_what(const collie_call_id *id, char *what, size_t size) {
    collie_dtype_t dt = collie_dtype_expand(id->dtype);
    size_t elem = collie_dtype_size(dt);
    if (id->vform && id->bytes)
        snprintf(what, size, "%s, counts #%08llx", collie_dtype_name(dt),
                 (unsigned long long)(id->bytes & 0xffffffffu));
    else if (id->vform)
        snprintf(what, size, "%s, per-rank counts", collie_dtype_name(dt));
    else if (elem)
        snprintf(what, size, "%s x%llu", collie_dtype_name(dt),
                 (unsigned long long)(id->bytes / elem));
    else
        snprintf(what, size, "%llu bytes", (unsigned long long)id->bytes);
}

const char *collie_call_describe(const collie_call_id *id, char *buf, size_t size) {
    char coll[32], seq[24] = "", what[64], op[32];
    call_name(id, coll, sizeof coll);
    if (id->seq_plus1)
        snprintf(seq, sizeof seq, " #%u", id->seq_plus1 - 1);
    if (id->coll == COLL_BARRIER) {
        snprintf(buf, size, "%s%s", coll, seq);
        return buf;
    }
    call_what(id, what, sizeof what);
    collie_op_identity_name(id->op, op, sizeof op);
    bool rooted = collie_coll_rooted(id->coll), has_op = collie_coll_has_op(id->coll);
    if (rooted && has_op)
        snprintf(buf, size, "%s%s (%s, %s, root %d)", coll, seq, what, op, id->root);
    else if (rooted)
        snprintf(buf, size, "%s%s (%s, root %d)", coll, seq, what, id->root);
    else if (has_op)
        snprintf(buf, size, "%s%s (%s, %s)", coll, seq, what, op);
    else
        snprintf(buf, size, "%s%s (%s)", coll, seq, what);
    return buf;
}

/* "the datatypes and the ops differ" — or the algorithms, when all fields agree. */
static void differences(const collie_call_id *a, const collie_call_id *b, char *buf, size_t size) {
    const char *what[7];
    int n = 0;
    if (a->coll != b->coll)
        what[n++] = "collectives";
    if (a->coll == b->coll && a->vform != b->vform)
        what[n++] = "forms (block and v)";
    if (a->seq_plus1 && b->seq_plus1 && a->seq_plus1 != b->seq_plus1)
        what[n++] = "call numbers";
    if (a->dtype != b->dtype)
        what[n++] = "datatypes";
    if (a->bytes != b->bytes && a->vform == b->vform)
        what[n++] = a->dtype == b->dtype ? "counts" : "sizes";
    if (a->op != b->op)
        what[n++] = "ops";
    if (a->root != b->root)
        what[n++] = "roots";
    if (n == 0 && a->vform && b->vform && !a->bytes) {   /* gatherv, scatterv, alltoallv */
        snprintf(buf, size, "the counts differ (each rank's counts of this pair of ranks)");
        return;
    }
    if (n == 0) {
        snprintf(buf, size, "the calls agree but their algorithms or settings differ "
                 "(COLLIE_<COLL>_ALGO, the tuning file)");
        return;
    }
    size_t at = (size_t)snprintf(buf, size, "the ");
    for (int i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", what[i],
                               i + 2 < n ? ", " : i + 1 < n ? " and " : "");
    if (at < size)
        snprintf(buf + at, size - at, " differ");
}

int collie_call_mismatch(const collie_call_id *mine, int peer, const char *how,
                         const collie_call_id *theirs, const char *detail) {
    char a[128], b[128], d[160];
    collie_call_describe(mine, a, sizeof a);
    collie_call_describe(theirs, b, sizeof b);
    differences(mine, theirs, d, sizeof d);
    return collie_fail(COLLIE_ERR_MISMATCH, "%s here, but rank %d %s %s: %s%s%s", a, peer, how, b,
                       d, detail ? "; " : "", detail ? detail : "");
}

int collie_call_mismatch_req(const collie_request_t *req, int peer, const char *how,
                             const collie_call_id *theirs, const char *detail) {
    collie_call_id mine = req->id;
    mine.seq_plus1 = req->call_seq + 1;
    mine.check = req->check;
    return collie_call_mismatch(&mine, peer, how, &theirs[0], detail);
}

/* The call rank q started as number seq (its board history) into *out; false if the
 * history does not hold it (no board, or q is elsewhere). */
bool collie_board_call(const collie_transport *tp, int q, uint32_t seq, collie_call_id *out) {
    if (!tp->board)
        return false;
    const collie_call_id *h = &tp->board[q].history[seq % COLLIE_CALL_HISTORY];
    const _Atomic uint32_t *s = (const _Atomic uint32_t *)&h->seq_plus1;
    if (atomic_load_explicit(s, memory_order_acquire) != seq + 1)
        return false;
    memcpy(out, h, sizeof *out);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(s, memory_order_relaxed) == seq + 1 && out->seq_plus1 == seq + 1;
}

/* Has rank q started a later call than seq in the history slot of seq (so seq's record
 * is gone)?  False without a board. */
bool collie_board_past_call(const collie_transport *tp, int q, uint32_t seq) {
    if (!tp->board)
        return false;
    const collie_call_id *h = &tp->board[q].history[seq % COLLIE_CALL_HISTORY];
    uint32_t seen = atomic_load_explicit((const _Atomic uint32_t *)&h->seq_plus1, memory_order_acquire);
    return seen != 0 && (int32_t)(seen - (seq + 1)) > 0;
}

/* Publishes req's call in this rank's board history (collie_start). */
void collie_board_publish(collie_request_t *req) {
    collie_transport *tp = req->team->tp;
    if (!tp->board)
        return;
    collie_call_id *h = &tp->board[tp->rank].history[req->call_seq % COLLIE_CALL_HISTORY];
    atomic_store_explicit((_Atomic uint32_t *)&h->seq_plus1, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    collie_call_id id = req->id;
    id.seq_plus1 = 0;
    id.check = req->check;
    memcpy(h, &id, sizeof id);
    atomic_store_explicit((_Atomic uint32_t *)&h->seq_plus1, req->call_seq + 1, memory_order_release);
}

int collie_no_extra_message(const collie_request_t *req) {
    /* A persistent request keeps its number from start to start: a message of the same
     * number may be the next start's, already sent by a rank that went on. */
    if (req->args.coll != COLL_BCAST || (req->call_seq & COLLIE_PERSISTENT_SEQ))
        return COLLIE_OK;
    /* Two ranks: a reader need not look.  If the two disagree on the root, either both
     * are roots (each root's look finds the other's message) or both read (they wait,
     * and the stall check names the two calls).  The look costs the reader a cache-line
     * trip when the root is already writing its next message into that slot (~0.1 us of
     * a 0.5 us bcast after a barrier, on the VM of session 43). */
    if (req->args.size == 2 && req->args.rank != req->args.root)
        return COLLIE_OK;
    const collie_transport *tp = req->team->tp;
    for (int q = 0; q < tp->size; q++) {
        if (q == tp->rank || (tp->discard && tp->discard[q]))
            continue;
        uint64_t s = tp->received[q] + 1;
        collie_slot_hdr *h = collie_slot(tp, &tp->from[q], s);
        if (atomic_load_explicit(&h->seq, memory_order_acquire) != s)
            continue;
        const collie_slot_meta *m = collie_slot_meta_of(h);
        if (m->call_seq != req->call_seq)
            continue;
        collie_call_id theirs;
        collie_call_id_from_meta(m, h->check, &theirs);
        return collie_call_mismatch_req(req, q, req->args.rank == req->args.root ? "sent this rank, the root, a message of" : "sent an unexpected message of", &theirs, NULL);
    }
    return COLLIE_OK;
}
