/*
 * mpi_types.c — MPI datatypes and reduction ops as collie sees them.
 *
 * Reductions: a predefined MPI type maps to the collie type of the same C layout (the
 * integers by size and signedness, float, double, the pair types MPI_FLOAT_INT,
 * MPI_DOUBLE_INT, MPI_2INT for MAXLOC/MINLOC, MPI_BYTE for the bitwise ops, MPI_C_BOOL for
 * the logical ops); a derived type made only of MPI_Type_contiguous / MPI_Type_dup over
 * such a type flattens to it.  Built-in ops map one to one; collie_op_check decides
 * whether the pair (type, op) is defined, exactly as MPI does, so undefined pairs go to
 * PMPI, which reports the error its own way.  A user op (MPI_Op_create) runs as a collie
 * user op that calls the MPI function with the call's datatype; its commutativity is
 * passed on, so non-commutative ops are reduced in rank order.  User ops are served for
 * predefined datatypes (one collie op per (op, type), kept until MPI_Finalize: a freed
 * MPI_Op handle may be reused by MPI, a collie op pointer never is).
 *
 * Broadcast moves bytes: any type whose data is one contiguous block (size == extent ==
 * true extent, true lower bound 0) is sent as count * size bytes.
 *
 * Everything else (MPI_LONG_DOUBLE reductions, vectors, structs with holes, ...) goes to
 * PMPI with the reason.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_layer.h"
#include "types/types.h"

typedef struct type_entry {
    MPI_Datatype mpi;
    collie_dtype_t collie;
} type_entry;

static collie_dtype_t int_type(size_t bytes, bool is_signed) {
    static const collie_dtype_t s[9] = { 0, COLLIE_INT8, COLLIE_INT16, 0, COLLIE_INT32, 0, 0, 0, COLLIE_INT64 };
    static const collie_dtype_t u[9] = { 0, COLLIE_UINT8, COLLIE_UINT16, 0, COLLIE_UINT32, 0, 0, 0, COLLIE_UINT64 };
    return bytes <= 8 ? (is_signed ? s[bytes] : u[bytes]) : COLLIE_DTYPE_INVALID;
}

/* The predefined types collie reduces (MPI's handles are not constants in Open MPI). */
static collie_dtype_t predefined(MPI_Datatype t) {
    const type_entry table[] = {
        { MPI_SIGNED_CHAR, COLLIE_INT8 }, { MPI_UNSIGNED_CHAR, COLLIE_UINT8 },
        { MPI_SHORT, int_type(sizeof(short), true) },
        { MPI_UNSIGNED_SHORT, int_type(sizeof(short), false) },
        { MPI_INT, int_type(sizeof(int), true) }, { MPI_UNSIGNED, int_type(sizeof(int), false) },
        { MPI_LONG, int_type(sizeof(long), true) },
        { MPI_UNSIGNED_LONG, int_type(sizeof(long), false) },
        { MPI_LONG_LONG_INT, int_type(sizeof(long long), true) },
        { MPI_LONG_LONG, int_type(sizeof(long long), true) },
        { MPI_UNSIGNED_LONG_LONG, int_type(sizeof(long long), false) },
        { MPI_INT8_T, COLLIE_INT8 }, { MPI_INT16_T, COLLIE_INT16 },
        { MPI_INT32_T, COLLIE_INT32 }, { MPI_INT64_T, COLLIE_INT64 },
        { MPI_UINT8_T, COLLIE_UINT8 }, { MPI_UINT16_T, COLLIE_UINT16 },
        { MPI_UINT32_T, COLLIE_UINT32 }, { MPI_UINT64_T, COLLIE_UINT64 },
        { MPI_AINT, int_type(sizeof(MPI_Aint), true) },
        { MPI_OFFSET, int_type(sizeof(MPI_Offset), true) },
        { MPI_COUNT, int_type(sizeof(MPI_Count), true) },
        { MPI_FLOAT, COLLIE_FLOAT32 }, { MPI_DOUBLE, COLLIE_FLOAT64 },
        { MPI_FLOAT_INT, COLLIE_FLOAT32_INT32 }, { MPI_DOUBLE_INT, COLLIE_FLOAT64_INT32 },
        { MPI_2INT, COLLIE_INT32_INT32 },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].mpi == t)
            return table[i].collie;
    return COLLIE_DTYPE_INVALID;
}

