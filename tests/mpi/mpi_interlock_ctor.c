/*
 * mpi_interlock_ctor.c — pattern `ctor` of mpi_interlock: blocking MPI calls that are
 * neither point-to-point nor completion calls nor collectives, made while a collie request
 * is pending (issue 22; src/mpi/mpi_progress_ctor.c).  For each step a fresh
 * MPI_Iallreduce on MPI_COMM_WORLD; rank 0 makes the step's call before its MPI_Wait, the
 * others after theirs.  Plain MPI moves rank 0's allreduce while it blocks in the call;
 * the drop-in must too.  Every step's result is checked against what MPI defines.
 *
 * The allreduce has 1 MiB (smaller BYTES: skipped, larger: 1 MiB).  Pattern `ctor`:
 * MPI_Comm_dup, MPI_Comm_split, MPI_Win_create, MPI_Win_fence (opening, closing),
 * MPI_Win_free; pattern `ctors` adds MPI_Comm_create, MPI_Comm_split_type,
 * MPI_Intercomm_create, MPI_Intercomm_merge, MPI_Cart_create, MPI_Cart_sub,
 * MPI_Dist_graph_create_adjacent, MPI_Win_allocate_shared, MPI_File_open,
 * MPI_File_write_at_all, MPI_File_sync, MPI_File_read_at_all (checked), MPI_File_close,
 * MPI_Buffer_detach (rank 0's MPI_Bsend to rank 1 is received after rank 1's MPI_Wait)
 * and, on Open MPI only,
 * MPI_Win_wait (the others' MPI_Win_start/Put/MPI_Win_complete come after their MPI_Wait)
 * and MPI_Win_lock/unlock (rank 1 holds an exclusive lock on the last rank's window until
 * after its MPI_Wait): plain MPICH 4.0.2 hangs in both itself (its allreduce does not move
 * while it waits there).
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpi_interlock.h"

/* The allreduce of a step: 1 MiB (smaller ones may need nothing from rank 0 past its
 * start, so the pattern skips them; larger ones only take longer: plain Open MPI moves an
 * 8 MiB one slowly while rank 0 blocks). */
#define CTOR_MIN ((size_t)1 << 20)
#define CTOR_MAX ((size_t)1 << 20)

typedef struct ctor {
    size_t bytes;
    MPI_Comm dup, split, created, shared, inter, merged, cart, sub, graph;
    MPI_Win win, shwin;
    int *buf;                  /* win: [0] fence, [2 + q] PSCW from rank q */
    void *shmem;
    MPI_File fh;
    char path[64];
    void *bbuf;                /* rank 0's MPI_Buffer_attach */
} ctor;

#define FILE_INTS 4096
#define BSEND_INTS (1 << 18)   /* 1 MiB: sent by rendezvous, so it waits for the receiver */

static void check(const char *what, int got, int want) {
    if (got != want)
        fail(what, sizeof(int), 0, got, want);
}

/* Runs call(s) on rank 0 while its MPI_Iallreduce is pending, on the others after it. */
static void step(ctor *s, void (*call)(ctor *)) {
    size_t n = s->bytes / sizeof(double);
    double *in = malloc(n * sizeof *in + 1), *out = malloc(n * sizeof *out + 1);
    fill(in, n);
    MPI_Request r;
    MPI_Iallreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    if (rank == 0) {
        call(s);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        call(s);
    }
    check_sum(out, n, s->bytes, "ctor pattern, allreduce");
    free(in), free(out);
}

/* ---- communicators ---------------------------------------------------------------------- */

static void comm_dup(ctor *s) {
    MPI_Comm_dup(MPI_COMM_WORLD, &s->dup);
    int cmp = -1;
    MPI_Comm_compare(MPI_COMM_WORLD, s->dup, &cmp);
    check("MPI_Comm_dup: congruent", cmp, MPI_CONGRUENT);
}

/* Even and odd ranks, each in reverse order: my rank there is the count of higher ranks
 * of my parity. */
