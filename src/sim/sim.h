/*
 * sim.h — the simulation engine behind `collie-sim predict|draw` (the `sim` transport of
 * docs/design.md): P virtual ranks run the very schedules the registry's builders make,
 * on a virtual clock driven by a cost model.  No data moves; sizes are exact.  See
 * docs/simulator.md for the precise semantics.
 *
 * Semantics (message level, like src/core/executor.c):
 *   - every rank runs its rounds in order; a round starts when the previous round's
 *     REDUCEs are done; its PUTs are issued at once (in operation order) and may trail
 *     into later rounds; a PUT still in flight when a round that overwrites its source
 *     starts is staged (copy of its bytes, as the executor does);
 *   - each rank has one outgoing and one incoming link; a message occupies the sender's
 *     outgoing and the receiver's incoming link for its duration (one message at a time
 *     per direction); waiting messages start first-come first-served; buffering at the
 *     receiver is unbounded (a message may arrive before its REDUCE is reached);
 *   - each rank has one CPU: REDUCEs run one at a time once all their incoming messages
 *     have arrived; a k-source REDUCE costs γ·bytes·(k-1), a local copy copy·bytes, a
 *     receive into memory (one incoming source) nothing beyond its message;
 *   - Hockney: a message of n bytes costs f_α·α + f_β·n·β; when its reverse message
 *     (same pair, other direction) is in transfer at the moment it starts, both are
 *     bidirectional and cost α + n·β from their own start (Rabenseifner 2004 §3.1);
 *   - LogGP: the sender's CPU spends o per PUT, the links are busy max(g, n·G), the
 *     message arrives n·G + L after it starts, the receiver's CPU spends o per incoming
 *     source of a REDUCE.
 *   A rank finishes when its last round is done and its last message has left; the
 *   predicted time is the latest finish (all ranks start at time 0).
 */
#ifndef COLLIE_SIM_H
#define COLLIE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "algorithms/algorithm.h"

enum sim_model_kind { SIM_HOCKNEY = 0, SIM_LOGGP = 1 };

typedef struct sim_model {
    int kind;                   /* enum sim_model_kind */
    double alpha, beta;         /* s per message, s per byte (bidirectional) */
    double f_alpha, f_beta;     /* uni-directional factors, 0.5 … 1 */
    double gamma;               /* s per byte per extra reduction source */
    double copy;                /* s per byte of a local copy (also staging) */
    double L, o, g, G;          /* LogGP: s, s, s, s per byte */
    /* The multicast broadcast (sim_mcast.c): one datagram costs mc_alpha + n·mc_beta at the
     * root and reaches every rank at once; each is lost at each rank with probability loss. */
    double mc_alpha, mc_beta, loss;
} sim_model;

/* Defaults resembling this machine's shared memory (docs/simulator.md). */
void sim_model_default(sim_model *m);
/* Reads "key = value" lines (# comments) or a flat JSON object into m (keys: model =
 * hockney|loggp, alpha, beta, f_alpha, f_beta, gamma, copy, L, o, g, G; times in
 * seconds).  0 on success, else -1 with a message in err. */
int sim_model_parse(sim_model *m, const char *text, char *err, size_t errsz);
int sim_model_load(sim_model *m, const char *path, char *err, size_t errsz);

/* One message, reported to the trace hook when it has been delivered. */
typedef struct sim_msg_trace {
    int from, to;
    uint32_t round;             /* the sender's round that issued it */
    uint32_t op;                /* its operation index in the sender's schedule */
    uint64_t bytes;
    int src_buf;                /* enum sched_buf of its source */
    uint64_t src_off;
    double issued, start, deliver;
    bool bidirectional, staged;
    uint32_t seq;               /* its number among the messages from `from` to `to` */
} sim_msg_trace;

/* One round of one rank, reported when it ends. */
typedef struct sim_round_trace {
    int rank;
    uint32_t round;
    double start, end;
} sim_round_trace;

typedef struct sim_hooks {
    void (*msg)(void *ctx, const sim_msg_trace *t);
    void (*round)(void *ctx, const sim_round_trace *t);
    void *ctx;
} sim_hooks;

enum sim_method { SIM_FULL = 0, SIM_SYMMETRIC = 1 };

typedef struct sim_config {
    const collie_algorithm *alg;
    collie_coll_args args;      /* args.rank is ignored */
    sim_model model;
    int method;                 /* enum sim_method */
    const sim_hooks *hooks;     /* optional */
} sim_config;

typedef struct sim_result {
    double time;                /* latest finish, seconds */
    double mean;                /* mean finish over ranks (simulated ones) */
    uint64_t events, messages, bidirectional, staged;
    char err[256];
} sim_result;

/* The multicast broadcast is not a schedule: sim_run predicts it with this model
 * (sim_mcast.c; expected values over Monte Carlo trials of the loss). */
int sim_mcast_run(const sim_config *c, sim_result *out);

/* Simulates one call.  SIM_SYMMETRIC simulates rank 0 only and mirrors its messages
 * (rank q sends what rank 0 sends, to peers shifted by q): exact for schedules that are
 * rotation-symmetric (sim_symmetric), P-fold cheaper.  0, or -1 with out->err. */
int sim_run(const sim_config *c, sim_result *out);

/* Is the algorithm's communication for args rotation-symmetric: rank q's schedule is rank
 * 0's with every peer shifted by q — same rounds, operation kinds, sizes and incoming
 * peers (the number of local operands of a REDUCE may differ: SIM_SYMMETRIC then charges
 * every rank rank 0's computation)?  Checked on every rank (building all P schedules;
 * it stops at the first difference).  false with the first difference in why. */
bool sim_symmetric(const collie_algorithm *alg, const collie_coll_args *args, char *why,
                   size_t whysz);
/* The same check on ranks 0 … upto - 1 only (a quick test that rejects, never a proof). */
bool sim_symmetric_upto(const collie_algorithm *alg, const collie_coll_args *args, int upto,
                        char *why, size_t whysz);

/* Closed forms (closed_form.c) of the allreduce algorithms whose full simulation needs P²
 * messages: flat, ring, ring_pipelined; Hockney model only.  Exact where the ranks run in
 * lockstep (count a multiple of P), an estimate otherwise (docs/simulator.md).  0 with
 * *time in seconds, or -1 with the reason in why. */
bool sim_closed_form_has(const collie_algorithm *alg);
int sim_closed_form(const collie_algorithm *alg, const collie_coll_args *args,
                    const sim_model *m, double *time, char *why, size_t whysz);

/* Operations in rank's schedule (to estimate the work of a full simulation: about
 * P times this many events); -1 when the builder fails. */
long sim_rank_ops(const collie_algorithm *alg, const collie_coll_args *args, int rank);

#endif
