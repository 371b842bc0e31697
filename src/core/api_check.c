/*
 * api_check.c — the argument checks of every public collective (api.h): the team, the
 * datatype and op, the root, counts that overflow, the v forms' arrays (receive blocks
 * that overlap), COLLIE_IN_PLACE
 * where MPI allows it, NULL buffers, and buffers mapped for the extents the call uses
 * (coll_layout.c).  Each message names the function and the argument (the rank is
 * prefixed by collie_fail).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/base.h"
#include "core/api.h"
#include "core/internal.h"
#include "types/types.h"

typedef collie_call call;

/* The largest byte extent a call may name. */
#define MAX_BYTES (SIZE_MAX >> 2)

bool collie_call_in_place(const collie_call *c) {
    if (c->coll == COLL_BCAST)
        return true;
    if (c->coll == COLL_SCATTER)
        return c->recvbuf == COLLIE_IN_PLACE;
    return c->sendbuf == COLLIE_IN_PLACE;
}

size_t collie_call_own(const collie_call *c, int rank) {
    const collie_coll_v *v = c->v;
    if (c->coll == COLL_ALLTOALL)
        return 0;
    if (c->coll == COLL_REDUCE_SCATTER || (collie_call_in_place(c) && v->counts))
        return v->counts[rank];
    return v->own;
}

/* Calls from this size on check that their buffers are mapped for the whole count (one
 * msync(MS_ASYNC), which walks the mappings and writes nothing), so a count larger than
 * the buffer is this rank's COLLIE_ERR_ARG, not a peer's failed read. */
#define MAPPED_CHECK_BYTES (64u * 1024u)

/* Is this buffer's extent checked at all? */
static bool is_checked(const void *buf, uint64_t bytes) {
    return bytes >= MAPPED_CHECK_BYTES && buf && buf != COLLIE_IN_PLACE;
}

/* Ranges this thread found mapped at earlier calls: a call inside one takes no msync (the
 * system call took ~0.24 us here, two of them 0.35-0.45 us of a 3.4 us alltoall of 32 KiB
 * blocks at P = 2, the whole gap to Intel MPI, 2026-12-03).  Programs pass the same
 * buffers call after call; collie_free forgets every range (mapped_generation).  Not
 * seen: memory the program unmapped since (a freed buffer of its own) and used again at the
 * same address with a larger count than its new mapping. */
enum { KNOWN_RANGES = 4 };
static _Thread_local struct known_range {
    uintptr_t lo, hi;
    unsigned generation;
} known[KNOWN_RANGES];
static _Thread_local unsigned known_next;
static _Atomic unsigned mapped_generation = 1;

void collie_api_forget_mapped(void) {
    atomic_fetch_add_explicit(&mapped_generation, 1, memory_order_relaxed);
}

/* Are the pages of [lo, hi) mapped (lo page-aligned)? */
static bool is_mapped(uintptr_t lo, uintptr_t hi) {
    unsigned gen = atomic_load_explicit(&mapped_generation, memory_order_relaxed);
    for (unsigned i = 0; i < KNOWN_RANGES; i++)
        if (known[i].generation == gen && lo >= known[i].lo && hi <= known[i].hi)
            return true;
    if (msync((void *)lo, hi - lo, MS_ASYNC) != 0)
        return false;
    known[known_next++ % KNOWN_RANGES] = (struct known_range){ lo, hi, gen };
    return true;
}

static int check_mapped(const call *c, const char *which, const void *buf, uint64_t bytes) {
    if (!is_checked(buf, bytes))
        return COLLIE_OK;
    uintptr_t start = (uintptr_t)buf, end = start + bytes, lo = start & ~(uintptr_t)4095;
    if (end < start)
        return collie_fail(COLLIE_ERR_ARG, "%s: %s %p + %llu bytes wraps around the address "
                           "space", c->fn, which, buf, (unsigned long long)bytes);
    if (is_mapped(lo, end))
        return COLLIE_OK;
    return collie_fail(COLLIE_ERR_ARG, "%s: %s %p is not mapped for %llu bytes (%s of %s; a "
                       "count larger than the buffer?)", c->fn, which, buf,
                       (unsigned long long)bytes, c->v ? "the counts and displacements" : "the count",
                       collie_dtype_name(c->dtype));
}

