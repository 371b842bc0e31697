/*
 * test_threads.c — threads and teams (issue 15, item 3), in process on the loop transport:
 *   - four threads, each driving its own team of 4 virtual ranks (allreduce with sum and
 *     max, a user op, bcast with rotating roots, collie_alloc buffers), at once: every
 *     result exact — calls on different teams are safe;
 *   - a thread inside collie_wait on a team while another thread calls into the same team
 *     (collie_test, a collective, collie_start): COLLIE_ERR_ARG naming the collision, the
 *     team stays usable and the waiting call's result is exact.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collie.h"
#include "core/internal.h"
#include "transport/transport.h"

#define P 4
#define THREADS 4
#define ITERS 150

typedef struct world {
    collie_transport *tps[P];
    collie_team_t *teams[P];
} world;

static int make_world(world *w) {
    if (collie_loop_create(P, w->tps))
        return -1;
    for (int r = 0; r < P; r++)
        if (collie_team_create(w->tps[r], &w->teams[r]))
            return -1;
    return 0;
}

static void free_world(world *w) {
    for (int r = 0; r < P; r++)
        collie_team_destroy(w->teams[r]);
}

/* Drives every rank's request until all are done; false on an error. */
static bool drive(collie_request_t **reqs) {
    bool done[P] = { false };
    for (int left = P; left;) {
        for (int r = 0; r < P; r++) {
            if (done[r])
                continue;
            int st = collie_test(reqs[r], 0);
            if (st < 0)
                return false;
            if (st == COLLIE_OK) {
                done[r] = true;
                left--;
            }
        }
    }
    for (int r = 0; r < P; r++)
        collie_request_free(reqs[r]);
    return true;
}

static void xor_op(const void *in, void *inout, size_t count, collie_dtype_t dt, void *ctx) {
    (void)dt;
    (void)ctx;
    for (size_t i = 0; i < count; i++)
        ((uint64_t *)inout)[i] ^= ((const uint64_t *)in)[i];
}

typedef struct job {
    int id;
    long wrong, errors;
} job;

static void one_allreduce(world *w, job *j, int it, size_t n, collie_op_t op, int kind) {
    int64_t *in[P], *out[P];
    collie_request_t *reqs[P];
    for (int r = 0; r < P; r++) {
        in[r] = collie_alloc(w->teams[r], n * 8);
        out[r] = malloc(n * 8);
        for (size_t i = 0; i < n; i++)
            in[r][i] = (int64_t)(i * 3 + (size_t)r * 1000 + (size_t)it * 7 + (size_t)j->id * 100000);
        if (collie_iallreduce(w->teams[r], in[r], out[r], n, COLLIE_INT64, op, &reqs[r]))
            j->errors++;
    }
    if (!drive(reqs))
        j->errors++;
    for (size_t i = 0; i < n; i++) {
        int64_t want = kind == 0 ? 0 : kind == 1 ? INT64_MIN : 0;
        for (int r = 0; r < P; r++) {
            int64_t v = (int64_t)(i * 3 + (size_t)r * 1000 + (size_t)it * 7 + (size_t)j->id * 100000);
            want = kind == 0 ? want + v : kind == 1 ? (v > want ? v : want) : (int64_t)((uint64_t)want ^ (uint64_t)v);
        }
        for (int r = 0; r < P; r++)
            j->wrong += out[r][i] != want;
    }
    for (int r = 0; r < P; r++) {
        collie_free(w->teams[r], in[r]);
        free(out[r]);
    }
}

static void one_bcast(world *w, job *j, int it, size_t n) {
    int root = it % P;
    uint8_t *buf[P];
    collie_request_t *reqs[P];
    for (int r = 0; r < P; r++) {
        buf[r] = malloc(n);
        for (size_t i = 0; i < n; i++)
            buf[r][i] = (uint8_t)(r == root ? i * 5 + (size_t)it + (size_t)j->id : 0xEE);
        if (collie_ibcast(w->teams[r], buf[r], n, COLLIE_UINT8, root, &reqs[r]))
            j->errors++;
    }
    if (!drive(reqs))
        j->errors++;
    for (int r = 0; r < P; r++) {
        for (size_t i = 0; i < n; i++)
            j->wrong += buf[r][i] != (uint8_t)(i * 5 + (size_t)it + (size_t)j->id);
        free(buf[r]);
    }
}

