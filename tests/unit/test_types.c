/*
 * test_types.c — unit test of layer 2 handles: datatype sizes and names, opaque byte
 * types and their limits, handle validity, built-in op names and flags, the (op, dtype)
 * definition matrix of collie_op_check with its error codes and messages, and
 * collie_op_create / collie_op_free argument handling.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/base.h"
#include "types/types.h"

static int failures;

static void check(int ok, const char *fmt, ...) {
    if (ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

struct expect_dtype {
    collie_dtype_t dt;
    size_t size;
    const char *name;
    char cls;   /* 'i' integer, 'f' floating, 'p' value/index pair */
};

static const struct expect_dtype dtypes[] = {
    { COLLIE_INT8, 1, "int8", 'i' },        { COLLIE_INT16, 2, "int16", 'i' },
    { COLLIE_INT32, 4, "int32", 'i' },      { COLLIE_INT64, 8, "int64", 'i' },
    { COLLIE_UINT8, 1, "uint8", 'i' },      { COLLIE_UINT16, 2, "uint16", 'i' },
    { COLLIE_UINT32, 4, "uint32", 'i' },    { COLLIE_UINT64, 8, "uint64", 'i' },
    { COLLIE_FLOAT16, 2, "float16", 'f' },  { COLLIE_BFLOAT16, 2, "bfloat16", 'f' },
    { COLLIE_FLOAT32, 4, "float32", 'f' },  { COLLIE_FLOAT64, 8, "float64", 'f' },
    { COLLIE_FLOAT32_INT32, 8, "float32_int32", 'p' },
    { COLLIE_FLOAT64_INT32, 16, "float64_int32", 'p' },
    { COLLIE_INT32_INT32, 8, "int32_int32", 'p' },
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

struct expect_op {
    collie_op_t op;
    const char *name;
    int commutative, idempotent;
    const char *defined_on;   /* classes of dtypes the op is defined for */
};

static const struct expect_op ops[] = {
    { COLLIE_SUM, "sum", 1, 0, "if" },      { COLLIE_PROD, "prod", 1, 0, "if" },
    { COLLIE_MIN, "min", 1, 1, "if" },      { COLLIE_MAX, "max", 1, 1, "if" },
    { COLLIE_LAND, "land", 1, 1, "i" },     { COLLIE_LOR, "lor", 1, 1, "i" },
    { COLLIE_LXOR, "lxor", 1, 0, "i" },     { COLLIE_BAND, "band", 1, 1, "i" },
    { COLLIE_BOR, "bor", 1, 1, "i" },       { COLLIE_BXOR, "bxor", 1, 0, "i" },
    { COLLIE_MAXLOC, "maxloc", 1, 1, "p" }, { COLLIE_MINLOC, "minloc", 1, 1, "p" },
};
#define NOPS (sizeof ops / sizeof ops[0])

static void test_builtin_dtypes(void) {
    for (size_t i = 0; i < NDTYPES; i++) {
        const struct expect_dtype *e = &dtypes[i];
        check(collie_dtype_valid(e->dt), "%s should be valid", e->name);
        check(collie_dtype_size(e->dt) == e->size, "size of %s: %zu, expected %zu", e->name,
              collie_dtype_size(e->dt), e->size);
        check(strcmp(collie_dtype_name(e->dt), e->name) == 0, "name of %s: '%s'", e->name,
              collie_dtype_name(e->dt));
    }
    check(NDTYPES == COLLIE_DTYPE_BUILTIN_COUNT - 1, "dtype table covers every built-in");
    check(!collie_dtype_valid(COLLIE_DTYPE_INVALID), "COLLIE_DTYPE_INVALID must be invalid");
    check(!collie_dtype_valid(COLLIE_DTYPE_BUILTIN_COUNT), "BUILTIN_COUNT must be invalid");
    check(collie_dtype_size(COLLIE_DTYPE_INVALID) == 0, "size of the invalid type is 0");
    check(sizeof(struct collie_float64_int32) == 16, "float64_int32 struct is 16 bytes");
}

static void test_bytes_dtypes(void) {
    check(collie_dtype_bytes(0) == COLLIE_DTYPE_INVALID, "bytes(0) must be invalid");
    check(collie_dtype_bytes(COLLIE_DTYPE_BYTES_MAX + 1) == COLLIE_DTYPE_INVALID,
          "bytes(MAX+1) must be invalid");
    check(collie_dtype_bytes((size_t)-1) == COLLIE_DTYPE_INVALID, "bytes(SIZE_MAX) invalid");
    const size_t sizes[] = { 1, 3, 12, 16, 4096, COLLIE_DTYPE_BYTES_MAX };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        collie_dtype_t dt = collie_dtype_bytes(sizes[i]);
        char name[32];
        snprintf(name, sizeof name, "bytes%zu", sizes[i]);
        check(dt == (COLLIE_DTYPE_BYTES_FLAG | sizes[i]), "bytes(%zu) handle", sizes[i]);
        check(collie_dtype_valid(dt), "bytes(%zu) should be valid", sizes[i]);
        check(collie_dtype_size(dt) == sizes[i], "size of bytes(%zu)", sizes[i]);
        check(strcmp(collie_dtype_name(dt), name) == 0, "name of bytes(%zu): '%s'", sizes[i],
              collie_dtype_name(dt));
    }
    const char *a = collie_dtype_name(collie_dtype_bytes(7));
    const char *b = collie_dtype_name(collie_dtype_bytes(9));
    check(strcmp(a, "bytes7") == 0 && strcmp(b, "bytes9") == 0,
          "two byte-type names usable together: '%s' '%s'", a, b);
    const collie_dtype_t bad[] = {
        123, COLLIE_DTYPE_BYTES_FLAG, COLLIE_DTYPE_BYTES_FLAG | (COLLIE_DTYPE_BYTES_MAX + 1),
        COLLIE_DTYPE_BYTES_FLAG | ((collie_dtype_t)1 << 41) | 4, ((collie_dtype_t)1 << 41) | 4,
        ~(collie_dtype_t)0,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        check(!collie_dtype_valid(bad[i]), "handle 0x%llx must be invalid",
              (unsigned long long)bad[i]);
        check(collie_dtype_size(bad[i]) == 0, "size of bad handle 0x%llx is 0",
              (unsigned long long)bad[i]);
        check(strcmp(collie_dtype_name(bad[i]), "invalid") == 0, "name of bad handle");
    }
}

