/*
 * sim_impl.h — internals of the simulation engine (sim.h): compact schedules
 * (compact.c), the event heap and the message table (table.c), the engine (engine.c,
 * engine_rank.c).
 */
#ifndef COLLIE_SIM_IMPL_H
#define COLLIE_SIM_IMPL_H

#include "sim/sim.h"

#define SIM_MAX_P (1 << 20)             /* the message table packs ranks in 20 bits */
#define SIM_NONE (-1)

/* ---- compact schedules (compact.c) ---------------------------------------------------- */
typedef struct sim_cop {
    double ready;       /* REDUCE, while its round runs: latest arrival so far */
    uint64_t bytes;
    uint64_t off;       /* PUT: source offset; REDUCE: destination offset */
    int32_t peer;       /* PUT: target; REDUCE, while its round runs: sources missing */
    uint8_t kind;       /* enum sched_kind */
    uint8_t buf;        /* PUT: source buffer; REDUCE: destination (SEND is RECV in place) */
    uint8_t nsrc;       /* REDUCE: sources */
    uint8_t nin;        /* REDUCE: incoming sources */
} sim_cop;

typedef struct sim_csched {     /* one allocation */
    uint32_t nrounds, nops;
    uint32_t *round_op;         /* nrounds + 1: first op of each round */
    uint32_t *round_in;         /* nrounds + 1: first incoming peer of each round */
    sim_cop *ops;
    int32_t *in;                /* incoming peers of the REDUCEs, in op order */
    uint64_t *wlo, *whi;        /* nrounds * SBUF_COUNT: bytes [lo, hi) each round's
                                   REDUCEs write per buffer (lo >= hi: none) */
} sim_csched;

/* Builds rank's schedule with the algorithm and compacts it; NULL (err set) on failure. */
sim_csched *sim_csched_build(const collie_algorithm *alg, const collie_coll_args *args,
                             int rank, collie_schedule *scratch, char *err, size_t errsz);

/* ---- event heap and message table (table.c) ------------------------------------------- */
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

/* Open addressing over 64-bit keys (never 0); values are two words and a time. */
typedef struct sim_entry {
    uint64_t key;
    double t;
    uint32_t a, b;
} sim_entry;

typedef struct sim_table {
    sim_entry *v;
    size_t n, cap;
} sim_table;

/* The entry of key, created zeroed when absent (NULL when out of memory). */
sim_entry *sim_table_get(sim_table *t, uint64_t key);
sim_entry *sim_table_find(sim_table *t, uint64_t key);
void sim_table_del(sim_table *t, sim_entry *e);
void sim_table_free(sim_table *t);

static inline uint64_t sim_pair_key(int from, int to) {
    return ((uint64_t)(uint32_t)from << 20 | (uint32_t)to) + 1;
}
static inline uint64_t sim_msg_key(int from, int to, uint32_t seq) {
    return ((uint64_t)(uint32_t)from << 44 | (uint64_t)(uint32_t)to << 24 | seq) + 1;
}

/* ---- the engine ------------------------------------------------------------------------ */
enum sim_msg_state { MSG_FREE = 0, MSG_PENDING, MSG_XFER, MSG_DONE, MSG_ZOMBIE };

typedef struct sim_msg {
    double issued, start, end, deliver;
    uint64_t bytes, off;
    int32_t from, to;
    uint32_t seq, ver, round, op;
    int32_t qprev, qnext;       /* sender: pending (PENDING) or outstanding (XFER) list */
    int32_t wnext;              /* receiver's wait list */
    uint8_t state, buf, waiting, staged, bidir, delivered;
} sim_msg;

typedef struct sim_rank {
    sim_csched *s;
    uint32_t round, pending;    /* current round, its REDUCEs not done */
    double cpu;                 /* the CPU is free from */
    double round_start, finish;
    int32_t out_msg, in_msg;    /* messages on the links, SIM_NONE */
    int32_t q_head, q_tail;     /* messages waiting for the links, issue order */
    int32_t x_head;             /* messages in transfer */
    int32_t w_head, w_tail;     /* messages waiting for this rank's incoming link */
    int32_t free_msg;           /* its free messages (linked by qnext) */
    uint32_t unfinished;        /* own messages not yet off the outgoing link */
    bool rounds_done, finished;
} sim_rank;

typedef struct sim_engine {
    const sim_config *c;
    const collie_coll_args *a;
    const sim_model *m;
    int P, nranks;              /* nranks: 1 when symmetric */
    bool sym;
    sim_rank *ranks;
    sim_msg *msgs;
    int32_t nmsgs, capmsgs;
    sim_heap heap;
    sim_table pairs;            /* (from, to): a = messages sent, b = incoming assigned */
    sim_table inbox;            /* (from, to, seq): a = 1 arrived (t) / 2 REDUCE a waits */
    collie_schedule scratch;
    sim_result *res;
    bool failed;
} sim_engine;

bool sim_fail(sim_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* engine.c: links and messages */
bool sim_issue(sim_engine *e, int r, const sim_cop *op, uint32_t opi, double t);
bool sim_event_msg(sim_engine *e, const sim_event *ev);
/* engine_rank.c: rounds and REDUCEs */
bool sim_rank_start(sim_engine *e, int r, double t);
bool sim_cpu_done(sim_engine *e, int r, double t);
bool sim_arrive(sim_engine *e, int from, int to, uint32_t seq, uint64_t bytes, double t);
void sim_rank_check_finish(sim_engine *e, int r, double t);

#endif
