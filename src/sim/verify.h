/*
 * verify.h — the symbolic schedule verifier (collie-sim verify, unit tests), independent
 * of the library's executor.
 *
 * It runs the schedules of all P ranks of one call together.  Every element of every
 * buffer holds a hash-consed symbolic expression: a leaf is "the input of rank r at
 * element i", a node is an n-ary REDUCE of child expressions in operand order (a
 * one-source REDUCE is a copy, not a node).  Messages queue per ordered pair (p, q);
 * every rank runs its rounds in order (the PUTs of a round go out when it starts, its
 * REDUCEs run as their incoming messages arrive, it ends when all are done).
 *
 * Reported (first problem wins; the message names algorithm, collective, P, count,
 * element size, root, in place, commutativity, then rank / round / element):
 *   - builder errors, bad peers, offsets or sizes not multiples of the element size,
 *     accesses beyond SEND/RECV (count·elem bytes) or TMP (tmp_bytes);
 *   - writes to SBUF_SEND; any SBUF_SEND access in bcast; SBUF_RECV on non-root ranks of
 *     reduce (writes always; reads unless in place, when RECV is the input);
 *   - intra-round hazards: an op writing bytes another op of the round reads or writes
 *     (SEND aliases RECV in place); a REDUCE whose dst partially overlaps its own source;
 *   - reading undefined data (uninitialised RECV/TMP, sending it);
 *   - message size mismatches, deadlock (no rank can advance), messages never consumed;
 *   - results: allreduce — on every rank every element is one expression with every
 *     rank's leaf of that element exactly once (non-commutative: in rank order 0…P-1 by
 *     in-order traversal; idempotent: at least once), and the same expression id on all
 *     ranks (bitwise identical); reduce — the root's result likewise; bcast — every rank
 *     holds the root's leaf at every element;
 *   - causality: barrier — every rank has (transitively) heard from every rank when it
 *     completes; allreduce (count > 0) likewise; reduce (count > 0) — the root from every
 *     rank; bcast (count > 0) — every rank from the root.
 */
#ifndef COLLIE_SIM_VERIFY_H
#define COLLIE_SIM_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include "algorithms/algorithm.h"
#include "schedule/schedule.h"

/* Builds every rank's schedule with alg for args (args->rank is ignored) and verifies
 * them.  0 when all is well, else -1 with the first problem in err. */
int sym_verify(const collie_algorithm *alg, const collie_coll_args *args, char *err,
               size_t errsz);

/* Initialises scheds[r] and builds rank r's schedule with alg for r = 0 … args->size-1
 * (args->rank is ignored); free them with sched_free. */
void sym_build_all(const collie_algorithm *alg, const collie_coll_args *args,
                   collie_schedule *scheds);

/* Verifies given schedules, scheds[r] for rank r = 0 … args->size-1; name is used in
 * messages. */
int sym_run(const char *name, const collie_coll_args *args, const collie_schedule *scheds,
            char *err, size_t errsz);

/* sym_run, telling hook what every PUT carries: from, to, its number among the messages
 * from `from` to `to` (0, 1, …), and a label of contribution sets over element ranges,
 * "x0..3[8:16)" = ranks 0…3 combined, elements 8…15 (collie-sim draw). */
typedef void (*sym_put_hook)(void *ctx, int from, int to, uint32_t seq, const char *label);
int sym_run_traced(const char *name, const collie_coll_args *args,
                   const collie_schedule *scheds, sym_put_hook hook, void *ctx, char *err,
                   size_t errsz);

/* A compact description of the call for messages: "ring allreduce P=5 count=7 ...". */
void sym_describe(const char *name, const collie_coll_args *args, char *out, size_t outsz);

#endif