static bool is_bitwise(MPI_Op op) { return op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR; }
static bool is_logical(MPI_Op op) { return op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR; }

/* MPI_BYTE and MPI_C_BOOL reduce only with some ops: other pairs are MPI errors. */
static collie_dtype_t restricted(MPI_Datatype t, MPI_Op op) {
    if (t == MPI_BYTE)
        return is_bitwise(op) ? COLLIE_UINT8 : COLLIE_DTYPE_INVALID;
    if (t == MPI_C_BOOL && sizeof(_Bool) == 1)
        return is_logical(op) ? COLLIE_UINT8 : COLLIE_DTYPE_INVALID;
    return COLLIE_DTYPE_INVALID;
}

static bool is_named(MPI_Datatype t) {
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

/* Flattens t (count elements) to a predefined type; false if it is not contiguous/dup
 * of one.  Depth-limited against pathological nesting. */
static bool flatten(MPI_Datatype t, size_t count, MPI_Op op, collie_dtype_t *out, size_t *n,
                    int depth) {
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        *out = predefined(t);
        if (!*out)
            *out = restricted(t, op);
        *n = count;
        return *out != COLLIE_DTYPE_INVALID;
    }
    if ((combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP) || depth > 8 ||
        ni > 1 || na > 0 || nd != 1)
        return false;
    int ints[1] = { 1 };
    MPI_Aint addrs[1];
    MPI_Datatype inner;
    PMPI_Type_get_contents(t, ni, na, nd, ints, addrs, &inner);
    size_t reps = combiner == MPI_COMBINER_CONTIGUOUS ? (size_t)ints[0] : 1;
    bool ok = flatten(inner, count * reps, op, out, n, depth + 1);
    if (!is_named(inner))
        PMPI_Type_free(&inner);
    return ok;
}

/* ---- user ops --------------------------------------------------------------------------- */

typedef struct user_variant {
    MPI_Datatype dtype;            /* a predefined type */
    MPI_User_function *fn;
    collie_op_t op;
    struct user_variant *next;
} user_variant;

typedef struct user_op {
    MPI_Op handle;
    MPI_User_function *fn;
    bool commute;
    bool live;                     /* false after MPI_Op_free */
    user_variant *variants;
    struct user_op *next;
} user_op;

static user_op *user_ops;   /* live ones: searched for every reduction */
static user_op *dead_ops;   /* freed by the program, kept until MPI_Finalize */
/* The lists and their variants may be touched by threads on different communicators
 * (MPI_THREAD_MULTIPLE); records are never freed before MPI_Finalize. */
static pthread_mutex_t ops_lock = PTHREAD_MUTEX_INITIALIZER;

static void call_user_fn(const void *in, void *inout, size_t count, collie_dtype_t dtype, void *ctx) {
    user_variant *v = ctx;
    int len = (int)count;
    MPI_Datatype t = v->dtype;
    v->fn((void *)in, inout, &len, &t);
}

static user_op *find_user_op(MPI_Op op) {
    for (user_op *u = user_ops; u; u = u->next)
        if (u->live && u->handle == op)
            return u;
    return NULL;
}

static collie_op_t user_variant_for(user_op *u, MPI_Datatype t) {
    for (user_variant *v = u->variants; v; v = v->next)
        if (v->dtype == t)
            return v->op;
    user_variant *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->dtype = t;
    v->fn = u->fn;
    if (collie_op_create(call_user_fn, v, u->commute ? COLLIE_OP_COMMUTATIVE : 0, &v->op)) {
        free(v);
        return NULL;
    }
    /* Made lazily, so the creation order may differ between ranks (sub-communicators):
     * collie's identity check treats every MPI user op alike (MPI cannot check them). */
    collie_op_set_identity(v->op, COLLIE_OPID_USER_ANY);
    v->next = u->variants;
    u->variants = v;
    return v->op;
}

int MPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op) {
    int rc = PMPI_Op_create(fn, commute, op);
    if (rc != MPI_SUCCESS)
        return rc;
    user_op *u = calloc(1, sizeof *u);
    if (u) {   /* without the record the op simply goes to PMPI */
        pthread_mutex_lock(&ops_lock);
        *u = (user_op){ *op, fn, commute != 0, true, NULL, user_ops };
        user_ops = u;
        pthread_mutex_unlock(&ops_lock);
    }
    return rc;
}

int MPI_Op_free(MPI_Op *op) {
    pthread_mutex_lock(&ops_lock);
    for (user_op **pp = &user_ops; op && *pp; pp = &(*pp)->next)
        if ((*pp)->handle == *op) {   /* off the live list, so it stays short */
            user_op *u = *pp;
            *pp = u->next;
            u->live = false;
            u->next = dead_ops;
            dead_ops = u;
            break;
        }
    pthread_mutex_unlock(&ops_lock);
    return PMPI_Op_free(op);
}

void cm_free_user_ops(void) {
    while (user_ops || dead_ops) {
        user_op **list = user_ops ? &user_ops : &dead_ops;
        user_op *u = *list;
        *list = u->next;
        while (u->variants) {
            user_variant *v = u->variants;
            u->variants = v->next;
            collie_op_free(v->op);
            free(v);
        }
        free(u);
    }
}

/* ---- mapping calls ---------------------------------------------------------------------- */

static collie_op_t builtin_op(MPI_Op op) {
    const MPI_Op mpi[] = { MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, MPI_LXOR,
                           MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC };
    const collie_op_t cop[] = { COLLIE_SUM, COLLIE_PROD, COLLIE_MIN, COLLIE_MAX, COLLIE_LAND,
                                COLLIE_LOR, COLLIE_LXOR, COLLIE_BAND, COLLIE_BOR, COLLIE_BXOR,
                                COLLIE_MAXLOC, COLLIE_MINLOC };
    for (size_t i = 0; i < sizeof mpi / sizeof mpi[0]; i++)
        if (mpi[i] == op)
            return cop[i];
    return NULL;
}

static bool map_user_op(cm_call *c, user_op *u, const char **why) {
    MPI_Aint lb, extent;
    if (!is_named(c->dtype)) {
        *why = "user op on a derived datatype";
        return false;
    }
    PMPI_Type_get_extent(c->dtype, &lb, &extent);
    pthread_mutex_lock(&ops_lock);
    c->cop = user_variant_for(u, c->dtype);
    pthread_mutex_unlock(&ops_lock);
    c->cdtype = collie_dtype_bytes((size_t)extent);
    c->ccount = (size_t)c->count;
    if (!c->cop || extent <= 0 || lb != 0 || !c->cdtype) {
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
    pthread_mutex_lock(&ops_lock);
    user_op *u = find_user_op(c->op);
    pthread_mutex_unlock(&ops_lock);
    if (u)
        return map_user_op(c, u, why);
    c->cop = builtin_op(c->op);
    if (!c->cop) {
        *why = "op unknown to collie";
        return false;
    }
    if (!flatten(c->dtype, (size_t)c->count, c->op, &c->cdtype, &c->ccount, 0)) {
        *why = "datatype collie cannot flatten";
        return false;
    }
    if (collie_op_check(c->cop, c->cdtype) != COLLIE_OK) {
        *why = "op not defined for this datatype";
        return false;
    }
    return true;
}

bool cm_map_bcast(cm_call *c, const char **why) {
    int size = 0;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (c->count < 0) {
        *why = "negative count";
        return false;
    }
    PMPI_Type_size(c->dtype, &size);
    PMPI_Type_get_extent(c->dtype, &lb, &extent);
    PMPI_Type_get_true_extent(c->dtype, &true_lb, &true_extent);
    if (size <= 0 || lb != 0 || true_lb != 0 || extent != size || true_extent != size) {
        *why = "datatype is not one contiguous block";
        return false;
    }
    c->cdtype = COLLIE_UINT8;
    c->ccount = (size_t)c->count * (size_t)size;
    return true;
}
