/*
 * reduce_avx512.c — AVX-512 (F, BW, VL, DQ) kernels: float32/float64 sum/prod/min/max,
 * 32/64-bit integer sum/prod/min/max, bitwise and/or/xor on every integer type, and the
 * float16/bfloat16 half kernels.  Compiled for AVX-512 with a target pragma only; the
 * driver installs these kernels only on CPUs that have the features.  Results are bitwise
 * those of the scalar family (same association, same NaN/-0.0 rules, see types.h).
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "types/reduce_impl.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq")

#define AI static inline __attribute__((always_inline))
typedef __m512i V;

/* ---- vector operations (all on __m512i; float lanes are reinterpreted) ------------------ */
AI __m512 ps(V a) { return _mm512_castsi512_ps(a); }
AI __m512d pd(V a) { return _mm512_castsi512_pd(a); }
AI V ips(__m512 a) { return _mm512_castps_si512(a); }
AI V ipd(__m512d a) { return _mm512_castpd_si512(a); }

AI V add_f32(V a, V b) { return ips(_mm512_add_ps(ps(a), ps(b))); }
AI V mul_f32(V a, V b) { return ips(_mm512_mul_ps(ps(a), ps(b))); }
AI V add_f64(V a, V b) { return ipd(_mm512_add_pd(pd(a), pd(b))); }
AI V mul_f64(V a, V b) { return ipd(_mm512_mul_pd(pd(a), pd(b))); }

/* min/max keep a when a <= b (a >= b) or a is NaN, else take b. */
AI V min_f32(V a, V b) {
    __mmask16 keep = _mm512_cmp_ps_mask(ps(a), ps(b), _CMP_LE_OQ) |
                     _mm512_cmp_ps_mask(ps(a), ps(a), _CMP_UNORD_Q);
    return _mm512_mask_blend_epi32(keep, b, a);
}
AI V max_f32(V a, V b) {
    __mmask16 keep = _mm512_cmp_ps_mask(ps(a), ps(b), _CMP_GE_OQ) |
                     _mm512_cmp_ps_mask(ps(a), ps(a), _CMP_UNORD_Q);
    return _mm512_mask_blend_epi32(keep, b, a);
}
AI V min_f64(V a, V b) {
    __mmask8 keep = _mm512_cmp_pd_mask(pd(a), pd(b), _CMP_LE_OQ) |
                    _mm512_cmp_pd_mask(pd(a), pd(a), _CMP_UNORD_Q);
    return _mm512_mask_blend_epi64(keep, b, a);
}
AI V max_f64(V a, V b) {
    __mmask8 keep = _mm512_cmp_pd_mask(pd(a), pd(b), _CMP_GE_OQ) |
                    _mm512_cmp_pd_mask(pd(a), pd(a), _CMP_UNORD_Q);
    return _mm512_mask_blend_epi64(keep, b, a);
}
AI V canon_f32(V a) {
    __mmask16 nan = _mm512_cmp_ps_mask(ps(a), ps(a), _CMP_UNORD_Q);
    return _mm512_mask_blend_epi32(nan, a, _mm512_set1_epi32(0x7FC00000));
}
AI V canon_f64(V a) {
    __mmask8 nan = _mm512_cmp_pd_mask(pd(a), pd(a), _CMP_UNORD_Q);
    return _mm512_mask_blend_epi64(nan, a, _mm512_set1_epi64(0x7FF8000000000000ll));
}

AI V add_i32(V a, V b) { return _mm512_add_epi32(a, b); }
AI V mul_i32(V a, V b) { return _mm512_mullo_epi32(a, b); }
AI V min_i32(V a, V b) { return _mm512_min_epi32(a, b); }
AI V max_i32(V a, V b) { return _mm512_max_epi32(a, b); }
AI V min_u32(V a, V b) { return _mm512_min_epu32(a, b); }
AI V max_u32(V a, V b) { return _mm512_max_epu32(a, b); }
AI V add_i64(V a, V b) { return _mm512_add_epi64(a, b); }
AI V mul_i64(V a, V b) { return _mm512_mullo_epi64(a, b); }
AI V min_i64(V a, V b) { return _mm512_min_epi64(a, b); }
AI V max_i64(V a, V b) { return _mm512_max_epi64(a, b); }
AI V min_u64(V a, V b) { return _mm512_min_epu64(a, b); }
AI V max_u64(V a, V b) { return _mm512_max_epu64(a, b); }
AI V band(V a, V b) { return _mm512_and_si512(a, b); }
AI V bor(V a, V b) { return _mm512_or_si512(a, b); }
AI V bxor(V a, V b) { return _mm512_xor_si512(a, b); }
AI V ident(V a) { return a; }

