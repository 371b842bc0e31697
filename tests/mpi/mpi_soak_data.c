/*
 * mpi_soak_data.c — mpi_soak's data: element kinds and their values, the datatypes of the
 * three shapes, the ops, the buffers (malloc'd at an offset of 0–7 elements, data-moving
 * calls sometimes at an odd byte offset too), and the check of a call against what this
 * file computes for it.
 *
 * Values are a hash of (seed, call, communicator, rank, element): 40-bit integers for the
 * 64-bit kinds, 20-bit for MPI_INT, integers in [-1000, 1000] for the floating kinds, so
 * that sums are exact in any order; all 64 bits for the user ops (min, and a product of
 * 2x2 matrices mod 2^16 packed in an int64, which is associative but not commutative, so
 * a reduction must combine the ranks in their order).
 *
 * The check: before the call both buffers (with the bytes before them and GUARD_BYTES
 * after them) are copied; after it every element of a result region is compared with its
 * expected value, and every other byte with the copy — the send buffer whole (inputs are
 * read-only), the receive buffer's holes, gaps and guard.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_soak.h"

const char *const coll_names[C_COUNT] = {
    "Allreduce", "Reduce", "Bcast", "Barrier", "Allgather", "Allgatherv", "Reduce_scatter_block",
    "Reduce_scatter", "Alltoall", "Alltoallv", "Gather", "Gatherv", "Scatter", "Scatterv", "Scan",
    "Exscan" };
static const char *const kind_names[K_COUNT] = { "MPI_INT64_T", "MPI_LONG_LONG", "MPI_INT",
                                                 "MPI_DOUBLE", "MPI_LONG_DOUBLE" };
static const char *const op_names[O_COUNT] = { "MPI_SUM", "MPI_MAX", "MPI_BXOR", "user min",
                                               "user 2x2 matrix product" };
static const char *const shape_names[S_COUNT] = { "plain", "contiguous(2)", "vector(2, gaps)" };
static const int shape_extent[S_COUNT] = { 2, 2, 4 };       /* slots per unit */
static const int shape_offset[S_COUNT][UNIT] = { { 0, 1 }, { 0, 1 }, { 0, 2 } };

static MPI_Datatype cached[S_COUNT][K_COUNT];   /* the derived types every call may share */
static MPI_Op user_ops[2];                      /* min, matrix product */

bool is_reduction(int coll) {
    return coll == C_ALLREDUCE || coll == C_REDUCE || coll == C_RSB || coll == C_RS ||
           coll == C_SCAN || coll == C_EXSCAN;
}
bool is_rooted(int coll) {
    return coll == C_REDUCE || coll == C_BCAST || coll == C_GATHER || coll == C_GATHERV ||
           coll == C_SCATTER || coll == C_SCATTERV;
}
bool is_vform(int coll) {
    return coll == C_ALLGATHERV || coll == C_RS || coll == C_ALLTOALLV || coll == C_GATHERV ||
           coll == C_SCATTERV;
}

size_t elem_size(int kind) {
    switch (kind) {
    case K_INT: return sizeof(int);
    case K_LDBL: return sizeof(long double);
    default: return 8;
    }
}

bool op_allowed(int kind, int op) {
    switch (op) {
    case O_SUM: case O_MAX: return true;
    case O_BXOR: return kind == K_I64 || kind == K_LL || kind == K_INT;
    default: return kind == K_I64 || kind == K_LL;   /* the user ops */
    }
}

static MPI_Datatype base_type(int kind) {
    static MPI_Datatype t[K_COUNT];
    if (!t[0]) {
        t[K_I64] = MPI_INT64_T, t[K_LL] = MPI_LONG_LONG, t[K_INT] = MPI_INT;
        t[K_DBL] = MPI_DOUBLE, t[K_LDBL] = MPI_LONG_DOUBLE;
    }
    return t[kind];
}

/* ---- values ------------------------------------------------------------------------------- */

/* Element L (unit * UNIT + e) of rank r's data in call c. */
static int64_t value(const call *c, int r, size_t L) {
    uint64_t h = mix(seed ^ mix(((uint64_t)(uint32_t)c->vstep << 24) ^ ((uint64_t)c->comm_id << 20) ^
                                (uint64_t)r) ^ (uint64_t)L);
    if (c->op == O_UMIN || c->op == O_UMAT)
        return (int64_t)h;
    switch (c->kind) {
    case K_I64: case K_LL: return (int64_t)(h >> 24) - ((int64_t)1 << 39);
    case K_INT: return (int64_t)(h >> 44) - (1 << 19);
    default: return (int64_t)(h % 2001) - 1000;
    }
}

