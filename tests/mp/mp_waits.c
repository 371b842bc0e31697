/*
 * mp_waits.c — waiting semantics (modes of mp_errors):
 *   compute  rank 0 computes (sleeps) 2.5 s before an allreduce (65 s with
 *            COLLIE_LONG_TESTS=1).  Without COLLIE_TIMEOUT_MS every rank must get the right
 *            sum (a call waits as long as its peers live); with a watchdog shorter than
 *            that, the others must get COLLIE_ERR_PEER naming rank 0 (what the old 60 s
 *            default did to a 65 s computation).
 *   poll     loops of collie_test(req, 0) on iallreduce / ibcast / ibarrier finish with the
 *            right results, and cost at most 50x the blocking calls + 5 s (a loose bound
 *            that polling which never yields, 4500x at P = 4 on 2 cores, fails).
 *   killed   rank P-1 SIGKILLs itself mid-loop (every rank ignores collie-run's SIGTERM):
 *            every survivor gets COLLIE_ERR_PEER naming rank P-1, never a live survivor,
 *            then exits with status 3 (collie-run must still blame rank P-1).
 *   stopped  rank P-1 SIGSTOPs itself (COLLIE_TIMEOUT_MS set): the others get
 *            COLLIE_ERR_PEER after about the watchdog, some naming rank P-1; rank 0 then
 *            SIGCONTs it.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mp_errors.h"

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static outcome sum_call(err_ctx *e, int64_t *sum)
{
    int64_t s = e->rank + 1;
    outcome o = { 0 };
    double t0 = err_now_ms();
    o.status = collie_allreduce(e->team, &s, sum, 1, COLLIE_INT64, COLLIE_SUM);
    o.ms = err_now_ms() - t0;
    snprintf(o.msg, sizeof o.msg, "%s", o.status ? collie_last_error() : "");
    return o;
}

int err_test_compute(err_ctx *e)
{
    const char *lng = getenv("COLLIE_LONG_TESTS");
    long compute_ms = lng && strcmp(lng, "1") == 0 ? 65000 : 2500;
    int64_t sum = 0, want = (int64_t)e->size * (e->size + 1) / 2;
    if (collie_barrier(e->team) != COLLIE_OK)
        err_fail(e, "barrier: %s", collie_last_error());
    if (e->rank == 0)
        sleep_ms(compute_ms);
    outcome o = sum_call(e, &sum);
    bool watchdog = e->timeout_ms > 0 && e->timeout_ms < compute_ms;
    if (!watchdog && (o.status != COLLIE_OK || sum != want))
        err_fail(e, "compute: rank 0 computed %ld ms; status %d (%s), sum %lld (want %lld)",
                 compute_ms, o.status, o.msg, (long long)sum, (long long)want);
    if (watchdog && e->rank != 0 && (o.status != COLLIE_ERR_PEER || !names_rank(o.msg, 0, -1)))
        err_fail(e, "compute with COLLIE_TIMEOUT_MS=%ld: status %d, expected COLLIE_ERR_PEER "
                 "naming rank 0: %s", e->timeout_ms, o.status, o.msg);
    if (e->rank == 0 && !e->failures)
        printf("  compute %ld ms: %s\n", compute_ms, watchdog ? "watchdog fired" : "waited");
    return e->failures ? 1 : 0;
}

typedef int (*poll_call)(err_ctx *e, int64_t *v, collie_request_t **q);

static int call_iallreduce(err_ctx *e, int64_t *v, collie_request_t **q)
{
    static int64_t s;
    s = e->rank + 1;
    return collie_iallreduce(e->team, &s, v, 1, COLLIE_INT64, COLLIE_SUM, q);
}

static int call_ibcast(err_ctx *e, int64_t *v, collie_request_t **q)
{
    *v = e->rank == 1 % e->size ? 4242 : -1;
    return collie_ibcast(e->team, v, 1, COLLIE_INT64, 1 % e->size, q);
}

static int call_ibarrier(err_ctx *e, int64_t *v, collie_request_t **q)
{
    *v = 0;
    return collie_ibarrier(e->team, q);
}

/* n calls, each started then polled with collie_test(req, 0) (or waited); ms taken. */
static double run_calls(err_ctx *e, poll_call call, int64_t want, int n, bool poll)
{
    double t0 = err_now_ms();
    for (int i = 0; i < n && !e->failures; i++) {
        int64_t v = -7;
        collie_request_t *q = NULL;
        int st = call(e, &v, &q);
        if (st == COLLIE_OK && poll)
            do
                st = collie_test(q, 0);
            while (st == COLLIE_TIMEOUT);
        else if (st == COLLIE_OK)
            st = collie_wait(q);
        if (st != COLLIE_OK || v != want)
            err_fail(e, "poll: call %d: status %d, value %lld (want %lld): %s", i, st,
                     (long long)v, (long long)want, st ? collie_last_error() : "");
        collie_request_free(q);
    }
    return err_now_ms() - t0;
}

