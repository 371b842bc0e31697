/*
 * mpi_xcoll.c — MPI_Allgather(v), MPI_Reduce_scatter(_block), MPI_Alltoall(v),
 * MPI_Gather(v), MPI_Scatter(v), MPI_Scan and MPI_Exscan mapped to collie's calls
 * (core/api.h), for the blocking, MPI_I* and persistent entry points of
 * mpi_xcoll_calls.c.
 *
 * The reductions (reduce_scatter, scan, exscan) map their datatype and op as
 * MPI_Allreduce does (mpi_types.c, mpi_ops.c: built-in ops, user ops in rank order): MPI
 * requires the same datatype and op on every rank, so every rank decides alike, and what
 * collie cannot compute exactly goes to PMPI on all of them.
 *
 * The others move bytes: a block is count * MPI_Type_size bytes (COLLIE_UINT8), the
 * counts and displacements of the v forms become bytes, so ranks whose datatypes differ
 * but whose type signatures match (as MPI requires) agree.  Nothing about a rank's own
 * datatype layout or its own arrays sends it to PMPI — the other ranks would be in collie
 * (MPI lets each rank use its own datatype, and gatherv's/scatterv's arrays exist at the
 * root only): a datatype with gaps is packed (mpi_stage.c); negative displacements are
 * moved by rebasing the buffer to the lowest one.  MPI_IN_PLACE as MPI defines it per call:
 * allgather(v), alltoall(v) at any rank (sendbuf), gather(v) at the root (sendbuf),
 * scatter(v) at the root (recvbuf); the reductions at any rank (sendbuf).  A rank whose
 * own arguments are erroneous (sendcount * size differing from recvcount * size, a
 * negative count, MPI_IN_PLACE where MPI does not allow it) gets an MPI error at once.
 * The routes to PMPI: COLLIE_MPI=0, MPI_THREAD_MULTIPLE for the request forms, a
 * communicator collie does not serve (intercommunicators, ...), a root out of range, and
 * the reductions' datatypes and ops collie does not compute — each with its reason in
 * COLLIE_MPI_LOG.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/api.h"
#include "core/internal.h"
#include "mpi/mpi_layer.h"

enum { PREP_PMPI = 0, PREP_COLLIE = 1 };   /* prepare's results; negative: a collie error */

/* One buffer of the call as the program described it. */
typedef struct side {
    void *buf;
    MPI_Datatype type;
    int n;                       /* blocks; 0: not used on this rank */
    int count;                   /* elements per block (no arrays) */
    const int *counts, *displs;  /* a v form's arrays, else NULL */
    bool in, out;
} side;

/* What collie gets for a side. */
typedef struct mapped {
    void *buf;
    size_t block;                /* bytes per block (no arrays) */
    size_t *counts, *displs;     /* bytes (v forms) */
} mapped;

static cm_call call_of(const cm_xargs *a) {
    cm_call c;
    memset(&c, 0, sizeof c);
    c.fn = a->fn;
    c.coll = a->coll;
    c.sendbuf = a->sendbuf;
    c.recvbuf = a->recvbuf;
    c.op = a->op;
    c.root = a->root;
    c.comm = a->comm;
    c.count = a->rcount;
    /* for the log; gather's and scatter's significant datatype depends on the rank (set
     * by map_data) and the other may be anything */
    c.dtype = collie_coll_rooted(a->coll) ? MPI_DATATYPE_NULL : a->rtype;
    return c;
}

static int bad_in_place(const cm_xargs *a, const char *what) {
    return collie_fail(COLLIE_ERR_ARG, "%s: MPI_IN_PLACE as %s is not allowed here (MPI: %s)",
                       a->fn, what,
                       a->coll == COLL_GATHER ? "sendbuf at the root only"
                       : a->coll == COLL_SCATTER ? "recvbuf at the root only" : "sendbuf only");
}

/* The sides of a data-moving call on this rank; *ip: in place here.  Negative: a collie
 * error (MPI_IN_PLACE where MPI does not allow it). */
