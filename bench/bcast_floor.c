/*
 * bcast_floor.c — the copy floor of a bcast of P ranks on this machine's cores: how long
 * do the copies alone take, without the library's waiting and scheduling, when every
 * non-root rank's output gets the root's input?  Issue 14 asks bcast with `collie_alloc`
 * buffers for at most 0.6x the best peer from 512 KiB at P = 2, 3, 4, 8; the peers copy
 * twice (into shared memory, then out) or with the kernel; this says what the mapped
 * buffers (one copy per reader) can gain over those here.
 *
 * One worker process per core (pinned, NCORES of them) does the copies of ranks w,
 * w + NCORES, ...; worker 0 is also the root (rank 0) and owns its input, which it
 * writes anew before every call (untimed; with `reused`, once).  After a spin barrier:
 *   mapped   each non-root rank copies the root's input (in shared memory) into its own
 *            output: the floor of collie_alloc buffers and of collie's `direct_copy` when
 *            they are mapped;
 *   twocopy  the root copies its input into a shared staging area, CHUNK bytes at a time,
 *            publishing each chunk; the readers copy the chunks out as they are published
 *            (the copy cells of Intel MPI, MPICH and collie, without a ring to reuse:
 *            every chunk has its own place, so the readers never hold the root back);
 *            worker 0 copies all of the root's chunks in before its own readers' copies;
 *   kernel   each non-root rank reads the root's private input with process_vm_readv (the
 *            single copy of Open MPI, MPICH and Intel MPI for large messages);
 *   shared   as mapped, but the copies are items (chunk c for reader q, chunk by chunk)
 *            that every worker, the root's too, takes from one counter until none is left:
 *            the floor of mapped buffers when the running ranks share the copies.
 * Every way goes CHUNK by CHUNK, and a worker with several readers copies a chunk for each
 * of them before the next, so that the ways differ only in where the data comes from.
 * Separate processes sharing a core cannot do that (a switch per chunk costs more than the
 * chunk): each copies its whole message in its time slice, and what the others on the
 * core pulled over is still cached only if it fits.  With `whole`, mapped and kernel
 * copy each reader's whole message in turn that way (twocopy stays chunked: a peer's
 * readers pace on the root's chunks, and the staging area is read once per reader alike).
 * The time of a call is from the barrier to the last worker's end.  Prints each way's
 * median and best time per call in µs over CALLS calls after a tenth as warm-up, and
 * mapped / twocopy, mapped / kernel.
 *
 *   usage: bcast_floor P [BYTES [CALLS [NCORES [CHUNK [reused] [whole]]]]]
 *          (defaults 2 MiB, 100 calls, 2 cores, 64 KiB chunks, fresh data, chunked)
 */
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdbool.h>

#include "floor_util.h"

#define MAX_P 64
#define MAX_CORES 16

typedef struct shared {
    word start, done;                 /* worker barriers, counted across calls */
    word published;                   /* twocopy: chunks in the staging area, across calls */
    word claimed;                     /* shared: items taken in this call */
    word root_addr, root_pid;         /* kernel: the root's private input */
    word dt_bits[MAX_CORES];          /* each worker's time of the call */
} shared;

typedef struct setup {
    int P, calls, ncores, reused, whole;
    size_t bytes, chunk;
} setup;

typedef struct bufs {
    shared *sh;
    char *root_in;                    /* mapped: shared; kernel, twocopy: worker 0's own */
    char *staging;                    /* twocopy: shared */
    char *outs[MAX_P];                /* this worker's ranks' outputs */
} bufs;

static uint64_t value(int call, size_t i) {
    return (i * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)call << 40);
}

static void write_input(char *in, const setup *st, int call) {
    for (size_t i = 0; i + 8 <= st->bytes; i += 8)
        *(uint64_t *)(in + i) = value(call, i);
}

static void kernel_read(const shared *sh, char *to, size_t from, size_t bytes) {
    struct iovec local = {to, bytes};
    struct iovec remote = {(char *)(uintptr_t)atomic_load(&sh->root_addr.v) + from, bytes};
    if (process_vm_readv((pid_t)atomic_load(&sh->root_pid.v), &local, 1, &remote, 1, 0) !=
        (ssize_t)bytes) {
        perror("bcast_floor: process_vm_readv");
        exit(1);
    }
}

