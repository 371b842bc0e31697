/*
 * team_split.c — sub-teams: collie_team_split, collie_team_dup, collie_team_free.
 *
 * Split, with MPI_Comm_split's rules, collective over the parent team:
 *  1. every rank contributes a row (magic and kind, color, key, pid and a per-process
 *     serial, a random nonce) to a P x 5 table, exchanged by one bxor allreduce on the
 *     parent.  The parent's call matching (call_id.c) catches a rank that called another
 *     collective; the magic word catches one whose own allreduce of the same shape met
 *     this exchange, and the kind a rank that called dup while others split.  Every rank
 *     sees the same table, so every rank decides the same.
 *  2. every rank computes its team from the table: the ranks of its color ordered by
 *     (key, parent rank); the first is the new rank 0, whose pid, serial and nonce name
 *     the team's shared-memory segment (unique on the machine, no further exchange).
 *  3. the transport: through the parent's maker when it has one (libcollie_mpi:
 *     PMPI_Comm_split/dup, then the communicator's own transport), else over the parent's
 *     own collectives (team_setup.c: a shm segment per new team, or a team of one).
 *  4. one more allreduce on the parent agrees on success (naming a failed rank); on any
 *     failure every rank destroys what it made, so no rank keeps a half-made team.
 * Then the new team sets up multicast if wanted (collective over the new team).
 *
 * Sub-teams are registered handles (a freed one is refused) and kept in a list that
 * collie_finalize empties.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/base.h"
#include "core/internal.h"
#include "core/mcast_team.h"

#define ROW 5
#define SPLIT_MAGIC 0x7ea35117c0111e00ull
enum { KIND_SPLIT = 1, KIND_DUP = 2 };
static const char *const kind_fn[] = { "?", "collie_team_split", "collie_team_dup" };

static pthread_mutex_t subs_lock = PTHREAD_MUTEX_INITIALIZER;
static collie_team_t *subs;                 /* live sub-teams, newest first */
static _Atomic uint32_t splits_made;

typedef struct split_plan {
    int kind, color, key;
    int *members;       /* parent ranks of my new team, in its rank order */
    int32_t *pids;      /* their processes */
    int n, my;          /* my < 0: in no team */
    char name[112];     /* the new team's segment (collie-run) */
} split_plan;

/* The last error's message without its "rank N: " prefix (collie_fail adds it again). */
static const char *unprefixed(const char *m) {
    const char *colon = strstr(m, ": ");
    return strncmp(m, "rank ", 5) == 0 && colon ? colon + 2 : m;
}

/* The last error again, with fn and what in front. */
static int wrap(int st, const char *fn, const char *what) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", unprefixed(collie_last_error()));
    return collie_fail(st, "%s: %s: %s", fn, what, msg);
}

static uint64_t nonce(void) {
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = 0;
    return v ^ collie_now_ns();
}

/* Step 1: *out = the table (P rows), every rank's row filled in by its owner. */
static int exchange(collie_team_t *t, const split_plan *p, uint64_t **out) {
    size_t n = (size_t)t->size * ROW;
    uint64_t *tab = calloc(n, sizeof *tab);
    if (!tab)
        return collie_fail(COLLIE_ERR_NOMEM, "%s: cannot allocate the %d-rank table",
                           kind_fn[p->kind], t->size);
    uint64_t *row = tab + (size_t)t->rank * ROW;
    row[0] = SPLIT_MAGIC | (uint64_t)p->kind;
    row[1] = (uint64_t)(int64_t)p->color;
    row[2] = (uint64_t)(int64_t)p->key;
    row[3] = (uint64_t)(uint32_t)getpid() << 32 | atomic_fetch_add(&splits_made, 1);
    row[4] = nonce();
    int st = collie_allreduce(t, COLLIE_IN_PLACE, tab, n, COLLIE_UINT64, COLLIE_BXOR);
    if (st) {
        free(tab);
        return wrap(st, kind_fn[p->kind], "exchanging colors and keys over the parent team");
    }
    *out = tab;
    return COLLIE_OK;
}

