/*
 * reduce_scalar_fp.c — portable kernels for the floating-point types (float32/float64
 * k-ary kernels, float16/bfloat16 half kernels reducing in float32) and MAXLOC/MINLOC on
 * the pair types.  The semantics (NaN, -0.0, ties) are documented in types.h; the SIMD
 * families reproduce them bitwise.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "types/half.h"
#include "types/reduce_impl.h"

#define AI static inline __attribute__((always_inline))

#define KT float
#define KN(x) x##_f32
#include "types/kary_tmpl.h"
#define KT double
#define KN(x) x##_f64
#include "types/kary_tmpl.h"
#define KT struct collie_float32_int32
#define KN(x) x##_f32i32
#include "types/kary_tmpl.h"
#define KT struct collie_float64_int32
#define KN(x) x##_f64i32
#include "types/kary_tmpl.h"
#define KT struct collie_int32_int32
#define KN(x) x##_i32i32
#include "types/kary_tmpl.h"

/* ---- float32 / float64 ----------------------------------------------------------------- */
AI float sum_f32(float a, float b) { return a + b; }
AI float prod_f32(float a, float b) { return a * b; }
AI float min_f32(float a, float b) { return ((a <= b) | (a != a)) ? a : b; }
AI float max_f32(float a, float b) { return ((a >= b) | (a != a)) ? a : b; }
AI float canon_f32(float x) { return x != x ? collie_bits_f32(COLLIE_F32_CANON_NAN_BITS) : x; }
AI double sum_f64(double a, double b) { return a + b; }
AI double prod_f64(double a, double b) { return a * b; }
AI double min_f64(double a, double b) { return ((a <= b) | (a != a)) ? a : b; }
AI double max_f64(double a, double b) { return ((a >= b) | (a != a)) ? a : b; }
AI double canon_f64(double x) {
    uint64_t u = COLLIE_F64_CANON_NAN_BITS;
    double nan;
    memcpy(&nan, &u, sizeof nan);
    return x != x ? nan : x;
}

static void k_sum_f32(void *d, const void *const *s, int n, size_t c) {
    kary_f32(d, s, n, c, sum_f32, canon_f32);
}
static void k_prod_f32(void *d, const void *const *s, int n, size_t c) {
    kary_f32(d, s, n, c, prod_f32, canon_f32);
}
static void k_min_f32(void *d, const void *const *s, int n, size_t c) {
    kary_f32(d, s, n, c, min_f32, NULL);
}
static void k_max_f32(void *d, const void *const *s, int n, size_t c) {
    kary_f32(d, s, n, c, max_f32, NULL);
}
static void k_sum_f64(void *d, const void *const *s, int n, size_t c) {
    kary_f64(d, s, n, c, sum_f64, canon_f64);
}
static void k_prod_f64(void *d, const void *const *s, int n, size_t c) {
    kary_f64(d, s, n, c, prod_f64, canon_f64);
}
static void k_min_f64(void *d, const void *const *s, int n, size_t c) {
    kary_f64(d, s, n, c, min_f64, NULL);
}
static void k_max_f64(void *d, const void *const *s, int n, size_t c) {
    kary_f64(d, s, n, c, max_f64, NULL);
}

/* ---- MAXLOC / MINLOC ------------------------------------------------------------------ */
/* True if (bv, bi) replaces the running (av, ai).  Values widen exactly to double. */
AI bool loc_take(double av, int32_t ai, double bv, int32_t bi, bool want_max) {
    bool an = av != av, bn = bv != bv;
    if (an || bn)
        return bn && (!an || bi < ai);
    bool better = want_max ? bv > av : bv < av;
    return better || (bv == av && bi < ai);
}

typedef struct collie_float32_int32 f32i32;
typedef struct collie_float64_int32 f64i32;
typedef struct collie_int32_int32 i32i32;
AI f32i32 maxloc_f32i32(f32i32 a, f32i32 b) { return loc_take(a.v, a.i, b.v, b.i, true) ? b : a; }
AI f32i32 minloc_f32i32(f32i32 a, f32i32 b) { return loc_take(a.v, a.i, b.v, b.i, false) ? b : a; }
AI f64i32 maxloc_f64i32(f64i32 a, f64i32 b) { return loc_take(a.v, a.i, b.v, b.i, true) ? b : a; }
AI f64i32 minloc_f64i32(f64i32 a, f64i32 b) { return loc_take(a.v, a.i, b.v, b.i, false) ? b : a; }
AI i32i32 maxloc_i32i32(i32i32 a, i32i32 b) { return loc_take(a.v, a.i, b.v, b.i, true) ? b : a; }
AI i32i32 minloc_i32i32(i32i32 a, i32i32 b) { return loc_take(a.v, a.i, b.v, b.i, false) ? b : a; }

static void k_maxloc_f32i32(void *d, const void *const *s, int n, size_t c) {
    kary_f32i32(d, s, n, c, maxloc_f32i32, NULL);
}
static void k_minloc_f32i32(void *d, const void *const *s, int n, size_t c) {
    kary_f32i32(d, s, n, c, minloc_f32i32, NULL);
}
static void k_maxloc_f64i32(void *d, const void *const *s, int n, size_t c) {
    kary_f64i32(d, s, n, c, maxloc_f64i32, NULL);
}
static void k_minloc_f64i32(void *d, const void *const *s, int n, size_t c) {
    kary_f64i32(d, s, n, c, minloc_f64i32, NULL);
}
static void k_maxloc_i32i32(void *d, const void *const *s, int n, size_t c) {
    kary_i32i32(d, s, n, c, maxloc_i32i32, NULL);
}
static void k_minloc_i32i32(void *d, const void *const *s, int n, size_t c) {
    kary_i32i32(d, s, n, c, minloc_i32i32, NULL);
}

