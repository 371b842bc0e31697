/*
 * mp_soak.c — a seeded random sequence of collectives, one after another, checked call by
 * call: what the structured sweeps (mp_collectives, mp_colls) do not do is change the
 * collective, the size class, the buffer kind and the call form from one call to the next,
 * so that each call starts on the state the previous ones left (the cells' step counters,
 * the board and its `done` words, the slots' sequence numbers, the path trial of a size
 * class half-way through, requests still in flight on the team).
 *
 * Every rank draws the same sequence from the seed: per call the collective (allreduce,
 * reduce, bcast, barrier, allgather, reduce_scatter_block, alltoall, gather, scatter,
 * scan, exscan), the element count (0, or log-uniform from 1 element to 2 MiB of data per
 * rank), the op (sum, max, bxor on int64: exact in any order), the root, in place or not
 * (where MPI allows it), the team (the world or this rank's half of a split: even and odd
 * ranks), and whether it joins a batch of 2–4 split-phase calls, which each rank then
 * waits for in an order of its own (so ranks wait on different teams at once).  Each rank draws its own buffer kind per call: malloc'd at an
 * offset of 0–7 int64s, or collie_alloc memory at an offset of 0 or some cache lines.
 * Inputs are a hash of (seed, call, rank, index); every rank computes the expected output
 * of its own buffers from that hash, in plain C here, and compares every element; the 8
 * int64s after each buffer must keep their sentinel and the inputs must not change.
 *
 * `threads`: two threads per process, each running its own sequence on its own copy of
 * the world (collie_team_dup) and half of it, under COLLIE_THREAD_MULTIPLE; its
 * collie_alloc memory then comes from the call's own team.
 *
 * `vforms`: a third of the block collectives go as their v forms (mp_soak_v.c).
 * `persistent`: persistent requests started in a different order on every rank between the
 * other calls (mp_soak_p.c).
 *
 * Usage: collie-run -n P mp_soak [CALLS [SEED [threads] [vforms] [persistent]]]
 *        (defaults 300 calls, seed 1)
 * Prints "mp_soak, P ranks, N calls, seed S: passed (0 failures)" on rank 0; on a mismatch
 * each rank prints the call, what it was and the first wrong element.  MP_SOAK_FROM=K
 * replays from call K (a call's draws do not depend on the calls before it);
 * MP_SOAK_VERBOSE=1 makes rank 0 print every call as it checks it.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"
#include "mp_soak.h"

static const char *const coll_names[C_ALL_COUNT] = {
    "allreduce", "reduce", "bcast", "barrier", "allgather", "reduce_scatter_block",
    "alltoall", "gather", "scatter", "scan", "exscan",
    "allgatherv", "reduce_scatter", "alltoallv", "gatherv", "scatterv" };
static const char *const op_names[O_COUNT] = { "sum", "max", "bxor" };

_Thread_local uint64_t seed;   /* each thread its own sequence (threads mode) */
int world_rank;
static _Atomic long failures;
static bool threads_mode;            /* collie_alloc from the call's team, not the world's */
static bool vforms_mode;             /* the v forms too (mp_soak_v.c) */
static bool persistent_mode;         /* persistent requests too (mp_soak_p.c) */

uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The sequence's draws (the same on every rank) and this rank's own. */
uint64_t draw(int step, int what) { return mix(seed ^ mix((uint64_t)step * 64 + (uint64_t)what)); }
uint64_t draw_mine(int step, int what) { return mix(draw(step, what) ^ mix((uint64_t)world_rank + 1)); }

/* Input element i of rank r (in the call's team) at call `step`: 40 bits, so P sums fit. */
int64_t input(int step, int sub, int r, size_t i) {
    return (int64_t)(mix(seed ^ mix(((uint64_t)step << 20) ^ ((uint64_t)sub << 18) ^ (uint64_t)r) ^ i) >> 24);
}

int64_t combine(int op, int64_t a, int64_t b) {
    switch (op) {
    case O_SUM: return (int64_t)((uint64_t)a + (uint64_t)b);
    case O_MAX: return a > b ? a : b;
    default: return a ^ b;
    }
}

