/* verify_colls.c — what the verifier knows of each collective (see verify.h): every
 * rank's view of the call (v arrays, in place), its inputs, its access rules, the check
 * of the v arrays against each other, and the expected results and causality of
 * allgather, reduce_scatter, alltoall, gather, scatter, scan and exscan.  The buffer
 * layout comes from coll_layout.c (collie_coll_buffer_bytes, collie_coll_block). */
#include "sim/verify_impl.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- every rank's view of the call ---------------------------------------------------- */

void sym_rank_args(const collie_coll_args *a, int r, collie_coll_args *out) {
    *out = *a;
    out->rank = r;
    out->v = a->v ? &a->v[r] : NULL;
    if (a->coll == COLL_GATHER || a->coll == COLL_SCATTER)
        out->in_place = a->in_place && r == a->root;
    if (out->v) {
        out->count = out->v->own;
        out->bytes = (uint64_t)out->count * (a->elem_size ? a->elem_size : 1);
    }
}

/* ---- the v arrays agree ---------------------------------------------------------------- */

static bool same_counts(sym_sim *m, const size_t *x, const size_t *y) {
    for (int j = 0; j < m->P; j++)
        if (x[j] != y[j])
            return false;
    return true;
}

static bool bad(sym_sim *m, int r, const char *what) {
    return sym_fail(m, r, -1, -1, "bad call arguments: %s", what);
}

/* Root's counts against every rank's own count (gatherv, scatterv). */
static bool check_rooted_v(sym_sim *m) {
    const collie_coll_v *rv = &m->a->v[m->a->root];
    if (!rv->counts || !rv->displs)
        return bad(m, m->a->root, "the root's counts or displacements are NULL");
    for (int j = 0; j < m->P; j++)
        if (rv->counts[j] != m->a->v[j].own)
            return bad(m, j, "its count differs from the root's counts[rank]");
    return true;
}

static bool check_alltoall_v(sym_sim *m) {
    bool ip = m->a->in_place;
    for (int r = 0; r < m->P; r++) {
        const collie_coll_v *v = &m->a->v[r];
        if (!v->rcounts || !v->rdispls || (!ip && (!v->counts || !v->displs)))
            return bad(m, r, "alltoallv arrays are NULL");
    }
    for (int r = 0; r < m->P; r++)
        for (int j = 0; j < m->P; j++) {
            const size_t *sc = ip ? m->a->v[r].rcounts : m->a->v[r].counts;
            if (sc[j] != m->a->v[j].rcounts[r])
                return bad(m, r, "its sendcounts[j] differ from rank j's recvcounts[rank]");
        }
    return true;
}

/* The same counts on every rank, each rank's own count its entry (allgatherv,
 * reduce_scatter). */
static bool check_shared_v(sym_sim *m, bool displs) {
    for (int r = 0; r < m->P; r++) {
        const collie_coll_v *v = &m->a->v[r];
        if (!v->counts || (displs && !v->displs))
            return bad(m, r, "counts or displacements are NULL");
        if (!same_counts(m, v->counts, m->a->v[0].counts))
            return bad(m, r, "its counts differ from rank 0's");
        if (v->own != v->counts[r])
            return bad(m, r, "its own count differs from counts[rank]");
    }
    return true;
}

bool sym_check_call(sym_sim *m) {
    const collie_coll_args *a = m->a;
    if (!a->v)
        return true;
    switch (a->coll) {
    case COLL_ALLGATHER: return check_shared_v(m, true);
    case COLL_REDUCE_SCATTER: return check_shared_v(m, false);
    case COLL_GATHER: case COLL_SCATTER: return check_rooted_v(m);
    case COLL_ALLTOALL: return check_alltoall_v(m);
    default: return bad(m, -1, "this collective has no v form");
    }
}

/* ---- inputs and access rules ---------------------------------------------------------- */

static void fill(sym_sim *m, uint32_t *mem, int owner, uint64_t off, uint64_t len) {
    for (uint64_t e = off / m->es; e < (off + len) / m->es; e++)
        mem[e] = sym_leaf_id(&m->st, owner, (uint32_t)e);
}

