/*
 * alltoall_floor.c — the copy floor of an alltoall of P ranks on this machine's cores: how
 * long do the copies alone take, without any waiting, scheduling or synchronisation, when
 * every rank's output gets block `rank` of every other rank's input?  Issue 14's target for
 * `collie_alloc` buffers (at most 0.6x the best peer from 512 KiB) asks alltoall at P = 3,
 * 4 and 8 to beat peers that copy with the kernel by 1.7x; this says what the copies
 * themselves allow.
 *
 * P owner processes hold the inputs (P blocks each) and sleep; one worker process per
 * core (pinned, NCORES of them) holds the outputs of ranks w, w + NCORES, ... and does
 * those ranks' copies of the P − 1 peer blocks each (the own block is a local memcpy in
 * every library, left out), in the order rank + 1, rank + 2, ..., either
 *   kernel   process_vm_readv from the owner's private input (what Open MPI's, MPICH's and
 *            Intel MPI's single copy does, and collie's `direct` with malloc buffers), or
 *   mapped   memcpy from the owner's input in shared memory (the floor of collie_alloc).
 * The workers start together (spin barrier, one per core) and the time of a call is the
 * last worker's.  The inputs are written once (reused data: they sit in memory or the
 * shared cache, not in one core's cache).  Prints each way's median and best time per call
 * in µs over CALLS calls after a tenth as warm-up, and mapped / kernel.
 *
 *   usage: alltoall_floor P [BYTES_PER_BLOCK [CALLS [NCORES]]]
 *          (defaults 2 MiB per block, 40 calls, 2 cores)
 */
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floor_util.h"

#define MAX_P 64
#define MAX_CORES 16

typedef struct shared {
    word ready;                       /* owners that have written their input */
    word start, done;                 /* worker barriers, counted across calls */
    word addr[MAX_P], pid[MAX_P];     /* each owner's input */
    word dt_bits[MAX_CORES];          /* each worker's time of the call */
} shared;

typedef struct setup {
    int P, calls, ncores;
    size_t bytes;                     /* per block */
} setup;

static uint64_t value(int from, int block, size_t i) {
    return (i * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)from << 48) ^ ((uint64_t)block << 40);
}

/* Rank r's copies: block r of every peer's input into r's output. */
static void copy_rank(const char *way, shared *sh, char *const *mapped_ins, char *out,
                      const setup *st, int r) {
    size_t from = (size_t)r * st->bytes;
    for (int k = 1; k < st->P; k++) {
        int q = (r + k) % st->P;
        char *to = out + (size_t)q * st->bytes;
        if (way[0] == 'm') {
            memcpy(to, mapped_ins[q] + from, st->bytes);
            continue;
        }
        struct iovec local = {to, st->bytes};
        struct iovec remote = {(char *)(uintptr_t)atomic_load(&sh->addr[q].v) + from, st->bytes};
        if (process_vm_readv((pid_t)atomic_load(&sh->pid[q].v), &local, 1, &remote, 1, 0) !=
            (ssize_t)st->bytes) {
            perror("alltoall_floor: process_vm_readv");
            exit(1);
        }
    }
}

static void check(const char *out, const setup *st, int r, const char *way) {
    for (int q = 0; q < st->P; q++)
        for (size_t i = 0; q != r && i + 8 <= st->bytes; i += 4096)
            if (*(const uint64_t *)(out + (size_t)q * st->bytes + i) != value(q, r, i)) {
                fprintf(stderr, "alltoall_floor: %s: rank %d, wrong data from %d at byte %zu\n",
                        way, r, q, i);
                exit(1);
            }
}