/* ---- k-ary kernel over a byte range (a whole number of elements) ----------------------- */
AI void kary_body(void *dst, const void *const *srcs, int n, size_t bytes,
                  V (*op)(V, V), V (*fin)(V)) {
    const char *p[COLLIE_KARY_MAX];
    char *d = dst;
    for (int k = 0; k < n; k++)
        p[k] = srcs[k];
    size_t i = 0;
    for (; i + 128 <= bytes; i += 128) {
        V v0 = _mm512_loadu_si512(p[0] + i), v1 = _mm512_loadu_si512(p[0] + i + 64);
#pragma GCC unroll 8
        for (int k = 1; k < n; k++) {
            v0 = op(v0, _mm512_loadu_si512(p[k] + i));
            v1 = op(v1, _mm512_loadu_si512(p[k] + i + 64));
        }
        _mm512_storeu_si512(d + i, fin(v0));
        _mm512_storeu_si512(d + i + 64, fin(v1));
    }
    for (; i < bytes; i += 64) {
        size_t left = bytes - i;
        __mmask64 m = left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
        V v = _mm512_maskz_loadu_epi8(m, p[0] + i);
#pragma GCC unroll 8
        for (int k = 1; k < n; k++)
            v = op(v, _mm512_maskz_loadu_epi8(m, p[k] + i));
        _mm512_mask_storeu_epi8(d + i, m, fin(v));
    }
}

/* Instantiates the body for each source count so the source loop is fully unrolled. */
AI void kary(void *d, const void *const *s, int n, size_t bytes, V (*op)(V, V), V (*fin)(V)) {
    switch (n) {
    case 2: kary_body(d, s, 2, bytes, op, fin); break;
    case 3: kary_body(d, s, 3, bytes, op, fin); break;
    case 4: kary_body(d, s, 4, bytes, op, fin); break;
    case 5: kary_body(d, s, 5, bytes, op, fin); break;
    case 6: kary_body(d, s, 6, bytes, op, fin); break;
    case 7: kary_body(d, s, 7, bytes, op, fin); break;
    default: kary_body(d, s, 8, bytes, op, fin); break;
    }
}

#define KARY(name, esize, op, fin) \
    static void name(void *d, const void *const *s, int n, size_t c) { kary(d, s, n, c * esize, op, fin); }
KARY(k_sum_f32, 4, add_f32, canon_f32)
KARY(k_prod_f32, 4, mul_f32, canon_f32)
KARY(k_min_f32, 4, min_f32, ident)
KARY(k_max_f32, 4, max_f32, ident)
KARY(k_sum_f64, 8, add_f64, canon_f64)
KARY(k_prod_f64, 8, mul_f64, canon_f64)
KARY(k_min_f64, 8, min_f64, ident)
KARY(k_max_f64, 8, max_f64, ident)
KARY(k_sum_i32, 4, add_i32, ident)
KARY(k_prod_i32, 4, mul_i32, ident)
KARY(k_min_i32, 4, min_i32, ident)
KARY(k_max_i32, 4, max_i32, ident)
KARY(k_min_u32, 4, min_u32, ident)
KARY(k_max_u32, 4, max_u32, ident)
KARY(k_sum_i64, 8, add_i64, ident)
KARY(k_prod_i64, 8, mul_i64, ident)
KARY(k_min_i64, 8, min_i64, ident)
KARY(k_max_i64, 8, max_i64, ident)
KARY(k_min_u64, 8, min_u64, ident)
KARY(k_max_u64, 8, max_u64, ident)
KARY(k_band, 1, band, ident)
KARY(k_bor, 1, bor, ident)
KARY(k_bxor, 1, bxor, ident)

/* ---- float16 / bfloat16: 16 elements per step, widened to float32 ---------------------- */
AI V widen_f16(__m256i h) { return ips(_mm512_cvtph_ps(h)); }
AI V widen_bf16(__m256i h) { return _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16); }
AI __m256i narrow_f16(V f) {
    return _mm512_cvtps_ph(ps(canon_f32(f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
AI __m256i narrow_bf16(V f) {
    V u = canon_f32(f);
    V lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    u = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF)));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(u, 16));
}

AI void half_step(uint16_t *d, float *acc, const uint16_t *const *p, int n, size_t i,
                  __mmask16 m, unsigned mode, V (*op)(V, V), V (*widen)(__m256i),
                  __m256i (*narrow)(V)) {
    V v;
    int k = 0;
    if (mode & COLLIE_HK_ACC_IN) {
        v = ips(_mm512_maskz_loadu_ps(m, acc + i));
    } else {
        v = widen(_mm256_maskz_loadu_epi16(m, p[0] + i));
        k = 1;
    }
    for (; k < n; k++)
        v = op(v, widen(_mm256_maskz_loadu_epi16(m, p[k] + i)));
    if (mode & COLLIE_HK_ACC_OUT)
        _mm512_mask_storeu_ps(acc + i, m, ps(v));
    else
        _mm256_mask_storeu_epi16(d + i, m, narrow(v));
}

