/* copy_check.h — one checked call of a copy function for the copy tests (support_copy.c):
 * the destination holds the source's bytes and nothing around it changed. */
#ifndef COLLIE_TEST_COPY_CHECK_H
#define COLLIE_TEST_COPY_CHECK_H

#include <stddef.h>

#define COPY_GUARD 64   /* bytes checked on each side of the destination */

typedef void (*copy_fn)(void *dst, const void *src, size_t n);

/* Fills area with a marker, copies n bytes of src to area + COPY_GUARD + dalign with copy,
 * then checks the copy byte by byte against src and the guard bytes on both sides (area
 * holds at least 2 * COPY_GUARD + dalign + n bytes); failures are counted by check(). */
void copy_check(const char *name, copy_fn copy, const unsigned char *src, unsigned char *area,
                size_t dalign, size_t n);

#endif
