/* dtype.c — datatype handles: the built-in table, opaque byte types, sizes and names. */
#include <stdio.h>
#include "types/types.h"

struct dtype_info {
    size_t size;
    const char *name;
};

static const struct dtype_info builtin[COLLIE_DTYPE_BUILTIN_COUNT] = {
    [COLLIE_DTYPE_INVALID] = { 0, "invalid" },
    [COLLIE_INT8] = { 1, "int8" },
    [COLLIE_INT16] = { 2, "int16" },
    [COLLIE_INT32] = { 4, "int32" },
    [COLLIE_INT64] = { 8, "int64" },
    [COLLIE_UINT8] = { 1, "uint8" },
    [COLLIE_UINT16] = { 2, "uint16" },
    [COLLIE_UINT32] = { 4, "uint32" },
    [COLLIE_UINT64] = { 8, "uint64" },
    [COLLIE_FLOAT16] = { 2, "float16" },
    [COLLIE_BFLOAT16] = { 2, "bfloat16" },
    [COLLIE_FLOAT32] = { 4, "float32" },
    [COLLIE_FLOAT64] = { 8, "float64" },
    [COLLIE_FLOAT32_INT32] = { sizeof(struct collie_float32_int32), "float32_int32" },
    [COLLIE_FLOAT64_INT32] = { sizeof(struct collie_float64_int32), "float64_int32" },
    [COLLIE_INT32_INT32] = { sizeof(struct collie_int32_int32), "int32_int32" },
};

_Static_assert(sizeof(struct collie_float32_int32) == 8, "float32_int32 layout");
_Static_assert(sizeof(struct collie_float64_int32) == 16, "float64_int32 layout");
_Static_assert(sizeof(struct collie_int32_int32) == 8, "int32_int32 layout");

collie_dtype_t collie_dtype_bytes(size_t element_size) {
    if (element_size < 1 || element_size > COLLIE_DTYPE_BYTES_MAX)
        return COLLIE_DTYPE_INVALID;
    return COLLIE_DTYPE_BYTES_FLAG | (collie_dtype_t)element_size;
}

static bool is_bytes(collie_dtype_t dtype) {
    if ((dtype & ~(COLLIE_DTYPE_BYTES_FLAG | 0xFFFFFFFFull)) != 0 ||
        !(dtype & COLLIE_DTYPE_BYTES_FLAG))
        return false;
    size_t n = (size_t)(dtype & 0xFFFFFFFFull);
    return n >= 1 && n <= COLLIE_DTYPE_BYTES_MAX;
}

bool collie_dtype_valid(collie_dtype_t dtype) {
    return (dtype > COLLIE_DTYPE_INVALID && dtype < COLLIE_DTYPE_BUILTIN_COUNT) ||
           is_bytes(dtype);
}

size_t collie_dtype_size(collie_dtype_t dtype) {
    if (dtype < COLLIE_DTYPE_BUILTIN_COUNT)
        return builtin[dtype].size;
    if (is_bytes(dtype))
        return (size_t)(dtype & 0xFFFFFFFFull);
    return 0;
}

/* Names of byte types are formatted into a small ring of thread-local buffers, so a few
 * names can be used in one printf. */
const char *collie_dtype_name(collie_dtype_t dtype) {
    static _Thread_local char ring[4][24];
    static _Thread_local unsigned next;
    if (dtype < COLLIE_DTYPE_BUILTIN_COUNT)
        return builtin[dtype].name;
    if (!is_bytes(dtype))
        return "invalid";
    char *buf = ring[next++ % 4];
    snprintf(buf, sizeof ring[0], "bytes%zu", collie_dtype_size(dtype));
    return buf;
}

uint32_t collie_dtype_compact(collie_dtype_t dtype) {
    if (is_bytes(dtype))
        return 0x80000000u | (uint32_t)(dtype & 0xFFFFFFFFull);
    return dtype < COLLIE_DTYPE_BUILTIN_COUNT ? (uint32_t)dtype : 0;
}

collie_dtype_t collie_dtype_expand(uint32_t compact) {
    if (compact & 0x80000000u)
        return collie_dtype_bytes(compact & 0x7FFFFFFFu);
    return compact;
}