AI void half_kernel(void *dst, float *acc, const void *const *srcs, int n, size_t count,
                    unsigned mode, V (*op)(V, V), V (*widen)(__m256i), __m256i (*narrow)(V)) {
    const uint16_t *p[COLLIE_KARY_MAX];
    for (int k = 0; k < n; k++)
        p[k] = srcs[k];
    size_t i = 0;
    for (; i + 16 <= count; i += 16)
        half_step(dst, acc, p, n, i, 0xFFFF, mode, op, widen, narrow);
    if (i < count)
        half_step(dst, acc, p, n, i, (__mmask16)((1u << (count - i)) - 1), mode, op, widen,
                  narrow);
}

#define HALF_KERNEL(name, op, widen, narrow) \
    static void name(void *d, float *acc, const void *const *s, int n, size_t c, unsigned m) { \
        half_kernel(d, acc, s, n, c, m, op, widen, narrow); \
    }
HALF_KERNEL(h_sum_f16, add_f32, widen_f16, narrow_f16)
HALF_KERNEL(h_prod_f16, mul_f32, widen_f16, narrow_f16)
HALF_KERNEL(h_min_f16, min_f32, widen_f16, narrow_f16)
HALF_KERNEL(h_max_f16, max_f32, widen_f16, narrow_f16)
HALF_KERNEL(h_sum_bf16, add_f32, widen_bf16, narrow_bf16)
HALF_KERNEL(h_prod_bf16, mul_f32, widen_bf16, narrow_bf16)
HALF_KERNEL(h_min_bf16, min_f32, widen_bf16, narrow_bf16)
HALF_KERNEL(h_max_bf16, max_f32, widen_bf16, narrow_bf16)

#pragma GCC pop_options

static void set_pair(struct collie_kernels *t, int op, collie_dtype_t a, collie_dtype_t b,
                     collie_kary_fn f) {
    t->kary[op][a] = t->kary[op][b] = f;
}

void collie_kernels_fill_avx512(struct collie_kernels *t) {
    t->isa = "avx512";
    collie_kary_fn (*k)[COLLIE_DTYPE_BUILTIN_COUNT] = t->kary;
    k[COLLIE_OPID_SUM][COLLIE_FLOAT32] = k_sum_f32;
    k[COLLIE_OPID_PROD][COLLIE_FLOAT32] = k_prod_f32;
    k[COLLIE_OPID_MIN][COLLIE_FLOAT32] = k_min_f32;
    k[COLLIE_OPID_MAX][COLLIE_FLOAT32] = k_max_f32;
    k[COLLIE_OPID_SUM][COLLIE_FLOAT64] = k_sum_f64;
    k[COLLIE_OPID_PROD][COLLIE_FLOAT64] = k_prod_f64;
    k[COLLIE_OPID_MIN][COLLIE_FLOAT64] = k_min_f64;
    k[COLLIE_OPID_MAX][COLLIE_FLOAT64] = k_max_f64;
    set_pair(t, COLLIE_OPID_SUM, COLLIE_INT32, COLLIE_UINT32, k_sum_i32);
    set_pair(t, COLLIE_OPID_PROD, COLLIE_INT32, COLLIE_UINT32, k_prod_i32);
    set_pair(t, COLLIE_OPID_SUM, COLLIE_INT64, COLLIE_UINT64, k_sum_i64);
    set_pair(t, COLLIE_OPID_PROD, COLLIE_INT64, COLLIE_UINT64, k_prod_i64);
    k[COLLIE_OPID_MIN][COLLIE_INT32] = k_min_i32;
    k[COLLIE_OPID_MAX][COLLIE_INT32] = k_max_i32;
    k[COLLIE_OPID_MIN][COLLIE_UINT32] = k_min_u32;
    k[COLLIE_OPID_MAX][COLLIE_UINT32] = k_max_u32;
    k[COLLIE_OPID_MIN][COLLIE_INT64] = k_min_i64;
    k[COLLIE_OPID_MAX][COLLIE_INT64] = k_max_i64;
    k[COLLIE_OPID_MIN][COLLIE_UINT64] = k_min_u64;
    k[COLLIE_OPID_MAX][COLLIE_UINT64] = k_max_u64;
    k[COLLIE_OPID_BAND][COLLIE_UINT8] = k_band;   /* bitwise ops run on bytes */
    k[COLLIE_OPID_BOR][COLLIE_UINT8] = k_bor;
    k[COLLIE_OPID_BXOR][COLLIE_UINT8] = k_bxor;
    const collie_half_fn half[COLLIE_HALF_OPS][2] = { { h_sum_f16, h_sum_bf16 },
                                                      { h_prod_f16, h_prod_bf16 },
                                                      { h_min_f16, h_min_bf16 },
                                                      { h_max_f16, h_max_bf16 } };
    memcpy(t->half, half, sizeof half);
}
