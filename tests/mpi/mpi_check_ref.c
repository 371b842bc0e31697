/*
 * mpi_check_ref.c — inputs and the independent reference of mpi_check.c.
 *
 * Inputs are chosen so every result is exact in every type (sums of small integers,
 * products of ±1 and 2, integer-valued floats), so the reference is computed here in
 * int64/double, element by element in rank order, without any MPI call.
 */
#include <string.h>

#include "mpi_check.h"

const char *const top_names[T_NOPS] = { "sum", "prod", "min", "max", "land", "lor", "lxor",
                                        "band", "bor", "bxor", "maxloc", "minloc",
                                        "user_sum_mod", "user_affine" };

typedef struct { float v; int i; } pair_f;
typedef struct { double v; int i; } pair_d;
typedef struct { int v; int i; } pair_i;
typedef struct { int a, b; } affine;

static int64_t value(const ttype *t, enum top op, int rank, int salt, size_t i) {
    uint64_t mix = (uint64_t)rank * 31u + i * 7u + (uint64_t)salt * 13u;
    switch (op) {
    case T_PROD:   /* complex products stay positive: no signed zeros in the imaginary part */
        return mix % 3 == 0 ? 2 : (mix % 3 == 1 || t->kind == K_UNSIGNED || t->kind == K_COMPLEX ? 1 : -1);
    case T_LAND: case T_LOR: case T_LXOR:
        return t->kind == K_BOOL ? (int64_t)(mix % 3 != 0) : (int64_t)(mix % 3);
    case T_BAND: case T_BOR: case T_BXOR:
        return (int64_t)((mix * 0x9E3779B97F4A7C15ull) >> 40);
    case T_MAXLOC: case T_MINLOC:
        return (int64_t)((rank * 5 + i + (size_t)salt) % 4);
    case T_USER_SUM_MOD:
        return (int64_t)(mix % 1000);
    default:
        return t->kind == K_UNSIGNED ? (int64_t)(mix % 21) : (int64_t)(mix % 21) - 10;
    }
}

static void store_float(size_t size, void *p, int64_t v) {
    if (size == 4) { float f = (float)v; memcpy(p, &f, 4); }
    else { double d = (double)v; memcpy(p, &d, 8); }
}

/* A complex element: real part v, imaginary part im. */
static void store_complex(const ttype *t, void *p, int64_t v, int64_t im) {
    store_float(t->size / 2, p, v);
    store_float(t->size / 2, (char *)p + t->size / 2, im);
}

/* The imaginary part of a complex input: 0 for products (kept real), else another value. */
static int64_t imaginary(const ttype *t, enum top op, int rank, int salt, size_t i);

static void store(const ttype *t, void *p, int64_t v, int idx) {
    switch (t->kind) {
    case K_FLOAT:
        store_float(t->size, p, v);
        return;
    case K_PAIR_FLOAT: { pair_f x = { (float)v, idx }; memcpy(p, &x, sizeof x); return; }
    case K_PAIR_DOUBLE: { pair_d x; memset(&x, 0, sizeof x); x.v = (double)v; x.i = idx; memcpy(p, &x, sizeof x); return; }
    case K_PAIR_INT: { pair_i x = { (int)v, idx }; memcpy(p, &x, sizeof x); return; }
    case K_AFFINE: { affine x = { (int)(v % AFFINE_PRIME), (int)((v * 7 + 3) % AFFINE_PRIME) }; memcpy(p, &x, sizeof x); return; }
    default: {
        uint64_t u = (uint64_t)v;
        memcpy(p, &u, t->size);   /* little endian: the low bytes */
        return;
    }
    }
}

void input_fill(const ttype *t, enum top op, int rank, int salt, size_t count, void *buf) {
    memset(buf, 0, count * t->size);
    for (size_t i = 0; i < count; i++) {
        int64_t v = value(t, op, rank, salt, i);
        if (t->kind == K_AFFINE)
            v = 1 + (int64_t)(((uint64_t)rank * 977u + i * 131u + (uint64_t)salt) % (AFFINE_PRIME - 1));
        if (t->kind == K_COMPLEX)
            store_complex(t, (char *)buf + i * t->size, v, imaginary(t, op, rank, salt, i));
        else
            store(t, (char *)buf + i * t->size, v, rank);
    }
}

static int64_t combine(enum top op, int64_t acc, int64_t v) {
    switch (op) {
    case T_SUM: return acc + v;
    case T_PROD: return acc * v;
    case T_MIN: return v < acc ? v : acc;
    case T_MAX: return v > acc ? v : acc;
    case T_LAND: return (acc != 0) && (v != 0);
    case T_LOR: return (acc != 0) || (v != 0);
    case T_LXOR: return (acc != 0) != (v != 0);
    case T_BAND: return acc & v;
    case T_BOR: return acc | v;
    case T_BXOR: return acc ^ v;
    case T_USER_SUM_MOD: return (acc + v) % 1000;
    default: return acc;
    }
}

