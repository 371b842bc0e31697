/*
 * mp_types.c — the table of datatypes under test and the reference's view of one element:
 * load/store/compare/format by plain scalar C, independent of the library's kernels.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "mp_common.h"

mp_type mp_types[] = {
    { COLLIE_INT8, "int8", MK_INT, 1, 8 },
    { COLLIE_INT16, "int16", MK_INT, 2, 16 },
    { COLLIE_INT32, "int32", MK_INT, 4, 32 },
    { COLLIE_INT64, "int64", MK_INT, 8, 64 },
    { COLLIE_UINT8, "uint8", MK_UINT, 1, 8 },
    { COLLIE_UINT16, "uint16", MK_UINT, 2, 16 },
    { COLLIE_UINT32, "uint32", MK_UINT, 4, 32 },
    { COLLIE_UINT64, "uint64", MK_UINT, 8, 64 },
    { COLLIE_FLOAT16, "float16", MK_F16, 2, 0 },
    { COLLIE_BFLOAT16, "bfloat16", MK_BF16, 2, 0 },
    { COLLIE_FLOAT32, "float32", MK_F32, 4, 0 },
    { COLLIE_FLOAT64, "float64", MK_F64, 8, 0 },
    { COLLIE_FLOAT32_INT32, "float32_int32", MK_PAIR_F32, 8, 0 },
    { COLLIE_FLOAT64_INT32, "float64_int32", MK_PAIR_F64, 16, 0 },
    { COLLIE_INT32_INT32, "int32_int32", MK_PAIR_I32, 8, 0 },
    { COLLIE_DTYPE_INVALID, "user_mat2x2", MK_USER_MAT, 16, 0 },
    { COLLIE_DTYPE_INVALID, "user_summax", MK_USER_COMM, 8, 0 },
};
const size_t mp_ntypes = sizeof mp_types / sizeof mp_types[0];

typedef struct { float v; int32_t i; } mp_pair_f32;
typedef struct { double v; int32_t i; } mp_pair_f64;
typedef struct { int32_t v; int32_t i; } mp_pair_i32;

static const char *const op_names[] = {
    "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor",
    "maxloc", "minloc", "user"
};

void mp_types_init(void)
{
    for (size_t i = 0; i < mp_ntypes; i++)
        if (mp_types[i].kind == MK_USER_MAT || mp_types[i].kind == MK_USER_COMM)
            mp_types[i].id = collie_dtype_bytes(mp_types[i].size);
}

const mp_type *mp_type_by_kind(int kind)
{
    for (size_t i = 0; i < mp_ntypes; i++)
        if (mp_types[i].kind == kind)
            return &mp_types[i];
    return NULL;
}

const char *mp_op_name(int opid)
{
    return (opid >= 0 && opid <= MP_OP_USER) ? op_names[opid] : "?";
}

bool mp_op_defined(const mp_type *t, int opid)
{
    switch (t->kind) {
    case MK_INT: case MK_UINT:
        return opid >= COLLIE_OPID_SUM && opid <= COLLIE_OPID_BXOR;
    case MK_F16: case MK_BF16: case MK_F32: case MK_F64:
        return opid >= COLLIE_OPID_SUM && opid <= COLLIE_OPID_MAX;
    case MK_PAIR_F32: case MK_PAIR_F64: case MK_PAIR_I32:
        return opid == COLLIE_OPID_MAXLOC || opid == COLLIE_OPID_MINLOC;
    default:
        return opid == MP_OP_USER;
    }
}

collie_op_t mp_op_handle(const mp_type *t, int opid)
{
    if (opid == MP_OP_USER)
        return mp_user_op(t->kind);
    collie_op_t builtin[COLLIE_OPID_BUILTIN_COUNT] = {
        COLLIE_SUM, COLLIE_PROD, COLLIE_MIN, COLLIE_MAX, COLLIE_LAND, COLLIE_LOR,
        COLLIE_LXOR, COLLIE_BAND, COLLIE_BOR, COLLIE_BXOR, COLLIE_MAXLOC, COLLIE_MINLOC
    };
    return builtin[opid];
}

double mp_exact_limit(const mp_type *t)
{
    switch (t->kind) {
    case MK_F16: return 2048.0;
    case MK_BF16: return 256.0;
    case MK_F32: case MK_PAIR_F32: return 16777216.0;
    default: return 9007199254740992.0;
    }
}

double mp_round(const mp_type *t, double x)
{
    switch (t->kind) {
    case MK_F16: return mp_f16_to_double(mp_f16_from_double(x));
    case MK_BF16: return mp_bf16_to_double(mp_bf16_from_double(x));
    case MK_F32: case MK_PAIR_F32: return (double)(float)x;
    default: return x;
    }
}

static uint64_t load_uint(const void *p, int bits)
{
    uint8_t a; uint16_t b; uint32_t c; uint64_t d;
    switch (bits) {
    case 8: memcpy(&a, p, 1); return a;
    case 16: memcpy(&b, p, 2); return b;
    case 32: memcpy(&c, p, 4); return c;
    default: memcpy(&d, p, 8); return d;
    }
}

static void store_uint(void *p, int bits, uint64_t u)
{
    uint8_t a = (uint8_t)u; uint16_t b = (uint16_t)u; uint32_t c = (uint32_t)u;
    switch (bits) {
    case 8: memcpy(p, &a, 1); break;
    case 16: memcpy(p, &b, 2); break;
    case 32: memcpy(p, &c, 4); break;
    default: memcpy(p, &u, 8); break;
    }
}

/* Sign-extends (signed types) or masks (unsigned) to the type's width. */
uint64_t mp_normalise_int(const mp_type *t, uint64_t u)
{
    if (t->bits >= 64)
        return u;
    uint64_t mask = ((uint64_t)1 << t->bits) - 1;
    u &= mask;
    if (t->kind == MK_INT && (u >> (t->bits - 1)) & 1)
        u |= ~mask;
    return u;
}

