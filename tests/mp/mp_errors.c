/*
 * mp_errors.c — error tests, run under collie-run:
 *
 *   collie-run -n P -- mp_errors args|mismatch|dead|silent DIR
 *
 * args: bad arguments (NULL buffers, bad roots, invalid datatypes, ops not defined for a
 * type, count overflow, NULL request pointers, NULL team) must each return the right
 * negative status with a collie_last_error() naming the argument, never crash, and leave
 * the team usable.  The fault modes are in mp_faults.c.  Exit status 0 when all passed.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "mp_errors.h"

void err_fail(err_ctx *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    e->failures++;
    fprintf(stderr, "[rank %d] FAIL: ", e->rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

double err_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

bool err_contains(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (; haystack && *haystack; haystack++)
        if (strncasecmp(haystack, needle, n) == 0)
            return true;
    return false;
}

/* Checks one call's status and that the message names `needle`. */
static void expect(err_ctx *e, int got, int want, const char *needle, const char *what)
{
    const char *msg = collie_last_error();
    if (got != want)
        err_fail(e, "%s: returned %d (%s), expected %d (%s); message: %s", what, got,
                 collie_strerror(got), want, collie_strerror(want), msg ? msg : "(null)");
    else if (needle && !err_contains(msg, needle))
        err_fail(e, "%s: message \"%s\" does not name '%s'", what, msg ? msg : "(null)",
                 needle);
}

static void bad_buffers_and_roots(err_ctx *e, double *s, double *r)
{
    collie_team_t *t = e->team;
    collie_request_t *q = NULL;
    expect(e, collie_allreduce(t, NULL, r, 10, COLLIE_FLOAT64, COLLIE_SUM), COLLIE_ERR_ARG,
           "sendbuf", "allreduce NULL sendbuf");
    expect(e, collie_allreduce(t, s, NULL, 10, COLLIE_FLOAT64, COLLIE_SUM), COLLIE_ERR_ARG,
           "recvbuf", "allreduce NULL recvbuf");
    expect(e, collie_iallreduce(t, NULL, r, 10, COLLIE_FLOAT64, COLLIE_SUM, &q), COLLIE_ERR_ARG,
           "sendbuf", "iallreduce NULL sendbuf");
    expect(e, collie_bcast(t, NULL, 10, COLLIE_FLOAT64, 0), COLLIE_ERR_ARG, "buf",
           "bcast NULL buf");
    expect(e, collie_reduce(t, s, r, 10, COLLIE_FLOAT64, COLLIE_SUM, -1), COLLIE_ERR_ARG,
           "root", "reduce root -1");
    expect(e, collie_reduce(t, s, r, 10, COLLIE_FLOAT64, COLLIE_SUM, e->size), COLLIE_ERR_ARG,
           "root", "reduce root P");
    expect(e, collie_bcast(t, s, 10, COLLIE_FLOAT64, -1), COLLIE_ERR_ARG, "root",
           "bcast root -1");
    expect(e, collie_bcast(t, s, 10, COLLIE_FLOAT64, e->size + 5), COLLIE_ERR_ARG, "root",
           "bcast root P+5");
    expect(e, collie_ireduce(t, s, r, 10, COLLIE_FLOAT64, COLLIE_SUM, e->size, &q),
           COLLIE_ERR_ARG, "root", "ireduce root P");
    expect(e, collie_bcast_init(t, s, 10, COLLIE_FLOAT64, -1, &q), COLLIE_ERR_ARG, "root",
           "bcast_init root -1");
    expect(e, collie_allreduce(NULL, s, r, 10, COLLIE_FLOAT64, COLLIE_SUM), COLLIE_ERR_ARG,
           "team", "allreduce NULL team");
    expect(e, collie_barrier(NULL), COLLIE_ERR_ARG, "team", "barrier NULL team");
}

static void bad_types_and_ops(err_ctx *e, double *s, double *r)
{
    collie_team_t *t = e->team;
    collie_op_t op = NULL;
    expect(e, collie_allreduce(t, s, r, 10, COLLIE_DTYPE_INVALID, COLLIE_SUM), COLLIE_ERR_ARG,
           "type", "allreduce dtype INVALID");
    expect(e, collie_allreduce(t, s, r, 10, (collie_dtype_t)999, COLLIE_SUM), COLLIE_ERR_ARG,
           "type", "allreduce dtype 999");
    expect(e, collie_bcast(t, s, 10, (collie_dtype_t)12345, 0), COLLIE_ERR_ARG, "type",
           "bcast dtype 12345");
    expect(e, collie_allreduce(t, s, r, 10, COLLIE_FLOAT64, COLLIE_BAND),
           COLLIE_ERR_UNSUPPORTED, "band", "allreduce band on float64");
    expect(e, collie_reduce(t, s, r, 10, COLLIE_FLOAT32, COLLIE_BXOR, 0),
           COLLIE_ERR_UNSUPPORTED, "bxor", "reduce bxor on float32");
    expect(e, collie_allreduce(t, s, r, 4, COLLIE_INT32, COLLIE_MAXLOC),
           COLLIE_ERR_UNSUPPORTED, "maxloc", "allreduce maxloc on int32");
    expect(e, collie_allreduce(t, s, r, 4, COLLIE_FLOAT64_INT32, COLLIE_SUM),
           COLLIE_ERR_UNSUPPORTED, "sum", "allreduce sum on float64_int32");
    expect(e, collie_allreduce(t, s, r, 10, COLLIE_FLOAT64, NULL), COLLIE_ERR_ARG, "op",
           "allreduce NULL op");
    expect(e, collie_op_create(NULL, NULL, 0, &op), COLLIE_ERR_ARG, "fn",
           "op_create NULL fn");
}