static void test_builtin_ops(void) {
    for (size_t i = 0; i < NOPS; i++) {
        const struct expect_op *e = &ops[i];
        check(collie_op_valid(e->op), "%s valid", e->name);
        check(strcmp(collie_op_name(e->op), e->name) == 0, "op name '%s' expected '%s'",
              collie_op_name(e->op), e->name);
        check(collie_op_commutative(e->op) == e->commutative, "%s commutative", e->name);
        check(collie_op_idempotent(e->op) == e->idempotent, "%s idempotent", e->name);
        check(e->op->id == (int)i && collie_builtin_op((int)i) == e->op, "%s id", e->name);
    }
    check(collie_builtin_op(-1) == NULL && collie_builtin_op(COLLIE_OPID_BUILTIN_COUNT) == NULL,
          "collie_builtin_op out of range gives NULL");
    check(!collie_op_valid(NULL), "NULL op invalid");
    check(strcmp(collie_op_name(NULL), "invalid") == 0, "name of NULL op");
    struct collie_op_s fake = *COLLIE_SUM;
    fake.magic = 0xdeadbeef;
    check(!collie_op_valid(&fake), "op with a wrong magic is invalid");
    check(!collie_op_commutative(&fake) && !collie_op_idempotent(&fake), "flags of bad op");
    collie_op_free(COLLIE_SUM);
    collie_op_free(NULL);
    check(collie_op_valid(COLLIE_SUM), "freeing a built-in is ignored");
}

static void dummy_fn(const void *in, void *inout, size_t count, collie_dtype_t dt, void *ctx) {
    (void)in, (void)inout, (void)count, (void)dt, (void)ctx;
}