static void comm_split(ctor *s) {
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &s->split);
    int r = -1, n = -1;
    MPI_Comm_rank(s->split, &r);
    MPI_Comm_size(s->split, &n);
    check("MPI_Comm_split: rank", r, (size - 1 - rank) / 2);
    check("MPI_Comm_split: size", n, (size + 1 - rank % 2) / 2);
}

static void comm_create(ctor *s) {
    MPI_Group world, reversed;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int range[1][3] = { { size - 1, 0, -1 } };
    MPI_Group_range_incl(world, 1, range, &reversed);
    MPI_Comm_create(MPI_COMM_WORLD, reversed, &s->created);
    int r = -1;
    MPI_Comm_rank(s->created, &r);
    check("MPI_Comm_create: rank", r, size - 1 - rank);
    MPI_Group_free(&reversed);
    MPI_Group_free(&world);
}

static void comm_split_type(ctor *s) {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &s->shared);
    int r = -1;
    MPI_Comm_rank(s->shared, &r);
    check("MPI_Comm_split_type: rank", r, rank);   /* one node */
}

/* The even ranks' split against the odd ranks'; each group's leader is its local rank 0,
 * the highest world rank of its parity. */
static void intercomm_create(ctor *s) {
    int other = rank % 2 ? (size - 1) - (size - 1) % 2 : size - 1 - size % 2;
    MPI_Intercomm_create(s->split, 0, MPI_COMM_WORLD, other, 5, &s->inter);
    int n = -1;
    MPI_Comm_remote_size(s->inter, &n);
    check("MPI_Intercomm_create: remote size", n, (size + rank % 2) / 2);
}

static void intercomm_merge(ctor *s) {
    MPI_Intercomm_merge(s->inter, rank % 2, &s->merged);
    int r = -1, lr = -1;
    MPI_Comm_rank(s->merged, &r);
    MPI_Comm_rank(s->split, &lr);
    check("MPI_Intercomm_merge: rank", r, rank % 2 ? (size + 1) / 2 + lr : lr);
}

static void cart_create(ctor *s) {
    int dims[2] = { 0, 0 }, periods[2] = { 1, 0 };
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &s->cart);
    int coords[2] = { -1, -1 };
    MPI_Cart_coords(s->cart, rank, 2, coords);
    check("MPI_Cart_create: coordinate", coords[0] * dims[1] + coords[1], rank);
}

static void cart_sub(ctor *s) {
    int remain[2] = { 1, 0 }, coords[2] = { -1, -1 }, r = -1;
    MPI_Cart_sub(s->cart, remain, &s->sub);
    MPI_Cart_coords(s->cart, rank, 2, coords);
    MPI_Comm_rank(s->sub, &r);
    check("MPI_Cart_sub: rank", r, coords[0]);
}

static void dist_graph(ctor *s) {
    int from = (rank + size - 1) % size, to = (rank + 1) % size, win = 3, wout = 5;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, &win, 1, &to, &wout,
                                   MPI_INFO_NULL, 0, &s->graph);
    int src = -1, dst = -1, gin = -1, gout = -1;
    MPI_Dist_graph_neighbors(s->graph, 1, &src, &gin, 1, &dst, &gout);
    check("MPI_Dist_graph_create_adjacent: weight", gin * 10 + gout, 35);
    check("MPI_Dist_graph_create_adjacent: source", src, from);
    check("MPI_Dist_graph_create_adjacent: destination", dst, to);
}

/* ---- windows ---------------------------------------------------------------------------- */

static void win_create(ctor *s) {
    MPI_Win_create(s->buf, (MPI_Aint)((size_t)(size + 2) * sizeof(int)), sizeof(int),
                   MPI_INFO_NULL, MPI_COMM_WORLD, &s->win);
}

static void win_fence_open(ctor *s) { MPI_Win_fence(MPI_MODE_NOPRECEDE, s->win); }
static void win_fence_close(ctor *s) { MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win); }

