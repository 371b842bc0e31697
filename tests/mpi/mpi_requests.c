/*
 * mpi_requests.c — MPI's completion calls on arrays that mix requests collie serves with
 * MPI's own, and broadcasts of datatypes with gaps in their nonblocking and persistent
 * forms.  Run plain and with LD_PRELOAD=libcollie_mpi.so (run_interlock.sh); every result
 * is checked against values computed here.
 *
 *   some     an MPI_Iallreduce, an MPI_Ibcast and a started MPI_Allreduce_init (collie)
 *            with an MPI_Irecv and an MPI_Isend (MPI) and a null request: once
 *            MPI_Request_get_status says all are complete, one MPI_Testsome (then one
 *            MPI_Waitsome) must report all of them, each once, and the next one
 *            MPI_UNDEFINED; then loops of MPI_Waitsome, MPI_Testsome, MPI_Waitany and
 *            MPI_Testany, each request reported exactly once; and MPI_Testall that finds
 *            an MPI request incomplete must leave a finished persistent request to be
 *            reported by MPI_Waitany
 *   gapped   MPI_Ibcast and MPI_Bcast_init where the ranks pass different datatypes of
 *            one signature (3 ints: a vector with gaps, a contiguous type, a resized one
 *            with a trailing gap); roots with and without gaps; the datatype freed right
 *            after MPI_Ibcast; the persistent root's data changed between starts; gaps
 *            must stay untouched
 *   ordered  persistent allreduce, bcast and barrier with MPI-4's info key
 *            mpi_assert_strict_persistent_collective_ordering (on the init's info, then on
 *            the communicator's), started in one order everywhere, several rounds
 *
 * Usage: mpi_requests PATTERN[,PATTERN...] BYTES[,BYTES...].  Prints "passed: 0 failures".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_pcoll.h"
#include "mpi_test_finish.h"

enum { NREQ = 6, TAG = 11 };

static int rank, size, failures;

static void fail(const char *what, size_t bytes, long got, long want) {
    failures++;
    fprintf(stderr, "FAIL: rank %d: %s, %zu bytes: got %ld, expected %ld\n", rank, what, bytes,
            got, want);
}

/* allreduce input: (rank + 1) * (i % 1000 + 1); the sum over ranks is exact in doubles */
static void fill(double *v, size_t n, int scale) {
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(rank + 1) * (double)(i % 1000 + 1) * scale;
}

static void check_sum(const double *v, size_t n, int scale, size_t bytes, const char *what) {
    double ranks = (double)size * (size + 1) / 2;
    for (size_t i = 0; i < n; i++)
        if (v[i] != ranks * (double)(i % 1000 + 1) * scale) {
            fail(what, bytes, (long)v[i], (long)(ranks * (double)(i % 1000 + 1) * scale));
            return;
        }
}

/* ---- some ------------------------------------------------------------------------------- */

typedef struct reqset {
    size_t n;                     /* doubles per allreduce */
    double *in, *out, *pin, *pout;
    int bcast, token_in, token_out;
    MPI_Request r[NREQ];          /* 0 iallreduce, 1 irecv, 2 isend, 3 null, 4 ibcast, 5 persistent */
    MPI_Request persistent;       /* the Allreduce_init request, kept across rounds */
    int active;                   /* how many of r are active */
} reqset;

static void start_all(reqset *s, int round) {
    fill(s->in, s->n, round + 1);
    fill(s->pin, s->n, round + 2);
    memset(s->out, 0, s->n * sizeof *s->out);
    memset(s->pout, 0, s->n * sizeof *s->pout);
    s->bcast = rank == 0 ? 4000 + round : -1;
    s->token_out = rank * 100 + round;
    s->token_in = -1;
    MPI_Iallreduce(s->in, s->out, (int)s->n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &s->r[0]);
    MPI_Irecv(&s->token_in, 1, MPI_INT, (rank + size - 1) % size, TAG, MPI_COMM_WORLD, &s->r[1]);
    MPI_Isend(&s->token_out, 1, MPI_INT, (rank + 1) % size, TAG, MPI_COMM_WORLD, &s->r[2]);
    s->r[3] = MPI_REQUEST_NULL;
    MPI_Ibcast(&s->bcast, 1, MPI_INT, 0, MPI_COMM_WORLD, &s->r[4]);
    s->active = 4;
    s->r[5] = MPI_REQUEST_NULL;
#if HAVE_PCOLL
    s->r[5] = s->persistent;
    MPI_Start(&s->r[5]);
    s->active = 5;
#endif
}