collie_op_t op_handle(int op) { return op == O_SUM ? COLLIE_SUM : op == O_MAX ? COLLIE_MAX : COLLIE_BXOR; }

/* op over ranks lo..hi-1 of element i. */
int64_t reduced(const call *c, int lo, int hi, size_t i) {
    int64_t v = input(c->step, c->sub, lo, i);
    for (int r = lo + 1; r < hi; r++)
        v = combine(c->op, v, input(c->step, c->sub, r, i));
    return v;
}

void soak_must(int st, const call *c, const char *what) {
    if (st == COLLIE_OK)
        return;
    fprintf(stderr, "mp_soak: rank %d, call %d (%s, %zu elements): %s returned %d: %s\n", world_rank,
            c ? c->step : -1, c ? coll_names[c->coll] : "-", c ? c->count : 0, what, st,
            collie_last_error());
    exit(1);
}

/* ---- the calls' shapes ---------------------------------------------------------------- */

bool soak_rooted(int coll) { return coll == C_REDUCE || coll == C_BCAST || coll == C_GATHER || coll == C_SCATTER; }
static bool blocks(int coll) {
    return coll == C_ALLGATHER || coll == C_RSB || coll == C_ALLTOALL || coll == C_GATHER || coll == C_SCATTER;
}
bool is_root(const call *c) { return c->rank == c->root; }

/* May this rank pass COLLIE_IN_PLACE (as MPI allows it)? */
bool soak_in_place_allowed(const call *c) {
    switch (c->coll) {
    case C_ALLREDUCE: case C_ALLGATHER: case C_RSB: case C_ALLTOALL: case C_SCAN: case C_EXSCAN:
        return true;
    case C_REDUCE: case C_GATHER: case C_SCATTER:
        return is_root(c);
    default:
        return false;
    }
}

/* Elements of the send and receive buffers this rank needs (0: the call gets NULL). */
static void extents(const call *c, size_t *ns, size_t *nr) {
    if (c->coll >= C_COUNT) {
        v_extents(c, ns, nr);
        return;
    }
    size_t n = c->count, all = (size_t)c->size * n;
    bool ip = c->in_place;
    switch (c->coll) {
    case C_ALLREDUCE: case C_SCAN: case C_EXSCAN: *ns = ip ? 0 : n; *nr = n; break;
    case C_REDUCE: *ns = ip ? 0 : n; *nr = is_root(c) ? n : 0; break;
    case C_BCAST: *ns = 0; *nr = n; break;
    case C_ALLGATHER: *ns = ip ? 0 : n; *nr = all; break;
    case C_RSB: *ns = ip ? 0 : all; *nr = ip ? all : n; break;
    case C_ALLTOALL: *ns = ip ? 0 : all; *nr = all; break;
    case C_GATHER: *ns = ip ? 0 : n; *nr = is_root(c) ? all : 0; break;
    case C_SCATTER: *ns = is_root(c) ? all : 0; *nr = ip ? 0 : n; break;
    default: *ns = *nr = 0; break;
    }
}

/* The input this rank gives, element j of what it passes as input (its send buffer, or
 * the receive buffer in place). */
static int64_t given(const call *c, size_t j) {
    size_t n = c->count;
    if (c->coll >= C_COUNT)
        return v_given(c, j);
    switch (c->coll) {
    case C_ALLGATHER: return input(c->step, c->sub, c->rank, j % n);    /* in place: its block */
    default: return input(c->step, c->sub, c->rank, j);
    }
}

/* Is element j of the receive buffer defined after the call, and what must it be? */
static bool expected(const call *c, size_t j, int64_t *want) {
    if (c->coll >= C_COUNT)
        return v_expected(c, j, want);
    size_t n = c->count, q = n ? j / n : 0, i = n ? j % n : 0;
    int me = c->rank;
    switch (c->coll) {
    case C_ALLREDUCE: case C_REDUCE: *want = reduced(c, 0, c->size, j); return true;
    case C_SCAN: *want = reduced(c, 0, me + 1, j); return true;
    case C_EXSCAN: if (me == 0) return false; *want = reduced(c, 0, me, j); return true;
    case C_BCAST: *want = input(c->step, c->sub, c->root, j); return true;
    case C_ALLGATHER: case C_GATHER: *want = input(c->step, c->sub, (int)q, i); return true;
    case C_RSB: if (j >= n) return false; *want = reduced(c, 0, c->size, (size_t)me * n + j); return true;
    case C_ALLTOALL: *want = input(c->step, c->sub, (int)q, (size_t)me * n + i); return true;
    case C_SCATTER: *want = input(c->step, c->sub, c->root, (size_t)me * n + j); return true;
    default: return false;
    }
}

