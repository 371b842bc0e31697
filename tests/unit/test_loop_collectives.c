/*
 * test_loop_collectives.c — every registered algorithm, run for real (real executor, real
 * reduction kernels, real data) on P virtual ranks of the in-process transport, checked
 * against a reference computed here: integer-valued float64 sums (exact), a
 * non-commutative user op (2×2 matrix product mod 65521, rank order), an association
 * sensitive float64 sum (BIG, -BIG, TINY: every rank must hold bitwise the same result),
 * in place or not, roots 0, P/2, P-1.  Small slots (COLLIE_SHM_SLOT_BYTES=256) so that
 * messages span many chunks.  COLLIE_LONG_TESTS=1 runs more team sizes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/internal.h"
#include "types/types.h"

#define MAXP 64
static int failures, cases;

static void matmul(const uint32_t *a, uint32_t *b) { /* b = a * b mod 65521 */
    uint64_t m = 65521, r[4];
    r[0] = ((uint64_t)a[0] * b[0] + (uint64_t)a[1] * b[2]) % m;
    r[1] = ((uint64_t)a[0] * b[1] + (uint64_t)a[1] * b[3]) % m;
    r[2] = ((uint64_t)a[2] * b[0] + (uint64_t)a[3] * b[2]) % m;
    r[3] = ((uint64_t)a[2] * b[1] + (uint64_t)a[3] * b[3]) % m;
    for (int i = 0; i < 4; i++)
        b[i] = (uint32_t)r[i];
}

static void user_matmul(const void *in, void *inout, size_t count, collie_dtype_t dt, void *ctx) {
    for (size_t i = 0; i < count; i++)
        matmul((const uint32_t *)in + 4 * i, (uint32_t *)inout + 4 * i);
}

enum kind { K_SUM_EXACT, K_MATRIX, K_ASSOC };

typedef struct world {
    int P;
    collie_transport *tps[MAXP];
    collie_team_t *teams[MAXP];
} world;

static int make_world(world *w, int P) {
    w->P = P;
    if (collie_loop_create(P, w->tps))
        return -1;
    for (int r = 0; r < P; r++)
        if (collie_team_create(w->tps[r], &w->teams[r]))
            return -1;
    return 0;
}

static void free_world(world *w) {
    for (int r = 0; r < w->P; r++)
        collie_team_destroy(w->teams[r]);
}

static void fill_input(enum kind k, int r, int P, size_t count, void *buf) {
    for (size_t i = 0; i < count; i++) {
        if (k == K_SUM_EXACT) {
            ((double *)buf)[i] = (double)((r * 7 + (int)i * 3) % 11) - 5.0;
        } else if (k == K_MATRIX) {
            uint32_t *m = (uint32_t *)buf + 4 * i;
            m[0] = (uint32_t)(r + 1 + i) % 65521;
            m[1] = (uint32_t)(2 * r + 3) % 65521;
            m[2] = (uint32_t)(i % 5);
            m[3] = 1;
        } else {
            int which = (r + (int)i) % 3;
            ((double *)buf)[i] = which == 0 ? 1e16 : which == 1 ? -1e16 : 1.0 + r;
        }
    }
}

static void reference(enum kind k, int P, size_t count, void *out) {
    size_t esz = k == K_MATRIX ? 16 : 8;
    char *tmp = malloc(count * esz + 16);
    for (int r = P - 1; r >= 0; r--) {  /* x0 ∘ (x1 ∘ (… )) folded from the right */
        fill_input(k, r, P, count, tmp);
        for (size_t i = 0; i < count; i++) {
            if (r == P - 1)
                memcpy((char *)out + i * esz, tmp + i * esz, esz);
            else if (k == K_MATRIX)
                matmul((uint32_t *)tmp + 4 * i, (uint32_t *)out + 4 * i);
            else
                ((double *)out)[i] += ((double *)tmp)[i];
        }
    }
    free(tmp);
}

/* Drives all ranks until every request is done; -1 on deadlock or error. */
static int drive(world *w, collie_request_t **reqs) {
    for (int iter = 0; iter < 1000000; iter++) {
        int pending = 0;
        for (int r = 0; r < w->P; r++) {
            if (!reqs[r])
                continue;
            int st = collie_test(reqs[r], 0);
            if (st < 0) {
                printf("rank %d failed: %s\n", r, collie_last_error());
                return -1;
            }
            pending += st != COLLIE_OK;
        }
        if (!pending)
            return 0;
    }
    printf("deadlock: no rank finishes\n");
    return -1;
}

typedef struct tcase {
    int coll, P, root;
    size_t count;
    enum kind kind;
    bool in_place;
    const collie_algorithm *alg;
} tcase;

static void report(const tcase *t, int rank, size_t i, const char *what) {
    if (failures++ < 30)
        printf("FAIL %s/%s P=%d count=%zu kind=%d in_place=%d root=%d rank %d element %zu: %s\n",
               collie_coll_name(t->coll), t->alg->name, t->P, t->count, t->kind, t->in_place,
               t->root, rank, i, what);
}

static void check_results(const tcase *t, char **out, const char *ref, size_t esz) {
    for (int r = 0; r < t->P; r++) {
        bool holds = t->coll != COLL_REDUCE || r == t->root;
        if (!holds)
            continue;
        for (size_t i = 0; i < t->count; i++) {
            const char *got = out[r] + i * esz;
            const char *want = t->kind == K_ASSOC ? out[t->root] + i * esz : ref + i * esz;
            if (memcmp(got, want, esz)) {
                report(t, r, i, t->kind == K_ASSOC ? "not bitwise identical to the root" : "wrong value");
                return;
            }
        }
    }
}