static void check_all(reqset *s, int round, size_t bytes, const char *how) {
    char what[96];
    snprintf(what, sizeof what, "some pattern (%s), allreduce", how);
    check_sum(s->out, s->n, round + 1, bytes, what);
    snprintf(what, sizeof what, "some pattern (%s), persistent allreduce", how);
    if (HAVE_PCOLL)
        check_sum(s->pout, s->n, round + 2, bytes, what);
    int left = (rank + size - 1) % size;
    if (s->token_in != left * 100 + round)
        fail("some pattern, the received token", bytes, s->token_in, left * 100 + round);
    if (s->bcast != 4000 + round)
        fail("some pattern, ibcast", bytes, s->bcast, 4000 + round);
}

/* The Irecv's status (request 1), as reported at position j. */
static void check_recv_status(const MPI_Status *st, size_t bytes) {
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    if (st->MPI_SOURCE != (rank + size - 1) % size || st->MPI_TAG != TAG || count != 1)
        fail("some pattern, the Irecv's status (source)", bytes, st->MPI_SOURCE, (rank + size - 1) % size);
}

/* Each index reported once; counts them into seen[]. */
static void note(int *seen, const int *idx, int k, const MPI_Status *st, size_t bytes, const char *how) {
    for (int j = 0; j < k; j++) {
        if (idx[j] < 0 || idx[j] >= NREQ || seen[idx[j]]++) {
            fail(how, bytes, idx[j], -1);
            continue;
        }
        if (idx[j] == 1 && st)
            check_recv_status(&st[j], bytes);
    }
}

/* Whether a completed persistent request may be left in the array after it was reported:
 * MPICH 4.0.2 itself reports a persistent collective request again in every later
 * MPI_Testsome/Waitsome/Waitany (it stays "complete" while inactive), so plain MPICH skips
 * that check; Open MPI and the drop-in (collie's persistent requests) are checked.  The
 * loops below null a persistent request's slot once it was reported (the handle is kept). */
static bool rereport_checked(void) {
#if defined(MPICH_VERSION)
    return dlsym(RTLD_DEFAULT, "collie_version") != NULL;
#else
    return true;
#endif
}

/* Nulls the slots of the persistent requests just reported (indices idx[0..k)). */
static void null_reported_persistent(reqset *s, const int *idx, int k) {
    for (int j = 0; j < k; j++)
        if (idx[j] == 5)
            s->r[5] = MPI_REQUEST_NULL;
}

/* Everything complete (MPI_Request_get_status), then one call must report it all. */
static void some_in_one_call(reqset *s, size_t bytes, bool wait, int round) {
    start_all(s, round);
    for (int all = 0; !all;) {
        all = 1;
        for (int i = 0; i < NREQ; i++) {
            int flag = 1;
            if (s->r[i] != MPI_REQUEST_NULL)
                MPI_Request_get_status(s->r[i], &flag, MPI_STATUS_IGNORE);
            all = all && flag;
        }
    }
    int k = -1, idx[NREQ], seen[NREQ] = { 0 };
    MPI_Status st[NREQ];
    if (wait)
        MPI_Waitsome(NREQ, s->r, &k, idx, st);
    else
        MPI_Testsome(NREQ, s->r, &k, idx, st);
    const char *how = wait ? "some pattern, one MPI_Waitsome after all completed: outcount"
                           : "some pattern, one MPI_Testsome after all completed: outcount";
    if (k != s->active)
        fail(how, bytes, k, s->active);
    else
        note(seen, idx, k, st, bytes, "some pattern, an index reported twice or out of range");
    check_all(s, round, bytes, wait ? "Waitsome at once" : "Testsome at once");
    if (!rereport_checked())
        s->r[5] = MPI_REQUEST_NULL;
    k = -2;
    if (wait)
        MPI_Waitsome(NREQ, s->r, &k, idx, st);
    else
        MPI_Testsome(NREQ, s->r, &k, idx, st);
    if (k != MPI_UNDEFINED)
        fail("some pattern, a second call after all were reported: outcount (MPI_UNDEFINED)", bytes,
             k, MPI_UNDEFINED);
}