/* Every row must come from the same call: the same on every rank (the same table). */
static int check_rows(const collie_team_t *t, const uint64_t *tab, int kind) {
    for (int r = 0; r < t->size; r++) {
        uint64_t w = tab[(size_t)r * ROW];
        int k = (int)(w & 0xff);
        if ((w & ~0xffull) != SPLIT_MAGIC || (k != KIND_SPLIT && k != KIND_DUP))
            return collie_fail(COLLIE_ERR_MISMATCH, "%s: rank %d of the parent team did not call "
                               "collie_team_split or collie_team_dup (its allreduce of %d uint64 "
                               "bxor met this call's exchange)", kind_fn[kind], r, t->size * ROW);
        if (k != kind)
            return collie_fail(COLLIE_ERR_MISMATCH, "%s here, but rank %d of the parent team "
                               "called %s at the same point", kind_fn[kind], r, kind_fn[k]);
    }
    return COLLIE_OK;
}

typedef struct member_key {
    int64_t key;
    int rank;
} member_key;

static int by_key(const void *a, const void *b) {
    const member_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Step 2: my team's members in order, and its segment's name. */
static int plan_members(const collie_team_t *t, const uint64_t *tab, split_plan *p) {
    p->my = -1;
    if (p->color < 0)
        return COLLIE_OK;
    member_key *m = malloc((size_t)t->size * sizeof *m);
    p->members = malloc((size_t)t->size * sizeof *p->members);
    p->pids = malloc((size_t)t->size * sizeof *p->pids);
    if (!m || !p->members || !p->pids) {
        free(m);
        return collie_fail(COLLIE_ERR_NOMEM, "%s: cannot allocate the member list",
                           kind_fn[p->kind]);
    }
    for (int r = 0; r < t->size; r++)
        if ((int64_t)tab[(size_t)r * ROW + 1] == p->color)
            m[p->n++] = (member_key){ (int64_t)tab[(size_t)r * ROW + 2], r };
    qsort(m, (size_t)p->n, sizeof *m, by_key);
    for (int i = 0; i < p->n; i++) {
        p->members[i] = m[i].rank;
        p->pids[i] = (int32_t)(tab[(size_t)m[i].rank * ROW + 3] >> 32);
        if (m[i].rank == t->rank)
            p->my = i;
    }
    const uint64_t *lead = tab + (size_t)m[0].rank * ROW;
    const char *job = getenv("COLLIE_JOB");
    snprintf(p->name, sizeof p->name, "%.48s-t%x-%x-%llx", job && *job ? job : "team",
             (unsigned)(lead[3] >> 32), (unsigned)(uint32_t)lead[3],
             (unsigned long long)(lead[4] & 0xffffffffffull));
    free(m);
    return COLLIE_OK;
}

/* Step 4: the worst status over the parent; a failure elsewhere names the first failed
 * rank.  The parent's own failure is returned as it is. */
static int agree_all(collie_team_t *t, int st, const char *fn) {
    char mine[512] = "";
    if (st)   /* this rank's own message is the one to keep */
        snprintf(mine, sizeof mine, "%s", unprefixed(collie_last_error()));
    int32_t v[2] = { st, st ? t->rank : INT32_MAX }, r[2] = { 0, 0 };
    int rs = collie_allreduce(t, v, r, 2, COLLIE_INT32, COLLIE_MIN);
    if (st)
        return collie_fail(st, "%s", mine);
    if (rs)
        return wrap(rs, fn, "agreeing on the new teams over the parent team");
    if (r[0] == 0)
        return COLLIE_OK;
    return collie_fail(r[0], "%s: rank %d of the parent team failed to set up its new team "
                       "(%s; its own message says why)", fn, r[1], collie_strerror(r[0]));
}

static void release_team(collie_team_t *nt, const collie_team_maker *maker) {
    void *ctx = nt->maker_ctx;
    collie_team_destroy(nt);
    if (ctx && maker && maker->free_ctx)
        maker->free_ctx(ctx);
}

/* Step 3 and the new team: *out (NULL for no team) or an error, the same on every rank. */
static int make_team(collie_team_t *t, split_plan *p, int st, collie_team_t **out) {
    const char *fn = kind_fn[p->kind];
    collie_transport *tp = NULL;
    void *ctx = NULL;
    if (t->maker) {   /* the same MPI call on every rank, whatever failed here */
        int ms = t->maker->split(t->maker_ctx, p->color, p->key, p->kind == KIND_DUP, &tp, &ctx);
        st = st ? st : ms;
    } else {
        collie_subteam_spec s = { p->members, p->pids, p->n, st ? -1 : p->my, p->name, st };
        st = collie_subteam_transport(t, &s, &tp);
    }
    collie_team_t *nt = NULL;
    if (!st && tp)
        st = collie_team_create(tp, &nt);
    if (tp && !nt) {
        tp->ops->destroy(tp);
        if (ctx && t->maker->free_ctx)
            t->maker->free_ctx(ctx);
    }
    if (nt) {
        nt->origin = COLLIE_TEAM_SUB;
        nt->maker = ctx ? t->maker : NULL;
        nt->maker_ctx = ctx;
    }
    st = agree_all(t, st, fn);
    if (!st && nt && (st = collie_mcast_team_setup(nt)) != COLLIE_OK)
        st = wrap(st, fn, "setting up multicast on the new team");
    if (st && nt)
        release_team(nt, nt->maker);
    *out = st ? NULL : nt;
    return st;
}

static void add_sub(collie_team_t *nt) {
    pthread_mutex_lock(&subs_lock);
    nt->next_sub = subs;
    subs = nt;
    pthread_mutex_unlock(&subs_lock);
}

void collie_teams_each(void (*fn)(collie_team_t *team, void *ctx), void *ctx) {
    pthread_mutex_lock(&subs_lock);
    if (collie_world())
        fn(collie_world(), ctx);
    for (collie_team_t *t = subs; t; t = t->next_sub)
        fn(t, ctx);
    pthread_mutex_unlock(&subs_lock);
}

/* Takes nt off the list; false when it is not there (freed by another thread). */
static bool remove_sub(collie_team_t *nt) {
    bool found = false;
    pthread_mutex_lock(&subs_lock);
    for (collie_team_t **pp = &subs; *pp; pp = &(*pp)->next_sub)
        if (*pp == nt) {
            *pp = nt->next_sub;
            found = true;
            break;
        }
    pthread_mutex_unlock(&subs_lock);
    return found;
}

static int split_team(collie_team_t *t, int kind, int color, int key, collie_team_t **newteam) {
    const char *fn = kind_fn[kind];
    if (!newteam)
        return collie_fail(COLLIE_ERR_ARG, "%s: newteam (output) is NULL", fn);
    *newteam = NULL;
    int st = collie_team_check(t, fn);
    if (st)
        return st;
    if (t->failed)
        return collie_fail(t->failed, "%s: the team failed earlier: %s", fn, t->fail_msg);
    if (t->size > 1 && !t->maker && strcmp(t->tp->ops->name, "shm") != 0)
        return collie_fail(COLLIE_ERR_UNSUPPORTED, "%s: a team over the %s transport of %d ranks "
                           "cannot be split (only collie-run's shared memory, MPI communicators "
                           "and teams of one)", fn, t->tp->ops->name, t->size);
    if ((st = collie_team_enter(t, fn)) != COLLIE_OK)
        return st;
    split_plan p = { .kind = kind, .color = color < 0 ? COLLIE_UNDEFINED : color, .key = key };
    uint64_t *tab = NULL;
    st = exchange(t, &p, &tab);
    if (!st)
        st = check_rows(t, tab, kind);
    if (!st) {   /* from here on every rank takes part in the same collectives */
        int local = plan_members(t, tab, &p);
        st = make_team(t, &p, local, newteam);
    }
    free(tab);
    free(p.members);
    free(p.pids);
    if (!st && *newteam)
        add_sub(*newteam);
    collie_team_leave(t);
    return st;
}

int collie_team_split(collie_team_t *team, int color, int key, collie_team_t **newteam) {
    return split_team(team, KIND_SPLIT, color, key, newteam);
}

int collie_team_dup(collie_team_t *team, collie_team_t **newteam) {
    int rank = collie_handle_valid(team, COLLIE_HANDLE_TEAM) ? team->rank : 0;
    return split_team(team, KIND_DUP, 0, rank, newteam);
}

/* Why t may not be freed by collie_team_free, or COLLIE_OK. */
static int check_freeable(collie_team_t *t) {
    if (t->origin == COLLIE_TEAM_OF_COMM)
        return collie_fail(COLLIE_ERR_ARG, "collie_team_free: %p is the team of an MPI "
                           "communicator (MPI_Comm_free frees it)", (void *)t);
    if (t->origin != COLLIE_TEAM_SUB)
        return collie_fail(COLLIE_ERR_ARG, "collie_team_free: %p is %s (collie_finalize frees "
                           "it); only teams made by collie_team_split or collie_team_dup are "
                           "freed", (void *)t, t == collie_world() ? "the world team" :
                           "a team the library made");
    if (t->head) {
        unsigned n = 0;
        for (const collie_request_t *r = t->head; r; r = r->next)
            n++;
        return collie_fail(COLLIE_ERR_ARG, "collie_team_free: %u collective%s started on the "
                           "team %s still in progress (wait for them and collie_request_free "
                           "them first)", n, n == 1 ? "" : "s", n == 1 ? "is" : "are");
    }
    for (unsigned i = 0; i < sizeof t->cache / sizeof t->cache[0]; i++) {
        collie_request_free(t->cache[i]);   /* the blocking calls' plans: ours to drop */
        t->cache[i] = NULL;
    }
    if (t->nrequests)
        return collie_fail(COLLIE_ERR_ARG, "collie_team_free: %u request%s made on the team "
                           "(split-phase or persistent) %s not freed yet (collie_request_free "
                           "them first)", t->nrequests, t->nrequests == 1 ? "" : "s",
                           t->nrequests == 1 ? "is" : "are");
    return COLLIE_OK;
}

int collie_team_free(collie_team_t **team) {
    if (!team)
        return collie_fail(COLLIE_ERR_ARG, "collie_team_free: team (the address of a team "
                           "handle) is NULL");
    collie_team_t *t = *team;
    if (!t)
        return collie_fail(COLLIE_ERR_ARG, "collie_team_free: *team is NULL (freed already? "
                           "collie_team_free sets the handle to NULL)");
    int st = collie_team_check(t, "collie_team_free");
    if (st)
        return st;
    if ((st = collie_team_enter(t, "collie_team_free")) != COLLIE_OK)
        return st;
    st = check_freeable(t);
    collie_team_leave(t);
    if (st)
        return st;
    if (!remove_sub(t))
        return collie_fail(COLLIE_ERR_ARG, "collie_team_free: %p was freed meanwhile by another "
                           "thread", (void *)t);
    release_team(t, t->maker);
    *team = NULL;
    return COLLIE_OK;
}

void collie_subteams_free_all(void) {
    for (;;) {
        pthread_mutex_lock(&subs_lock);
        collie_team_t *t = subs;
        if (t)
            subs = t->next_sub;
        pthread_mutex_unlock(&subs_lock);
        if (!t)
            return;
        release_team(t, t->maker);
    }
}
