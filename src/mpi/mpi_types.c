/*
 * mpi_types.c — MPI datatypes as collie sees them, looked up once per handle.
 *
 * Reductions.  Every predefined type an MPI reduces is classified (table `named` below,
 * checked against what MPICH 4 and Open MPI 4.1 accept):
 *  - integers by size and signedness (C, <stdint.h>, MPI_AINT/OFFSET/COUNT, Fortran
 *    INTEGERn), MPI_CHAR as the platform's `char` (signed on x86-64, as both MPIs reduce
 *    it), float and double (and Fortran REAL4, REAL8): the collie type of the same layout,
 *    every op collie_op_check allows;
 *  - MPI_C_BOOL / MPI_CXX_BOOL: bytes, logical ops only;  MPI_BYTE: bytes, bitwise ops only
 *    (Open MPI also reduces MPI_BYTE with the arithmetic and logical ops, as unsigned
 *    bytes: the Open MPI build serves those too);
 *  - complex types (C, C++, Fortran): MPI_SUM as twice as many floats or doubles; the
 *    product goes to PMPI (collie has no complex multiplication);
 *  - MAXLOC/MINLOC pairs: MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_2INT, MPI_2INTEGER;
 *  - to PMPI, each with its reason: long double (and REAL16, long double complex,
 *    MPI_LONG_DOUBLE_INT), the pair types collie has no layout for, Fortran LOGICAL (the
 *    compiler's .TRUE.), Fortran CHARACTER (MPICH reduces it signed, Open MPI unsigned),
 *    and MPI_WCHAR / MPI_PACKED (no MPI reduces them: PMPI reports the error).
 * A derived type made only of MPI_Type_contiguous / MPI_Type_dup over such a type
 * flattens to it.  Built-in (type, op) pairs collie does not serve go to PMPI, which
 * computes them or reports the error its own way.
 *
 * Broadcast moves bytes: a type whose data is one contiguous block (size == extent == true
 * extent, true lower bound 0) is sent as count * size bytes in place; any other type of
 * nonzero size is packed to count * size bytes (MPI_Pack), sent, and unpacked — so every
 * rank takes collie's path whatever its own layout (MPI lets the ranks of one broadcast
 * use different types of the same signature).  The nonblocking and persistent broadcasts
 * do the same on a packed copy their request owns (cm_pack_setup; the root packs at each
 * start, the others unpack at each completion: mpi_requests.c).
 *
 * The cache.  A record per datatype handle (what it flattens to, which built-in ops collie
 * serves on it, its extent, whether it is one block) is made on first use.  Predefined
 * types keep theirs until MPI_Finalize; a derived type's record is dropped by the delete
 * callback of a datatype attribute, which MPI calls in MPI_Type_free (from any language
 * binding) — MPI reuses the handles of freed types.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mpi/mpi_layer.h"
#include "types/types.h"

enum kind { K_SINT, K_UINT, K_CHAR, K_FLOAT, K_COMPLEX, K_BOOL, K_BYTE, K_PAIR, K_NONE };

typedef struct named_type {
    MPI_Datatype mpi;
    enum kind kind;
    collie_dtype_t pair;          /* K_PAIR: the collie layout */
    const char *why;              /* K_NONE: the reason */
} named_type;

static const char *const why_long_double = "long double: collie has no such type";
static const char *const why_pair = "MAXLOC/MINLOC pair type collie has no layout for";

/* Called once per new named handle, so a table built on the stack costs nothing per call
 * (MPI's handles are not constants in Open MPI). */
