/*
 * reduce_impl.h — internal interface between the reduction driver (reduce.c) and the
 * kernel families (reduce_scalar*.c, reduce_avx2.c, reduce_avx512.c).
 *
 * A k-ary kernel computes dst[i] = ((s0[i] ∘ s1[i]) ∘ s2[i]) ∘ … for 2 <= n <= 8 sources
 * in one pass over memory; dst may be identical to any source.  The driver splits
 * larger source counts into passes of at most 8 through a cache-resident scratch chunk.
 *
 * A half kernel (float16/bfloat16, ops sum/prod/min/max) reduces in float32:
 *   v = (mode & ACC_IN) ? acc[i] : widen(s0[i]), then v = v ∘ widen(sk[i]) for the
 *   remaining sources (all n of them when ACC_IN, else s1..s(n-1));
 *   (mode & ACC_OUT) ? acc[i] = v : dst[i] = round(v).
 * Without ACC_IN n >= 2; with ACC_IN 1 <= n <= 8.  dst may be identical to a source.
 */
#ifndef COLLIE_TYPES_REDUCE_IMPL_H
#define COLLIE_TYPES_REDUCE_IMPL_H

#include <stddef.h>
#include "types/types.h"

#define COLLIE_KARY_MAX 8
#define COLLIE_HALF_OPS 4           /* sum, prod, min, max */

enum { COLLIE_HK_ACC_IN = 1, COLLIE_HK_ACC_OUT = 2 };

typedef void (*collie_kary_fn)(void *dst, const void *const *srcs, int n, size_t count);
typedef void (*collie_half_fn)(void *dst, float *acc, const void *const *srcs, int n,
                               size_t count, unsigned mode);

struct collie_kernels {
    const char *isa;
    collie_kary_fn kary[COLLIE_OPID_BUILTIN_COUNT][COLLIE_DTYPE_BUILTIN_COUNT];
    collie_half_fn half[COLLIE_HALF_OPS][2];    /* [op][0 = float16, 1 = bfloat16] */
};

/* Each family overwrites the entries it implements; the scalar one fills every defined
 * (op, dtype) pair, the others are applied on top of a copy of the previous family. */
void collie_kernels_fill_scalar_int(struct collie_kernels *t);
void collie_kernels_fill_scalar_fp(struct collie_kernels *t);
void collie_kernels_fill_avx2(struct collie_kernels *t);
void collie_kernels_fill_avx512(struct collie_kernels *t);

#endif
