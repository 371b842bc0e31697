/*
 * mp_half.c — float16 (IEEE binary16) and bfloat16 conversions for the reference side of
 * the multi-process tests, written independently of the library's own conversions.
 * Rounding is round-to-nearest-even (the default floating-point environment).
 */
#include <math.h>
#include <string.h>
#include "mp_common.h"

/* binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. */
uint16_t mp_f16_from_double(double x)
{
    uint16_t sign = signbit(x) ? 0x8000u : 0u;
    double a = fabs(x);
    if (isnan(x))
        return 0x7e00u;
    if (a >= 65520.0)
        return (uint16_t)(sign | 0x7c00u);
    if (a < ldexp(1.0, -14))                       /* subnormal: units of 2^-24 */
        return (uint16_t)(sign | (uint16_t)nearbyint(ldexp(a, 24)));
    int e = 0;
    double m = frexp(a, &e);                       /* a = m * 2^e, m in [0.5, 1) */
    double sig = nearbyint(m * 2048.0);            /* 1024 .. 2048 */
    int biased = e - 1 + 15;
    if (sig >= 2048.0) {
        sig = 1024.0;
        biased++;
    }
    if (biased >= 31)
        return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | (unsigned)(biased << 10) | ((unsigned)sig - 1024u));
}

double mp_f16_to_double(uint16_t h)
{
    int biased = (h >> 10) & 31;
    unsigned frac = h & 1023u;
    double v;
    if (biased == 0)
        v = ldexp((double)frac, -24);
    else if (biased == 31)
        v = frac ? NAN : INFINITY;
    else
        v = ldexp((double)(1024u + frac), biased - 25);
    return (h & 0x8000u) ? -v : v;
}

/* bfloat16: the upper half of a binary32. */
uint16_t mp_bf16_from_double(double x)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (isnan(f))
        return 0x7fc0u;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

double mp_bf16_to_double(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}
