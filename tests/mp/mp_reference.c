/*
 * mp_reference.c — inputs that make mistakes visible, and the reference reduction.
 *
 * Every input element is a function of (seed, rank, index, op), so any rank can recompute
 * any other rank's input.  Values are integer-valued and small enough that every partial
 * result is exact in the type (so any association gives the same answer), except where
 * integer wrap-around is well defined (unsigned types) and the reference wraps the same
 * way.  The reference combines ranks 0, 1, …, P-1 left to right in plain scalar C.
 * Also here: the two user-defined operations (2x2 matrix product mod 65521,
 * non-commutative; {sum mod 65521, max}, commutative).
 */
#include <string.h>
#include "mp_common.h"

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t mp_hash(uint64_t seed, int rank, size_t i, unsigned salt)
{
    return mix64(seed * 0xd6e8feb86659fd93ull + (uint64_t)(uint32_t)rank * 0xa0761d6478bd642full +
                 (uint64_t)salt * 0xe7037ed1a0b428dbull + (uint64_t)i * 0x8ebc6af09c88c6e3ull);
}

/* PROD inputs for signed/float types: 1 except at three ranks chosen per index
 * (x2, x3, sign flip), so the product stays within ±6. */
static int prod_factor(uint64_t seed, int rank, size_t i, int nranks, bool with_sign)
{
    int f = 1;
    if (rank == (int)(mp_hash(seed, -1, i, 101) % (uint64_t)nranks))
        f *= 2;
    if (rank == (int)(mp_hash(seed, -1, i, 102) % (uint64_t)nranks))
        f *= 3;
    if (with_sign && rank == (int)(mp_hash(seed, -1, i, 103) % (uint64_t)nranks))
        f = -f;
    return f;
}

static uint64_t gen_int(const mp_type *t, int opid, uint64_t h, int rank, size_t i,
                        int nranks, uint64_t seed)
{
    bool sign = t->kind == MK_INT;
    uint64_t nonzero = (h >> 8) | 1u;
    uint64_t m = (((uint64_t)1 << (t->bits - 1)) - 1) / (2u * (uint64_t)nranks);
    switch (opid) {
    case COLLIE_OPID_SUM: return sign ? h % (2 * m + 1) - m : h;
    case COLLIE_OPID_PROD:
        return sign ? (uint64_t)(int64_t)prod_factor(seed, rank, i, nranks, true) : h | 1u;
    case COLLIE_OPID_LAND: return h % 8 == 0 ? 0 : nonzero;
    case COLLIE_OPID_LOR: return h % 4 != 0 ? 0 : nonzero;
    case COLLIE_OPID_LXOR: return h % 2 ? 0 : nonzero;
    case COLLIE_OPID_BAND: return h | mix64(h + 1) | mix64(h + 2) | mix64(h + 3);
    case COLLIE_OPID_BOR: return h & mix64(h + 1) & mix64(h + 2) & mix64(h + 3);
    default: return h;    /* min, max, bxor: the full range */
    }
}

static double gen_float(const mp_type *t, int opid, uint64_t h, int rank, size_t i,
                        int nranks, uint64_t seed)
{
    uint64_t lim = (uint64_t)mp_exact_limit(t);
    uint64_t m = lim / (2u * (uint64_t)nranks);
    if (m == 0)
        m = 1;
    switch (opid) {
    case COLLIE_OPID_SUM: return (double)(h % (2 * m + 1)) - (double)m;
    case COLLIE_OPID_PROD: return prod_factor(seed, rank, i, nranks, true);
    default: return (double)(h % lim) - (double)(lim / 2);
    }
}

mp_val mp_gen(const mp_type *t, int opid, int rank, size_t i, int nranks, uint64_t seed)
{
    uint64_t h = mp_hash(seed, rank, i, (unsigned)opid);
    mp_val v = { 0, 0.0, 0 };
    switch (t->kind) {
    case MK_INT: case MK_UINT:
        v.u = mp_normalise_int(t, gen_int(t, opid, h, rank, i, nranks, seed));
        break;
    case MK_F16: case MK_BF16: case MK_F32: case MK_F64:
        v.d = gen_float(t, opid, h, rank, i, nranks, seed);
        break;
    case MK_USER_MAT:
        for (int j = 0; j < 4; j++)
            v.u |= ((h >> (16 * j)) % 0x10000u % MP_MODULUS) << (16 * j);
        break;
    case MK_USER_COMM:
        v.u = (h % MP_MODULUS) | (h >> 32 << 32);
        break;
    default:              /* pairs: few distinct values so ties (lowest index wins) occur */
        v.d = (double)(h % (3u * (uint64_t)nranks + 1)) - nranks;
        v.idx = (int32_t)((h >> 24) % 1000u);
        break;
    }
    return v;
}

static uint64_t combine_int(const mp_type *t, int opid, uint64_t a, uint64_t b)
{
    bool sign = t->kind == MK_INT;
    bool less = sign ? (int64_t)a < (int64_t)b : a < b;
    switch (opid) {
    case COLLIE_OPID_SUM: return mp_normalise_int(t, a + b);
    case COLLIE_OPID_PROD: return mp_normalise_int(t, a * b);
    case COLLIE_OPID_MIN: return less ? a : b;
    case COLLIE_OPID_MAX: return less ? b : a;
    case COLLIE_OPID_LAND: return (a != 0) && (b != 0);
    case COLLIE_OPID_LOR: return (a != 0) || (b != 0);
    case COLLIE_OPID_LXOR: return (a != 0) != (b != 0);
    case COLLIE_OPID_BAND: return a & b;
    case COLLIE_OPID_BOR: return a | b;
    default: return a ^ b;
    }
}