/* x * y, each a 2x2 matrix of 16-bit entries (row-major, entry 0 in the low bits). */
static int64_t matmul(int64_t x, int64_t y) {
    uint64_t a[4], b[4], r = 0;
    for (int k = 0; k < 4; k++) {
        a[k] = ((uint64_t)x >> (16 * k)) & 0xFFFF;
        b[k] = ((uint64_t)y >> (16 * k)) & 0xFFFF;
    }
    uint64_t m[4] = { a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                      a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3] };
    for (int k = 0; k < 4; k++)
        r |= (m[k] & 0xFFFF) << (16 * k);
    return (int64_t)r;
}

static int64_t combine(int op, int64_t a, int64_t b) {
    switch (op) {
    case O_SUM: return (int64_t)((uint64_t)a + (uint64_t)b);
    case O_MAX: return a > b ? a : b;
    case O_BXOR: return a ^ b;
    case O_UMIN: return a < b ? a : b;
    default: return matmul(a, b);
    }
}

static int64_t reduced(const call *c, int lo, int hi, size_t L) {
    int64_t v = value(c, lo, L);
    for (int r = lo + 1; r < hi; r++)
        v = combine(c->op, v, value(c, r, L));
    return v;
}

static void put(int kind, unsigned char *p, int64_t v) {
    if (kind == K_INT) {
        int x = (int)v;
        memcpy(p, &x, sizeof x);
    } else if (kind == K_DBL) {
        double x = (double)v;
        memcpy(p, &x, sizeof x);
    } else if (kind == K_LDBL) {
        long double x = (long double)v;
        memset(p, 0, sizeof x);
        memcpy(p, &x, sizeof x);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

/* The element at p as an integer (LLONG_MIN for what no call computes). */
static int64_t get(int kind, const unsigned char *p) {
    if (kind == K_INT) {
        int x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    if (kind == K_DBL || kind == K_LDBL) {
        long double x;
        if (kind == K_DBL) {
            double d;
            memcpy(&d, p, sizeof d);
            x = d;
        } else {
            memcpy(&x, p, sizeof x);
        }
        return x == x && x > -1e15L && x < 1e15L && x == (long double)(int64_t)x ? (int64_t)x : INT64_MIN;
    }
    int64_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

/* ---- ops and types -------------------------------------------------------------------------- */

/* Elements in len items of dt: the user ops get int64 and contiguous(2) of int64. */
static size_t op_elems(const int *len, const MPI_Datatype *dt) {
    return (size_t)*len * (*dt == MPI_INT64_T || *dt == MPI_LONG_LONG ? 1 : UNIT);
}

static void user_min(void *in, void *inout, int *len, MPI_Datatype *dt) {
    for (size_t i = 0, n = op_elems(len, dt); i < n; i++) {
        int64_t a, b;
        memcpy(&a, (char *)in + 8 * i, 8);
        memcpy(&b, (char *)inout + 8 * i, 8);
        b = combine(O_UMIN, a, b);
        memcpy((char *)inout + 8 * i, &b, 8);
    }
}

/* inout = in * inout: MPI passes the lower ranks' part as `in`. */
static void user_mat(void *in, void *inout, int *len, MPI_Datatype *dt) {
    for (size_t i = 0, n = op_elems(len, dt); i < n; i++) {
        int64_t a, b;
        memcpy(&a, (char *)in + 8 * i, 8);
        memcpy(&b, (char *)inout + 8 * i, 8);
        b = matmul(a, b);
        memcpy((char *)inout + 8 * i, &b, 8);
    }
}

static MPI_Datatype make_type(int kind, int shape) {
    MPI_Datatype t, v;
    if (shape == S_CONTIG) {
        MPI_Type_contiguous(UNIT, base_type(kind), &t);
    } else {   /* elements 0 and 2 of 4: a hole after each */
        MPI_Type_vector(UNIT, 1, 2, base_type(kind), &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)(4 * elem_size(kind)), &t);
        MPI_Type_free(&v);
    }
    MPI_Type_commit(&t);
    return t;
}

void data_init(void) {
    for (int k = 0; k < K_COUNT; k++) {
        cached[S_PLAIN][k] = base_type(k);
        cached[S_CONTIG][k] = make_type(k, S_CONTIG);
        cached[S_VECTOR][k] = make_type(k, S_VECTOR);
    }
    MPI_Op_create(user_min, 1, &user_ops[0]);
    MPI_Op_create(user_mat, 0, &user_ops[1]);
}

void data_finalize(void) {
    for (int k = 0; k < K_COUNT; k++) {
        MPI_Type_free(&cached[S_CONTIG][k]);
        MPI_Type_free(&cached[S_VECTOR][k]);
    }
    MPI_Op_free(&user_ops[0]);
    MPI_Op_free(&user_ops[1]);
}

MPI_Op op_handle(call *c) {
    if (c->op == O_SUM)
        return MPI_SUM;
    if (c->op == O_MAX)
        return MPI_MAX;
    if (c->op == O_BXOR)
        return MPI_BXOR;
    if (!c->op_fresh)
        return user_ops[c->op == O_UMAT];
    if (c->mop == MPI_OP_NULL)
        MPI_Op_create(c->op == O_UMIN ? user_min : user_mat, c->op == O_UMIN, &c->mop);
    return c->mop;
}

MPI_Datatype side_type(const call *c, side *x) {
    if (x->shape == S_PLAIN || !x->fresh)
        return cached[x->shape][c->kind];
    if (x->type == MPI_DATATYPE_NULL)
        x->type = make_type(c->kind, x->shape);
    return x->type;
}

int side_count(const side *x, size_t units) { return (int)(units * (x->shape == S_PLAIN ? UNIT : 1)); }

int side_extent(const side *x) { return shape_extent[x->shape]; }

/* Where element e of unit u sits in x's buffer (elements). */
static size_t slot_of(const side *x, size_t u, int e) {
    return u * (size_t)shape_extent[x->shape] + (size_t)shape_offset[x->shape][e];
}

void free_fresh(call *c) {
    if (c->s.type != MPI_DATATYPE_NULL)
        MPI_Type_free(&c->s.type);
    if (c->r.type != MPI_DATATYPE_NULL)
        MPI_Type_free(&c->r.type);
    if (c->mop != MPI_OP_NULL)
        MPI_Op_free(&c->mop);
}

/* ---- buffers -------------------------------------------------------------------------------- */

/* Room for regions(): one per rank and one more. */
static region *regions_alloc(void) {
    region *rg = calloc((size_t)world_size + 2, sizeof *rg);
    if (!rg)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return rg;
}

static void alloc_side(call *c, side *x, int which) {
    size_t es = elem_size(c->kind), slots = x->units * (size_t)shape_extent[x->shape];
    uint64_t d = draw_mine(c->step, 40 + which);
    size_t off = (size_t)(d % 8) * es;
    if (!is_reduction(c->coll) && c->kind != K_LDBL && (d >> 8) % 4 == 0)
        off += 1 + (size_t)((d >> 16) % 7);   /* bytes moved only: an odd address */
    x->bytes = off + slots * es + GUARD_BYTES;
    x->base = malloc(x->bytes);
    x->snap = malloc(x->bytes);
    if (!x->base || !x->snap) {
        fprintf(stderr, "mpi_soak: rank %d: no memory for %zu bytes\n", world_rank, x->bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    x->buf = x->base + off;
}

/* The side that holds the input: the send buffer, or the receive buffer in place (not
 * scatter's: its root keeps its blocks in sendbuf) and bcast's. */
static side *input_side(call *c) {
    bool scatter = c->coll == C_SCATTER || c->coll == C_SCATTERV;
    return c->coll == C_BCAST || (c->in_place && !scatter) ? &c->r : &c->s;
}

void soak_fill(call *c) {
    size_t es = elem_size(c->kind);
    memset(c->s.base, 0x5B, c->s.bytes);
    memset(c->r.base, 0x5B, c->r.bytes);
    side *x = input_side(c);
    region *rg = regions_alloc();
    int nr = regions(c, false, rg);
    for (int g = 0; g < nr; g++)
        for (size_t k = 0; k < rg[g].units; k++)
            for (int e = 0; e < UNIT; e++) {
                size_t slot = slot_of(x, rg[g].at + k, e);
                put(c->kind, x->buf + slot * es, value(c, rg[g].r, (rg[g].from + k) * UNIT + (size_t)e));
            }
    free(rg);
    memcpy(c->s.snap, c->s.base, c->s.bytes);
    memcpy(c->r.snap, c->r.base, c->r.bytes);
}

void soak_prepare(call *c) {
    size_t ns, nr;
    extents(c, &ns, &nr);
    c->s.units = ns;
    c->r.units = nr;
    alloc_side(c, &c->s, 0);
    alloc_side(c, &c->r, 1);
    soak_fill(c);
}

void soak_release(call *c) {
    free(c->s.base), free(c->s.snap), free(c->r.base), free(c->r.snap);
    c->s.base = c->s.snap = c->r.base = c->r.snap = NULL;
    v_free(c);
}

/* ---- the check ------------------------------------------------------------------------------- */

void describe(const call *c, char *out, size_t len) {
    static const char *const comms[M_COUNT] = {
        "MPI_COMM_WORLD", "a dup of the world", "even/odd half", "reversed half", "all but rank 0",
        "a dup freed after the call" };
    char fn[64];
    snprintf(fn, sizeof fn, c->form == F_NONBLOCKING ? "MPI_I%c%s" : "MPI_%c%s%s",
             c->form == F_NONBLOCKING ? coll_names[c->coll][0] + 32 : coll_names[c->coll][0],
             coll_names[c->coll] + 1, c->form == F_PERSISTENT ? "_init" : "");
    snprintf(out, len, "call %d%s: %s of %zu units of 2 %s, %s, root %d%s, %s (rank %d of %d), "
             "send %s%s, recv %s%s%s", c->step, c->vstep != c->step ? " (started at a later call)" : "",
             fn, c->n, kind_names[c->kind], is_reduction(c->coll) ? op_names[c->op] : "no op", c->root,
             c->in_place ? ", in place" : "", comms[c->comm_id], c->rank, c->size,
             shape_names[c->s.shape], c->s.fresh && c->s.shape ? " (made for the call)" : "",
             shape_names[c->r.shape], c->r.fresh && c->r.shape ? " (made for the call)" : "",
             c->op_fresh ? ", op made for the call" : "");
}

void fail_at(const call *c, const char *what, size_t at, long long got, long long want) {
    char d[512];
    describe(c, d, sizeof d);
    fprintf(stderr, "FAIL: mpi_soak: rank %d, %s: %s at %zu: got %lld (0x%llx), expected %lld (0x%llx)\n",
            world_rank, d, what, at, got, (unsigned long long)got, want, (unsigned long long)want);
    failures++;
}

/* Bytes of x that differ from its copy, outside the slots marked in `covered`. */
static bool unchanged(const call *c, const side *x, const unsigned char *covered, const char *what) {
    size_t es = elem_size(c->kind), off = (size_t)(x->buf - x->base);
    size_t end = off + x->units * (size_t)shape_extent[x->shape] * es;
    for (size_t i = 0; i < x->bytes; i++) {
        if (covered && i >= off && i < end && covered[(i - off) / es])
            continue;
        if (x->base[i] != x->snap[i]) {
            fail_at(c, what, i, x->base[i], x->snap[i]);
            return false;
        }
    }
    return true;
}

/* The results in the receive buffer, then every other byte of both buffers. */
void soak_check(const call *c) {
    const side *x = &c->r;
    size_t es = elem_size(c->kind), slots = x->units * (size_t)shape_extent[x->shape];
    unsigned char *covered = calloc(slots ? slots : 1, 1);
    region *rg = regions_alloc();
    int nr = regions(c, true, rg);
    bool ok = true;
    for (int g = 0; g < nr; g++)
        for (size_t k = 0; k < rg[g].units; k++)
            for (int e = 0; e < UNIT; e++) {
                size_t slot = slot_of(x, rg[g].at + k, e);
                size_t L = (rg[g].from + k) * UNIT + (size_t)e;
                covered[slot] = 1;
                if (rg[g].src == R_ANY || !ok)
                    continue;
                int64_t want = rg[g].src == R_VALUE ? value(c, rg[g].r, L)
                                                    : reduced(c, rg[g].lo, rg[g].hi, L);
                int64_t got = get(c->kind, x->buf + slot * es);
                if (got != want) {
                    char what[96];
                    snprintf(what, sizeof what, "wrong result (unit %zu, element %d) at slot",
                             rg[g].at + k, e);
                    fail_at(c, what, slot, got, want);
                    ok = false;
                }
            }
    unchanged(c, x, covered, "receive buffer changed outside the results (a hole, a gap or after it), byte");
    unchanged(c, &c->s, NULL, "send buffer changed, byte");
    free(covered);
    free(rg);
}
