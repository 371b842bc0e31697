/*
 * engine.c — the simulator's messages and links (see sim.h for the semantics): issuing
 * PUTs, first-come first-served use of each rank's outgoing and incoming link,
 * uni-/bidirectional Hockney costs and LogGP costs, delivery.
 */
#include <stdlib.h>
#include <string.h>
#include "sim/sim_impl.h"

_Static_assert(sizeof(sim_msg) == 64, "a message is one cache line");

static sim_link *link_of(sim_engine *e, int r) {
    return &e->links[e->sym ? 0 : r];
}

/* Grows the message array (64-byte aligned: one message, one cache line) and, when
 * messages are traced, their issue times. */
static bool grow_msgs(sim_engine *e) {
    int32_t cap = e->capmsgs ? e->capmsgs * 2 : 1024;
    sim_msg *v = NULL;
    if (posix_memalign((void **)&v, 64, (size_t)cap * sizeof *v) != 0)
        return false;
    sim_advise_huge(v, (size_t)cap * sizeof *v);
    if (e->nmsgs)
        memcpy(v, e->msgs, (size_t)e->nmsgs * sizeof *v);
    if (e->c->hooks && e->c->hooks->msg) {
        double *t = realloc(e->issued, (size_t)cap * sizeof *t);
        if (!t) {
            free(v);
            return false;
        }
        e->issued = t;
    }
    free(e->msgs);
    e->msgs = v;
    e->capmsgs = cap;
    return true;
}

/* A free message of sender r: each sender reuses its own (its queue stays close in memory,
 * which keeps the scans of pump_sender cheap at large P). */
static int32_t new_msg(sim_engine *e, int r) {
    sim_rank *rs = sim_rank_of(e, r);
    if (rs->free_msg != SIM_NONE) {
        int32_t id = rs->free_msg;
        rs->free_msg = e->msgs[id].qnext;
        return id;
    }
    if (e->nmsgs == e->capmsgs && !grow_msgs(e))
        return SIM_NONE;
    e->msgs[e->nmsgs].ver = 0;
    return e->nmsgs++;
}

/* ---- lists ------------------------------------------------------------------------------ */

/* Appends message id to a sender's queue; false when out of memory. */
static bool queue_push(sim_engine *e, sim_queue *q, int32_t id) {
    if (q->len == q->cap && q->live < q->len) {        /* close the holes first */
        uint32_t j = 0;
        for (uint32_t i = q->head; i < q->len; i++)
            if (q->v[i].id != SIM_NONE) {
                q->v[j] = q->v[i];
                e->msgs[q->v[j].id].qpos = j;
                j++;
            }
        q->head = 0;
        q->len = j;
    }
    if (q->len == q->cap) {             /* (the old array stays in the arena) */
        uint32_t cap = q->cap ? 2 * q->cap : 16;
        sim_qent *v = sim_arena_alloc(&e->queue_arena, cap * sizeof *v);
        if (!v)
            return false;
        if (q->len)
            memcpy(v, q->v, q->len * sizeof *v);
        q->v = v;
        q->cap = cap;
    }
    q->v[q->len] = (sim_qent){ id, e->msgs[id].to };
    e->msgs[id].qpos = q->len++;
    q->live++;
    return true;
}

/* Takes message g out of its sender's queue (it starts): a hole, skipped from the head. */
static void queue_remove(sim_queue *q, const sim_msg *g) {
    q->v[g->qpos].id = SIM_NONE;
    q->live--;
    while (q->head < q->len && q->v[q->head].id == SIM_NONE)
        q->head++;
    if (q->live == 0)
        q->head = q->len = 0;
}

/* ---- costs ------------------------------------------------------------------------------ */

static double hockney(const sim_model *m, uint64_t bytes, bool bidir) {
    double n = (double)bytes;
    return bidir ? m->alpha + n * m->beta : m->f_alpha * m->alpha + m->f_beta * n * m->beta;
}

/* Times a message starting at g->start (the links' end, the delivery) and pushes its
 * events. */
static bool time_msg(sim_engine *e, int32_t id) {
    sim_msg *g = &e->msgs[id];
    const sim_model *m = e->m;
    double deliver;
    if (m->kind == SIM_LOGGP) {
        double wire = (double)g->bytes * m->G;
        g->end = g->start + (wire > m->g ? wire : m->g);
        deliver = g->start + wire + m->L;
    } else {
        g->end = deliver = g->start + hockney(m, g->bytes, g->bidir);
    }
    if (g->end == deliver)
        return sim_heap_push(&e->heap, g->end, EV_XFER_END, id, g->ver);
    return sim_heap_push(&e->heap, g->end, EV_LINK_FREE, id, g->ver) &&
           sim_heap_push(&e->heap, deliver, EV_DELIVER, id, g->ver);
}

