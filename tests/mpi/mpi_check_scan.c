/*
 * mpi_check_scan.c — MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan and
 * MPI_Exscan in every form, checked against mpi_check_ref.c's reference: reduce_scatter's
 * block r is the slice of the reduction of all ranks' inputs, scan's result at rank r the
 * reduction of ranks 0 … r (the reference over the first r+1 ranks), exscan's of ranks
 * 0 … r-1 (rank 0's result is undefined: not checked, not in the digest).
 *
 * Types and ops: int sum, char sum (the platform's char), double max, uint8 bxor in place,
 * MPI_DOUBLE_INT minloc, the commutative user op on int, the non-commutative one on pairs
 * (rank order matters); counts 0, 1, several, large; reduce_scatter's counts with zeros; the
 * halves of MPI_Comm_split (--colls-quick: about half the cases); long double (collie
 * passes it to PMPI).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef struct scase {
    enum xcoll coll;
    const ttype *t;
    enum top op;
    int count;          /* per rank (reduce_scatter: the base of the counts) */
    bool in_place;
    enum form form;
} scase;

/* Elements of rank j's block of reduce_scatter (zeros among them). */
static int rs_count(const scase *c, int j) {
    if (c->coll == X_RS_BLOCK)
        return c->count;
    return j % 3 == 2 ? 0 : c->count + j % 2;
}

typedef struct srun {
    const scase *c;
    int me, P;
    size_t in_elems, out_off, out_elems;   /* input elements; where the result is, how many */
    char *send, *recv, *full, *want;
    int *counts;
    const char *label;
} srun;

static void sfill(void *ctx, int salt) {
    srun *m = ctx;
    size_t sz = m->c->t->size;
    input_fill(m->c->t, m->c->op, m->me, salt, m->in_elems, m->send);
    if (m->c->in_place) {
        memcpy(m->recv, m->send, m->in_elems * sz);
    } else {
        memset(m->recv, 0x33, (m->out_elems ? m->out_elems : 1) * sz);
    }
}

static void sverify(void *ctx, int salt) {
    srun *m = ctx;
    const scase *c = m->c;
    if (c->coll == X_EXSCAN && m->me == 0)
        return;
    int ranks = c->coll == X_SCAN ? m->me + 1 : c->coll == X_EXSCAN ? m->me : m->P;
    reference(c->t, c->op, ranks, salt, m->in_elems, m->full);
    memcpy(m->want, m->full + m->out_off * c->t->size, m->out_elems * c->t->size);
    check(m->label, c->t, m->out_elems, m->recv, m->want);
}

static void run_scase(const scase *c, MPI_Comm comm, const char *cname) {
    srun m = { .c = c };
    MPI_Comm_rank(comm, &m.me);
    MPI_Comm_size(comm, &m.P);
    char label[200];
    snprintf(label, sizeof label, "%s %s %s %s n=%d %s%s", xcoll_names[c->coll], cname, c->t->name,
             top_names[c->op], c->count, form_names[c->form], c->in_place ? " in_place" : "");
    m.label = label;
    m.counts = xmalloc((size_t)m.P * sizeof *m.counts);
    bool rs = c->coll == X_RS || c->coll == X_RS_BLOCK;
    size_t total = 0;
    for (int j = 0; j < m.P; j++) {
        m.counts[j] = rs_count(c, j);
        m.out_off = j == m.me ? total : m.out_off;
        total += (size_t)m.counts[j];
    }
    m.in_elems = rs ? total : (size_t)c->count;
    m.out_elems = rs ? (size_t)m.counts[m.me] : (size_t)c->count;
    m.out_off = rs ? m.out_off : 0;
    size_t sz = c->t->size, in_bytes = m.in_elems * sz;
    m.send = xmalloc(in_bytes), m.full = xmalloc(in_bytes), m.want = xmalloc(m.out_elems * sz);
    m.recv = xmalloc(c->in_place ? in_bytes : m.out_elems * sz);
    xcall x = { .coll = c->coll, .sb = c->in_place ? MPI_IN_PLACE : m.send, .rb = m.recv,
                .rc = c->count, .rcs = m.counts,
                .rt = c->t->dt, .op = mpi_op(c->op), .comm = comm };
    xrun(&x, c->form, sfill, sverify, &m);
    bool undefined = c->coll == X_EXSCAN && m.me == 0;
    clear_padding(c->t, m.out_elems, m.recv);
    report_later(label, m.recv, undefined ? 0 : m.out_elems * sz);
    free(m.counts), free(m.send), free(m.recv), free(m.full), free(m.want);
}

