/*
 * transport.h — the one small interface every transport implements (layer 6).
 *
 * The notified-write model on which all schedules run: for every ordered pair (p, q) the
 * receiver q owns a channel in its registered memory: a ring of `nslots` slots, each a
 * 64-byte header and `slot_bytes` of payload.  The sender p writes message chunk number
 * s (s = 1, 2, …, never reset) into slot (s-1) % nslots: payload first, then the header's
 * `seq` = s with release ordering — the notification.  q waits until seq == s (acquire),
 * consumes the payload in place (reduces straight out of it; payloads of at most 48 bytes
 * sit in the header's own cache line), then publishes
 * `consumed` = s (release), which returns the slot to p (credit).  Both counters only grow,
 * so there is no reset race.  Whoever changes something another rank may sleep on calls
 * `collie_wake_later(tp, peer)`; `collie_wake_flush(tp)` (one full fence, then
 * `ops->wake` for each noted peer; on shm the fence only when a noted peer says it
 * sleeps, see collie_wake_flush) must run before the rank returns to its caller, yields
 * or sleeps.  Deferring the fence keeps it off the critical path: the store of a
 * notification drains while the writer goes on polling its own inbox.
 *
 * Large chunks may go single-copy: instead of a payload, the sender writes a descriptor
 * (SLOT_DIRECT in `bytes`, its pid and the address of the data in the meta line) and the receiver reads the
 * sender's memory with process_vm_readv; the sender must not reuse that memory until the
 * receiver's `consumed` counter has passed the chunk.
 */
#ifndef COLLIE_TRANSPORT_H
#define COLLIE_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "base/base.h"

#define COLLIE_CACHELINE 64

/* Bits of collie_slot_hdr.bytes: the chunk is a single-copy descriptor (see meta), and
 * its data lies in registered memory the receiver may map (meta.map_*). */
#define SLOT_DIRECT 0x80000000u
#define SLOT_MAPPED 0x40000000u
#define SLOT_FLAGS (SLOT_DIRECT | SLOT_MAPPED)
#define SLOT_INLINE_BYTES 48

/* The first cache line of a slot: the notification, and small payloads inline, so a small
 * message costs the receiver one cache line. */
typedef struct collie_slot_hdr {
    _Atomic uint64_t seq;   /* chunk number on this channel, stored last (release) */
    uint32_t check;         /* hash of the call and the message size: mismatches show */
    uint32_t bytes;         /* payload bytes of this chunk (| SLOT_DIRECT) */
    char inline_data[SLOT_INLINE_BYTES];
} collie_slot_hdr;
_Static_assert(sizeof(collie_slot_hdr) == COLLIE_CACHELINE, "slot header is one cache line");

/* The second cache line: read only for single-copy chunks and to explain a mismatch. */
typedef struct collie_slot_meta {
    int32_t pid;            /* SLOT_DIRECT: sender's pid */
    uint32_t call_seq;      /* the sender's collective number on the team */
    uint64_t addr;          /* SLOT_DIRECT: address of the data in the sender */
    uint64_t msg_bytes;     /* bytes of the whole message this chunk belongs to */
    uint64_t call_bytes;    /* bytes of the sender's call (count * element size) */
    int32_t map_fd;         /* SLOT_MAPPED: the registered block holding the data ... */
    uint32_t map_serial;
    uint64_t map_offset;    /* ... and the data's offset in it */
    uint8_t coll;           /* the sender's collective (enum collie_coll) */
    uint8_t vform;          /* 1: its v form (call_id.c) */
    char pad[2];
    int32_t root;           /* the sender's root, datatype (collie_dtype_compact) and op */
    uint32_t dtype;         /* (collie_op_identity): what its call was, to name a mismatch */
    uint32_t op;
} collie_slot_meta;
_Static_assert(sizeof(collie_slot_meta) == COLLIE_CACHELINE, "slot meta is one cache line");

/* A counter alone on its cache line. */
typedef struct collie_counter {
    _Atomic uint64_t value;
    char pad[COLLIE_CACHELINE - sizeof(uint64_t)];
} collie_counter;

typedef struct collie_channel {
    char *slots;                 /* nslots * slot_stride bytes, in the receiver's memory */
    collie_counter *consumed;    /* in the receiver's memory, written by the receiver */
} collie_channel;

/* Where data lies in a rank's registered memory (collie_alloc). */
typedef struct collie_mem_ref {
    int32_t fd;
    uint32_t serial;
    uint64_t offset;
} collie_mem_ref;

