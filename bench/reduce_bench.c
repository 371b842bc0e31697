/*
 * reduce_bench.c — throughput of the reduction kernel (collie_reduce_n) per kernel family,
 * next to memcpy of the same size.  Cases: float32/float64 sum with 2 sources in place
 * (dst = srcs[0]) and with 4 sources into a separate dst.  GB/s counts the bytes read
 * plus written (2 sources in place: 3×size; 4 sources: 5×size; memcpy: 2×size); each
 * figure is the best of 3 timed runs of an iteration count calibrated to ~target ms.
 *
 * usage: reduce_bench [-s MIN_KIB] [-S MAX_KIB] [-t TARGET_MS] [-i ITERS]
 *   defaults: 4 KiB … 65536 KiB (×4 steps), 60 ms per figure, adaptive iterations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/base.h"
#include "types/types.h"

struct bench_cfg {
    size_t min_bytes, max_bytes;
    double target_ns;
    long fixed_iters;
};

struct bench_case {
    const char *label;
    collie_dtype_t dtype;
    int nsrc;
    int in_place;
};

static const struct bench_case cases[] = {
    { "f32 n2 inpl", COLLIE_FLOAT32, 2, 1 },
    { "f32 n4", COLLIE_FLOAT32, 4, 0 },
    { "f64 n2 inpl", COLLIE_FLOAT64, 2, 1 },
    { "f64 n4", COLLIE_FLOAT64, 4, 0 },
};
#define NCASES (sizeof cases / sizeof cases[0])

struct buffers {
    char *src[4];
    char *dst;
};

static void one_run(const struct bench_case *c, struct buffers *b, size_t bytes) {
    if (!c) {
        memcpy(b->dst, b->src[0], bytes);
        return;
    }
    const void *srcs[4] = { b->src[0], b->src[1], b->src[2], b->src[3] };
    void *dst = c->in_place ? b->src[0] : b->dst;
    collie_reduce_n(dst, srcs, c->nsrc, bytes / collie_dtype_size(c->dtype), c->dtype,
                    COLLIE_SUM);
}

static double time_runs(const struct bench_case *c, struct buffers *b, size_t bytes, long n) {
    uint64_t t0 = collie_now_ns();
    for (long i = 0; i < n; i++)
        one_run(c, b, bytes);
    return (double)(collie_now_ns() - t0);
}

/* Best GB/s over 3 timed runs (c == NULL: memcpy). */
static double measure(const struct bench_case *c, struct buffers *b, size_t bytes,
                      const struct bench_cfg *cfg) {
    long n = cfg->fixed_iters;
    if (n <= 0) {
        n = 1;
        double t;
        while ((t = time_runs(c, b, bytes, n)) < cfg->target_ns / 8 && n < (1L << 30))
            n *= 2;
        n = (long)(n * (cfg->target_ns / 3) / (t > 1 ? t : 1)) + 1;
    }
    double best = 1e300;
    for (int r = 0; r < 3; r++) {
        double t = time_runs(c, b, bytes, n);
        best = t < best ? t : best;
    }
    double moved = c ? (double)bytes * (c->nsrc + 1) : 2.0 * bytes;
    return moved * n / best;   /* bytes per ns = GB/s */
}

static int alloc_buffers(struct buffers *b, size_t bytes) {
    for (int k = 0; k < 4; k++) {
        if (posix_memalign((void **)&b->src[k], 64, bytes))
            return -1;
        for (size_t i = 0; i < bytes / sizeof(float); i++)
            ((float *)b->src[k])[i] = (float)((i + (size_t)k) % 7) * 0.25f;
    }
    if (posix_memalign((void **)&b->dst, 64, bytes))
        return -1;
    memset(b->dst, 0, bytes);
    return 0;
}

static void free_buffers(struct buffers *b) {
    for (int k = 0; k < 4; k++)
        free(b->src[k]);
    free(b->dst);
}

static void print_size(size_t bytes) {
    if (bytes >= (1u << 20))
        printf("%6zu MiB", bytes >> 20);
    else
        printf("%6zu KiB", bytes >> 10);
}

static int bench_size(size_t bytes, const struct bench_cfg *cfg, const char *const *isas,
                      int nisa) {
    struct buffers b;
    if (alloc_buffers(&b, bytes)) {
        fprintf(stderr, "reduce_bench: cannot allocate 5 × %zu bytes\n", bytes);
        return -1;
    }
    double mc = measure(NULL, &b, bytes, cfg);
    for (int i = 0; i < nisa; i++) {
        collie_reduce_force_isa(isas[i]);
        print_size(bytes);
        printf("  %-7s %8.1f", isas[i], mc);
        for (size_t c = 0; c < NCASES; c++)
            printf("  %11.1f", measure(&cases[c], &b, bytes, cfg));
        printf("\n");
        fflush(stdout);
    }
    free_buffers(&b);
    return 0;
}

static int parse_args(int argc, char **argv, struct bench_cfg *cfg) {
    int opt;
    while ((opt = getopt(argc, argv, "s:S:t:i:h")) != -1) {
        switch (opt) {
        case 's': cfg->min_bytes = strtoull(optarg, NULL, 0) << 10; break;
        case 'S': cfg->max_bytes = strtoull(optarg, NULL, 0) << 10; break;
        case 't': cfg->target_ns = strtod(optarg, NULL) * 1e6; break;
        case 'i': cfg->fixed_iters = strtol(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: %s [-s MIN_KIB] [-S MAX_KIB] [-t TARGET_MS] [-i ITERS]\n",
                    argv[0]);
            return -1;
        }
    }
    if (cfg->min_bytes < 1024 || cfg->max_bytes < cfg->min_bytes || cfg->target_ns <= 0) {
        fprintf(stderr, "reduce_bench: need 1 <= MIN_KIB <= MAX_KIB and TARGET_MS > 0\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    struct bench_cfg cfg = { 4u << 10, 64u << 20, 60e6, 0 };
    if (parse_args(argc, argv, &cfg))
        return 2;
    const char *all[] = { "scalar", "avx2", "avx512" }, *isas[3];
    int nisa = 0;
    for (int i = 0; i < 3; i++)
        if (collie_reduce_force_isa(all[i]) == COLLIE_OK)
            isas[nisa++] = all[i];
    printf("GB/s = (bytes read + written) / time; memcpy counts 2x size\n");
    printf("%10s  %-7s %8s", "size", "isa", "memcpy");
    for (size_t c = 0; c < NCASES; c++)
        printf("  %11s", cases[c].label);
    printf("\n");
    for (size_t bytes = cfg.min_bytes; bytes <= cfg.max_bytes; bytes *= 4)
        if (bench_size(bytes, &cfg, isas, nisa))
            return 1;
    return 0;
}