static bool find_named(MPI_Datatype t, named_type *out) {
    const named_type table[] = {
        { MPI_CHAR, K_CHAR, 0, NULL }, { MPI_SIGNED_CHAR, K_SINT, 0, NULL },
        { MPI_UNSIGNED_CHAR, K_UINT, 0, NULL }, { MPI_SHORT, K_SINT, 0, NULL },
        { MPI_UNSIGNED_SHORT, K_UINT, 0, NULL }, { MPI_INT, K_SINT, 0, NULL },
        { MPI_UNSIGNED, K_UINT, 0, NULL }, { MPI_LONG, K_SINT, 0, NULL },
        { MPI_UNSIGNED_LONG, K_UINT, 0, NULL }, { MPI_LONG_LONG_INT, K_SINT, 0, NULL },
        { MPI_LONG_LONG, K_SINT, 0, NULL }, { MPI_UNSIGNED_LONG_LONG, K_UINT, 0, NULL },
        { MPI_INT8_T, K_SINT, 0, NULL }, { MPI_INT16_T, K_SINT, 0, NULL },
        { MPI_INT32_T, K_SINT, 0, NULL }, { MPI_INT64_T, K_SINT, 0, NULL },
        { MPI_UINT8_T, K_UINT, 0, NULL }, { MPI_UINT16_T, K_UINT, 0, NULL },
        { MPI_UINT32_T, K_UINT, 0, NULL }, { MPI_UINT64_T, K_UINT, 0, NULL },
        { MPI_AINT, K_SINT, 0, NULL }, { MPI_OFFSET, K_SINT, 0, NULL },
        { MPI_COUNT, K_SINT, 0, NULL },
        { MPI_INTEGER, K_SINT, 0, NULL }, { MPI_INTEGER1, K_SINT, 0, NULL },
        { MPI_INTEGER2, K_SINT, 0, NULL }, { MPI_INTEGER4, K_SINT, 0, NULL },
        { MPI_INTEGER8, K_SINT, 0, NULL },
        { MPI_FLOAT, K_FLOAT, 0, NULL }, { MPI_DOUBLE, K_FLOAT, 0, NULL },
        { MPI_REAL, K_FLOAT, 0, NULL }, { MPI_DOUBLE_PRECISION, K_FLOAT, 0, NULL },
        { MPI_REAL4, K_FLOAT, 0, NULL }, { MPI_REAL8, K_FLOAT, 0, NULL },
        { MPI_C_COMPLEX, K_COMPLEX, 0, NULL }, { MPI_C_FLOAT_COMPLEX, K_COMPLEX, 0, NULL },
        { MPI_C_DOUBLE_COMPLEX, K_COMPLEX, 0, NULL },
        { MPI_CXX_FLOAT_COMPLEX, K_COMPLEX, 0, NULL },
        { MPI_CXX_DOUBLE_COMPLEX, K_COMPLEX, 0, NULL },
        { MPI_COMPLEX, K_COMPLEX, 0, NULL }, { MPI_DOUBLE_COMPLEX, K_COMPLEX, 0, NULL },
        { MPI_C_BOOL, K_BOOL, 0, NULL }, { MPI_CXX_BOOL, K_BOOL, 0, NULL },
        { MPI_BYTE, K_BYTE, 0, NULL },
        { MPI_FLOAT_INT, K_PAIR, COLLIE_FLOAT32_INT32, NULL },
        { MPI_DOUBLE_INT, K_PAIR, COLLIE_FLOAT64_INT32, NULL },
        { MPI_2INT, K_PAIR, COLLIE_INT32_INT32, NULL },
        { MPI_2INTEGER, K_PAIR, COLLIE_INT32_INT32, NULL },
        { MPI_LONG_DOUBLE, K_NONE, 0, why_long_double }, { MPI_REAL16, K_NONE, 0, why_long_double },
        { MPI_C_LONG_DOUBLE_COMPLEX, K_NONE, 0, why_long_double },
        { MPI_CXX_LONG_DOUBLE_COMPLEX, K_NONE, 0, why_long_double },
        { MPI_LONG_DOUBLE_INT, K_NONE, 0, why_long_double },
        { MPI_SHORT_INT, K_NONE, 0, why_pair }, { MPI_LONG_INT, K_NONE, 0, why_pair },
        { MPI_2REAL, K_NONE, 0, why_pair }, { MPI_2DOUBLE_PRECISION, K_NONE, 0, why_pair },
        { MPI_LOGICAL, K_NONE, 0, "Fortran LOGICAL: its .TRUE. value is the compiler's" },
        { MPI_CHARACTER, K_NONE, 0, "Fortran CHARACTER: MPICH reduces it signed, Open MPI unsigned" },
        { MPI_WCHAR, K_NONE, 0, "MPI defines no reduction on MPI_WCHAR" },
        { MPI_PACKED, K_NONE, 0, "MPI defines no reduction on MPI_PACKED" },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].mpi == t && t != MPI_DATATYPE_NULL) {
            *out = table[i];
            return true;
        }
    return false;
}

