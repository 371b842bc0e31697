/*
 * mpi_soak.c — a seeded random sequence of MPI collectives, the same on every rank, checked
 * call by call; run plain and with LD_PRELOAD=libcollie_mpi.so (run_soak.sh).  What a
 * program may do to the drop-in from one call to the next: change the collective, the
 * datatype, the size class, the communicator and the call form, with calls of several
 * communicators in flight at once (tests/mp/mp_soak.c is the same idea for collie's API).
 *
 * Per call, from the sequence's draws: the collective (MPI_Allreduce, Reduce, Bcast,
 * Barrier, Allgather(v), Reduce_scatter(_block), Alltoall(v), Gather(v), Scatter(v), Scan,
 * Exscan), the count (0, or log-uniform up to 1 MiB per rank), the base type (MPI_INT64_T,
 * MPI_LONG_LONG, MPI_INT, MPI_DOUBLE, MPI_LONG_DOUBLE — the last one collie passes to PMPI),
 * the op (MPI_SUM, MPI_MAX, MPI_BXOR, a commutative user op, a non-commutative one), the
 * root, MPI_IN_PLACE where MPI allows it, and the communicator (MPI_COMM_WORLD, a dup,
 * even/odd halves, halves whose keys reverse the order, all ranks but 0, a dup made for
 * the call and freed right after it — after its completion on Open MPI, whose libnbc
 * crashes otherwise).  Per rank: the datatype each side passes (the base
 * type, a contiguous type, a vector with holes; made for the call and freed after it
 * sometimes — MPI reuses the handles; reductions with a contiguous type take a user op,
 * which collie passes to PMPI), the buffers' offsets.
 *
 * Call forms: blocking; batches of 2–4 MPI_I* calls (one of them sometimes blocking, run
 * while the others are pending, and sometimes an MPI_Isend/Irecv ring among them) that
 * each rank completes in an order and a way of its own (MPI_Wait, Waitall, Waitany,
 * Waitsome, Test, Testany, Testsome, Testall); persistent requests (MPI_*_init), a set of
 * 5 made every 50 calls (the old set freed), of which runs are started at some calls (or
 * after a batch's calls, completed with them), each rank in an order of its own, by
 * MPI_Start or MPI_Startall, and completed the same way (mpi_soak_forms.c).
 * Where MPI_MAX_INFO_KEY holds it, the dup's persistent requests carry
 * mpi_assert_strict_persistent_collective_ordering and keep their start order.
 *
 * Checks (mpi_soak_data.c): every result element against values computed here, every other
 * byte of both buffers unchanged (holes, gaps, the guard after them, inputs).  Calls plain
 * MPI gets wrong are left out of plain runs and of the calls the drop-in passes to MPI
 * (plain_mpi_wrong: their list).
 *
 * Usage: mpirun -np P mpi_soak [CALLS [SEED]] (defaults 300, 1).  Rank 0 prints
 * "mpi_soak, P ranks, N calls, seed S, plain MPI|libcollie_mpi: passed (0 failures)"; a
 * mismatch prints the rank, the call, what it was and the first wrong element.
 * MPI_SOAK_FROM=K replays from call K (a call's draws do not depend on the calls before
 * it); MPI_SOAK_SKIP=A-B,... leaves out the calls starting at those steps (to narrow a
 * failure down); MPI_SOAK_VERBOSE=1 makes rank 0 print each call as it is issued (2: every
 * rank).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_soak.h"

#define HOT 4          /* (collective, count, kind, op) that come back often */
#define EPOCH 50       /* calls between new persistent sets */

uint64_t seed;
int world_rank, world_size;
long failures;
bool preloaded;
MPI_Info ordered_info = MPI_INFO_NULL;
int verbose;
static MPI_Comm comms[M_COUNT];

typedef struct hot { int coll, kind, op; size_t n; } hot;
static hot hots[HOT];

uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
uint64_t draw(int step, int what) { return mix(seed ^ mix((uint64_t)(int64_t)step * 128 + (uint64_t)what)); }
uint64_t draw_mine(int step, int what) { return mix(draw(step, what) ^ mix((uint64_t)world_rank + 1)); }

MPI_Comm comm_of(int id) { return id == M_TEMP ? MPI_COMM_WORLD : comms[id]; }