/* Both buffers of a call, in one msync where they lie close together (a syscall costs
 * ~160 ns here; at P = 2 the two checks took 0.4 us of an allreduce of 64 KiB, 2.85 us
 * against 2.45 without them, 2026-11-29): where the span from the first to the end of
 * the second is mapped, both are; where it is not (a gap between them, or either not
 * mapped), each is checked by itself, so the error names the buffer. */
#define JOINT_GAP_MAX (1u << 20)

static int check_mapped2(const call *c, const char *w1, const void *b1, uint64_t n1,
                         const char *w2, const void *b2, uint64_t n2) {
    uintptr_t s1 = (uintptr_t)b1, s2 = (uintptr_t)b2, e1 = s1 + n1, e2 = s2 + n2;
    if (is_checked(b1, n1) && is_checked(b2, n2) && e1 > s1 && e2 > s2) {
        uintptr_t lo = (s1 < s2 ? s1 : s2) & ~(uintptr_t)4095, hi = e1 > e2 ? e1 : e2;
        if (hi - lo <= n1 + n2 + JOINT_GAP_MAX && is_mapped(lo, hi))
            return COLLIE_OK;
    }
    int st = check_mapped(c, w1, b1, n1);
    return st ? st : check_mapped(c, w2, b2, n2);
}

/* ---- the original four ------------------------------------------------------------------ */

static int check_extent(const call *c, int rank) {
    uint64_t bytes = (uint64_t)c->count * collie_dtype_size(c->dtype);
    bool at_root = c->coll == COLL_ALLREDUCE || rank == c->root;
    if (c->coll == COLL_BCAST)
        return check_mapped(c, "buf", c->recvbuf, bytes);
    if (at_root)
        return check_mapped2(c, "sendbuf", c->sendbuf, bytes, "recvbuf", c->recvbuf, bytes);
    return check_mapped(c, "sendbuf", c->sendbuf, bytes);
}

static int check_buffers4(const call *c, int rank) {
    if (c->count == 0)
        return COLLIE_OK;
    if (c->coll == COLL_BCAST && c->recvbuf == COLLIE_IN_PLACE)
        return collie_fail(COLLIE_ERR_ARG, "%s: buf cannot be COLLIE_IN_PLACE (a broadcast "
                           "is always in place)", c->fn);
    if (c->coll == COLL_BCAST)
        return c->recvbuf ? check_extent(c, rank) : collie_fail(COLLIE_ERR_ARG, "%s: buf is NULL", c->fn);
    bool at_root = c->coll == COLL_ALLREDUCE || rank == c->root;
    if (!c->sendbuf)
        return collie_fail(COLLIE_ERR_ARG, "%s: sendbuf is NULL (use COLLIE_IN_PLACE to reduce "
                           "in recvbuf)", c->fn);
    if (c->sendbuf == COLLIE_IN_PLACE && !at_root)
        return collie_fail(COLLIE_ERR_ARG, "%s: COLLIE_IN_PLACE is only valid at the root (%d)",
                           c->fn, c->root);
    if (at_root && !c->recvbuf)
        return collie_fail(COLLIE_ERR_ARG, "%s: recvbuf is NULL", c->fn);
    if (c->recvbuf == COLLIE_IN_PLACE)
        return collie_fail(COLLIE_ERR_ARG, "%s: recvbuf cannot be COLLIE_IN_PLACE", c->fn);
    return check_extent(c, rank);
}

/* ---- allgather … exscan ----------------------------------------------------------------- */

/* The names of the v arrays in each function's signature: counts, displs, rcounts,
 * rdispls (collie_coll_v), and of the own count. */