/* Bit width of an integer type; the bitwise results are stored truncated anyway. */
static void reference_affine(const ttype *t, int P, int salt, size_t count, void *out) {
    affine *o = out;
    for (size_t i = 0; i < count; i++) {
        int64_t a = 1, b = 0;   /* identity; result = x0 ∘ x1 ∘ … ∘ x(P-1) */
        for (int r = 0; r < P; r++) {
            affine x;
            int64_t v = 1 + (int64_t)(((uint64_t)r * 977u + i * 131u + (uint64_t)salt) % (AFFINE_PRIME - 1));
            store(t, &x, v, r);
            /* (a,b) ∘ (x.a,x.b) = (a*x.a, a*x.b + b) */
            b = (a * x.b + b) % AFFINE_PRIME;
            a = (a * x.a) % AFFINE_PRIME;
        }
        o[i].a = (int)a;
        o[i].b = (int)b;
    }
}

static int64_t imaginary(const ttype *t, enum top op, int rank, int salt, size_t i) {
    return op == T_PROD ? 0 : value(t, op, rank, salt + 7, i + 1);
}

/* Sums add both parts; products of complex numbers with zero imaginary parts are real. */
static void reference_complex(const ttype *t, enum top op, int P, int salt, size_t count, void *out) {
    for (size_t i = 0; i < count; i++) {
        int64_t re = value(t, op, 0, salt, i), im = imaginary(t, op, 0, salt, i);
        for (int r = 1; r < P; r++) {
            re = op == T_PROD ? re * value(t, op, r, salt, i) : re + value(t, op, r, salt, i);
            im = op == T_PROD ? 0 : im + imaginary(t, op, r, salt, i);
        }
        store_complex(t, (char *)out + i * t->size, re, im);
    }
}

void reference(const ttype *t, enum top op, int P, int salt, size_t count, void *out) {
    memset(out, 0, count * t->size);
    if (t->kind == K_COMPLEX) {
        reference_complex(t, op, P, salt, count, out);
        return;
    }
    if (t->kind == K_AFFINE) {
        reference_affine(t, P, salt, count, out);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        int64_t acc = value(t, op, 0, salt, i);
        int idx = 0;
        for (int r = 1; r < P; r++) {
            int64_t v = value(t, op, r, salt, i);
            if (op == T_MAXLOC && v > acc) { acc = v; idx = r; }
            else if (op == T_MINLOC && v < acc) { acc = v; idx = r; }
            else if (op != T_MAXLOC && op != T_MINLOC) acc = combine(op, acc, v);
        }
        store(t, (char *)out + i * t->size, acc, idx);
    }
}

size_t first_diff(const ttype *t, size_t count, const void *a, const void *b) {
    size_t cmp = t->kind == K_PAIR_DOUBLE ? 12 : t->size;   /* not the padding */
    for (size_t i = 0; i < count; i++)
        if (memcmp((const char *)a + i * t->size, (const char *)b + i * t->size, cmp) != 0)
            return i;
    return count;
}

uint64_t digest(const void *buf, size_t bytes, uint64_t h) {
    const unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Works on MPI_INT and on derived types made of ints. */
void user_sum_mod(void *in, void *inout, int *len, MPI_Datatype *dt) {
    const int *a = in;
    int *b = inout, type_bytes = 0;
    MPI_Type_size(*dt, &type_bytes);
    int n = *len * (type_bytes / (int)sizeof(int));
    for (int i = 0; i < n; i++)
        b[i] = (a[i] + b[i]) % 1000;
}

/* inout = in ∘ inout: `in` holds lower ranks. */
void user_affine(void *in, void *inout, int *len, MPI_Datatype *dt) {
    const affine *x = in;
    affine *y = inout;
    for (int i = 0; i < *len; i++) {
        int64_t a = (int64_t)x[i].a * y[i].a % AFFINE_PRIME;
        int64_t b = ((int64_t)x[i].a * y[i].b + x[i].b) % AFFINE_PRIME;
        y[i].a = (int)a;
        y[i].b = (int)b;
    }
}

void clear_padding(const ttype *t, size_t count, void *buf) {
    if (t->kind != K_PAIR_DOUBLE)
        return;
    for (size_t i = 0; i < count; i++)
        memset((char *)buf + i * t->size + 12, 0, t->size - 12);
}
