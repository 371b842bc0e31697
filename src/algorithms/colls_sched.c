/* colls_sched.c — see colls_sched.h. */
#include "algorithms/colls_sched.h"

bool cs_is_v(const collie_coll_args *a) { return a->v != NULL; }

static uint64_t off_of(const collie_coll_args *a, int buf, int j) {
    uint64_t off, len;
    if (j == a->size) {                       /* the end of the last block */
        collie_coll_block(a, buf, j - 1, &off, &len);
        return off + len;
    }
    collie_coll_block(a, buf, j, &off, &len);
    return off;
}

static uint64_t len_of(const collie_coll_args *a, int buf, int j) {
    uint64_t off, len;
    collie_coll_block(a, buf, j, &off, &len);
    return len;
}

uint64_t cs_recv_off(const collie_coll_args *a, int j) { return off_of(a, SBUF_RECV, j); }
uint64_t cs_recv_len(const collie_coll_args *a, int j) { return len_of(a, SBUF_RECV, j); }
uint64_t cs_send_off(const collie_coll_args *a, int j) { return off_of(a, SBUF_SEND, j); }
uint64_t cs_send_len(const collie_coll_args *a, int j) { return len_of(a, SBUF_SEND, j); }

void cs_put(collie_schedule *s, int peer, sched_ref src, uint64_t bytes) {
    if (bytes > 0)
        sched_put(s, peer, src, bytes);
}

void cs_recv(collie_schedule *s, int peer, sched_ref dst, uint64_t bytes) {
    if (bytes > 0)
        sched_recv(s, peer, dst, bytes);
}

static void ranks_xfer(collie_schedule *s, const collie_coll_args *a, int peer, int lo, int hi,
                       bool put) {
    if (lo >= hi)
        return;
    if (!cs_is_v(a)) {
        sched_ref at = sched_at(SBUF_RECV, cs_recv_off(a, lo));
        uint64_t bytes = (uint64_t)(hi - lo) * a->bytes;
        if (put)
            cs_put(s, peer, at, bytes);
        else
            cs_recv(s, peer, at, bytes);
        return;
    }
    for (int j = lo; j < hi; j++) {
        sched_ref at = sched_at(SBUF_RECV, cs_recv_off(a, j));
        if (put)
            cs_put(s, peer, at, cs_recv_len(a, j));
        else
            cs_recv(s, peer, at, cs_recv_len(a, j));
    }
}

void cs_put_ranks(collie_schedule *s, const collie_coll_args *a, int peer, int lo, int hi) {
    ranks_xfer(s, a, peer, lo, hi, true);
}

void cs_recv_ranks(collie_schedule *s, const collie_coll_args *a, int peer, int lo, int hi) {
    ranks_xfer(s, a, peer, lo, hi, false);
}

/* ---- merged copies ------------------------------------------------------------------ */

void cs_copy_init(cs_copier *c, collie_schedule *s) {
    c->s = s;
    c->bytes = 0;
}

void cs_copy_flush(cs_copier *c) {
    if (c->bytes > 0)
        sched_copy(c->s, c->dst, c->src, c->bytes);
    c->bytes = 0;
}

void cs_copy(cs_copier *c, sched_ref dst, sched_ref src, uint64_t bytes) {
    if (bytes == 0)
        return;
    if (c->bytes > 0 && dst.buf == c->dst.buf && src.buf == c->src.buf &&
        dst.off == c->dst.off + c->bytes && src.off == c->src.off + c->bytes) {
        c->bytes += bytes;
        return;
    }
    cs_copy_flush(c);
    c->dst = dst;
    c->src = src;
    c->bytes = bytes;
}
