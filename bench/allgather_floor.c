/*
 * allgather_floor.c — the floor of a two-process allgather between two cores, without the
 * library: how fast can each process end up with both blocks when its input and output are
 * private (malloc'd) memory?  Issue 16 compares collie's allgather at P = 2, 32–128 KiB per
 * block, with Intel MPI's; this says what the data movement alone costs here.
 *
 * Two processes pinned to cores 0 and 1.  Per call each writes new values into its input
 * (untimed, unless REUSED is given), both meet at a spin barrier, then each does one of
 *   cells    copy its block chunk by chunk into its own ring of shared cells, publish, copy
 *            its own block into its output, then copy the peer's chunks out of the peer's
 *            cells (what src/algorithms/cells_blocks.c does)
 *   kernel   process_vm_readv of the peer's input into its output (one copy, by the kernel)
 *   mapped   the inputs live in shared memory; copy the peer's block straight out (the
 *            floor of collie_alloc buffers)
 * and both meet again; the time is from the first barrier to the end of the process's copy.
 * Prints each variant's mean and best time per call in µs (the slower process's).
 *
 *   usage: allgather_floor [BYTES [CHUNK [CELLS [CALLS [reused]]]]]
 *          (defaults 128 KiB per block, 32 KiB chunks, 4 cells, 2000 calls, fresh data)
 */
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floor_util.h"

typedef struct side {
    word in, freed, ready, done, left;
    word addr;            /* the address of this process's input (for the kernel copy) */
    word out_addr;        /* ... of its output (for the kernel write) */
    word pid;
    word dt_bits;         /* this process's time of the last call, as double bits */
} side;

typedef struct shared {
    side s[2];
} shared;

typedef struct setup {
    size_t bytes, chunk;
    int ncells, calls, reused, use_out;
} setup;

static void wait_at_least(_Atomic uint64_t *w, uint64_t v) {
    while (atomic_load_explicit(w, memory_order_acquire) < v)
        ;
}

/* Steps of this call: chunk by chunk through the two rings; `step` counts across calls. */
static void move_cells(shared *sh, char *rings[2], int me, const char *in, char *out,
                       const setup *st, uint64_t *step) {
    int peer = 1 - me;
    size_t nsteps = (st->bytes + st->chunk - 1) / st->chunk;
    for (size_t k = 0; k < nsteps; k++) {
        uint64_t t = *step + k + 1;
        size_t cell = (size_t)((t - 1) % (uint64_t)st->ncells) * st->chunk;
        size_t off = k * st->chunk, len = st->bytes - off < st->chunk ? st->bytes - off : st->chunk;
        if (t > (uint64_t)st->ncells)
            wait_at_least(&sh->s[peer].freed.v, t - (uint64_t)st->ncells);
        memcpy(rings[me] + cell, in + off, len);
        atomic_store_explicit(&sh->s[me].in.v, t, memory_order_release);
        memcpy(out + (size_t)me * st->bytes + off, in + off, len);
        wait_at_least(&sh->s[peer].in.v, t);
        memcpy(out + (size_t)peer * st->bytes + off, rings[peer] + cell, len);
        atomic_store_explicit(&sh->s[me].freed.v, t, memory_order_release);
    }
    *step += nsteps;
}

static void move_kernel(shared *sh, int me, const char *in, char *out, const setup *st) {
    int peer = 1 - me;
    struct iovec local = {out + (size_t)peer * st->bytes, st->bytes};
    struct iovec remote = {(void *)(uintptr_t)atomic_load(&sh->s[peer].addr.v), st->bytes};
    if (process_vm_readv((pid_t)atomic_load(&sh->s[peer].pid.v), &local, 1, &remote, 1, 0) !=
        (ssize_t)st->bytes) {
        perror("allgather_floor: process_vm_readv");
        exit(1);
    }
    memcpy(out + (size_t)me * st->bytes, in, st->bytes);
}

/* The other direction: this process writes its own block (in its cache with fresh data)
 * into the peer's output with process_vm_writev. */
static void move_kernel_write(shared *sh, int me, const char *in, char *out, const setup *st) {
    int peer = 1 - me;
    struct iovec local = {(void *)in, st->bytes};
    struct iovec remote = {(void *)(uintptr_t)(atomic_load(&sh->s[peer].out_addr.v) + (uint64_t)me * st->bytes),
                           st->bytes};
    if (process_vm_writev((pid_t)atomic_load(&sh->s[peer].pid.v), &local, 1, &remote, 1, 0) !=
        (ssize_t)st->bytes) {
        perror("allgather_floor: process_vm_writev");
        exit(1);
    }
    memcpy(out + (size_t)me * st->bytes, in, st->bytes);
}

static void move_mapped(const char *ins[2], int me, char *out, const setup *st) {
    int peer = 1 - me;
    memcpy(out + (size_t)me * st->bytes, ins[me], st->bytes);
    memcpy(out + (size_t)peer * st->bytes, ins[peer], st->bytes);
}