typedef struct vnames {
    const char *counts, *displs, *rcounts, *rdispls, *own;
} vnames;

static vnames names_of(int coll) {
    vnames n = { "recvcounts", "displs", NULL, NULL, "sendcount" };
    if (coll == COLL_SCATTER)
        n = (vnames){ "sendcounts", "displs", NULL, NULL, "recvcount" };
    if (coll == COLL_REDUCE_SCATTER)
        n = (vnames){ "recvcounts", NULL, NULL, NULL, "recvcounts[rank]" };
    if (coll == COLL_ALLTOALL)
        n = (vnames){ "sendcounts", "sdispls", "recvcounts", "rdispls", NULL };
    return n;
}

/* counts[j] and displs[j] + counts[j] stay below MAX_BYTES; the sum too (reduce_scatter). */
static int check_array(const call *c, int P, const char *cn, const size_t *counts,
                       const char *dn, const size_t *displs) {
    size_t elem = collie_dtype_size(c->dtype), limit = MAX_BYTES / elem, total = 0;
    if (!counts)
        return collie_fail(COLLIE_ERR_ARG, "%s: %s is NULL", c->fn, cn);
    if (dn && !displs)
        return collie_fail(COLLIE_ERR_ARG, "%s: %s is NULL", c->fn, dn);
    for (int j = 0; j < P; j++) {
        size_t d = displs ? displs[j] : 0;
        if (counts[j] > limit || d > limit - counts[j])
            return displs ? collie_fail(COLLIE_ERR_ARG, "%s: %s[%d] = %zu at %s[%d] = %zu overflows "
                                        "(%s, %zu bytes each)", c->fn, cn, j, counts[j], dn, j,
                                        d, collie_dtype_name(c->dtype), elem)
                          : collie_fail(COLLIE_ERR_ARG, "%s: %s[%d] = %zu overflows (%s, %zu "
                                        "bytes each)", c->fn, cn, j, counts[j],
                                        collie_dtype_name(c->dtype), elem);
        if (!displs && (total += counts[j]) > limit)
            return collie_fail(COLLIE_ERR_ARG, "%s: the sum of %s overflows (%s, %zu bytes "
                               "each)", c->fn, cn, collie_dtype_name(c->dtype), elem);
    }
    return COLLIE_OK;
}

typedef struct span {
    size_t from, to;     /* elements [from, to) */
    int j;
} span;

static int by_start(const void *x, const void *y) {
    const span *a = x, *b = y;
    return a->from < b->from ? -1 : a->from > b->from;
}

/* The receive blocks (non-empty) must not overlap: two blocks written at once would leave
 * either's data.  COLLIE_ERR_ARG naming both. */
static int check_disjoint(const call *c, int P, const char *cn, const size_t *counts,
                          const char *dn, const size_t *displs) {
    span *s = malloc((size_t)P * sizeof *s);
    int n = 0, st = COLLIE_OK;
    if (!s)
        return collie_fail(COLLIE_ERR_NOMEM, "%s: no memory to check %s", c->fn, dn);
    for (int j = 0; j < P; j++)
        if (counts[j])
            s[n++] = (span){ displs[j], displs[j] + counts[j], j };
    qsort(s, (size_t)n, sizeof *s, by_start);
    for (int k = 1; k < n && !st; k++)
        if (s[k].from < s[k - 1].to)
            st = collie_fail(COLLIE_ERR_ARG, "%s: the blocks of ranks %d and %d overlap in "
                             "recvbuf (%s[%d] = %zu, %s[%d] = %zu, %s[%d] = %zu)", c->fn,
                             s[k - 1].j, s[k].j, dn, s[k - 1].j, s[k - 1].from, cn, s[k - 1].j,
                             s[k - 1].to - s[k - 1].from, dn, s[k].j, s[k].from);
    free(s);
    return st;
}