/* An MPI error ends the run: what follows would hang or crash. */
void must(int rc, const call *c, const char *what) {
    if (rc == MPI_SUCCESS)
        return;
    char err[MPI_MAX_ERROR_STRING], d[512] = "-";
    int len = 0;
    MPI_Error_string(rc, err, &len);
    if (c)
        describe(c, d, sizeof d);
    fprintf(stderr, "FAIL: mpi_soak: rank %d, %s: %s returned %d: %s\n", world_rank, d, what, rc, err);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---- the plan of a call ----------------------------------------------------------------- */

static size_t draw_count(int step, int what, int coll, int kind, int P) {
    uint64_t k = draw(step, what) % 22;
    size_t unit = UNIT * elem_size(kind);
    bool blocks = coll != C_BCAST && (!is_reduction(coll) || coll == C_RSB || coll == C_RS);
    size_t most = ((size_t)1 << 20) / unit / (size_t)(blocks ? P : 1);   /* 1 MiB per rank */
    if (k == 0)
        return 0;
    uint64_t lo = 1ull << (k - 1), bytes = lo + draw(step, what + 1) % lo;
    size_t n = bytes / unit ? (size_t)(bytes / unit) : 1;
    return n < most ? n : most;
}

static int draw_kind(int step, int what) {
    static const int weights[K_COUNT] = { 30, 15, 20, 25, 10 };
    int x = (int)(draw(step, what) % 100), k = 0;
    while (x >= weights[k])
        x -= weights[k++];
    return k;
}

/* The calls the drop-in passes to MPI: reductions of long double, user ops on a derived
 * type. */
static bool to_mpi(const call *c) {
    return is_reduction(c->coll) && (c->kind == K_LDBL || c->r.shape != S_PLAIN);
}

/* MPI's own bugs, kept out of plain runs and of the calls the drop-in passes to MPI (the
 * drop-in must serve the others right): in place turned off where that is enough, else
 * the call left out on the ranks concerned. */
enum { PLAIN_OK, PLAIN_NOT_IN_PLACE, PLAIN_SKIP };
static int plain_mpi_wrong(const call *c) {
#if defined(MPICH)
    /* MPICH 4.0.2: persistent allgather, gather and scatter compute wrong results
     * (mpi_check_move.c); MPI_Reduce(MPI_IN_PLACE) at a root other than 0 crashes for more
     * than about 1 KiB (mpi_check.c); MPI_(I)allgatherv on a communicator of one rank
     * ignores the displacement; MPI_Reduce_scatter in place fails an assertion (memcpy of
     * overlapping ranges) at a rank other than 0 with large blocks */
    if (c->form == F_PERSISTENT && (c->coll == C_ALLGATHER || c->coll == C_GATHER || c->coll == C_SCATTER))
        return PLAIN_SKIP;
    if (c->coll == C_REDUCE && c->in_place && c->root != 0 && c->n * UNIT * elem_size(c->kind) > 1024)
        return PLAIN_NOT_IN_PLACE;
    if (c->coll == C_ALLGATHERV && c->size == 1)
        return PLAIN_SKIP;
    if (c->coll == C_RS && c->in_place)
        return PLAIN_NOT_IN_PLACE;
#elif defined(OPEN_MPI)
    /* Open MPI 4.1.4: after MPI_Ialltoallv or MPIX_Alltoallv_init in place where a rank's
     * counts are all zero, the next MPI_I* call on the communicator hangs (libnbc) */
    if (c->coll == C_ALLTOALLV && c->in_place && c->form != F_BLOCKING)
        return PLAIN_NOT_IN_PLACE;
#endif
    (void)c;
    return PLAIN_OK;
}

static void plan_shapes(call *c, int step) {
    c->s.type = c->r.type = MPI_DATATYPE_NULL;
    c->mop = MPI_OP_NULL;
    bool once = c->form != F_PERSISTENT;   /* fresh types and ops only for calls made once */
    if (is_reduction(c->coll)) {   /* one datatype on every rank; derived ones with user ops */
        bool user = c->op == O_UMIN || c->op == O_UMAT;
        c->r.shape = c->s.shape = user && draw(step, 30) % 2 ? S_CONTIG : S_PLAIN;
        c->r.fresh = c->s.fresh = once && draw_mine(step, 31) % 3 == 0;
        c->op_fresh = once && user && draw_mine(step, 32) % 3 == 0;
        return;
    }
    c->s.shape = (int)(draw_mine(step, 33) % S_COUNT);
    c->r.shape = (int)(draw_mine(step, 34) % S_COUNT);
    c->s.fresh = once && draw_mine(step, 35) % 3 == 0;
    c->r.fresh = once && draw_mine(step, 36) % 3 == 0;
    /* Plain MPI_Allgatherv cannot take receive types of different sizes on different
     * ranks (MPICH 4.0.2's ring cuts its messages by the type's size: "Message
     * truncated"), nor, in Open MPI 4.1.4, a send type whose size differs from the
     * receive type's (tuned picks the algorithm by the send type's size times the receive
     * counts: ranks take different ones and hang).  Plain runs pass one receive type
     * everywhere there, and a send type of its size. */
    if (!preloaded && c->coll == C_ALLGATHERV) {
        c->r.shape = (int)(draw(step, 37) % S_COUNT);
        if ((c->s.shape == S_PLAIN) != (c->r.shape == S_PLAIN))
            c->s.shape = c->r.shape;
    }
}

static bool in_place_allowed(const call *c) {
    switch (c->coll) {
    case C_BCAST: case C_BARRIER: return false;
    case C_REDUCE: case C_GATHER: case C_GATHERV: case C_SCATTER: case C_SCATTERV:
        return c->rank == c->root;
    default: return true;
    }
}

/* Call `step` in `form` as every rank draws it. */
void plan(call *c, int step, int form) {
    memset(c, 0, sizeof *c);
    c->step = c->vstep = step;
    c->form = form;
    c->req = MPI_REQUEST_NULL;
    static const int comm_pick[10] = { M_WORLD, M_WORLD, M_WORLD, M_DUP, M_HALF, M_REV, M_SOME, M_TEMP,
                                       M_WORLD, M_HALF };
    c->comm_id = comm_pick[draw(step, 6) % 10];
    if (form == F_PERSISTENT && c->comm_id == M_TEMP)
        c->comm_id = M_DUP;
    c->comm = comm_of(c->comm_id);
    c->member = c->comm != MPI_COMM_NULL;
    c->rank = c->size = 0;
    if (c->member) {
        MPI_Comm_rank(c->comm, &c->rank);
        MPI_Comm_size(c->comm, &c->size);
    }
    bool is_hot = draw(step, 1) % 10 < 3;
    if (is_hot) {
        const hot *h = &hots[draw(step, 2) % HOT];
        c->coll = h->coll, c->kind = h->kind, c->op = h->op, c->n = h->n;
    } else {
        c->coll = (int)(draw(step, 3) % C_COUNT);
        c->kind = draw_kind(step, 4);
        c->op = (int)(draw(step, 5) % O_COUNT);
    }
    if (!is_reduction(c->coll) || !op_allowed(c->kind, c->op))
        c->op = O_SUM;
    if (!c->member)
        return;
    if (!is_hot)
        c->n = draw_count(step, 8, c->coll, c->kind, c->size);
    if (c->coll == C_BARRIER)
        c->n = 0;
    c->root = is_rooted(c->coll) ? (int)(draw(step, 9) % (uint64_t)c->size) : 0;
    bool shared = !is_rooted(c->coll);   /* in place on every rank, or at the root */
    c->in_place = in_place_allowed(c) && (shared ? draw(step, 7) : draw_mine(step, 7)) % 3 == 0;
    c->ordered = form == F_PERSISTENT && c->comm_id == M_DUP && ordered_info != MPI_INFO_NULL;
    plan_shapes(c, step);
    int plain = preloaded && !to_mpi(c) ? PLAIN_OK : plain_mpi_wrong(c);
    if (plain == PLAIN_NOT_IN_PLACE)
        c->in_place = 0;
    if (plain == PLAIN_SKIP)
        c->member = false;
}

void print_call(const call *c) {
    if (verbose > 1 || (verbose && world_rank == 0)) {
        char d[512];
        describe(c, d, sizeof d);
        fprintf(stderr, "mpi_soak: rank %d: %s\n", world_rank, d);
    }
}

/* Buffers, layout and (for M_TEMP) the communicator of a planned call. */
void setup(call *c) {
    if (!c->member)
        return;
    if (c->comm_id == M_TEMP)
        must(MPI_Comm_dup(MPI_COMM_WORLD, &c->comm), c, "MPI_Comm_dup");
    if (is_vform(c->coll) && !v_layout(c))
        must(MPI_ERR_NO_MEM, c, "the v form's arrays");
    soak_prepare(c);
}

/* Plain Open MPI 4.1.4 crashes in libnbc when a communicator is freed while an MPI_I*
 * call on it is pending (mpi_freed_comm.c); MPI allows it, and MPICH runs it. */
#if defined(OPEN_MPI)
#define FREE_COMM_PENDING 0
#else
#define FREE_COMM_PENDING 1
#endif

/* Issues a set-up call; what it made for this call alone is freed at once (MPI lets
 * pending operations finish with them), its communicator too where MPI runs that. */
void start_call(call *c) {
    print_call(c);
    must(issue(c), c, "the call");
    free_fresh(c);
    if (c->comm_id == M_TEMP && (FREE_COMM_PENDING || c->form == F_BLOCKING))
        must(MPI_Comm_free(&c->comm), c, "MPI_Comm_free");
}

void finish_call(call *c) {
    if (c->member && c->comm_id == M_TEMP && c->comm != MPI_COMM_NULL)
        must(MPI_Comm_free(&c->comm), c, "MPI_Comm_free");
    if (c->member) {
        soak_check(c);
        soak_release(c);
    }
}

static void run_blocking(int step) {
    call c;
    plan(&c, step, F_BLOCKING);
    setup(&c);
    if (c.member)
        start_call(&c);
    finish_call(&c);
}

/* ---- the sequence ------------------------------------------------------------------------------ */

static void make_comms(void) {
    MPI_Group world_group, some_group;
    int zero = 0, P = world_size, me = world_rank;
    comms[M_WORLD] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[M_DUP]);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &comms[M_HALF]);
    MPI_Comm_split(MPI_COMM_WORLD, me < (P + 1) / 2, P - me, &comms[M_REV]);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_excl(world_group, 1, &zero, &some_group);
    MPI_Comm_create(MPI_COMM_WORLD, some_group, &comms[M_SOME]);
    MPI_Group_free(&some_group);
    MPI_Group_free(&world_group);
}

