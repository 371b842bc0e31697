/*
 * tuning.h — the tuning file (COLLIE_TUNING_FILE, written by collie-tune): JSON with
 * "schema": 1, optional cost-model parameters per transport and message-size range
 * ("models") and optional selection rules ("rules", first match wins).  The format is
 * described in docs/guide.md ("Tuning").  Times are in seconds.
 */
#ifndef COLLIE_TUNING_H
#define COLLIE_TUNING_H

#include <stddef.h>
#include <stdint.h>
#include "algorithms/algorithm.h"
#include "sim/sim.h"

#define TUNING_SCHEMA 1
#define TUNING_MAX_MODELS 16
#define TUNING_MAX_RULES 256

enum tuning_op_class { OPC_ANY = 0, OPC_COMMUTATIVE, OPC_NONCOMMUTATIVE };
enum tuning_transport { TRANSPORT_ANY = 0, TRANSPORT_SHM, TRANSPORT_NET };

typedef struct tuning_model {
    int transport;              /* enum tuning_transport */
    uint64_t bytes_min, bytes_max;
    sim_model model;            /* parameters not given keep sim_model_default's values */
    int line;
} tuning_model;

typedef struct tuning_rule {
    int coll;                   /* enum collie_coll */
    int p_min, p_max;
    uint64_t bytes_min, bytes_max;
    int op_class;               /* enum tuning_op_class */
    const collie_algorithm *alg;
    collie_algo_params params;
    int line;
} tuning_rule;

typedef struct collie_tuning {
    char path[256];
    int nmodels, nrules;
    tuning_model models[TUNING_MAX_MODELS];
    tuning_rule rules[TUNING_MAX_RULES];
} collie_tuning;

/* Parses text (name is used in messages).  0, or -1 with "NAME:LINE: what" in err.
 * Rules naming an unknown algorithm are skipped with a warning (COLLIE_LOG=warn). */
int collie_tuning_parse(collie_tuning *t, const char *text, const char *name, char *err,
                        size_t errsz);
int collie_tuning_load(collie_tuning *t, const char *path, char *err, size_t errsz);

/* Does the rule cover the call (collective, team size, bytes, op class)? */
bool collie_tuning_rule_matches(const tuning_rule *r, const collie_coll_args *a);
/* Index of the first rule at or after `from` that covers the call, or -1. */
int collie_tuning_find_rule(const collie_tuning *t, const collie_coll_args *a, int from);
/* The first model entry covering the call's transport and bytes, or NULL. */
const sim_model *collie_tuning_model(const collie_tuning *t, const collie_coll_args *a);

/* Selection (select.c): use the tuning file at path from now on (NULL or "" = none: the
 * built-in rules decide).  COLLIE_OK, or COLLIE_ERR_ARG with the file's error message.
 * collie_init calls it with COLLIE_TUNING_FILE. */
int collie_select_set_tuning(const char *path);
const collie_tuning *collie_select_tuning(void);

#endif
