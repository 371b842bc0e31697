/*
 * mp_colls.c — allgather(v), reduce_scatter(_block), alltoall(v), gather(v), scatter(v),
 * scan and exscan on real processes (collie-run, the shm transport), checked against a
 * reference computed here: every rank regenerates every rank's input from (case, rank,
 * index) and builds the whole expected receive buffer, gaps included (what the call must
 * not touch keeps its sentinel).  Swept: every registered algorithm of each collective
 * (forced), block and v forms (irregular counts with zeros, displacements with gaps and
 * in reverse order), in place and not, counts 0, 1, P-1, P, P+1, 1000, 40000, roots 0,
 * P-1 and P/2, int64 sums and a non-commutative user op (2×2 matrices mod 65521, rank order), the
 * three call forms (blocking, split-phase, persistent) and malloc or collie_alloc
 * buffers, mixed across ranks; the same on two sub-teams at once (collie_team_split: odd
 * and even ranks, reversed).  Then persistent requests started in different orders
 * (mp_colls_porder.c) and the misuse checks (mp_colls_misuse.c).
 *
 * Usage: collie-run -n P mp_colls [sweep|teams|porder|misuse|all|direct|cells|skewed]
 * (COLLIE_LONG_TESTS=1: also 300000 elements per block; `direct`, `cells`: the sweep of the
 * algorithms of that name only; `skewed`: the v forms of allgather, gather, scatter and
 * reduce_scatter with rank 0's block above 1 MiB and the others' of 32 KiB – 1 MiB, every
 * algorithm, every root, in place and not).
 * Prints "mp_colls, P ranks: passed (0 failures)" on rank 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_colls.h"
#include "algorithms/algorithm.h"
#include "core/core.h"

#define SENTINEL 0xA5
#define MOD 65521u

static int rank, P, failures, ncase;
static collie_team_t *team;
static collie_op_t matop;

/* ---- the test's own layouts (independent of coll_layout.c) ----------------------------- */

/* mode "skewed": rank 0's block above 1 MiB, the others' 32 KiB – 1 MiB (in int32s),
 * whatever the count: a rank must not pick a message's way from its own block's size. */
static bool skewed;

static size_t cnt_skewed(int j) {
    static const size_t others[] = { 8192 + 5, 65536 + 3, 200000 + 1 };
    return j == 0 ? 300000 + 17 : others[(j - 1) % 3];
}

static size_t cnt_shared(size_t count, int j) {
    return skewed ? cnt_skewed(j) : (count + 3 * (size_t)j) % (count + 2);
}

static size_t cnt_a2a(size_t count, int from, int to, bool ip) {
    return ip ? (count + 3 * (size_t)(from + to)) % (count + 2)
              : (count + 3 * (size_t)from + 5 * (size_t)to) % (count + 2);
}

/* Displacements for counts on rank r (order reversed when r is odd, a one-element gap
 * after every other block); returns the extent in elements. */
static size_t displs_for(int r, const size_t *counts, size_t *displs) {
    size_t at = 0, end = 0;
    for (int k = 0; k < P; k++) {
        int j = r % 2 ? P - 1 - k : k;
        displs[j] = at;
        at += counts[j] + (size_t)((j + r) % 2);
        if (counts[j] && displs[j] + counts[j] > end)
            end = displs[j] + counts[j];
    }
    return end;
}

/* A case's arrays for rank q: counts, displs (alltoall: send ones) and recv ones. */
typedef struct layout {
    size_t c[64], d[64], rc[64], rd[64];
    size_t extent, rextent;        /* elements */
} layout;

static void layout_of(const mp_call *k, int q, bool ip, layout *L) {
    for (int j = 0; j < P; j++) {
        bool a2a = k->coll == COLL_ALLTOALL;
        L->c[j] = !k->v ? k->count : a2a ? cnt_a2a(k->count, q, j, ip) : cnt_shared(k->count, j);
        L->rc[j] = !k->v ? k->count : cnt_a2a(k->count, j, q, ip);
    }
    L->extent = k->v ? displs_for(q, L->c, L->d) : (size_t)P * k->count;
    L->rextent = k->v ? displs_for(q + 1, L->rc, L->rd) : (size_t)P * k->count;
    for (int j = 0; !k->v && j < P; j++)
        L->d[j] = L->rd[j] = (size_t)j * k->count;
}

/* ---- values ------------------------------------------------------------------------------ */

static int32_t dval(int owner, size_t i) { return (int32_t)(owner * 100003 + (int)i * 7 + ncase); }

