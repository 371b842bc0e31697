/*
 * mpi_stage.c — the buffers of allgather(v), alltoall(v), gather(v) and scatter(v) whose
 * datatype has gaps (or a lower bound, or an extent other than its size), or whose
 * receive blocks overlap (mpi_xcoll.c): collie moves them as packed bytes.  (A broadcast's
 * packed copy is mpi_types.c's cm_pack_setup.)
 *
 * MPI lets the ranks of one call use different datatypes of the same type signature (a
 * root gathering with a vector while the others send plain ints), so a rank cannot go to
 * PMPI because of its own datatype's layout: the others would be in collie.  Instead every
 * such buffer is packed (MPI_Pack, block by block, the blocks one after the other) into a
 * copy before the collective starts and the received blocks are unpacked (MPI_Unpack) once
 * it has finished — right after the blocking call, at the completion of an MPI_I* request
 * (mpi_requests.c), and at every MPI_Start and completion of a persistent one.  The
 * datatype is duplicated for the request's life (the program may free its handle).
 */
#include <stdlib.h>

#include "base/base.h"
#include "mpi/mpi_layer.h"

/* Packs or unpacks every block of s. */
static int move(cm_stage *s, bool pack, const char *fn) {
    if (!s->counts)
        return cm_pack(pack, s->buf, (size_t)s->n * s->count, s->type, s->size, s->extent, s->tmp, fn);
    size_t off = 0;
    for (int j = 0; j < s->n; j++) {
        size_t n = (size_t)s->counts[j];
        char *at = (char *)s->buf + (MPI_Aint)s->displs[j] * s->extent;
        int st = n ? cm_pack(pack, at, n, s->type, s->size, s->extent, s->tmp + off, fn) : COLLIE_OK;
        if (st)
            return st;
        off += n * s->size;
    }
    return COLLIE_OK;
}

int cm_extra_pack(cm_extra *x) {
    for (int i = 0; i < 2; i++) {
        cm_stage *s = &x->stage[i];
        int st = s->tmp && s->in ? move(s, true, x->fn) : COLLIE_OK;
        if (st)
            return st;
    }
    return COLLIE_OK;
}

int cm_extra_unpack(cm_extra *x) {
    for (int i = 0; i < 2; i++) {
        cm_stage *s = &x->stage[i];
        int st = s->tmp && s->out ? move(s, false, x->fn) : COLLIE_OK;
        if (st)
            return st;
    }
    return COLLIE_OK;
}

void cm_extra_free(cm_extra *x) {
    if (!x)
        return;
    for (int i = 0; i < 2; i++) {
        cm_stage *s = &x->stage[i];
        if (!s->tmp)
            continue;
        free(s->tmp);
        free(s->counts);
        PMPI_Type_free(&s->type);
    }
    free(x->arrays);
    free(x);
}
