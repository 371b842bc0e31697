/* schedule.c — building and printing per-rank schedules (see schedule.h). */
#include "schedule/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collie.h"

void sched_init(collie_schedule *s, int rank, int size, size_t elem_size) {
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->size = size;
    s->elem_size = elem_size ? elem_size : 1;
}

void sched_free(collie_schedule *s) {
    free(s->ops);
    free(s->srcs);
    free(s->rounds);
    memset(s, 0, sizeof *s);
}

void sched_reset(collie_schedule *s) {
    s->nops = s->nsrcs = s->nrounds = 0;
    s->tmp_bytes = 0;
    s->error = 0;
}

/* Grows *arr (of *cap elements of size elem) to hold at least need elements. */
static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap)
        return true;
    uint32_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

void sched_round_begin(collie_schedule *s) {
    if (s->nrounds > 0 && s->rounds[s->nrounds - 1].nops == 0)
        return; /* reuse the empty round */
    if (!grow((void **)&s->rounds, &s->cap_rounds, s->nrounds + 1, sizeof *s->rounds)) {
        s->error = COLLIE_ERR_NOMEM;
        return;
    }
    s->rounds[s->nrounds].first_op = s->nops;
    s->rounds[s->nrounds].nops = 0;
    s->nrounds++;
}

static sched_op *append_op(collie_schedule *s, const sched_ref *srcs, int nsrc) {
    if (s->nrounds == 0)
        sched_round_begin(s);
    if (s->error)
        return NULL;
    if (s->error || !grow((void **)&s->ops, &s->cap_ops, s->nops + 1, sizeof *s->ops) ||
        !grow((void **)&s->srcs, &s->cap_srcs, s->nsrcs + (uint32_t)nsrc, sizeof *s->srcs)) {
        s->error = COLLIE_ERR_NOMEM;
        return NULL;
    }
    sched_op *op = &s->ops[s->nops++];
    memset(op, 0, sizeof *op);
    op->src = s->nsrcs;
    op->nsrc = (uint8_t)nsrc;
    op->peer = -1;
    memcpy(&s->srcs[s->nsrcs], srcs, (size_t)nsrc * sizeof *srcs);
    s->nsrcs += (uint32_t)nsrc;
    s->rounds[s->nrounds - 1].nops++;
    return op;
}

void sched_finish(collie_schedule *s) {
    while (s->nrounds > 0 && s->rounds[s->nrounds - 1].nops == 0)
        s->nrounds--;
}

void sched_put(collie_schedule *s, int peer, sched_ref src, uint64_t bytes) {
    sched_op *op = append_op(s, &src, 1);
    if (!op)
        return;
    op->kind = SCHED_PUT;
    op->peer = peer;
    op->bytes = bytes;
}

void sched_reduce(collie_schedule *s, sched_ref dst, const sched_ref *srcs, int nsrc,
                  uint64_t bytes) {
    if (nsrc < 1 || nsrc > SCHED_MAX_SOURCES) {
        s->error = COLLIE_ERR_INTERNAL;
        return;
    }
    sched_op *op = append_op(s, srcs, nsrc);
    if (!op)
        return;
    op->kind = SCHED_REDUCE;
    op->dst = dst;
    op->bytes = bytes;
}

void sched_copy(collie_schedule *s, sched_ref dst, sched_ref src, uint64_t bytes) {
    if (bytes == 0)
        return;
    if (src.buf == dst.buf && src.off == dst.off && src.buf != SBUF_IN)
        return;
    sched_reduce(s, dst, &src, 1, bytes);
}

void sched_recv(collie_schedule *s, int peer, sched_ref dst, uint64_t bytes) {
    sched_ref in = sched_in(peer);
    sched_reduce(s, dst, &in, 1, bytes);
}

void sched_recv_reduce(collie_schedule *s, int peer, sched_ref dst, sched_ref local,
                       bool incoming_first, uint64_t bytes) {
    sched_ref srcs[2];
    srcs[incoming_first ? 0 : 1] = sched_in(peer);
    srcs[incoming_first ? 1 : 0] = local;
    sched_reduce(s, dst, srcs, 2, bytes);
}

void sched_notify(collie_schedule *s, int peer) {
    sched_put(s, peer, sched_at(SBUF_TMP, 0), 0);
}

void sched_wait_notify(collie_schedule *s, int peer) {
    sched_recv(s, peer, sched_at(SBUF_TMP, 0), 0);
}

void sched_need_tmp(collie_schedule *s, uint64_t bytes) {
    if (bytes > s->tmp_bytes)
        s->tmp_bytes = bytes;
}

static const char *buf_name(int buf) {
    switch (buf) {
    case SBUF_SEND: return "send";
    case SBUF_RECV: return "recv";
    case SBUF_TMP: return "tmp";
    case SBUF_IN: return "in";
    default: return "?";
    }
}

static void print_ref(FILE *f, sched_ref r) {
    if (r.buf == SBUF_IN)
        fprintf(f, "in(%d)", (int)r.peer);
    else
        fprintf(f, "%s+%llu", buf_name(r.buf), (unsigned long long)r.off);
}

void sched_print(const collie_schedule *s, void *file) {
    FILE *f = file;
    fprintf(f, "schedule rank %d/%d: %u rounds, %u ops, tmp %llu bytes\n", s->rank, s->size,
            s->nrounds, s->nops, (unsigned long long)s->tmp_bytes);
    for (uint32_t r = 0; r < s->nrounds; r++) {
        const sched_round *rd = &s->rounds[r];
        for (uint32_t i = 0; i < rd->nops; i++) {
            const sched_op *op = &s->ops[rd->first_op + i];
            fprintf(f, "  r%-3u ", r);
            if (op->kind == SCHED_PUT) {
                fprintf(f, "put   -> %d  ", (int)op->peer);
                print_ref(f, s->srcs[op->src]);
            } else {
                fprintf(f, "reduce ");
                print_ref(f, op->dst);
                fprintf(f, " <-");
                for (int k = 0; k < op->nsrc; k++) {
                    fputc(' ', f);
                    print_ref(f, s->srcs[op->src + (uint32_t)k]);
                }
            }
            fprintf(f, "  %llu B\n", (unsigned long long)op->bytes);
        }
    }
}
