/* support_check.c — see check.h. */
#include "check.h"

#include <stdarg.h>
#include <stdio.h>

int failures;

void check(bool ok, const char *fmt, ...) {
    if (ok)
        return;
    if (++failures <= 40) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "FAIL: ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}