static void test_op_create(void) {
    collie_op_t op = COLLIE_SUM;
    check(collie_op_create(NULL, NULL, 0, &op) == COLLIE_ERR_ARG && op == NULL,
          "create with NULL fn: ERR_ARG and *op = NULL");
    check(strstr(collie_last_error(), "fn") != NULL, "message names fn: '%s'",
          collie_last_error());
    check(collie_op_create(dummy_fn, NULL, 0, NULL) == COLLIE_ERR_ARG, "create with NULL out");
    check(collie_op_create(dummy_fn, NULL, 4, &op) == COLLIE_ERR_ARG && op == NULL,
          "create with unknown flags");
    check(strstr(collie_last_error(), "flags") != NULL, "message names flags: '%s'",
          collie_last_error());
    const unsigned flag_sets[] = { 0, COLLIE_OP_COMMUTATIVE, COLLIE_OP_IDEMPOTENT,
                                   COLLIE_OP_COMMUTATIVE | COLLIE_OP_IDEMPOTENT };
    for (int i = 0; i < 4; i++) {
        int ctx = 0;
        check(collie_op_create(dummy_fn, &ctx, flag_sets[i], &op) == COLLIE_OK, "create");
        check(collie_op_valid(op) && op->id < 0 && op->fn == dummy_fn && op->ctx == &ctx,
              "created op fields");
        check(strcmp(collie_op_name(op), "user") == 0, "user op name");
        check(collie_op_commutative(op) == !!(flag_sets[i] & COLLIE_OP_COMMUTATIVE),
              "user op commutative flag %u", flag_sets[i]);
        check(collie_op_idempotent(op) == !!(flag_sets[i] & COLLIE_OP_IDEMPOTENT),
              "user op idempotent flag %u", flag_sets[i]);
        collie_op_free(op);
    }
}

static int expect_defined(const struct expect_op *e, const struct expect_dtype *d) {
    return strchr(e->defined_on, d->cls) != NULL;
}

static void check_error(int rc, int want_rc, const char *want_msg, const char *what) {
    check(rc == want_rc, "%s: status %d, expected %d", what, rc, want_rc);
    check(strstr(collie_last_error(), want_msg) != NULL, "%s: message '%s' lacks '%s'", what,
          collie_last_error(), want_msg);
}

static void test_op_check_matrix(void) {
    char what[128], msg[128];
    for (size_t o = 0; o < NOPS; o++) {
        for (size_t d = 0; d < NDTYPES; d++) {
            int rc = collie_op_check(ops[o].op, dtypes[d].dt);
            snprintf(what, sizeof what, "op_check(%s, %s)", ops[o].name, dtypes[d].name);
            if (expect_defined(&ops[o], &dtypes[d])) {
                check(rc == COLLIE_OK, "%s should be OK, got %d (%s)", what, rc,
                      collie_last_error());
                continue;
            }
            snprintf(msg, sizeof msg, "op %s is not defined for datatype %s", ops[o].name,
                     dtypes[d].name);
            check_error(rc, COLLIE_ERR_UNSUPPORTED, msg, what);
        }
        check_error(collie_op_check(ops[o].op, collie_dtype_bytes(12)), COLLIE_ERR_UNSUPPORTED,
                    "datatype bytes12 needs a user-defined op", ops[o].name);
        check_error(collie_op_check(ops[o].op, 123), COLLIE_ERR_ARG,
                    "invalid datatype handle 123", ops[o].name);
    }
    collie_op_t user;
    check(collie_op_create(dummy_fn, NULL, 0, &user) == COLLIE_OK, "create user op");
    for (size_t d = 0; d < NDTYPES; d++)
        check(collie_op_check(user, dtypes[d].dt) == COLLIE_OK, "user op on %s", dtypes[d].name);
    check(collie_op_check(user, collie_dtype_bytes(1)) == COLLIE_OK, "user op on bytes1");
    check(collie_op_check(user, collie_dtype_bytes(COLLIE_DTYPE_BYTES_MAX)) == COLLIE_OK,
          "user op on bytes(MAX)");
    check_error(collie_op_check(user, COLLIE_DTYPE_INVALID), COLLIE_ERR_ARG,
                "invalid datatype handle 0", "user op on the invalid type");
    collie_op_free(user);
    check_error(collie_op_check(NULL, COLLIE_INT32), COLLIE_ERR_ARG, "invalid op handle",
                "NULL op");
    struct collie_op_s fake = *COLLIE_MAX;
    fake.magic = 1;
    check_error(collie_op_check(&fake, COLLIE_INT32), COLLIE_ERR_ARG, "invalid op handle",
                "op with a bad magic");
}

int main(void) {
    collie_log_level_ = -1;   /* the expected errors would otherwise be logged */
    test_builtin_dtypes();
    test_bytes_dtypes();
    test_builtin_ops();
    test_op_create();
    test_op_check_matrix();
    if (failures) {
        fprintf(stderr, "test_types: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_types: ok\n");
    return 0;
}