static collie_dtype_t int_type(int bytes, bool is_signed) {
    static const collie_dtype_t s[9] = { 0, COLLIE_INT8, COLLIE_INT16, 0, COLLIE_INT32, 0, 0, 0, COLLIE_INT64 };
    static const collie_dtype_t u[9] = { 0, COLLIE_UINT8, COLLIE_UINT16, 0, COLLIE_UINT32, 0, 0, 0, COLLIE_UINT64 };
    return bytes >= 1 && bytes <= 8 ? (is_signed ? s[bytes] : u[bytes]) : COLLIE_DTYPE_INVALID;
}

static collie_dtype_t float_type(int bytes) {
    return bytes == 4 ? COLLIE_FLOAT32 : bytes == 8 ? COLLIE_FLOAT64 : COLLIE_DTYPE_INVALID;
}

/* The ops of CM_NBUILTIN_OPS (bit i = op index i) collie_op_check allows on base. */
static unsigned checked_ops(collie_dtype_t base) {
    unsigned ops = 0;
    for (int i = 0; i < CM_NBUILTIN_OPS; i++)
        if (collie_op_check(cm_builtin_op(i), base) == COLLIE_OK)
            ops |= 1u << i;
    return ops;
}

#define OPS_LOGICAL ((1u << 4) | (1u << 5) | (1u << 6))   /* LAND LOR LXOR */
#define OPS_BITWISE ((1u << 7) | (1u << 8) | (1u << 9))   /* BAND BOR BXOR */
#define OPS_SUM 1u

static const char *const why_op = "op not defined for this datatype";

/* Fills the reduction part of d for a named type. */
static void classify_named(MPI_Datatype t, cm_dtype *d) {
    named_type n;
    int bytes = 0;
    d->mult = 1;
    d->op_why = why_op;
    if (!find_named(t, &n)) {
        d->why = "predefined datatype collie does not know";
        return;
    }
    PMPI_Type_size(t, &bytes);
    switch (n.kind) {
    case K_SINT: case K_UINT: d->base = int_type(bytes, n.kind == K_SINT); break;
    case K_CHAR: d->base = int_type(bytes, CHAR_MIN < 0); break;
    case K_FLOAT: d->base = float_type(bytes); break;
    case K_COMPLEX: d->base = float_type(bytes / 2); d->mult = 2; break;
    case K_BOOL: case K_BYTE: d->base = int_type(bytes, false); break;
    case K_PAIR: d->base = n.pair; break;
    case K_NONE: d->why = n.why; return;
    }
    if (!d->base) {
        d->why = "predefined datatype of a size collie has no type for";
        return;
    }
    d->ops = checked_ops(d->base);
    if (n.kind == K_BOOL || (n.kind == K_BYTE && !CM_BYTE_ARITHMETIC))
        d->ops &= n.kind == K_BOOL ? OPS_LOGICAL : OPS_BITWISE;
    if (n.kind == K_COMPLEX) {
        d->ops &= OPS_SUM;
        d->op_why = "collie reduces complex numbers with MPI_SUM only";
    }
}

/* Fills the reduction part of d for t; derived types flatten through contiguous and dup
 * (depth-limited against pathological nesting). */
static void classify(MPI_Datatype t, cm_dtype *d, int depth) {
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        classify_named(t, d);
        return;
    }
    d->why = "derived datatype collie cannot flatten (only contiguous or dup of a predefined type)";
    if ((combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP) || depth > 8 ||
        ni > 1 || na > 0 || nd != 1)
        return;
    int ints[1] = { 1 };
    MPI_Aint addrs[1];
    MPI_Datatype inner;
    PMPI_Type_get_contents(t, ni, na, nd, ints, addrs, &inner);
    size_t reps = combiner == MPI_COMBINER_CONTIGUOUS ? (size_t)(ints[0] > 0 ? ints[0] : 0) : 1;
    cm_dtype in;
    memset(&in, 0, sizeof in);
    classify(inner, &in, depth + 1);
    PMPI_Type_get_envelope(inner, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        PMPI_Type_free(&inner);
    if (!in.base) {
        d->why = in.why;
        return;
    }
    if (reps == 0 || in.mult > (size_t)INT_MAX / reps)
        return;   /* an empty or absurdly large element: PMPI */
    d->base = in.base;
    d->mult = in.mult * reps;
    d->ops = in.ops;
    d->op_why = in.op_why;
    d->why = NULL;
}