/* ---- float16 / bfloat16 (see the half-kernel contract in reduce_impl.h) ----------------- */
#define HBLK 1024

AI void half_kernel(void *dst, float *acc, const void *const *srcs, int n, size_t count,
                    unsigned mode, float (*op)(float, float), float (*widen)(uint16_t),
                    uint16_t (*narrow)(float)) {
    float a[HBLK];
    uint16_t *d = dst;
    for (size_t off = 0; off < count; off += HBLK) {
        size_t len = count - off < HBLK ? count - off : HBLK;
        int k = 0;
        if (mode & COLLIE_HK_ACC_IN) {
            memcpy(a, acc + off, len * sizeof(float));
        } else {
            const uint16_t *s0 = (const uint16_t *)srcs[0] + off;
            for (size_t i = 0; i < len; i++)
                a[i] = widen(s0[i]);
            k = 1;
        }
        for (; k < n; k++) {
            const uint16_t *s = (const uint16_t *)srcs[k] + off;
            for (size_t i = 0; i < len; i++)
                a[i] = op(a[i], widen(s[i]));
        }
        if (mode & COLLIE_HK_ACC_OUT) {
            memcpy(acc + off, a, len * sizeof(float));
            continue;
        }
        for (size_t i = 0; i < len; i++)
            d[off + i] = narrow(a[i]);
    }
}

#define HALF_KERNEL(name, op, widen, narrow) \
    static void name(void *d, float *acc, const void *const *s, int n, size_t c, unsigned m) { \
        half_kernel(d, acc, s, n, c, m, op, widen, narrow); \
    }
HALF_KERNEL(h_sum_f16, sum_f32, collie_f16_to_f32, collie_f32_to_f16)
HALF_KERNEL(h_prod_f16, prod_f32, collie_f16_to_f32, collie_f32_to_f16)
HALF_KERNEL(h_min_f16, min_f32, collie_f16_to_f32, collie_f32_to_f16)
HALF_KERNEL(h_max_f16, max_f32, collie_f16_to_f32, collie_f32_to_f16)
HALF_KERNEL(h_sum_bf16, sum_f32, collie_bf16_to_f32, collie_f32_to_bf16)
HALF_KERNEL(h_prod_bf16, prod_f32, collie_bf16_to_f32, collie_f32_to_bf16)
HALF_KERNEL(h_min_bf16, min_f32, collie_bf16_to_f32, collie_f32_to_bf16)
HALF_KERNEL(h_max_bf16, max_f32, collie_bf16_to_f32, collie_f32_to_bf16)

void collie_kernels_fill_scalar_fp(struct collie_kernels *t) {
    t->kary[COLLIE_OPID_SUM][COLLIE_FLOAT32] = k_sum_f32;
    t->kary[COLLIE_OPID_PROD][COLLIE_FLOAT32] = k_prod_f32;
    t->kary[COLLIE_OPID_MIN][COLLIE_FLOAT32] = k_min_f32;
    t->kary[COLLIE_OPID_MAX][COLLIE_FLOAT32] = k_max_f32;
    t->kary[COLLIE_OPID_SUM][COLLIE_FLOAT64] = k_sum_f64;
    t->kary[COLLIE_OPID_PROD][COLLIE_FLOAT64] = k_prod_f64;
    t->kary[COLLIE_OPID_MIN][COLLIE_FLOAT64] = k_min_f64;
    t->kary[COLLIE_OPID_MAX][COLLIE_FLOAT64] = k_max_f64;
    t->kary[COLLIE_OPID_MAXLOC][COLLIE_FLOAT32_INT32] = k_maxloc_f32i32;
    t->kary[COLLIE_OPID_MINLOC][COLLIE_FLOAT32_INT32] = k_minloc_f32i32;
    t->kary[COLLIE_OPID_MAXLOC][COLLIE_FLOAT64_INT32] = k_maxloc_f64i32;
    t->kary[COLLIE_OPID_MINLOC][COLLIE_FLOAT64_INT32] = k_minloc_f64i32;
    t->kary[COLLIE_OPID_MAXLOC][COLLIE_INT32_INT32] = k_maxloc_i32i32;
    t->kary[COLLIE_OPID_MINLOC][COLLIE_INT32_INT32] = k_minloc_i32i32;
    t->half[COLLIE_OPID_SUM][0] = h_sum_f16;
    t->half[COLLIE_OPID_PROD][0] = h_prod_f16;
    t->half[COLLIE_OPID_MIN][0] = h_min_f16;
    t->half[COLLIE_OPID_MAX][0] = h_max_f16;
    t->half[COLLIE_OPID_SUM][1] = h_sum_bf16;
    t->half[COLLIE_OPID_PROD][1] = h_prod_bf16;
    t->half[COLLIE_OPID_MIN][1] = h_min_bf16;
    t->half[COLLIE_OPID_MAX][1] = h_max_bf16;
}