/* Every block j of buffer buf of rank r holds r's leaves at their own offsets. */
static void fill_blocks(sym_sim *m, int r, int buf, int owner) {
    sym_rank *rs = &m->ranks[r];
    for (int j = 0; j < m->P; j++) {
        uint64_t off, len;
        if (collie_coll_block(&rs->args, buf, j, &off, &len))
            fill(m, rs->mem[buf], owner, off, len);
    }
}

/* The own block of allgather and gather: leaves (r, 0 … n-1) wherever it lies. */
static void fill_own(sym_sim *m, int r) {
    sym_rank *rs = &m->ranks[r];
    uint64_t len;
    sched_ref at = collie_coll_own_block(&rs->args, &len);
    uint32_t *mem = rs->mem[at.buf] + at.off / m->es;
    for (uint64_t e = 0; e < len / m->es; e++)
        mem[e] = sym_leaf_id(&m->st, r, (uint32_t)e);
}

void sym_setup_inputs(sym_sim *m, int r) {
    sym_rank *rs = &m->ranks[r];
    const collie_coll_args *a = &rs->args;
    switch (a->coll) {
    case COLL_BCAST:
        if (r == a->root)
            fill(m, rs->mem[SBUF_RECV], r, 0, a->bytes);
        break;
    case COLL_ALLGATHER: case COLL_GATHER:
        fill_own(m, r);
        break;
    case COLL_SCATTER:
        if (r == a->root)
            fill_blocks(m, r, SBUF_SEND, r);
        break;
    case COLL_ALLTOALL:
        fill_blocks(m, r, SBUF_SEND, r);
        break;
    default:                                   /* the reductions: the whole SEND */
        fill(m, rs->mem[SBUF_SEND], r, 0, rs->lim[SBUF_SEND]);
        break;
    }
}

static void deny(sym_rank *rs, int buf, bool read, const char *why) {
    rs->deny_write[buf] = why;
    if (read)
        rs->deny_read[buf] = why;
}

void sym_setup_access(sym_sim *m, int r) {
    sym_rank *rs = &m->ranks[r];
    const collie_coll_args *a = &rs->args;
    bool root = r == a->root;
    rs->deny_write[SBUF_SEND] = "SBUF_SEND is the caller's read-only input";
    if (a->coll == COLL_BCAST)
        rs->deny_read[SBUF_SEND] = "bcast uses SBUF_RECV only";
    if (a->coll == COLL_REDUCE && !root)
        deny(rs, SBUF_RECV, !a->in_place, "SBUF_RECV may be NULL on non-root ranks of reduce");
    if ((a->coll == COLL_ALLGATHER || a->coll == COLL_GATHER) && a->in_place)
        rs->deny_read[SBUF_SEND] = "in place, SBUF_SEND is not used (the rank's block is "
                                   "already in SBUF_RECV)";
    if (a->coll == COLL_GATHER && !root)
        deny(rs, SBUF_RECV, true, "SBUF_RECV may be NULL on non-root ranks of gather");
    if (a->coll == COLL_SCATTER && !root)
        rs->deny_read[SBUF_SEND] = "SBUF_SEND may be NULL on non-root ranks of scatter";
    if (a->coll == COLL_SCATTER && root && a->in_place)
        deny(rs, SBUF_RECV, true, "in place, the root of scatter keeps its block in SBUF_SEND "
                                  "(SBUF_RECV is not used)");
    if (a->coll == COLL_EXSCAN && r == 0)
        rs->deny_write[SBUF_RECV] = "exscan leaves rank 0's SBUF_RECV untouched";
}

/* ---- results --------------------------------------------------------------------------- */

bool sym_heard_from(sym_sim *m, int r, int q) {
    if (m->ranks[r].heard[q / 64] & (1ull << (q % 64)))
        return true;
    return sym_fail(m, r, -1, -1, "completes without having heard from rank %d (causality)",
                    q);
}

/* Rank r's RECV block from rank j should hold leaves (owner, base + e): the expected
 * origin of that block. */
