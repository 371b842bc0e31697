/*
 * executor_impl.h — what the executor's three files share: executor.c (the passes over a
 * request's rounds and the per-chunk PUT and REDUCE steps), executor_prepare.c (a request's
 * executor state) and executor_slow.c (single-copy reads, stashing, staging, mismatches).
 * The helpers here run per chunk: static inline, so the split costs no call.
 */
#ifndef COLLIE_EXECUTOR_IMPL_H
#define COLLIE_EXECUTOR_IMPL_H

#include "base/base.h"
#include "core/internal.h"

#define OP_DONE UINT64_MAX   /* progress[i] of a finished operation */

/* Where the single copy (process_vm_readv) may carry a message: from direct_min in any call;
 * from direct_mid_min in calls up to direct_mid_max_call only when the call does not reduce.  Measured at P = 2
 * with the input rewritten before every call (collie-bench --fresh-data, docs/measurements.md):
 * the kernel copy of a peer's just-written input made allreduce and reduce 1.2-1.6x slower
 * than the two copies through the slots from 32 to 128 KiB (it only won with the same input
 * reused, whose lines stay cached on the reader); a bcast's or gather's is even or faster.
 * Not for a request of the direct-access driver (user_space_only): its slots path is the
 * user-space way it chose (path_tune.c) against its own kernel copy. */
static inline bool kernel_copy_allowed(const collie_request_t *req, uint64_t msg_bytes) {
    const collie_transport *tp = req->team->tp;
    if (!tp->direct_ok || msg_bytes <= req->chunk_bytes)
        return false;
    if (msg_bytes >= tp->direct_min_bytes)
        return true;
    return msg_bytes >= tp->direct_mid_min_bytes && !collie_coll_has_op(req->args.coll) &&
           req->args.bytes <= tp->direct_mid_max_call_bytes;
}

/* Whether this rank sends (and, where the sender's way is fixed, expects) a message by the
 * single copy in this call: where allowed, unless the request stays in user space or this
 * rank chose user space for this call (send_user, executor_prepare.c). */
static inline bool use_direct(const collie_request_t *req, uint64_t msg_bytes) {
    return !req->user_space_only && !req->send_user && kernel_copy_allowed(req, msg_bytes);
}

static inline uint64_t chunk_size(const collie_request_t *req, uint64_t msg_bytes) {
    return use_direct(req, msg_bytes) ? req->direct_chunk_bytes : req->chunk_bytes;
}

static inline uint64_t chunk_count(const collie_request_t *req, uint64_t msg_bytes) {
    if (msg_bytes == 0)
        return 1;
    uint64_t c = chunk_size(req, msg_bytes);
    return (msg_bytes + c - 1) / c;
}

static inline char *local_ptr(const collie_request_t *req, sched_ref r) {
    return (char *)req->buf[r.buf] + r.off;
}

/* The check word of one chunk: the call's hash and the message size. */
static inline uint32_t chunk_check(const collie_request_t *req, uint64_t msg_bytes) {
    uint32_t h = req->check ^ (uint32_t)msg_bytes ^ (uint32_t)(msg_bytes >> 32);
    return h * 0x9E3779B1u;
}

/* Tells the waiting loop which word to watch: the head request can go on once
 * *word >= value (the first such word of a pass is enough). */
static inline void note_wait(collie_request_t *req, const _Atomic uint64_t *word, uint64_t value) {
    if (!req->team->wait_word) {
        req->team->wait_word = word;
        req->team->wait_value = value;
    }
}

/* Returns the head slot of peer's channel to its sender (a credit). */
static inline void release_incoming(collie_transport *tp, int peer) {
    uint64_t s = ++tp->received[peer];
    atomic_store_explicit(&tp->from[peer].consumed->value, s, memory_order_release);
    collie_wake_later(tp, peer);
}

/* executor_slow.c */
int collie_exec_stage(collie_request_t *req, const sched_op *op, uint32_t i);
int collie_exec_mismatch(const collie_request_t *req, int peer, collie_slot_hdr *h,
                         uint64_t want_len, uint64_t want_msg);
int collie_exec_direct_read(collie_request_t *req, int peer, collie_slot_hdr *h, void *dst,
                            uint64_t len);
const void *collie_exec_mapped_data(const collie_request_t *req, int peer, collie_slot_hdr *h,
                                    uint64_t len);
char *collie_exec_direct_scratch(const collie_request_t *req, int nsrc);
collie_slot_hdr *collie_exec_incoming_slow(collie_request_t *req, int peer, uint32_t want,
                                           bool *stashed, int *st);

#endif