/* Which of the arrays this rank must pass (gatherv, scatterv: the root's only). */
static int check_v(const call *c, int rank, int P) {
    vnames n = names_of(c->coll);
    const collie_coll_v *v = c->v;
    bool in_place = collie_call_in_place(c);
    bool arrays = !collie_coll_rooted(c->coll) || rank == c->root;
    int st = COLLIE_OK;
    if (c->coll == COLL_ALLTOALL) {
        st = in_place ? COLLIE_OK : check_array(c, P, n.counts, v->counts, n.displs, v->displs);
        st = st ? st : check_array(c, P, n.rcounts, v->rcounts, n.rdispls, v->rdispls);
        return st ? st : check_disjoint(c, P, n.rcounts, v->rcounts, n.rdispls, v->rdispls);
    }
    if (arrays && (st = check_array(c, P, n.counts, v->counts, n.displs, v->displs)) != COLLIE_OK)
        return st;
    bool gathers = c->coll == COLL_ALLGATHER || c->coll == COLL_GATHER;
    if (arrays && gathers && (st = check_disjoint(c, P, n.counts, v->counts, n.displs,
                                                  v->displs)) != COLLIE_OK)
        return st;
    if (c->coll == COLL_REDUCE_SCATTER || !arrays || in_place || v->own == v->counts[rank])
        return COLLIE_OK;
    return collie_fail(COLLIE_ERR_ARG, "%s: %s %zu differs from %s[%d] = %zu (this rank's own "
                       "block)", c->fn, n.own, v->own, n.counts, rank, v->counts[rank]);
}

/* COLLIE_IN_PLACE only where MPI allows it. */
static int check_in_place(const call *c, int rank) {
    bool root = rank == c->root;
    if (c->coll == COLL_SCATTER) {
        if (c->sendbuf == COLLIE_IN_PLACE)
            return collie_fail(COLLIE_ERR_ARG, "%s: sendbuf cannot be COLLIE_IN_PLACE (the root "
                               "passes recvbuf = COLLIE_IN_PLACE to keep its block in sendbuf)", c->fn);
        if (c->recvbuf == COLLIE_IN_PLACE && !root)
            return collie_fail(COLLIE_ERR_ARG, "%s: recvbuf = COLLIE_IN_PLACE is only valid at the "
                               "root (%d)", c->fn, c->root);
        return COLLIE_OK;
    }
    if (c->recvbuf == COLLIE_IN_PLACE)
        return collie_fail(COLLIE_ERR_ARG, "%s: recvbuf cannot be COLLIE_IN_PLACE (pass sendbuf "
                           "= COLLIE_IN_PLACE)", c->fn);
    if (c->coll == COLL_GATHER && c->sendbuf == COLLIE_IN_PLACE && !root)
        return collie_fail(COLLIE_ERR_ARG, "%s: sendbuf = COLLIE_IN_PLACE is only valid at the "
                           "root (%d)", c->fn, c->root);
    return COLLIE_OK;
}

/* The call as a builder would see it (v: own count fixed, as api.c plans it). */
static collie_coll_args args_of(const call *c, int rank, int P, collie_coll_v *v) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = c->coll;
    a.rank = rank;
    a.size = P;
    a.root = c->root;
    a.count = c->count;
    a.elem_size = collie_dtype_size(c->dtype);
    a.bytes = (uint64_t)c->count * a.elem_size;
    a.in_place = collie_call_in_place(c);
    if (c->v) {
        *v = *c->v;
        v->own = collie_call_own(c, rank);
        a.v = v;
        a.count = v->own;
        a.bytes = (uint64_t)a.count * a.elem_size;
    }
    return a;
}

