/*
 * reduce_avx2.c — AVX2 (+F16C) kernels: float32/float64 sum/prod/min/max, 32/64-bit
 * integer sum/prod/min/max, bitwise and/or/xor on every integer type, and the
 * float16/bfloat16 half kernels.  Compiled for AVX2 with a target pragma only; the driver
 * installs them only on CPUs that have AVX2 and F16C.  Tails shorter than a vector are
 * run through the same vector code on zero-padded copies, so results are bitwise those
 * of the scalar family (same association, same NaN/-0.0 rules, see types.h).
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "types/reduce_impl.h"

#pragma GCC push_options
#pragma GCC target("avx2,f16c")

#define AI static inline __attribute__((always_inline))
typedef __m256i V;

/* ---- vector operations (all on __m256i; float lanes are reinterpreted) ------------------ */
AI __m256 ps(V a) { return _mm256_castsi256_ps(a); }
AI __m256d pd(V a) { return _mm256_castsi256_pd(a); }
AI V ips(__m256 a) { return _mm256_castps_si256(a); }
AI V ipd(__m256d a) { return _mm256_castpd_si256(a); }

AI V add_f32(V a, V b) { return ips(_mm256_add_ps(ps(a), ps(b))); }
AI V mul_f32(V a, V b) { return ips(_mm256_mul_ps(ps(a), ps(b))); }
AI V add_f64(V a, V b) { return ipd(_mm256_add_pd(pd(a), pd(b))); }
AI V mul_f64(V a, V b) { return ipd(_mm256_mul_pd(pd(a), pd(b))); }

/* min/max keep a when a <= b (a >= b) or a is NaN, else take b. */
AI V min_f32(V a, V b) {
    __m256 keep = _mm256_or_ps(_mm256_cmp_ps(ps(a), ps(b), _CMP_LE_OQ),
                               _mm256_cmp_ps(ps(a), ps(a), _CMP_UNORD_Q));
    return ips(_mm256_blendv_ps(ps(b), ps(a), keep));
}
AI V max_f32(V a, V b) {
    __m256 keep = _mm256_or_ps(_mm256_cmp_ps(ps(a), ps(b), _CMP_GE_OQ),
                               _mm256_cmp_ps(ps(a), ps(a), _CMP_UNORD_Q));
    return ips(_mm256_blendv_ps(ps(b), ps(a), keep));
}
AI V min_f64(V a, V b) {
    __m256d keep = _mm256_or_pd(_mm256_cmp_pd(pd(a), pd(b), _CMP_LE_OQ),
                                _mm256_cmp_pd(pd(a), pd(a), _CMP_UNORD_Q));
    return ipd(_mm256_blendv_pd(pd(b), pd(a), keep));
}
AI V max_f64(V a, V b) {
    __m256d keep = _mm256_or_pd(_mm256_cmp_pd(pd(a), pd(b), _CMP_GE_OQ),
                                _mm256_cmp_pd(pd(a), pd(a), _CMP_UNORD_Q));
    return ipd(_mm256_blendv_pd(pd(b), pd(a), keep));
}
AI V canon_f32(V a) {
    __m256 nan = _mm256_cmp_ps(ps(a), ps(a), _CMP_UNORD_Q);
    return ips(_mm256_blendv_ps(ps(a), ps(_mm256_set1_epi32(0x7FC00000)), nan));
}
AI V canon_f64(V a) {
    __m256d nan = _mm256_cmp_pd(pd(a), pd(a), _CMP_UNORD_Q);
    return ipd(_mm256_blendv_pd(pd(a), pd(_mm256_set1_epi64x(0x7FF8000000000000ll)), nan));
}

AI V add_i32(V a, V b) { return _mm256_add_epi32(a, b); }
AI V mul_i32(V a, V b) { return _mm256_mullo_epi32(a, b); }
AI V min_i32(V a, V b) { return _mm256_min_epi32(a, b); }
AI V max_i32(V a, V b) { return _mm256_max_epi32(a, b); }
AI V min_u32(V a, V b) { return _mm256_min_epu32(a, b); }
AI V max_u32(V a, V b) { return _mm256_max_epu32(a, b); }
AI V add_i64(V a, V b) { return _mm256_add_epi64(a, b); }
/* 64-bit low product: lo(a)·lo(b) + ((lo(a)·hi(b) + hi(a)·lo(b)) << 32). */
AI V mul_i64(V a, V b) {
    V lo = _mm256_mul_epu32(a, b);
    V cross = _mm256_mullo_epi32(a, _mm256_shuffle_epi32(b, 0xB1));
    V sum = _mm256_add_epi32(cross, _mm256_srli_epi64(cross, 32));
    return _mm256_add_epi64(lo, _mm256_slli_epi64(sum, 32));
}
AI V gt_i64(V a, V b) { return _mm256_cmpgt_epi64(a, b); }
AI V gt_u64(V a, V b) {
    V bias = _mm256_set1_epi64x(INT64_MIN);
    return _mm256_cmpgt_epi64(_mm256_xor_si256(a, bias), _mm256_xor_si256(b, bias));
}
AI V min_i64(V a, V b) { return _mm256_blendv_epi8(a, b, gt_i64(a, b)); }
AI V max_i64(V a, V b) { return _mm256_blendv_epi8(b, a, gt_i64(a, b)); }
AI V min_u64(V a, V b) { return _mm256_blendv_epi8(a, b, gt_u64(a, b)); }
AI V max_u64(V a, V b) { return _mm256_blendv_epi8(b, a, gt_u64(a, b)); }
AI V band(V a, V b) { return _mm256_and_si256(a, b); }
AI V bor(V a, V b) { return _mm256_or_si256(a, b); }
AI V bxor(V a, V b) { return _mm256_xor_si256(a, b); }
AI V ident(V a) { return a; }

