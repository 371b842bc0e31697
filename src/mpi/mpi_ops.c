/*
 * mpi_ops.c — MPI reduction ops as collie sees them.
 *
 * The twelve built-in reduction ops map one to one to collie's (same order as
 * COLLIE_OPID_*); which (type, op) pairs collie serves is decided per datatype
 * (mpi_types.c).  A user op (MPI_Op_create) runs as a collie user op that calls the MPI
 * function with the call's datatype; its commutativity is passed on, so non-commutative
 * ops are reduced in rank order.  User ops are served for predefined datatypes: one collie
 * op per (op, type), kept until MPI_Finalize (a freed MPI_Op handle may be reused by MPI,
 * a collie op pointer never is; MPI_Op_free marks the record dead, so a reused handle gets
 * a new record).  The lists and variants are shared by threads on different communicators
 * (MPI_THREAD_MULTIPLE) under ops_lock; records are never freed before MPI_Finalize, so
 * a collie op found under the lock stays valid after it.
 */
#include <pthread.h>
#include <stdlib.h>

#include "mpi/mpi_layer.h"
#include "types/types.h"

/* ---- built-in ops ------------------------------------------------------------------------ */

/* Address constants in Open MPI, integers in MPICH: both fit a static initializer. */
static const MPI_Op builtin_mpi[CM_NBUILTIN_OPS] = { MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND,
                                                     MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR,
                                                     MPI_MAXLOC, MPI_MINLOC };
static const collie_op_t builtin_collie[CM_NBUILTIN_OPS] = {
    COLLIE_SUM, COLLIE_PROD, COLLIE_MIN, COLLIE_MAX, COLLIE_LAND, COLLIE_LOR, COLLIE_LXOR,
    COLLIE_BAND, COLLIE_BOR, COLLIE_BXOR, COLLIE_MAXLOC, COLLIE_MINLOC };

int cm_builtin_op_index(MPI_Op op) {
    for (int i = 0; i < CM_NBUILTIN_OPS; i++)
        if (builtin_mpi[i] == op)
            return i;
    return -1;
}

collie_op_t cm_builtin_op(int index) {
    return index >= 0 && index < CM_NBUILTIN_OPS ? builtin_collie[index] : NULL;
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
static pthread_mutex_t ops_lock = PTHREAD_MUTEX_INITIALIZER;

static void call_user_fn(const void *in, void *inout, size_t count, collie_dtype_t dtype, void *ctx) {
    (void)dtype;
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

bool cm_is_user_op(MPI_Op op) {
    pthread_mutex_lock(&ops_lock);
    bool found = find_user_op(op) != NULL;
    pthread_mutex_unlock(&ops_lock);
    return found;
}

/* The collie op of (u, t), made on first use; the caller holds ops_lock. */
static collie_op_t variant_for(user_op *u, MPI_Datatype t) {
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

collie_op_t cm_user_op(MPI_Op op, MPI_Datatype t) {
    pthread_mutex_lock(&ops_lock);
    user_op *u = find_user_op(op);
    collie_op_t cop = u ? variant_for(u, t) : NULL;
    pthread_mutex_unlock(&ops_lock);
    return cop;
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
    bool found = false;
    pthread_mutex_lock(&ops_lock);
    for (user_op **pp = &user_ops; op && *pp; pp = &(*pp)->next)
        if ((*pp)->handle == *op) {   /* off the live list, so it stays short */
            user_op *u = *pp;
            *pp = u->next;
            u->live = false;
            u->next = dead_ops;
            dead_ops = u;
            found = true;
            break;
        }
    pthread_mutex_unlock(&ops_lock);
    if (found)
        cm_memo_forget();
    return PMPI_Op_free(op);
}

void cm_free_user_ops(void) {
    pthread_mutex_lock(&ops_lock);
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
    pthread_mutex_unlock(&ops_lock);
}