/* What a rank called, as far as every rank must agree (src/core/call_id.c): written into
 * the board's history at every start and compared when calls disagree. */
typedef struct collie_call_id {
    uint64_t bytes;         /* count * element size; v forms: a hash of the counts every
                               rank passes (allgatherv, reduce_scatter), else 0 */
    uint32_t seq_plus1;     /* the call's sequence number on the team + 1 (0: none) */
    uint32_t check;         /* the call's hash (request.c call_hash, with the sequence) */
    int32_t root;
    uint32_t dtype;         /* collie_dtype_compact */
    uint32_t op;            /* collie_op_identity (0 for bcast and barrier) */
    uint8_t coll;
    uint8_t vform;          /* 1: the v form of coll */
    uint8_t pad[2];
} collie_call_id;
_Static_assert(sizeof(collie_call_id) == 32, "call id is 32 bytes");
#define COLLIE_CALL_HISTORY 4

/* One rank's entry on the single-copy board (shm transport): what a direct-access call (direct_access.c)
 * needs to read and write this rank's buffers.  `ready` and `done` hold the call's
 * sequence number + 1 once the fields describe it / once this rank wrote its segment into
 * every rank's output; both only grow.  Four cache lines. */
typedef struct collie_board_entry {
    _Atomic uint64_t ready;
    _Atomic uint64_t done;
    uint32_t check;         /* the call's hash (mismatches show) */
    int32_t pid;
    uint64_t send_addr, recv_addr;
    collie_mem_ref send_ref, recv_ref;   /* fd < 0: not in registered memory */
    _Atomic int32_t failed; /* the status this rank's team failed with (0: none) */
    /* the call `done` was last set for: (sequence + 1) << 32 | its check, one word, so a
     * reader never pairs one call's `done` with the next call's check */
    _Atomic uint64_t done_call;
    /* The way the posted call moves buffers that are not mapped, when this rank decides
     * it (core/path_tune.c: PATH_USER or PATH_KERNEL); set before `ready`. */
    int32_t path;
    /* The same for a call whose buffers are all mapped, from MAPPED_TRIAL_MIN bytes
     * (path_tune.c): PATH_MAPPED (loads and stores in the peers' buffers) or PATH_CELLS. */
    int32_t mapped_path;
    char pad[2 * COLLIE_CACHELINE - 96];
    /* The last calls this rank started, at [seq % COLLIE_CALL_HISTORY] (written by
     * collie_start; read when a call stalls or posted something else: request.c). */
    collie_call_id history[COLLIE_CALL_HISTORY];
} collie_board_entry;
_Static_assert(sizeof(collie_board_entry) == 4 * COLLIE_CACHELINE, "board entry is four lines");

/* Copy cells (shm, algorithms/cells.c): the job's segment holds a ring of `ncells` cells
 * of `cell_bytes` per rank; rank r's data of step t go into cell (t − 1) % ncells of ring
 * r, or with `rotate` of ring (r + L) % size, L = (t − 1) / ncells the lap: a rank then
 * fills the cells it read its neighbour's data from one lap before, whose lines are still
 * in its cache (collie_cell; docs/design.md, copy cells).  Every rank reads them.  Cells
 * are used in global steps t = 1, 2, … (every rank counts the same steps: a call through
 * the cells takes the same number on every rank).
 * A call's steps go through at most `window` cells: one that needs more skips step
 * numbers so as to wrap back to its first cell (cells_impl.h), while calls that need
 * fewer go on round the whole ring.
 * These words of rank r hold step numbers and only grow (each on its own cache line):
 * `in`: r wrote its data of step t into its cell (or, lent, its peers may copy them from
 * r's memory: `lent` below); `out`: r published its reduced slice of step t in its cell
 * (an allreduce at P = 2: in the peer's, algorithms/cells.c); `freed`: r reads no cell of
 * step t any more (a writer reuses a cell for step t only when every rank freed step
 * t − ncells).  `check[c]`: the call's hash of the step in cell c (mismatched calls show). */
/* A rank whose data of a call lie in its registered memory (collie_alloc, the shared heap)
 * may let its peers read them there instead of copying them into its cells first
 * (allgather, alltoall, reduce_scatter: algorithms/cells_in_place.c).  `first` is that call's first
 * step number (0: none yet); the other fields are written before it and before the call's
 * first `in`, and rewritten only after every peer freed the call's last step. */