static void check(const char *out, const setup *st, int call, const char *name) {
    for (int r = 0; r < 2; r++)
        for (size_t i = 0; i + 8 <= st->bytes; i += 4096) {
            uint64_t want = ((uint64_t)(st->reused ? 1 : call) * 0x9E3779B97F4A7C15ull + i) ^ (uint64_t)r;
            if (*(const uint64_t *)(out + (size_t)r * st->bytes + i) != want) {
                fprintf(stderr, "allgather_floor: %s: wrong data from process %d at byte %zu\n", name, r, i);
                exit(1);
            }
        }
}

static void run(const char *name, const setup *st) {
    shared *sh = shared_map(sizeof *sh);
    size_t cells_bytes = (size_t)st->ncells * st->chunk;
    char *rings[2] = {shared_map(cells_bytes), shared_map(cells_bytes)};
    char *mapped_in = shared_map(2 * st->bytes);
    fflush(stdout);
    pid_t child = fork();
    int me = child == 0, peer = 1 - me;
    pin(me);
    char *in = strcmp(name, "mapped") == 0 ? mapped_in + (size_t)me * st->bytes : aligned_alloc(4096, (st->bytes + 4095) / 4096 * 4096);
    char *out = aligned_alloc(4096, (2 * st->bytes + 4095) / 4096 * 4096);
    const char *ins[2] = {mapped_in, mapped_in + st->bytes};
    memset(out, 0, 2 * st->bytes);
    atomic_store(&sh->s[me].addr.v, (uint64_t)(uintptr_t)in);
    atomic_store(&sh->s[me].pid.v, (uint64_t)getpid());
    atomic_store(&sh->s[me].out_addr.v, (uint64_t)(uintptr_t)out);
    uint64_t step = 0;
    double total = 0, best = 1e30;
    for (int call = 1; call <= st->calls; call++) {
        if (!st->reused || call == 1)
            for (size_t i = 0; i + 8 <= st->bytes; i += 8)
                *(uint64_t *)(in + i) = ((uint64_t)call * 0x9E3779B97F4A7C15ull + i) ^ (uint64_t)me;
        atomic_store_explicit(&sh->s[me].ready.v, (uint64_t)call, memory_order_release);
        wait_at_least(&sh->s[peer].ready.v, (uint64_t)call);
        double t0 = now_us();
        if (strcmp(name, "cells") == 0)
            move_cells(sh, rings, me, in, out, st, &step);
        else if (strcmp(name, "kernel") == 0)
            move_kernel(sh, me, in, out, st);
        else if (strcmp(name, "kwrite") == 0)
            move_kernel_write(sh, me, in, out, st);
        else
            move_mapped(ins, me, out, st);
        if (st->use_out) {   /* the program reads its result: timed with the call */
            volatile uint64_t sum = read_lines(out, 2 * st->bytes);
            (void)sum;
        }
        double dt = now_us() - t0;
        atomic_store_explicit(&sh->s[me].dt_bits.v, as_bits(dt), memory_order_relaxed);
        atomic_store_explicit(&sh->s[me].done.v, (uint64_t)call, memory_order_release);
        wait_at_least(&sh->s[peer].done.v, (uint64_t)call);
        double other = as_double(atomic_load_explicit(&sh->s[peer].dt_bits.v, memory_order_relaxed));
        double slower = dt > other ? dt : other;
        if (call > st->calls / 10) {
            total += slower;
            best = slower < best ? slower : best;
        }
        if (call == st->calls)
            check(out, st, call, name);

        /* Nobody may overwrite its input (the kernel and mapped ways read it) before the
         * peer has read this call's times. */
        atomic_store_explicit(&sh->s[me].left.v, (uint64_t)call, memory_order_release);
        wait_at_least(&sh->s[peer].left.v, (uint64_t)call);
    }
    if (me == 0) {
        int timed = st->calls - st->calls / 10;
        printf("%-7s %8zu B per block  chunk %7zu  cells %2d  %s  mean %8.2f us  best %8.2f us\n", name,
               st->bytes, st->chunk, st->ncells, st->reused ? "reused" : "fresh ", total / timed, best);
        waitpid(child, NULL, 0);
    } else {
        exit(0);
    }
    munmap(mapped_in, 2 * st->bytes);
    munmap(rings[0], cells_bytes);
    munmap(rings[1], cells_bytes);
    munmap(sh, sizeof *sh);
}

int main(int argc, char **argv) {
    setup st = {128u << 10, 32u << 10, 4, 2000, 0, 0};
    if (argc > 1) st.bytes = strtoull(argv[1], NULL, 0);
    if (argc > 2) st.chunk = strtoull(argv[2], NULL, 0);
    if (argc > 3) st.ncells = atoi(argv[3]);
    if (argc > 4) st.calls = atoi(argv[4]);
    for (int i = 5; i < argc; i++) {
        st.reused |= strcmp(argv[i], "reused") == 0;
        st.use_out |= strcmp(argv[i], "use-out") == 0;
    }
    if (st.bytes < 8 || st.chunk < 64 || st.chunk % 64 || st.ncells < 2 || st.calls < 10 ||
        sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        fprintf(stderr, "usage: allgather_floor [BYTES [CHUNK (a multiple of 64) [CELLS >= 2 "
                        "[CALLS >= 10 [reused]]]]] (needs 2 cores)\n");
        return 2;
    }
    run("cells", &st);
    run("kernel", &st);
    run("kwrite", &st);
    run("mapped", &st);
    return 0;
}
