/*
 * types.h — datatypes, reduction operations and the multi-source reduction kernel
 * (layer 2 of docs/design.md).
 */
#ifndef COLLIE_TYPES_H
#define COLLIE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "collie.h"

/* Bit set in a collie_dtype_t made by collie_dtype_bytes(n); the low 32 bits hold n. */
#define COLLIE_DTYPE_BYTES_FLAG ((collie_dtype_t)1 << 40)
#define COLLIE_DTYPE_BYTES_MAX ((size_t)1 << 20)

struct collie_op_s {
    int id;                 /* COLLIE_OPID_* for built-ins, -1 for user operations */
    unsigned flags;         /* COLLIE_OP_COMMUTATIVE | COLLIE_OP_IDEMPOTENT */
    collie_user_fn fn;      /* user operations only */
    void *ctx;
    const char *name;
    unsigned magic;         /* COLLIE_OP_MAGIC while valid, to catch freed/garbage handles */
    uint32_t ident;         /* identity all ranks agree on (collie_op_identity) */
};
#define COLLIE_OP_MAGIC 0xC011E0F5u

bool collie_dtype_valid(collie_dtype_t dtype);
bool collie_op_valid(collie_op_t op);
bool collie_op_commutative(collie_op_t op);
bool collie_op_idempotent(collie_op_t op);

/* The op's identity, part of every call's identity (mismatches show): a built-in op's id
 * + 1; a user op's COLLIE_OPID_USER_BASE + its creation index on this rank (so ranks that
 * create their user ops in the same order agree); COLLIE_OPID_USER_ANY for ops whose
 * identity is not comparable across ranks (the MPI layer's wrappers of MPI user ops,
 * created lazily).  0 for NULL. */
#define COLLIE_OPID_USER_BASE 0x10000u
#define COLLIE_OPID_USER_ANY 0xFFFFFFFFu
uint32_t collie_op_identity(collie_op_t op);
void collie_op_set_identity(collie_op_t op, uint32_t ident);
/* "sum", "user op #3", "user op" for an identity. */
const char *collie_op_identity_name(uint32_t ident, char *buf, size_t size);

/* A datatype in 32 bits (built-in handle, or 0x80000000 | n for bytes(n)) and back. */
uint32_t collie_dtype_compact(collie_dtype_t dtype);
collie_dtype_t collie_dtype_expand(uint32_t compact);

/* COLLIE_OK if op is defined for dtype, else COLLIE_ERR_ARG / COLLIE_ERR_UNSUPPORTED with
 * collie_last_error() set (e.g. "op band is not defined for float64"). */
int collie_op_check(collie_op_t op, collie_dtype_t dtype);

/*
 * The multi-source reduction kernel:
 *     dst[i] = srcs[0][i] ∘ srcs[1][i] ∘ … ∘ srcs[nsrc-1][i]      for i < count
 * where srcs[0] holds the contributions of the lowest ranks (operand order matters for
 * non-commutative user operations).  The association is fixed and identical on every
 * rank and every CPU path (so results are bitwise reproducible): built-in ops evaluate
 * left to right ((s0∘s1)∘s2)…; user ops right to left s0∘(s1∘(…∘s(n-1))), which needs a
 * single copy with the MPI-style fn(in, inout).  float16/bfloat16 accumulate in float32
 * across all sources and round once.  nsrc == 1 is a copy.  dst may be identical to any
 * source (same pointer); partial overlaps are not allowed.  op must be valid for dtype
 * (collie_op_check).  Returns COLLIE_OK, or an error (no memory for the scratch element
 * of a user op larger than 16 KiB aliasing an input; op undefined for dtype).
 */
int collie_reduce_n(void *dst, const void *const *srcs, int nsrc, size_t count,
                    collie_dtype_t dtype, collie_op_t op);

/* Name of the kernel family chosen at run time ("avx512", "avx2", "scalar"). */
const char *collie_reduce_isa(void);

/* ---- additions (layer 2 internals) ------------------------------------------------------ */

/* Element layouts of the MAXLOC/MINLOC pair types (FLOAT64_INT32 has 4 padding bytes,
 * whose content in results is unspecified). */
struct collie_float32_int32 { float v; int32_t i; };
struct collie_float64_int32 { double v; int32_t i; };
struct collie_int32_int32 { int32_t v; int32_t i; };

/*
 * Semantics of the built-in operations in collie_reduce_n for nsrc >= 2 (nsrc == 1 is a
 * plain copy), identical on every CPU path:
 *  - integers wrap modulo 2^bits (sum, prod); land/lor/lxor give 0 or 1.
 *  - float sum/prod: IEEE per step, no contraction; a NaN result is always the canonical
 *    quiet NaN (float32 0x7FC00000, float64 0x7FF8000000000000).
 *  - float min/max: the running value a against the next operand b keeps a when a <= b
 *    (min) / a >= b (max) or when a is NaN, else takes b.  So a NaN anywhere propagates
 *    (the first NaN in source order, bits unchanged), and ties such as -0.0 vs +0.0 keep
 *    the earlier operand.
 *  - float16/bfloat16: widened exactly to float32, reduced there with the float32 rules
 *    across all sources, rounded once to nearest-even; a NaN result is the canonical NaN
 *    (0x7E00 / 0x7FC0).
 *  - maxloc/minloc: the strictly larger (smaller) value wins, equal values take the
 *    smaller index; a NaN value beats any number, two NaNs take the smaller index.
 */

/* The built-in op with id COLLIE_OPID_* (NULL if out of range). */
collie_op_t collie_builtin_op(int id);

/* Tests and benchmarks: switch the kernel family ("scalar", "avx2", "avx512"; NULL =
 * the default: the best the CPU has, or $COLLIE_REDUCE_ISA read at first use).
 * COLLIE_ERR_UNSUPPORTED if this CPU lacks it.  Thread-safe; a reduction already running
 * finishes with the family it started with. */
int collie_reduce_force_isa(const char *isa);

#endif