/* twocopy: the readers of worker w copy chunk after chunk as the root publishes them
 * (`base` = chunks published before this call). */
static void copy_out_chunks(bufs *b, const setup *st, int w, uint64_t base) {
    size_t nchunks = (st->bytes + st->chunk - 1) / st->chunk;
    for (size_t c = 0; c < nchunks; c++) {
        size_t off = c * st->chunk, n = st->bytes - off < st->chunk ? st->bytes - off : st->chunk;
        wait_for(&b->sh->published, base + c + 1);
        for (int r = w == 0 ? st->ncores : w; r < st->P; r += st->ncores)
            memcpy(b->outs[r] + off, b->staging + off, n);
    }
}

/* shared: items i = chunk * (P - 1) + reader - 1 from the call's counter. */
static void copy_shared(bufs *b, const setup *st) {
    uint64_t readers = (uint64_t)st->P - 1, nchunks = (st->bytes + st->chunk - 1) / st->chunk;
    for (;;) {
        uint64_t i = atomic_fetch_add_explicit(&b->sh->claimed.v, 1, memory_order_relaxed);
        if (i >= readers * nchunks)
            return;
        size_t off = (size_t)(i / readers) * st->chunk;
        size_t n = st->bytes - off < st->chunk ? st->bytes - off : st->chunk;
        memcpy(b->outs[1 + i % readers] + off, b->root_in + off, n);
    }
}

/* The copies of worker w's ranks in one call. */
static void copy_call(const char *way, bufs *b, const setup *st, int w, uint64_t base) {
    if (way[0] == 's') {
        copy_shared(b, st);
        return;
    }
    if (way[0] == 't') {
        if (w == 0)
            for (size_t off = 0; off < st->bytes; off += st->chunk) {
                size_t n = st->bytes - off < st->chunk ? st->bytes - off : st->chunk;
                memcpy(b->staging + off, b->root_in + off, n);
                atomic_fetch_add_explicit(&b->sh->published.v, 1, memory_order_release);
            }
        copy_out_chunks(b, st, w, base);
        return;
    }
    size_t step = st->whole ? st->bytes : st->chunk;
    for (size_t off = 0; off < st->bytes; off += step) {
        size_t n = st->bytes - off < step ? st->bytes - off : step;
        for (int r = w == 0 ? st->ncores : w; r < st->P; r += st->ncores) {
            if (way[0] == 'm')
                memcpy(b->outs[r] + off, b->root_in + off, n);
            else
                kernel_read(b->sh, b->outs[r] + off, off, n);
        }
    }
}

static void check(bufs *b, const setup *st, int w, int call, const char *way) {
    int first = way[0] == 's' ? (w == 0 ? 1 : st->P) : w == 0 ? st->ncores : w;
    int step = way[0] == 's' ? 1 : st->ncores;
    for (int r = first; r < st->P; r += step)
        for (size_t i = 0; i + 8 <= st->bytes; i += 4096)
            if (*(const uint64_t *)(b->outs[r] + i) != value(call, i)) {
                fprintf(stderr, "bcast_floor: %s: rank %d, wrong data at byte %zu\n", way, r, i);
                exit(1);
            }
}

/* The slowest worker's time of the call just ended (after the done barrier). */
static double slowest(const shared *sh, const setup *st) {
    double worst = 0;
    for (int v = 0; v < st->ncores; v++) {
        double t = as_double(atomic_load_explicit(&sh->dt_bits[v].v, memory_order_relaxed));
        worst = t > worst ? t : worst;
    }
    return worst;
}

