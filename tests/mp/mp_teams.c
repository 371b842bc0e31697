/*
 * mp_teams.c — sub-teams under collie-run (collie_team_split / dup / free; issue 16).
 *
 * Every rank knows every rank's color and key, so it computes the members of its new team
 * here (the reference: same color, ordered by key then parent rank) and checks the new
 * team's rank and size, then every collective on it — allreduce (1, 1000 and 70000
 * elements), reduce, bcast, barrier, a split-phase allreduce left pending across a world
 * allreduce, a persistent allreduce started three times, an allreduce in collie_alloc
 * memory — against sums over the known members' inputs.  Several sub-teams are live at
 * once (by parity, by rank/2 with reversed keys, a dup, a split of a sub-team) and used in
 * turn, interleaved with checked world allreduces; negative colors give no team.  Then
 * misuse (mp_teams_misuse.c) and the frees.
 *
 * Usage: collie-run -n P mp_teams [main|dead|dead_during|against_barrier|persistent_check]   prints "mp_teams MODE P=<P>: passed" at rank 0.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_teams.h"

int mt_rank, mt_size, mt_failures;

void mt_expect_st(int got, int want, const char *what) {
    if (got == want)
        return;
    mt_failures++;
    fprintf(stderr, "FAIL: rank %d: %s: status %d (%s), want %d: %s\n", mt_rank, what, got,
            collie_strerror(got), want, collie_last_error());
}

void mt_expect(bool cond, const char *what) {
    if (cond)
        return;
    mt_failures++;
    fprintf(stderr, "FAIL: rank %d: %s (last error: %s)\n", mt_rank, what, collie_last_error());
}

void mt_expect_msg(const char *part, const char *what) {
    if (strstr(collie_last_error(), part))
        return;
    mt_failures++;
    fprintf(stderr, "FAIL: rank %d: %s: message \"%s\" lacks \"%s\"\n", mt_rank, what,
            collie_last_error(), part);
}

/* Rank r's input (parent = world rank r) at element i of a round. */
static int64_t input(int r, size_t i, int round) {
    return (int64_t)(r + 1) * 1000003 + (int64_t)(i % 1009) * (r % 7 + 1) + round * 17;
}

void mt_world_check(int round) {
    int64_t v[3], want[3] = { 0, 0, 0 };
    for (int i = 0; i < 3; i++)
        v[i] = input(mt_rank, (size_t)i, round + 100);
    for (int r = 0; r < mt_size; r++)
        for (int i = 0; i < 3; i++)
            want[i] += input(r, (size_t)i, round + 100);
    mt_expect_st(collie_allreduce(collie_world(), COLLIE_IN_PLACE, v, 3, COLLIE_INT64, COLLIE_SUM),
                 COLLIE_OK, "world allreduce between sub-team calls");
    mt_expect(!memcmp(v, want, sizeof v), "world allreduce result");
}

/* ---- the reference: members of a split, from every rank's color and key -------------- */

typedef struct split_rule {
    const char *name;
    int (*color)(int r);
    int (*key)(int r);
} split_rule;

static int by_parity(int r) { return r % 2; }
static int by_half(int r) { return r / 2; }
static int key_rank(int r) { return r; }
static int key_reversed(int r) { return -r; }
static int key_zero(int r) { (void)r; return 0; }
static int every_third_out(int r) { return r % 3 == 0 ? (r % 2 ? -5 : COLLIE_UNDEFINED) : 7; }

/* Members (world ranks, in new-rank order) of rank me's team; 0 for no team. */
static int ref_members(const split_rule *s, int me, int *m) {
    if (s->color(me) < 0)
        return 0;
    int n = 0;
    for (int r = 0; r < mt_size; r++) {
        if (s->color(r) != s->color(me))
            continue;
        int j = n++;
        while (j > 0 && (s->key(m[j - 1]) > s->key(r)))   /* stable: equal keys keep rank order */
            m[j] = m[j - 1], j--;
        m[j] = r;
    }
    return n;
}

/* ---- checks of one team against its members -------------------------------------------- */

typedef struct team_ref {
    collie_team_t *team;
    int members[64];
    int n;
    const char *name;
} team_ref;

static void check_sum(team_ref *t, const int64_t *v, size_t n, int round, const char *what) {
    for (size_t i = 0; i < n; i++) {
        int64_t want = 0;
        for (int k = 0; k < t->n; k++)
            want += input(t->members[k], i, round);
        if (v[i] != want) {
            mt_failures++;
            fprintf(stderr, "FAIL: rank %d: %s on team %s (%zu elements, round %d): element %zu "
                    "is %lld, not %lld\n", mt_rank, what, t->name, n, round, i, (long long)v[i],
                    (long long)want);
            return;
        }
    }
}