static int64_t sval(int q, size_t i) { return (int64_t)((q * 37 + (long)i * 11 + ncase) % 2001) - 1000; }

static void mval(int q, size_t i, uint32_t *m) {
    m[0] = (uint32_t)(q + 1 + i + (size_t)ncase) % MOD;
    m[1] = (uint32_t)(2 * q + 3) % MOD;
    m[2] = (uint32_t)(i % 5);
    m[3] = 1;
}

static void matmul(const uint32_t *a, uint32_t *b) { /* b = a * b mod 65521 */
    uint64_t r[4];
    r[0] = ((uint64_t)a[0] * b[0] + (uint64_t)a[1] * b[2]) % MOD;
    r[1] = ((uint64_t)a[0] * b[1] + (uint64_t)a[1] * b[3]) % MOD;
    r[2] = ((uint64_t)a[2] * b[0] + (uint64_t)a[3] * b[2]) % MOD;
    r[3] = ((uint64_t)a[2] * b[1] + (uint64_t)a[3] * b[3]) % MOD;
    for (int i = 0; i < 4; i++)
        b[i] = (uint32_t)r[i];
}

static void user_matmul(const void *in, void *inout, size_t count, collie_dtype_t dt, void *ctx) {
    (void)dt, (void)ctx;
    for (size_t i = 0; i < count; i++)
        matmul((const uint32_t *)in + 4 * i, (uint32_t *)inout + 4 * i);
}

/* Input element i of rank q of a reduction. */
static void red_input(bool mat, int q, size_t i, void *out) {
    if (mat)
        mval(q, i, out);
    else
        *(int64_t *)out = sval(q, i);
}