typedef struct collie_cells_lent {
    _Atomic uint64_t first;
    uint64_t addr, len;          /* the data in the owner's address space */
    collie_mem_ref ref;          /* ... in its registered memory */
    int32_t pid;
    char pad[COLLIE_CACHELINE - 44];
} collie_cells_lent;
_Static_assert(sizeof(collie_cells_lent) == COLLIE_CACHELINE, "a lent call is one line");

typedef struct collie_cell_ctrl {
    collie_counter in, out, freed;
    collie_cells_lent lent;
} collie_cell_ctrl;

typedef struct collie_cells {
    uint32_t ncells;
    uint32_t rings;              /* rings in the segment: the team's size */
    bool rotate;                 /* rank r writes its steps of lap L (ncells steps each)
                                    into ring (r + L) % rings (COLLIE_SHM_CELLS_ROTATE,
                                    rank 0's) */
    uint32_t window;             /* cells one call cycles through at most (≤ ncells,
                                    a multiple of step_cells; COLLIE_SHM_CELLS_WINDOW) */
    uint32_t step_cells;         /* an allreduce / reduce step spans at most this many
                                    adjacent cells (COLLIE_SHM_CELLS_PER_STEP, rank 0's) */
    uint64_t cell_bytes;         /* a multiple of 64 */
    char *data;                  /* ring g's cell c: data + (g * ncells + c) * cell_bytes */
    collie_cell_ctrl *ctrl;      /* [size] */
    uint32_t *check;             /* [size * ncells], as the cells */
    uint64_t step;               /* this rank: steps taken so far (the same on every rank) */
    uint64_t freed_by_all;       /* this rank: every rank's `freed` was at least this when
                                    last read (they only grow): a writer whose cells' last
                                    use is at or below it need not read the other ranks'
                                    lines again (a cache-line trip each per step) */
    uint64_t kernel_min;         /* calls of at least this many bytes whose buffers are not
                                    all mapped go single-copy (process_vm_readv/writev)
                                    rather than through the cells or the slots
                                    (COLLIE_SHM_KERNEL_MIN, rank 0's; UINT64_MAX: never);
                                    0: the rank that decides a call picks the way from
                                    timed calls (core/path_tune.c) */
    uint64_t slots_max;          /* calls of at most this many bytes whose buffers are not all
                                    mapped run their schedule through the slots (the
                                    channels) instead: the cells' steps cost more than they
                                    save up to 512 KiB at P = 2, 256 KiB from P = 3
                                    (COLLIE_SHM_SLOTS_MAX, rank 0's) */
    uint64_t lend_min;           /* this rank lets peers read its data of an allgather,
                                    alltoall or reduce_scatter straight out of its
                                    registered memory in blocks from this many bytes
                                    (allgather: P − 1 times it; COLLIE_SHM_CELLS_LEND_MIN,
                                    each rank's own; UINT64_MAX: never) */
    bool stream;                 /* copies into the cells bypass the cache (collie_stream_copy):
                                    COLLIE_SHM_STREAM, else measured at set-up by ranks 0
                                    and 1 (transport/shm_copy_probe.c; rank 0's answer) and
                                    from 256 KiB tried again in calls (core/fill_tune.c) */
} collie_cells;

/* Copies n bytes into a cell (or, a bcast reader, out of the root's), with streaming
 * stores or memcpy (the call's way: core/fill_tune.c, starting from collie_cells.stream or
 * collie_transport.stream_out_min). */
static inline void collie_cell_fill(bool stream, void *cell, const void *src, size_t n) {
    if (stream)
        collie_stream_copy(cell, src, n);
    else
        memcpy(cell, src, n);
}

/* Copies n bytes that another core wrote (a peer's cell, a peer's mapped buffer) into this
 * rank's memory: with streaming stores (the call's way, as for collie_cell_fill), else by
 * collie_peer_copy, which reads several pages at once. */
static inline void collie_cell_read(bool stream, void *dst, const void *src, size_t n) {
    if (stream)
        collie_stream_copy(dst, src, n);
    else
        collie_peer_copy(dst, src, n);
}

/* The index (ring * ncells + cell) where `rank` puts its data of step `step`; `rotate`:
 * the call's steps rotate (collie_cells.rotate, for calls that fit in the window; every
 * rank decides the same for a call). */
