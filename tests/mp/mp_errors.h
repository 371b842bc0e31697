/*
 * mp_errors.h — shared declarations of the error tests (mp_errors.c: bad arguments;
 * mp_faults.c: mismatched calls, a dead peer, a silent peer).
 */
#ifndef MP_ERRORS_H
#define MP_ERRORS_H

#include <stdbool.h>
#include "collie.h"

typedef struct err_ctx {
    collie_team_t *team;
    int rank, size;
    const char *dir;
    long timeout_ms;        /* COLLIE_TIMEOUT_MS */
    long failures;
} err_ctx;

void err_fail(err_ctx *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double err_now_ms(void);
/* Case-insensitive substring test. */
bool err_contains(const char *haystack, const char *needle);

/* One rank's result of a call, written to DIR/<mode>_r<rank>.txt for rank 0 to check. */
typedef struct outcome {
    int status;
    double ms;
    char msg[512];
} outcome;
void write_outcome(err_ctx *e, const char *mode, const outcome *o);
/* Rank 0: waits for the outcomes of ranks [0, n); false if some never came. */
bool gather(err_ctx *e, const char *mode, int n, outcome *all);
/* True when msg contains "rank N" for the given N (any N != self when want < 0). */
bool names_rank(const char *msg, int want, int self);

int err_test_args(err_ctx *e);
int err_test_misuse(err_ctx *e);
int err_test_compute(err_ctx *e);
int err_test_poll(err_ctx *e);
int err_test_killed(err_ctx *e);
int err_test_stopped(err_ctx *e);
int err_test_mismatch(err_ctx *e);
int err_test_dead(err_ctx *e);
int err_test_silent(err_ctx *e);

#endif