static int sides_of(const cm_xargs *a, int rank, int P, side *s, side *r, bool *ip) {
    bool root = rank == a->root;
    memset(s, 0, sizeof *s);
    memset(r, 0, sizeof *r);
    side recv_all = { a->recvbuf, a->rtype, P, a->rcount, a->rcounts, a->rdispls, false, true };
    side send_one = { (void *)a->sendbuf, a->stype, 1, a->scount, NULL, NULL, true, false };
    side send_all = { (void *)a->sendbuf, a->stype, P, a->scount, a->scounts, a->sdispls, true, false };
    side recv_one = { a->recvbuf, a->rtype, 1, a->rcount, NULL, NULL, false, true };
    if (a->coll == COLL_SCATTER) {
        *ip = root && a->recvbuf == MPI_IN_PLACE;
        if (a->sendbuf == MPI_IN_PLACE && root)
            return bad_in_place(a, "sendbuf");
        if (a->recvbuf == MPI_IN_PLACE && !root)
            return bad_in_place(a, "recvbuf");
        *s = root ? send_all : *s;
        *r = *ip ? *r : recv_one;
        return COLLIE_OK;
    }
    bool gather = a->coll == COLL_GATHER;
    *ip = a->sendbuf == MPI_IN_PLACE && (root || !gather);
    if (a->sendbuf == MPI_IN_PLACE && !*ip)
        return bad_in_place(a, "sendbuf");
    if ((root || !gather) && a->recvbuf == MPI_IN_PLACE)
        return bad_in_place(a, "recvbuf");
    if (root || !gather) {
        *r = recv_all;
        r->in = *ip;   /* in place: the rank's own data is in recvbuf */
    }
    if (!*ip)
        *s = a->coll == COLL_ALLTOALL ? send_all : send_one;
    return COLLIE_OK;
}

/* Sets up the packed copy of a side whose datatype has gaps (bytes: its packed size). */
static int stage_of(cm_stage *st, const side *x, const cm_dtype *d, size_t bytes, const char *fn) {
    st->tmp = malloc(bytes ? bytes : 1);
    if (x->counts && st->tmp)
        st->counts = malloc(2 * (size_t)x->n * sizeof(int));
    if (!st->tmp || (x->counts && !st->counts)) {
        free(st->tmp);
        st->tmp = NULL;
        return collie_fail(COLLIE_ERR_NOMEM, "%s: no memory to pack %zu bytes", fn, bytes);
    }
    if (x->counts) {
        st->displs = st->counts + x->n;
        memcpy(st->counts, x->counts, (size_t)x->n * sizeof(int));
        memcpy(st->displs, x->displs, (size_t)x->n * sizeof(int));
    }
    st->buf = x->buf;
    st->size = d->bytes;
    st->extent = d->extent;
    st->n = x->n;
    st->count = (size_t)(x->count > 0 ? x->count : 0);
    st->in = x->in;
    st->out = x->out;
    if (PMPI_Type_dup(x->type, &st->type) != MPI_SUCCESS) {
        free(st->tmp);
        free(st->counts);
        st->tmp = NULL;
        return collie_fail(COLLIE_ERR_ARG, "%s: MPI_Type_dup of the datatype failed", fn);
    }
    return COLLIE_OK;
}

/* A v form's arrays in bytes: packed one after the other when staged, else from the
 * lowest displacement (m->buf rebased there). */
static int map_arrays(const side *x, const cm_dtype *d, bool staged, mapped *m, size_t *total,
                      const char *fn) {
    long long lowest = 0;
    for (int j = 0; j < x->n; j++) {
        if (x->counts[j] < 0)
            return collie_fail(COLLIE_ERR_ARG, "%s: count %d of rank %d is negative", fn,
                               x->counts[j], j);
        lowest = x->displs[j] < lowest ? x->displs[j] : lowest;
    }
    size_t off = 0;
    for (int j = 0; j < x->n; j++) {
        m->counts[j] = (size_t)x->counts[j] * d->bytes;
        m->displs[j] = staged ? off : (size_t)((long long)x->displs[j] - lowest) * d->bytes;
        off += m->counts[j];
    }
    *total = off;
    m->buf = staged || !x->buf ? x->buf : (char *)x->buf + (MPI_Aint)lowest * (MPI_Aint)d->bytes;
    return COLLIE_OK;
}

