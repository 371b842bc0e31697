/*
 * mp_faults.c — failures that involve other ranks (modes of mp_errors):
 *   mismatch  rank 0 allreduces 10 elements, the others 20: COLLIE_ERR_MISMATCH or
 *             COLLIE_ERR_ARG on at least one rank, and no rank hangs;
 *   dead      rank P-1 _exit()s without calling: every other rank gets COLLIE_ERR_PEER
 *             within the timeout, naming a peer (rank P-1 on at least one rank);
 *   silent    rank P-1 sleeps past the timeout: the others get COLLIE_ERR_PEER after
 *             about COLLIE_TIMEOUT_MS, naming a peer.
 * Each rank writes its outcome to DIR/<mode>_r<rank>.txt; rank 0 gathers and checks the
 * conditions that span ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mp_errors.h"

#define SLACK_MS 2500.0

static void path_of(const err_ctx *e, const char *mode, int rank, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s/%s_r%d.txt", e->dir, mode, rank);
}

void write_outcome(err_ctx *e, const char *mode, const outcome *o)
{
    char path[512], tmp[600];
    path_of(e, mode, e->rank, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        err_fail(e, "cannot write %s", tmp);
        return;
    }
    fprintf(f, "%d %.1f\n%s\n", o->status, o->ms, o->msg);
    fclose(f);
    if (rename(tmp, path) != 0)
        err_fail(e, "cannot rename %s", tmp);
}

static bool read_outcome(const err_ctx *e, const char *mode, int rank, outcome *o)
{
    char path[512];
    path_of(e, mode, rank, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fscanf(f, "%d %lf ", &o->status, &o->ms) == 2;
    if (!fgets(o->msg, sizeof o->msg, f))
        o->msg[0] = '\0';
    o->msg[strcspn(o->msg, "\n")] = '\0';
    fclose(f);
    return ok;
}

/* Rank 0: waits for the outcomes of ranks [0, n); false if some never came. */
bool gather(err_ctx *e, const char *mode, int n, outcome *all)
{
    double deadline = err_now_ms() + 3.0 * (double)e->timeout_ms + 10000.0;
    for (int r = 0; r < n; r++) {
        while (!read_outcome(e, mode, r, &all[r])) {
            if (err_now_ms() > deadline) {
                err_fail(e, "%s: rank %d never reported (hung?)", mode, r);
                return false;
            }
            usleep(20000);
        }
        printf("  %s rank %d: status %d (%s) after %.0f ms: %s\n", mode, r, all[r].status,
               collie_strerror(all[r].status), all[r].ms, all[r].msg);
    }
    return true;
}

/* True when msg contains "rank N" for the given N (any N != self when want < 0). */
bool names_rank(const char *msg, int want, int self)
{
    for (const char *p = msg; (p = strstr(p, "rank ")) != NULL; p += 5) {
        char *end;
        long n = strtol(p + 5, &end, 10);
        if (end == p + 5)
            continue;
        if (want >= 0 ? n == want : n != self)
            return true;
    }
    return false;
}

static outcome run_allreduce(err_ctx *e, size_t count)
{
    static double s[64], r[64];
    outcome o;
    double t0 = err_now_ms();
    o.status = collie_allreduce(e->team, s, r, count, COLLIE_FLOAT64, COLLIE_SUM);
    o.ms = err_now_ms() - t0;
    snprintf(o.msg, sizeof o.msg, "%s", o.status ? collie_last_error() : "");
    return o;
}

static bool start_together(err_ctx *e)
{
    int st = collie_barrier(e->team);
    if (st != COLLIE_OK)
        err_fail(e, "initial barrier: %s", collie_last_error());
    return st == COLLIE_OK;
}

int err_test_mismatch(err_ctx *e)
{
    outcome all[256];
    if (e->size < 2 || e->size > 256 || !start_together(e))
        return e->failures ? 1 : 0;
    outcome o = run_allreduce(e, e->rank == 0 ? 10 : 20);
    write_outcome(e, "mismatch", &o);
    if (o.ms > 2.0 * (double)e->timeout_ms + SLACK_MS)
        err_fail(e, "mismatch: the call took %.0f ms (timeout %ld ms)", o.ms, e->timeout_ms);
    if (o.status > 0)
        err_fail(e, "mismatch: blocking allreduce returned %d", o.status);
    if (e->rank != 0 || !gather(e, "mismatch", e->size, all))
        return e->failures ? 1 : 0;
    int detected = 0;
    for (int r = 0; r < e->size; r++)
        detected += all[r].status == COLLIE_ERR_MISMATCH || all[r].status == COLLIE_ERR_ARG;
    if (!detected)
        err_fail(e, "mismatch: no rank reported COLLIE_ERR_MISMATCH or COLLIE_ERR_ARG");
    return e->failures ? 1 : 0;
}

/* The checks of dead and silent: every live rank gets COLLIE_ERR_PEER naming a peer in
 * [min_ms, timeout + slack]; rank 0 checks that some rank names P-1. */
static int peer_failure(err_ctx *e, const char *mode, double min_ms)
{
    outcome all[256];
    outcome o = run_allreduce(e, 37);
    write_outcome(e, mode, &o);
    if (o.status != COLLIE_ERR_PEER)
        err_fail(e, "%s: status %d (%s), expected COLLIE_ERR_PEER; message: %s", mode,
                 o.status, collie_strerror(o.status), o.msg);
    else if (!names_rank(o.msg, -1, e->rank))
        err_fail(e, "%s: message \"%s\" names no peer rank", mode, o.msg);
    if (o.ms > (double)e->timeout_ms + SLACK_MS || o.ms < min_ms)
        err_fail(e, "%s: failed after %.0f ms; expected %.0f .. %.0f ms (COLLIE_TIMEOUT_MS=%ld)",
                 mode, o.ms, min_ms, (double)e->timeout_ms + SLACK_MS, e->timeout_ms);
    if (e->rank != 0 || !gather(e, mode, e->size - 1, all))
        return e->failures ? 1 : 0;
    bool named = false;
    for (int r = 0; r < e->size - 1; r++)
        named = named || names_rank(all[r].msg, e->size - 1, -1);
    if (!named)
        err_fail(e, "%s: no rank's message names rank %d", mode, e->size - 1);
    return e->failures ? 1 : 0;
}

int err_test_dead(err_ctx *e)
{
    if (e->size < 2 || e->size > 256 || !start_together(e))
        return e->failures ? 1 : 0;
    if (e->rank == e->size - 1)
        _exit(0);
    return peer_failure(e, "dead", 0.0);
}

int err_test_silent(err_ctx *e)
{
    if (e->size < 2 || e->size > 256 || !start_together(e))
        return e->failures ? 1 : 0;
    if (e->rank == e->size - 1) {
        long ms = 2 * e->timeout_ms + 1500;
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
        _exit(0);
    }
    return peer_failure(e, "silent", 0.8 * (double)e->timeout_ms);
}
