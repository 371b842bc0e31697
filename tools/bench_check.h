/*
 * bench_check.h — helpers for collie-bench --check: integer-valued inputs that every
 * builtin scalar type holds exactly, the expected result of combining them (computed in
 * uint64_t, exact because inputs and results stay small), and element conversion to and
 * from each builtin type (float16 and bfloat16 by hand).  Static inline, header only.
 */
#ifndef COLLIE_BENCH_CHECK_H
#define COLLIE_BENCH_CHECK_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "collie.h"

#define BENCH_CHECK_MAX_VALUE 1000u   /* inputs stay below this for sum/min/max */

/* Largest n such that every integer 0..n is exact in dtype (2^k - 1 for integer types);
 * 0 for types --check does not handle (pairs, opaque bytes). */
static inline uint64_t bench_max_exact(collie_dtype_t t) {
    switch (t) {
    case COLLIE_INT8: return 127;
    case COLLIE_UINT8: return 255;
    case COLLIE_INT16: return 32767;
    case COLLIE_UINT16: return 65535;
    case COLLIE_INT32: case COLLIE_UINT32: case COLLIE_INT64: case COLLIE_UINT64:
        return 0x7fffffffu;
    case COLLIE_FLOAT16: return 2048;
    case COLLIE_BFLOAT16: return 256;
    case COLLIE_FLOAT32: case COLLIE_FLOAT64: return 1u << 24;
    default: return 0;
    }
}

/* Whether --check can verify (dtype, op) at team size P exactly; opid -1 = no op (bcast). */
static inline bool bench_check_possible(collie_dtype_t t, int opid, int P) {
    uint64_t maxv = bench_max_exact(t);
    if (maxv == 0)
        return false;
    return opid != COLLIE_OPID_SUM || maxv >= (uint64_t)P;
}

static inline uint64_t bench_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Input of rank r at index i for op opid (-1: broadcast payload). */
static inline uint64_t bench_input(int opid, collie_dtype_t t, int P, int r, size_t i) {
    uint64_t maxv = bench_max_exact(t), ur = (uint64_t)r, ui = (uint64_t)i;
    switch (opid) {
    case COLLIE_OPID_SUM:
        return (ur + 3 * ui) % bench_min_u64(maxv / (uint64_t)P + 1, BENCH_CHECK_MAX_VALUE);
    case COLLIE_OPID_PROD:     /* one rank per index contributes 2 or 3, the others 1 */
        return ui % (uint64_t)P == ur ? 2 + (ui / (uint64_t)P) % 2 : 1;
    case COLLIE_OPID_LAND: case COLLIE_OPID_LOR: case COLLIE_OPID_LXOR:
        return (ur * 7 + ui * 3) % 5 < 2;
    case COLLIE_OPID_BAND: case COLLIE_OPID_BOR: case COLLIE_OPID_BXOR:
        return (ur * 37 + ui * 11 + 5) & maxv;
    default:                   /* min, max, broadcast */
        return (ur * 7 + ui * 3 + 1) % bench_min_u64(maxv + 1, BENCH_CHECK_MAX_VALUE);
    }
}

static inline uint64_t bench_combine(int opid, uint64_t a, uint64_t b) {
    switch (opid) {
    case COLLIE_OPID_SUM: return a + b;
    case COLLIE_OPID_PROD: return a * b;
    case COLLIE_OPID_MIN: return a < b ? a : b;
    case COLLIE_OPID_MAX: return a > b ? a : b;
    case COLLIE_OPID_LAND: return a && b;
    case COLLIE_OPID_LOR: return a || b;
    case COLLIE_OPID_LXOR: return !a != !b;
    case COLLIE_OPID_BAND: return a & b;
    case COLLIE_OPID_BOR: return a | b;
    case COLLIE_OPID_BXOR: return a ^ b;
    default: return b;
    }
}

/* Expected value at index i: the op over all ranks' inputs (opid -1: root's payload). */
static inline uint64_t bench_expected(int opid, collie_dtype_t t, int P, int root, size_t i) {
    if (opid < 0)
        return bench_input(opid, t, P, root, i);
    uint64_t acc = bench_input(opid, t, P, 0, i);
    for (int r = 1; r < P; r++)
        acc = bench_combine(opid, acc, bench_input(opid, t, P, r, i));
    return acc;
}

/* --fresh-data: the value of rank r at index i in the call numbered salt, so that every
 * call's input differs from the previous one's.  Sum and broadcast: (i + salt + 3r) & mask
 * (mask + 1 a power of two, small enough that the sum over P ranks stays exact); the other
 * ops: bench_input at index i + salt. */
static inline uint64_t bench_fresh_mask(int opid, collie_dtype_t t, int P) {
    uint64_t limit = bench_max_exact(t), m = 1;
    limit = opid == COLLIE_OPID_SUM ? limit / (uint64_t)P + 1 : limit + 1;
    limit = bench_min_u64(limit, 1024);
    while (m * 2 <= limit)
        m *= 2;
    return m - 1;
}

