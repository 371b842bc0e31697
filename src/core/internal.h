/*
 * internal.h — teams, requests and the executor (layers 3 and 7).
 */
#ifndef COLLIE_INTERNAL_H
#define COLLIE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "collie.h"
#include "algorithms/algorithm.h"
#include "schedule/schedule.h"
#include "transport/transport.h"

struct collie_team {
    int rank, size;
    collie_transport *tp;
    uint32_t coll_seq;              /* starts on this team so far, but of collie_*_init requests */
    uint32_t pers_seq;              /* collie_*_init requests made on this team so far */
    uint32_t any_order_active;      /* active collie_*_init requests in the queue */
    struct collie_stashed **stash;  /* [size]: chunks taken ahead of their request (stash.c) */
    uint64_t stash_count;
    collie_request_t *head, *tail;  /* started, unfinished requests, in start order */
    int failed;                     /* a peer failed: every later call fails at once */
    char fail_msg[256];
    uint64_t timeout_ns;            /* COLLIE_TIMEOUT_MS; 0 = forever */
    uint64_t spin_ns;               /* poll this long before sleeping */
    int max_yields;                 /* then give the core away this often before sleeping */
    uint32_t polls;                 /* collie_test(req, 0) calls that found nothing to do */
    uint32_t idle_polls;            /* ... in a row that moved nothing (then they yield) */
    uint64_t poll_end_ns;           /* when the last yielding poll returned */
    /* Set by the executor when the head request waits: a word that changes when it may go
     * on (a slot's seq, a channel's consumed counter), and the value it waits for. */
    const _Atomic uint64_t *wait_word;
    uint64_t wait_value;
    /* Plans of recent blocking calls, reused when a call repeats (see api.c). */
    collie_request_t *cache[16];
    unsigned cache_next;
    struct collie_mcast *mcast;     /* multicast set up and verified at creation, or NULL */
    bool check_calls;               /* COLLIE_CHECK=1: an agreement step before every call */
    /* The thread inside a call on this team (owner.c): 0 when none. */
    _Atomic uintptr_t owner;
    unsigned owner_depth;           /* nested entries of the owner (a blocking call's start) */
    _Atomic(const char *) owner_fn; /* the call it is in (for the other thread's message) */
    bool serial_entry;              /* made at SINGLE / FUNNELED: a plain entry (owner.c) */
    /* Sub-teams (team_split.c).  How this team's sub-teams get their transport (NULL:
     * over this team's own collectives, team_setup.c) and its context; who may free it. */
    const struct collie_team_maker *maker;
    void *maker_ctx;
    int origin;                     /* COLLIE_TEAM_OWNED, _SUB, ... (collie_team_free) */
    collie_team_t *next_sub;        /* the live sub-teams of this process */
    uint32_t nrequests;             /* requests planned on the team and not freed */
    /* The times of the ways buffers that are not mapped can move, per collective and size
     * (core/path_tune.c; one flat block, made at its first use). */
    struct collie_path_tune *path_tune;
    /* How this rank copies into the copy cells, per collective and size (core/fill_tune.c;
     * made at its first use). */
    struct collie_fill_tune *fill_tune;
};

/* Who owns a team: the library (the world), a communicator (libcollie_mpi), or the
 * program (made by collie_team_split/dup: collie_team_free frees it). */
enum { COLLIE_TEAM_WORLD = 0, COLLIE_TEAM_OF_COMM = 1, COLLIE_TEAM_SUB = 2 };

/* How a team's sub-teams are made when not over its own collectives (libcollie_mpi: by
 * splitting its communicator).  split: collective over the parent's ranks (the caller
 * checked that they all called the same split, or all dup): color < 0 joins no team (*tp
 * and *ctx stay NULL); else the transport of this rank's new team, rank and size as
 * MPI_Comm_split gives them, and a context for the new team's own maker.  free_ctx
 * releases such a context when the team is freed (collective over that team). */
typedef struct collie_team_maker {
    int (*split)(void *ctx, int color, int key, bool dup, collie_transport **tp, void **newctx);
    void (*free_ctx)(void *ctx);
} collie_team_maker;

