/*
 * verify_label.c — what a message carries, as text (collie-sim draw): the symbolic values
 * of its elements (verify_impl.h) summarised as contribution sets over element ranges,
 * e.g. "x0..3[8:16)" (ranks 0 to 3 combined, elements 8 to 15) or "x{0,2,5}[0:4)"; the
 * range is left out when the message holds the whole vector ("x0..3").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/verify_impl.h"

/* Adds ranks lo … hi (0 <= lo <= hi < P) to set (P bits). */
static void add_range(uint64_t *set, int lo, int hi) {
    for (int r = lo; r <= hi;) {
        if (r % 64 == 0 && r + 63 <= hi) {
            set[r / 64] = ~0ull;
            r += 64;
        } else {
            set[r / 64] |= 1ull << (r % 64);
            r++;
        }
    }
}

/* Adds the ranks of id's leaves to set (P bits); *elem gets a leaf's element.  A node
 * whose leaves are exactly a range of ranks adds the range without walking its leaves
 * (a message's label would otherwise cost P leaves per element). */
static void leaf_ranks(const sym_store *st, uint32_t id, uint64_t *set, int P, long *elem) {
    const sym_node *x = &st->nodes[id];
    if (id == SYM_UNDEF)
        return;
    if (x->exact && x->hi < P) {
        add_range(set, x->lo, x->hi);
        *elem = x->elem;
        return;
    }
    if (x->n == 0) {
        if (x->rank >= 0 && x->rank < P)
            set[x->rank / 64] |= 1ull << (x->rank % 64);
        *elem = x->elem;
        return;
    }
    for (uint32_t k = 0; k < x->n; k++)
        leaf_ranks(st, st->kids[x->first + k], set, P, elem);
}

static bool has(const uint64_t *set, int r) {
    return (set[r / 64] >> (r % 64)) & 1;
}

static void append(char *out, size_t outsz, const char *fmt, long a, long b) {
    size_t len = strlen(out);
    if (len + 1 < outsz)
        snprintf(out + len, outsz - len, fmt, a, b);
}

/* "x5", "x0..3" or "x{0,2,5..7}"; "?" for nothing known. */
static void format_set(const uint64_t *set, int P, char *out, size_t outsz) {
    int runs = 0, first = -1, last = -1;
    for (int r = 0; r < P; r++)
        if (has(set, r) && (r == 0 || !has(set, r - 1))) {
            runs++;
            first = first < 0 ? r : first;
        }
    for (int r = P - 1; r >= 0 && last < 0; r--)
        last = has(set, r) ? r : -1;
    out[0] = '\0';
    if (runs == 0) {
        append(out, outsz, "?", 0, 0);
        return;
    }
    if (runs == 1) {
        append(out, outsz, first == last ? "x%ld" : "x%ld..%ld", first, last);
        return;
    }
    append(out, outsz, "x{", 0, 0);
    for (int r = 0; r < P; r++) {
        if (!has(set, r) || (r > 0 && has(set, r - 1)))
            continue;
        int e = r;
        while (e + 1 < P && has(set, e + 1))
            e++;
        append(out, outsz, e == r ? "%ld" : "%ld..%ld", r, e);
        append(out, outsz, ",", 0, 0);
    }
    out[strlen(out) - 1] = '}';
}

void sym_label(const sym_store *st, int P, size_t count, const uint32_t *vals, size_t n,
               char *out, size_t outsz) {
    int words = (P + 63) / 64;
    uint64_t *cur = sym_xcalloc((size_t)words * 2, sizeof *cur), *next = cur + words;
    char set[160], piece[200];
    out[0] = '\0';
    size_t i = 0;
    while (i < n) {
        long e0 = -1, e = -1;
        memset(cur, 0, (size_t)words * sizeof *cur);
        leaf_ranks(st, vals[i], cur, P, &e0);
        size_t j = i + 1;
        for (; j < n; j++) {                    /* extend while the set stays the same */
            memset(next, 0, (size_t)words * sizeof *next);
            e = -1;
            leaf_ranks(st, vals[j], next, P, &e);
            if (memcmp(cur, next, (size_t)words * sizeof *cur) || e != e0 + (long)(j - i))
                break;
        }
        format_set(cur, P, set, sizeof set);
        if (e0 == 0 && j - i == count)          /* the whole vector: no range */
            snprintf(piece, sizeof piece, "%s%s", out[0] ? " " : "", set);
        else
            snprintf(piece, sizeof piece, "%s%s[%ld:%ld)", out[0] ? " " : "", set, e0,
                     e0 + (long)(j - i));
        if (strlen(out) + strlen(piece) + 1 >= outsz) {
            size_t len = strlen(out);
            snprintf(out + (len + 5 < outsz ? len : outsz - 5), 5, " …");
            break;
        }
        strcat(out, piece);
        i = j;
    }
    free(cur);
}