static void bad_counts_and_requests(err_ctx *e, double *s, double *r)
{
    collie_team_t *t = e->team;
    size_t huge = SIZE_MAX / 8 + 1;
    expect(e, collie_allreduce(t, s, r, huge, COLLIE_FLOAT64, COLLIE_SUM), COLLIE_ERR_ARG,
           "count", "allreduce count*8 overflows");
    expect(e, collie_bcast(t, s, SIZE_MAX / 2 + 1, COLLIE_INT16, 0), COLLIE_ERR_ARG, "count",
           "bcast count*2 overflows");
    expect(e, collie_iallreduce(t, s, r, 10, COLLIE_FLOAT64, COLLIE_SUM, NULL), COLLIE_ERR_ARG,
           "request", "iallreduce NULL request pointer");
    expect(e, collie_ibarrier(t, NULL), COLLIE_ERR_ARG, "request", "ibarrier NULL request");
    expect(e, collie_allreduce_init(t, s, r, 10, COLLIE_FLOAT64, COLLIE_SUM, NULL),
           COLLIE_ERR_ARG, "request", "allreduce_init NULL request pointer");
    expect(e, collie_test(NULL, 0), COLLIE_ERR_ARG, "request", "collie_test(NULL, 0)");
    expect(e, collie_wait(NULL), COLLIE_ERR_ARG, "request", "collie_wait(NULL)");
    expect(e, collie_start(NULL), COLLIE_ERR_ARG, "request", "collie_start(NULL)");
    collie_request_free(NULL);
}

/* After all the bad calls, a valid allreduce still works: sum of (r+1)*(i+1). */
static void still_usable(err_ctx *e, double *s, double *r)
{
    for (int i = 0; i < 10; i++)
        s[i] = (double)((e->rank + 1) * (i + 1));
    int st = collie_allreduce(e->team, s, r, 10, COLLIE_FLOAT64, COLLIE_SUM);
    if (st != COLLIE_OK) {
        err_fail(e, "valid allreduce after the bad calls: %s", collie_last_error());
        return;
    }
    double ranks = (double)e->size * (e->size + 1) / 2;
    for (int i = 0; i < 10; i++)
        if (r[i] != ranks * (i + 1))
            err_fail(e, "valid allreduce after the bad calls: element %d is %g, expected %g",
                     i, r[i], ranks * (i + 1));
}

int err_test_args(err_ctx *e)
{
    double s[32] = { 0 }, r[32] = { 0 };
    bad_buffers_and_roots(e, s, r);
    bad_types_and_ops(e, s, r);
    bad_counts_and_requests(e, s, r);
    still_usable(e, s, r);
    return e->failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    err_ctx e = { 0 };
    if (argc != 3) {
        fprintf(stderr, "usage: mp_errors args|mismatch|dead|silent|misuse|compute|poll|killed|"
                "stopped DIR\n");
        return 2;
    }
    const char *mode = argv[1], *tmo = getenv("COLLIE_TIMEOUT_MS");
    e.dir = argv[2];
    e.timeout_ms = tmo ? atol(tmo) : 0;     /* 0: no watchdog (the default) */
    int st = collie_init();
    if (st != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 2;
    }
    e.team = collie_world();
    e.rank = collie_rank(e.team);
    e.size = collie_size(e.team);
    int rc = strcmp(mode, "args") == 0       ? err_test_args(&e)
           : strcmp(mode, "mismatch") == 0   ? err_test_mismatch(&e)
           : strcmp(mode, "dead") == 0       ? err_test_dead(&e)
           : strcmp(mode, "silent") == 0     ? err_test_silent(&e)
           : strcmp(mode, "misuse") == 0     ? err_test_misuse(&e)
           : strcmp(mode, "compute") == 0    ? err_test_compute(&e)
           : strcmp(mode, "poll") == 0       ? err_test_poll(&e)
           : strcmp(mode, "killed") == 0     ? err_test_killed(&e)
           : strcmp(mode, "stopped") == 0    ? err_test_stopped(&e)
                                             : 2;
    if (rc == 0 && e.rank == 0)
        printf("mp_errors %s P=%d: passed\n", mode, e.size);
    fflush(stdout);
    collie_finalize();      /* after a peer failure its status is not checked */
    return rc;
}