/* ---- k-ary kernel over a byte range (a whole number of elements) ----------------------- */
AI void kary_step(char *d, const char *const *p, int n, size_t i, V (*op)(V, V),
                  V (*fin)(V)) {
    V v = _mm256_loadu_si256((const V *)(p[0] + i));
#pragma GCC unroll 8
    for (int k = 1; k < n; k++)
        v = op(v, _mm256_loadu_si256((const V *)(p[k] + i)));
    _mm256_storeu_si256((V *)(d + i), fin(v));
}

AI void kary_tail(char *d, const char *const *p, int n, size_t i, size_t left,
                  V (*op)(V, V), V (*fin)(V)) {
    _Alignas(32) char buf[COLLIE_KARY_MAX][32];
    const char *q[COLLIE_KARY_MAX];
    memset(buf, 0, sizeof buf);
    for (int k = 0; k < n; k++) {
        memcpy(buf[k], p[k] + i, left);
        q[k] = buf[k];
    }
    kary_step(buf[0], q, n, 0, op, fin);
    memcpy(d + i, buf[0], left);
}

AI void kary_body(void *dst, const void *const *srcs, int n, size_t bytes,
                  V (*op)(V, V), V (*fin)(V)) {
    const char *p[COLLIE_KARY_MAX];
    for (int k = 0; k < n; k++)
        p[k] = srcs[k];
    size_t i = 0;
    for (; i + 64 <= bytes; i += 64) {
        kary_step(dst, p, n, i, op, fin);
        kary_step(dst, p, n, i + 32, op, fin);
    }
    for (; i + 32 <= bytes; i += 32)
        kary_step(dst, p, n, i, op, fin);
    if (i < bytes)
        kary_tail(dst, p, n, i, bytes - i, op, fin);
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

/* ---- float16 / bfloat16: 8 elements per step, widened to float32 ----------------------- */
AI V widen_f16(__m128i h) { return ips(_mm256_cvtph_ps(h)); }
AI V widen_bf16(__m128i h) { return _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16); }
AI __m128i narrow_f16(V f) { return _mm256_cvtps_ph(ps(canon_f32(f)), _MM_FROUND_TO_NEAREST_INT); }
AI __m128i narrow_bf16(V f) {
    V u = canon_f32(f);
    V lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    u = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF)));
    u = _mm256_srli_epi32(u, 16);
    V packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(u, u), 0xD8);
    return _mm256_castsi256_si128(packed);
}

AI void half_step(uint16_t *d, float *acc, const uint16_t *const *p, int n, size_t i,
                  unsigned mode, V (*op)(V, V), V (*widen)(__m128i), __m128i (*narrow)(V)) {
    V v;
    int k = 0;
    if (mode & COLLIE_HK_ACC_IN) {
        v = ips(_mm256_loadu_ps(acc + i));
    } else {
        v = widen(_mm_loadu_si128((const __m128i *)(p[0] + i)));
        k = 1;
    }
    for (; k < n; k++)
        v = op(v, widen(_mm_loadu_si128((const __m128i *)(p[k] + i))));
    if (mode & COLLIE_HK_ACC_OUT)
        _mm256_storeu_ps(acc + i, ps(v));
    else
        _mm_storeu_si128((__m128i *)(d + i), narrow(v));
}

AI void half_tail(uint16_t *d, float *acc, const uint16_t *const *p, int n, size_t i,
                  size_t left, unsigned mode, V (*op)(V, V), V (*widen)(__m128i),
                  __m128i (*narrow)(V)) {
    uint16_t hbuf[COLLIE_KARY_MAX][8], dbuf[8];
    float abuf[8];
    const uint16_t *q[COLLIE_KARY_MAX];
    memset(hbuf, 0, sizeof hbuf);
    memset(abuf, 0, sizeof abuf);
    for (int k = 0; k < n; k++) {
        memcpy(hbuf[k], p[k] + i, left * sizeof(uint16_t));
        q[k] = hbuf[k];
    }
    if (mode & COLLIE_HK_ACC_IN)
        memcpy(abuf, acc + i, left * sizeof(float));
    half_step(dbuf, abuf, q, n, 0, mode, op, widen, narrow);
    if (mode & COLLIE_HK_ACC_OUT)
        memcpy(acc + i, abuf, left * sizeof(float));
    else
        memcpy(d + i, dbuf, left * sizeof(uint16_t));
}

AI void half_kernel(void *dst, float *acc, const void *const *srcs, int n, size_t count,
                    unsigned mode, V (*op)(V, V), V (*widen)(__m128i), __m128i (*narrow)(V)) {
    const uint16_t *p[COLLIE_KARY_MAX];
    for (int k = 0; k < n; k++)
        p[k] = srcs[k];
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        half_step(dst, acc, p, n, i, mode, op, widen, narrow);
    if (i < count)
        half_tail(dst, acc, p, n, i, count - i, mode, op, widen, narrow);
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

void collie_kernels_fill_avx2(struct collie_kernels *t) {
    t->isa = "avx2";
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