static void origin(sym_sim *m, int r, int j, int *owner, uint64_t *base) {
    const collie_coll_args *a = m->a;
    uint64_t off = 0, len;
    *owner = j;
    if (a->coll == COLL_ALLTOALL)
        collie_coll_block(&m->ranks[j].args, SBUF_SEND, r, &off, &len);
    if (a->coll == COLL_SCATTER) {
        *owner = a->root;
        collie_coll_block(&m->ranks[a->root].args, SBUF_SEND, r, &off, &len);
    }
    *base = off / m->es;
}

/* Checks rank r's RECV block from j; marks its elements in covered. */
static bool check_block(sym_sim *m, int r, int j, uint8_t *covered) {
    sym_rank *rs = &m->ranks[r];
    uint64_t off, len, base;
    int owner;
    if (!collie_coll_block(&rs->args, SBUF_RECV, j, &off, &len) || len == 0)
        return true;
    origin(m, r, j, &owner, &base);
    for (uint64_t e = 0; e < len / m->es; e++) {
        uint64_t at = off / m->es + e;
        uint32_t want = sym_leaf_id(&m->st, owner, (uint32_t)(base + e));
        covered[at] = 1;
        if (rs->mem[SBUF_RECV][at] == SYM_UNDEF)
            return sym_fail(m, r, -1, (long)at, "result is missing (never written)");
        if (rs->mem[SBUF_RECV][at] != want)
            return sym_fail(m, r, -1, (long)at, "does not hold element %llu of rank %d's input",
                            (unsigned long long)(base + e), owner);
    }
    return sym_heard_from(m, r, owner);
}

/* allgather, alltoall, gather at the root, scatter: every block, nothing outside. */
static bool check_blocks(sym_sim *m, int r) {
    sym_rank *rs = &m->ranks[r];
    size_t n = (size_t)(rs->lim[SBUF_RECV] / m->es);
    uint8_t *covered = sym_xcalloc(n, 1);
    bool ok = true;
    int blocks = m->a->coll == COLL_SCATTER ? 1 : m->P;
    for (int j = 0; j < blocks && ok; j++)
        ok = check_block(m, r, m->a->coll == COLL_SCATTER ? r : j, covered);
    for (size_t e = 0; e < n && ok; e++)
        if (!covered[e] && rs->mem[SBUF_RECV][e] != SYM_UNDEF)
            ok = sym_fail(m, r, -1, (long)e, "writes SBUF_RECV outside the result blocks");
    free(covered);
    return ok;
}

/* Rank r's RECV[0, n) combines, element e, the leaves (q, base + e) of ranks q < nranks. */
static bool check_combined(sym_sim *m, int r, uint64_t base, uint64_t n, int nranks) {
    const collie_coll_args *a = m->a;
    char desc[640];
    for (uint64_t e = 0; e < n; e++) {
        uint32_t id = m->ranks[r].mem[SBUF_RECV][e];
        const char *problem = sym_expr_problem(&m->st, id, base + e, nranks, a->commutative,
                                               a->idempotent, desc, sizeof desc);
        if (problem)
            return sym_fail(m, r, -1, (long)e, "result %s:%s", problem, desc);
    }
    for (int q = 0; q < nranks && n > 0; q++)
        if (!sym_heard_from(m, r, q))
            return false;
    return true;
}

static bool check_rank(sym_sim *m, int r) {
    const collie_coll_args *a = &m->ranks[r].args;
    uint64_t off, len;
    switch (a->coll) {
    case COLL_ALLGATHER: case COLL_ALLTOALL:
        return check_blocks(m, r);
    case COLL_GATHER:
        return r != a->root || check_blocks(m, r);
    case COLL_SCATTER:
        return (r == a->root && a->in_place) || check_blocks(m, r);
    case COLL_REDUCE_SCATTER:
        collie_coll_block(a, SBUF_SEND, r, &off, &len);
        return check_combined(m, r, off / m->es, len / m->es, m->P);
    case COLL_SCAN:
        return check_combined(m, r, 0, a->count, r + 1);
    case COLL_EXSCAN:
        return r == 0 || check_combined(m, r, 0, a->count, r);
    default:
        return sym_fail(m, -1, -1, -1, "unknown collective %d", a->coll);
    }
}

bool sym_check_results_more(sym_sim *m) {
    for (int r = 0; r < m->P; r++)
        if (!check_rank(m, r))
            return false;
    return true;
}
