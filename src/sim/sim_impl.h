/*
 * sim_impl.h — internals of the simulation engine (sim.h): compact schedules
 * (compact.c), memory (arena.c), the event heap (heap.c), the engine (engine.c,
 * engine_rank.c).
 */
#ifndef COLLIE_SIM_IMPL_H
#define COLLIE_SIM_IMPL_H

#include "sim/sim.h"

#define SIM_MAX_P (1 << 20)             /* ranks (a bound on memory, not on the indexing) */
#define SIM_NONE (-1)

/* ---- memory (arena.c) ------------------------------------------------------------------- */
/* Bump allocation in chunks on transparent huge pages, all freed together. */
typedef struct sim_arena {
    struct sim_arena_chunk *chunks;
    char *at, *end;
    size_t next_size;
} sim_arena;

void *sim_arena_alloc(sim_arena *a, size_t bytes);     /* 16-byte aligned; NULL: no memory */
void sim_arena_free(sim_arena *a);
/* Asks for huge pages under [p, p + bytes) (the whole 2 MiB pages inside it). */
void sim_advise_huge(void *p, size_t bytes);

/* ---- compact schedules (compact.c) ---------------------------------------------------- */
typedef struct sim_cop {        /* 32 bytes */
    uint64_t bytes;
    uint64_t off;       /* PUT: source offset; REDUCE: destination offset */
    union {
        double ready;   /* REDUCE: latest arrival so far (once posted: or its round's start) */
        struct {
            uint32_t seq;   /* PUT: how many earlier PUTs of this rank go to the same peer */
            uint32_t rop;   /* PUT: the REDUCE it feeds in the receiver's schedule (in the
                               symmetric method: rank 0's for the mirror image); UINT32_MAX:
                               none (the message is never taken) */
        } put;
    } u;
    int32_t peer;       /* PUT: target; REDUCE: incoming sources not yet arrived */
    uint8_t kind;       /* enum sched_kind */
    uint8_t buf;        /* PUT: source buffer; REDUCE: destination (SEND is RECV in place) */
    uint8_t nsrc;       /* REDUCE: sources */
    uint8_t nin;        /* REDUCE: incoming sources */
} sim_cop;

/* A rank's schedule with what timing needs, in one allocation.  Message #k from rank f to
 * this rank (k counts f's PUTs to this rank, from 0) feeds the REDUCE in_op[from_at[g] + k],
 * where from[g] = f: the k-th incoming source from f in op order, as the executor matches. */
typedef struct sim_sender {
    int32_t from;               /* a rank sending to this one (ascending) */
    uint32_t at;                /* where its entries start in in_op */
} sim_sender;

typedef struct sim_csched {     /* laid out in this order: a message's arrival reads the */
    uint32_t nrounds, nops, nin, nfrom;     /* first cache lines only, then one op */
    sim_sender *from;           /* nfrom + 1 (the last: from = INT32_MAX, at = nin) */
    uint32_t *in_op;            /* nin: the REDUCE each incoming message feeds */
    uint32_t *round_op;         /* nrounds + 1: first op of each round */
    int32_t *in;                /* nin: incoming peers of the REDUCEs, in op order */
    sim_cop *ops;
} sim_csched;

/* Builds schedules: the registry's schedule (reused) and per-peer counters. */
typedef struct sim_builder {
    collie_schedule s;
    uint32_t *count;            /* [P], zero between builds */
    int32_t *peers;             /* [P], the peers one build counted */
} sim_builder;

bool sim_builder_init(sim_builder *b, const collie_coll_args *args);
void sim_builder_free(sim_builder *b);

/* Builds rank's schedule with the algorithm and compacts it, in arena (NULL: one malloc
 * block); NULL (err set) on failure. */
sim_csched *sim_csched_build(sim_builder *b, sim_arena *arena, const collie_algorithm *alg,
                             const collie_coll_args *args, int rank, char *err, size_t errsz);

#define SIM_MAX_THREADS 8

/* build_all.c: builds the schedules of ranks 0 … nranks-1 into out[], on up to SIM_MAX_THREADS
 * threads (as many as there are CPUs), thread t's in arenas[t]; false (err: the lowest
 * failing rank's error) on failure. */
bool sim_csched_build_all(const collie_algorithm *alg, const collie_coll_args *args,
                          int nranks, sim_csched **out, sim_arena *arenas, char *err,
                          size_t errsz);

/* build_all.c: sets every PUT's u.put.rop (all: the schedules of ranks 0 … nranks-1, all
 * P of them, or rank 0's alone when sym). */
void sim_resolve_puts(sim_csched **all, int nranks, int P, bool sym);

/* Where the messages from rank `from` are in in_op: [*at, *end); false if it sends none. */
bool sim_csched_sender(const sim_csched *s, int from, uint32_t *at, uint32_t *end);

/* ---- event heap (heap.c) ------------------------------------------- */
enum sim_ev_kind { EV_START = 1, EV_READY, EV_LINK_FREE, EV_DELIVER, EV_XFER_END, EV_CPU_DONE,
                   EV_PUMP_SEND, EV_PUMP_RECV };

