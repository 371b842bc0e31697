/*
 * mpi_soak_forms.c — mpi_soak's call forms beyond the blocking one: batches of MPI_I*
 * calls (with a blocking call among them sometimes, persistent starts, an MPI_Isend/Irecv
 * ring), the persistent set (made every EPOCH calls, runs started in per-rank orders), and
 * their completion: each rank completes what is pending in an order and a way of its own
 * (MPI_Wait, Waitall, Waitany, Waitsome, Test, Testany, Testsome, Testall; sometimes one
 * MPI_Wait first), each request reported exactly once.
 */
#include <stdio.h>

#include "mpi_soak.h"

/* ---- completion ------------------------------------------------------------------------------ */

enum { W_WAIT, W_WAITALL, W_WAITANY, W_WAITSOME, W_TEST, W_TESTANY, W_TESTSOME, W_TESTALL, W_COUNT };
static const char *const wait_names[W_COUNT] = { "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                                                 "MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall" };

/* order[0..k) = 0..k-1 shuffled by this rank's draws. */
void own_order(int *order, int k, int step, int what) {
    for (int i = 0; i < k; i++)
        order[i] = i;
    for (int i = k - 1; i > 0; i--) {
        int j = (int)(draw_mine(step, what + i) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

static void completion_fail(int step, const char *how, const char *what, int got, int want) {
    fprintf(stderr, "FAIL: mpi_soak: rank %d, calls from %d: %s %s (%d, expected %d)\n", world_rank, step,
            how, what, got, want);
    failures++;
}

/* Marks the indices a completion call reported; a reported slot becomes MPI_REQUEST_NULL
 * (a persistent request stays inactive, and MPICH 4.0.2 reports it again otherwise). */
static int mark(MPI_Request *a, bool *done, const int *idx, int k, int step, const char *how) {
    for (int j = 0; j < k; j++) {
        if (idx[j] < 0 || idx[j] >= MAX_REQS || done[idx[j]]) {
            completion_fail(step, how, "reported a request twice or an index out of range", idx[j], -1);
            return 0;
        }
        done[idx[j]] = true;
        a[idx[j]] = MPI_REQUEST_NULL;
    }
    return k;
}

/* Loops of one completion call until all k are reported. */
static void complete_loop(MPI_Request *a, bool *done, int k, int left, int how, int step) {
    int idx[MAX_REQS], out, flag;
    const char *name = wait_names[how];
    while (left > 0) {
        out = 0;
        if (how == W_WAITANY || how == W_TESTANY) {
            flag = 1;
            must(how == W_WAITANY ? MPI_Waitany(k, a, &idx[0], MPI_STATUS_IGNORE)
                                  : MPI_Testany(k, a, &idx[0], &flag, MPI_STATUS_IGNORE), NULL, name);
            out = !flag ? 0 : idx[0] == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
        } else {
            must(how == W_WAITSOME ? MPI_Waitsome(k, a, &out, idx, MPI_STATUSES_IGNORE)
                                   : MPI_Testsome(k, a, &out, idx, MPI_STATUSES_IGNORE), NULL, name);
        }
        if (out == MPI_UNDEFINED) {
            completion_fail(step, name, "found no active request with some left", 0, left);
            return;
        }
        int marked = mark(a, done, idx, out, step, name);
        if (marked != out)
            return;
        left -= out;
    }
}

/* MPI_Testall.  MPICH 4.0.2 returns MPI_ERR_IN_STATUS where every status says
 * MPI_SUCCESS (a finished persistent collective) or MPI_ERR_PENDING (a request not
 * complete yet): not an error. */
static void testall(MPI_Request *a, int k, int *flag) {
    MPI_Status st[MAX_REQS];
    int rc = MPI_Testall(k, a, flag, st);
    for (int i = 0; rc == MPI_ERR_IN_STATUS && i < k; i++)
        if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING)
            must(st[i].MPI_ERROR, NULL, "MPI_Testall (a request's status)");
    if (rc != MPI_ERR_IN_STATUS)
        must(rc, NULL, "MPI_Testall");
}

/* MPI_Waitall; on MPI_ERR_IN_STATUS the statuses' errors are reported first. */
static void waitall(MPI_Request *a, int k) {
    MPI_Status st[MAX_REQS];
    int rc = MPI_Waitall(k, a, st);
    for (int i = 0; rc == MPI_ERR_IN_STATUS && i < k; i++)
        if (st[i].MPI_ERROR != MPI_SUCCESS)
            fprintf(stderr, "FAIL: mpi_soak: rank %d: MPI_Waitall: request %d of %d: error %d\n", world_rank,
                    i, k, st[i].MPI_ERROR);
    must(rc, NULL, "MPI_Waitall");
}

/* Completes reqs[0..k) in this rank's order and way: sometimes one MPI_Wait first. */
void complete_all(const MPI_Request *reqs, int k, int step) {
    MPI_Request a[MAX_REQS];
    bool done[MAX_REQS] = { false };
    int order[MAX_REQS], how = (int)(draw_mine(step, 80) % W_COUNT), left = k, flag = 0;
    own_order(order, k, step, 70);
    for (int i = 0; i < k; i++)
        a[i] = reqs[order[i]];
    bool wait_first = k > 1 && draw_mine(step, 81) % 3 == 0;
    if (verbose > 1 || (verbose && world_rank == 0))
        fprintf(stderr, "mpi_soak: rank %d: completing %d requests from call %d: %s%s\n", world_rank, k, step,
                wait_first ? "MPI_Wait on one, then " : "", wait_names[how]);
    if (wait_first) {
        must(MPI_Wait(&a[0], MPI_STATUS_IGNORE), NULL, "MPI_Wait");
        a[0] = MPI_REQUEST_NULL, done[0] = true, left--;
    }
    switch (how) {
    case W_WAIT:
        for (int i = 0; i < k; i++)
            if (!done[i])
                must(MPI_Wait(&a[i], MPI_STATUS_IGNORE), NULL, "MPI_Wait");
        break;
    case W_WAITALL: waitall(a, k); break;
    case W_TESTALL:
        while (!flag)
            testall(a, k, &flag);
        break;
    case W_TEST:
        while (left > 0)
            for (int i = 0; i < k; i++) {
                if (done[i])
                    continue;
                must(MPI_Test(&a[i], &flag, MPI_STATUS_IGNORE), NULL, "MPI_Test");
                if (flag)
                    done[i] = true, a[i] = MPI_REQUEST_NULL, left--;
            }
        break;
    default: complete_loop(a, done, k, left, how, step); break;
    }
}

/* ---- persistent requests ------------------------------------------------------------------ */

/* Set `epoch`'s requests, made in the same order on every rank. */
void pers_begin(pers_set *ps, int epoch) {
    for (int h = 0; h < PSET; h++) {
        call *c = &ps->pc[h];
        plan(c, -1000 - epoch * 8 - h, F_PERSISTENT);
        ps->alive[h] = c->member;
        if (!ps->alive[h])
            continue;
        setup(c);
        start_call(c);
    }
}

void pers_end(pers_set *ps) {
    for (int h = 0; h < PSET; h++)
        if (ps->alive[h]) {
            must(MPI_Request_free(&ps->pc[h].req), &ps->pc[h], "MPI_Request_free");
            soak_release(&ps->pc[h]);
            ps->alive[h] = false;
        }
}

/* Starts a run of the set's requests with new input, in this rank's order (the dup's
 * ordered ones keep theirs), by MPI_Start or MPI_Startall; their handles go to reqs and
 * their indices to which.  Returns how many. */
static int pers_start(pers_set *ps, int step, MPI_Request *reqs, int *which) {
    int k = 1 + (int)(draw(step, 14) % PSET), first = (int)(draw(step, 15) % PSET), order[PSET], n = 0;
    own_order(order, k, step, 40);
    for (int i = 0; i < k; i++)   /* the ordered ones take the places of ordered ones, in order */
        for (int j = i + 1; j < k; j++) {
            call *a = &ps->pc[(first + order[i]) % PSET], *b = &ps->pc[(first + order[j]) % PSET];
            if (a->ordered && b->ordered && order[i] > order[j]) {
                int t = order[i];
                order[i] = order[j], order[j] = t;
            }
        }
    for (int i = 0; i < k; i++) {
        int h = (first + order[i]) % PSET;
        if (!ps->alive[h])
            continue;
        call *c = &ps->pc[h];
        c->vstep = step;
        soak_fill(c);
        print_call(c);
        which[n] = h;
        reqs[n++] = c->req;
    }
    if (draw_mine(step, 16) % 2)
        must(MPI_Startall(n, reqs), NULL, "MPI_Startall");
    else
        for (int i = 0; i < n; i++)
            must(MPI_Start(&reqs[i]), &ps->pc[which[i]], "MPI_Start");
    return n;
}

void pers_run(pers_set *ps, int step) {
    MPI_Request reqs[PSET];
    int which[PSET], n = pers_start(ps, step, reqs, which);
    complete_all(reqs, n, step);
    for (int i = 0; i < n; i++)
        soak_check(&ps->pc[which[i]]);
}

/* ---- batches of split-phase calls -------------------------------------------------------- */

/* An MPI_Isend/Irecv ring on the world among a batch's requests. */
typedef struct ring { int64_t out[64], in[64]; int n; } ring;

static void ring_start(ring *g, int step, MPI_Request *r) {
    g->n = 1 + (int)(draw(step, 90) % 64);
    for (int i = 0; i < g->n; i++) {
        g->out[i] = (int64_t)mix((uint64_t)step * 1000 + (uint64_t)world_rank * 64 + (uint64_t)i);
        g->in[i] = -1;
    }
    int left = (world_rank + world_size - 1) % world_size, right = (world_rank + 1) % world_size;
    must(MPI_Irecv(g->in, g->n, MPI_INT64_T, left, 7, MPI_COMM_WORLD, &r[0]), NULL, "MPI_Irecv");
    must(MPI_Isend(g->out, g->n, MPI_INT64_T, right, 7, MPI_COMM_WORLD, &r[1]), NULL, "MPI_Isend");
}

static void ring_check(const ring *g, int step) {
    int left = (world_rank + world_size - 1) % world_size;
    for (int i = 0; i < g->n; i++)
        if (g->in[i] != (int64_t)mix((uint64_t)step * 1000 + (uint64_t)left * 64 + (uint64_t)i)) {
            completion_fail(step, "MPI_Irecv in a batch:", "wrong element", i, -1);
            return;
        }
}

/* Calls step..step+k-1: MPI_I* (one of them sometimes blocking, run while the others are
 * pending; sometimes a run of persistent requests started after them, and an MPI ring),
 * completed together in this rank's order and way, then checked. */
void run_batch(int step, int k, pers_set *ps) {
    call cs[MAX_BATCH];
    MPI_Request reqs[MAX_REQS];
    int nreq = 0, which[PSET], npers = 0;
    bool with_ring = draw(step, 91) % 4 == 0, with_pers = draw(step, 93) % 4 == 0;
    ring g;
    for (int i = 0; i < k; i++) {
        bool blocking = i > 0 && draw(step + i, 92) % 5 == 0;
        plan(&cs[i], step + i, blocking ? F_BLOCKING : F_NONBLOCKING);
        setup(&cs[i]);
        if (!cs[i].member)
            continue;
        start_call(&cs[i]);
        if (!blocking)
            reqs[nreq++] = cs[i].req;
    }
    if (with_pers)
        nreq += npers = pers_start(ps, step, &reqs[nreq], which);
    if (with_ring) {
        ring_start(&g, step, &reqs[nreq]);
        nreq += 2;
    }
    complete_all(reqs, nreq, step);
    if (with_ring)
        ring_check(&g, step);
    for (int i = 0; i < npers; i++)
        soak_check(&ps->pc[which[i]]);
    for (int i = 0; i < k; i++)
        finish_call(&cs[i]);
}
