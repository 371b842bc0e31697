/*
 * stash.c — chunks taken off a channel ahead of the request they belong to.
 *
 * Persistent requests are matched by their initialization order, so ranks may start them
 * (and non-persistent calls between them) in different orders, and the chunks of several
 * calls interleave in one channel.  A request that finds another call's chunk at the head
 * of a channel it reads (executor_slow.c) moves it here — header, meta line and payload, the
 * data of a single-copy chunk read from the sender at once — and returns the slot, so
 * that no call waits behind another's chunk.  The owner takes its chunks from here first,
 * in arrival order, then from the channel.  One list per sending peer, per team.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/internal.h"

struct collie_stashed {
    struct collie_stashed *next;
    char pad[COLLIE_CACHELINE - sizeof(void *)];
    collie_slot_hdr hdr;            /* then the meta line, then the payload */
};

collie_slot_hdr *collie_stash_add(collie_team_t *team, int peer, const collie_slot_hdr *h,
                                  uint64_t len) {
    if (!team->stash && !(team->stash = calloc((size_t)team->size, sizeof *team->stash))) {
        collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the stash of early chunks");
        return NULL;
    }
    size_t bytes = sizeof(struct collie_stashed) + COLLIE_CACHELINE + (len > SLOT_INLINE_BYTES ? len : 0);
    struct collie_stashed *s = aligned_alloc(COLLIE_CACHELINE, (bytes + COLLIE_CACHELINE - 1) &
                                             ~(size_t)(COLLIE_CACHELINE - 1));
    if (!s) {
        collie_fail(COLLIE_ERR_NOMEM, "cannot stash a chunk of %llu bytes from rank %d",
                    (unsigned long long)len, peer);
        return NULL;
    }
    s->next = NULL;
    atomic_init(&s->hdr.seq, atomic_load_explicit(&h->seq, memory_order_relaxed));
    s->hdr.check = h->check;
    s->hdr.bytes = (uint32_t)len;   /* the data is copied in: no single-copy flags */
    memcpy(collie_slot_meta_of(&s->hdr), collie_slot_meta_of((collie_slot_hdr *)h), sizeof(collie_slot_meta));
    struct collie_stashed **tail = &team->stash[peer];
    while (*tail)
        tail = &(*tail)->next;
    *tail = s;
    team->stash_count++;
    return &s->hdr;
}

collie_slot_hdr *collie_stash_find(collie_team_t *team, int peer, uint32_t call_seq) {
    for (struct collie_stashed *s = team->stash ? team->stash[peer] : NULL; s; s = s->next)
        if (collie_slot_meta_of(&s->hdr)->call_seq == call_seq)
            return &s->hdr;
    return NULL;
}

void collie_stash_drop(collie_team_t *team, int peer, collie_slot_hdr *h) {
    for (struct collie_stashed **pp = &team->stash[peer]; *pp; pp = &(*pp)->next)
        if (&(*pp)->hdr == h) {
            struct collie_stashed *s = *pp;
            *pp = s->next;
            free(s);
            team->stash_count--;
            return;
        }
}

void collie_stash_free(collie_team_t *team) {
    for (int q = 0; team->stash && q < team->size; q++)
        while (team->stash[q]) {
            struct collie_stashed *s = team->stash[q];
            team->stash[q] = s->next;
            free(s);
        }
    free(team->stash);
    team->stash = NULL;
    team->stash_count = 0;
}