struct collie_request {
    collie_team_t *team;
    collie_coll_args args;
    collie_coll_v vstore;           /* v forms: the arrays' pointers (args.v points here) */
    const collie_algorithm *algo;
    collie_schedule sched;
    collie_dtype_t dtype;
    collie_op_t op;
    void *buf[SBUF_COUNT];          /* send, recv, tmp */
    void *tmp_alloc;
    const void *aliased_send;       /* sendbuf overlapping recvbuf (not COLLIE_IN_PLACE): the
                                       user's, copied to send_copy at each start */
    void *send_copy;                /* buf[SBUF_SEND] while aliased_send is set */
    size_t send_copy_bytes, send_copy_cap;
    bool persistent;
    bool started;                   /* started at least once */
    bool active;                    /* started and not finished */
    int status;                     /* last result (COLLIE_OK when finished) */
    uint32_t check;                 /* hash of the call, carried by every chunk */
    uint32_t check_base;            /* the part of check fixed at planning time */
    collie_call_id id;              /* what the call is (call_id.c); seq and check unset */
    collie_request_t *check_step;   /* COLLIE_CHECK: the agreement allreduce started first */
    collie_request_t *checks;       /* ... and, in that allreduce, the call it checks */
    uint32_t call_seq;              /* the start's number; persistent: COLLIE_PERSISTENT_SEQ | pers_id */
    uint32_t pers_id;               /* persistent: its number among the team's persistent requests */
    uint32_t nstarts;               /* persistent: starts so far */
    collie_request_t *next;         /* in the team's queue */
    /* executor state */
    uint32_t round;
    uint64_t *progress;             /* per op: chunks done (UINT64_MAX: finished) */
    uint64_t *last_seq;             /* per op: direct PUT, seq of its last chunk */
    uint64_t *nchunks;              /* per op: chunks of its message */
    uint64_t *chunk_len;            /* per op: bytes per chunk (the last may be shorter) */
    uint32_t *deadline;             /* per PUT: the round before which it must finish */
    uint32_t *trailing;             /* unfinished PUTs of closed rounds, oldest first */
    uint32_t ntrailing;
    char **staged;                  /* per PUT: private copy of its source, if staged */
    uint32_t progress_cap;
    uint32_t *busy;                 /* [2*size]: pass stamp of peers busy (send, recv) */
    uint32_t pass;
    uint64_t chunk_bytes;           /* inline payload per chunk (element multiple) */
    uint64_t direct_chunk_bytes;
    bool user_space_only;           /* messages never take the kernel copy (use_direct) */
    bool way_tuned;                 /* this rank times the way of its messages per call
                                       (core/path_tune.c); the others follow what arrives */
    bool send_user;                 /* this call: the messages this rank sends stay in user
                                       space (no kernel copy) */
    uint64_t way_posted_ns;         /* way_tuned and a trial call: when it started (0: not
                                       timed) */
    int blocked_peer;               /* the peer the last pass waited for */
    bool blocked_on_credit;
    uint64_t moves;                 /* bumped by every progress call that moved data */
    uint64_t seen_moves;            /* moves when last_progress_ns was taken */
    uint64_t last_progress_ns;      /* when a waiter last saw progress (0: not yet) */
    uint32_t nstaged;
    unsigned algo_generation;       /* collie_select_generation when planned (plan cache) */
    void *algo_state;               /* an algorithm driver's state (algorithm.h) */
};

/* The call number of a persistent request's starts: matched by initialization order, so
 * they carry the request's number among the team's persistent requests, with this bit. */
#define COLLIE_PERSISTENT_SEQ 0x80000000u

/* Executor (executor.c). */
int collie_exec_prepare(collie_request_t *req);   /* after the schedule is built */
void collie_exec_restart(collie_request_t *req);
/* Keeps req's messages in user space (no kernel single copy, executor_impl.h use_direct)
 * and recounts their chunks; for a driver whose slots path is its user-space way. */
void collie_exec_user_space_only(collie_request_t *req);
/* The executor finished req's call on this rank (records a timed way, path_tune.c). */
void collie_exec_finished(collie_request_t *req);
/* Has every chunk this rank sent been consumed by its receiver?  COLLIE_OK, or
 * COLLIE_TIMEOUT naming the peer to wait for (req->blocked_peer).  A call timed to choose
 * between the slots and the kernel copy waits for this before its clock stops: through
 * the slots a sender may finish while its receivers still copy out, through the kernel
 * copy it may not (its data is read from its own buffer), so without it the trial
 * compares the sender's part of one way with the whole of the other. */
int collie_exec_sends_consumed(collie_request_t *req);
/* Runs as far as possible without waiting: COLLIE_OK when finished, COLLIE_TIMEOUT when
 * it waits for a peer (req->blocked_peer), or an error. */
int collie_exec_progress(collie_request_t *req);

