/* size_suffix.h — the size suffixes every COLLIE_* number accepts: K, M, G (binary: 1024,
 * 1024^2, 1024^3, as collie-bench's sizes), also written KiB, MiB, GiB.  Header-only: the
 * shared heap (src/heap/) shares it without linking libcollie. */
#ifndef COLLIE_SIZE_SUFFIX_H
#define COLLIE_SIZE_SUFFIX_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The multiplier of the suffix at s: 1 for none, 0 for anything that is not a suffix. */
static inline long long collie_size_suffix_scale(const char *s) {
    if (!*s)
        return 1;
    long long scale = 0;
    switch (*s) {
    case 'K': case 'k': scale = 1LL << 10; break;
    case 'M': case 'm': scale = 1LL << 20; break;
    case 'G': case 'g': scale = 1LL << 30; break;
    default: return 0;
    }
    return s[1] == '\0' || strcmp(s + 1, "iB") == 0 ? scale : 0;
}

/* text as a whole number with an optional suffix, scaled into *out: 0; 1 if it is not a
 * whole number (or does not fit a long long before scaling); 2 if it does not fit after. */
enum { COLLIE_SIZE_OK = 0, COLLIE_SIZE_NOT_A_NUMBER = 1, COLLIE_SIZE_TOO_LARGE = 2 };
static inline int collie_parse_size(const char *text, long long *out) {
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    long long scale = end == text ? 0 : collie_size_suffix_scale(end);
    if (scale == 0 || errno == ERANGE)
        return COLLIE_SIZE_NOT_A_NUMBER;
    if (x > LLONG_MAX / scale || x < LLONG_MIN / scale)
        return COLLIE_SIZE_TOO_LARGE;
    *out = x * scale;
    return COLLIE_SIZE_OK;
}

#endif