/* ---- buffers ---------------------------------------------------------------------------- */

#define GUARD 8                 /* int64s after each buffer that the call must not touch */
#define SENTINEL ((int64_t)0x5A5A5A5A5A5A5A5Bll)

/* Whose collie_alloc memory: the world's (a sub-team's calls then get memory that team
 * cannot map), or in threads mode the call's own team (threads share no team). */
static collie_team_t *heap_of(const call *c) { return threads_mode ? c->team : collie_world(); }

static int64_t *take(const call *c, size_t n, int which, void **base, bool *shared) {
    uint64_t d = draw_mine(c->step, 40 + which);
    size_t bytes = (n + GUARD + 8) * sizeof(int64_t) + 512;
    *shared = d & 1;
    *base = *shared ? collie_alloc(heap_of(c), bytes) : malloc(bytes);
    if (!*base) {
        fprintf(stderr, "mp_soak: rank %d: no memory for %zu bytes (%s)\n", world_rank, bytes,
                *shared ? "collie_alloc" : "malloc");
        exit(1);
    }
    size_t off = *shared ? (size_t)((d >> 1) % 4) * 64 : (size_t)((d >> 1) % 8) * sizeof(int64_t);
    return (int64_t *)((char *)*base + off);
}

static void give_back(const call *c, void *base, bool shared) {
    if (shared)
        collie_free(heap_of(c), base);
    else
        free(base);
}

/* The call's input for its step, and SENTINEL everywhere else in its buffers (again before
 * every start of a persistent request). */
void soak_fill(call *c) {
    size_t ns, nr;
    extents(c, &ns, &nr);
    for (size_t j = 0; c->send && j < ns + GUARD; j++)
        c->send[j] = SENTINEL;
    for (size_t j = 0; c->recv && j < nr + GUARD; j++)
        c->recv[j] = SENTINEL;
    int64_t *in = c->in_place ? c->recv : c->send;
    size_t nin = c->in_place ? nr : ns;
    if (c->coll == C_BCAST) {
        in = is_root(c) ? c->recv : NULL;
        nin = nr;
    }
    if (c->in_place && c->coll == C_SCATTER) {   /* the root keeps its block in sendbuf */
        in = c->send;
        nin = ns;
    }
    for (size_t j = 0; in && j < nin; j++)
        in[j] = given(c, j);
    if (c->in_place && c->coll == C_ALLGATHER)   /* only its own block is input */
        for (size_t j = 0; j < nr; j++)
            if (j / c->count != (size_t)c->rank)
                c->recv[j] = SENTINEL;
    if (c->in_place && c->coll == C_GATHER)      /* the root's block, at its place */
        for (size_t j = 0; j < nr; j++)
            c->recv[j] = j / c->count == (size_t)c->rank ? input(c->step, c->sub, c->rank, j % c->count) : SENTINEL;
}

void soak_prepare(call *c) {
    size_t ns, nr;
    if (c->coll >= C_COUNT && !v_layout(c)) {
        fprintf(stderr, "mp_soak: rank %d: no memory for a v form's counts\n", world_rank);
        exit(1);
    }
    extents(c, &ns, &nr);
    c->send = ns ? take(c, ns, 0, &c->send_base, &c->send_shared) : NULL;
    c->recv = nr || c->coll == C_BCAST ? take(c, nr, 1, &c->recv_base, &c->recv_shared) : NULL;
    soak_fill(c);
}

/* ---- the calls -------------------------------------------------------------------------- */