/* Chunks of other calls taken off a channel ahead of their request (stash.c). */
collie_slot_hdr *collie_stash_add(collie_team_t *team, int peer, const collie_slot_hdr *h,
                                  uint64_t len);   /* a copy of h; the caller fills its payload */
collie_slot_hdr *collie_stash_find(collie_team_t *team, int peer, uint32_t call_seq);
void collie_stash_drop(collie_team_t *team, int peer, collie_slot_hdr *h);
void collie_stash_free(collie_team_t *team);

/* Requests (request.c). */
/* collie_test without the handle checks, for requests the library holds (plan cache). */
int collie_request_test(collie_request_t *req, int timeout_ms);
/* persistent: false (started once), true (started any number of
 * times, each start matched by start order: the blocking calls' plan cache) or
 * COLLIE_REQ_BY_INIT (collie_*_init: matched by initialization order, see collie_start). */
#define COLLIE_REQ_BY_INIT 2
int collie_request_build(collie_team_t *team, int coll, const void *sendbuf, void *recvbuf,
                         size_t count, collie_dtype_t dtype, collie_op_t op, int root,
                         int persistent, collie_request_t **out);

/* Builds a request for a given algorithm (NULL: select as usual). */
int collie_request_build_with(collie_team_t *team, const collie_algorithm *alg, int coll,
                              const void *sendbuf, void *recvbuf, size_t count,
                              collie_dtype_t dtype, collie_op_t op, int root, int persistent,
                              collie_request_t **out);
/* The same for any collective, block (v NULL) or v form (count: this rank's v->own; the
 * arrays stay the caller's for the life of the request).  In place: sendbuf ==
 * COLLIE_IN_PLACE, or for scatter's root recvbuf == COLLIE_IN_PLACE (then SEND is RECV is
 * sendbuf). */
/* Progresses team's queue in order until req is done or the head must wait (request.c);
 * COLLIE_TIMEOUT while req is active. */
int collie_progress_queue(collie_team_t *team, collie_request_t *req);
/* COLLIE_ERR_ARG naming fn unless req is a live request of a live team (request.c). */
int collie_request_check(const collie_request_t *req, const char *fn);
/* collie_start without the handle checks and the team's ownership: for a request the
 * caller planned itself, on a team it already entered (the blocking calls). */
int collie_start_owned(collie_request_t *req);
int collie_request_build_v(collie_team_t *team, const collie_algorithm *alg, int coll,
                           const void *sendbuf, void *recvbuf, size_t count,
                           const collie_coll_v *v, collie_dtype_t dtype, collie_op_t op,
                           int root, int persistent, collie_request_t **out);
/* Points a planned request at a call's buffers (as collie_request_build_v does). */
int collie_request_set_buffers(collie_request_t *req, const void *sendbuf, void *recvbuf);

/* Call identities (call_id.c). */
void collie_call_id_init(collie_request_t *req);   /* req->id from args, dtype, op */
void collie_call_id_from_meta(const collie_slot_meta *m, uint32_t check, collie_call_id *id);
const char *collie_call_describe(const collie_call_id *id, char *buf, size_t size);
/* COLLIE_ERR_MISMATCH: "<mine> here, but rank <peer> <how> <theirs>: the ... differ". */
int collie_call_mismatch(const collie_call_id *mine, int peer, const char *how,
                         const collie_call_id *theirs, const char *detail);
int collie_call_mismatch_req(const collie_request_t *req, int peer, const char *how,
                             const collie_call_id *theirs, const char *detail);
bool collie_board_call(const collie_transport *tp, int q, uint32_t seq, collie_call_id *out);
bool collie_board_past_call(const collie_transport *tp, int q, uint32_t seq);
void collie_board_publish(collie_request_t *req);
/* At the end of a bcast every message of the call has been read: one more of the same
 * call waiting from a peer means that peer believes another rank is the root (a root
 * receives nothing; ranks of two trees meet only so): COLLIE_ERR_MISMATCH, else OK.
 * Best effort (the message may come later: then the next call sees it). */
int collie_no_extra_message(const collie_request_t *req);

/* COLLIE_CHECK=1 (check.c): plans the agreement step of req; runs when req starts. */
int collie_check_plan(collie_request_t *req);
void collie_check_start(collie_request_t *req);
int collie_check_verify(collie_request_t *step);   /* when the step finished */
void collie_check_free(collie_request_t *req);

