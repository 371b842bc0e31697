/* size_suffix.h — the size suffixes every COLLIE_* number accepts: K, M, G (binary: 1024,
 * 1024^2, 1024^3, as collie-bench's sizes), also written KiB, MiB, GiB.  Header-only: the
 * shared heap (src/heap/) shares it without linking libcollie. */
#ifndef COLLIE_SIZE_SUFFIX_H
#define COLLIE_SIZE_SUFFIX_H

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

#endif