static inline uint64_t collie_cell_index(const collie_cells *c, int rank, uint64_t step, bool rotate) {
    uint64_t ring = (uint64_t)rank;
    if (rotate)
        ring = (ring + (step - 1) / c->ncells) % c->rings;
    return ring * c->ncells + (step - 1) % c->ncells;
}
static inline char *collie_cell(const collie_cells *c, int rank, uint64_t step, bool rotate) {
    return c->data + collie_cell_index(c, rank, step, rotate) * c->cell_bytes;
}
static inline uint32_t *collie_cell_check(const collie_cells *c, int rank, uint64_t step, bool rotate) {
    return &c->check[collie_cell_index(c, rank, step, rotate)];
}

struct collie_transport;
typedef struct collie_transport_ops {
    const char *name;
    /* Wake `peer` if it sleeps; called by collie_wake_flush after a full fence. */
    void (*wake)(struct collie_transport *tp, int peer);
    /* Prepare to sleep: returns a token to pass to sleep() (call before re-checking). */
    uint32_t (*sleep_prepare)(struct collie_transport *tp);
    /* Sleep until woken or timeout_ns passes (the caller re-checks its conditions). */
    void (*sleep)(struct collie_transport *tp, uint32_t token, uint64_t timeout_ns);
    void (*sleep_done)(struct collie_transport *tp);
    /* COLLIE_OK while peer lives, else COLLIE_ERR_PEER with a message naming it. */
    int (*check_peer)(struct collie_transport *tp, int peer);
    /* Registered memory for collie_alloc (NULL + message on failure). */
    void *(*mem_alloc)(struct collie_transport *tp, size_t bytes);
    void (*mem_free)(struct collie_transport *tp, void *ptr);
    void (*destroy)(struct collie_transport *tp);
    /* Moves messages that need the CPU (e.g. MPI requests); NULL when writes land by
     * themselves (shm, loop).  The executor calls it before every progress pass. */
    void (*progress)(struct collie_transport *tp);
    /* Optional: is [ptr, ptr+len) inside this rank's registered memory?  Then *ref names it. */
    bool (*mem_find)(struct collie_transport *tp, const void *ptr, uint64_t len, collie_mem_ref *ref);
    /* Optional: a local pointer to peer's registered data (pid owns it), or NULL. */
    const void *(*mem_map_peer)(struct collie_transport *tp, int peer, int pid,
                                const collie_mem_ref *ref, uint64_t len);
    /* Optional: does peer say it sleeps (one plain load, no fence)?  With it,
     * collie_wake_flush fences only when some noted peer does, and a sleeper looks at its
     * words again after COLLIE_SLEEP_RECHECK_NS (core/wait.c); NULL: always fence. */
    bool (*peer_sleeps)(struct collie_transport *tp, int peer);
} collie_transport_ops;

/* Entries of collie_transport.way_choices: 16 collectives of 64 size classes. */
#define COLLIE_WAY_CLASSES 64
#define COLLIE_WAY_CHOICES (16 * COLLIE_WAY_CLASSES)

