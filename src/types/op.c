/* op.c — reduction operation handles (built-in and user-defined) and the check of which
 * (op, datatype) pairs are defined, following MPI. */
#include <stdlib.h>
#include "base/base.h"
#include "types/types.h"

#define COMM COLLIE_OP_COMMUTATIVE
#define COMM_IDEM (COLLIE_OP_COMMUTATIVE | COLLIE_OP_IDEMPOTENT)

#define BUILTIN(var, ID, flags, name) \
    struct collie_op_s var = { COLLIE_OPID_##ID, flags, NULL, NULL, name, COLLIE_OP_MAGIC };
BUILTIN(collie_op_sum_, SUM, COMM, "sum")
BUILTIN(collie_op_prod_, PROD, COMM, "prod")
BUILTIN(collie_op_min_, MIN, COMM_IDEM, "min")
BUILTIN(collie_op_max_, MAX, COMM_IDEM, "max")
BUILTIN(collie_op_land_, LAND, COMM_IDEM, "land")
BUILTIN(collie_op_lor_, LOR, COMM_IDEM, "lor")
BUILTIN(collie_op_lxor_, LXOR, COMM, "lxor")
BUILTIN(collie_op_band_, BAND, COMM_IDEM, "band")
BUILTIN(collie_op_bor_, BOR, COMM_IDEM, "bor")
BUILTIN(collie_op_bxor_, BXOR, COMM, "bxor")
BUILTIN(collie_op_maxloc_, MAXLOC, COMM_IDEM, "maxloc")
BUILTIN(collie_op_minloc_, MINLOC, COMM_IDEM, "minloc")

collie_op_t collie_builtin_op(int id) {
    static struct collie_op_s *const ops[COLLIE_OPID_BUILTIN_COUNT] = {
        &collie_op_sum_, &collie_op_prod_, &collie_op_min_, &collie_op_max_,
        &collie_op_land_, &collie_op_lor_, &collie_op_lxor_, &collie_op_band_,
        &collie_op_bor_, &collie_op_bxor_, &collie_op_maxloc_, &collie_op_minloc_,
    };
    return id >= 0 && id < COLLIE_OPID_BUILTIN_COUNT ? ops[id] : NULL;
}

int collie_op_create(collie_user_fn fn, void *ctx, unsigned flags, collie_op_t *op) {
    if (!op)
        return collie_fail(COLLIE_ERR_ARG, "collie_op_create: op (output) is NULL");
    *op = NULL;
    if (!fn)
        return collie_fail(COLLIE_ERR_ARG, "collie_op_create: fn is NULL");
    if (flags & ~(unsigned)COMM_IDEM)
        return collie_fail(COLLIE_ERR_ARG, "collie_op_create: unknown flags 0x%x",
                           flags & ~(unsigned)COMM_IDEM);
    struct collie_op_s *p = malloc(sizeof *p);
    if (!p)
        return collie_fail(COLLIE_ERR_NOMEM, "collie_op_create: out of memory");
    *p = (struct collie_op_s){ -1, flags, fn, ctx, "user", COLLIE_OP_MAGIC };
    int st = collie_handle_add(p, COLLIE_HANDLE_OP);
    if (st) {
        free(p);
        return st;
    }
    *op = p;
    return COLLIE_OK;
}

/* By address only: a wild pointer is never dereferenced. */
static bool is_builtin(collie_op_t op) {
    for (int i = 0; i < COLLIE_OPID_BUILTIN_COUNT; i++)
        if (collie_builtin_op(i) == op)
            return true;
    return false;
}

void collie_op_free(collie_op_t op) {
    if (!op || is_builtin(op))
        return;
    if (!collie_handle_remove(op, COLLIE_HANDLE_OP)) {
        collie_fail(COLLIE_ERR_ARG, "collie_op_free: %p is not a live user operation (freed "
                    "twice?)", (void *)op);
        return;
    }
    op->magic = 0;
    free(op);
}

bool collie_op_valid(collie_op_t op) {
    return op && (is_builtin(op) || collie_handle_valid(op, COLLIE_HANDLE_OP));
}

const char *collie_op_name(collie_op_t op) {
    return collie_op_valid(op) ? op->name : "invalid";
}

bool collie_op_commutative(collie_op_t op) {
    return collie_op_valid(op) && (op->flags & COLLIE_OP_COMMUTATIVE);
}

bool collie_op_idempotent(collie_op_t op) {
    return collie_op_valid(op) && (op->flags & COLLIE_OP_IDEMPOTENT);
}

enum dtype_class { CLASS_INT, CLASS_FLOAT, CLASS_PAIR, CLASS_BYTES };

static enum dtype_class dtype_class(collie_dtype_t dtype) {
    if (dtype >= COLLIE_INT8 && dtype <= COLLIE_UINT64)
        return CLASS_INT;
    if (dtype >= COLLIE_FLOAT16 && dtype <= COLLIE_FLOAT64)
        return CLASS_FLOAT;
    if (dtype >= COLLIE_FLOAT32_INT32 && dtype <= COLLIE_INT32_INT32)
        return CLASS_PAIR;
    return CLASS_BYTES;
}

static bool builtin_defined(int id, enum dtype_class c) {
    switch (id) {
    case COLLIE_OPID_SUM: case COLLIE_OPID_PROD: case COLLIE_OPID_MIN: case COLLIE_OPID_MAX:
        return c == CLASS_INT || c == CLASS_FLOAT;
    case COLLIE_OPID_MAXLOC: case COLLIE_OPID_MINLOC:
        return c == CLASS_PAIR;
    default:
        return c == CLASS_INT;
    }
}

int collie_op_check(collie_op_t op, collie_dtype_t dtype) {
    if (!collie_op_valid(op))
        return collie_fail(COLLIE_ERR_ARG, "invalid op handle %p", (void *)op);
    if (!collie_dtype_valid(dtype))
        return collie_fail(COLLIE_ERR_ARG, "invalid datatype handle %llu",
                           (unsigned long long)dtype);
    if (op->id < 0)
        return COLLIE_OK;
    enum dtype_class c = dtype_class(dtype);
    if (c == CLASS_BYTES)
        return collie_fail(COLLIE_ERR_UNSUPPORTED,
                           "datatype %s needs a user-defined op (got op %s)",
                           collie_dtype_name(dtype), op->name);
    if (!builtin_defined(op->id, c))
        return collie_fail(COLLIE_ERR_UNSUPPORTED, "op %s is not defined for datatype %s",
                           op->name, collie_dtype_name(dtype));
    return COLLIE_OK;
}
