/*
 * verify_impl.h — internals of the symbolic schedule verifier (verify.h), shared by
 * verify.c (running), verify_checks.c (static and result checks) and
 * verify_expr.c (hash-consed expressions).
 */
#ifndef COLLIE_SIM_VERIFY_IMPL_H
#define COLLIE_SIM_VERIFY_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/verify.h"

#define SYM_UNDEF 0u            /* the expression id of undefined memory */

void *sym_xrealloc(void *p, size_t n);
void *sym_xcalloc(size_t n, size_t size);

/* ---- hash-consed expressions (verify_expr.c) ------------------------------ */
typedef struct sym_node {
    uint64_t hash;
    uint32_t first, n;      /* children kids[first … first+n); n == 0: a leaf */
    int32_t rank;           /* leaf: whose input */
    uint32_t elem;          /* leaf: which element; node: its first leaf's */
    int32_t lo, hi;         /* the least and greatest rank among its leaves */
    bool exact;             /* its leaves are the ranks lo … hi, each once (labels: the set
                               without walking the leaves) */
} sym_node;

typedef struct sym_store {
    sym_node *nodes;
    uint32_t nnodes, capnodes;
    uint32_t *kids;
    size_t nkids, capkids;
    uint64_t *tab;          /* open addressing: the high half of a node's hash above its
                               id (probes skip other nodes unread); 0 = empty */
    size_t tabcap;
} sym_store;

uint32_t sym_node_id(sym_store *st, const uint32_t *kids, uint32_t n);  /* n >= 2 */
uint32_t sym_leaf_id(sym_store *st, int rank, uint32_t elem);
void sym_store_free(sym_store *st);
/* NULL when expression id combines every rank's leaf of element e as required (exactly
 * once; in rank order unless commutative; at least once if idempotent), else what is
 * wrong, with the in-order leaves in desc. */
const char *sym_expr_problem(const sym_store *st, uint32_t id, size_t e, int P,
                             bool commutative, bool idempotent, char *desc, size_t descsz);

/* verify_label.c: what n element values carry, as contribution sets over element ranges
 * ("x0..3[8:16)", "x{0,2,5}[0:4)"; no range when they are the whole vector of count
 * elements); cut with " …" when longer than outsz. */
void sym_label(const sym_store *st, int P, size_t count, const uint32_t *vals, size_t n,
               char *out, size_t outsz);

/* ---- the simulated team -------------------------------------------------------------- */
typedef struct sym_snap {       /* an immutable copy of a "heard from" set */
    uint32_t refs;
    uint64_t bits[];
} sym_snap;

typedef struct sym_msg {
    uint64_t bytes;
    uint32_t *vals;
    sym_snap *heard;
} sym_msg;

typedef struct sym_queue {      /* messages from p to q */
    sym_msg *v;
    uint32_t n, cap, consumed;
} sym_queue;

typedef struct sym_rank {
    const collie_schedule *s;
    collie_coll_args args;      /* this rank's view of the call (sym_rank_args) */
    uint32_t *mem[SBUF_COUNT];  /* element values; SEND == RECV in place */
    uint64_t lim[SBUF_COUNT];   /* bytes */
    const char *deny_read[SBUF_COUNT], *deny_write[SBUF_COUNT];   /* reasons, or NULL */
    uint32_t round;
    bool started;
    uint8_t *done;              /* per op of the current round */
    uint32_t *seq;              /* per incoming source: which message from that peer */
    uint32_t *assigned;         /* per peer: incoming messages assigned so far */
    uint64_t *heard;            /* ranks heard from, transitively */
    sym_snap *snap;             /* copy of heard while unchanged, or NULL */
} sym_rank;

typedef struct sym_sim {
    const char *name;
    const collie_coll_args *a;
    int P, words;
    size_t es;
    sym_rank *ranks;
    sym_queue *q;               /* q[from * P + to] */
    sym_store st;
    uint32_t *vals;             /* scratch: one REDUCE's children */
    char *err;
    size_t errsz;
    bool failed;
    sym_put_hook hook;          /* optional: told what every PUT carries */
    void *hook_ctx;
} sym_sim;

/* Records the first failure: "<call>: rank R round K element E: message" (negative
 * rank/round/elem are left out).  Returns false. */
bool sym_fail(sym_sim *m, int rank, long round, long elem, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
const char *sym_buf_name(int buf);

/* verify_checks.c */
bool sym_check_static(sym_sim *m, int rank);     /* operations, bounds, hazards */
bool sym_check_results(sym_sim *m);              /* results and causality */

/* verify_colls.c */
/* Rank r's view of call a: rank r, v = &a->v[r] (v forms: count = its own count), in
 * place only at the root of gather and scatter. */
void sym_rank_args(const collie_coll_args *a, int r, collie_coll_args *out);
bool sym_check_call(sym_sim *m);                 /* the v arrays agree between ranks */
void sym_setup_inputs(sym_sim *m, int rank);     /* leaves in the input buffers */
void sym_setup_access(sym_sim *m, int rank);     /* deny_read, deny_write */
bool sym_heard_from(sym_sim *m, int r, int q);   /* causality, failing if not */
/* Results and causality of allgather … exscan (the collectives after barrier). */
bool sym_check_results_more(sym_sim *m);

#endif
