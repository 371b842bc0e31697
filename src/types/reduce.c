/*
 * reduce.c — collie_reduce_n: the multi-source reduction driver.  Chooses the kernel
 * family once (runtime CPU dispatch, overridable with COLLIE_REDUCE_ISA=scalar|avx2|
 * avx512), splits more than 8 sources into passes through a cache-resident scratch chunk,
 * and runs user-defined operations right to left with MPI's fn(in, inout).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/base.h"
#include "types/reduce_impl.h"

enum { ISA_SCALAR, ISA_AVX2, ISA_AVX512, ISA_COUNT };
static const char *const isa_names[ISA_COUNT] = { "scalar", "avx2", "avx512" };

static struct collie_kernels tables[ISA_COUNT];
static bool isa_available[ISA_COUNT];
static int isa_default;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static _Atomic(const struct collie_kernels *) active;

/* Scratch bytes for the running values when more than 8 sources are reduced, and for
 * user operations whose dst is one of the inputs. */
#define SCRATCH_BYTES 16384
/* Elements per call of a user fn (bytes), so dst stays in cache across the sources. */
#define USER_CHUNK_BYTES 65536

static void detect_isas(void) {
    __builtin_cpu_init();
    isa_available[ISA_SCALAR] = true;
    isa_available[ISA_AVX2] = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    isa_available[ISA_AVX512] = isa_available[ISA_AVX2] &&
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

static int isa_by_name(const char *name) {
    for (int i = 0; i < ISA_COUNT; i++)
        if (strcasecmp(name, isa_names[i]) == 0)
            return i;
    return -1;
}

static int env_isa(int best) {
    const char *v = collie_env_str("COLLIE_REDUCE_ISA", NULL);
    if (!v)
        return best;
    int isa = isa_by_name(v);
    if (isa < 0) {
        collie_log(COLLIE_LOG_WARN, "ignoring COLLIE_REDUCE_ISA=%s: not scalar, avx2 or avx512", v);
        return best;
    }
    if (!isa_available[isa]) {
        collie_log(COLLIE_LOG_WARN, "ignoring COLLIE_REDUCE_ISA=%s: this CPU lacks it", v);
        return best;
    }
    return isa;
}

static void init_tables(void) {
    detect_isas();
    tables[ISA_SCALAR].isa = "scalar";
    collie_kernels_fill_scalar_int(&tables[ISA_SCALAR]);
    collie_kernels_fill_scalar_fp(&tables[ISA_SCALAR]);
    tables[ISA_AVX2] = tables[ISA_SCALAR];
    collie_kernels_fill_avx2(&tables[ISA_AVX2]);
    tables[ISA_AVX512] = tables[ISA_AVX2];
    collie_kernels_fill_avx512(&tables[ISA_AVX512]);
    int best = ISA_SCALAR;
    for (int i = 0; i < ISA_COUNT; i++)
        if (isa_available[i])
            best = i;
    isa_default = env_isa(best);
    atomic_store_explicit(&active, &tables[isa_default], memory_order_release);
}

static const struct collie_kernels *kernels(void) {
    const struct collie_kernels *t = atomic_load_explicit(&active, memory_order_acquire);
    if (t)
        return t;
    pthread_once(&tables_once, init_tables);
    return atomic_load_explicit(&active, memory_order_acquire);
}

const char *collie_reduce_isa(void) {
    return kernels()->isa;
}

int collie_reduce_force_isa(const char *isa) {
    kernels();
    int i = isa ? isa_by_name(isa) : isa_default;
    if (i < 0)
        return collie_fail(COLLIE_ERR_ARG, "unknown reduction ISA '%s'", isa);
    if (!isa_available[i])
        return collie_fail(COLLIE_ERR_UNSUPPORTED, "this CPU cannot run the %s kernels", isa);
    atomic_store_explicit(&active, &tables[i], memory_order_release);
    return COLLIE_OK;
}

static const void *at(const void *p, size_t byte_offset) {
    return (const char *)p + byte_offset;
}

/* ---- built-in ops, more than 8 sources: running values in a scratch chunk ---------------- */
static void kary_passes(collie_kary_fn k, void *dst, const void *const *srcs, int nsrc,
                        size_t boff, size_t len, void *scratch) {
    const void *p[COLLIE_KARY_MAX];
    for (int j = 0; j < COLLIE_KARY_MAX; j++)
        p[j] = at(srcs[j], boff);
    k(scratch, p, COLLIE_KARY_MAX, len);
    int i = COLLIE_KARY_MAX;
    p[0] = scratch;
    for (; nsrc - i > COLLIE_KARY_MAX - 1; i += COLLIE_KARY_MAX - 1) {
        for (int j = 1; j < COLLIE_KARY_MAX; j++)
            p[j] = at(srcs[i + j - 1], boff);
        k(scratch, p, COLLIE_KARY_MAX, len);
    }
    for (int j = i; j < nsrc; j++)
        p[1 + j - i] = at(srcs[j], boff);
    k(dst, p, 1 + nsrc - i, len);
}

static void reduce_kary(collie_kary_fn k, void *dst, const void *const *srcs, int nsrc,
                        size_t count, size_t esize) {
    if (nsrc <= COLLIE_KARY_MAX) {
        k(dst, srcs, nsrc, count);
        return;
    }
    _Alignas(64) unsigned char scratch[SCRATCH_BYTES];
    size_t chunk = SCRATCH_BYTES / esize;
    for (size_t off = 0; off < count; off += chunk) {
        size_t len = count - off < chunk ? count - off : chunk;
        kary_passes(k, (char *)dst + off * esize, srcs, nsrc, off * esize, len, scratch);
    }
}

/* ---- float16/bfloat16: float32 running values across all sources, one rounding ---------- */
static void half_passes(collie_half_fn h, void *dst, const void *const *srcs, int nsrc,
                        size_t boff, size_t len, float *acc) {
    const void *p[COLLIE_KARY_MAX];
    for (int j = 0; j < COLLIE_KARY_MAX; j++)
        p[j] = at(srcs[j], boff);
    h(NULL, acc, p, COLLIE_KARY_MAX, len, COLLIE_HK_ACC_OUT);
    int i = COLLIE_KARY_MAX;
    for (; nsrc - i > COLLIE_KARY_MAX; i += COLLIE_KARY_MAX) {
        for (int j = 0; j < COLLIE_KARY_MAX; j++)
            p[j] = at(srcs[i + j], boff);
        h(NULL, acc, p, COLLIE_KARY_MAX, len, COLLIE_HK_ACC_IN | COLLIE_HK_ACC_OUT);
    }
    for (int j = i; j < nsrc; j++)
        p[j - i] = at(srcs[j], boff);
    h(dst, acc, p, nsrc - i, len, COLLIE_HK_ACC_IN);
}

static void reduce_half(collie_half_fn h, void *dst, const void *const *srcs, int nsrc,
                        size_t count) {
    if (nsrc <= COLLIE_KARY_MAX) {
        h(dst, NULL, srcs, nsrc, count, 0);
        return;
    }
    _Alignas(64) float acc[SCRATCH_BYTES / sizeof(float)];
    size_t chunk = SCRATCH_BYTES / sizeof(float);
    for (size_t off = 0; off < count; off += chunk) {
        size_t len = count - off < chunk ? count - off : chunk;
        half_passes(h, (uint16_t *)dst + off, srcs, nsrc, off * sizeof(uint16_t), len, acc);
    }
}

/* ---- user ops: dst = s0 ∘ (s1 ∘ (… ∘ s(n-1))) via fn(in, inout), chunk by chunk ----------- */
static void user_chunk(void *acc, const void *const *srcs, int nsrc, size_t boff, size_t len,
                       size_t esize, collie_dtype_t dtype, collie_op_t op) {
    const void *last = at(srcs[nsrc - 1], boff);
    if (acc != last)
        memcpy(acc, last, len * esize);
    for (int k = nsrc - 2; k >= 0; k--)
        op->fn(at(srcs[k], boff), acc, len, dtype, op->ctx);
}

static bool dst_is_early_input(const void *dst, const void *const *srcs, int nsrc) {
    for (int k = 0; k < nsrc - 1; k++)
        if (srcs[k] == dst)
            return true;
    return false;
}

static int reduce_user(void *dst, const void *const *srcs, int nsrc, size_t count,
                        size_t esize, collie_dtype_t dtype, collie_op_t op) {
    if (!dst_is_early_input(dst, srcs, nsrc)) {
        size_t chunk = esize < USER_CHUNK_BYTES ? USER_CHUNK_BYTES / esize : 1;
        for (size_t off = 0; off < count; off += chunk) {
            size_t len = count - off < chunk ? count - off : chunk;
            user_chunk((char *)dst + off * esize, srcs, nsrc, off * esize, len, esize, dtype, op);
        }
        return COLLIE_OK;
    }
    /* dst is an input still needed after the first write: accumulate in scratch. */
    _Alignas(64) unsigned char stack_buf[SCRATCH_BYTES];
    unsigned char *buf = esize <= SCRATCH_BYTES ? stack_buf : malloc(esize);
    if (!buf)
        return collie_fail(COLLIE_ERR_NOMEM, "reduce: no memory for a %zu-byte element of a "
                           "user operation", esize);
    size_t chunk = esize <= SCRATCH_BYTES ? SCRATCH_BYTES / esize : 1;
    for (size_t off = 0; off < count; off += chunk) {
        size_t len = count - off < chunk ? count - off : chunk;
        user_chunk(buf, srcs, nsrc, off * esize, len, esize, dtype, op);
        memcpy((char *)dst + off * esize, buf, len * esize);
    }
    if (buf != stack_buf)
        free(buf);
    return COLLIE_OK;
}

int collie_reduce_n(void *dst, const void *const *srcs, int nsrc, size_t count,
                    collie_dtype_t dtype, collie_op_t op) {
    size_t esize = collie_dtype_size(dtype);
    if (count == 0 || nsrc < 1)
        return COLLIE_OK;
    if (nsrc == 1) {
        if (dst != srcs[0])
            memcpy(dst, srcs[0], count * esize);
        return COLLIE_OK;
    }
    if (op->id < 0)
        return reduce_user(dst, srcs, nsrc, count, esize, dtype, op);
    const struct collie_kernels *t = kernels();
    if ((dtype == COLLIE_FLOAT16 || dtype == COLLIE_BFLOAT16) && op->id < COLLIE_HALF_OPS) {
        reduce_half(t->half[op->id][dtype == COLLIE_BFLOAT16], dst, srcs, nsrc, count);
        return COLLIE_OK;
    }
    if (op->id >= COLLIE_OPID_BAND && op->id <= COLLIE_OPID_BXOR && dtype <= COLLIE_UINT64) {
        count *= esize;   /* bitwise ops do not care about the element width */
        dtype = COLLIE_UINT8;
        esize = 1;
    }
    collie_kary_fn k = dtype < COLLIE_DTYPE_BUILTIN_COUNT ? t->kary[op->id][dtype] : NULL;
    if (!k)
        return collie_fail(COLLIE_ERR_INTERNAL, "reduce: op %s is not defined for datatype %s",
                           op->name, collie_dtype_name(dtype));
    reduce_kary(k, dst, srcs, nsrc, count, esize);
    return COLLIE_OK;
}