/* The record of side x's datatype (MPI_DATATYPE_NULL: no bytes; a count above 0 of it
 * then shows as a size mismatch with the peers). */
static const cm_dtype *dtype_of_side(const side *x) {
    static const cm_dtype none = { 0 };
    return x->type == MPI_DATATYPE_NULL ? &none : cm_dtype_of(x->type);
}

typedef struct span {
    long long from, to;   /* elements */
} span;

static int by_from(const void *p, const void *q) {
    const span *a = p, *b = q;
    return a->from < b->from ? -1 : a->from > b->from;
}

/* Whether two non-empty receive blocks of a v side overlap.  MPI calls that erroneous but
 * runs it (MPICH's allgatherv4 does); collie refuses it, and a rank cannot go to PMPI
 * alone (its displacements are its own), so such a side is received into a packed copy
 * and unpacked block after block (the last block written wins, as with no MPI guarantee). */
static bool overlapping(const side *x) {
    long long end = 0;
    bool sorted = true;
    for (int j = 0; j < x->n && sorted; j++)
        if (x->counts[j] > 0) {
            sorted = x->displs[j] >= end;
            end = (long long)x->displs[j] + x->counts[j];
        }
    if (sorted)
        return false;
    span *sp = malloc((size_t)x->n * sizeof *sp);
    int n = 0;
    bool over = !sp;   /* without memory: staged, which is always right */
    for (int j = 0; sp && j < x->n; j++)
        if (x->counts[j] > 0)
            sp[n++] = (span){ x->displs[j], (long long)x->displs[j] + x->counts[j] };
    if (sp)
        qsort(sp, (size_t)n, sizeof *sp, by_from);
    for (int k = 1; sp && k < n && !over; k++)
        over = sp[k].from < sp[k - 1].to;
    free(sp);
    return over;
}

/* Whether side x is moved through a packed copy: a datatype with gaps, or overlapping
 * receive blocks. */
static bool staged_side(const side *x) {
    const cm_dtype *d = x->n ? dtype_of_side(x) : NULL;
    if (!d || d->bytes == 0)
        return false;
    return !d->contiguous || (x->out && x->counts && x->n > 1 && overlapping(x));
}

/* Maps side x (its arrays into m->counts/displs, given) and stages it (staged_side). */
static int map_side(const side *x, bool staged, cm_stage *st, mapped *m, const char *fn) {
    if (!x->n)
        return COLLIE_OK;
    const cm_dtype *d = dtype_of_side(x);
    if (!d)
        return collie_fail(COLLIE_ERR_NOMEM, "%s: no memory for the datatype's record", fn);
    size_t total = 0;
    m->buf = x->buf;
    if (x->counts) {
        int st_ = map_arrays(x, d, staged, m, &total, fn);
        if (st_)
            return st_;
    } else {
        if (x->count < 0)
            return collie_fail(COLLIE_ERR_ARG, "%s: count %d is negative", fn, x->count);
        m->block = (size_t)x->count * d->bytes;
        total = m->block * (size_t)x->n;
    }
    if (!staged)
        return COLLIE_OK;
    int st_ = stage_of(st, x, d, total, fn);
    m->buf = st->tmp;
    return st_;
}

/* The call's own memory (c->extra) when it has arrays or packed copies; else *local. */
static cm_extra *extra_for(cm_call *c, const cm_xargs *a, bool packs, cm_extra *local) {
    memset(local, 0, sizeof *local);
    if (!a->v && !packs)
        return local;
    int P = c->cc->size;
    cm_extra *x = calloc(1, sizeof *x);
    size_t *arr = x && a->v ? calloc(4 * (size_t)P, sizeof *arr) : NULL;
    if (!x || (a->v && !arr)) {
        free(x);
        return NULL;
    }
    x->arrays = arr;
    x->fn = a->fn;
    c->extra = x;
    return x;
}