/* Declared in mp_soak.h. */
call_args soak_args(const call *c) {
    call_args a = { c->team, c->count, c->in_place && c->coll != C_SCATTER ? COLLIE_IN_PLACE : c->send,
                    c->in_place && c->coll == C_SCATTER ? COLLIE_IN_PLACE : c->recv, op_handle(c->op),
                    COLLIE_INT64 };
    return a;
}

/* Blocking when req is NULL, else split-phase. */
static int issue(call *c, collie_request_t **req) {
    if (c->coll >= C_COUNT)
        return v_issue(c, req);
    call_args a = soak_args(c);
    collie_team_t *t = a.t;
    const void *sb = a.sb;
    void *rb = a.rb;
    size_t n = a.n;
    int root = c->root;
    switch (c->coll) {
    case C_ALLREDUCE: return req ? collie_iallreduce(t, sb, rb, n, a.ty, a.op, req) : collie_allreduce(t, sb, rb, n, a.ty, a.op);
    case C_REDUCE: return req ? collie_ireduce(t, sb, rb, n, a.ty, a.op, root, req) : collie_reduce(t, sb, rb, n, a.ty, a.op, root);
    case C_BCAST: return req ? collie_ibcast(t, rb, n, a.ty, root, req) : collie_bcast(t, rb, n, a.ty, root);
    case C_BARRIER: return req ? collie_ibarrier(t, req) : collie_barrier(t);
    case C_ALLGATHER: return req ? collie_iallgather(t, sb, rb, n, a.ty, req) : collie_allgather(t, sb, rb, n, a.ty);
    case C_RSB: return req ? collie_ireduce_scatter_block(t, sb, rb, n, a.ty, a.op, req) : collie_reduce_scatter_block(t, sb, rb, n, a.ty, a.op);
    case C_ALLTOALL: return req ? collie_ialltoall(t, sb, rb, n, a.ty, req) : collie_alltoall(t, sb, rb, n, a.ty);
    case C_GATHER: return req ? collie_igather(t, sb, rb, n, a.ty, root, req) : collie_gather(t, sb, rb, n, a.ty, root);
    case C_SCATTER: return req ? collie_iscatter(t, sb, rb, n, a.ty, root, req) : collie_scatter(t, sb, rb, n, a.ty, root);
    case C_SCAN: return req ? collie_iscan(t, sb, rb, n, a.ty, a.op, req) : collie_scan(t, sb, rb, n, a.ty, a.op);
    default: return req ? collie_iexscan(t, sb, rb, n, a.ty, a.op, req) : collie_exscan(t, sb, rb, n, a.ty, a.op);
    }
}

static void describe(const call *c, char *out, size_t len) {
    snprintf(out, len, "call %d: %s of %zu int64 %s, root %d, %s%s, %s team of %d (rank %d there), "
             "send %s, recv %s", c->step, coll_names[c->coll], c->count, op_names[c->op], c->root,
             c->in_place ? "in place, " : "", c->persistent ? "persistent" : c->req ? "split-phase" : "blocking",
             c->sub ? "the half" : "the world", c->size, c->rank,
             !c->send ? "none" : c->send_shared ? "collie_alloc" : "malloc",
             !c->recv ? "none" : c->recv_shared ? "collie_alloc" : "malloc");
}

static void fail(const call *c, const char *what, size_t j, int64_t got, int64_t want) {
    char d[400];
    describe(c, d, sizeof d);
    fprintf(stderr, "mp_soak: rank %d, %s: %s at element %zu: %" PRId64 " where %" PRId64 " belongs\n",
            world_rank, d, what, j, got, want);
    failures++;
}

/* The receive buffer against the expected values, and the guards after both buffers. */
void soak_check(const call *c) {
    if (getenv("MP_SOAK_VERBOSE") && world_rank == 0) {
        char d[400];
        describe(c, d, sizeof d);
        fprintf(stderr, "%s\n", d);
    }
    size_t ns, nr;
    extents(c, &ns, &nr);
    if (c->coll == C_SCATTER && c->in_place)
        nr = 0;
    for (size_t j = 0; c->recv && j < nr; j++) {
        int64_t want;
        if (expected(c, j, &want) && c->recv[j] != want) {
            fail(c, "wrong result", j, c->recv[j], want);
            return;
        }
    }
    for (size_t g = 0; g < GUARD; g++) {
        if (c->recv && c->recv[nr + g] != SENTINEL)
            fail(c, "written past the receive buffer", nr + g, c->recv[nr + g], SENTINEL);
        if (c->send && c->send[ns + g] != SENTINEL)
            fail(c, "written past the send buffer", ns + g, c->send[ns + g], SENTINEL);
    }
    for (size_t j = 0; c->send && j < ns; j++)   /* inputs are read-only */
        if (c->send[j] != given(c, j)) {
            fail(c, "input changed", j, c->send[j], given(c, j));
            return;
        }
}

