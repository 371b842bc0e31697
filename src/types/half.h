/*
 * half.h — portable scalar conversions between float32 and the 16-bit float formats
 * (IEEE binary16 "float16" and bfloat16), used by the scalar reduction path.  The SIMD
 * paths must produce bitwise the same results:
 *   - widening (16 → 32 bits) is exact; a NaN stays a NaN (payload not significant);
 *   - narrowing rounds to nearest, ties to even, with overflow to ±inf and gradual
 *     underflow to subnormals/±0; every NaN becomes the canonical quiet NaN
 *     (0x7E00 for float16, 0x7FC0 for bfloat16).
 */
#ifndef COLLIE_TYPES_HALF_H
#define COLLIE_TYPES_HALF_H

#include <stdint.h>
#include <string.h>

#define COLLIE_F16_CANON_NAN ((uint16_t)0x7E00)
#define COLLIE_BF16_CANON_NAN ((uint16_t)0x7FC0)
#define COLLIE_F32_CANON_NAN_BITS 0x7FC00000u
#define COLLIE_F64_CANON_NAN_BITS 0x7FF8000000000000ull

static inline float collie_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t collie_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float collie_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1F)                               /* inf, or NaN made quiet */
        return collie_bits_f32(sign | 0x7F800000u | (man << 13) | (man ? 0x400000u : 0));
    if (exp == 0) {                                /* ±0 or subnormal: man · 2^-24, exact */
        float mag = (float)man * 0x1p-24f;
        return collie_bits_f32(sign | collie_f32_bits(mag));
    }
    return collie_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

/* Rounds m · 2^-shift to the nearest integer, ties to even (1 <= shift <= 31). */
static inline uint32_t collie_round_shift_rne(uint32_t m, unsigned shift) {
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    return q + (rem > half || (rem == half && (q & 1)));
}

static inline uint16_t collie_f32_to_f16(float f) {
    uint32_t u = collie_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    u &= 0x7FFFFFFFu;
    if (u > 0x7F800000u)
        return COLLIE_F16_CANON_NAN;
    if (u >= 0x477FF000u)                          /* >= 65520 rounds to inf */
        return sign | 0x7C00u;
    uint32_t e = u >> 23;
    if (e < 113) {                                 /* below 2^-14: subnormal or zero */
        if (e < 102)                               /* < 2^-25: rounds to zero */
            return sign;
        uint32_t m = (u & 0x7FFFFFu) | 0x800000u;
        return sign | (uint16_t)collie_round_shift_rne(m, 126 - e);
    }
    uint32_t h = ((e - 112) << 10) | ((u & 0x7FFFFFu) >> 13);
    return sign | (uint16_t)(h + ((u & 0x1FFFu) > 0x1000u || ((u & 0x1FFFu) == 0x1000u && (h & 1))));
}

static inline float collie_bf16_to_f32(uint16_t h) {
    return collie_bits_f32((uint32_t)h << 16);
}

static inline uint16_t collie_f32_to_bf16(float f) {
    uint32_t u = collie_f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return COLLIE_BF16_CANON_NAN;
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

#endif