#if defined(OPEN_MPI)
/* Rank 0 exposes its window to the others (MPI_Win_post before the allreduce). */
static void win_pscw(ctor *s) {
    if (rank == 0) {
        MPI_Win_wait(s->win);
        for (int q = 1; q < size; q++)
            check("MPI_Win_wait: a put of the access epoch", s->buf[2 + q], q * 10 + 7);
        return;
    }
    MPI_Group world, zero;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int z = 0;
    MPI_Group_incl(world, 1, &z, &zero);
    MPI_Win_start(zero, 0, s->win);
    int v = rank * 10 + 7;
    MPI_Put(&v, 1, MPI_INT, 0, 2 + rank, 1, MPI_INT, s->win);
    MPI_Win_complete(s->win);
    MPI_Group_free(&zero);
    MPI_Group_free(&world);
}

static void post_before(ctor *s) {
    if (rank != 0)
        return;
    MPI_Group world, others;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int z = 0;
    MPI_Group_excl(world, 1, &z, &others);
    MPI_Win_post(others, 0, s->win);
    MPI_Group_free(&others);
    MPI_Group_free(&world);
}

/* Rank 1 holds an exclusive lock on the last rank's window (taken before the allreduce)
 * until after its MPI_Wait; rank 0's exclusive lock waits for it and then reads rank 1's
 * value. */
static void lock_before(ctor *s) {
    if (rank == 1) {
        int v = 4711;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size - 1, 0, s->win);
        MPI_Put(&v, 1, MPI_INT, size - 1, 1, 1, MPI_INT, s->win);
        MPI_Win_flush(size - 1, s->win);   /* the lock is held from here on */
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void win_lock(ctor *s) {
    if (rank == 0) {
        int got = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size - 1, 0, s->win);
        MPI_Get(&got, 1, MPI_INT, size - 1, 1, 1, MPI_INT, s->win);
        MPI_Win_unlock(size - 1, s->win);
        check("MPI_Win_lock: rank 1's value", got, 4711);
    } else if (rank == 1) {
        MPI_Win_unlock(size - 1, s->win);
    }
}
#endif

static void win_free(ctor *s) { MPI_Win_free(&s->win); }

/* ---- MPI-IO ----------------------------------------------------------------------------- */

static void file_open(ctor *s) {
    int mode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE;
    MPI_File_open(MPI_COMM_WORLD, s->path, mode, MPI_INFO_NULL, &s->fh);
    check("MPI_File_open: a file", s->fh != MPI_FILE_NULL, 1);
}

/* Each rank writes its block of FILE_INTS ints, rank * FILE_INTS + i. */
static void file_write(ctor *s) {
    int *v = malloc(FILE_INTS * sizeof *v);
    for (int i = 0; i < FILE_INTS; i++)
        v[i] = rank * FILE_INTS + i;
    MPI_File_write_at_all(s->fh, (MPI_Offset)rank * FILE_INTS * (MPI_Offset)sizeof(int), v,
                          FILE_INTS, MPI_INT, MPI_STATUS_IGNORE);
    free(v);
}

/* Reads the next rank's block. */
static void file_read(ctor *s) {
    int *v = malloc(FILE_INTS * sizeof *v), q = (rank + 1) % size;
    MPI_File_read_at_all(s->fh, (MPI_Offset)q * FILE_INTS * (MPI_Offset)sizeof(int), v,
                         FILE_INTS, MPI_INT, MPI_STATUS_IGNORE);
    for (int i = 0; i < FILE_INTS; i++)
        if (v[i] != q * FILE_INTS + i) {
            check("MPI_File_read_at_all: the next rank's block", v[i], q * FILE_INTS + i);
            break;
        }
    free(v);
}

static void file_sync(ctor *s) { MPI_File_sync(s->fh); }
static void file_close(ctor *s) { MPI_File_close(&s->fh); }

/* ---- MPI_Buffer_detach ------------------------------------------------------------------ */

/* Rank 0 MPI_Bsends BSEND_INTS ints to rank 1 before the allreduce; its MPI_Buffer_detach
 * waits until they are delivered, and rank 1 receives them only after its MPI_Wait. */