static double combine_float(const mp_type *t, int opid, double a, double b)
{
    switch (opid) {
    case COLLIE_OPID_SUM: return mp_round(t, a + b);
    case COLLIE_OPID_PROD: return mp_round(t, a * b);
    case COLLIE_OPID_MIN: return b < a ? b : a;
    default: return b > a ? b : a;
    }
}

/* MAXLOC/MINLOC (MPI semantics): the better value wins; on a tie the lower index. */
static mp_val combine_pair(int opid, mp_val a, mp_val b)
{
    bool a_better = opid == COLLIE_OPID_MAXLOC ? a.d > b.d : a.d < b.d;
    bool b_better = opid == COLLIE_OPID_MAXLOC ? b.d > a.d : b.d < a.d;
    if (a_better)
        return a;
    if (b_better)
        return b;
    a.idx = a.idx < b.idx ? a.idx : b.idx;
    return a;
}

static uint64_t mat_entry(uint64_t m, int j)
{
    return (m >> (16 * j)) & 0xffff;
}

/* Packed 2x2 matrices [e0 e1; e2 e3]: returns a x b mod 65521. */
static uint64_t mat_mul(uint64_t a, uint64_t b)
{
    uint64_t c[4];
    c[0] = mat_entry(a, 0) * mat_entry(b, 0) + mat_entry(a, 1) * mat_entry(b, 2);
    c[1] = mat_entry(a, 0) * mat_entry(b, 1) + mat_entry(a, 1) * mat_entry(b, 3);
    c[2] = mat_entry(a, 2) * mat_entry(b, 0) + mat_entry(a, 3) * mat_entry(b, 2);
    c[3] = mat_entry(a, 2) * mat_entry(b, 1) + mat_entry(a, 3) * mat_entry(b, 3);
    uint64_t r = 0;
    for (int j = 0; j < 4; j++)
        r |= (c[j] % MP_MODULUS) << (16 * j);
    return r;
}

static uint64_t summax(uint64_t a, uint64_t b, uint32_t modulus)
{
    uint64_t sum = ((a & 0xffffffffu) + (b & 0xffffffffu)) % modulus;
    uint64_t max = (a >> 32) > (b >> 32) ? (a >> 32) : (b >> 32);
    return sum | max << 32;
}

mp_val mp_combine(const mp_type *t, int opid, mp_val a, mp_val b)
{
    switch (t->kind) {
    case MK_INT: case MK_UINT: a.u = combine_int(t, opid, a.u, b.u); return a;
    case MK_F16: case MK_BF16: case MK_F32: case MK_F64:
        a.d = combine_float(t, opid, a.d, b.d);
        return a;
    case MK_USER_MAT: a.u = mat_mul(a.u, b.u); return a;
    case MK_USER_COMM: a.u = summax(a.u, b.u, MP_MODULUS); return a;
    default: return combine_pair(opid, a, b);
    }
}

mp_val mp_expected(const mp_type *t, int opid, size_t i, int nranks, uint64_t seed)
{
    mp_val acc = mp_gen(t, opid, 0, i, nranks, seed);
    for (int r = 1; r < nranks; r++)
        acc = mp_combine(t, opid, acc, mp_gen(t, opid, r, i, nranks, seed));
    return acc;
}

/* ---- the user-defined operations handed to the library ----------------------------- */
static uint32_t comm_modulus = MP_MODULUS;
static int mat_ctx_tag;
static collie_op_t mat_op, comm_op;
static long misuse;

static void mat_fn(const void *in, void *inout, size_t count, collie_dtype_t dtype, void *ctx)
{
    const mp_type *t = mp_type_by_kind(MK_USER_MAT);
    if (dtype != t->id || ctx != &mat_ctx_tag)
        misuse++;
    for (size_t k = 0; k < count; k++) {
        mp_val a = mp_load(t, in, k), b = mp_load(t, inout, k);
        b.u = mat_mul(a.u, b.u);
        mp_store(t, inout, k, b);
    }
}

static void comm_fn(const void *in, void *inout, size_t count, collie_dtype_t dtype, void *ctx)
{
    const mp_type *t = mp_type_by_kind(MK_USER_COMM);
    if (dtype != t->id || ctx != &comm_modulus)
        misuse++;
    uint32_t modulus = *(const uint32_t *)ctx;
    for (size_t k = 0; k < count; k++) {
        mp_val a = mp_load(t, in, k), b = mp_load(t, inout, k);
        b.u = summax(a.u, b.u, modulus);
        mp_store(t, inout, k, b);
    }
}

int mp_user_ops_create(void)
{
    int st = collie_op_create(mat_fn, &mat_ctx_tag, 0, &mat_op);
    if (st == COLLIE_OK)
        st = collie_op_create(comm_fn, &comm_modulus, COLLIE_OP_COMMUTATIVE, &comm_op);
    return st;
}

void mp_user_ops_free(void)
{
    collie_op_free(mat_op);
    collie_op_free(comm_op);
}

long mp_user_op_misuse(void)
{
    return misuse;
}

collie_op_t mp_user_op(int kind)
{
    return kind == MK_USER_MAT ? mat_op : comm_op;
}