static void free_comms(void) {
    for (int m = M_DUP; m <= M_SOME; m++)
        if (comms[m] != MPI_COMM_NULL)
            MPI_Comm_free(&comms[m]);
}

/* MPI_SOAK_SKIP=A-B[,A-B...]: the calls (batches, runs) starting at those steps are left
 * out, to narrow a failure down (the sets of persistent requests are still made). */
static bool skipped(int step) {
    const char *s = getenv("MPI_SOAK_SKIP");
    while (s && *s) {
        char *end;
        long lo = strtol(s, &end, 10), hi = *end == '-' ? strtol(end + 1, &end, 10) : lo;
        if (step >= lo && step <= hi)
            return true;
        s = *end == ',' ? end + 1 : NULL;
    }
    return false;
}

static void run_sequence(int from, int calls) {
    for (int h = 0; h < HOT; h++) {
        hots[h].coll = (int)(draw(-1 - h, 3) % C_COUNT);
        hots[h].kind = draw_kind(-1 - h, 4);
        hots[h].op = (int)(draw(-1 - h, 5) % O_COUNT);
        hots[h].n = draw_count(-1 - h, 8, hots[h].coll, hots[h].kind, world_size);
    }
    pers_set ps = { 0 };
    int epoch = -1;
    for (int step = from; step < calls;) {
        if (step / EPOCH != epoch) {
            pers_end(&ps);
            pers_begin(&ps, epoch = step / EPOCH);
        }
        bool pers = draw(step, 13) % 8 == 0;
        int k = pers ? 1 : draw(step, 10) % 5 == 0 ? 2 + (int)(draw(step, 11) % (MAX_BATCH - 1)) : 1;
        if (k > calls - step)
            k = calls - step;
        if (skipped(step))
            ;
        else if (pers)
            pers_run(&ps, step);
        else if (k > 1)
            run_batch(step, k, &ps);
        else
            run_blocking(step);
        step += k;
    }
    pers_end(&ps);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);   /* the copies inherit it */
    int calls = argc > 1 ? atoi(argv[1]) : 300;
    seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    const char *from = getenv("MPI_SOAK_FROM"), *v = getenv("MPI_SOAK_VERBOSE");
    verbose = v ? atoi(v) : 0;
    preloaded = dlsym(RTLD_DEFAULT, "collie_version") != NULL;
    if (sizeof "mpi_assert_strict_persistent_collective_ordering" <= MPI_MAX_INFO_KEY) {
        MPI_Info_create(&ordered_info);
        MPI_Info_set(ordered_info, "mpi_assert_strict_persistent_collective_ordering", "true");
    }
    make_comms();
    data_init();
    run_sequence(from ? atoi(from) : 0, calls);
    long all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("mpi_soak, %d ranks, %d calls, seed %" PRIu64 ", %s: %s (%ld failures)\n", world_size, calls,
               seed, preloaded ? "libcollie_mpi" : "plain MPI", all ? "FAILED" : "passed", all);
    data_finalize();
    free_comms();
    if (ordered_info != MPI_INFO_NULL)
        MPI_Info_free(&ordered_info);
    MPI_Finalize();
    return all ? 1 : 0;
}