/* Loops of Waitsome / Testsome / Waitany / Testany until nothing is active. */
static void some_loop(reqset *s, size_t bytes, int kind, int round) {
    static const char *const names[] = { "Waitsome loop", "Testsome loop", "Waitany loop", "Testany loop" };
    start_all(s, round);
    int seen[NREQ] = { 0 }, total = 0;
    for (int guard = 0;; guard++) {
        int k = 0, idx[NREQ], flag = 1;
        MPI_Status st[NREQ];
        if (kind == 0)
            MPI_Waitsome(NREQ, s->r, &k, idx, st);
        else if (kind == 1)
            MPI_Testsome(NREQ, s->r, &k, idx, st);
        else if (kind == 2)
            MPI_Waitany(NREQ, s->r, &idx[0], &st[0]);
        else
            MPI_Testany(NREQ, s->r, &idx[0], &flag, &st[0]);
        if (kind >= 2)
            k = !flag ? 0 : idx[0] == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
        if (k == MPI_UNDEFINED)
            break;
        int before = failures;
        note(seen, idx, k, st, bytes, "some pattern, an index reported twice or out of range");
        null_reported_persistent(s, idx, k);
        total += k;
        if (failures > before || guard > 10000000) {
            fail(names[kind], bytes, total, s->active);
            return;
        }
    }
    if (total != s->active)
        fail(names[kind], bytes, total, s->active);
    check_all(s, round, bytes, names[kind]);
}

/* MPI_Testall that finds an MPI request incomplete changes nothing: the finished
 * persistent allreduce is still reported by MPI_Waitany afterwards. */