static void *run_job(void *arg) {
    job *j = arg;
    world w;
    if (make_world(&w)) {
        j->errors++;
        return NULL;
    }
    collie_op_t user;
    collie_op_create(xor_op, NULL, COLLIE_OP_COMMUTATIVE, &user);
    static const size_t sizes[] = { 1, 100, 5000 };
    for (int it = 0; it < ITERS; it++) {
        size_t n = sizes[(it + j->id) % 3];
        one_allreduce(&w, j, it, n, it % 3 == 0 ? COLLIE_SUM : it % 3 == 1 ? COLLIE_MAX : user, it % 3);
        one_bcast(&w, j, it, n * 8);
    }
    collie_op_free(user);
    free_world(&w);
    return NULL;
}

static void test_different_teams(void) {
    pthread_t t[THREADS];
    job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){ i, 0, 0 };
        pthread_create(&t[i], NULL, run_job, &jobs[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        check(jobs[i].errors == 0, "thread %d: %ld calls failed", i, jobs[i].errors);
        check(jobs[i].wrong == 0, "thread %d: %ld wrong result elements", i, jobs[i].wrong);
    }
}

/* ---- the collision ------------------------------------------------------------------------ */

typedef struct collision {
    world w;
    collie_request_t *reqs[P];
    int64_t in[P], out[P];
    atomic_int inside;     /* 1 while thread A waits on rank 0's team */
    int wait_status;
} collision;

static void *waiter(void *arg) {
    collision *c = arg;
    atomic_store(&c->inside, 1);
    c->wait_status = collie_wait(c->reqs[0]);
    atomic_store(&c->inside, 2);
    return NULL;
}

/* Rank 0 of a fresh loop world (serial: made as at SINGLE) starts an allreduce only it
 * calls, so that its wait cannot finish; thread *a runs `body` on it and is inside collie
 * (20 ms after it said so) when this returns. */
static void start_collision(collision *c, bool serial, void *(*body)(void *), pthread_t *a) {
    memset(c, 0, sizeof *c);
    collie_set_serial_calls(serial);
    check(make_world(&c->w) == 0, "loop world");
    collie_set_serial_calls(false);
    check(c->w.teams[0]->serial_entry == serial, "teams made at SINGLE are serial, others not");
    for (int r = 0; r < P; r++)
        c->in[r] = r + 1;
    check(collie_iallreduce(c->w.teams[0], &c->in[0], &c->out[0], 1, COLLIE_INT64, COLLIE_SUM,
                            &c->reqs[0]) == COLLIE_OK, "iallreduce rank 0");
    pthread_create(a, NULL, body, c);
    while (atomic_load(&c->inside) == 0)
        sched_yield();
    usleep(20000);
}

static void test_same_team_collision(void) {
    collision c;
    pthread_t a;
    start_collision(&c, false, waiter, &a);   /* thread A is inside collie_wait on team 0 */
    int st = collie_test(c.reqs[0], 0);
    check(st == COLLIE_ERR_ARG && strstr(collie_last_error(), "another thread is inside collie_test"),
          "collie_test on a team another thread is in: %d (%s)", st, collie_last_error());
    int64_t x = 5, y = 0;
    st = collie_allreduce(c.w.teams[0], &x, &y, 1, COLLIE_INT64, COLLIE_SUM);
    check(st == COLLIE_ERR_ARG && strstr(collie_last_error(), "calls on one team must not overlap"),
          "collie_allreduce on a team another thread is in: %d (%s)", st, collie_last_error());
    collie_request_t *other = NULL;
    st = collie_ibarrier(c.w.teams[0], &other);
    check(st == COLLIE_ERR_ARG && other == NULL, "collie_ibarrier on a busy team: %d", st);
    check(atomic_load(&c.inside) == 1, "thread A left collie_wait before the others called");
    /* Ranks 1..3 are other teams: this thread may call and drive them while A waits on
     * team 0. */
    for (int r = 1; r < P; r++)
        check(collie_iallreduce(c.w.teams[r], &c.in[r], &c.out[r], 1, COLLIE_INT64, COLLIE_SUM,
                                &c.reqs[r]) == COLLIE_OK, "iallreduce rank %d", r);
    for (bool left = true; left;) {
        left = false;
        for (int r = 1; r < P; r++)
            if (c.reqs[r] && collie_test(c.reqs[r], 0) == COLLIE_TIMEOUT)
                left = true;
    }
    pthread_join(a, NULL);
    check(c.wait_status == COLLIE_OK, "the waiting thread's allreduce: %d", c.wait_status);
    for (int r = 0; r < P; r++)
        check(c.out[r] == 10, "rank %d: sum %lld, want 10", r, (long long)c.out[r]);
    for (int r = 0; r < P; r++)
        collie_request_free(c.reqs[r]);
    /* The team is still usable afterwards, from this thread. */
    collie_request_t *reqs[P];
    for (int r = 0; r < P; r++)
        check(collie_iallreduce(c.w.teams[r], &c.in[r], &c.out[r], 1, COLLIE_INT64, COLLIE_MAX,
                                &reqs[r]) == COLLIE_OK, "iallreduce after the collision");
    check(drive(reqs), "allreduce after the collision");
    for (int r = 0; r < P; r++)
        check(c.out[r] == 4, "rank %d after the collision: max %lld, want 4", r, (long long)c.out[r]);
    free_world(&c.w);
}

