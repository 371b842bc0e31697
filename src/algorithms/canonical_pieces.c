/* canonical_pieces.c — partial results as canonical tree nodes (see the header). */
#include <stdlib.h>
#include "collie.h"
#include "algorithms/canonical_pieces.h"
#include "algorithms/patterns_butterfly.h"

static unsigned slot_hash(int a, int e, int cap) {
    uint64_t k = (uint64_t)(uint32_t)a << 32 | (uint32_t)e;
    k *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(k >> 32) & (unsigned)(cap - 1);
}

/* The index slot of node (a, e): where it is, or the empty slot where it would go. */
static int index_slot(const cp_state *st, int a, int e) {
    unsigned i = slot_hash(a, e, st->index_cap);
    while (st->index[i]) {
        const cp_node *n = &st->held[st->index[i] - 1];
        if (n->a == a && n->e == e)
            break;
        i = (i + 1) & (unsigned)(st->index_cap - 1);
    }
    return (int)i;
}

static int find(const cp_state *st, int a, int e) {
    return st->index_cap ? st->index[index_slot(st, a, e)] - 1 : -1;
}

/* Doubles the index (rehashing every held node); false when out of memory. */
static bool grow_index(cp_state *st) {
    int cap = st->index_cap ? 2 * st->index_cap : 64;
    int *old = st->index;
    st->index = calloc((size_t)cap, sizeof *st->index);
    if (!st->index) {
        st->index = old;
        st->s->error = COLLIE_ERR_NOMEM;
        return false;
    }
    free(old);
    st->index_cap = cap;
    for (int h = 0; h < st->nheld; h++)
        st->index[index_slot(st, st->held[h].a, st->held[h].e)] = h + 1;
    return true;
}

static bool add(cp_state *st, int a, int e, int slot) {
    if (st->nheld == st->cap) {
        int cap = st->cap ? 2 * st->cap : 16;
        cp_node *h = realloc(st->held, (size_t)cap * sizeof *h);
        int *ready = realloc(st->ready, (size_t)cap * sizeof *ready);
        if (h)
            st->held = h;
        if (ready)
            st->ready = ready;
        if (!h || !ready) {
            st->s->error = COLLIE_ERR_NOMEM;
            return false;
        }
        st->cap = cap;
    }
    if (2 * (st->nheld + 1) > st->index_cap && !grow_index(st))
        return false;
    cp_node n = { a, e, slot, -1, -1, -1 };
    pbf_node_parent(a, e, st->a->size, &n.pa, &n.mid, &n.pe);
    int h = st->nheld;
    st->held[st->nheld++] = n;
    st->index[index_slot(st, a, e)] = st->nheld;
    if (n.pa < 0 || find(st, n.pa, n.pe) >= 0)
        return true;
    int sibling = n.a == n.pa ? find(st, n.mid, n.pe) : find(st, n.pa, n.mid);
    if (sibling >= 0)
        st->ready[st->nready++] = n.a == n.pa ? h : sibling;
    return true;
}

static sched_ref ref_of(const cp_state *st, int slot) {
    if (slot < 0)
        return sched_at(SBUF_SEND, 0);
    return sched_at(SBUF_TMP, (uint64_t)slot * st->a->bytes);
}

static int new_slot(cp_state *st) {
    int slot = st->nslots++;
    sched_need_tmp(st->s, (uint64_t)st->nslots * st->a->bytes);
    return slot;
}

bool cp_init(cp_state *st, collie_schedule *s, const collie_coll_args *a) {
    *st = (cp_state){ .s = s, .a = a };
    return add(st, a->rank, a->rank + 1, -1);
}

void cp_free(cp_state *st) {
    free(st->held);
    free(st->index);
    free(st->ready);
    free(st->sends);
    free(st->recvs);
    free(st->send_slots);
    *st = (cp_state){ .s = st->s, .a = st->a };
}

/* Room for `need` elements of `elem` bytes in *v (capacity *cap, doubled); false (and the
 * schedule's error set) when out of memory. */
static bool reserve(cp_state *st, void **v, int *cap, int need, size_t elem) {
    if (need <= *cap)
        return true;
    int c = *cap ? 2 * *cap : 64;
    while (c < need)
        c *= 2;
    void *grown = realloc(*v, (size_t)c * elem);
    if (!grown) {
        st->s->error = COLLIE_ERR_NOMEM;
        return false;
    }
    *v = grown;
    *cap = c;
    return true;
}

void cp_send(cp_state *st, int peer, int first, int len) {
    if (st->nrecvs > 0) {
        st->s->error = COLLIE_ERR_INTERNAL;       /* a builder bug: it could send a piece */
        return;                                   /* that only arrives in this round */
    }
    if (!reserve(st, (void **)&st->sends, &st->cap_sends, st->nsends + 1, sizeof *st->sends))
        return;
    cp_transfer *t = &st->sends[st->nsends++];
    *t = (cp_transfer){ .peer = peer, .first = st->nsend_slots };
    pbf_walk w = pbf_walk_begin(first, len, st->a->size);
    int a, e;
    while (pbf_walk_next(&w, &a, &e)) {
        int h = find(st, a, e);
        if (h < 0) {
            st->s->error = COLLIE_ERR_INTERNAL;   /* a builder bug: sending what it lacks */
            return;
        }
        if (!reserve(st, (void **)&st->send_slots, &st->cap_send_slots, st->nsend_slots + 1,
                     sizeof *st->send_slots))
            return;
        st->send_slots[st->nsend_slots++] = st->held[h].slot;
        t->count++;
    }
}

