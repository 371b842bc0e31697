/*
 * schedule.h — an algorithm builds, for one rank, a schedule: a list of rounds, each a set
 * of operations (layer 3 of docs/design.md).  One executor (executor.c) runs any schedule
 * split-phase on any transport, so schedules can also be printed, verified and simulated.
 *
 * Operations
 *   PUT(peer, src, bytes)        notified write of `bytes` from local memory into the
 *                                peer's inbox for this rank (the peer consumes it with an
 *                                incoming source, below).  bytes == 0 is a bare notification.
 *   REDUCE(dst, srcs[0..n), bytes)   dst = srcs[0] ∘ srcs[1] ∘ … ∘ srcs[n-1] (operand order
 *                                = rank order for non-commutative ops); n == 1 is a copy.
 *                                A source is either local memory or "the next message from
 *                                peer q" (SCHED_IN(q)); with incoming sources the op also
 *                                waits for them, chunk by chunk, and reduces straight out of
 *                                the inbox.  A REDUCE of one incoming source with bytes == 0
 *                                waits for a bare notification.
 *
 * Rules every builder follows (checked by the verifier in tests):
 *   - Operations of one round run concurrently, in any interleaving: no operation may write
 *     memory that another operation of the same round reads or writes (a REDUCE whose dst
 *     is also one of its own local sources at the same offset is fine).
 *   - For every ordered pair (p, q), the messages p PUTs to q, in p's schedule order, are
 *     exactly the incoming-from-p sources q consumes, in q's schedule order, with equal
 *     byte counts.  Within a round, messages to/from one peer go in operation order.
 *   - Memory: SBUF_SEND is the caller's input (read only; it IS SBUF_RECV when the call is
 *     in place, so a builder reads it before it writes SBUF_RECV at the same bytes, or
 *     copies first); SBUF_RECV the caller's output; SBUF_TMP scratch of tmp_bytes.
 *     Byte offsets and lengths are multiples of the element size.
 */
#ifndef COLLIE_SCHEDULE_H
#define COLLIE_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sched_buf { SBUF_SEND = 0, SBUF_RECV = 1, SBUF_TMP = 2, SBUF_COUNT = 3, SBUF_IN = 7 };

typedef struct sched_ref {
    uint8_t buf;     /* enum sched_buf; SBUF_IN for an incoming message */
    int32_t peer;    /* SBUF_IN: the sending peer */
    uint64_t off;    /* byte offset into buf (unused for SBUF_IN) */
} sched_ref;

static inline sched_ref sched_at(int buf, uint64_t off) {
    sched_ref r = { (uint8_t)buf, -1, off };
    return r;
}
static inline sched_ref sched_in(int peer) {
    sched_ref r = { SBUF_IN, peer, 0 };
    return r;
}

enum sched_kind { SCHED_PUT = 1, SCHED_REDUCE = 2 };

typedef struct sched_op {
    uint8_t kind;       /* enum sched_kind */
    uint8_t nsrc;       /* REDUCE: number of sources (>= 1); PUT: 1 */
    int32_t peer;       /* PUT: target rank */
    uint64_t bytes;
    sched_ref dst;      /* REDUCE only */
    uint32_t src;       /* index of the first source in schedule.srcs */
} sched_op;

typedef struct sched_round {
    uint32_t first_op;
    uint32_t nops;
} sched_round;

#define SCHED_MAX_SOURCES 255

typedef struct collie_schedule {
    int rank, size;
    size_t elem_size;       /* bytes per element (for chunking and reduction counts) */
    uint64_t tmp_bytes;     /* scratch the schedule needs (SBUF_TMP) */
    sched_op *ops;
    uint32_t nops, cap_ops;
    sched_ref *srcs;
    uint32_t nsrcs, cap_srcs;
    sched_round *rounds;
    uint32_t nrounds, cap_rounds;
    int error;              /* COLLIE_ERR_NOMEM after a failed append; builders may ignore */
} collie_schedule;

void sched_init(collie_schedule *s, int rank, int size, size_t elem_size);
void sched_free(collie_schedule *s);
void sched_reset(collie_schedule *s);           /* empty it, keep the allocations */

/* Starts a new round; operations appended after it belong to it.  Empty rounds are
 * dropped.  The first operation appended without any round_begin opens round 0. */
void sched_round_begin(collie_schedule *s);

/* Drops a trailing empty round (called once the builder is done). */
void sched_finish(collie_schedule *s);

void sched_put(collie_schedule *s, int peer, sched_ref src, uint64_t bytes);
void sched_reduce(collie_schedule *s, sched_ref dst, const sched_ref *srcs, int nsrc,
                  uint64_t bytes);
/* Shorthands over sched_reduce. */
void sched_copy(collie_schedule *s, sched_ref dst, sched_ref src, uint64_t bytes);
void sched_recv(collie_schedule *s, int peer, sched_ref dst, uint64_t bytes);
void sched_recv_reduce(collie_schedule *s, int peer, sched_ref dst, sched_ref local,
                       bool incoming_first, uint64_t bytes);  /* dst = in∘local or local∘in */
void sched_notify(collie_schedule *s, int peer);             /* PUT of 0 bytes */
void sched_wait_notify(collie_schedule *s, int peer);        /* REDUCE of 0 bytes from peer */
void sched_need_tmp(collie_schedule *s, uint64_t bytes);      /* tmp_bytes = max(.., bytes) */

/* Human-readable listing, one line per operation (for COLLIE_LOG=debug and tests). */
void sched_print(const collie_schedule *s, void *file /* FILE* */);

#endif