static void fill(int64_t *v, size_t n, int round) {
    for (size_t i = 0; i < n; i++)
        v[i] = input(mt_rank, i, round);
}

static void check_identity(team_ref *t) {
    int me = -1;
    for (int k = 0; k < t->n; k++)
        if (t->members[k] == mt_rank)
            me = k;
    mt_expect(collie_size(t->team) == t->n, "sub-team size = members of its color");
    mt_expect(collie_rank(t->team) == me, "sub-team rank = place by (key, parent rank)");
}

static void check_rooted(team_ref *t, int64_t *v, size_t n, int round) {
    int root = t->n - 1;
    int64_t *red = calloc(n, sizeof *red);
    fill(v, n, round);
    mt_expect_st(collie_reduce(t->team, v, red, n, COLLIE_INT64, COLLIE_SUM, root), COLLIE_OK, "reduce");
    if (collie_rank(t->team) == root)
        check_sum(t, red, n, round, "reduce");
    for (size_t i = 0; i < n; i++)
        v[i] = collie_rank(t->team) == t->n / 2 ? (int64_t)t->members[t->n / 2] * 7919 + (int64_t)i : -1;
    mt_expect_st(collie_bcast(t->team, v, n, COLLIE_INT64, t->n / 2), COLLIE_OK, "bcast");
    for (size_t i = 0; i < n; i++)
        if (v[i] != (int64_t)t->members[t->n / 2] * 7919 + (int64_t)i) {
            mt_expect(false, "bcast result = the sub-root's data");
            break;
        }
    mt_expect_st(collie_barrier(t->team), COLLIE_OK, "barrier");
    free(red);
}

/* A split-phase allreduce left pending across a world allreduce, then a persistent one. */
static void check_overlap(team_ref *t, int64_t *v, size_t n, int round) {
    int64_t *out = calloc(n, sizeof *out);
    collie_request_t *req = NULL;
    fill(v, n, round + 1);
    mt_expect_st(collie_iallreduce(t->team, v, out, n, COLLIE_INT64, COLLIE_SUM, &req), COLLIE_OK,
                 "iallreduce");
    mt_world_check(round);
    mt_expect_st(collie_wait(req), COLLIE_OK, "wait for the iallreduce");
    check_sum(t, out, n, round + 1, "iallreduce across a world allreduce");
    collie_request_free(req);
    mt_expect_st(collie_allreduce_init(t->team, v, out, n, COLLIE_INT64, COLLIE_SUM, &req),
                 COLLIE_OK, "allreduce_init");
    for (int s = 0; s < 3 && req; s++) {
        fill(v, n, round + 2 + s);
        mt_expect_st(collie_start(req), COLLIE_OK, "start");
        mt_expect_st(collie_wait(req), COLLIE_OK, "wait (persistent)");
        check_sum(t, out, n, round + 2 + s, "persistent allreduce");
    }
    collie_request_free(req);
    free(out);
}

/* Every collective on t (NULL: this rank is in no team; it still makes the world calls). */
static void check_team(team_ref *t, int round) {
    static const size_t counts[] = { 1, 1000, 70000 };
    if (!t->team) {
        mt_world_check(round);
        return;
    }
    check_identity(t);
    int64_t *v = malloc(70000 * sizeof *v);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        fill(v, counts[c], round);
        mt_expect_st(collie_allreduce(t->team, COLLIE_IN_PLACE, v, counts[c], COLLIE_INT64,
                                      COLLIE_SUM), COLLIE_OK, "allreduce");
        check_sum(t, v, counts[c], round, "allreduce");
    }
    check_rooted(t, v, 1000, round);
    check_overlap(t, v, 1000, round);
    int64_t *reg = collie_alloc(t->team, 40000 * sizeof *reg);
    mt_expect(reg != NULL, "collie_alloc on the sub-team");
    if (reg) {
        fill(reg, 40000, round + 9);
        mt_expect_st(collie_allreduce(t->team, COLLIE_IN_PLACE, reg, 40000, COLLIE_INT64,
                                      COLLIE_SUM), COLLIE_OK, "allreduce in collie_alloc memory");
        check_sum(t, reg, 40000, round + 9, "allreduce in collie_alloc memory");
        collie_free(t->team, reg);
    }
    free(v);
}