static mp_val load_pair(const mp_type *t, const char *p)
{
    mp_val v = { 0, 0.0, 0 };
    if (t->kind == MK_PAIR_F32) {
        mp_pair_f32 e; memcpy(&e, p, sizeof e); v.d = e.v; v.idx = e.i;
    } else if (t->kind == MK_PAIR_F64) {
        mp_pair_f64 e; memcpy(&e, p, sizeof e); v.d = e.v; v.idx = e.i;
    } else {
        mp_pair_i32 e; memcpy(&e, p, sizeof e); v.d = e.v; v.idx = e.i;
    }
    return v;
}

static void store_pair(const mp_type *t, char *p, mp_val v)
{
    if (t->kind == MK_PAIR_F32) {
        mp_pair_f32 e = { (float)v.d, v.idx }; memcpy(p, &e, sizeof e);
    } else if (t->kind == MK_PAIR_F64) {
        mp_pair_f64 e; memset(&e, 0, sizeof e); e.v = v.d; e.i = v.idx; memcpy(p, &e, sizeof e);
    } else {
        mp_pair_i32 e = { (int32_t)v.d, v.idx }; memcpy(p, &e, sizeof e);
    }
}

/* User types: 16-bit matrix entries or two 32-bit fields, packed into v.u. */
static mp_val load_user(const mp_type *t, const char *p)
{
    mp_val v = { 0, 0.0, 0 };
    uint32_t w[4];
    memcpy(w, p, t->size);
    if (t->kind == MK_USER_MAT)
        v.u = (uint64_t)(w[0] & 0xffff) | (uint64_t)(w[1] & 0xffff) << 16 |
              (uint64_t)(w[2] & 0xffff) << 32 | (uint64_t)(w[3] & 0xffff) << 48;
    else
        v.u = (uint64_t)w[0] | (uint64_t)w[1] << 32;
    if (t->kind == MK_USER_MAT && (w[0] | w[1] | w[2] | w[3]) > 0xffff)
        v.u = ~(uint64_t)0;          /* out of range: never equal to a reference value */
    return v;
}

static void store_user(const mp_type *t, char *p, mp_val v)
{
    uint32_t w[4];
    if (t->kind == MK_USER_MAT) {
        for (int j = 0; j < 4; j++)
            w[j] = (uint32_t)(v.u >> (16 * j)) & 0xffff;
    } else {
        w[0] = (uint32_t)v.u;
        w[1] = (uint32_t)(v.u >> 32);
    }
    memcpy(p, w, t->size);
}

mp_val mp_load(const mp_type *t, const void *buf, size_t i)
{
    const char *p = (const char *)buf + i * t->size;
    mp_val v = { 0, 0.0, 0 };
    float f;
    switch (t->kind) {
    case MK_INT: case MK_UINT: v.u = mp_normalise_int(t, load_uint(p, t->bits)); return v;
    case MK_F16: v.d = mp_f16_to_double((uint16_t)load_uint(p, 16)); return v;
    case MK_BF16: v.d = mp_bf16_to_double((uint16_t)load_uint(p, 16)); return v;
    case MK_F32: memcpy(&f, p, 4); v.d = f; return v;
    case MK_F64: memcpy(&v.d, p, 8); return v;
    case MK_USER_MAT: case MK_USER_COMM: return load_user(t, p);
    default: return load_pair(t, p);
    }
}

void mp_store(const mp_type *t, void *buf, size_t i, mp_val v)
{
    char *p = (char *)buf + i * t->size;
    float f = (float)v.d;
    switch (t->kind) {
    case MK_INT: case MK_UINT: store_uint(p, t->bits, v.u); break;
    case MK_F16: store_uint(p, 16, mp_f16_from_double(v.d)); break;
    case MK_BF16: store_uint(p, 16, mp_bf16_from_double(v.d)); break;
    case MK_F32: memcpy(p, &f, 4); break;
    case MK_F64: memcpy(p, &v.d, 8); break;
    case MK_USER_MAT: case MK_USER_COMM: store_user(t, p, v); break;
    default: store_pair(t, p, v); break;
    }
}

bool mp_equal(const mp_type *t, mp_val a, mp_val b)
{
    switch (t->kind) {
    case MK_INT: case MK_UINT: case MK_USER_MAT: case MK_USER_COMM:
        return a.u == b.u;
    case MK_PAIR_F32: case MK_PAIR_F64: case MK_PAIR_I32:
        return a.d == b.d && a.idx == b.idx;
    default:
        return a.d == b.d || (isnan(a.d) && isnan(b.d));
    }
}

void mp_format(const mp_type *t, mp_val v, char *out, size_t outsz)
{
    switch (t->kind) {
    case MK_INT: snprintf(out, outsz, "%" PRId64, (int64_t)v.u); break;
    case MK_UINT: snprintf(out, outsz, "%" PRIu64, v.u); break;
    case MK_USER_MAT: case MK_USER_COMM: snprintf(out, outsz, "0x%016" PRIx64, v.u); break;
    case MK_PAIR_F32: case MK_PAIR_F64: case MK_PAIR_I32:
        snprintf(out, outsz, "(%.17g, %d)", v.d, (int)v.idx); break;
    default: snprintf(out, outsz, "%.17g", v.d); break;
    }
}