/* One thread at a time per team (owner.c): COLLIE_OK (then leave once), or
 * COLLIE_ERR_ARG naming the thread inside and its call; the team stays usable. */
int collie_team_enter(collie_team_t *team, const char *fn);
void collie_team_leave(collie_team_t *team);
/* Teams made from now on are entered with a plain load and store (owner.c): set where the
 * thread level is SINGLE or FUNNELED (collie_init_thread, the drop-in's MPI_Init). */
void collie_set_serial_calls(bool on);
bool collie_serial_calls(void);
/* Takes a team no thread is inside for one pass of its queue from another team's wait
 * (progress_others.c): false when a thread is inside; give it back at once. */
bool collie_team_borrow(collie_team_t *team);
void collie_team_give_back(collie_team_t *team);

/* Calls fn on the world team and every live sub-team (team_split.c's list), under the
 * list's lock; fn must not make or free teams. */
void collie_teams_each(void (*fn)(collie_team_t *team, void *ctx), void *ctx);
/* One pass over the split-phase calls pending on the process's teams other than `self`
 * (progress_others.c): the number of those teams that still have some. */
int collie_progress_others(collie_team_t *self);

/* How the blocking calls wait for their request (api.c): collie_wait, or the waiting loop
 * of a layer that must keep other work moving meanwhile (libcollie_mpi: MPI's requests). */
extern int (*collie_blocking_wait)(collie_request_t *req);

/* Progress outside collie (wait.c), for a layer whose peers' one-sided writes complete
 * only while this process runs the layer's progress (libcollie_mpi: MPICH finishes a
 * peer's MPI_Put/MPI_Accumulate + MPI_Win_flush only while this rank is inside MPI).
 * Called at every turn of a blocking wait on a team whose transport has no progress hook
 * (shm); returns true while it matters, and such waits then sleep at most
 * COLLIE_OUTSIDE_SLICE_NS at a time.  NULL: nothing outside to move. */
extern bool (*collie_outside_progress)(void);
#define COLLIE_OUTSIDE_SLICE_NS 100000ull

/* Teams (team.c). */
int collie_team_create(collie_transport *tp, collie_team_t **out);
void collie_team_destroy(collie_team_t *team);
int collie_team_fail(collie_team_t *team, int status);  /* marks it failed, returns status */
/* COLLIE_ERR_ARG (message names fn) unless team is a live team (not NULL, not finalized). */
int collie_team_check(const collie_team_t *team, const char *fn);

/* Where collie_init gets its world when collie-run did not start the program (init.c):
 * libcollie_mpi installs one that builds the transport from MPI_COMM_WORLD.  create may
 * leave *tp NULL to decline (then the world is a team of one); finalize runs after the
 * world is destroyed in collie_finalize. */
typedef struct collie_world_provider {
    /* The world's transport; `required` the thread level asked of collie_init_thread,
     * *granted lowered to what the transport allows (MPI's provided level). */
    int (*create)(collie_transport **tp, int required, int *granted);
    void (*finalize)(void);
    const collie_team_maker *maker;   /* how the world's sub-teams are made (or NULL) */
    void *maker_ctx;
} collie_world_provider;
void collie_set_world_provider(const collie_world_provider *p);

/* Sub-teams (team_split.c, team_setup.c). */
/* Frees every sub-team still live (collie_finalize), the newest first. */
void collie_subteams_free_all(void);
/* The transport of this rank's sub-team over the parent's own collectives (collie-run),
 * collective over the whole parent: members[0..n) are the parent ranks of the new team in
 * its rank order, pids their processes, my this rank's index (-1: in no team, but still
 * takes part), name a unique segment name, status this rank's failure so far (it takes
 * part and every rank fails).  The result is the same on every rank of the parent; *tp is
 * NULL for my < 0 and on failure. */
typedef struct collie_subteam_spec {
    const int *members;
    const int32_t *pids;
    int n, my;
    const char *name;
    int status;
} collie_subteam_spec;
int collie_subteam_transport(collie_team_t *parent, const collie_subteam_spec *spec,
                             collie_transport **tp);

/* Algorithm selection (select.c). */
/* Chooses for a call; a tuning rule may set a->params. */
const collie_algorithm *collie_select(collie_coll_args *a);
/* The forced spec for coll, or NULL for auto. */
const char *collie_forced_algorithm(int coll, collie_algo_params *params);
int collie_select_init_from_env(void);
extern unsigned collie_select_generation;   /* bumped whenever a forced algorithm changes */  /* reads COLLIE_<COLL>_ALGO */

#endif
