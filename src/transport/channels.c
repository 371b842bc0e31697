/*
 * channels.c — the memory layout of channels, shared by every transport that lays out its
 * own memory (shm, loop).  Rank q's inbox region holds, for every sender p, the counter
 * `consumed` (one cache line) and then the channel p -> q (nslots slots).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include "base/base.h"
#include "transport/transport.h"
#include "transport/channels.h"

size_t collie_channel_bytes(uint32_t nslots, uint32_t slot_bytes) {
    return (size_t)nslots * collie_slot_stride(slot_bytes);
}

size_t collie_slot_stride(uint32_t slot_bytes) {
    size_t s = sizeof(collie_slot_hdr) + sizeof(collie_slot_meta) + slot_bytes;
    return (s + COLLIE_CACHELINE - 1) & ~(size_t)(COLLIE_CACHELINE - 1);
}

size_t collie_inbox_bytes(int size, uint32_t nslots, uint32_t slot_bytes) {
    return (size_t)size * (sizeof(collie_counter) + collie_channel_bytes(nslots, slot_bytes));
}

static collie_channel channel_in(char *inbox, int size, int sender, size_t chan_bytes) {
    collie_channel ch;
    ch.consumed = (collie_counter *)inbox + sender;
    ch.slots = inbox + (size_t)size * sizeof(collie_counter) + (size_t)sender * chan_bytes;
    return ch;
}

int collie_channels_wire(collie_transport *tp, char *const *inboxes) {
    int n = tp->size;
    if (tp->nslots < 2 || (tp->nslots & (tp->nslots - 1)))
        return collie_fail(COLLIE_ERR_ARG, "COLLIE_SHM_SLOTS=%u: the number of slots per channel "
                           "must be a power of two, at least 2", tp->nslots);
    tp->slot_mask = tp->nslots - 1;
    size_t chan_bytes = collie_channel_bytes(tp->nslots, tp->slot_bytes);
    tp->slot_stride = collie_slot_stride(tp->slot_bytes);
    tp->to = calloc((size_t)n, sizeof *tp->to);
    tp->from = calloc((size_t)n, sizeof *tp->from);
    tp->sent = calloc((size_t)n, sizeof *tp->sent);
    tp->received = calloc((size_t)n, sizeof *tp->received);
    tp->credit = calloc((size_t)n, sizeof *tp->credit);
    tp->wake_pending = calloc((size_t)n, sizeof *tp->wake_pending);
    tp->wake_list = calloc((size_t)n, sizeof *tp->wake_list);
    tp->nwake = 0;
    if (!tp->to || !tp->from || !tp->sent || !tp->received || !tp->credit || !tp->wake_pending ||
        !tp->wake_list)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the channel tables of %d ranks", n);
    for (int p = 0; p < n; p++) {
        tp->to[p] = channel_in(inboxes[p], n, tp->rank, chan_bytes);
        tp->from[p] = channel_in(inboxes[tp->rank], n, p, chan_bytes);
    }
    return COLLIE_OK;
}

bool collie_discard_progress(collie_transport *tp, int peer) {
    bool dropped = false;
    while (tp->discard[peer]) {
        uint64_t s = tp->received[peer] + 1;
        collie_slot_hdr *h = collie_slot(tp, &tp->from[peer], s);
        if (atomic_load_explicit(&h->seq, memory_order_acquire) != s)
            break;
        tp->received[peer] = s;
        atomic_store_explicit(&tp->from[peer].consumed->value, s, memory_order_release);
        tp->discard[peer]--;
        tp->discard_total--;
        dropped = true;
    }
    if (dropped)
        collie_wake_later(tp, peer);
    return tp->discard[peer] == 0;
}

bool collie_discard_all(collie_transport *tp) {
    for (int p = 0; tp->discard_total && p < tp->size; p++)
        if (tp->discard[p])
            collie_discard_progress(tp, p);
    return tp->discard_total == 0;
}

void collie_channels_free(collie_transport *tp) {
    free(tp->discard);
    tp->discard = NULL;
    free(tp->to);
    free(tp->from);
    free(tp->sent);
    free(tp->received);
    free(tp->credit);
    free(tp->wake_pending);
    free(tp->wake_list);
    tp->wake_pending = NULL;
    tp->wake_list = NULL;
    tp->credit = NULL;
    tp->to = tp->from = NULL;
    tp->sent = tp->received = NULL;
}

/* Does some noted peer say it sleeps?  Plain loads: see collie_wake_flush. */
static bool noted_peer_sleeps(collie_transport *tp) {
    for (int i = 0; i < tp->nwake; i++)
        if (tp->ops->peer_sleeps(tp, tp->wake_list[i]))
            return true;
    return false;
}

static void forget_noted(collie_transport *tp) {
    for (int i = 0; i < tp->nwake; i++)
        tp->wake_pending[tp->wake_list[i]] = 0;
    tp->nwake = 0;
}

void collie_wake_flush(collie_transport *tp) {
    if (!tp->nwake)
        return;
    /* The fence waits until this rank's last stores reach the peers (a cache-line trip,
     * ~0.15 us) — at every return to the caller.  A peer that does not say it sleeps
     * needs no wake-up; one whose announcement this rank read too early (before it was
     * visible, while its re-check read this rank's words before they were) looks again
     * after COLLIE_SLEEP_RECHECK_NS (core/wait.c, sleep_once). */
    if (tp->ops->peer_sleeps && !noted_peer_sleeps(tp)) {
        forget_noted(tp);
        return;
    }
    /* Orders the notifications and credits stored so far before the reads of the peers'
     * sleeping flags in ops->wake (a sleeper sets its flag, fences, then re-checks). */
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < tp->nwake; i++)
        tp->ops->wake(tp, tp->wake_list[i]);
    forget_noted(tp);
}