/* Worker w: its ranks' copies, st->calls times; worker 0 returns the median call time. */
static double work(const char *way, bufs *b, const setup *st, int w, double *best_out) {
    double *times = calloc((size_t)st->calls, sizeof *times);
    int warm = st->calls / 10 + 1, timed = 0;
    size_t nchunks = (st->bytes + st->chunk - 1) / st->chunk;
    for (int call = 1; call <= st->calls; call++) {
        if (w == 0 && (!st->reused || call == 1))
            write_input(b->root_in, st, st->reused ? 1 : call);
        if (w == 0)   /* no worker takes items before the start barrier */
            atomic_store_explicit(&b->sh->claimed.v, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->sh->start.v, 1, memory_order_acq_rel);
        wait_for(&b->sh->start, (uint64_t)call * (uint64_t)st->ncores);
        double t0 = now_us();
        copy_call(way, b, st, w, (uint64_t)(call - 1) * nchunks);
        atomic_store_explicit(&b->sh->dt_bits[w].v, as_bits(now_us() - t0), memory_order_relaxed);
        atomic_fetch_add_explicit(&b->sh->done.v, 1, memory_order_acq_rel);
        wait_for(&b->sh->done, (uint64_t)call * (uint64_t)st->ncores);
        if (call > warm)   /* dt_bits change only after every worker started the next call */
            times[timed++] = slowest(b->sh, st);
    }
    check(b, st, w, st->reused ? 1 : st->calls, way);
    qsort(times, (size_t)timed, sizeof *times, by_value);
    *best_out = times[0];
    double median = times[timed / 2];
    free(times);
    return median;
}

/* One way: st->ncores workers; returns the median and the best (*best). */
static bool has_word(int argc, char **argv, const char *w) {
    for (int i = 6; i < argc; i++)
        if (!strcmp(argv[i], w))
            return true;
    return false;
}

static double run(const char *way, const setup *st, double *best) {
    bufs b = {shared_map(sizeof(shared)), NULL, NULL, {NULL}};
    for (int r = 1; r < st->P; r++)
        b.outs[r] = shared_map(st->bytes);   /* seen by every worker (shared) */
    b.root_in = way[0] == 'm' || way[0] == 's' ? shared_map(st->bytes) : aligned_alloc(4096, (st->bytes + 4095) / 4096 * 4096);
    b.staging = way[0] == 't' ? shared_map(st->bytes) : NULL;
    atomic_store(&b.sh->root_addr.v, (uint64_t)(uintptr_t)b.root_in);
    atomic_store(&b.sh->root_pid.v, (uint64_t)getpid());
    pid_t workers[MAX_CORES];
    fflush(stdout);
    for (int w = 1; w < st->ncores; w++)
        if ((workers[w] = fork()) == 0) {
            pin(w);
            double ignored;
            work(way, &b, st, w, &ignored);
            exit(0);
        }
    pin(0);
    double median = work(way, &b, st, 0, best);
    for (int w = 1; w < st->ncores; w++)
        waitpid(workers[w], NULL, 0);
    return median;
}

int main(int argc, char **argv) {
    setup st = {argc > 1 ? atoi(argv[1]) : 4, argc > 3 ? atoi(argv[3]) : 100,
                argc > 4 ? atoi(argv[4]) : 2, has_word(argc, argv, "reused"),
                has_word(argc, argv, "whole"),
                argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : 2u << 20,
                argc > 5 ? (size_t)strtoull(argv[5], NULL, 0) : 64u << 10};
    if (st.P < 2 || st.P > MAX_P || st.bytes < 8 || st.calls < 2 || st.ncores < 1 ||
        st.ncores > MAX_CORES || st.ncores > st.P || st.chunk < 64) {
        fprintf(stderr, "usage: bcast_floor P [BYTES [CALLS [NCORES [CHUNK [reused] [whole]]]]] "
                "(2 <= P <= %d, 1 <= NCORES <= min(P, %d), CHUNK >= 64)\n", MAX_P, MAX_CORES);
        return 2;
    }
    double mb, tb, kb, sb;
    double m = run("mapped", &st, &mb);
    double sh = run("shared", &st, &sb);
    double t = run("twocopy", &st, &tb);
    double k = run("kernel", &st, &kb);
    printf("bcast P=%d %zu B, %d cores, %s data, %zu B chunks%s: mapped median %.1f best %.1f us, "
           "twocopy %.1f / %.1f, kernel %.1f / %.1f; mapped / twocopy %.2f (best %.2f), "
           "mapped / kernel %.2f (best %.2f); shared %.1f / %.1f, shared / mapped %.2f\n", st.P, st.bytes, st.ncores,
           st.reused ? "reused" : "fresh", st.chunk, st.whole ? " (whole copies per reader)" : "", m, mb, t, tb, k, kb, m / t, mb / tb, m / k,
           mb / kb, sh, sb, sh / m);
    return 0;
}