typedef struct collie_transport {
    const collie_transport_ops *ops;
    int rank, size;
    uint32_t nslots;             /* a power of two */
    uint32_t slot_mask;          /* nslots - 1 (set by collie_channels_wire) */
    uint32_t slot_bytes;         /* payload bytes per slot */
    size_t slot_stride;          /* header + payload, cache-line multiple */
    collie_channel *to;          /* [size]: channel me -> q (in q's memory) */
    collie_channel *from;        /* [size]: channel p -> me (in my memory) */
    uint64_t *sent;              /* [size]: chunks written to q so far */
    uint64_t *received;          /* [size]: chunks consumed from p so far */
    uint64_t *credit;            /* [size]: last seen `consumed` of channel me -> q */
    bool shared_memory;          /* peers can read each other's memory (flat algorithms) */
    bool direct_ok;              /* single-copy (process_vm_readv) works between ranks */
    uint64_t direct_min_bytes;   /* messages at least this large go single-copy */
    uint64_t direct_mid_min_bytes; /* ... and these, in calls of at most */
    uint64_t direct_mid_max_call_bytes; /* this many bytes (UINT64_MAX: off) */
    uint64_t kernel_min_own;     /* this rank's COLLIE_SHM_KERNEL_MIN, for the messages it
                                    sends in schedules of collectives without an op: 0 =
                                    timed per call (core/path_tune.c), UINT64_MAX = never,
                                    else in calls of at least this many bytes */
    uint64_t by_reference_min_bytes; /* smaller chunks from registered memory go by reference */
    uint64_t by_reference_max_call_bytes; /* ... in calls of at most this many bytes */
    int oversubscribed;          /* more ranks than cores: spin less */
    uint64_t demote_max_bytes;   /* a message of at most this many bytes is demoted out of
                                    its writer's caches once written (collie_demote; 0: never,
                                    COLLIE_SHM_DEMOTE_MAX; shm with a core per rank only) */
    bool shared_cores;           /* ... as rank 0 counted them (shm), the same on every rank:
                                    for what changes a schedule (collie_coll_args.shared_cores;
                                    each rank's own count may differ with its CPU affinity) */
    uint64_t stream_out_min;     /* bcast calls of at least this many bytes: a reader's copy
                                    into its own buffer bypasses the cache (3/4 of the
                                    last-level cache, COLLIE_SHM_STREAM_OUT_MIN; UINT64_MAX:
                                    never); through the cells only the first calls' way
                                    when the variable is unset (core/fill_tune.c) */
    uint64_t stream_own_min;     /* allgather and alltoall `direct`: a rank's own block of at
                                    least this many bytes goes into its output with
                                    streaming stores (4 MiB, or COLLIE_SHM_STREAM_OUT_MIN
                                    when set; UINT64_MAX: never) */
    uint64_t stream_team_min;    /* writes into a team's outputs (an allreduce's or a bcast's
                                    with mapped buffers, a bcast's or allgather's first
                                    calls out of the cells) stream once they reach this
                                    (64 MiB; UINT64_MAX: never, or COLLIE_SHM_STREAM_OUT_MIN
                                    set: stream_out_min alone): collie_outputs_stream */
    const int *node_of;          /* [size]: node of every rank when the ranks span several
                                    nodes (mixed shm+mpi transport), else NULL */
    int nnodes;
    collie_board_entry *board;   /* [size] in shared memory (shm), or NULL */
    collie_cells *cells;         /* copy cells (shm), or NULL */
    /* [COLLIE_WAY_CHOICES] in shared memory (shm), or NULL: rank 0's choice of way for the
     * messages it sends in schedules, per collective and size class (1 + the way, 0: not
     * yet), which the other ranks then take too (core/path_tune.c, team_way) */
    _Atomic uint8_t *way_choices;
    uint8_t *wake_pending;       /* [size]: peer noted by collie_wake_later, not yet woken */
    int *wake_list;              /* the noted peers, nwake of them */
    int nwake;
    bool wake_at_once;           /* wake() moves data (MPI sends): call it at once, not at
                                    the next collie_wake_flush */
    /* [size] or NULL: chunks from p to be dropped unread before p's next chunk is read —
     * chain fragments of a multicast broadcast that this rank finished without them
     * (algorithms/bcast/mcast.c); discard_total is their sum. */
    uint64_t *discard;
    uint64_t discard_total;
    /* 1 + the rank whose death or silence failed this rank's team (0: none).  The shm
     * transport publishes it when this rank leaves, so a peer that waited for this rank
     * names the original culprit, not this survivor (collie_transport_blame). */
    int blame;
    void *impl;
} collie_transport;

/* Do the writes of a call of `bytes` into the outputs of a team of `size` (each output
 * `bytes`) bypass the cache?  From tp->stream_out_min bytes, or once the team's outputs
 * together reach tp->stream_team_min (where they no longer fit the caches, and a plain
 * store would first read its line from memory). */
static inline bool collie_outputs_stream(const collie_transport *tp, int size, uint64_t bytes) {
    return bytes >= tp->stream_out_min || (uint64_t)size * bytes >= tp->stream_team_min;
}

/* A bcast's copy of n bytes into a reader's buffer, in a call of call_bytes on a team of
 * `size`: with streaming stores where collie_outputs_stream says so, else collie_peer_copy. */
static inline void collie_copy_out(const collie_transport *tp, int size, uint64_t call_bytes,
                                   void *dst, const void *src, size_t n) {
    collie_cell_read(collie_outputs_stream(tp, size, call_bytes), dst, src, n);
}

/* Records that peer's death or silence failed this rank (the first culprit stays). */
static inline void collie_transport_blame(collie_transport *tp, int peer) {
    if (!tp->blame && peer >= 0 && peer < tp->size)
        tp->blame = peer + 1;
}

/* Notes that `peer` may have to be woken (a notification or a credit for it was stored). */
static inline void collie_wake_later(collie_transport *tp, int peer) {
    if (tp->wake_at_once) {
        atomic_thread_fence(memory_order_seq_cst);
        tp->ops->wake(tp, peer);
        return;
    }
    if (!tp->wake_pending[peer]) {
        tp->wake_pending[peer] = 1;
        tp->wake_list[tp->nwake++] = peer;
    }
}
/* Wakes every noted peer that sleeps, after one full fence (channels.c); with
 * ops->peer_sleeps, no fence when none of them says it sleeps. */
