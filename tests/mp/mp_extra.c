/*
 * mp_extra.c — beyond the blocking sweep: split-phase calls driven by collie_test(req, 0)
 * while the rank does local work, persistent requests restarted with new inputs, several
 * requests in flight on one team completed in reverse order.
 */
#include <stdio.h>
#include <time.h>
#include "mp_common.h"

#define POLL_DEADLINE_S 100.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Local work between polls; returns a value so it is not optimised away. */
static double local_work(int n)
{
    volatile double acc = 0.0;
    for (int i = 1; i <= n; i++)
        acc += 1.0 / i;
    return acc;
}

/* Polls with collie_test(req, 0), overlapping local work; returns the number of polls. */
int mp_wait_request(mp_ctx *c, collie_request_t *req, const char *what)
{
    double deadline = now_s() + POLL_DEADLINE_S, work = 0.0;
    int polls = 0;
    for (;;) {
        int st = collie_test(req, 0);
        polls++;
        if (st == COLLIE_OK)
            break;
        if (st != COLLIE_TIMEOUT)
            mp_die(c, st, what);
        if (now_s() > deadline) {
            mp_fail(c, "%s: not complete after %.0f s of collie_test(req, 0)", what,
                    POLL_DEADLINE_S);
            mp_die(c, COLLIE_TIMEOUT, what);
        }
        work += local_work(200);
    }
    return polls + (work < 0.0);
}

static const mp_type *find_type(collie_dtype_t id, int kind)
{
    for (size_t i = 0; i < mp_ntypes; i++)
        if ((id && mp_types[i].id == id) || (!id && mp_types[i].kind == kind))
            return &mp_types[i];
    return NULL;
}

static mp_case make_case(mp_ctx *c, int coll, const mp_type *t, int opid, size_t count,
                         bool in_place, uint64_t seed)
{
    mp_case k = { coll, t, opid, count, in_place, 0, seed };
    k.root = coll == MPC_ALLREDUCE ? 0 : (int)(seed % (uint64_t)c->size);
    return k;
}

/* Starts one split-phase call, then drives it with collie_test(req, 0) and local work. */
static void split_phase_one(mp_ctx *c, const mp_case *k)
{
    mp_bufs b;
    collie_request_t *req = NULL;
    char desc[200];
    mp_describe(k, desc, sizeof desc);
    mp_bufs_alloc(c, k, &b);
    mp_bufs_fill(c, k, &b);
    int st = mp_call_start(c, k, &b, &req);
    if (st != COLLIE_OK)
        mp_die(c, st, desc);
    if (!req || !collie_request_algorithm(req)) {
        mp_fail(c, "split-phase %s: no request or no algorithm name", desc);
        mp_die(c, COLLIE_ERR_INTERNAL, desc);
    }
    mp_wait_request(c, req, desc);
    collie_request_free(req);
    mp_bufs_check(c, k, &b);
    mp_bufs_free(&b);
}

void mp_test_split_phase(mp_ctx *c, int coll)
{
    size_t big = c->level == MP_QUICK ? 20000 : 100003;
    mp_case k = make_case(c, coll, find_type(COLLIE_FLOAT64, 0), COLLIE_OPID_SUM, big, false, 11);
    split_phase_one(c, &k);
    k = make_case(c, coll, find_type(COLLIE_INT16, 0), COLLIE_OPID_MAX, 3, true, 12);
    split_phase_one(c, &k);
    if (coll == MPC_BCAST)
        return;
    k = make_case(c, coll, find_type(0, MK_USER_MAT), MP_OP_USER, 1000, false, 13);
    split_phase_one(c, &k);
}

/* One persistent request started several times; the input changes between starts. */
static void persistent_one(mp_ctx *c, mp_case k, int starts)
{
    mp_bufs b;
    collie_request_t *req = NULL;
    char desc[200];
    mp_describe(&k, desc, sizeof desc);
    mp_bufs_alloc(c, &k, &b);
    mp_bufs_fill(c, &k, &b);
    int st = mp_call_init(c, &k, &b, &req);
    if (st != COLLIE_OK)
        mp_die(c, st, desc);
    for (int s = 0; s < starts; s++) {
        k.seed += 1000;            /* new inputs in the same buffers */
        mp_bufs_fill(c, &k, &b);
        mp_describe(&k, desc, sizeof desc);
        if ((st = collie_start(req)) != COLLIE_OK)
            mp_die(c, st, desc);
        if ((st = collie_wait(req)) != COLLIE_OK)
            mp_die(c, st, desc);
        mp_bufs_check(c, &k, &b);
    }
    collie_request_free(req);
    mp_bufs_free(&b);
}

void mp_test_persistent(mp_ctx *c, int coll)
{
    persistent_one(c, make_case(c, coll, find_type(COLLIE_INT32, 0), COLLIE_OPID_SUM, 1000,
                                false, 21), 4);
    persistent_one(c, make_case(c, coll, find_type(COLLIE_FLOAT32, 0), COLLIE_OPID_MIN, 4099,
                                true, 22), 3);
    if (coll != MPC_BCAST)
        persistent_one(c, make_case(c, coll, find_type(0, MK_USER_MAT), MP_OP_USER, 77,
                                    false, 23), 3);
}

/* Three requests in flight on the team at once, waited for in reverse order. */
void mp_test_in_flight(mp_ctx *c, int coll)
{
    enum { N = 3 };
    mp_case k[N];
    mp_bufs b[N];
    collie_request_t *req[N];
    char desc[200];
    k[0] = make_case(c, coll, find_type(COLLIE_FLOAT64, 0), COLLIE_OPID_SUM, 1023, false, 31);
    k[1] = make_case(c, coll, find_type(COLLIE_UINT16, 0), COLLIE_OPID_BXOR,
                     (size_t)c->size, true, 32);
    k[2] = make_case(c, coll, find_type(coll == MPC_BCAST ? COLLIE_INT8 : 0, MK_USER_MAT),
                     coll == MPC_BCAST ? COLLIE_OPID_SUM : MP_OP_USER, 5000, false, 33);
    for (int i = 0; i < N; i++) {
        mp_bufs_alloc(c, &k[i], &b[i]);
        mp_bufs_fill(c, &k[i], &b[i]);
        mp_describe(&k[i], desc, sizeof desc);
        int st = mp_call_start(c, &k[i], &b[i], &req[i]);
        if (st != COLLIE_OK)
            mp_die(c, st, desc);
    }
    for (int i = N - 1; i >= 0; i--) {
        mp_describe(&k[i], desc, sizeof desc);
        int st = collie_wait(req[i]);
        if (st != COLLIE_OK)
            mp_die(c, st, desc);
        collie_request_free(req[i]);
        mp_bufs_check(c, &k[i], &b[i]);
        mp_bufs_free(&b[i]);
    }
}
