/*
 * mp_alias.c — calls whose send buffer overlaps their receive buffer without
 * COLLIE_IN_PLACE (MPI calls that aliasing erroneous; MPI-1 programs did it, e.g. an
 * allgather whose sendbuf is the rank's own block of recvbuf).  collie reads such a
 * rank's send data from a private copy made at the call's start (request.c), so every
 * algorithm gives the result of the same call with separate buffers.  Checked against a
 * reference computed here, on every rank, for every collective with both buffers, every
 * registered algorithm (forced), the three call forms, malloc and collie_alloc buffers,
 * several counts; then persistent requests started again with new data.
 *
 * Usage: collie-run -n P mp_alias      Prints "mp_alias, P ranks: exact" on rank 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_colls.h"
#include "algorithms/algorithm.h"
#include "core/core.h"

static int me, P, failures;
static collie_team_t *w;

/* How the send buffer lies in the receive buffer. */
enum { SAME, OWN_SLOT };

typedef struct kind {
    int coll;
    bool v;
    int alias;
} kind;

static const kind kinds[] = {
    { COLL_ALLREDUCE, false, SAME },     { COLL_REDUCE, false, SAME },
    { COLL_SCAN, false, SAME },          { COLL_EXSCAN, false, SAME },
    { COLL_ALLGATHER, false, SAME },     { COLL_ALLGATHER, false, OWN_SLOT },
    { COLL_ALLGATHER, true, SAME },      { COLL_REDUCE_SCATTER, false, SAME },
    { COLL_REDUCE_SCATTER, true, SAME }, { COLL_ALLTOALL, false, SAME },
    { COLL_ALLTOALL, true, SAME },       { COLL_GATHER, false, SAME },
    { COLL_GATHER, true, SAME },         { COLL_SCATTER, false, SAME },
    { COLL_SCATTER, true, SAME },
};

static int64_t val(int from, size_t i, int gen) {
    return (int64_t)from * 1000003 + (int64_t)i * 7 + (int64_t)gen * 100000007;
}

static int64_t sum_over(int lo, int hi, size_t i, int gen) {
    int64_t s = 0;
    for (int q = lo; q < hi; q++)
        s += val(q, i, gen);
    return s;
}

/* Allocation and the arrays of one case on this rank. */
typedef struct alias_case {
    kind k;
    size_t n;
    int root, gen;
    bool registered;
    int64_t *region, *other;   /* region: both buffers; other: a non-root's own buffer */
    size_t *counts, *displs;
} alias_case;

static int64_t *get(size_t elems, bool registered) {
    size_t bytes = (elems ? elems : 1) * sizeof(int64_t);
    int64_t *p = registered ? collie_alloc(w, bytes) : malloc(bytes);
    if (p)
        memset(p, 0xA5, bytes);
    return p;
}

static void put(int64_t *p, bool registered) {
    if (registered)
        collie_free(w, p);
    else
        free(p);
}

static bool is_root(const alias_case *c) {
    return !collie_coll_rooted(c->k.coll) || me == c->root;
}

/* Writes this rank's input (generation c->gen) and returns the call's arguments. */
static void fill(alias_case *c, mp_call *m) {
    size_t n = c->n, blocks = (size_t)P * n;
    int coll = c->k.coll;
    int64_t *in = is_root(c) ? c->region : c->other;
    bool multi = coll == COLL_REDUCE_SCATTER || coll == COLL_ALLTOALL ||
                 (coll == COLL_SCATTER && is_root(c));
    size_t own_at = c->k.alias == OWN_SLOT ? (size_t)me * n : 0;
    for (size_t i = 0; i < (multi ? blocks : n); i++)
        in[own_at + i] = val(me, i, c->gen);
    memset(m, 0, sizeof *m);
    m->coll = coll;
    m->v = c->k.v;
    m->count = m->own = n;
    m->c = m->rc = c->counts;
    m->d = m->rd = c->displs;
    m->dt = COLLIE_INT64;
    m->op = collie_coll_has_op(coll) ? COLLIE_SUM : NULL;
    m->root = c->root;
    m->send = in + own_at;
    m->recv = c->region;
    if (!is_root(c) && coll == COLL_SCATTER)
        m->send = NULL, m->recv = c->other;
    else if (!is_root(c))
        m->recv = NULL;
}

/* The expected value of element i of the region (false: not checked). */
static bool expected(const alias_case *c, size_t i, int64_t *want) {
    size_t n = c->n, j = i / (n ? n : 1), e = i % (n ? n : 1);
    int g = c->gen;
    switch (c->k.coll) {
    case COLL_ALLREDUCE: case COLL_REDUCE: *want = sum_over(0, P, i, g); return i < n;
    case COLL_SCAN: *want = sum_over(0, me + 1, i, g); return i < n;
    case COLL_EXSCAN: *want = sum_over(0, me, i, g); return i < n && me > 0;
    case COLL_ALLGATHER: case COLL_GATHER: *want = val((int)j, e, g); return true;
    case COLL_REDUCE_SCATTER: *want = sum_over(0, P, (size_t)me * n + i, g); return i < n;
    case COLL_ALLTOALL: *want = val((int)j, (size_t)me * n + e, g); return true;
    default: *want = val(c->root, (size_t)me * n + i, g); return i < n;   /* scatter */
    }
}