/* Is the reverse of g in transfer now (then both are bidirectional)? */
static int32_t reverse_in_transfer(sim_engine *e, const sim_msg *g, double now) {
    if (e->m->kind != SIM_HOCKNEY)
        return SIM_NONE;
    if (e->sym) {
        long twice = 2L * (long)g->to;
        return twice % e->P == 0 ? -2 : SIM_NONE;   /* its own mirror: bidirectional */
    }
    int32_t rid = link_of(e, g->to)->out_msg;
    if (rid == SIM_NONE || e->msgs[rid].to != g->from || e->msgs[rid].end <= now)
        return SIM_NONE;
    return rid;
}

static bool start_msg(sim_engine *e, int32_t id, double now) {
    sim_msg *g = &e->msgs[id];
    queue_remove(&sim_rank_of(e, g->from)->q, g);
    g->state = MSG_XFER;
    g->start = now;
    link_of(e, g->from)->out_msg = id;
    if (!e->sym)
        link_of(e, g->to)->in_msg = id;
    int32_t rid = reverse_in_transfer(e, g, now);
    g->bidir = rid != SIM_NONE;
    e->res->bidirectional += g->bidir;
    if (rid >= 0 && !e->msgs[rid].bidir) {
        sim_msg *rv = &e->msgs[rid];
        rv->bidir = 1;
        rv->ver++;
        e->res->bidirectional++;
        if (!time_msg(e, rid))
            return sim_fail(e, "out of memory");
    }
    return time_msg(e, id) || sim_fail(e, "out of memory");
}

/* Appends message id to its receiver's wait list. */
static void wait_at_receiver(sim_engine *e, int32_t id) {
    sim_msg *g = &e->msgs[id];
    sim_rank *to = sim_rank_of(e, g->to);
    g->waiting = 1;
    g->wnext = SIM_NONE;
    if (to->w_tail != SIM_NONE)
        e->msgs[to->w_tail].wnext = id;
    else
        to->w_head = id;
    to->w_tail = id;
}

/* The sender's outgoing link is free: start its first waiting message whose receiver's
 * incoming link is free; the others wait at their receivers. */
static bool pump_sender(sim_engine *e, int r, double now) {
    const sim_queue *q = &sim_rank_of(e, r)->q;
    const sim_link *links = link_of(e, r);
    for (uint32_t i = q->head; i < q->len && links->out_msg == SIM_NONE; i++) {
        sim_qent x = q->v[i];
        if (x.id == SIM_NONE)
            continue;
        if (e->sym || e->links[x.to].in_msg == SIM_NONE)
            return start_msg(e, x.id, now);
        if (!e->msgs[x.id].waiting)
            wait_at_receiver(e, x.id);
    }
    return true;
}

/* A message still linked in a receiver's wait list is released when it leaves it. */
static void release_msg(sim_engine *e, int32_t id) {
    sim_msg *g = &e->msgs[id];
    g->state = g->waiting ? MSG_ZOMBIE : MSG_FREE;
    if (g->waiting)
        return;
    sim_rank *from = sim_rank_of(e, g->from);
    g->qnext = from->free_msg;
    from->free_msg = id;
}

/* The receiver's incoming link is free: the messages waiting for it, in order. */
static bool pump_receiver(sim_engine *e, int q, double now) {
    sim_rank *qs = sim_rank_of(e, q);
    const sim_link *links = link_of(e, q);
    while (links->in_msg == SIM_NONE && qs->w_head != SIM_NONE) {
        int32_t id = qs->w_head;
        sim_msg *g = &e->msgs[id];
        qs->w_head = g->wnext;
        if (qs->w_head == SIM_NONE)
            qs->w_tail = SIM_NONE;
        g->waiting = 0;
        if (g->state == MSG_ZOMBIE)
            release_msg(e, id);
        else if (g->state == MSG_PENDING && link_of(e, g->from)->out_msg == SIM_NONE &&
            !start_msg(e, id, now))
            return false;
    }
    return true;
}

