/*
 * mp_mcast.c — the multicast broadcast under collie-run (COLLIE_BCAST_ALGO=mcast).
 *
 *   collie-run -n P -- mp_mcast [--iters N] [--expect mcast|chain|any]
 *
 * Every rank checks every broadcast against the root's data regenerated from
 * (iteration, size, root) — an independent reference; sizes from 1 byte to several
 * fragments and more than a channel holds, every root in turn; blocking, split-phase with
 * several calls outstanding, and persistent calls; between them allreduces and barriers on
 * the same channels (the chain fragments a rank finished without must not be taken for
 * theirs).  The request must run "mcast".  --expect says where the data came from, from
 * the counters of all ranks: "mcast" = some fragments by multicast (no injected loss),
 * "chain" = none by multicast (COLLIE_MCAST_DROP=1), "any" = no check.
 * --expect none: the team must have no multicast (COLLIE_MCAST=off) and auto must not
 * choose mcast.
 *
 *   collie-run -n P -- mp_mcast --dead R
 *
 * Rank R _exit()s instead of joining a broadcast from root P-1 (R may be the root): every
 * live rank must, within COLLIE_TIMEOUT_MS + 5 s, either have the root's data (it needed
 * nothing from R) or get COLLIE_ERR_PEER naming a rank — always the latter when R is the
 * root.
 *   collie-run -n P -- mp_mcast --mismatch
 *
 * Rank 0 broadcasts from root 0, every other rank from root 1: no rank may hang or crash;
 * each returns within COLLIE_TIMEOUT_MS + 5 s with the data (it never saw the other
 * root), COLLIE_ERR_MISMATCH saying "the roots differ", or COLLIE_ERR_PEER.
 *
 *   collie-run -n P -- mp_mcast --lazy-successor
 *
 * A message of 25 fragments (more than a channel holds) from root 0; rank 2 then stays out
 * of collie for 1.5 s.  Rank 1, its predecessor, must still finish its broadcast (its
 * chain forward to rank 2) well before that: a rank never leaves more unread chain
 * chunks behind than its predecessor's channel holds.
 * Exit 0 only when every check passed.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collie.h"
#include "core/core.h"

static int rank, size;
static long checks, failures;

__attribute__((format(printf, 2, 3))) static void check(bool ok, const char *fmt, ...) {
    checks++;
    if (ok)
        return;
    failures++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL rank %d: ", rank);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static uint8_t expected_byte(int iter, size_t n, int root, size_t i) {
    uint64_t x = ((uint64_t)iter * 1000003u + n * 7919u + (uint64_t)root * 104729u + i) * 0x9E3779B97F4A7C15ull;
    return (uint8_t)(x >> 56);
}

static void fill(uint8_t *buf, int iter, size_t n, int root) {
    for (size_t i = 0; i < n; i++)
        buf[i] = rank == root ? expected_byte(iter, n, root, i) : 0xEE;
}

static void verify(const uint8_t *buf, int iter, size_t n, int root, const char *how) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i] != expected_byte(iter, n, root, i) && bad++ == 0)
            first = i;
    check(bad == 0, "%s bcast iter %d, %zu bytes from root %d: %zu bytes wrong, first at %zu",
          how, iter, n, root, bad, first);
}

static void check_status(int st, const char *what) {
    check(st == COLLIE_OK, "%s: %s (%s)", what, collie_strerror(st), collie_last_error());
    if (st != COLLIE_OK) {
        printf("rank %d: giving up\n", rank);
        exit(1);
    }
}

static void interleave(int iter) {
    long long mine = rank + iter, sum = 0;
    check_status(collie_allreduce(collie_world(), &mine, &sum, 1, COLLIE_INT64, COLLIE_SUM), "allreduce");
    check(sum == (long long)size * (size - 1) / 2 + (long long)size * iter,
          "allreduce between broadcasts: %lld", sum);
    if (iter % 2)
        check_status(collie_barrier(collie_world()), "barrier");
}

static void blocking(int iter, const size_t *sizes, int nsizes, uint8_t *buf) {
    for (int k = 0; k < nsizes; k++) {
        int root = (iter + k) % size;
        fill(buf, iter, sizes[k], root);
        check_status(collie_bcast(collie_world(), buf, sizes[k], COLLIE_UINT8, root), "bcast");
        verify(buf, iter, sizes[k], root, "blocking");
        if (k % 3 == 0)
            interleave(iter);
    }
}

/* Three broadcasts outstanding at once, from different roots. */
static void split_phase(int iter, uint8_t *bufs[3]) {
    collie_request_t *req[3];
    size_t n[3] = { 100, 20000, 3 };
    for (int k = 0; k < 3; k++) {
        int root = (iter + 2 * k + 1) % size;
        fill(bufs[k], iter, n[k], root);
        check_status(collie_ibcast(collie_world(), bufs[k], n[k], COLLIE_UINT8, root, &req[k]), "ibcast");
        const char *used = collie_request_algorithm(req[k]);
        check(used && strcmp(used, "mcast") == 0, "ibcast runs %s, not mcast", used ? used : "?");
    }
    for (int k = 2; k >= 0; k--)
        check_status(collie_wait(req[k]), "wait");
    for (int k = 0; k < 3; k++) {
        verify(bufs[k], iter, n[k], (iter + 2 * k + 1) % size, "split-phase");
        collie_request_free(req[k]);
    }
}