/* A piece already held (dissemination's overlap) still arrives: it lands in a slot of
 * its own and is dropped — its value is the held one. */
void cp_recv(cp_state *st, int peer, int first, int len) {
    if (!reserve(st, (void **)&st->recvs, &st->cap_recvs, st->nrecvs + 1, sizeof *st->recvs))
        return;
    cp_transfer *t = &st->recvs[st->nrecvs++];
    *t = (cp_transfer){ .peer = peer, .first = st->nslots };
    pbf_walk w = pbf_walk_begin(first, len, st->a->size);
    int a, e;
    while (pbf_walk_next(&w, &a, &e)) {
        int slot = new_slot(st);                  /* consecutive: nothing else allocates */
        t->count++;
        if (find(st, a, e) < 0 && !add(st, a, e, slot))
            return;
    }
}

/* Where a send's message starts: its piece when it has one, its pieces' first slot when
 * they are consecutive in TMP, else new consecutive slots they are copied to (in the
 * current round). */
bool cp_slots_consecutive(const int *slots, int n) {
    if (n == 1)
        return true;
    for (int i = 0; i < n; i++)
        if (slots[i] < 0 || (i > 0 && slots[i] != slots[i - 1] + 1))
            return false;
    return true;
}

static int gather(cp_state *st, const cp_transfer *t) {
    const int *slots = &st->send_slots[t->first];
    if (cp_slots_consecutive(slots, t->count))
        return slots[0];
    int first = st->nslots;
    for (int i = 0; i < t->count; i++)
        sched_copy(st->s, ref_of(st, new_slot(st)), ref_of(st, slots[i]), st->a->bytes);
    return first;
}

/* Short vectors: a round of gathering copies (dropped when empty), then one PUT and one
 * receive per queued range. */
static void emit_packed(cp_state *st) {
    sched_round_begin(st->s);
    for (int i = 0; i < st->nsends; i++)
        st->sends[i].from = gather(st, &st->sends[i]);
    sched_round_begin(st->s);
    uint64_t n = st->a->bytes;
    for (int i = 0; i < st->nsends; i++)
        sched_put(st->s, st->sends[i].peer, ref_of(st, st->sends[i].from),
                  (uint64_t)st->sends[i].count * n);
    for (int i = 0; i < st->nrecvs; i++)
        sched_recv(st->s, st->recvs[i].peer, ref_of(st, st->recvs[i].first),
                   (uint64_t)st->recvs[i].count * n);
}

/* Long vectors: one PUT and one receive per piece. */
static void emit_per_piece(cp_state *st) {
    sched_round_begin(st->s);
    for (int i = 0; i < st->nsends; i++) {
        const cp_transfer *t = &st->sends[i];
        for (int j = 0; j < t->count; j++)
            sched_put(st->s, t->peer, ref_of(st, st->send_slots[t->first + j]), st->a->bytes);
    }
    for (int i = 0; i < st->nrecvs; i++) {
        const cp_transfer *t = &st->recvs[i];
        for (int j = 0; j < t->count; j++)
            sched_recv(st->s, t->peer, ref_of(st, t->first + j), st->a->bytes);
    }
}

void cp_exchange(cp_state *st) {
    if (st->a->bytes <= CP_PACK_MAX_BYTES)
        emit_packed(st);
    else
        emit_per_piece(st);
    st->nsends = st->nrecvs = st->nsend_slots = 0;
}

static void merge_into(cp_state *st, int left, int right, sched_ref dst) {
    sched_ref srcs[2] = { ref_of(st, st->held[left].slot), ref_of(st, st->held[right].slot) };
    sched_reduce(st->s, dst, srcs, 2, st->a->bytes);
}

static void sort_ints(int *v, int n) {              /* insertion sort: n is small */
    for (int i = 1; i < n; i++) {
        int x = v[i], j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* One local round: the parent of every pair of siblings held before it whose parent is
 * not held, in the order the left children were added; false if none.  The root gets a
 * round of its own (it writes RECV, which may alias the input): when other parents come
 * first it waits for the next round.  Pairs completed by this round's parents stay in
 * st->ready for the next one. */
static bool merge_round(cp_state *st) {
    int n = st->nready, nmerged = 0, kept = 0;
    sort_ints(st->ready, n);
    sched_round_begin(st->s);
    for (int j = 0; j < n; j++) {
        int i = st->ready[j];
        const cp_node *left = &st->held[i];
        int pa = left->pa, mid = left->mid, pe = left->pe;
        if (find(st, pa, pe) >= 0)
            continue;                               /* received meanwhile */
        bool root = pa == 0 && pe == st->a->size;
        if (root && nmerged > 0) {
            st->ready[kept++] = i;
            continue;
        }
        int right = find(st, mid, pe);
        if (root) {
            merge_into(st, i, right, sched_at(SBUF_RECV, 0));
            st->done = true;
            return true;
        }
        int slot = new_slot(st);
        merge_into(st, i, right, ref_of(st, slot));
        if (!add(st, pa, pe, slot))
            return false;
        nmerged++;
    }
    for (int j = n; j < st->nready; j++)            /* completed by this round's parents */
        st->ready[kept++] = st->ready[j];
    st->nready = kept;
    return nmerged > 0;
}

void cp_merge(cp_state *st) {
    while (!st->done && st->nready > 0 && merge_round(st)) {
    }
}

void cp_finish_single(cp_state *st) {
    sched_copy(st->s, sched_at(SBUF_RECV, 0), sched_at(SBUF_SEND, 0), st->a->bytes);
    st->done = true;
}