/* Fills the layout part of d: extent, one contiguous block. */
static void layout(MPI_Datatype t, cm_dtype *d) {
    int size = 0;
    MPI_Aint true_lb, true_extent;
    PMPI_Type_size(t, &size);
    PMPI_Type_get_extent(t, &d->lb, &d->extent);
    PMPI_Type_get_true_extent(t, &true_lb, &true_extent);
    d->bytes = size > 0 ? (size_t)size : 0;
    d->contiguous = size > 0 && d->lb == 0 && true_lb == 0 && d->extent == size && true_extent == size;
}

/* ---- the cache ---------------------------------------------------------------------------- */

static cm_map types;
static int type_keyval = MPI_KEYVAL_INVALID;
/* Threads on different communicators (MPI_THREAD_MULTIPLE) share the map (whose lookups
 * also write its last-hit slot) and the keyval.  MPI is called outside the lock: setting
 * or freeing an attribute may call drop_type, which takes it. */
static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;

static int drop_type(MPI_Datatype t, int key, void *value, void *extra) {
    (void)key, (void)value, (void)extra;
    cm_memo_forget();
    pthread_mutex_lock(&types_lock);
    cm_dtype *d = cm_map_del(&types, cm_type_key(t));   /* gone already after cm_free_types */
    pthread_mutex_unlock(&types_lock);
    free(d);
    return MPI_SUCCESS;
}

static const cm_dtype *cached(MPI_Datatype t) {
    pthread_mutex_lock(&types_lock);
    const cm_dtype *hit = cm_map_get(&types, cm_type_key(t));
    pthread_mutex_unlock(&types_lock);
    return hit;
}

/* Puts d in the cache and returns it, or the record another thread put for t first (d is
 * then freed); NULL when out of memory.  *mine: d was put. */
static cm_dtype *cache(MPI_Datatype t, cm_dtype *d, bool *mine) {
    pthread_mutex_lock(&types_lock);
    cm_dtype *had = cm_map_get(&types, cm_type_key(t));
    *mine = !had && cm_map_put(&types, cm_type_key(t), d);
    pthread_mutex_unlock(&types_lock);
    if (*mine)
        return d;
    free(d);
    return had;
}

static const cm_dtype *dtype_of(MPI_Datatype t) {
    const cm_dtype *hit = cached(t);
    if (hit)
        return hit;
    cm_dtype *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    d->named = combiner == MPI_COMBINER_NAMED;
    classify(t, d, 0);
    layout(t, d);
    bool mine = false;
    d = cache(t, d, &mine);
    if (mine && !d->named) {   /* forget it when MPI frees the handle */
        pthread_mutex_lock(&types_lock);
        if (type_keyval == MPI_KEYVAL_INVALID)
            PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, drop_type, &type_keyval, NULL);
        int keyval = type_keyval;
        pthread_mutex_unlock(&types_lock);
        PMPI_Type_set_attr(t, keyval, d);
    }
    return d;
}

const cm_dtype *cm_dtype_of(MPI_Datatype t) { return dtype_of(t); }

void cm_free_types(void) {
    pthread_mutex_lock(&types_lock);
    cm_map_clear(&types, free);
    pthread_mutex_unlock(&types_lock);
}

/* ---- mapping calls ---------------------------------------------------------------------- */

static bool map_user_op(cm_call *c, const cm_dtype *d, const char **why) {
    if (!d->named) {
        *why = "user op on a derived datatype";
        return false;
    }
    c->cop = cm_user_op(c->op, c->dtype);
    c->cdtype = d->extent > 0 ? collie_dtype_bytes((size_t)d->extent) : COLLIE_DTYPE_INVALID;
    c->mult = 1;
    c->ccount = (size_t)c->count;
    if (!c->cop || d->lb != 0 || !c->cdtype) {
        *why = "cannot wrap the user op";
        return false;
    }
    return true;
}

bool cm_map_reduction(cm_call *c, const char **why) {
    if (c->count < 0) {
        *why = "negative count";
        return false;
    }
    const cm_dtype *d = dtype_of(c->dtype);
    if (!d) {
        *why = "out of memory";
        return false;
    }
    int i = cm_builtin_op_index(c->op);
    if (i < 0) {
        if (cm_is_user_op(c->op))
            return map_user_op(c, d, why);
        *why = "op unknown to collie";
        return false;
    }
    if (!d->base) {
        *why = d->why;
        return false;
    }
    if (!(d->ops & (1u << i))) {
        *why = d->op_why;
        return false;
    }
    c->cop = cm_builtin_op(i);
    c->cdtype = d->base;
    c->mult = d->mult;
    c->ccount = (size_t)c->count * d->mult;
    return true;
}