/* Worker w: its ranks' copies, st->calls times; worker 0 returns the median call time. */
static double work(const char *way, shared *sh, char *const *mapped_ins, const setup *st, int w,
                   double *best_out) {
    size_t all = (size_t)st->P * st->bytes;
    char *outs[MAX_P];
    for (int r = w; r < st->P; r += st->ncores) {
        outs[r] = aligned_alloc(4096, (all + 4095) / 4096 * 4096);
        memset(outs[r], 0, all);
    }
    double *times = calloc((size_t)st->calls, sizeof *times);
    int warm = st->calls / 10 + 1, timed = 0;
    for (int call = 1; call <= st->calls; call++) {
        atomic_fetch_add_explicit(&sh->start.v, 1, memory_order_acq_rel);
        wait_for(&sh->start, (uint64_t)call * (uint64_t)st->ncores);
        double t0 = now_us();
        for (int r = w; r < st->P; r += st->ncores)
            copy_rank(way, sh, mapped_ins, outs[r], st, r);
        atomic_store_explicit(&sh->dt_bits[w].v, as_bits(now_us() - t0), memory_order_relaxed);
        atomic_fetch_add_explicit(&sh->done.v, 1, memory_order_acq_rel);
        wait_for(&sh->done, (uint64_t)call * (uint64_t)st->ncores);
        double slowest = 0;
        for (int v = 0; v < st->ncores; v++) {
            double t = as_double(atomic_load_explicit(&sh->dt_bits[v].v, memory_order_relaxed));
            slowest = t > slowest ? t : slowest;
        }
        if (call > warm)   /* dt_bits are written again only after every worker started
                              the next call, so after it read them here */
            times[timed++] = slowest;
    }
    for (int r = w; r < st->P; r += st->ncores)
        check(outs[r], st, r, way);
    qsort(times, (size_t)timed, sizeof *times, by_value);
    *best_out = times[0];
    return times[timed / 2];
}

/* One way: P owners and st->ncores workers; returns the median and the best (*best). */
static double run(const char *way, const setup *st, double *best) {
    size_t all = (size_t)st->P * st->bytes;
    shared *sh = shared_map(sizeof *sh);
    char *mapped = way[0] == 'm' ? shared_map((size_t)st->P * all) : NULL;
    char *mapped_ins[MAX_P];
    pid_t owners[MAX_P];
    for (int q = 0; q < st->P; q++) {
        mapped_ins[q] = mapped ? mapped + (size_t)q * all : NULL;
        fflush(stdout);
        if ((owners[q] = fork()) == 0) {
            char *in = mapped ? mapped_ins[q] : aligned_alloc(4096, (all + 4095) / 4096 * 4096);
            for (int b = 0; b < st->P; b++)
                for (size_t i = 0; i + 8 <= st->bytes; i += 8)
                    *(uint64_t *)(in + (size_t)b * st->bytes + i) = value(q, b, i);
            atomic_store(&sh->addr[q].v, (uint64_t)(uintptr_t)in);
            atomic_store(&sh->pid[q].v, (uint64_t)getpid());
            atomic_fetch_add(&sh->ready.v, 1);
            for (;;)
                pause();
        }
    }
    while (atomic_load(&sh->ready.v) < (uint64_t)st->P)
        usleep(1000);
    pid_t workers[MAX_CORES];
    for (int w = 1; w < st->ncores; w++)
        if ((workers[w] = fork()) == 0) {
            pin(w);
            double b;
            work(way, sh, mapped_ins, st, w, &b);
            exit(0);
        }
    pin(0);
    double median = work(way, sh, mapped_ins, st, 0, best);
    for (int w = 1; w < st->ncores; w++)
        waitpid(workers[w], NULL, 0);
    for (int q = 0; q < st->P; q++) {
        kill(owners[q], SIGKILL);
        waitpid(owners[q], NULL, 0);
    }
    munmap(sh, sizeof *sh);
    if (mapped)
        munmap(mapped, (size_t)st->P * all);
    return median;
}

int main(int argc, char **argv) {
    setup st = {argc > 1 ? atoi(argv[1]) : 4, argc > 3 ? atoi(argv[3]) : 40,
                argc > 4 ? atoi(argv[4]) : 2, argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : 2u << 20};
    if (st.P < 2 || st.P > MAX_P || st.bytes < 8 || st.calls < 2 || st.ncores < 1 ||
        st.ncores > MAX_CORES || st.ncores > st.P) {
        fprintf(stderr, "usage: alltoall_floor P [BYTES_PER_BLOCK [CALLS [NCORES]]] (2 <= P <= %d, "
                "1 <= NCORES <= min(P, %d))\n", MAX_P, MAX_CORES);
        return 2;
    }
    double kb, mb;
    double k = run("kernel", &st, &kb);
    double m = run("mapped", &st, &mb);
    printf("alltoall P=%d %zu B per block, %d cores, P-1 blocks per rank: kernel median %.1f best "
           "%.1f us, mapped median %.1f best %.1f us, mapped / kernel %.2f (best %.2f)\n", st.P,
           st.bytes, st.ncores, k, kb, m, mb, m / k, mb / kb);
    return 0;
}
