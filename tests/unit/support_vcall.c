/* support_vcall.c — see vcall.h. */
#include <string.h>
#include "vcall.h"

bool has_v(int coll) {
    return coll == COLL_ALLGATHER || coll == COLL_REDUCE_SCATTER || coll == COLL_ALLTOALL ||
           coll == COLL_GATHER || coll == COLL_SCATTER;
}

/* Block j's count: shared by every rank, or (alltoall) from rank r to rank j; symmetric
 * when in place (the recv arrays serve both directions). */
static size_t vcount(size_t c, int r, int j, bool symmetric) {
    return symmetric ? (c + 3 * (size_t)(r + j)) % (c + 2)
                     : (c + 3 * (size_t)r + 5 * (size_t)j) % (c + 2);
}

/* Displacements of counts for rank r: blocks in order (r even) or reversed, a one-element
 * gap after every other block. */
static void vdispls(int P, int r, const size_t *counts, size_t *displs) {
    size_t at = 0;
    for (int k = 0; k < P; k++) {
        int j = r % 2 ? P - 1 - k : k;
        displs[j] = at;
        at += counts[j] + (size_t)((j + r) % 2);
    }
}

void vcall_make(vcall *vc, const collie_coll_args *a) {
    int P = a->size;
    bool a2a = a->coll == COLL_ALLTOALL, rooted = collie_coll_rooted(a->coll);
    for (int r = 0; r < P; r++) {
        collie_coll_v *v = &vc->v[r];
        memset(v, 0, sizeof *v);
        for (int j = 0; j < P; j++) {
            vc->c[r][j] = vcount(a->count, a2a ? r : 0, j, a2a && a->in_place);
            vc->rc[r][j] = vcount(a->count, j, r, a2a && a->in_place);
        }
        vdispls(P, r, vc->c[r], vc->d[r]);
        vdispls(P, r + 1, vc->rc[r], vc->rd[r]);
        bool arrays = !rooted || r == a->root;
        v->counts = arrays ? vc->c[r] : NULL;
        v->displs = arrays && a->coll != COLL_REDUCE_SCATTER ? vc->d[r] : NULL;
        v->rcounts = a2a ? vc->rc[r] : NULL;
        v->rdispls = a2a ? vc->rd[r] : NULL;
        v->own = a2a ? 0 : vcount(a->count, 0, r, false);
    }
}