bool cm_map_bcast(cm_call *c, const char **why) {
    if (c->count < 0) {
        *why = "negative count";
        return false;
    }
    const cm_dtype *d = dtype_of(c->dtype);
    if (!d || !d->bytes) {
        *why = !d ? "out of memory" : "datatype of size zero";
        return false;
    }
    c->cdtype = COLLIE_UINT8;
    c->mult = d->bytes;
    c->ccount = (size_t)c->count * d->bytes;
    c->packed = !d->contiguous;
    c->extent = d->extent;
    return true;
}

/* MPI_COMM_SELF, not the call's communicator: an MPI_I* call's request unpacks when it
 * completes, and the program may have freed the communicator by then (MPI lets pending
 * operations finish; MPICH 4.0.2's MPI_Unpack then fails on the freed handle).  The packed
 * bytes are collie's own, moved between ranks as raw bytes like all its data. */
int cm_pack(bool pack, void *elems, size_t n, MPI_Datatype t, size_t size, MPI_Aint extent,
            char *tmp, const char *fn) {
    MPI_Comm comm = MPI_COMM_SELF;
    size_t step = size ? (size_t)INT_MAX / size : n, done = 0;
    while (done < n) {
        size_t k = n - done < step ? n - done : step;
        char *at = (char *)elems + (MPI_Aint)done * extent;
        int pos = 0, rc = pack ? PMPI_Pack(at, (int)k, t, tmp + done * size, (int)(k * size), &pos, comm)
                               : PMPI_Unpack(tmp + done * size, (int)(k * size), &pos, at, (int)k, t, comm);
        if (rc != MPI_SUCCESS || (size_t)pos != k * size)
            return collie_fail(COLLIE_ERR_ARG, "%s: MPI_%s of a %zu-byte piece gave %d bytes", fn,
                               pack ? "Pack" : "Unpack", k * size, pos);
        done += k;
    }
    return COLLIE_OK;
}

/* Packs (root) or unpacks (the others) count elements of type at c->recvbuf to or from
 * tmp, in pieces of at most INT_MAX bytes (MPI_Pack counts in int). */
static int pack_pieces(const cm_call *c, MPI_Datatype type, bool pack, char *tmp) {
    return cm_pack(pack, c->recvbuf, (size_t)c->count, type, c->mult, c->extent, tmp, c->fn);
}

int cm_packed_bcast(const cm_call *c) {
    char *tmp = malloc(c->ccount ? c->ccount : 1);
    if (!tmp)
        return collie_fail(COLLIE_ERR_NOMEM, "%s: no memory for %zu packed bytes", c->fn, c->ccount);
    bool root = c->cc->rank == c->root;
    int st = root ? pack_pieces(c, c->dtype, true, tmp) : COLLIE_OK;
    if (!st)
        st = collie_bcast(c->team, tmp, c->ccount, COLLIE_UINT8, c->root);
    if (!st && !root)
        st = pack_pieces(c, c->dtype, false, tmp);
    free(tmp);
    return st;
}

int cm_pack_setup(cm_call *c, bool now) {
    char *tmp = malloc(c->ccount ? c->ccount : 1);
    if (!tmp)
        return collie_fail(COLLIE_ERR_NOMEM, "%s: no memory for %zu packed bytes", c->fn, c->ccount);
    if (PMPI_Type_dup(c->dtype, &c->pack_type) != MPI_SUCCESS) {
        free(tmp);
        return collie_fail(COLLIE_ERR_NOMEM, "%s: MPI_Type_dup of the datatype failed", c->fn);
    }
    c->crecv = tmp;
    c->owns_pack = true;
    int st = now && c->cc->rank == c->root ? cm_pack_bcast(c, true) : COLLIE_OK;
    if (st)
        cm_pack_release(c);
    return st;
}

int cm_pack_bcast(const cm_call *c, bool pack) {
    return pack_pieces(c, c->pack_type, pack, c->crecv);
}

void cm_pack_release(cm_call *c) {
    if (!c->owns_pack)
        return;
    c->owns_pack = false;
    free(c->crecv);
    c->crecv = NULL;
    PMPI_Type_free(&c->pack_type);
}