/* Splits the world by rule into t, checked against the reference. */
static void split_world(const split_rule *s, team_ref *t) {
    t->name = s->name;
    t->n = ref_members(s, mt_rank, t->members);
    mt_expect_st(collie_team_split(collie_world(), s->color(mt_rank), s->key(mt_rank), &t->team),
                 COLLIE_OK, s->name);
    mt_expect((t->team == NULL) == (t->n == 0), "a team exactly when the color is not negative");
}

static void free_team(team_ref *t) {
    if (!t->team)
        return;
    mt_expect_st(collie_team_free(&t->team), COLLIE_OK, "collie_team_free");
    mt_expect(t->team == NULL, "collie_team_free sets the handle to NULL");
}

static void run_main(void) {
    static const split_rule parity = { "parity", by_parity, key_rank };
    static const split_rule half = { "rank/2 reversed", by_half, key_reversed };
    static const split_rule holes = { "negative colors", every_third_out, key_zero };
    team_ref par, hal, hol, dup, sub;
    split_world(&parity, &par);
    check_team(&par, 1);
    split_world(&half, &hal);
    for (int round = 2; round < 6; round++)      /* both live, used in turn */
        check_team(round % 2 ? &par : &hal, round);
    split_world(&holes, &hol);
    check_team(&hol, 6);
    dup = (team_ref){ NULL, { 0 }, mt_size, "dup" };
    for (int r = 0; r < mt_size; r++)
        dup.members[r] = r;
    mt_expect_st(collie_team_dup(collie_world(), &dup.team), COLLIE_OK, "collie_team_dup");
    check_team(&dup, 7);
    /* A split of a sub-team: the parity team by its own rank's parity, all keys 0. */
    int pr = par.team ? collie_rank(par.team) : 0;
    sub = (team_ref){ NULL, { 0 }, 0, "parity of parity" };
    for (int k = pr % 2; k < par.n; k += 2)
        sub.members[sub.n++] = par.members[k];
    if (!par.team) {
        mt_expect(false, "the parity team exists");
        return;
    }
    mt_expect_st(collie_team_split(par.team, pr % 2, 0, &sub.team), COLLIE_OK, "split of a sub-team");
    for (int round = 8; round < 12; round++)     /* five teams live, used in turn */
        check_team(round % 4 == 0 ? &sub : round % 4 == 1 ? &dup : round % 4 == 2 ? &hal : &hol,
                   round);
    free_team(&sub);
    free_team(&hal);
    check_team(&par, 12);        /* the others still work after frees */
    free_team(&par);
    free_team(&hol);
    check_team(&dup, 13);
    free_team(&dup);
    mt_world_check(14);
}

/* No sub-team segment is left in /dev/shm (each is unlinked once its ranks attached). */
static void check_no_segments(void) {
    const char *job = getenv("COLLIE_JOB");
    DIR *d = job ? opendir("/dev/shm") : NULL;
    if (!d)
        return;
    char prefix[160];
    snprintf(prefix, sizeof prefix, "collie-%s-t", job);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            mt_failures++;
            fprintf(stderr, "FAIL: rank %d: /dev/shm/%s is left behind\n", mt_rank, e->d_name);
        }
    closedir(d);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "main";
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "FAIL: collie_init: %s\n", collie_last_error());
        return 1;
    }
    collie_team_t *world = collie_world();
    mt_rank = collie_rank(world);
    mt_size = collie_size(world);
    if (mt_size > 64) {
        fprintf(stderr, "mp_teams: at most 64 ranks\n");
        return 2;
    }
    if (strcmp(mode, "dead") == 0)
        return mt_dead(world);
    if (strcmp(mode, "against_barrier") == 0)
        return mt_against_barrier(world);
    if (strcmp(mode, "dead_during") == 0)
        return mt_dead_during(world);
    if (strcmp(mode, "persistent_check") == 0)
        return mt_persistent_check(world);
    run_main();
    mt_misuse(world);
    check_no_segments();
    int all = 0;
    mt_expect_st(collie_allreduce(world, &mt_failures, &all, 1, COLLIE_INT32, COLLIE_SUM),
                 COLLIE_OK, "failure count");
    mt_expect_st(collie_finalize(), COLLIE_OK, "collie_finalize");
    if (mt_rank == 0)
        printf("mp_teams %s P=%d: %s (%d failures)\n", mode, mt_size, all ? "FAILED" : "passed", all);
    return all ? 1 : 0;
}