static void bsend_before(ctor *s) {
    if (rank != 0)
        return;
    int bytes = (int)(BSEND_INTS * sizeof(int)) + MPI_BSEND_OVERHEAD;
    s->bbuf = malloc((size_t)bytes);
    MPI_Buffer_attach(s->bbuf, bytes);
    int *v = malloc(BSEND_INTS * sizeof *v);
    for (int i = 0; i < BSEND_INTS; i++)
        v[i] = 3 * i + 1;
    MPI_Bsend(v, BSEND_INTS, MPI_INT, 1, 11, MPI_COMM_WORLD);
    free(v);
}

static void buffer_detach(ctor *s) {
    if (rank == 0) {
        void *b = NULL;
        int n = 0;
        MPI_Buffer_detach(&b, &n);
        check("MPI_Buffer_detach: the buffer attached", b == s->bbuf, 1);
        free(s->bbuf);
    } else if (rank == 1) {
        int *v = malloc(BSEND_INTS * sizeof *v);
        MPI_Recv(v, BSEND_INTS, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < BSEND_INTS; i++)
            if (v[i] != 3 * i + 1) {
                check("MPI_Bsend: the message", v[i], 3 * i + 1);
                break;
            }
        free(v);
    }
}

/* A file name rank 0 chose, the same on every rank. */
static void file_path(ctor *s) {
    if (rank == 0)
        snprintf(s->path, sizeof s->path, "/tmp/collie-interlock-ctor.%ld", (long)getpid());
    MPI_Bcast(s->path, (int)sizeof s->path, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static void win_allocate_shared(ctor *s) {
    MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, s->shared, &s->shmem,
                            &s->shwin);
    MPI_Aint bytes = 0;
    int unit = 0;
    void *base = NULL;
    MPI_Win_shared_query(s->shwin, rank, &bytes, &unit, &base);
    check("MPI_Win_allocate_shared: my segment", base == s->shmem, 1);
}

static void win_free_shared(ctor *s) { MPI_Win_free(&s->shwin); }

static void comms_free(ctor *s) {
    MPI_Comm *comms[] = { &s->dup, &s->split, &s->created, &s->shared, &s->inter, &s->merged,
                          &s->cart, &s->sub, &s->graph };
    for (size_t k = 0; k < sizeof comms / sizeof *comms; k++)
        if (*comms[k] != MPI_COMM_NULL)
            MPI_Comm_free(comms[k]);
}

void pattern_ctor(size_t bytes, bool all) {
    if (bytes < CTOR_MIN) {   /* collie's allreduce may need nothing more from rank 0 */
        if (rank == 0)
            printf("ctor: %zu bytes skipped (at least %zu)\n", bytes, CTOR_MIN);
        return;
    }
    ctor s = { .bytes = bytes < CTOR_MAX ? bytes : CTOR_MAX };
    s.dup = s.split = s.created = s.shared = s.inter = s.merged = s.cart = s.sub = s.graph =
        MPI_COMM_NULL;
    s.buf = calloc((size_t)size + 2, sizeof(int));
    step(&s, comm_dup);
    step(&s, comm_split);
    if (all) {
        step(&s, comm_create);
        step(&s, comm_split_type);
        step(&s, intercomm_create);
        step(&s, intercomm_merge);
        step(&s, cart_create);
        step(&s, cart_sub);
        step(&s, dist_graph);
    }
    step(&s, win_create);
    step(&s, win_fence_open);
    int v = rank + 100;
    MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, s.win);
    step(&s, win_fence_close);
    check("MPI_Win_fence: the left neighbour's put", s.buf[0], (rank + size - 1) % size + 100);
#if defined(OPEN_MPI)   /* plain MPICH 4.0.2 hangs in both: its wait does not move the allreduce */
    if (all) {
        post_before(&s);
        step(&s, win_pscw);
        lock_before(&s);
        step(&s, win_lock);
    }
#endif
    step(&s, win_free);
    if (all) {
        step(&s, win_allocate_shared);
        step(&s, win_free_shared);
        file_path(&s);
        step(&s, file_open);
        step(&s, file_write);
        step(&s, file_sync);
        step(&s, file_read);
        step(&s, file_close);
        bsend_before(&s);
        step(&s, buffer_detach);
    }
    comms_free(&s);
    free(s.buf);
}