static void testall_keeps(reqset *s, size_t bytes, int round) {
#if HAVE_PCOLL
    MPI_Request r[3] = { s->persistent, MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    fill(s->pin, s->n, round + 2);
    MPI_Start(&r[0]);
    s->token_in = -1;
    s->token_out = rank * 100 + round;
    MPI_Irecv(&s->token_in, 1, MPI_INT, (rank + size - 1) % size, TAG + 1, MPI_COMM_WORLD, &r[1]);
    for (int flag = 0; !flag;)
        MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE);
    /* The token is sent after the barrier: flag must be false.  MPICH 4.0.2 then returns
     * MPI_ERR_IN_STATUS with MPI_ERR_PENDING for the incomplete request: accepted. */
    int flag = 1;
    MPI_Status st[2];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Testall(2, r, &flag, st);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (flag)
        fail("some pattern, MPI_Testall with an incomplete MPI_Irecv: flag", bytes, flag, 0);
    if (rc != MPI_SUCCESS && !(rc == MPI_ERR_IN_STATUS && st[1].MPI_ERROR == MPI_ERR_PENDING))
        fail("some pattern, MPI_Testall with an incomplete MPI_Irecv: its result", bytes, rc, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(&s->token_out, 1, MPI_INT, (rank + 1) % size, TAG + 1, MPI_COMM_WORLD, &r[2]);
    int seen[3] = { 0 }, total = 0;
    for (;;) {
        int index = -1;
        MPI_Waitany(3, r, &index, MPI_STATUS_IGNORE);
        if (index == MPI_UNDEFINED)
            break;
        if (index < 0 || index > 2 || seen[index]++)
            fail("some pattern, Waitany after Testall: index", bytes, index, -1);
        if (index == 0)
            r[0] = MPI_REQUEST_NULL;   /* the persistent one (see rereport_checked) */
        total++;
        if (total > 3)
            break;
    }
    if (total != 3)
        fail("some pattern, Waitany after a failed Testall: requests reported", bytes, total, 3);
    check_sum(s->pout, s->n, round + 2, bytes, "some pattern, persistent allreduce after Testall");
#else
    (void)s, (void)bytes, (void)round;
#endif
}

static void pattern_some(size_t bytes) {
    reqset s;
    memset(&s, 0, sizeof s);
    s.n = bytes / sizeof(double) ? bytes / sizeof(double) : 1;
    s.in = malloc(s.n * sizeof(double));
    s.out = malloc(s.n * sizeof(double));
    s.pin = malloc(s.n * sizeof(double));
    s.pout = malloc(s.n * sizeof(double));
    s.persistent = MPI_REQUEST_NULL;
#if HAVE_PCOLL
    PINIT(Allreduce_init)(s.pin, s.pout, (int)s.n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &s.persistent);
#endif
    int round = 0;
    some_in_one_call(&s, bytes, false, round++);
    some_in_one_call(&s, bytes, true, round++);
    for (int kind = 0; kind < 4; kind++)
        some_loop(&s, bytes, kind, round++);
    testall_keeps(&s, bytes, round++);
    if (s.persistent != MPI_REQUEST_NULL)
        MPI_Request_free(&s.persistent);
    free(s.in), free(s.out), free(s.pin), free(s.pout);
}

/* ---- ordered ---------------------------------------------------------------------------- */

/* Persistent allreduce, bcast and barrier with MPI-4's
 * mpi_assert_strict_persistent_collective_ordering: on the init's info (MPI_COMM_WORLD) and
 * on a communicator's (MPI_Comm_dup_with_info); every rank starts them in init order. */
static void pattern_ordered(size_t bytes) {
#if HAVE_PCOLL
    if (sizeof "mpi_assert_strict_persistent_collective_ordering" > MPI_MAX_INFO_KEY) {
        if (rank == 0)   /* Open MPI 4.1: 36 */
            printf("ordered: skipped (the key is longer than this MPI's MPI_MAX_INFO_KEY, %d)\n",
                   MPI_MAX_INFO_KEY);
        return;
    }
    size_t n = bytes / sizeof(double) ? bytes / sizeof(double) : 1;
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_strict_persistent_collective_ordering", "true");
    MPI_Comm dup;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup);
    for (int where = 0; where < 2; where++) {
        MPI_Comm comm = where == 0 ? MPI_COMM_WORLD : dup;
        MPI_Info ri = where == 0 ? info : MPI_INFO_NULL;
        int b = -1;
        MPI_Request r[3];
        PINIT(Allreduce_init)(in, out, (int)n, MPI_DOUBLE, MPI_SUM, comm, ri, &r[0]);
        PINIT(Bcast_init)(&b, 1, MPI_INT, size - 1, comm, ri, &r[1]);
        PINIT(Barrier_init)(comm, ri, &r[2]);
        for (int round = 0; round < 4; round++) {
            fill(in, n, round + 1);
            memset(out, 0, n * sizeof *out);
            b = rank == size - 1 ? 77 + round : -1;
            MPI_Startall(3, r);
            MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
            check_sum(out, n, round + 1, bytes, where == 0 ? "ordered pattern (init's info), allreduce"
                                                           : "ordered pattern (communicator's info), allreduce");
            if (b != 77 + round)
                fail("ordered pattern, bcast", bytes, b, 77 + round);
        }
        for (int k = 0; k < 3; k++)
            MPI_Request_free(&r[k]);
    }
    MPI_Comm_free(&dup);
    MPI_Info_free(&info);
    free(in), free(out);
#else
    (void)bytes;
#endif
}

/* ---- gapped ----------------------------------------------------------------------------- */

enum { SENTINEL = -7 };

/* This rank's type for kind k (each element: 3 ints): 0 a vector with gaps (ints at 0, 2,
 * 4 of 5), 1 contiguous, 2 contiguous resized to 4 ints (a trailing gap). */
static MPI_Datatype make_type(int k, int *ints_per_extent, int offs[3]) {
    MPI_Datatype t, c;
    if (k == 0) {
        MPI_Type_vector(3, 1, 2, MPI_INT, &t);
        *ints_per_extent = 5;
        offs[0] = 0, offs[1] = 2, offs[2] = 4;
    } else {
        MPI_Type_contiguous(3, MPI_INT, &c);
        if (k == 1)
            t = c;
        else {
            MPI_Type_create_resized(c, 0, 4 * sizeof(int), &t);
            MPI_Type_free(&c);
        }
        *ints_per_extent = k == 1 ? 3 : 4;
        offs[0] = 0, offs[1] = 1, offs[2] = 2;
    }
    MPI_Type_commit(&t);
    return t;
}

