/*
 * canonical_pieces.h — schedule building for allreduce algorithms whose ranks exchange
 * partial results over cyclic rank ranges (Bruck, dissemination).  Such algorithms give
 * every rank a differently associated (rotated) result; here a partial result is instead
 * held and sent as its canonical pieces (patterns_butterfly.h: nodes of one fixed binary
 * tree over the ranks), and a rank combines two sibling nodes into their parent as soon
 * as it holds both.  Every node has the same expression on every rank, the final result
 * is the root [0, P): exactly once, in rank order, bitwise identical everywhere.
 * The price: a range is up to ~2·lg P pieces, and merging takes local rounds after each
 * communication round.  Short vectors (n <= CP_PACK_MAX_BYTES) still travel as one message
 * per peer and round, as in the papers: the sender gathers the pieces into consecutive
 * scratch slots (a local copy round before the communication round, skipped when they
 * already are consecutive) and PUTs them at once, and the receiver takes them into
 * consecutive slots.  Longer vectors go as one PUT per piece, which costs more α but no
 * copy.
 */
#ifndef COLLIE_CANONICAL_PIECES_H
#define COLLIE_CANONICAL_PIECES_H

#include "algorithms/algorithm.h"

typedef struct cp_node {
    int a, e;           /* ranks [a, e) */
    int slot;           /* TMP slot, -1 = the rank's input in SEND */
    int pa, mid, pe;    /* its parent [pa, pe) with children split at mid; pa = -1: none */
} cp_node;

/* Vectors up to this size send a range's pieces as one message (see above).  Packing saves
 * (π-1)·α for π pieces and costs copying them, π·n bytes: with the simulator's default
 * model (α = 0.3 µs, copy 10 GB/s) that breaks even near n = 3 KB.  On the 2-core
 * development machine packed and unpacked measured within noise at P <= 16. */
#define CP_PACK_MAX_BYTES 4096

/* A queued send or receive of one range (cp_send / cp_recv, emitted by cp_exchange). */
typedef struct cp_transfer {
    int peer;
    int first;          /* send: its first piece's index in send_slots; receive: first slot */
    int count;          /* pieces */
    int from;           /* send: the slot its message starts at (set by cp_exchange) */
} cp_transfer;

typedef struct cp_state {
    collie_schedule *s;
    const collie_coll_args *a;
    cp_node *held;
    int nheld, cap, nslots;
    int *index;         /* open addressing over held nodes by (a, e): held index + 1, 0 = empty */
    int index_cap;      /* a power of two, at least twice nheld */
    int *ready;         /* held left children whose right sibling is held too (the parent
                           may be merged): pairs appear here when the later one is added */
    int nready;
    bool done;          /* the root has been written to RECV */
    cp_transfer *sends, *recvs;     /* this round's, in the order queued */
    int nsends, nrecvs, cap_sends, cap_recvs;
    int *send_slots;    /* the slots of the sends' pieces, in piece order */
    int nsend_slots, cap_send_slots;
} cp_state;

/* Starts with the rank's own input as node [rank, rank+1).  false on allocation failure. */
bool cp_init(cp_state *st, collie_schedule *s, const collie_coll_args *a);
void cp_free(cp_state *st);
/* Queues for the next cp_exchange: send the pieces of the cyclic range (first, len) to
 * peer (every piece must be held now: the builder sends only what it has). */
void cp_send(cp_state *st, int peer, int first, int len);
/* Queues for the next cp_exchange: receive the pieces of (first, len) from peer into new
 * slots (held from now on for the builder's bookkeeping). */
void cp_recv(cp_state *st, int peer, int first, int len);
/* Whether a message of these pieces can be PUT straight from their slots: one piece, or
 * scratch slots (>= 0) in a row. */
bool cp_slots_consecutive(const int *slots, int n);
/* Emits the queued sends and receives: a copy round gathering pieces if needed, then one
 * communication round (all PUTs, then all receives, in the order queued). */
void cp_exchange(cp_state *st);
/* After a communication round: local rounds combining held siblings into parents; the
 * root goes to RECV (in a round of its own). */
void cp_merge(cp_state *st);
/* P = 1: copy the input. */
void cp_finish_single(cp_state *st);

#endif
