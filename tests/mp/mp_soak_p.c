/*
 * mp_soak_p.c — persistent requests in mp_soak's sequence (`persistent`): one per hot
 * (collective, count) pair, made at the start on the world or its half in the same order
 * on every rank (collie_*_init, their buffers fixed); at about one step in eight a run of
 * 1–4 of them is started, each rank in an order of its own, with new input written before
 * each start, then waited for in another order of its own and checked.  Persistent
 * requests are matched by initialization order, so the ranks' different start orders
 * must not matter; blocking and split-phase calls of the sequence run between the runs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mp_soak.h"

static int init_request(call *c) {
    call_args a = soak_args(c);
    collie_request_t **r = &c->req;
    switch (c->coll) {
    case C_ALLREDUCE: return collie_allreduce_init(a.t, a.sb, a.rb, a.n, a.ty, a.op, r);
    case C_REDUCE: return collie_reduce_init(a.t, a.sb, a.rb, a.n, a.ty, a.op, c->root, r);
    case C_BCAST: return collie_bcast_init(a.t, a.rb, a.n, a.ty, c->root, r);
    case C_BARRIER: return collie_barrier_init(a.t, r);
    case C_ALLGATHER: return collie_allgather_init(a.t, a.sb, a.rb, a.n, a.ty, r);
    case C_RSB: return collie_reduce_scatter_block_init(a.t, a.sb, a.rb, a.n, a.ty, a.op, r);
    case C_ALLTOALL: return collie_alltoall_init(a.t, a.sb, a.rb, a.n, a.ty, r);
    case C_GATHER: return collie_gather_init(a.t, a.sb, a.rb, a.n, a.ty, c->root, r);
    case C_SCATTER: return collie_scatter_init(a.t, a.sb, a.rb, a.n, a.ty, c->root, r);
    case C_SCAN: return collie_scan_init(a.t, a.sb, a.rb, a.n, a.ty, a.op, r);
    default: return collie_exscan_init(a.t, a.sb, a.rb, a.n, a.ty, a.op, r);
    }
}

void pers_begin(pers_set *ps, const shape *hot, collie_team_t *world, collie_team_t *half) {
    ps->n = HOT;
    for (int h = 0; h < HOT; h++) {
        call *c = &ps->pc[h];
        int at = -1000 - h;   /* the draws of request h */
        *c = (call){ 0 };
        c->step = at;
        c->sub = half && draw(at, 6) % 2 == 0;
        c->team = c->sub ? half : world;
        c->rank = collie_rank(c->team);
        c->size = collie_size(c->team);
        c->coll = hot[h].coll;
        size_t most = MAX_BYTES_PER_RANK / 8 / (size_t)c->size;
        c->count = hot[h].count < most ? hot[h].count : most;
        c->op = (int)(draw(at, 4) % O_COUNT);
        c->root = soak_rooted(c->coll) ? (int)(draw(at, 5) % (uint64_t)c->size) : 0;
        c->in_place = soak_in_place_allowed(c) &&
                      (soak_rooted(c->coll) ? draw_mine(at, 7) : draw(at, 7)) % 3 == 0;
        c->persistent = true;
        soak_prepare(c);
        soak_must(init_request(c), c, "making the persistent request");
    }
}

/* order[0..k) = 0..k-1 shuffled by this rank's draws `what`. */
static void own_order(int *order, int k, int step, int what) {
    for (int i = 0; i < k; i++)
        order[i] = i;
    for (int i = k - 1; i > 0; i--) {
        int j = (int)(draw_mine(step, what + i) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

bool pers_step(pers_set *ps, int step) {
    if (ps->n == 0 || draw(step, 13) % 8 != 0)
        return false;
    int k = 1 + (int)(draw(step, 14) % HOT), first = (int)(draw(step, 15) % HOT);
    int start[HOT], wait[HOT];
    own_order(start, k, step, 40);
    own_order(wait, k, step, 50);
    for (int i = 0; i < k; i++) {
        call *c = &ps->pc[(first + start[i]) % HOT];
        c->step = step;   /* new input, and what it must give */
        soak_fill(c);
        soak_must(collie_start(c->req), c, "collie_start");
    }
    for (int i = 0; i < k; i++) {
        call *c = &ps->pc[(first + wait[i]) % HOT];
        soak_must(collie_wait(c->req), c, "collie_wait (persistent)");
    }
    for (int i = 0; i < k; i++)
        soak_check(&ps->pc[(first + i) % HOT]);
    return true;
}

void pers_end(pers_set *ps) {
    for (int h = 0; h < ps->n; h++)
        soak_release(&ps->pc[h]);
    ps->n = 0;
}
