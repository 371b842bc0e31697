/*
 * test_reduce.c — unit test of collie_reduce_n.  Every defined (dtype, built-in op) pair
 * is run for 1..11 sources and many counts, with random data rich in special values
 * (NaN payloads, ±inf, -0.0, subnormals, INT_MIN/MAX), shifted (one-element offset)
 * buffers and dst identical to srcs[0] or to a later source, on every kernel family the
 * CPU has.  Results are compared bitwise with an independent element-by-element reference
 * written here (float16 via the compiler's _Float16, bfloat16 by nearest-value search)
 * and with the scalar family.  Hand-checked cases pin the documented NaN/-0.0/rounding
 * rules.  User-defined operations: test_reduce_user.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/base.h"
#include "types/types.h"

#include "check.h"
#include "rng.h"

/* ---- reference: integers, as 64-bit values normalised to the type's width ---------------- */
static int is_signed_int(collie_dtype_t dt) { return dt >= COLLIE_INT8 && dt <= COLLIE_INT64; }

static uint64_t normalise(uint64_t v, size_t w, int sgn) {
    if (w == 8)
        return v;
    uint64_t mask = (1ull << (8 * w)) - 1, top = 1ull << (8 * w - 1);
    v &= mask;
    return (sgn && (v & top)) ? v | ~mask : v;
}

static uint64_t get_int(const void *p, size_t i, size_t w, int sgn) {
    uint64_t v = 0;
    memcpy(&v, (const char *)p + i * w, w);   /* little-endian */
    return normalise(v, w, sgn);
}

static uint64_t ref_int_op(int op, uint64_t a, uint64_t b, int sgn) {
    switch (op) {
    case COLLIE_OPID_SUM: return a + b;
    case COLLIE_OPID_PROD: return a * b;
    case COLLIE_OPID_MIN: return (sgn ? (int64_t)b < (int64_t)a : b < a) ? b : a;
    case COLLIE_OPID_MAX: return (sgn ? (int64_t)b > (int64_t)a : b > a) ? b : a;
    case COLLIE_OPID_LAND: return a != 0 && b != 0;
    case COLLIE_OPID_LOR: return a != 0 || b != 0;
    case COLLIE_OPID_LXOR: return (a != 0) != (b != 0);
    case COLLIE_OPID_BAND: return a & b;
    case COLLIE_OPID_BOR: return a | b;
    default: return a ^ b;
    }
}

/* ---- reference: floating point ---------------------------------------------------------- */
/* min/max: does the next operand b replace the running value a?  (NaN sticks, ties keep a) */
static int minmax_takes(int op, double a, double b) {
    if (isnan(a) || isnan(b))
        return !isnan(a);
    return op == COLLIE_OPID_MIN ? b < a : b > a;
}

static double ref_f64_op(int op, double a, double b) {
    if (op == COLLIE_OPID_SUM || op == COLLIE_OPID_PROD)
        return op == COLLIE_OPID_SUM ? a + b : a * b;
    return minmax_takes(op, a, b) ? b : a;
}

static float ref_f32_op(int op, float a, float b) {
    if (op == COLLIE_OPID_SUM || op == COLLIE_OPID_PROD)
        return op == COLLIE_OPID_SUM ? a + b : a * b;
    return minmax_takes(op, a, b) ? b : a;
}

static float f16_widen(uint16_t bits) {
    _Float16 h;
    memcpy(&h, &bits, 2);
    return (float)h;
}

static uint16_t f16_narrow(float f) {
    if (isnan(f))
        return 0x7E00;
    _Float16 h = (_Float16)f;
    uint16_t bits;
    memcpy(&bits, &h, 2);
    return bits;
}