static void check(const alias_case *c, const char *algo, int form, int st) {
    static const char *const forms[] = { "blocking", "split-phase", "persistent" };
    const int64_t *out = is_root(c) ? c->region : c->other;
    size_t len = c->k.coll == COLL_ALLGATHER || c->k.coll == COLL_ALLTOALL ||
                 (c->k.coll == COLL_GATHER && is_root(c)) ? (size_t)P * c->n : c->n;
    char what[160] = "";
    if (st != COLLIE_OK)
        snprintf(what, sizeof what, "%s", collie_last_error());
    bool rooted_out = c->k.coll == COLL_REDUCE || c->k.coll == COLL_GATHER;
    for (size_t i = 0; !what[0] && (!rooted_out || is_root(c)) && i < len; i++) {
        int64_t want;
        if (expected(c, i, &want) && out[i] != want)
            snprintf(what, sizeof what, "element %zu is %lld, not %lld", i, (long long)out[i],
                     (long long)want);
    }
    if (!what[0])
        return;
    mp_call m = { .coll = c->k.coll, .v = c->k.v };
    if (++failures <= 10)
        fprintf(stderr, "FAIL: rank %d: %s (algorithm %s, %s, %zu int64 per block, root %d, "
                "sendbuf %s recvbuf, %s): %s\n", me, mp_colls_fn(&m), algo, forms[form],
                c->n, c->root, c->k.alias == SAME ? "==" : "at its own block of",
                c->registered ? "collie_alloc" : "malloc", what);
}

static bool setup(alias_case *c) {
    size_t n = c->n, blocks = (size_t)P * n;
    c->counts = malloc((size_t)P * sizeof *c->counts);
    c->displs = malloc((size_t)P * sizeof *c->displs);
    for (int j = 0; c->counts && c->displs && j < P; j++)
        c->counts[j] = n, c->displs[j] = (size_t)j * n;
    bool single = c->k.coll <= COLL_REDUCE || c->k.coll >= COLL_SCAN;
    c->region = get(single ? n : blocks, c->registered);
    c->other = get(c->k.coll == COLL_SCATTER ? n : blocks, c->registered);
    return c->counts && c->displs && c->region && c->other;
}

static void teardown(alias_case *c) {
    put(c->region, c->registered);
    put(c->other, c->registered);
    free(c->counts);
    free(c->displs);
}

static void run(const kind *k, size_t n, bool registered, const char *forced) {
    for (int form = 0; form < FORM_COUNT; form++) {
        alias_case c = { .k = *k, .n = n, .root = P - 1, .gen = form, .registered = registered };
        mp_call m;
        const char *ran = NULL;
        if (!setup(&c)) {
            fprintf(stderr, "FAIL: rank %d: out of memory\n", me);
            failures++;
            teardown(&c);
            return;
        }
        fill(&c, &m);
        int st = mp_colls_call(w, &m, form, &ran);
        check(&c, ran ? ran : forced, form, st);
        teardown(&c);
    }
}

/* A persistent request started three times, new data before each start. */
static void restarts(const kind *k, size_t n, bool registered) {
    alias_case c = { .k = *k, .n = n, .root = P - 1, .registered = registered };
    collie_request_t *r = NULL;
    mp_call m;
    int st = setup(&c) ? COLLIE_OK : COLLIE_ERR_NOMEM;
    if (!st)
        fill(&c, &m);
    if (!st)
        st = k->coll == COLL_ALLREDUCE
                 ? collie_allreduce_init(w, m.send, m.recv, n, m.dt, m.op, &r)
                 : collie_alltoall_init(w, m.send, m.recv, n, m.dt, &r);
    for (int gen = 0; gen < 3 && !st; gen++) {
        c.gen = gen;
        fill(&c, &m);
        st = collie_start(r);
        if (!st)
            st = collie_wait(r);
        check(&c, r ? collie_request_algorithm(r) : "?", FORM_PERSISTENT, st);
    }
    if (st)
        check(&c, "?", FORM_PERSISTENT, st);
    collie_request_free(r);
    teardown(&c);
}

static void sweep(void) {
    const size_t counts[] = { 1, (size_t)P + 1, 1000, 40000, 200000 };
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        const kind *k = &kinds[ki];
        for (size_t a = 0; a < collie_algorithm_count(k->coll); a++) {
            const char *algo = collie_algorithm_at(k->coll, a)->name;
            if (collie_force_algorithm(k->coll, algo) != COLLIE_OK)
                continue;
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
                run(k, counts[ci], (ci + a) % 2 == 1, algo);
        }
        collie_force_algorithm(k->coll, "auto");
    }
    for (int reg = 0; reg < 2; reg++) {
        restarts(&kinds[0], 40000, reg);
        restarts(&kinds[9], 40000, reg);
    }
}

int main(void) {
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    w = collie_world();
    me = collie_rank(w);
    P = collie_size(w);
    sweep();
    int32_t bad = failures;
    if (collie_allreduce(w, COLLIE_IN_PLACE, &bad, 1, COLLIE_INT32, COLLIE_MAX) != COLLIE_OK)
        bad = 1;
    collie_finalize();
    if (me == 0 && !bad)
        printf("mp_alias, %d ranks: exact\n", P);
    return bad != 0;
}