static int value(int root, int tag, int e, int j) { return root * 1000000 + tag * 10000 + e * 3 + j; }

typedef struct gbuf {
    int *buf, per, offs[3];
    size_t count;
    MPI_Datatype type;
} gbuf;

/* The root's data for (root, tag) at the data positions, the sentinel in every gap; the
 * others get the sentinel everywhere. */
static void gfill(gbuf *g, int root, int tag) {
    for (size_t i = 0; i < g->count * (size_t)g->per; i++)
        g->buf[i] = SENTINEL;
    if (rank != root)
        return;
    for (size_t e = 0; e < g->count; e++)
        for (int j = 0; j < 3; j++)
            g->buf[e * (size_t)g->per + (size_t)g->offs[j]] = value(root, tag, (int)e, j);
}

static void gcheck(const gbuf *g, int root, int tag, size_t bytes, const char *what) {
    for (size_t e = 0; e < g->count; e++)
        for (int p = 0; p < g->per; p++) {
            int j = -1;
            for (int q = 0; q < 3; q++)
                if (g->offs[q] == p)
                    j = q;
            int want = j < 0 ? SENTINEL : value(root, tag, (int)e, j);
            if (g->buf[e * (size_t)g->per + (size_t)p] != want) {
                fail(what, bytes, g->buf[e * (size_t)g->per + (size_t)p], want);
                return;
            }
        }
}

static void pattern_gapped(size_t bytes) {
    gbuf g;
    g.count = bytes / (3 * sizeof(int)) ? bytes / (3 * sizeof(int)) : 1;
    g.type = make_type(rank % 3, &g.per, g.offs);
    g.buf = malloc(g.count * (size_t)g.per * sizeof(int));
    int tag = 0;
    /* split-phase: root 0 (gaps), the last rank, rank 1 (contiguous); the type freed at once */
    int roots[3] = { 0, size - 1, 1 };
    for (int k = 0; k < 3; k++, tag++) {
        gfill(&g, roots[k], tag);
        MPI_Datatype t;
        MPI_Type_dup(g.type, &t);
        MPI_Request r;
        MPI_Ibcast(g.buf, (int)g.count, t, roots[k], MPI_COMM_WORLD, &r);
        MPI_Type_free(&t);   /* MPI: the pending broadcast still completes normally */
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        gcheck(&g, roots[k], tag, bytes, "gapped pattern, MPI_Ibcast");
    }
#if HAVE_PCOLL
    /* persistent: roots 0 and 1, three starts each, new root data every time */
    for (int root = 0; root < 2; root++) {
        MPI_Request r;
        PINIT(Bcast_init)(g.buf, (int)g.count, g.type, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        for (int start = 0; start < 3; start++, tag++) {
            gfill(&g, root, tag);
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            gcheck(&g, root, tag, bytes, "gapped pattern, MPI_Bcast_init");
        }
        MPI_Request_free(&r);
    }
#endif
    MPI_Type_free(&g.type);
    free(g.buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_requests PATTERN[,...] BYTES[,...] (at least 2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *patterns = strdup(argv[1]);
    for (char *p = strtok(patterns, ","); p; p = strtok(NULL, ",")) {
        char *sizes = strdup(argv[2]), *save = NULL;
        for (char *s = strtok_r(sizes, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
            size_t bytes = strtoull(s, NULL, 0);
            double t0 = MPI_Wtime();
            if (strcmp(p, "some") == 0)
                pattern_some(bytes);
            else if (strcmp(p, "gapped") == 0)
                pattern_gapped(bytes);
            else if (strcmp(p, "ordered") == 0)
                pattern_ordered(bytes);
            else {
                fprintf(stderr, "mpi_requests: unknown pattern %s\n", p);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (rank == 0)
                printf("%s %zu bytes, %d ranks: %.3f s\n", p, bytes, size, MPI_Wtime() - t0);
        }
        free(sizes);
    }
    free(patterns);
    return mpi_test_finish(failures);
}
