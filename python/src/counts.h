/*
 * counts.h — the v forms' counts and displacements from Python (any sequence of ints: a
 * list, a tuple, a numpy array), in elements, one entry per rank, checked: the right
 * length, no negative entry, no overflow.  Displacements left out (None) are packed: the
 * exclusive prefix sums of the counts.
 */
#ifndef PYCOLLIE_COUNTS_H
#define PYCOLLIE_COUNTS_H

#include "call.h"

/* n arrays of P size_t each, owned by c (freed with it); NULL with an error set. */
size_t *pyc_call_arrays(pyc_call *c, int n, int P);
/* seq -> dst[P]; -1 with CollieError naming fn and what ("counts", ...). */
int pyc_counts(PyObject *seq, int P, const char *fn, const char *what, size_t *dst);
/* seq (or, for NULL/None, the packed displacements of counts) -> dst[P]; -1 on error. */
int pyc_displs(PyObject *seq, int P, const size_t *counts, const char *fn, const char *what,
               size_t *dst);
/* The elements a buffer laid out by counts/displs spans: max(displs[j] + counts[j]) over
 * the non-empty blocks (0 if all are empty). */
size_t pyc_extent(const size_t *counts, const size_t *displs, int P);
/* The sum of counts[P]; -1 with CollieError on overflow. */
int pyc_total(const size_t *counts, int P, const char *fn, const char *what, size_t *sum);

#endif