/* The v arrays and staging of a data-moving call: fills k (collie's call) and c->extra. */
static int map_data(cm_call *c, collie_call *k, const cm_xargs *a) {
    int rank = c->cc->rank, P = c->cc->size;
    side s, r;
    bool ip = false;
    int st = sides_of(a, rank, P, &s, &r, &ip);
    if (st)
        return st;
    bool stage_s = staged_side(&s), stage_r = staged_side(&r);
    cm_extra local, *x = extra_for(c, a, stage_s || stage_r, &local);
    if (!x)
        return collie_fail(COLLIE_ERR_NOMEM, "%s: no memory for the call's arrays", a->fn);
    size_t *arr = x->arrays;
    mapped ms = { NULL, 0, arr, arr ? arr + P : NULL };
    mapped mr = { NULL, 0, arr ? arr + 2 * P : NULL, arr ? arr + 3 * P : NULL };
    if ((st = map_side(&s, stage_s, &x->stage[0], &ms, a->fn)) ||
        (st = map_side(&r, stage_r, &x->stage[1], &mr, a->fn)))
        return st;
    bool root = rank == a->root;
    bool by_send = a->coll == COLL_SCATTER ? root : a->coll == COLL_GATHER && !root;
    if (s.n && r.n && !s.counts && !r.counts && ms.block != mr.block)
        return collie_fail(COLLIE_ERR_ARG, "%s: sendcount %d x %zu bytes differs from recvcount %d x "
                           "%zu bytes (the type signatures must match)", a->fn, a->scount,
                           a->scount ? ms.block / (size_t)a->scount : 0, a->rcount,
                           a->rcount ? mr.block / (size_t)a->rcount : 0);
    c->count = by_send ? a->scount : a->rcount;
    c->dtype = by_send ? a->stype : a->rtype;
    k->sendbuf = s.n ? ms.buf : ip && a->coll != COLL_SCATTER ? COLLIE_IN_PLACE : NULL;
    k->recvbuf = r.n ? mr.buf : ip && a->coll == COLL_SCATTER ? COLLIE_IN_PLACE : NULL;
    k->count = by_send ? ms.block : mr.block;
    if (!a->v)
        return COLLIE_OK;
    const side *arrays = a->coll == COLL_SCATTER || a->coll == COLL_ALLTOALL ? &s : &r;
    const mapped *am = arrays == &s ? &ms : &mr;
    if (arrays->n) {
        x->v.counts = am->counts;
        x->v.displs = am->displs;
    }
    if (a->coll == COLL_ALLTOALL) {
        x->v.rcounts = mr.counts;
        x->v.rdispls = mr.displs;
    }
    const side *own = a->coll == COLL_SCATTER ? &r : &s;
    x->v.own = own->n ? (own == &s ? ms.block : mr.block) : 0;
    k->count = x->v.own;
    k->v = &x->v;
    return COLLIE_OK;
}