void soak_release(call *c) {
    if (c->send)
        give_back(c, c->send_base, c->send_shared);
    if (c->recv)
        give_back(c, c->recv_base, c->recv_shared);
    if (c->req)
        collie_request_free(c->req);
    v_free(c);   /* the v forms' arrays: after the request */
    c->send = c->recv = NULL;
    c->req = NULL;
}

/* ---- the sequence ----------------------------------------------------------------------- */


static size_t draw_count(int step, int what, int coll, int team_size) {
    uint64_t k = draw(step, what) % 23;
    if (k == 0)
        return 0;
    uint64_t lo = 1ull << (k - 1), bytes = lo + draw(step, what + 1) % lo;
    size_t n = bytes / 8 ? (size_t)(bytes / 8) : 1;
    size_t most = MAX_BYTES_PER_RANK / 8 / (size_t)(blocks(coll) ? team_size : 1);
    return n < most ? n : most;
}

/* Call `step` as every rank draws it (team: the world or this rank's half). */
static void plan(call *c, int step, const shape *hot, collie_team_t *world, collie_team_t *half) {
    memset(c, 0, sizeof *c);
    c->step = step;
    c->sub = half && draw(step, 6) % 4 == 0;
    c->team = c->sub ? half : world;
    c->rank = collie_rank(c->team);
    c->size = collie_size(c->team);
    if (draw(step, 1) % 10 < 6) {
        const shape *h = &hot[draw(step, 2) % HOT];
        size_t most = MAX_BYTES_PER_RANK / 8 / (size_t)(blocks(h->coll) ? c->size : 1);
        c->coll = h->coll;
        c->count = h->count < most ? h->count : most;
    } else {
        c->coll = (int)(draw(step, 3) % C_COUNT);
        c->count = draw_count(step, 8, c->coll, c->size);
    }
    c->op = (int)(draw(step, 4) % O_COUNT);
    c->root = soak_rooted(c->coll) ? (int)(draw(step, 5) % (uint64_t)c->size) : 0;
    c->in_place = soak_in_place_allowed(c) &&
                  (soak_rooted(c->coll) ? draw_mine(step, 7) : draw(step, 7)) % 3 == 0;
    /* vforms: a third of the block collectives as their v form (not in place) */
    if (vforms_mode && c->coll >= C_ALLGATHER && c->coll <= C_SCATTER && draw(step, 12) % 3 == 0) {
        c->coll = C_COUNT + (c->coll - C_ALLGATHER);
        c->in_place = 0;
    }
}

