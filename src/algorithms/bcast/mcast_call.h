/*
 * mcast_call.h — the state of one multicast broadcast call (mcast.c runs stage 1 and
 * drives the call; mcast_chain.c is stage 2 on the team's channels).
 */
#ifndef COLLIE_MCAST_CALL_H
#define COLLIE_MCAST_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include "core/internal.h"
#include "core/mcast_team.h"

enum mcast_phase { PHASE_SYNC = 0, PHASE_RUN, PHASE_DONE };

typedef struct mcast_call {
    collie_mcast *mc;
    uint64_t frag;              /* bytes per fragment */
    uint32_t nfrags;
    int prev, next;             /* ring neighbours in the chain; -1 when absent */
    int sync_rank;              /* random single-process synchronisation partner, or -1 */
    int phase;                  /* enum mcast_phase */
    uint64_t delay_until_ns;    /* root delay */
    bool sync_done;
    uint8_t *have;              /* [nfrags]: this rank holds the fragment */
    uint32_t nhave;
    uint32_t *forward;          /* fragments to forward, in the order they arrived */
    uint32_t fwd_sent, fwd_queued;
    uint32_t chain_got;         /* chunks received from prev in this call */
    uint32_t by_chain;          /* fragments of this call that only the chain brought */
    uint64_t poll_ns;           /* sleep slice while datagrams may still come */
} mcast_call;

/* mcast.c: a fragment arrived (by multicast or by the chain); copies it in once (true) or
 * ignores a duplicate (false). */
bool mcast_take_fragment(collie_request_t *req, uint32_t frag, const void *data, uint64_t len);
/* Chunks this rank would leave unread on its predecessor's channel if it finished now. */
uint64_t mcast_owed(const collie_request_t *req);
uint64_t mcast_frag_len(const collie_request_t *req, uint32_t frag);

/* mcast_chain.c — stage 2.  Each returns COLLIE_OK or an error; `moved` is set when
 * something was sent or received. */
int mcast_chain_forward(collie_request_t *req, bool *moved);   /* to the successor */
/* From the predecessor: while fragments are missing, or while more than max_owed chunks
 * would be left unread (those are read and dropped). */
int mcast_chain_receive(collie_request_t *req, uint64_t max_owed, bool *moved);
/* The synchronisation message of the random single process: the partner sends it (true
 * when sent), the root receives it (true when received). */
int mcast_sync_send(collie_request_t *req, bool *done);
int mcast_sync_receive(collie_request_t *req, bool *done);

#endif