bool sim_issue(sim_engine *e, int r, const sim_cop *op, uint32_t opi, double t) {
    int32_t id = new_msg(e, r);
    if (id == SIM_NONE)
        return sim_fail(e, "out of memory");
    sim_msg *g = &e->msgs[id];
    uint32_t ver = g->ver + 1;                  /* never reused: stale events stay stale */
    memset(g, 0, sizeof *g);
    g->ver = ver;
    g->from = r;
    g->to = op->peer;
    g->bytes = op->bytes;
    g->rop = op->u.put.rop;
    g->op = opi;
    g->state = MSG_PENDING;
    g->qnext = g->wnext = SIM_NONE;
    if (e->issued)
        e->issued[id] = t;
    sim_rank_of(e, r)->unfinished++;
    e->res->messages++;
    sim_ready_batch *b = &e->batch;
    if (b->tail != SIM_NONE && b->rank == r && b->t == t && b->seq == e->heap.seq) {
        e->msgs[b->tail].qnext = id;            /* rides on the batch's READY event */
        b->tail = id;
        return true;
    }
    if (!sim_heap_push(&e->heap, t, EV_READY, id, ver))
        return sim_fail(e, "out of memory");
    *b = (sim_ready_batch){ id, r, t, e->heap.seq };
    return true;
}

static uint32_t round_of_op(const sim_csched *s, uint32_t op) {
    uint32_t lo = 0, hi = s->nrounds;               /* the last round starting at or before op */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->round_op[mid] <= op)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void trace_msg(sim_engine *e, int32_t id, double deliver) {
    if (!e->c->hooks || !e->c->hooks->msg)
        return;
    const sim_msg *g = &e->msgs[id];
    const sim_csched *s = sim_rank_of(e, g->from)->s;
    const sim_cop *op = &s->ops[g->op];
    sim_msg_trace t = { g->from, g->to, round_of_op(s, g->op), g->op, g->bytes, op->buf,
                        op->off, e->issued[id], g->start, deliver, g->bidir, g->staged,
                        op->u.put.seq };
    e->c->hooks->msg(e->c->hooks->ctx, &t);
}

static bool link_free(sim_engine *e, int32_t id, double now) {
    sim_msg *g = &e->msgs[id];
    int from_r = g->from, to_r = g->to;
    sim_rank *from = sim_rank_of(e, from_r), *to = sim_rank_of(e, to_r);
    link_of(e, from_r)->out_msg = SIM_NONE;
    if (!e->sym)
        link_of(e, to_r)->in_msg = SIM_NONE;
    g->state = MSG_DONE;
    from->unfinished--;
    if (g->delivered)
        release_msg(e, id);
    sim_rank_check_finish(e, from_r, now);
    /* The freed links take new messages once every link freed at this instant is free
     * (events of one instant run in push order), so ranks in lockstep stay in it. */
    bool pump_from = from->q.live > 0, pump_to = !e->sym && to->w_head != SIM_NONE;
    if ((pump_from && !sim_heap_push(&e->heap, now, EV_PUMP_SEND, from_r, 0)) ||
        (pump_to && !sim_heap_push(&e->heap, now, EV_PUMP_RECV, to_r, 0)))
        return sim_fail(e, "out of memory");
    return true;
}

/* Delivery (in symmetric mode rank 0 receives the mirror image of its own message: its
 * rop says where). */
static bool deliver(sim_engine *e, int32_t id, double now) {
    sim_msg *g = &e->msgs[id];
    trace_msg(e, id, now);
    g->delivered = 1;
    if (!sim_arrive(e, g, now))
        return false;
    if (g->state == MSG_DONE)
        release_msg(e, id);
    return true;
}

bool sim_event_msg(sim_engine *e, const sim_event *ev) {
    if (ev->kind == EV_PUMP_SEND)
        return pump_sender(e, ev->id, ev->t);
    if (ev->kind == EV_PUMP_RECV)
        return pump_receiver(e, ev->id, ev->t);
    sim_msg *g = &e->msgs[ev->id];
    if (ev->ver != g->ver)
        return true;                            /* re-timed as bidirectional */
    if (ev->kind == EV_READY) {
        for (int32_t id = ev->id; id != SIM_NONE; id = e->msgs[id].qnext)
            if (!queue_push(e, &sim_rank_of(e, g->from)->q, id))
                return sim_fail(e, "out of memory");
        return pump_sender(e, g->from, ev->t);
    }
    if (ev->kind == EV_LINK_FREE)
        return link_free(e, ev->id, ev->t);
    if (ev->kind == EV_XFER_END && !link_free(e, ev->id, ev->t))
        return false;
    return deliver(e, ev->id, ev->t);
}