static float bf16_widen(uint16_t bits) {
    uint32_t u = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Value of a bfloat16 pattern, with the one past the largest finite counted as 2^128. */
static double bf16_value(uint16_t b) {
    if ((b & 0x7FFF) == 0x7F80)
        return (b & 0x8000) ? -0x1p128 : 0x1p128;
    return bf16_widen(b);
}

/* Nearest bfloat16 by comparing the two neighbours' distances (ties to the even one). */
static uint16_t bf16_narrow(float f) {
    if (isnan(f))
        return 0x7FC0;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
    if (isinf(f) || (u & 0xFFFF) == 0)
        return lo;
    double dl = fabs((double)f - bf16_value(lo)), dh = fabs(bf16_value(hi) - (double)f);
    if (dl < dh || (dl == dh && !(lo & 1)))
        return lo;
    return hi;
}

static const uint32_t canon32 = 0x7FC00000u;
static const uint64_t canon64 = 0x7FF8000000000000ull;
/* ---- reference: MAXLOC/MINLOC ---------------------------------------------------------- */
static int loc_replaces(int op, double av, int32_t ai, double bv, int32_t bi) {
    if (isnan(av) || isnan(bv))
        return isnan(bv) && (!isnan(av) || bi < ai);
    if (av == bv)
        return bi < ai;
    return op == COLLIE_OPID_MAXLOC ? bv > av : bv < av;
}

static void pair_get(collie_dtype_t dt, const char *p, double *v, int32_t *idx) {
    float f;
    int32_t iv;
    memcpy(&f, p, 4), memcpy(&iv, p, 4), memcpy(v, p, 8);
    if (dt != COLLIE_FLOAT64_INT32)
        *v = dt == COLLIE_FLOAT32_INT32 ? (double)f : (double)iv;
    memcpy(idx, p + (dt == COLLIE_FLOAT64_INT32 ? 8 : 4), 4);
}

static void ref_pair(int op, collie_dtype_t dt, const void *const *s, int n, size_t i,
                     void *out) {
    size_t w = collie_dtype_size(dt);
    const char *best = (const char *)s[0] + i * w;
    for (int k = 1; k < n; k++) {
        const char *cand = (const char *)s[k] + i * w;
        double av, bv;
        int32_t ai, bi;
        pair_get(dt, best, &av, &ai);
        pair_get(dt, cand, &bv, &bi);
        if (loc_replaces(op, av, ai, bv, bi))
            best = cand;
    }
    memcpy((char *)out + i * w, best, w);
}

static void ref_element(int op, collie_dtype_t dt, const void *const *s, int n, size_t i,
                        void *out) {
    size_t w = collie_dtype_size(dt);
    if (dt >= COLLIE_FLOAT32_INT32) {
        ref_pair(op, dt, s, n, i, out);
    } else if (dt == COLLIE_FLOAT64) {
        double acc = ((const double *)s[0])[i];
        for (int k = 1; k < n; k++)
            acc = ref_f64_op(op, acc, ((const double *)s[k])[i]);
        if (n > 1 && op <= COLLIE_OPID_PROD && isnan(acc))
            memcpy(&acc, &canon64, 8);
        ((double *)out)[i] = acc;
    } else if (dt == COLLIE_FLOAT32) {
        float acc = ((const float *)s[0])[i];
        for (int k = 1; k < n; k++)
            acc = ref_f32_op(op, acc, ((const float *)s[k])[i]);
        if (n > 1 && op <= COLLIE_OPID_PROD && isnan(acc))
            memcpy(&acc, &canon32, 4);
        ((float *)out)[i] = acc;
    } else if (dt == COLLIE_FLOAT16 || dt == COLLIE_BFLOAT16) {
        float (*widen)(uint16_t) = dt == COLLIE_FLOAT16 ? f16_widen : bf16_widen;
        float acc = widen(((const uint16_t *)s[0])[i]);
        for (int k = 1; k < n; k++)
            acc = ref_f32_op(op, acc, widen(((const uint16_t *)s[k])[i]));
        uint16_t r = dt == COLLIE_FLOAT16 ? f16_narrow(acc) : bf16_narrow(acc);
        ((uint16_t *)out)[i] = n > 1 ? r : ((const uint16_t *)s[0])[i];
    } else {
        int sgn = is_signed_int(dt);
        uint64_t acc = get_int(s[0], i, w, sgn);
        for (int k = 1; k < n; k++)
            acc = normalise(ref_int_op(op, acc, get_int(s[k], i, w, sgn), sgn), w, sgn);
        memcpy((char *)out + i * w, &acc, w);
    }
}

/* ---- random data with special values --------------------------------------------------- */
static double random_double(void) {
    static const double pool[] = { 0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -3.0 };
    if (test_rnd() % 100 < 30)
        return pool[test_rnd() % 8];
    return ((double)(test_rnd() >> 11) * 0x1p-53 - 0.5) * 8.0;
}

/* A float32 (w = 4) or float64 (w = 8): 15% special values, else random_double(). */
static void fill_fp(void *p, size_t w) {
    static const uint64_t special64[] = {
        0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF8000000000123ull,
        0x7FF0000000000001ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
        0x8000000000000000ull, 0x0000000000000001ull, 0x800FFFFFFFFFFFFFull,
        0x7FEFFFFFFFFFFFFFull, 0x0010000000000000ull, 0x3FF0000000000001ull,
    };
    static const uint32_t special32[] = {
        0x7FC00000u, 0xFFC00000u, 0x7FC00123u, 0x7F800001u, 0x7F800000u, 0xFF800000u,
        0x80000000u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu, 0x00800000u, 0x7F7F8000u,
    };
    double d = random_double();
    float f = (float)d;
    int special = test_rnd() % 100 < 15;
    size_t k = test_rnd() % 12;
    memcpy(p, w == 8 ? (special ? (const void *)&special64[k] : &d)
                     : (special ? (const void *)&special32[k] : &f), w);
}

static void fill_int(void *p, size_t w, int sgn) {
    uint64_t r = test_rnd(), v;
    uint64_t top = 1ull << (8 * w - 1);
    switch (r % 10) {
    case 0: v = 0; break;
    case 1: v = sgn ? top : ~0ull; break;             /* MIN of signed / MAX of unsigned */
    case 2: v = sgn ? top - 1 : 0; break;             /* MAX of signed */
    case 3: v = ~0ull; break;                         /* -1 */
    case 4: v = test_rnd() % 4; break;
    default: v = test_rnd(); break;
    }
    memcpy(p, &v, w);
}

static void fill_element(collie_dtype_t dt, void *p) {
    size_t w = collie_dtype_size(dt);
    if (dt == COLLIE_FLOAT64 || dt == COLLIE_FLOAT32) {
        fill_fp(p, w);
    } else if (dt == COLLIE_FLOAT16 || dt == COLLIE_BFLOAT16) {
        float f = (float)random_double();
        uint16_t b = (uint16_t)test_rnd();
        if (test_rnd() % 100 < 70)
            b = dt == COLLIE_FLOAT16 ? f16_narrow(f) : bf16_narrow(f);
        memcpy(p, &b, 2);
    } else if (dt >= COLLIE_FLOAT32_INT32) {
        memset(p, 0, w);
        if (dt != COLLIE_INT32_INT32)
            fill_fp(p, dt == COLLIE_FLOAT64_INT32 ? 8 : 4);
        else
            *(int32_t *)p = (int32_t)(test_rnd() % 7) - 3;
        int32_t idx = test_rnd() % 8 ? (int32_t)(test_rnd() % 5) : (int32_t)test_rnd();
        memcpy((char *)p + (dt == COLLIE_FLOAT64_INT32 ? 8 : 4), &idx, 4);
    } else {
        fill_int(p, w, is_signed_int(dt));
    }
}

/* ---- one randomized case ---------------------------------------------------------------- */
enum { ALIAS_NONE, ALIAS_FIRST, ALIAS_LATER };
#define MAX_SRC 24     /* 1..11 everywhere, plus a few larger counts of sources */

struct rcase {
    int op, nsrc, alias, later, shift;   /* later: the source dst is when ALIAS_LATER */
    collie_dtype_t dt;
    size_t count;
    const char *isa;
};

/* Bitwise comparison (the padding of float64_int32 is unspecified); reports the first
 * differing element. */
static void compare(const struct rcase *c, const char *against, const void *got,
                    const void *want) {
    size_t w = collie_dtype_size(c->dt), cmp = c->dt == COLLIE_FLOAT64_INT32 ? 12 : w;
    size_t i = 0;
    const char *g8 = got, *e8 = want;
    while (i < c->count && memcmp(g8 + i * w, e8 + i * w, cmp) == 0)
        i++;
    if (i == c->count)
        return;
    uint64_t g = 0, e = 0;
    memcpy(&g, g8 + i * w, w < 8 ? w : 8);
    memcpy(&e, e8 + i * w, w < 8 ? w : 8);
    check(0, "[%s] %s %s nsrc=%d count=%zu alias=%d later=%d shift=%d: element %zu is "
          "0x%llx, %s gives 0x%llx", c->isa, collie_op_name(collie_builtin_op(c->op)),
          collie_dtype_name(c->dt), c->nsrc, c->count, c->alias, c->later, c->shift, i,
          (unsigned long long)g, against, (unsigned long long)e);
}

static void run_case(const struct rcase *c) {
    size_t w = collie_dtype_size(c->dt), bytes = (c->count + c->shift) * w + 1;
    char *buf[MAX_SRC], *dbuf = malloc(bytes);
    const void *src[MAX_SRC];
    void *copy[MAX_SRC];
    char *want = malloc(c->count * w + 1), *scal = malloc(c->count * w + 1);
    for (int k = 0; k < c->nsrc; k++) {
        buf[k] = malloc(bytes);
        src[k] = buf[k] + c->shift * w;
        for (size_t i = 0; i < c->count; i++)
            fill_element(c->dt, buf[k] + (c->shift + i) * w);
        copy[k] = malloc(c->count * w + 1);
        memcpy(copy[k], src[k], c->count * w);
    }
    memset(dbuf, 0xA5, bytes);
    char *dst = c->alias == ALIAS_NONE ? dbuf + c->shift * w
              : (char *)src[c->alias == ALIAS_FIRST ? 0 : c->later];
    for (size_t i = 0; i < c->count; i++)
        ref_element(c->op, c->dt, (const void *const *)copy, c->nsrc, i, want);
    collie_reduce_n(dst, src, c->nsrc, c->count, c->dt, collie_builtin_op(c->op));
    compare(c, "the reference", dst, want);
    check(!c->shift || c->alias || (unsigned char)dbuf[0] == 0xA5, "write before dst");
    if (strcmp(c->isa, "scalar") != 0) {
        collie_reduce_force_isa("scalar");
        collie_reduce_n(scal, (const void *const *)copy, c->nsrc, c->count, c->dt,
                        collie_builtin_op(c->op));
        collie_reduce_force_isa(c->isa);
        compare(c, "the scalar family", dst, scal);
    }
    for (int k = 0; k < c->nsrc; k++)
        free(buf[k]), free(copy[k]);
    free(dbuf), free(want), free(scal);
}

static const size_t counts[] = { 0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 63, 64, 65, 1000, 4099 };
#define NCOUNTS (sizeof counts / sizeof counts[0])

/* 1..11 sources with every count; 16, 17, 24 sources (several passes) with a few. */
static const int nsrcs[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 24 };

static int sweep_pair(const char *isa, collie_dtype_t dt, int op) {
    int cases = 0;
    for (size_t ni = 0; ni < sizeof nsrcs / sizeof nsrcs[0]; ni++) {
        int nsrc = nsrcs[ni], many = nsrc > 11;
        for (size_t ci = many ? 2 : 0; ci < NCOUNTS; ci += many ? 4 : 1) {
            struct rcase c = { op, nsrc, (int)((ni + ci + (size_t)op) % 3), 0, (int)(ci & 1),
                               dt, counts[ci], isa };
            if (nsrc == 1 && c.alias == ALIAS_LATER)
                c.alias = ALIAS_FIRST;
            c.later = nsrc > 1 ? 1 + (int)((ci * 7 + ni) % (size_t)(nsrc - 1)) : 0;
            run_case(&c);
            cases++;
        }
    }
    return cases;
}

static void sweep_isa(const char *isa) {
    int cases = 0;
    for (collie_dtype_t dt = 1; dt < COLLIE_DTYPE_BUILTIN_COUNT; dt++)
        for (int op = 0; op < COLLIE_OPID_BUILTIN_COUNT; op++)
            if (collie_op_check(collie_builtin_op(op), dt) == COLLIE_OK)
                cases += sweep_pair(isa, dt, op);
    printf("  %s: %d randomized cases\n", isa, cases);
}

/* ---- hand-checked cases pinning the documented rules ------------------------------------ */
static const struct {
    collie_dtype_t dt;
    int op, n;
    uint64_t in[3], want;
    const char *what;
} pins[] = {
    { COLLIE_FLOAT32, COLLIE_OPID_MAX, 2, { 0x80000000u, 0 }, 0x80000000u, "max(-0, +0) is -0" },
    { COLLIE_FLOAT32, COLLIE_OPID_MIN, 2, { 0, 0x80000000u }, 0, "min(+0, -0) is +0" },
    { COLLIE_FLOAT32, COLLIE_OPID_MAX, 3, { 0x3F800000u, 0x7FC00123u, 0xFFC00456u }, 0x7FC00123u,
      "max keeps the first NaN" },
    { COLLIE_FLOAT32, COLLIE_OPID_MIN, 3, { 0x7F800001u, 0xFFC00456u, 0 }, 0x7F800001u,
      "min keeps the first NaN, even signalling" },
    { COLLIE_FLOAT64, COLLIE_OPID_SUM, 2, { 0x7FF0000000000000ull, 0xFFF0000000000000ull },
      0x7FF8000000000000ull, "inf + -inf is the canonical NaN" },
    { COLLIE_FLOAT16, COLLIE_OPID_SUM, 3, { 0x6800, 0x3C00, 0x3C00 }, 0x6801,
      "float16 2048 + 1 + 1 rounds once" },
    { COLLIE_INT32, COLLIE_OPID_SUM, 2, { 0x7FFFFFFF, 1 }, 0x80000000u, "INT32_MAX + 1 wraps" },
    { COLLIE_INT8, COLLIE_OPID_LAND, 2, { 5, 0xFF }, 1, "land gives 1" },
    { COLLIE_INT32_INT32, COLLIE_OPID_MAXLOC, 3, { 2 | (7ull << 32), 2 | (3ull << 32), 1 },
      2 | (3ull << 32), "maxloc tie takes the smaller index" },
};

static void pinned_cases(const char *isa) {
    for (size_t p = 0; p < sizeof pins / sizeof pins[0]; p++) {
        const void *src[3] = { &pins[p].in[0], &pins[p].in[1], &pins[p].in[2] };
        uint64_t out = 0;
        collie_reduce_n(&out, src, pins[p].n, 1, pins[p].dt, collie_builtin_op(pins[p].op));
        check(out == pins[p].want, "[%s] %s: 0x%llx, expected 0x%llx", isa, pins[p].what,
              (unsigned long long)out, (unsigned long long)pins[p].want);
    }
}

int main(void) {
    collie_log_level_ = -1;
    setenv("COLLIE_REDUCE_ISA", "scalar", 1);
    check(strcmp(collie_reduce_isa(), "scalar") == 0, "COLLIE_REDUCE_ISA=scalar honoured");
    check(collie_reduce_force_isa("bogus") == COLLIE_ERR_ARG, "unknown ISA name rejected");
    __builtin_cpu_init();
    const char *isas[] = { "scalar", "avx2", "avx512" };
    const int expect[] = { 1, __builtin_cpu_supports("avx2") != 0,
                           __builtin_cpu_supports("avx512bw") != 0 };
    for (int i = 0; i < 3; i++) {
        int rc = collie_reduce_force_isa(isas[i]);
        check(rc == COLLIE_OK || !expect[i], "force %s failed on a CPU that has it", isas[i]);
        if (rc != COLLIE_OK) {
            printf("  %s: not available on this CPU, skipped\n", isas[i]);
            continue;
        }
        check(strcmp(collie_reduce_isa(), isas[i]) == 0, "collie_reduce_isa after force");
        pinned_cases(isas[i]);
        sweep_isa(isas[i]);
    }
    if (failures) {
        fprintf(stderr, "test_reduce: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_reduce: ok\n");
    return 0;
}
