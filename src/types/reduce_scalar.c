/*
 * reduce_scalar.c — portable k-ary kernels for the integer types (all built-in ops that
 * MPI defines on integers).  Sum and product wrap modulo 2^bits (computed in unsigned
 * arithmetic, so signed and unsigned types share them), logical ops give 0 or 1; bitwise
 * ops have one byte-wise kernel for every width.
 */
#include <stdint.h>
#include <string.h>
#include "types/reduce_impl.h"

#define KT uint8_t
#define KN(x) x##_u8
#include "types/kary_tmpl.h"
#define KT uint16_t
#define KN(x) x##_u16
#include "types/kary_tmpl.h"
#define KT uint32_t
#define KN(x) x##_u32
#include "types/kary_tmpl.h"
#define KT uint64_t
#define KN(x) x##_u64
#include "types/kary_tmpl.h"
#define KT int8_t
#define KN(x) x##_i8
#include "types/kary_tmpl.h"
#define KT int16_t
#define KN(x) x##_i16
#include "types/kary_tmpl.h"
#define KT int32_t
#define KN(x) x##_i32
#include "types/kary_tmpl.h"
#define KT int64_t
#define KN(x) x##_i64
#include "types/kary_tmpl.h"

/* ---- element operations ---------------------------------------------------------------- */
static inline uint8_t sum_u8(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
static inline uint16_t sum_u16(uint16_t a, uint16_t b) { return (uint16_t)(a + b); }
static inline uint32_t sum_u32(uint32_t a, uint32_t b) { return a + b; }
static inline uint64_t sum_u64(uint64_t a, uint64_t b) { return a + b; }
static inline uint8_t prod_u8(uint8_t a, uint8_t b) { return (uint8_t)((unsigned)a * b); }
static inline uint16_t prod_u16(uint16_t a, uint16_t b) { return (uint16_t)((unsigned)a * b); }
static inline uint32_t prod_u32(uint32_t a, uint32_t b) { return a * b; }
static inline uint64_t prod_u64(uint64_t a, uint64_t b) { return a * b; }

static inline int8_t min_i8(int8_t a, int8_t b) { return b < a ? b : a; }
static inline int16_t min_i16(int16_t a, int16_t b) { return b < a ? b : a; }
static inline int32_t min_i32(int32_t a, int32_t b) { return b < a ? b : a; }
static inline int64_t min_i64(int64_t a, int64_t b) { return b < a ? b : a; }
static inline uint8_t min_u8(uint8_t a, uint8_t b) { return b < a ? b : a; }
static inline uint16_t min_u16(uint16_t a, uint16_t b) { return b < a ? b : a; }
static inline uint32_t min_u32(uint32_t a, uint32_t b) { return b < a ? b : a; }
static inline uint64_t min_u64(uint64_t a, uint64_t b) { return b < a ? b : a; }
static inline int8_t max_i8(int8_t a, int8_t b) { return b > a ? b : a; }
static inline int16_t max_i16(int16_t a, int16_t b) { return b > a ? b : a; }
static inline int32_t max_i32(int32_t a, int32_t b) { return b > a ? b : a; }
static inline int64_t max_i64(int64_t a, int64_t b) { return b > a ? b : a; }
static inline uint8_t max_u8(uint8_t a, uint8_t b) { return b > a ? b : a; }
static inline uint16_t max_u16(uint16_t a, uint16_t b) { return b > a ? b : a; }
static inline uint32_t max_u32(uint32_t a, uint32_t b) { return b > a ? b : a; }
static inline uint64_t max_u64(uint64_t a, uint64_t b) { return b > a ? b : a; }

static inline uint8_t land_u8(uint8_t a, uint8_t b) { return (a != 0) & (b != 0); }
static inline uint16_t land_u16(uint16_t a, uint16_t b) { return (a != 0) & (b != 0); }
static inline uint32_t land_u32(uint32_t a, uint32_t b) { return (a != 0) & (b != 0); }
static inline uint64_t land_u64(uint64_t a, uint64_t b) { return (a != 0) & (b != 0); }
static inline uint8_t lor_u8(uint8_t a, uint8_t b) { return (a != 0) | (b != 0); }
static inline uint16_t lor_u16(uint16_t a, uint16_t b) { return (a != 0) | (b != 0); }
static inline uint32_t lor_u32(uint32_t a, uint32_t b) { return (a != 0) | (b != 0); }
static inline uint64_t lor_u64(uint64_t a, uint64_t b) { return (a != 0) | (b != 0); }
static inline uint8_t lxor_u8(uint8_t a, uint8_t b) { return (a != 0) ^ (b != 0); }
static inline uint16_t lxor_u16(uint16_t a, uint16_t b) { return (a != 0) ^ (b != 0); }
static inline uint32_t lxor_u32(uint32_t a, uint32_t b) { return (a != 0) ^ (b != 0); }
static inline uint64_t lxor_u64(uint64_t a, uint64_t b) { return (a != 0) ^ (b != 0); }

static inline uint8_t band_u8(uint8_t a, uint8_t b) { return a & b; }
static inline uint8_t bor_u8(uint8_t a, uint8_t b) { return a | b; }
static inline uint8_t bxor_u8(uint8_t a, uint8_t b) { return a ^ b; }

/* ---- kernels: one k-ary function per (op, element type) ------------------------------ */
#define KARY(name, tmpl, op) \
    static void name(void *d, const void *const *s, int n, size_t c) { tmpl(d, s, n, c, op, NULL); }

#define KARY_UNSIGNED(opname) \
    KARY(k_##opname##_u8, kary_u8, opname##_u8) \
    KARY(k_##opname##_u16, kary_u16, opname##_u16) \
    KARY(k_##opname##_u32, kary_u32, opname##_u32) \
    KARY(k_##opname##_u64, kary_u64, opname##_u64)

#define KARY_SIGNED(opname) \
    KARY(k_##opname##_i8, kary_i8, opname##_i8) \
    KARY(k_##opname##_i16, kary_i16, opname##_i16) \
    KARY(k_##opname##_i32, kary_i32, opname##_i32) \
    KARY(k_##opname##_i64, kary_i64, opname##_i64)

KARY_UNSIGNED(sum)
KARY_UNSIGNED(prod)
KARY_UNSIGNED(min)
KARY_UNSIGNED(max)
KARY_SIGNED(min)
KARY_SIGNED(max)
KARY_UNSIGNED(land)
KARY_UNSIGNED(lor)
KARY_UNSIGNED(lxor)
KARY(k_band_u8, kary_u8, band_u8)
KARY(k_bor_u8, kary_u8, bor_u8)
KARY(k_bxor_u8, kary_u8, bxor_u8)

/* Same kernel for the signed and unsigned type of each width. */
static void set_widths(struct collie_kernels *t, int op, collie_kary_fn w8, collie_kary_fn w16,
                       collie_kary_fn w32, collie_kary_fn w64) {
    t->kary[op][COLLIE_INT8] = t->kary[op][COLLIE_UINT8] = w8;
    t->kary[op][COLLIE_INT16] = t->kary[op][COLLIE_UINT16] = w16;
    t->kary[op][COLLIE_INT32] = t->kary[op][COLLIE_UINT32] = w32;
    t->kary[op][COLLIE_INT64] = t->kary[op][COLLIE_UINT64] = w64;
}

static void set_signed(struct collie_kernels *t, int op, collie_kary_fn i8, collie_kary_fn i16,
                       collie_kary_fn i32, collie_kary_fn i64) {
    t->kary[op][COLLIE_INT8] = i8;
    t->kary[op][COLLIE_INT16] = i16;
    t->kary[op][COLLIE_INT32] = i32;
    t->kary[op][COLLIE_INT64] = i64;
}

void collie_kernels_fill_scalar_int(struct collie_kernels *t) {
    set_widths(t, COLLIE_OPID_SUM, k_sum_u8, k_sum_u16, k_sum_u32, k_sum_u64);
    set_widths(t, COLLIE_OPID_PROD, k_prod_u8, k_prod_u16, k_prod_u32, k_prod_u64);
    set_widths(t, COLLIE_OPID_MIN, k_min_u8, k_min_u16, k_min_u32, k_min_u64);
    set_signed(t, COLLIE_OPID_MIN, k_min_i8, k_min_i16, k_min_i32, k_min_i64);
    set_widths(t, COLLIE_OPID_MAX, k_max_u8, k_max_u16, k_max_u32, k_max_u64);
    set_signed(t, COLLIE_OPID_MAX, k_max_i8, k_max_i16, k_max_i32, k_max_i64);
    set_widths(t, COLLIE_OPID_LAND, k_land_u8, k_land_u16, k_land_u32, k_land_u64);
    set_widths(t, COLLIE_OPID_LOR, k_lor_u8, k_lor_u16, k_lor_u32, k_lor_u64);
    set_widths(t, COLLIE_OPID_LXOR, k_lxor_u8, k_lxor_u16, k_lxor_u32, k_lxor_u64);
    /* Bitwise ops are run on bytes (the driver turns count elements into bytes). */
    t->kary[COLLIE_OPID_BAND][COLLIE_UINT8] = k_band_u8;
    t->kary[COLLIE_OPID_BOR][COLLIE_UINT8] = k_bor_u8;
    t->kary[COLLIE_OPID_BXOR][COLLIE_UINT8] = k_bxor_u8;
}
