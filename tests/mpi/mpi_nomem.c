/*
 * mpi_nomem.c — a rank that runs out of memory while the drop-in sets up a communicator's
 * team (linked with libcollie_mpi; run with COLLIE_MPI_NODE_SPLIT for the shm+mpi
 * transport's channels).
 *
 * This program interposes malloc, calloc, realloc and aligned_alloc; armed, it fails the
 * k-th allocation that libcollie_mpi itself makes (the caller's return address is in that
 * library), on one rank, inside MPI_Comm_dup (where the team is made).  For every k up to
 * the number of allocations the set-up makes (counted in a first, unarmed round) and for
 * every rank as the failing one, checked: MPI_Comm_dup succeeds; an MPI_Allreduce and an
 * MPI_Bcast on the new communicator give the right data (collie serves it, or — its team
 * not made — PMPI does); MPI_Comm_free returns; and after all of it MPI_Finalize returns
 * (the test's time limit catches a hang there: a rank that failed at channel set-up
 * skipped the release's count exchange that its peers waited for at MPI_Finalize).
 *
 *   mpi_nomem [MAX_K]   (MAX_K: at most this many k per rank; default all)
 *
 * Prints "passed: 0 failures (N allocations swept)" after MPI_Finalize.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_bool armed;
static atomic_long counted, target;   /* target 0: count only */
static atomic_long failed;            /* allocations failed on purpose */
static _Thread_local bool inside;     /* dladdr must not recurse into the check */
static void *_Atomic collie_base;

static bool from_collie(void *ret) {
    void *base = atomic_load(&collie_base);
    Dl_info info;
    if (!dladdr(ret, &info))
        return false;
    if (base)
        return info.dli_fbase == base;
    if (info.dli_fname && strstr(info.dli_fname, "libcollie_mpi")) {
        atomic_store(&collie_base, info.dli_fbase);
        return true;
    }
    return false;
}

/* Should this allocation (made from ret) fail? */
static bool fail_now(void *ret) {
    if (!atomic_load_explicit(&armed, memory_order_relaxed) || inside)
        return false;
    inside = true;
    bool mine = from_collie(ret);
    inside = false;
    if (!mine)
        return false;
    long n = atomic_fetch_add(&counted, 1) + 1;
    if (n != atomic_load(&target))
        return false;
    atomic_fetch_add(&failed, 1);
    if (getenv("MPI_NOMEM_VERBOSE"))   /* where: addr2line -f -e libcollie_mpi.so OFFSET */
        fprintf(stderr, "mpi_nomem: failing an allocation from libcollie_mpi.so+%#lx\n",
                (unsigned long)((char *)ret - (char *)atomic_load(&collie_base)));
    return true;
}

void *malloc(size_t n) {
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}
void *aligned_alloc(size_t align, size_t n) {
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_memalign(align, n);
}

static int rank, size, failures;

static void check(int ok, const char *what, int failing, long k) {
    if (!ok) {
        failures++;
        fprintf(stderr, "FAIL: rank %d: %s (rank %d failing its allocation %ld)\n", rank, what,
                failing, k);
    }
}

/* One round: rank `failing` fails its k-th allocation in libcollie_mpi inside MPI_Comm_dup
 * (k 0: none fails, every rank counts).  Returns this rank's count. */
static long round_trip(int failing, long k) {
    bool me = k == 0 || rank == failing;
    atomic_store(&counted, 0);
    atomic_store(&target, me ? k : 0);
    atomic_store(&armed, me);
    MPI_Comm d = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
    atomic_store(&armed, false);
    long n = atomic_load(&counted);
    check(rc == MPI_SUCCESS && d != MPI_COMM_NULL, "MPI_Comm_dup", failing, k);
    if (d == MPI_COMM_NULL)
        return n;
    double x[3] = { rank + 1, 2.0 * rank, 1 }, s[3] = { 0 };
    rc = MPI_Allreduce(x, s, 3, MPI_DOUBLE, MPI_SUM, d);
    check(rc == MPI_SUCCESS && s[0] == size * (size + 1) / 2.0 && s[1] == size * (size - 1.0) &&
          s[2] == size, "MPI_Allreduce's sums", failing, k);
    int b[4] = { rank, rank, rank, rank };
    rc = MPI_Bcast(b, 4, MPI_INT, size - 1, d);
    check(rc == MPI_SUCCESS && b[0] == size - 1 && b[3] == size - 1, "MPI_Bcast's data",
          failing, k);
    rc = MPI_Comm_free(&d);
    check(rc == MPI_SUCCESS, "MPI_Comm_free", failing, k);
    return n;
}

int main(int argc, char **argv) {
    long max_k = argc > 1 ? atol(argv[1]) : 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long swept = 0;
    for (int failing = 0; failing < size; failing++) {
        long n = round_trip(failing, 0);   /* the number of allocations of the set-up */
        MPI_Bcast(&n, 1, MPI_LONG, failing, MPI_COMM_WORLD);
        if (rank == 0 && failing == 0)
            fprintf(stderr, "mpi_nomem: rank 0's set-up makes %ld allocations in libcollie_mpi\n", n);
        if (max_k > 0 && n > max_k)
            n = max_k;
        for (long k = 1; k <= n; k++) {
            if (rank == 0 && getenv("MPI_NOMEM_VERBOSE"))
                fprintf(stderr, "mpi_nomem: rank %d fails its allocation %ld\n", failing, k);
            round_trip(failing, k);
        }
        swept += n;
    }
    long made = atomic_load(&failed), all_failed = 0;
    MPI_Reduce(&made, &all_failed, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all_failed != swept) {
        failures++;
        fprintf(stderr, "FAIL: %ld allocations failed on purpose, %ld expected\n", all_failed, swept);
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0)
        printf("passed: %d failures (%ld allocations swept)\n", total, swept);
    return total != 0;
}