static void run_case(world *w, const tcase *t, collie_op_t matop) {
    if (failures)
        return; /* after a failure the virtual ranks' teams are unusable: stop */
    cases++;
    size_t esz = t->kind == K_MATRIX ? 16 : 8;
    collie_dtype_t dt = t->kind == K_MATRIX ? collie_dtype_bytes(16) : COLLIE_FLOAT64;
    collie_op_t op = t->kind == K_MATRIX ? matop : COLLIE_SUM;
    char *in[MAXP], *out[MAXP], *ref = malloc(t->count * esz + 16);
    collie_request_t *reqs[MAXP] = { 0 };
    reference(t->kind, t->P, t->count, ref);
    collie_force_algorithm(t->coll, t->alg->name);
    for (int r = 0; r < t->P; r++) {
        in[r] = malloc(t->count * esz + 16);
        out[r] = malloc(t->count * esz + 16);
        fill_input(t->kind, r, t->P, t->count, in[r]);
        if (t->coll == COLL_BCAST)
            memcpy(out[r], r == t->root ? ref : in[r], t->count * esz);
        else if (t->in_place)
            memcpy(out[r], in[r], t->count * esz);
        const void *send = t->coll == COLL_BCAST ? out[r] : (t->in_place ? COLLIE_IN_PLACE : in[r]);
        if (t->coll == COLL_REDUCE && t->in_place && r != t->root)
            send = in[r];
        collie_op_t o = (t->coll == COLL_BCAST || t->coll == COLL_BARRIER) ? NULL : op;
        int st = collie_request_build(w->teams[r], t->coll, send, out[r], t->count, dt, o, t->root,
                                      false, &reqs[r]);
        if (st == COLLIE_OK && strcmp(reqs[r]->algo->name, t->alg->name) != 0)
            report(t, r, 0, "algorithm was replaced by another");
        if (st == COLLIE_OK)
            st = collie_start(reqs[r]);
        if (st) {
            report(t, r, 0, collie_last_error());
            break;
        }
    }
    if (!failures && drive(w, reqs) != 0)
        report(t, -1, 0, "did not complete");
    else if (!failures && t->coll != COLL_BARRIER)
        check_results(t, out, ref, esz);
    for (int r = 0; r < t->P; r++) {
        collie_request_free(reqs[r]);
        free(in[r]);
        free(out[r]);
    }
    free(ref);
}

static bool accepts(const collie_algorithm *alg, int coll, int P, bool commutative) {
    collie_coll_args a = { .coll = coll, .size = P, .count = 8, .elem_size = 8, .bytes = 64,
                           .commutative = commutative, .shared_memory = true };
    const char *why;
    return collie_algorithm_accepts(alg, &a, &why);
}

static void sweep_team(int P, collie_op_t matop) {
    world w;
    if (make_world(&w, P)) {
        printf("FAIL cannot make a world of %d\n", P);
        failures++;
        return;
    }
    size_t counts[] = { 0, 1, (size_t)P - (P > 1), (size_t)P, (size_t)P + 1, 300, 1001 };
    for (int coll = 0; coll <= COLL_BARRIER; coll++)   /* the others: mp tests */
        for (size_t a = 0; a < collie_algorithm_count(coll); a++) {
            tcase t = { .coll = coll, .P = P, .alg = collie_algorithm_at(coll, a) };
            for (int k = 0; k < 3; k++) {
                t.kind = (enum kind)k;
                if (coll == COLL_BARRIER && k)
                    continue;
                if (!accepts(t.alg, coll, P, k != K_MATRIX) || (coll == COLL_BCAST && k == K_MATRIX))
                    continue;
                for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
                    for (int root = 0; root < (coll == COLL_REDUCE || coll == COLL_BCAST ? 3 : 1); root++)
                        for (int ip = 0; ip < 2; ip++) {
                            t.count = coll == COLL_BARRIER ? 0 : counts[c];
                            t.root = root == 0 ? 0 : root == 1 ? P / 2 : P - 1;
                            t.in_place = ip;
                            run_case(&w, &t, matop);
                        }
            }
        }
    free_world(&w);
}

int main(void) {
    setenv("COLLIE_SHM_SLOT_BYTES", "256", 1);
    /* Slots per channel must be a power of two: a clear error otherwise. */
    setenv("COLLIE_SHM_SLOTS", "3", 1);
    collie_transport *bad[2];
    if (collie_loop_create(2, bad) == COLLIE_OK || !strstr(collie_last_error(), "power of two")) {
        printf("FAIL COLLIE_SHM_SLOTS=3 accepted or unclear: %s\n", collie_last_error());
        return 1;
    }
    setenv("COLLIE_SHM_SLOTS", "2", 1);   /* the most credit pressure */
    collie_op_t matop;
    if (collie_op_create(user_matmul, NULL, 0, &matop)) {
        printf("FAIL op_create: %s\n", collie_last_error());
        return 1;
    }
    int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 31, 32, 33 };
    int nsizes = sizeof sizes / sizeof *sizes;
    if (getenv("COLLIE_LONG_TESTS"))
        for (int P = 1; P <= MAXP; P++)
            sweep_team(P, matop);
    else
        for (int i = 0; i < nsizes; i++)
            sweep_team(sizes[i], matop);
    collie_op_free(matop);
    printf("%s: %d cases, %d failures\n", failures ? "FAIL" : "ok", cases, failures);
    return failures != 0;
}