static const ttype *tt(ttype *slot, ttype v) {
    *slot = v;
    return slot;
}

static void cases_for(enum xcoll coll, MPI_Comm comm, const char *cname, bool sub) {
    static ttype tchar, tuint8;
    const ttype *ch = tt(&tchar, (ttype){ "char", MPI_CHAR, CHAR_MIN < 0 ? K_SIGNED : K_UNSIGNED, 1 });
    const ttype *u8 = tt(&tuint8, (ttype){ "uint8", MPI_UNSIGNED_CHAR, K_UNSIGNED, 1 });
    int big = colls_quick ? 2000 : 10007;
    scase world[] = {
        { coll, type_int(), T_SUM, 1, false, F_BLOCKING },
        { coll, type_int(), T_SUM, 0, false, F_BLOCKING },
        { coll, ch, T_SUM, 7, false, F_BLOCKING },
        { coll, type_double(), T_MAX, big, false, F_BLOCKING },
        { coll, u8, T_BXOR, 33, true, F_BLOCKING },
        { coll, type_double_int(), T_MINLOC, 5, false, F_WAIT },
        { coll, type_int(), T_USER_SUM_MOD, 17, true, F_TEST },
        { coll, type_affine(), T_USER_AFFINE, 9, false, F_BLOCKING },
        { coll, type_affine(), T_USER_AFFINE, 4, true, F_WAIT },
        { coll, type_int(), T_SUM, 3, false, F_PERSISTENT },
        { coll, type_affine(), T_USER_AFFINE, 6, true, F_PERSISTENT },
    };
    scase half[] = {
        { coll, type_int(), T_MAX, 5, false, F_BLOCKING },
        { coll, type_affine(), T_USER_AFFINE, 3, true, F_WAIT },
    };
    const scase *list = sub ? half : world;
    size_t n = sub ? sizeof half / sizeof half[0] : sizeof world / sizeof world[0];
    unsigned in_quick = sub ? 0x2u : 0x38du;   /* --colls-quick: 1 (sub); 0, 2, 3, 7-9 */
    if (colls_quick > 1)                        /* --colls-min: 0, 5, 9 (one per form), world */
        in_quick = sub ? 0 : 0x221u;
    for (size_t i = 0; i < n; i++)
        if (!colls_quick || (in_quick >> i & 1u))
            run_scase(&list[i], comm, cname);
    report_flush();
}

/* Long double: collie passes it to PMPI; the same result (as doubles: no padding bytes). */
static void long_double_scan(void) {
    const ttype *ti = type_int();
    int n = 50;
    int *v = xmalloc((size_t)n * sizeof *v), *want = xmalloc((size_t)n * sizeof *want);
    long double *s = xmalloc((size_t)n * sizeof *s), *r = xmalloc((size_t)n * sizeof *r);
    double *out = xmalloc((size_t)n * sizeof *out);
    input_fill(ti, T_SUM, world_rank, 0, (size_t)n, v);
    for (int i = 0; i < n; i++)
        s[i] = v[i];
    MPI_Scan(s, r, n, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    reference(ti, T_SUM, world_rank + 1, 0, (size_t)n, want);
    for (int i = 0; i < n; i++) {
        out[i] = (double)r[i];
        v[i] = (int)r[i];
    }
    check("long double scan", ti, (size_t)n, v, want);
    report("long double scan", out, (size_t)n * sizeof *out);
    free(v), free(want), free(s), free(r), free(out);
}

void run_scan_cases(void) {
    enum xcoll colls[] = { X_RS_BLOCK, X_RS, X_SCAN, X_EXSCAN };
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_size - world_rank, &half);
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        cases_for(colls[i], MPI_COMM_WORLD, "world", false);
        cases_for(colls[i], half, world_rank % 2 ? "odd" : "even", true);
    }
    MPI_Comm_free(&half);
    long_double_scan();
}
