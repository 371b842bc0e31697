/*
 * select_model.h — cost-model selection (select_model.c): ranks the algorithms that accept
 * a call by the simulator's predicted time (sim.h) and caches the ranking per call class.
 */
#ifndef COLLIE_SELECT_MODEL_H
#define COLLIE_SELECT_MODEL_H

#include "algorithms/algorithm.h"
#include "sim/sim.h"

/* The accepting algorithm with the least predicted time under model m (NULL when none
 * accepts).  Rankings are cached per (collective, team size, power-of-two bytes bucket,
 * element size, op class, in place, transport) and computed at the bucket's
 * representative size, so every rank of a team chooses the same algorithm. */
const collie_algorithm *collie_select_by_model(const collie_coll_args *a, const sim_model *m);
/* Forgets every cached ranking (the model changed). */
void collie_select_model_reset(void);
/* Logs (COLLIE_LOG=debug) the predicted time of every algorithm accepting the call, once
 * per call class (until collie_select_model_reset). */
void collie_select_log_costs(const collie_coll_args *a, const sim_model *m);

#endif
