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

int err_test_args(err_ctx *e);
int err_test_mismatch(err_ctx *e);
int err_test_dead(err_ctx *e);
int err_test_silent(err_ctx *e);

#endif
