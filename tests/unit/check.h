/* check.h — the shared assertion helper of the unit tests (support_check.c). */
#ifndef COLLIE_TEST_CHECK_H
#define COLLIE_TEST_CHECK_H

#include <stdbool.h>

extern int failures;   /* checks that failed so far */

/* Counts a failure when !ok and prints "FAIL: <message>" for the first 40. */
void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