/* Calls first .. first+k-1 started split-phase, waited for in this rank's own order. */
static void run_batch(call *cs, int k) {
    int order[MAX_BATCH];
    for (int i = 0; i < k; i++) {
        soak_prepare(&cs[i]);
        soak_must(issue(&cs[i], &cs[i].req), &cs[i], "starting it");
        order[i] = i;
    }
    for (int i = k - 1; i > 0; i--) {
        int j = (int)(draw_mine(cs[0].step, 20 + i) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < k; i++)
        soak_must(collie_wait(cs[order[i]].req), &cs[order[i]], "collie_wait");
    for (int i = 0; i < k; i++) {
        soak_check(&cs[i]);
        soak_release(&cs[i]);
    }
}

/* One sequence of `calls` calls on `world` and its half. */
typedef struct sequence {
    collie_team_t *world, *half;
    int calls, from;
    uint64_t seed;
} sequence;

static void *run_sequence(void *arg) {
    const sequence *q = arg;
    seed = q->seed;
    shape hot[HOT];
    for (int h = 0; h < HOT; h++) {
        hot[h].coll = (int)(draw(-1 - h, 3) % C_COUNT);
        hot[h].count = draw_count(-1 - h, 8, hot[h].coll, collie_size(q->world));
    }
    pers_set ps = { .n = 0 };
    if (persistent_mode)
        pers_begin(&ps, hot, q->world, q->half);
    call cs[MAX_BATCH];
    for (int step = q->from; step < q->calls;) {
        if (pers_step(&ps, step)) {
            step++;
            continue;
        }
        int k = draw(step, 10) % 6 == 0 ? 2 + (int)(draw(step, 11) % (MAX_BATCH - 1)) : 1;
        if (k > q->calls - step)
            k = q->calls - step;
        for (int i = 0; i < k; i++)
            plan(&cs[i], step + i, hot, q->world, q->half);
        if (k > 1) {
            run_batch(cs, k);
        } else {
            soak_prepare(&cs[0]);
            soak_must(issue(&cs[0], NULL), &cs[0], "the call");
            soak_check(&cs[0]);
            soak_release(&cs[0]);
        }
        step += k;
    }
    pers_end(&ps);
    return NULL;
}

/* The world team's sequence; or (threads) two threads, each with its own copy of the world
 * and half of it, whose waits move each other's teams when idle (progress_others.c). */
int main(int argc, char **argv) {
    int calls = argc > 1 ? atoi(argv[1]) : 300;
    uint64_t seed0 = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    for (int a = 3; a < argc; a++) {
        threads_mode |= strcmp(argv[a], "threads") == 0;
        vforms_mode |= strcmp(argv[a], "vforms") == 0;
        persistent_mode |= strcmp(argv[a], "persistent") == 0;
    }
    const char *from = getenv("MP_SOAK_FROM");
    int provided = 0, level = threads_mode ? COLLIE_THREAD_MULTIPLE : COLLIE_THREAD_SERIALIZED;
    soak_must(collie_init_thread(level, &provided), NULL, "collie_init_thread");
    soak_must(provided < level ? COLLIE_ERR_UNSUPPORTED : COLLIE_OK, NULL, "the thread level provided");
    collie_team_t *world = collie_world();
    world_rank = collie_rank(world);
    int P = collie_size(world), nseq = threads_mode ? 2 : 1;
    sequence seqs[2];
    for (int t = 0; t < nseq; t++) {
        sequence *q = &seqs[t];
        q->world = world;
        q->half = NULL;
        if (threads_mode)
            soak_must(collie_team_dup(world, &q->world), NULL, "collie_team_dup");
        if (P > 1)
            soak_must(collie_team_split(q->world, world_rank % 2, world_rank, &q->half), NULL, "collie_team_split");
        q->calls = calls;
        q->from = from ? atoi(from) : 0;
        q->seed = threads_mode ? mix(seed0 + (uint64_t)t) : seed0;
    }
    if (threads_mode) {
        pthread_t th;
        if (pthread_create(&th, NULL, run_sequence, &seqs[1]) != 0)
            soak_must(COLLIE_ERR_NOMEM, NULL, "pthread_create");
        run_sequence(&seqs[0]);
        pthread_join(th, NULL);
    } else {
        run_sequence(&seqs[0]);
    }
    int64_t mine = failures, all = 0;
    soak_must(collie_allreduce(world, &mine, &all, 1, COLLIE_INT64, COLLIE_SUM), NULL, "the final allreduce");
    if (world_rank == 0)
        printf("mp_soak, %d ranks, %d calls%s%s%s, seed %" PRIu64 ": %s (%" PRId64 " failures)\n",
               P, calls, threads_mode ? " in each of 2 threads" : "", vforms_mode ? ", v forms" : "",
               persistent_mode ? ", persistent" : "", seed0, all ? "FAILED" : "passed", all);
    for (int t = 0; t < nseq; t++) {
        if (seqs[t].half)
            collie_team_free(&seqs[t].half);
        if (threads_mode)
            collie_team_free(&seqs[t].world);
    }
    collie_finalize();
    return all ? 1 : 0;
}