void collie_wake_flush(collie_transport *tp);

/* A sleeper looks at its words again this long after it announced that it sleeps: a
 * writer that skipped the fence (collie_wake_flush) may have read the announcement before
 * it was visible, while the sleeper read the writer's words before they were. */
#define COLLIE_SLEEP_RECHECK_NS 50000ull

/* Is [ptr, ptr+len) in this rank's registered memory?  Then *ref names it, else ref->fd
 * is -1. */
static inline bool collie_find_ref(collie_transport *tp, const void *ptr, uint64_t len,
                                   collie_mem_ref *ref) {
    if (tp->ops->mem_find && tp->ops->mem_find(tp, ptr, len, ref))
        return true;
    ref->fd = -1;
    return false;
}

/* A local pointer to peer's registered data named by ref (pid owns it), or NULL when the
 * transport cannot map peers' memory or ref names none (fd < 0). */
static inline const void *collie_map_peer(collie_transport *tp, int peer, int pid,
                                          const collie_mem_ref *ref, uint64_t len) {
    if (!tp->ops->mem_map_peer || ref->fd < 0)
        return NULL;
    return tp->ops->mem_map_peer(tp, peer, pid, ref, len);
}


/* Asks the CPU to move the cache lines of [p, p+len) from its own caches towards the
 * shared one (CLDEMOTE, a hint: a NOP on x86 CPUs without it, nothing elsewhere), so
 * that a reader on another core fetches them from there instead of snooping this core. */
static inline void collie_demote(const void *p, size_t len) {
#if defined(__x86_64__)
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)(COLLIE_CACHELINE - 1));
    for (; c < (const char *)p + len; c += COLLIE_CACHELINE)
        __asm__ volatile(".byte 0x0f, 0x1c, 0x07" : : "D"(c) : "memory");   /* cldemote (%rdi) */
#else
    (void)p;
    (void)len;
#endif
}

static inline collie_slot_hdr *collie_slot(const collie_transport *tp, const collie_channel *ch,
                                           uint64_t seq) {
    return (collie_slot_hdr *)(ch->slots + ((seq - 1) & tp->slot_mask) * tp->slot_stride);
}
static inline collie_slot_meta *collie_slot_meta_of(collie_slot_hdr *h) {
    return (collie_slot_meta *)(h + 1);
}
/* Where a chunk of `len` payload bytes lives in its slot. */
static inline void *collie_slot_payload(collie_slot_hdr *h, uint64_t len) {
    return len <= SLOT_INLINE_BYTES ? (void *)h->inline_data : (void *)((char *)h + 2 * COLLIE_CACHELINE);
}

/* Drops what is owed of tp->discard[peer] as far as it has arrived (returning the slots);
 * true when nothing is owed any more (channels.c). */
bool collie_discard_progress(struct collie_transport *tp, int peer);
/* The same for every peer; true when nothing is owed. */
bool collie_discard_all(struct collie_transport *tp);

/* Memory layout shared by transports that lay out channels themselves. */
size_t collie_channel_bytes(uint32_t nslots, uint32_t slot_bytes);

/* Transports. */
int collie_shm_create(collie_transport **out);   /* from COLLIE_RANK/SIZE/JOB (collie-run) */
int collie_self_create(collie_transport **out);  /* a team of one */
/* shm from explicit values: rank in 0..size-1, job names the segment (letters, digits,
 * - and _; unique per team).  agree (optional bootstrap, e.g. an MPI allreduce) returns
 * the minimum of `status` over all ranks; with it, no rank polls for a missing segment. */
typedef struct collie_shm_config {
    int rank, size;
    const char *job;
    int (*agree)(void *ctx, int status);
    void *agree_ctx;
    const int32_t *pids;   /* optional [size]: every rank's pid, so that set-up notices a
                              rank that dies before it attaches (sub-teams) */
    bool fixed_geometry;   /* the slot geometry must match other nodes' (shm+mpi): the
                              environment's or the fixed default, not one chosen for this
                              node's cores */
} collie_shm_config;
int collie_shm_create_with(const collie_shm_config *cfg, collie_transport **out);
/* P virtual ranks in one process, all channels in ordinary memory; tps[r] is rank r's view.
 * Waits never sleep: the caller drives all ranks in turn (tests, simulator). */
int collie_loop_create(int size, collie_transport **tps);

#endif