/* x(lo) ∘ … ∘ x(hi-1) of element i, folded from the right as the reference. */
static void red_combine(bool mat, int lo, int hi, size_t i, void *out) {
    uint32_t m[4];
    int64_t s = 0;
    for (int q = hi - 1; q >= lo; q--) {
        if (!mat) {
            s += sval(q, i);
            continue;
        }
        mval(q, i, m);
        if (q == hi - 1)
            memcpy(out, m, sizeof m);
        else
            matmul(m, out);
    }
    if (!mat)
        *(int64_t *)out = s;
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef struct bufs {
    char *send, *recv, *expect;
    size_t send_bytes, recv_bytes, cmp_from, cmp_bytes;
    bool send_alloc, recv_alloc;
} bufs;

static char *get(size_t bytes, bool registered) {
    char *p = registered ? collie_alloc(team, bytes + 64) : malloc(bytes + 64);
    if (p)
        memset(p, SENTINEL, bytes + 64);
    return p;
}

static void put(char *p, bool registered) {
    if (registered)
        collie_free(team, p);
    else
        free(p);
}

static void set_d(char *buf, size_t i, int32_t v) { memcpy(buf + 4 * i, &v, 4); }

/* The data collectives: inputs and the expected receive buffer. */
static void fill_data(const mp_call *k, bool ip, bufs *b) {
    layout me, L;
    layout_of(k, rank, ip, &me);
    if (k->coll == COLL_ALLGATHER || k->coll == COLL_GATHER) {
        char *own_at = ip ? b->recv + 4 * me.d[rank] : b->send;
        for (size_t e = 0; e < me.c[rank]; e++)
            set_d(own_at, e, dval(rank, e));
        bool receives = k->coll == COLL_ALLGATHER || rank == k->root;
        for (int j = 0; receives && j < P; j++)
            for (size_t e = 0; e < me.c[j]; e++)
                set_d(b->expect, me.d[j] + e, dval(j, e));
    } else if (k->coll == COLL_SCATTER) {
        layout_of(k, k->root, ip, &L);
        for (int j = 0; rank == k->root && j < P; j++)
            for (size_t e = 0; e < L.c[j]; e++)
                set_d(b->send, L.d[j] + e, dval(rank, L.d[j] + e));
        for (size_t e = 0; !(ip && rank == k->root) && e < L.c[rank]; e++)
            set_d(b->expect, e, dval(k->root, L.d[rank] + e));
    } else {                                   /* alltoall: send layout = recv one in place */
        const size_t *sc = ip ? me.rc : me.c, *sd = ip ? me.rd : me.d;
        char *src = ip ? b->recv : b->send;
        for (int j = 0; j < P; j++)
            for (size_t e = 0; e < sc[j]; e++)
                set_d(src, sd[j] + e, dval(rank, sd[j] + e));
        for (int j = 0; j < P; j++) {
            layout_of(k, j, ip, &L);
            const size_t *jd = ip ? L.rd : L.d;
            for (size_t e = 0; e < me.rc[j]; e++)
                set_d(b->expect, me.rd[j] + e, dval(j, jd[rank] + e));
        }
    }
}

/* The reductions: inputs and the expected result. */
static void fill_red(const mp_call *k, bool ip, bool mat, bufs *b) {
    size_t es = mat ? 16 : 8, n = k->count, base = 0, total = k->count;
    char *in = ip ? b->recv : b->send;
    if (k->coll == COLL_REDUCE_SCATTER) {
        layout L;
        layout_of(k, rank, ip, &L);
        total = 0;
        for (int j = 0; j < P; j++) {
            base += j < rank ? L.c[j] : 0;
            total += L.c[j];
        }
        n = L.c[rank];
    }
    for (size_t i = 0; i < total; i++)
        red_input(mat, rank, i, in + es * i);
    if (ip)
        memcpy(b->expect, b->recv, b->recv_bytes);
    int hi = k->coll == COLL_SCAN ? rank + 1 : k->coll == COLL_EXSCAN ? rank : P;
    for (size_t e = 0; hi > 0 && e < n; e++)
        red_combine(mat, 0, hi, base + e, b->expect + es * e);
}

static size_t sum_of(const size_t *c) {
    size_t s = 0;
    for (int j = 0; j < P; j++)
        s += c[j];
    return s;
}

/* Extents of the case on this rank (bytes) and the arrays of the call. */
static void size_case(mp_call *k, bool ip, size_t es, layout *L, bufs *b) {
    layout_of(k, rank, ip, L);
    size_t own = L->c[rank], send = 0, recv = 0;
    bool root = rank == k->root;
    switch (k->coll) {
    case COLL_ALLGATHER: send = ip ? 0 : own; recv = L->extent; break;
    case COLL_GATHER: send = ip && root ? 0 : own; recv = root ? L->extent : 0; break;
    case COLL_SCATTER:
        layout_of(k, k->root, ip, L);
        send = root ? L->extent : 0;
        recv = ip && root ? 0 : L->c[rank];
        own = L->c[rank];
        break;
    case COLL_ALLTOALL: send = ip ? 0 : L->extent; recv = L->rextent; break;
    case COLL_REDUCE_SCATTER: send = ip ? 0 : sum_of(L->c); recv = ip ? sum_of(L->c) : own; break;
    default: send = ip ? 0 : k->count; recv = k->count; break;
    }
    k->own = own;
    b->send_bytes = send * es;
    b->recv_bytes = recv * es;
    b->cmp_bytes = k->coll == COLL_REDUCE_SCATTER && ip ? own * es : b->recv_bytes;
    b->cmp_from = 0;
}

static void report(const mp_call *k, const char *algo, bool ip, int form, const bufs *b,
                   const char *what) {
    static const char *const forms[] = { "blocking", "split-phase", "persistent" };
    failures++;
    if (failures <= 10)
        fprintf(stderr, "FAIL: rank %d: case %d %s (algorithm %s, %scount %zu, root %d%s, %s, "
                "sendbuf %s, recvbuf %s): %s\n", rank, ncase, mp_colls_fn(k), algo ? algo : "?",
                k->op && k->op == matop ? "matrix op, " : "", k->count, k->root,
                ip ? ", in place" : "", forms[form], b->send_alloc ? "collie_alloc" : "malloc",
                b->recv_alloc ? "collie_alloc" : "malloc", what);
}

static void compare(const mp_call *k, const char *algo, bool ip, int form, const bufs *b) {
    for (size_t i = b->cmp_from; i < b->cmp_bytes; i++)
        if (b->recv[i] != b->expect[i]) {
            char what[96];
            snprintf(what, sizeof what, "byte %zu of recvbuf is 0x%02x, not 0x%02x", i,
                     (unsigned char)b->recv[i], (unsigned char)b->expect[i]);
            report(k, algo, ip, form, b, what);
            return;
        }
}

/* The buffers the call gets on this rank (NULL where unused, COLLIE_IN_PLACE). */
static void point(mp_call *k, bool ip, const bufs *b) {
    bool root = rank == k->root;
    k->send = ip ? COLLIE_IN_PLACE : b->send;
    k->recv = b->recv;
    if (k->coll == COLL_SCATTER) {
        k->send = root ? b->send : NULL;
        k->recv = ip ? COLLIE_IN_PLACE : b->recv;
    }
    if (k->coll == COLL_GATHER && !root)
        k->recv = NULL;
}

/* One call: ip is the case's in place (gather, scatter: at the root only). */
static void run_case(mp_call k, bool ip, bool mat, const char *algo) {
    bool red = collie_coll_has_op(k.coll);
    size_t es = red ? (mat ? 16 : 8) : 4;
    layout L;
    bufs b;
    memset(&b, 0, sizeof b);
    ncase++;
    if (k.coll == COLL_GATHER || k.coll == COLL_SCATTER)
        ip = ip && rank == k.root;
    size_case(&k, ip, es, &L, &b);
    /* mixed across ranks; every fourth case collie_alloc on every rank (the direct
     * algorithms then map every peer's buffer) */
    b.send_alloc = ncase % 4 == 0 || (ncase + rank) % 2 == 0;
    b.recv_alloc = ncase % 4 == 0 || (ncase + rank) % 3 == 0;
    b.send = get(b.send_bytes, b.send_alloc);
    b.recv = get(b.recv_bytes, b.recv_alloc);
    b.expect = malloc(b.recv_bytes + 64);
    if (!b.send || !b.recv || !b.expect) {
        report(&k, algo, ip, 0, &b, "out of memory");
        return;
    }
    memset(b.expect, SENTINEL, b.recv_bytes + 64);
    if (red)
        fill_red(&k, ip, mat, &b);
    else
        fill_data(&k, ip, &b);
    k.dt = red ? (mat ? collie_dtype_bytes(16) : COLLIE_INT64) : COLLIE_INT32;
    k.op = red ? (mat ? matop : COLLIE_SUM) : NULL;
    k.c = L.c, k.d = L.d, k.rc = L.rc, k.rd = L.rd;
    point(&k, ip, &b);
    int form = ncase % FORM_COUNT;
    const char *ran = NULL;
    int st = mp_colls_call(team, &k, form, &ran);
    if (st != COLLIE_OK)
        report(&k, algo, ip, form, &b, collie_last_error());
    else
        compare(&k, ran ? ran : algo, ip, form, &b);
    put(b.send, b.send_alloc);
    put(b.recv, b.recv_alloc);
    free(b.expect);
}

/* ---- the sweep ----------------------------------------------------------------------- */

/* Whether any rank failed so far (all ranks stop together, no rank waits for one that
 * left the sweep). */
static bool any_failed(void) {
    int32_t f = failures;
    if (collie_allreduce(team, COLLIE_IN_PLACE, &f, 1, COLLIE_INT32, COLLIE_MAX) != COLLIE_OK)
        return true;
    return f != 0;
}

static bool has_v(int coll) {
    return coll != COLL_SCAN && coll != COLL_EXSCAN;
}

/* Every variant of (coll, algorithm, count); true when a rank failed. */
static bool variants(int coll, const char *algo, size_t count) {
    bool red = collie_coll_has_op(coll), rooted = collie_coll_rooted(coll);
    int roots[3] = { 0, P - 1, P / 2 };
    for (int v = 0; v < (has_v(coll) ? 2 : 1); v++)
        for (int ip = 0; ip < 2; ip++)
            for (int mat = 0; mat < (red ? 2 : 1); mat++)
                for (int ri = 0; ri < (rooted ? 3 : 1); ri++) {
                    if (ri > 0 && roots[ri] == roots[ri - 1])
                        continue;
                    mp_call k;
                    memset(&k, 0, sizeof k);
                    k.coll = coll;
                    k.v = v;
                    k.count = count;
                    k.root = roots[ri];
                    run_case(k, ip, mat, algo);
                    if (any_failed())
                        return true;
                }
    return false;
}

/* only: sweep just the algorithms of this name (NULL: all). */
static int sweep(bool more, const char *only) {
    size_t counts[] = { 0, 1, (size_t)P - 1, (size_t)P, (size_t)P + 1, 1000, 40000, 300000 };
    int ncounts = more ? 8 : 7;
    bool stop = false;
    for (int coll = COLL_ALLGATHER; coll < COLL_COUNT && !stop; coll++)
        for (size_t a = 0; a < collie_algorithm_count(coll) && !stop; a++) {
            const char *algo = collie_algorithm_at(coll, a)->name;
            if (only && strcmp(algo, only) != 0)
                continue;
            if (collie_force_algorithm(coll, algo) != COLLIE_OK) {
                failures++;
                fprintf(stderr, "FAIL: rank %d: cannot force %s %s: %s\n", rank,
                        collie_coll_name(coll), algo, collie_last_error());
            }
            for (int c = 0; c < ncounts && !stop; c++)
                if (c == 0 || counts[c] != counts[c - 1])
                    stop = variants(coll, algo, counts[c]);
            collie_force_algorithm(coll, "auto");
        }
    return failures;
}

/* The v forms whose blocks are of very different sizes (cnt_skewed), every algorithm. */
static void skewed_sweep(void) {
    static const int colls[] = { COLL_ALLGATHER, COLL_GATHER, COLL_SCATTER, COLL_REDUCE_SCATTER };
    int roots[3] = { 0, P - 1, P / 2 };
    skewed = true;
    for (size_t i = 0; i < sizeof colls / sizeof colls[0] && !any_failed(); i++)
        for (size_t a = 0; a < collie_algorithm_count(colls[i]) && !any_failed(); a++) {
            const char *algo = collie_algorithm_at(colls[i], a)->name;
            if (collie_force_algorithm(colls[i], algo) != COLLIE_OK)
                continue;   /* an algorithm that takes no v form, say */
            for (int ri = 0; ri < (collie_coll_rooted(colls[i]) ? 3 : 1); ri++)
                for (int ip = 0; ip < 2; ip++) {
                    mp_call k;
                    memset(&k, 0, sizeof k);
                    k.coll = colls[i];
                    k.v = 1;
                    k.root = roots[ri];
                    run_case(k, ip, false, algo);
                }
            collie_force_algorithm(colls[i], "auto");
        }
    skewed = false;
}

/* The sweep again on sub-teams: the odd and the even ranks, in reverse rank order (key),
 * both at once.  The world's rank and size are restored after. */
static void sub_teams(bool more) {
    collie_team_t *world = team, *sub = NULL;
    int wrank = rank, wsize = P;
    if (collie_team_split(world, rank % 2, P - rank, &sub) != COLLIE_OK) {
        failures++;
        fprintf(stderr, "FAIL: rank %d: collie_team_split: %s\n", rank, collie_last_error());
        return;
    }
    team = sub;
    rank = collie_rank(sub);
    P = collie_size(sub);
    if (rank != (wsize - 1 - wrank) / 2 || P != (wsize + 1 - wrank % 2) / 2) {
        failures++;
        fprintf(stderr, "FAIL: rank %d: sub-team rank %d of %d\n", wrank, rank, P);
    }
    if (!failures)
        sweep(more, NULL);
    any_failed();   /* the sub-team agrees before it is freed */
    if (collie_team_free(&sub) != COLLIE_OK) {
        failures++;
        fprintf(stderr, "FAIL: rank %d: collie_team_free: %s\n", wrank, collie_last_error());
    }
    team = world;
    rank = wrank;
    P = wsize;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    team = collie_world();
    rank = collie_rank(team);
    P = collie_size(team);
    const char *env = getenv("COLLIE_LONG_TESTS");
    bool more = env && strcmp(env, "1") == 0;
    if (P > 64 || collie_op_create(user_matmul, NULL, 0, &matop) != COLLIE_OK) {
        fprintf(stderr, "mp_colls: needs P <= 64 and a user op (%s)\n", collie_last_error());
        return 1;
    }
    bool all = strcmp(mode, "all") == 0;
    if (all || strcmp(mode, "sweep") == 0)
        sweep(more, NULL);
    if (strcmp(mode, "direct") == 0 || strcmp(mode, "cells") == 0)   /* those algorithms only */
        sweep(more, mode);
    if (strcmp(mode, "skewed") == 0)
        skewed_sweep();
    if (!any_failed() && P > 1 && (all || strcmp(mode, "teams") == 0))
        sub_teams(more);
    if (!any_failed() && (all || strcmp(mode, "porder") == 0))
        failures += mp_colls_porder(team, rank, P);
    if (!any_failed() && (all || strcmp(mode, "misuse") == 0))
        failures += mp_colls_misuse(team, rank, P);
    int total = failures;
    if (collie_allreduce(team, COLLIE_IN_PLACE, &total, 1, COLLIE_INT32, COLLIE_SUM) != COLLIE_OK)
        total = failures ? failures : 1;
    if (rank == 0)
        printf("mp_colls, %d ranks: %s (%d failures, %d cases)\n", P, total ? "FAILED" : "passed",
               total, ncase);
    collie_op_free(matop);
    collie_finalize();
    return total != 0;
}
