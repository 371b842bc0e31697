/* verify_expr.c — hash-consed symbolic expressions for the verifier. */
#include "sim/verify_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *sym_xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "symbolic verifier: out of memory\n");
        abort();
    }
    return p;
}

void *sym_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "symbolic verifier: out of memory\n");
        abort();
    }
    return p;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t key_hash(const uint32_t *kids, uint32_t n, int32_t rank, uint32_t elem) {
    uint64_t h = mix(n, n ? 0 : ((uint64_t)(uint32_t)rank << 32 | elem));
    for (uint32_t i = 0; i < n; i++)
        h = mix(h, kids[i]);
    h ^= h >> 33;                       /* finalise: the table uses the low bits */
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static bool node_is(const sym_store *st, const sym_node *x, uint64_t h, const uint32_t *kids,
                    uint32_t n, int32_t rank, uint32_t elem) {
    if (x->hash != h || x->n != n)
        return false;
    if (n == 0)
        return x->rank == rank && x->elem == elem;
    return memcmp(st->kids + x->first, kids, n * sizeof *kids) == 0;
}

/* A table slot: the high half of the hash (compared before the node is read: a probe
 * past other nodes then touches only the table) above the node's id. */
static uint64_t slot_of(uint64_t h, uint32_t id) {
    return (h & 0xffffffff00000000ull) | id;
}

static void rehash(sym_store *st) {
    size_t cap = st->tabcap ? st->tabcap * 2 : 1024;
    free(st->tab);
    st->tab = sym_xcalloc(cap, sizeof *st->tab);
    st->tabcap = cap;
    for (uint32_t id = 1; id < st->nnodes; id++) {
        uint64_t h = st->nodes[id].hash;
        size_t i = h & (cap - 1);
        while (st->tab[i])
            i = (i + 1) & (cap - 1);
        st->tab[i] = slot_of(h, id);
    }
}

/* x's lo, hi, exact (and a node's elem) from its children, which are interned before it. */
static void summarise(const sym_store *st, sym_node *x) {
    if (x->n == 0) {
        x->lo = x->hi = x->rank;
        x->exact = x->rank >= 0;
        return;
    }
    const sym_node *k0 = &st->nodes[st->kids[x->first]];
    long long covered = 0;
    x->lo = k0->lo, x->hi = k0->hi, x->elem = k0->elem, x->exact = true;
    for (uint32_t k = 0; k < x->n; k++) {
        const sym_node *c = &st->nodes[st->kids[x->first + k]];
        x->lo = c->lo < x->lo ? c->lo : x->lo;
        x->hi = c->hi > x->hi ? c->hi : x->hi;
        x->exact = x->exact && c->exact;
        covered += (long long)c->hi - c->lo + 1;
    }
    x->exact = x->exact && covered == (long long)x->hi - x->lo + 1;   /* disjoint, no gap */
}

static uint32_t append(sym_store *st, uint64_t h, const uint32_t *kids, uint32_t n,
                       int32_t rank, uint32_t elem) {
    if (st->nnodes == st->capnodes) {
        st->capnodes = st->capnodes ? st->capnodes * 2 : 1024;
        st->nodes = sym_xrealloc(st->nodes, st->capnodes * sizeof *st->nodes);
    }
    if (st->nkids + n > st->capkids) {
        st->capkids = (st->capkids + n) * 2;
        st->kids = sym_xrealloc(st->kids, st->capkids * sizeof *st->kids);
    }
    sym_node *x = &st->nodes[st->nnodes];
    x->hash = h;
    x->first = (uint32_t)st->nkids;
    x->n = n;
    x->rank = rank;
    x->elem = elem;
    if (n)
        memcpy(st->kids + st->nkids, kids, n * sizeof *kids);
    st->nkids += n;
    summarise(st, x);
    return st->nnodes++;
}

static uint32_t intern(sym_store *st, const uint32_t *kids, uint32_t n, int32_t rank,
                       uint32_t elem) {
    if (st->nnodes == 0)
        append(st, 0, NULL, 0, -1, 0);                  /* id 0: SYM_UNDEF */
    if (2 * ((size_t)st->nnodes + 1) > st->tabcap)
        rehash(st);
    uint64_t h = key_hash(kids, n, rank, elem);
    size_t mask = st->tabcap - 1, i = h & mask;
    uint64_t tag = slot_of(h, 0);
    for (; st->tab[i]; i = (i + 1) & mask) {
        uint32_t id = (uint32_t)st->tab[i];
        if (slot_of(st->tab[i], 0) == tag && node_is(st, &st->nodes[id], h, kids, n, rank, elem))
            return id;
    }
    uint32_t id = append(st, h, kids, n, rank, elem);
    st->tab[i] = slot_of(h, id);
    return id;
}

uint32_t sym_node_id(sym_store *st, const uint32_t *kids, uint32_t n) {
    return intern(st, kids, n, -1, 0);
}

uint32_t sym_leaf_id(sym_store *st, int rank, uint32_t elem) {
    return intern(st, NULL, 0, rank, elem);
}

void sym_store_free(sym_store *st) {
    free(st->nodes);
    free(st->kids);
    free(st->tab);
    memset(st, 0, sizeof *st);
}

/* Collects the in-order leaves of id into out[n…] (at most cap in all); returns the new
 * total, stopping early once beyond cap. */
static size_t leaves(const sym_store *st, uint32_t id, uint32_t *out, size_t cap, size_t n) {
    const sym_node *x = &st->nodes[id];
    if (x->n == 0) {
        if (n < cap)
            out[n] = id;
        return n + 1;
    }
    for (uint32_t k = 0; k < x->n && n <= cap; k++)
        n = leaves(st, st->kids[x->first + k], out, cap, n);
    return n;
}

/* The in-order leaves around position at (all when there are few). */
static void describe(const sym_store *st, const uint32_t *lv, size_t n, size_t cap, size_t at,
                     char *out, size_t outsz) {
    size_t len = 0, from = at > 8 ? at - 8 : 0, shown = n < cap ? n : cap;
    out[0] = '\0';
    if (from > 0)
        len += (size_t)snprintf(out, outsz, " ... (leaf %zu:)", from);
    for (size_t i = from; i < shown && i < from + 20 && len + 24 < outsz; i++)
        len += (size_t)snprintf(out + len, outsz - len, " x%d[%u]", st->nodes[lv[i]].rank,
                                st->nodes[lv[i]].elem);
    if (shown > from + 20 && len + 24 < outsz)
        snprintf(out + len, outsz - len, " ... (%zu leaves)", n);
}

/* What is wrong with the leaves lv[0…n), and where (*at). */
static const char *leaf_problem(const sym_store *st, const uint32_t *lv, size_t n, size_t e,
                                int P, bool commutative, bool idempotent, uint8_t *seen,
                                size_t *at, int *missing) {
    int prev = -1;
    for (size_t i = 0; i < n; i++) {
        *at = i;
        const sym_node *x = &st->nodes[lv[i]];
        if (x->elem != e || x->rank < 0)
            return "contains a leaf of another element";
        if (x->rank >= P)
            return "contains the input of a rank beyond the result's ranks (0 … P-1, or the "
                   "prefix of a scan)";
        if (seen[x->rank] && !idempotent)
            return "contains a rank's input more than once";
        if (!commutative && x->rank < prev)
            return "has its operands out of rank order";
        seen[x->rank] = 1;
        prev = x->rank;
    }
    *at = 0;
    for (int q = 0; q < P; q++) {
        *missing = q;
        if (!seen[q])
            return "misses a rank's input";
    }
    return NULL;
}

const char *sym_expr_problem(const sym_store *st, uint32_t id, size_t e, int P,
                             bool commutative, bool idempotent, char *desc, size_t descsz) {
    if (id == SYM_UNDEF) {
        snprintf(desc, descsz, " undefined");
        return "is missing";
    }
    size_t cap = (size_t)P * 4 + 8;
    uint32_t lv_small[4 * 64 + 8];      /* on the stack up to P = 64 (the sweep's sizes) */
    uint8_t seen_small[64];
    bool small = P <= 64;
    uint32_t *lv = small ? lv_small : sym_xcalloc(cap, sizeof *lv);
    uint8_t *seen = small ? memset(seen_small, 0, (size_t)P) : sym_xcalloc((size_t)P, 1);
    size_t n = leaves(st, id, lv, cap, 0), at = 0;
    int missing = -1;
    const char *problem = n > cap ? "has too many leaves"
                                  : leaf_problem(st, lv, n, e, P, commutative, idempotent, seen,
                                                 &at, &missing);
    desc[0] = '\0';
    if (problem) {                      /* described only when wrong: the sweep's hot path */
        int len = missing >= 0 ? snprintf(desc, descsz, " (rank %d)", missing) : 0;
        describe(st, lv, n, cap, at, desc + len, descsz - (size_t)len);
    }
    if (!small) {
        free(lv);
        free(seen);
    }
    return problem;
}