/* reduce_scatter, scan, exscan: the datatype and op as MPI_Allreduce maps them. */
static int map_reduction(cm_call *c, collie_call *k, const cm_xargs *a, const char **why) {
    c->count = a->v ? 0 : a->rcount;
    if (!cm_map_reduction(c, why))
        return PREP_PMPI;
    k->sendbuf = a->sendbuf == MPI_IN_PLACE ? COLLIE_IN_PLACE : a->sendbuf;
    k->recvbuf = a->recvbuf;
    k->count = c->ccount;
    k->dtype = c->cdtype;
    k->op = c->cop;
    if (!a->v)
        return PREP_COLLIE;
    int P = c->cc->size;
    cm_extra *x = calloc(1, sizeof *x);
    size_t *arr = x ? calloc((size_t)P, sizeof *arr) : NULL;
    if (!arr) {
        free(x);
        return collie_fail(COLLIE_ERR_NOMEM, "%s: no memory for the call's arrays", a->fn);
    }
    x->arrays = arr;
    c->extra = x;
    for (int j = 0; j < P; j++) {
        if (a->rcounts[j] < 0)
            return collie_fail(COLLIE_ERR_ARG, "%s: recvcounts[%d] = %d is negative", a->fn, j,
                               a->rcounts[j]);
        arr[j] = (size_t)a->rcounts[j] * c->mult;
    }
    x->v.counts = arr;
    x->v.own = arr[c->cc->rank];
    k->count = x->v.own;
    k->v = &x->v;
    return PREP_COLLIE;
}

/* PREP_COLLIE (c and k filled; c->extra owned by the caller), PREP_PMPI (*why) or a
 * negative collie status (the call is erroneous on this rank). */
static int prepare(cm_call *c, collie_call *k, const cm_xargs *a, const char **why) {
    *c = call_of(a);
    memset(k, 0, sizeof *k);
    k->fn = a->fn;
    k->coll = a->coll;
    k->dtype = COLLIE_UINT8;
    k->root = a->root;
    if (!cm_prepare_comm(c, why))
        return PREP_PMPI;
    if (collie_coll_rooted(a->coll) && (a->root < 0 || a->root >= c->cc->size)) {
        *why = "root out of range";
        return PREP_PMPI;
    }
    if (collie_coll_has_op(a->coll))
        return map_reduction(c, k, a, why);
    int st = map_data(c, k, a);
    return st ? st : PREP_COLLIE;
}

/* A failed preparation or run on this rank: the MPI error, the call's memory freed. */
static int failed(cm_call *c, int st) {
    cm_extra_free(c->extra);
    c->extra = NULL;
    return cm_error(c, st);
}

/* Prepares the call: PREP_COLLIE (c and k filled) when collie runs it; else it is settled
 * here: PREP_PMPI (logged, its memory freed) or a negative status (the MPI error in *rc). */
static int begin(cm_call *c, collie_call *k, const cm_xargs *a, int *rc) {
    const char *why = NULL;
    int st = prepare(c, k, a, &why);
    if (st == PREP_PMPI) {
        cm_extra_free(c->extra);
        cm_log(c, "PMPI", why);
    } else if (st < 0) {
        *rc = failed(c, st);
    }
    return st;
}

bool cm_x_blocking(const cm_xargs *a, int *rc) {
    cm_call c;
    collie_call k;
    int st = begin(&c, &k, a, rc);
    if (st != PREP_COLLIE)
        return st != PREP_PMPI;
    st = c.extra ? cm_extra_pack(c.extra) : COLLIE_OK;
    if (!st)
        st = collie_api_blocking(c.team, &k);
    if (!st && c.extra)
        st = cm_extra_unpack(c.extra);
    cm_log(&c, c.cc->where, NULL);
    if (st) {
        *rc = failed(&c, st);
        return true;
    }
    cm_extra_free(c.extra);
    *rc = MPI_SUCCESS;
    return true;
}

bool cm_x_request(const cm_xargs *a, bool persistent, MPI_Request *request, int *rc) {
    cm_call c;
    collie_call k;
    int st = begin(&c, &k, a, rc);
    if (st != PREP_COLLIE)
        return st != PREP_PMPI;
    collie_request_t *req = NULL;
    st = !persistent && c.extra ? cm_extra_pack(c.extra) : COLLIE_OK;
    if (!st)
        st = persistent ? collie_api_persistent(c.team, &k, &req)
                        : collie_api_nonblocking(c.team, &k, &req);
    if (st) {
        *rc = failed(&c, st);
        return true;
    }
    cm_log(&c, c.cc->where, NULL);
    *rc = cm_request_add(req, &c, persistent, request);   /* owns c.extra from here */
    return true;
}