int err_test_poll(err_ctx *e)
{
    static const char *names[] = { "iallreduce", "ibcast", "ibarrier" };
    poll_call calls[] = { call_iallreduce, call_ibcast, call_ibarrier };
    int64_t wants[] = { (int64_t)e->size * (e->size + 1) / 2, 4242, 0 };
    const int n = 600;
    for (int c = 0; c < 3 && !e->failures; c++) {
        double blocking = run_calls(e, calls[c], wants[c], n, false);
        double polled = run_calls(e, calls[c], wants[c], n, true);
        if (e->rank == 0)
            printf("  %s x%d: wait %.1f ms, poll %.1f ms (%.2fx)\n", names[c], n, blocking,
                   polled, polled / (blocking > 0.001 ? blocking : 0.001));
        if (polled > 50.0 * blocking + 5000.0)
            err_fail(e, "poll: %d %s polled with collie_test(req, 0) took %.0f ms, waited "
                     "%.0f ms", n, names[c], polled, blocking);
    }
    return e->failures ? 1 : 0;
}

/* Survivors' check of killed and stopped: every one got COLLIE_ERR_PEER; rank 0 gathers
 * and checks that all (killed) or some (stopped) name rank P-1. */
static int survivors(err_ctx *e, const char *mode, const outcome *o, bool all_name)
{
    outcome all[256];
    write_outcome(e, mode, o);
    collie_finalize();              /* before gathering: a survivor may wait for this rank */
    e->team = NULL;
    if (o->status != COLLIE_ERR_PEER)
        err_fail(e, "%s: status %d (%s), expected COLLIE_ERR_PEER: %s", mode, o->status,
                 collie_strerror(o->status), o->msg);
    if (e->rank != 0 || !gather(e, mode, e->size - 1, all))
        return e->failures ? 1 : 0;
    int named = 0;
    for (int r = 0; r < e->size - 1; r++) {
        bool n = names_rank(all[r].msg, e->size - 1, -1);
        named += n;
        if (all_name && !n)
            err_fail(e, "%s: rank %d's message does not name the %s rank %d: %s", mode, r,
                     mode, e->size - 1, all[r].msg);
    }
    if (!named)
        err_fail(e, "%s: no survivor names rank %d", mode, e->size - 1);
    return e->failures ? 1 : 0;
}

/* One call of the killed trial: MP_ERRORS_COLL (allreduce, bcast, reduce, barrier,
 * allgather, reduce_scatter, alltoall, gather, scatter, scan, exscan) of MP_ERRORS_BYTES
 * bytes per rank's block (default: an 8-byte allreduce); a and b hold P blocks.  Roots are
 * rank 0, never the killed rank. */