static inline uint64_t bench_fresh_value(int opid, collie_dtype_t t, int P, int r, size_t i,
                                         uint64_t salt) {
    if (opid < 0 || opid == COLLIE_OPID_SUM)
        return ((uint64_t)i + salt + 3 * (uint64_t)r) & bench_fresh_mask(opid, t, P);
    return bench_input(opid, t, P, r, i + (size_t)salt);
}

/* Expected result at index i of the call numbered salt (opid -1: root's payload). */
static inline uint64_t bench_fresh_expected(int opid, collie_dtype_t t, int P, int root,
                                            size_t i, uint64_t salt) {
    if (opid < 0)
        return bench_fresh_value(opid, t, P, root, i, salt);
    uint64_t acc = bench_fresh_value(opid, t, P, 0, i, salt);
    for (int r = 1; r < P; r++)
        acc = bench_combine(opid, acc, bench_fresh_value(opid, t, P, r, i, salt));
    return acc;
}

/* float16 of a non-negative integer v <= 2048 (exact). */
static inline uint16_t bench_to_half(uint64_t v) {
    if (v == 0)
        return 0;
    int e = 63 - __builtin_clzll(v);
    uint64_t mant = e <= 10 ? v << (10 - e) : v >> (e - 10);
    return (uint16_t)(((unsigned)(e + 15) << 10) | (unsigned)(mant & 0x3ff));
}

static inline double bench_from_half(uint16_t h) {
    int e = (h >> 10) & 0x1f;
    double sign = (h & 0x8000) ? -1.0 : 1.0, m = (double)(h & 0x3ff);
    if (e == 0)
        return sign * ldexp(m, -24);
    if (e == 31)
        return m != 0 ? NAN : sign * INFINITY;
    return sign * ldexp(1024.0 + m, e - 25);
}

static inline uint16_t bench_to_bf16(uint64_t v) {   /* exact for v <= 256 */
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (uint16_t)(bits >> 16);
}

static inline double bench_from_bf16(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* buf[i] = v in dtype t (v exact in t). */
static inline void bench_put(void *buf, size_t i, collie_dtype_t t, uint64_t v) {
    switch (t) {
    case COLLIE_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case COLLIE_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case COLLIE_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case COLLIE_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case COLLIE_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case COLLIE_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case COLLIE_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case COLLIE_UINT64: ((uint64_t *)buf)[i] = v; break;
    case COLLIE_FLOAT16: ((uint16_t *)buf)[i] = bench_to_half(v); break;
    case COLLIE_BFLOAT16: ((uint16_t *)buf)[i] = bench_to_bf16(v); break;
    case COLLIE_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case COLLIE_FLOAT64: ((double *)buf)[i] = (double)v; break;
    default: break;
    }
}

/* buf[i] of dtype t as a double. */
static inline double bench_get(const void *buf, size_t i, collie_dtype_t t) {
    switch (t) {
    case COLLIE_INT8: return ((const int8_t *)buf)[i];
    case COLLIE_UINT8: return ((const uint8_t *)buf)[i];
    case COLLIE_INT16: return ((const int16_t *)buf)[i];
    case COLLIE_UINT16: return ((const uint16_t *)buf)[i];
    case COLLIE_INT32: return ((const int32_t *)buf)[i];
    case COLLIE_UINT32: return ((const uint32_t *)buf)[i];
    case COLLIE_INT64: return (double)((const int64_t *)buf)[i];
    case COLLIE_UINT64: return (double)((const uint64_t *)buf)[i];
    case COLLIE_FLOAT16: return bench_from_half(((const uint16_t *)buf)[i]);
    case COLLIE_BFLOAT16: return bench_from_bf16(((const uint16_t *)buf)[i]);
    case COLLIE_FLOAT32: return ((const float *)buf)[i];
    case COLLIE_FLOAT64: return ((const double *)buf)[i];
    default: return NAN;
    }
}

/* Writes rank r's input of the call numbered salt into buf (count elements of t) with
 * ordinary stores, so the data sits in the writer's cache as in a program that has just
 * computed it.  float64 and float32 sums (what bench/compare measures) in a plain loop the
 * compiler vectorises; other types element by element. */
static inline void bench_fill_fresh(void *buf, size_t count, int opid, collie_dtype_t t, int P,
                                    int r, uint64_t salt) {
    bool simple = opid < 0 || opid == COLLIE_OPID_SUM;
    uint64_t mask = bench_fresh_mask(opid, t, P), start = salt + 3 * (uint64_t)r;
    if (simple && t == COLLIE_FLOAT64) {
        double *d = buf;
        for (size_t i = 0; i < count; i++)
            d[i] = (double)((start + i) & mask);
        return;
    }
    if (simple && t == COLLIE_FLOAT32) {
        float *f = buf;
        for (size_t i = 0; i < count; i++)
            f[i] = (float)((start + i) & mask);
        return;
    }
    for (size_t i = 0; i < count; i++)
        bench_put(buf, i, t, bench_fresh_value(opid, t, P, r, i, salt));
}

#endif