static void persistent(uint8_t *buf) {
    collie_request_t *req;
    size_t n = 5000;
    int root = size - 1;
    check_status(collie_bcast_init(collie_world(), buf, n, COLLIE_UINT8, root, &req), "bcast_init");
    for (int iter = 0; iter < 3; iter++) {
        fill(buf, 100 + iter, n, root);
        check_status(collie_start(req), "start");
        check_status(collie_wait(req), "wait");
        verify(buf, 100 + iter, n, root, "persistent");
        interleave(iter);
    }
    collie_request_free(req);
}

static void check_sources(const char *expect) {
    uint64_t by_mcast = 0, by_chain = 0, fin = 0;
    check(collie_team_mcast_stats(collie_world(), &by_mcast, &by_chain, &fin),
          "the team has no multicast (set up and verified at collie_init?)");
    uint64_t mine[2] = { by_mcast, by_chain }, all[2];
    check_status(collie_allreduce(collie_world(), mine, all, 2, COLLIE_UINT64, COLLIE_SUM), "allreduce");
    if (rank == 0)
        printf("mp_mcast: fragments by multicast %llu, by the chain %llu (all ranks)\n",
               (unsigned long long)all[0], (unsigned long long)all[1]);
    if (strcmp(expect, "mcast") == 0)
        check(all[0] > 0, "no fragment came by multicast although no loss was injected");
    if (strcmp(expect, "chain") == 0)
        check(all[0] == 0, "%llu fragments came by multicast although all were dropped",
              (unsigned long long)all[0]);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int dead_peer(int dead) {
    uint8_t buf[1000];
    fill(buf, 7, sizeof buf, size - 1);
    check_status(collie_barrier(collie_world()), "barrier");
    if (rank == dead)
        _exit(0);
    const char *env = getenv("COLLIE_TIMEOUT_MS");
    double limit = (env ? atof(env) : 60000.0) + 5000.0, t0 = now_ms();
    int st = collie_bcast(collie_world(), buf, sizeof buf, COLLIE_UINT8, size - 1);
    double ms = now_ms() - t0;
    const char *msg = st ? collie_last_error() : "";
    bool ok = st == COLLIE_OK && dead != size - 1;
    if (ok)
        verify(buf, 7, sizeof buf, size - 1, "dead peer");
    check(ok || (st == COLLIE_ERR_PEER && strstr(msg, "rank ")), "rank %d died: bcast returned "
          "%d (%s): %s", dead, st, collie_strerror(st), msg);
    check(ms <= limit, "rank %d died: the bcast failed only after %.0f ms", dead, ms);
    printf("mp_mcast rank %d: rank %d died: status %d after %.0f ms: %s\n", rank, dead, st, ms, msg);
    return failures ? 1 : 0;
}

static int mismatched_roots(void) {
    uint8_t buf[100];
    int root = rank == 0 ? 0 : 1;
    fill(buf, 5, sizeof buf, root);
    check_status(collie_barrier(collie_world()), "barrier");
    const char *env = getenv("COLLIE_TIMEOUT_MS");
    double limit = (env ? atof(env) : 60000.0) + 5000.0, t0 = now_ms();
    int st = collie_bcast(collie_world(), buf, sizeof buf, COLLIE_UINT8, root);
    double ms = now_ms() - t0;
    const char *msg = st ? collie_last_error() : "";
    if (st == COLLIE_OK)
        verify(buf, 5, sizeof buf, root, "mismatched roots");
    check(st == COLLIE_OK || (st == COLLIE_ERR_MISMATCH && strstr(msg, "the roots differ")) ||
          st == COLLIE_ERR_PEER, "mismatched roots: status %d (%s): %s", st, collie_strerror(st), msg);
    check(ms <= limit, "mismatched roots: the bcast returned only after %.0f ms", ms);
    printf("mp_mcast rank %d: mismatched roots: status %d after %.0f ms %s\n", rank, st, ms, msg);
    return failures ? 1 : 0;
}

static int lazy_successor(void) {
    size_t n = 25 * 16384;
    uint8_t *buf = malloc(n);
    fill(buf, 3, n, 0);
    check_status(collie_barrier(collie_world()), "barrier");
    double t0 = now_ms();
    check_status(collie_bcast(collie_world(), buf, n, COLLIE_UINT8, 0), "bcast");
    double ms = now_ms() - t0;
    verify(buf, 3, n, 0, "lazy successor");
    if (rank == 2)
        usleep(1500000);
    check(rank != 1 || ms < 1000.0, "rank 1's bcast took %.0f ms: it waited for its successor "
          "to call collie again", ms);
    check_status(collie_barrier(collie_world()), "barrier");
    free(buf);
    check_status(collie_finalize(), "finalize");
    printf("mp_mcast rank %d: lazy successor: bcast %.1f ms, %ld failures\n", rank, ms, failures);
    return failures ? 1 : 0;
}

static void expect_none(void) {
    check(!collie_team_multicast(collie_world()), "the team has multicast although it is off");
    uint8_t b[64];
    collie_request_t *req;
    check_status(collie_ibcast(collie_world(), b, sizeof b, COLLIE_UINT8, 0, &req), "ibcast");
    const char *used = collie_request_algorithm(req);
    check(used && strcmp(used, "mcast") != 0, "auto chose %s without multicast", used ? used : "?");
    check_status(collie_wait(req), "wait");
    collie_request_free(req);
    collie_finalize();
    printf("mp_mcast rank %d: P=%d %ld checks, %ld failures\n", rank, size, checks, failures);
}

int main(int argc, char **argv) {
    int iters = 2, dead = -1;
    bool lazy = false, mismatch = false;
    const char *expect = "any";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc)
            expect = argv[++i];
        else if (strcmp(argv[i], "--dead") == 0 && i + 1 < argc)
            dead = atoi(argv[++i]);
        else if (strcmp(argv[i], "--lazy-successor") == 0)
            lazy = true;
        else if (strcmp(argv[i], "--mismatch") == 0)
            mismatch = true;
        else {
            fprintf(stderr, "usage: mp_mcast [--iters N] [--expect mcast|chain|any|none] "
                    "[--dead RANK] [--lazy-successor] [--mismatch]\n");
            return 2;
        }
    }
    if (collie_init() != COLLIE_OK) {
        printf("FAIL collie_init: %s\n", collie_last_error());
        return 1;
    }
    rank = collie_rank(collie_world());
    size = collie_size(collie_world());
    if (strcmp(expect, "none") == 0) {
        expect_none();
        return failures ? 1 : 0;
    }
    if (dead >= 0)
        return dead_peer(dead);
    if (lazy)
        return lazy_successor();
    if (mismatch)
        return mismatched_roots();
    check(collie_team_multicast(collie_world()), "multicast was not set up on this team");
    const size_t sizes[] = { 1, 48, 49, 1000, 16384, 16385, 100000, 300000, 0 };
    uint8_t *buf = malloc(300000), *bufs[3] = { malloc(100), malloc(20000), malloc(3) };
    for (int iter = 0; iter < iters && failures == 0; iter++) {
        blocking(iter, sizes, (int)(sizeof sizes / sizeof *sizes), buf);
        split_phase(iter, bufs);
    }
    persistent(buf);
    check_sources(expect);
    free(buf);
    for (int k = 0; k < 3; k++)
        free(bufs[k]);
    int st = collie_finalize();
    check(st == COLLIE_OK, "finalize: %s", collie_last_error());
    printf("mp_mcast rank %d: P=%d %ld checks, %ld failures\n", rank, size, checks, failures);
    return failures ? 1 : 0;
}