/* NULL where the call uses bytes, and the extents mapped. */
static int check_buffers(const call *c, int rank, int P) {
    collie_coll_v v;
    collie_coll_args a = args_of(c, rank, P, &v);
    uint64_t send, recv;
    collie_coll_buffer_bytes(&a, rank, &send, &recv);
    bool send_used = send > 0 && !(a.in_place && c->coll != COLL_SCATTER);
    bool recv_used = recv > 0 && !(a.in_place && c->coll == COLL_SCATTER) &&
                     !(c->coll == COLL_EXSCAN && rank == 0);   /* rank 0's is not written */
    if (send_used && !c->sendbuf)
        return collie_fail(COLLIE_ERR_ARG, "%s: sendbuf is NULL but %llu bytes are to be sent",
                           c->fn, (unsigned long long)send);
    if (recv_used && !c->recvbuf)
        return collie_fail(COLLIE_ERR_ARG, "%s: recvbuf is NULL but %llu bytes are to be "
                           "received", c->fn, (unsigned long long)recv);
    if (a.in_place && c->coll != COLL_SCATTER) {
        int st = send_used ? check_mapped(c, "sendbuf", c->sendbuf, send) : COLLIE_OK;
        return st ? st : check_mapped(c, "recvbuf", c->recvbuf, send > recv ? send : recv);
    }
    if (send_used && recv_used)
        return check_mapped2(c, "sendbuf", c->sendbuf, send, "recvbuf", c->recvbuf, recv);
    return send_used ? check_mapped(c, "sendbuf", c->sendbuf, send)
         : recv_used ? check_mapped(c, "recvbuf", c->recvbuf, recv) : COLLIE_OK;
}

static int check_more(const call *c, int rank, int P) {
    int st = c->v ? check_v(c, rank, P) : COLLIE_OK;
    if (!st)
        st = check_in_place(c, rank);
    return st ? st : check_buffers(c, rank, P);
}

/* ---- every call ------------------------------------------------------------------------- */

static int check_op(const call *c) {
    if (!collie_coll_has_op(c->coll))
        return COLLIE_OK;
    if (!collie_op_valid(c->op))
        return collie_fail(COLLIE_ERR_ARG, "%s: op is NULL or not a valid operation", c->fn);
    int st = collie_op_check(c->op, c->dtype);
    if (!st)
        return COLLIE_OK;
    char msg[600];
    const char *m = collie_last_error(), *colon = strstr(m, ": ");
    snprintf(msg, sizeof msg, "%s", strncmp(m, "rank ", 5) == 0 && colon ? colon + 2 : m);
    return collie_fail(st, "%s: %s", c->fn, msg);
}

int collie_api_check(collie_team_t *team, const collie_call *c) {
    int bad = collie_team_check(team, c->fn);
    if (bad)
        return bad;
    if (team->failed)
        return collie_fail(team->failed, "%s: the team failed earlier: %s", c->fn, team->fail_msg);
    if (c->coll == COLL_BARRIER)
        return COLLIE_OK;
    if (!collie_dtype_valid(c->dtype))
        return collie_fail(COLLIE_ERR_ARG, "%s: invalid datatype handle %llu", c->fn,
                           (unsigned long long)c->dtype);
    size_t elem = collie_dtype_size(c->dtype);
    bool scaled = !c->v && (c->coll == COLL_ALLGATHER || c->coll == COLL_ALLTOALL ||
                            c->coll == COLL_GATHER || c->coll == COLL_SCATTER ||
                            c->coll == COLL_REDUCE_SCATTER);
    size_t limit = MAX_BYTES / elem / (scaled ? (size_t)team->size : 1);
    if (c->count > limit)
        return collie_fail(COLLIE_ERR_ARG, "%s: count %zu of %s (%zu bytes each%s) overflows",
                           c->fn, c->count, collie_dtype_name(c->dtype), elem,
                           scaled ? ", one block per rank" : "");
    int st = check_op(c);
    if (st)
        return st;
    if (collie_coll_rooted(c->coll) && (c->root < 0 || c->root >= team->size))
        return collie_fail(COLLIE_ERR_ARG, "%s: root %d is out of range for a team of %d ranks",
                           c->fn, c->root, team->size);
    if (c->coll <= COLL_BARRIER)
        return check_buffers4(c, team->rank);
    return check_more(c, team->rank, team->size);
}