static outcome trial_call(err_ctx *e, const char *coll, size_t bytes, char *a, char *b)
{
    outcome o = { 0 };
    size_t n = bytes / 8 ? bytes / 8 : 1;
    collie_team_t *t = e->team;
    const collie_dtype_t i64 = COLLIE_INT64;
    double t0 = err_now_ms();
    if (strcmp(coll, "bcast") == 0)
        o.status = collie_bcast(t, a, n, i64, 0);
    else if (strcmp(coll, "reduce") == 0)
        o.status = collie_reduce(t, a, b, n, i64, COLLIE_SUM, 0);
    else if (strcmp(coll, "barrier") == 0)
        o.status = collie_barrier(t);
    else if (strcmp(coll, "allgather") == 0)
        o.status = collie_allgather(t, a, b, n, i64);
    else if (strcmp(coll, "reduce_scatter") == 0)
        o.status = collie_reduce_scatter_block(t, a, b, n, i64, COLLIE_SUM);
    else if (strcmp(coll, "alltoall") == 0)
        o.status = collie_alltoall(t, a, b, n, i64);
    else if (strcmp(coll, "gather") == 0)
        o.status = collie_gather(t, a, b, n, i64, 0);
    else if (strcmp(coll, "scatter") == 0)
        o.status = collie_scatter(t, a, b, n, i64, 0);
    else if (strcmp(coll, "scan") == 0)
        o.status = collie_scan(t, a, b, n, i64, COLLIE_SUM);
    else if (strcmp(coll, "exscan") == 0)
        o.status = collie_exscan(t, a, b, n, i64, COLLIE_SUM);
    else
        o.status = collie_allreduce(t, a, b, n, i64, COLLIE_SUM);
    o.ms = err_now_ms() - t0;
    snprintf(o.msg, sizeof o.msg, "%s", o.status ? collie_last_error() : "");
    return o;
}

int err_test_killed(err_ctx *e)
{
    const char *coll = getenv("MP_ERRORS_COLL"), *b = getenv("MP_ERRORS_BYTES");
    size_t bytes = b ? (size_t)atol(b) : 8;
    size_t room = (bytes + 8) * (size_t)(e->size > 0 ? e->size : 1);
    /* MP_ERRORS_ALLOC=1: collie_alloc buffers (the paths that map peers' memory). */
    bool mapped = getenv("MP_ERRORS_ALLOC") && atoi(getenv("MP_ERRORS_ALLOC")) == 1;
    char *x = mapped ? collie_alloc(e->team, room) : calloc(room, 1);
    char *y = mapped ? collie_alloc(e->team, room) : calloc(room, 1);
    if (mapped && x && y) {
        memset(x, 0, room);
        memset(y, 0, room);
    }
    signal(SIGTERM, SIG_IGN);       /* report before collie-run's SIGKILL, 2 s later */
    if (!x || !y || e->size < 2 || e->size > 256 || collie_barrier(e->team) != COLLIE_OK)
        return 1;
    outcome o = { 0 };
    for (int i = 0; i < 100000 && o.status == COLLIE_OK; i++) {
        if (i == 20 && e->rank == e->size - 1)
            raise(SIGKILL);
        o = trial_call(e, coll ? coll : "allreduce", bytes, x, y);
    }
    if (survivors(e, "killed", &o, true))
        return 1;
    /* Exit with an error, as a program that checks its calls would: collie-run must still
     * name the killed rank, not this survivor. */
    if (e->rank == 0)
        printf("mp_errors killed P=%d: passed\n", e->size);
    fflush(stdout);
    _exit(3);
}

int err_test_stopped(err_ctx *e)
{
    char path[600];
    int64_t sum;
    snprintf(path, sizeof path, "%s/stopped.pid", e->dir);
    if (e->size < 2 || e->size > 256 || e->timeout_ms <= 0 || collie_barrier(e->team) != COLLIE_OK)
        return 1;
    if (e->rank == e->size - 1) {
        FILE *f = fopen(path, "w");
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
        raise(SIGSTOP);
        sum_call(e, &sum);           /* continued after the others left: any error is fine */
        return 0;
    }
    outcome o = sum_call(e, &sum);
    int rc = survivors(e, "stopped", &o, false);
    if (o.ms < 0.8 * (double)e->timeout_ms || o.ms > (double)e->timeout_ms + 2500.0)
        err_fail(e, "stopped: failed after %.0f ms; the watchdog is %ld ms", o.ms,
                 e->timeout_ms);
    FILE *f = e->rank == 0 ? fopen(path, "r") : NULL;
    long pid = 0;
    if (f && fscanf(f, "%ld", &pid) == 1 && pid > 0)
        kill((pid_t)pid, SIGCONT);
    if (f)
        fclose(f);
    return rc || e->failures ? 1 : 0;
}
