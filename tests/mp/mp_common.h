/*
 * mp_common.h — shared declarations of the multi-process tests (mp_collectives, run under
 * collie-run).  The reference side (mp_types.c, mp_reference.c) is plain scalar C that
 * never calls the library's kernels: every rank regenerates every rank's input from
 * (seed, rank, index) and combines the inputs in rank order.
 */
#ifndef MP_COMMON_H
#define MP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "collie.h"

/* ---- value kinds of the types under test ------------------------------------------- */
enum mp_kind {
    MK_INT, MK_UINT, MK_F16, MK_BF16, MK_F32, MK_F64,
    MK_PAIR_F32, MK_PAIR_F64, MK_PAIR_I32,
    MK_USER_MAT,     /* 2x2 matrix of uint32 mod 65521, non-commutative user op */
    MK_USER_COMM     /* {uint32 sum mod 65521, uint32 max}, commutative user op */
};

/* Pseudo op id for "the type's user-defined operation". */
#define MP_OP_USER COLLIE_OPID_BUILTIN_COUNT
#define MP_MODULUS 65521u

typedef struct mp_type {
    collie_dtype_t id;  /* filled at start for the user types (collie_dtype_bytes) */
    const char *name;
    int kind;           /* enum mp_kind */
    size_t size;        /* bytes per element */
    int bits;           /* integer width; float exact-integer limit is in mp_exact_limit */
} mp_type;

/* One element as the reference sees it: integers as 64-bit patterns (sign-extended for
 * signed types), floats as double, pairs as (d, idx), user types packed into u. */
typedef struct mp_val {
    uint64_t u;
    double d;
    int32_t idx;
} mp_val;

/* mp_types.c */
extern mp_type mp_types[];
extern const size_t mp_ntypes;
void mp_types_init(void);                       /* user dtype handles */
bool mp_op_defined(const mp_type *t, int opid);
collie_op_t mp_op_handle(const mp_type *t, int opid);
const char *mp_op_name(int opid);
mp_val mp_load(const mp_type *t, const void *buf, size_t i);
void mp_store(const mp_type *t, void *buf, size_t i, mp_val v);
bool mp_equal(const mp_type *t, mp_val a, mp_val b);
void mp_format(const mp_type *t, mp_val v, char *out, size_t outsz);
double mp_round(const mp_type *t, double x);    /* round to the type's precision */
double mp_exact_limit(const mp_type *t);        /* integers up to this are exact */
uint64_t mp_normalise_int(const mp_type *t, uint64_t u);  /* wrap to the type's width */
const mp_type *mp_type_by_kind(int kind);

/* mp_half.c: independent float16 / bfloat16 conversions */
uint16_t mp_f16_from_double(double x);
double mp_f16_to_double(uint16_t h);
uint16_t mp_bf16_from_double(double x);
double mp_bf16_to_double(uint16_t h);

/* mp_reference.c */
uint64_t mp_hash(uint64_t seed, int rank, size_t i, unsigned salt);
mp_val mp_gen(const mp_type *t, int opid, int rank, size_t i, int nranks, uint64_t seed);
mp_val mp_combine(const mp_type *t, int opid, mp_val a, mp_val b);
mp_val mp_expected(const mp_type *t, int opid, size_t i, int nranks, uint64_t seed);
int mp_user_ops_create(void);                   /* COLLIE_OK or the error */
void mp_user_ops_free(void);
long mp_user_op_misuse(void);                   /* calls with a wrong dtype/ctx */
collie_op_t mp_user_op(int kind);

/* ---- test context and reporting (mp_check.c) ------------------------------------------ */
enum mp_level { MP_QUICK = 0, MP_NORMAL = 1, MP_LONG = 2 };

typedef struct mp_ctx {
    collie_team_t *team;
    int rank, size;
    const char *algo;       /* forced algorithm spec, or "auto" */
    const char *dir;        /* per-run temporary directory (markers, result files) */
    int level;              /* enum mp_level */
    const char *filter;     /* run only sweep cases whose description contains this */
    int alloc;              /* enum mp_alloc: where the buffers of the cases come from */
    long checks, failures;
    int prints;
} mp_ctx;

/* MP_ALLOC_MIXED: each rank takes collie_alloc (registered, mapped by peers) or malloc
 * buffers by a hash of (case, rank), so calls mix both across ranks. */
enum mp_alloc { MP_ALLOC_MALLOC = 0, MP_ALLOC_COLLIE, MP_ALLOC_MIXED };

enum mp_coll { MPC_ALLREDUCE = 0, MPC_REDUCE, MPC_BCAST, MPC_BARRIER };

/* One call of a sweep. */
typedef struct mp_case {
    int coll;               /* enum mp_coll */
    const mp_type *t;
    int opid;               /* COLLIE_OPID_* or MP_OP_USER */
    size_t count;
    bool in_place;
    int root;
    uint64_t seed;
} mp_case;

void mp_fail(mp_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mp_die(mp_ctx *c, int status, const char *what) __attribute__((noreturn));
void mp_describe(const mp_case *k, char *out, size_t outsz);
void *mp_guarded_alloc(size_t bytes);           /* with guard zones */
void *mp_guarded_collie_alloc(collie_team_t *team, size_t bytes);  /* the same, registered */
void mp_guarded_free(void *p);
bool mp_guards_ok(const void *p, size_t bytes);
void mp_poison(void *buf, size_t bytes);
/* Compares buf[0..count) with the reference; reports the first few differences. */
void mp_verify_reduction(mp_ctx *c, const mp_case *k, const void *buf);

/* Buffers of one case: fill (inputs, poison), call, check (result, untouched send buffer,
 * guard zones).  bcast uses recv as its buffer. */
typedef struct mp_bufs {
    char *send, *recv, *copy;
    size_t bytes;
    bool in_place;          /* this rank passes COLLIE_IN_PLACE */
    collie_team_t *team;    /* set when send and recv came from collie_alloc */
} mp_bufs;
void mp_bufs_alloc(mp_ctx *c, const mp_case *k, mp_bufs *b);
void mp_bufs_fill(mp_ctx *c, const mp_case *k, mp_bufs *b);
void mp_bufs_check(mp_ctx *c, const mp_case *k, mp_bufs *b);
void mp_bufs_free(mp_bufs *b);
int mp_call(mp_ctx *c, const mp_case *k, mp_bufs *b);                 /* blocking */
int mp_call_start(mp_ctx *c, const mp_case *k, mp_bufs *b, collie_request_t **req);
int mp_call_init(mp_ctx *c, const mp_case *k, mp_bufs *b, collie_request_t **req);
void mp_run_case(mp_ctx *c, const mp_case *k);  /* alloc, fill, call, check, free */

/* mp_sweep.c */
void mp_sweep(mp_ctx *c, int coll);

/* mp_extra.c, mp_assoc.c */
/* Drives req with collie_test(req, 0) plus local work until done (dies on an error). */
int mp_wait_request(mp_ctx *c, collie_request_t *req, const char *what);
void mp_test_split_phase(mp_ctx *c, int coll);
void mp_test_persistent(mp_ctx *c, int coll);
void mp_test_in_flight(mp_ctx *c, int coll);
void mp_test_association(mp_ctx *c, int coll);

/* mp_barrier.c */
void mp_test_barrier(mp_ctx *c);

/* mp_algos.c (uses the internal registry) */
int mp_list_algorithms(const char *coll);
void mp_check_algorithm_used(mp_ctx *c, int coll);

#endif