/* Teams made at SINGLE / FUNNELED (collie_set_serial_calls) take their owner word with a
 * plain load and store: a second thread that finds one inside still gets the error (here
 * the first has been inside for 20 ms), and the team works on afterwards.  Only one thread
 * calls at a time otherwise: the waiter's collie_test(400 ms) is over before this thread
 * drives the others. */
static void *timed_waiter(void *arg) {
    collision *c = arg;
    atomic_store(&c->inside, 1);
    c->wait_status = collie_test(c->reqs[0], 400);
    atomic_store(&c->inside, 2);
    return NULL;
}

static void test_serial_collision(void) {
    collision c;
    pthread_t a;
    start_collision(&c, true, timed_waiter, &a);
    check(!collie_serial_calls(), "the serial flag is off again after the teams were made");
    int st = collie_test(c.reqs[0], 0);
    check(st == COLLIE_ERR_ARG && strstr(collie_last_error(), "another thread is inside collie_test"),
          "serial team: collie_test while another thread is in: %d (%s)", st, collie_last_error());
    int64_t x = 5, y = 0;
    st = collie_allreduce(c.w.teams[0], &x, &y, 1, COLLIE_INT64, COLLIE_SUM);
    check(st == COLLIE_ERR_ARG && strstr(collie_last_error(), "calls on one team must not overlap"),
          "serial team: collie_allreduce while another thread is in: %d (%s)", st, collie_last_error());
    check(atomic_load(&c.inside) == 1, "the waiter left collie_test before its 400 ms");
    pthread_join(a, NULL);
    check(c.wait_status == COLLIE_TIMEOUT, "the waiter's test: %d, want COLLIE_TIMEOUT", c.wait_status);
    for (int r = 1; r < P; r++)
        check(collie_iallreduce(c.w.teams[r], &c.in[r], &c.out[r], 1, COLLIE_INT64, COLLIE_SUM,
                                &c.reqs[r]) == COLLIE_OK, "iallreduce rank %d", r);
    check(drive(c.reqs), "the allreduce after the collision");
    for (int r = 0; r < P; r++)
        check(c.out[r] == 10, "serial team, rank %d: sum %lld, want 10", r, (long long)c.out[r]);
    free_world(&c.w);
}

static void test_levels(void) {
    int provided = -1;
    check(collie_init_thread(7, &provided) == COLLIE_ERR_ARG, "level 7 refused");
    check(collie_init_thread(COLLIE_THREAD_MULTIPLE, &provided) == COLLIE_OK &&
          provided == COLLIE_THREAD_MULTIPLE, "MULTIPLE provided");
    int q = -1;
    check(collie_query_thread(&q) == COLLIE_OK && q == COLLIE_THREAD_MULTIPLE, "query");
    check(collie_finalize() == COLLIE_OK, "finalize");
}

int main(void) {
    test_levels();
    test_same_team_collision();
    test_serial_collision();
    test_different_teams();
    printf("test_threads: %d failures\n", failures);
    return failures ? 1 : 0;
}
