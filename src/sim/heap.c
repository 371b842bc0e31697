/*
 * heap.c — the simulator's event heap (a binary min-heap on (time, push order), with a
 * FIFO for the events of the current instant).
 */
#include <stdlib.h>
#include <string.h>
#include "sim/sim_impl.h"

static bool before(const sim_event *x, const sim_event *y) {
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

/* Doubles the FIFO's ring buffer, unwrapping it; false when out of memory. */
static bool grow_fifo(sim_heap *h) {
    size_t cap = h->fcap ? h->fcap * 2 : 1024;
    sim_event *v = malloc(cap * sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < h->fn; i++)
        v[i] = h->fifo[(h->fhead + i) % h->fcap];
    free(h->fifo);
    h->fifo = v;
    h->fhead = 0;
    h->fcap = cap;
    return true;
}

/* An event of the current instant: appended to the FIFO (all its events have time t). */
static bool fifo_push(sim_heap *h, const sim_event *ev) {
    if (h->fn == h->fcap && !grow_fifo(h))
        return false;
    h->fifo[(h->fhead + h->fn++) % h->fcap] = *ev;
    return true;
}

static bool fifo_takes(const sim_heap *h, double t) {
    return t == h->now && (h->fn == 0 || h->fifo[(h->fhead + h->fn - 1) % h->fcap].t == t);
}

bool sim_heap_push(sim_heap *h, double t, int kind, int32_t id, uint32_t ver) {
    if (fifo_takes(h, t)) {
        sim_event ev = { t, h->seq++, id, ver, (uint8_t)kind };
        return fifo_push(h, &ev);
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 1024;
        sim_event *v = realloc(h->v, cap * sizeof *v);
        if (!v)
            return false;
        h->v = v;
        h->cap = cap;
        sim_advise_huge(v, cap * sizeof *v);
    }
    sim_event ev = { t, h->seq++, id, ver, (uint8_t)kind };
    size_t i = h->n++;
    while (i > 0 && before(&ev, &h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = ev;
    return true;
}

bool sim_heap_pop(sim_heap *h, sim_event *out) {
    if (h->fn && (h->n == 0 || before(&h->fifo[h->fhead], &h->v[0]))) {
        *out = h->fifo[h->fhead];
        h->fhead = (h->fhead + 1) % h->fcap;
        h->fn--;
        h->now = out->t;
        return true;
    }
    if (h->n == 0)
        return false;
    *out = h->v[0];
    h->now = out->t;
    sim_event last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
            c++;
        if (!before(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return true;
}

void sim_heap_free(sim_heap *h) {
    free(h->v);
    free(h->fifo);
    memset(h, 0, sizeof *h);
}