typedef struct sim_event {
    double t;
    uint64_t seq;               /* ties: first pushed, first served */
    int32_t id;                 /* rank or message */
    uint32_t ver;               /* message version (stale events are dropped) */
    uint8_t kind;
} sim_event;

/* Events pushed for the current instant (ranks in lockstep: most of them) go to a FIFO
 * instead of the heap; pop takes the earlier of the two heads, so the order stays
 * (time, push order) exactly. */
typedef struct sim_heap {
    sim_event *v;
    size_t n, cap;
    uint64_t seq;
    double now;                 /* time of the last popped event */
    sim_event *fifo;            /* ring buffer: events at time `now`, push order */
    size_t fhead, fn, fcap;
} sim_heap;

bool sim_heap_push(sim_heap *h, double t, int kind, int32_t id, uint32_t ver);
bool sim_heap_pop(sim_heap *h, sim_event *out);
void sim_heap_free(sim_heap *h);

/* ---- the engine ------------------------------------------------------------------------ */
enum sim_msg_state { MSG_FREE = 0, MSG_PENDING, MSG_XFER, MSG_DONE, MSG_ZOMBIE };

typedef struct sim_msg {        /* one cache line (the engine waits on memory, not math) */
    double start, end;          /* on the links from start; the links are free from end */
    uint64_t bytes;
    int32_t from, to;
    uint32_t rop, ver;          /* rop: the REDUCE it feeds (sim_cop.u.put.rop) */
    uint32_t op;                /* its PUT in the sender's schedule (source buffer, offset) */
    uint32_t qpos;              /* PENDING: its entry in the sender's queue */
    int32_t qnext;              /* FREE: the sender's next free message; PENDING: the next
                                   message of its READY event (sim_ready_batch) */
    int32_t wnext;              /* receiver's wait list */
    uint8_t state, waiting, staged, bidir, delivered;
} sim_msg;

typedef struct sim_link {       /* a rank's two links: the message on each, or SIM_NONE */
    int32_t out_msg, in_msg;
} sim_link;

typedef struct sim_qent {
    int32_t id, to;             /* id SIM_NONE: started (a hole) */
} sim_qent;

typedef struct sim_queue {      /* a sender's messages waiting for the links, issue order: an
                                   array, so that its scans load the entries independently */
    sim_qent *v;                /* entries [head, len) */
    uint32_t head, len, cap, live;
} sim_queue;

typedef struct sim_rank {      /* two cache lines: what every message touches, the rest */
    _Alignas(64) sim_cop *ops;  /* s->ops (an arrival then touches the op, not s) */
    sim_queue q;
    double cpu;                 /* the CPU is free from */
    uint32_t posted;            /* ops before this index are posted */
    uint32_t unposted, unrun;   /* its REDUCEs not yet posted; posted but not yet run */
    int32_t w_head, w_tail;     /* messages waiting for this rank's incoming link */
    uint32_t unfinished;        /* own messages not yet off the outgoing link */
    _Alignas(64) sim_csched *s;
    uint32_t round;             /* current round */
    int32_t free_msg;           /* its free messages (linked by qnext) */
    double round_start, finish;
    bool rounds_done, finished;
} sim_rank;

_Static_assert(sizeof(sim_rank) == 128, "a rank is two cache lines");

/* The PUTs one rank issues at one time with no other event pushed in between would have
 * consecutive READY events; they share one (appending them all to the sender's queue
 * before one scan gives what one scan after each would: nothing else happens between). */
typedef struct sim_ready_batch {
    int32_t tail;               /* the last message of the open batch, SIM_NONE: none open */
    int rank;
    double t;
    uint64_t seq;               /* the heap's push count after the batch's event */
} sim_ready_batch;

typedef struct sim_engine {
    const sim_config *c;
    const collie_coll_args *a;
    const sim_model *m;
    int P, nranks;              /* nranks: 1 when symmetric */
    bool sym;
    sim_rank *ranks;
    sim_link *links;            /* per rank (apart: the scans of the links stay in cache) */
    double *issued;             /* per message, when traced: when it was issued */
    sim_msg *msgs;
    int32_t nmsgs, capmsgs;
    sim_heap heap;
    sim_ready_batch batch;      /* open while one rank issues its PUTs (begin_rounds) */
    sim_arena arenas[SIM_MAX_THREADS];  /* the ranks' schedules, per building thread */
    sim_arena queue_arena;      /* the senders' queues (huge pages, as the schedules) */
    sim_result *res;
    bool failed;
} sim_engine;

/* Rank r's state (in the symmetric method every rank is rank 0). */
static inline sim_rank *sim_rank_of(sim_engine *e, int r) {
    return &e->ranks[e->sym ? 0 : r];
}

bool sim_fail(sim_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* engine.c: links and messages */
bool sim_issue(sim_engine *e, int r, const sim_cop *op, uint32_t opi, double t);
bool sim_event_msg(sim_engine *e, const sim_event *ev);
/* engine_rank.c: rounds and REDUCEs */
bool sim_rank_start(sim_engine *e, int r, double t);
bool sim_cpu_done(sim_engine *e, int r, double t);
bool sim_arrive(sim_engine *e, const sim_msg *g, double t);
void sim_rank_check_finish(sim_engine *e, int r, double t);

#endif
