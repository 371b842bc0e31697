/*
 * test_tuning.c — the tuning file (src/select/tuning.c, json.c) and selection from it
 * (src/select/select.c, select_model.c): good and bad files (error names file and line),
 * rule matching (team size, bytes, op classes, first match, declining algorithms), model
 * entries per transport and size; then, on the in-process loop transport, a file whose
 * rule says `ring` makes `auto` pick ring (with the rule's params) and compute the right
 * sum, and a file with only model parameters makes `auto` pick the algorithm with the
 * least predicted time (checked against sim_run directly).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "base/base.h"
#include "core/internal.h"
#include "select/tuning.h"
#include "sim/sim.h"

#define P 4
static int failures;
static collie_tuning tun;
static char err[512];

#define CHECK(cond) check_((cond), __FILE__, __LINE__, #cond)
static void check_(int ok, const char *file, int line, const char *what) {
    if (!ok) {
        failures++;
        printf("FAIL %s:%d: %s (last error: %s)\n", file, line, what, err);
    }
}

static const char *good =
    "{\n"
    "  \"schema\": 1, \"generated_by\": \"test\",\n"
    "  \"models\": [\n"
    "    {\"transport\": \"shm\", \"bytes_max\": 4095, \"alpha\": 1e-6, \"beta\": 2e-10},\n"
    "    {\"transport\": \"any\", \"alpha\": 3e-6, \"f_beta\": 0.5, \"model\": \"hockney\"}\n"
    "  ],\n"
    "  \"rules\": [\n"
    "    {\"coll\": \"allreduce\", \"p_min\": 2, \"p_max\": 4, \"bytes_max\": 1024,\n"
    "     \"op_class\": \"noncommutative\", \"algorithm\": \"binomial\"},\n"
    "    {\"coll\": \"allreduce\", \"algorithm\": \"no_such_algorithm\"},\n"
    "    {\"coll\": \"allreduce\", \"p_min\": 2, \"bytes_min\": 64, \"op_class\": \"commutative\",\n"
    "     \"algorithm\": \"ring_pipelined\", \"params\": {\"segment\": 4096}},\n"
    "    {\"coll\": \"allreduce\", \"algorithm\": \"recursive_doubling\"},\n"
    "    {\"coll\": \"bcast\", \"algorithm\": \"chain\", \"params\": {\"segment\": 4096}}\n"
    "  ]\n"
    "}\n";

static void test_good(void) {
    CHECK(collie_tuning_parse(&tun, good, "good.json", err, sizeof err) == 0);
    CHECK(tun.nmodels == 2 && tun.nrules == 4);   /* the unknown algorithm's rule is skipped */
    CHECK(tun.models[0].transport == TRANSPORT_SHM && tun.models[0].bytes_max == 4095);
    CHECK(tun.models[0].model.alpha == 1e-6 && tun.models[0].model.beta == 2e-10);
    CHECK(tun.models[1].model.f_beta == 0.5 && tun.models[1].model.alpha == 3e-6);
    sim_model def;
    sim_model_default(&def);
    CHECK(tun.models[0].model.gamma == def.gamma);   /* not given: default */
    CHECK(strcmp(tun.rules[1].alg->name, "ring_pipelined") == 0 && tun.rules[1].line == 11);
    CHECK(tun.rules[1].params.count == 1 &&
          collie_param(&tun.rules[1].params, "segment", 0) == 4096);
    CHECK(tun.rules[3].coll == COLL_BCAST);
}

static collie_coll_args args(int coll, int size, uint64_t bytes, bool commutative, bool shm) {
    collie_coll_args a = { .coll = coll, .size = size, .count = bytes / 8, .elem_size = 8,
                           .bytes = bytes, .commutative = commutative, .shared_memory = shm };
    return a;
}

static void test_matching(void) {
    collie_coll_args a = args(COLL_ALLREDUCE, 4, 512, false, true);
    CHECK(collie_tuning_find_rule(&tun, &a, 0) == 0);            /* non-commutative, small */
    a.commutative = true;
    CHECK(collie_tuning_find_rule(&tun, &a, 0) == 1);            /* commutative: ring */
    a.bytes = 32;
    CHECK(collie_tuning_find_rule(&tun, &a, 0) == 2);            /* below bytes_min of ring */
    a = args(COLL_ALLREDUCE, 8, 512, false, true);
    CHECK(collie_tuning_find_rule(&tun, &a, 0) == 2);            /* P beyond p_max */
    CHECK(collie_tuning_find_rule(&tun, &a, 3) == -1);
    a = args(COLL_REDUCE, 4, 512, true, true);
    CHECK(collie_tuning_find_rule(&tun, &a, 0) == -1);
    a = args(COLL_BCAST, 4, 1 << 20, true, true);
    CHECK(collie_tuning_find_rule(&tun, &a, 0) == 3);
    CHECK(collie_tuning_model(&tun, &a) == &tun.models[1].model); /* shm but too big */
    a.bytes = 100;
    CHECK(collie_tuning_model(&tun, &a) == &tun.models[0].model);
    a.shared_memory = false;
    CHECK(collie_tuning_model(&tun, &a) == &tun.models[1].model);
}

/* Each bad document must fail with an error naming the file, the line and `want`. */
static void expect_bad(const char *text, int line, const char *want) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "bad.json:%d: ", line);
    int st = collie_tuning_parse(&tun, text, "bad.json", err, sizeof err);
    if (st == 0 || strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, want)) {
        failures++;
        printf("FAIL bad file: wanted '%s...%s', got (%d) '%s' for:\n%s\n", prefix, want, st, err, text);
    }
}

static void test_bad(void) {
    expect_bad("", 1, "end of file");
    expect_bad("{\"models\": []}", 1, "missing \"schema\"");
    expect_bad("{\"schema\": 2}", 1, "unsupported schema");
    expect_bad("{\"schema\": 1,\n \"rules\": [1,]}", 2, "unexpected ']");
    expect_bad("{\"schema\": 1,\n\n \"rulez\": []}", 3, "unknown key \"rulez\"");
    expect_bad("{\"schema\": 1, \"schema\": 1}", 1, "duplicate key");
    expect_bad("{\"schema\": 1,\n \"rules\": [{\"coll\": \"allreduce\",\n \"op_class\": \"odd\", "
               "\"algorithm\": \"ring\"}]}", 3, "bad op_class \"odd\"");
    expect_bad("{\"schema\": 1, \"rules\": [{\"coll\": \"allgatherv\", \"algorithm\": \"x\"}]}", 1,
               "unknown collective \"allgatherv\"");
    expect_bad("{\"schema\": 1, \"rules\": [{\"coll\": \"bcast\"}]}", 1, "needs \"algorithm\"");
    expect_bad("{\"schema\": 1, \"rules\": [{\"coll\": \"bcast\", \"p_min\": 5, \"p_max\": 2,"
               " \"algorithm\": \"chain\"}]}", 1, "p_min is larger");
    expect_bad("{\"schema\": 1, \"rules\": [{\"coll\": \"bcast\", \"p_min\": 1.5,"
               " \"algorithm\": \"chain\"}]}", 1, "must be an integer");
    expect_bad("{\"schema\": 1,\n \"models\": [{\"alpha\": 01}]}", 2, "bad number");
    expect_bad("{\"schema\": 1,\n \"models\": [{\"alpha\": -1}]}", 2, "out of range");
    expect_bad("{\"schema\": 1,\n \"models\": [{\"beta\": \"fast\"}]}", 2, "must be a number");
    expect_bad("{\"schema\": 1, \"comment\": \"open\n\"}", 1, "unterminated string");
    expect_bad("{\"schema\": 1} x", 1, "unexpected text");
    expect_bad("[1]", 1, "must be a object");
    expect_bad("{\"schema\": 1,\n \"rules\": [{\"coll\": \"allreduce\", \"algorithm\": \"ring\",\n"
               " \"params\": {\"foo\": 1}}]}", 2, "has no parameter 'foo'");
    expect_bad("{\"schema\": 1, \"rules\": [{\"coll\": \"allreduce\", \"algorithm\": "
               "\"ring_pipelined\", \"params\": {\"segment\": 1}}]}", 1, "below its floor of 64");
    expect_bad("{\"schema\": 1} \x01\x1b[31m", 1, "unexpected");
    CHECK(strchr(err, '\x1b') == NULL && strchr(err, '\x01') == NULL);
    CHECK(collie_tuning_load(&tun, "/nonexistent/tuning.json", err, sizeof err) == -1);
    CHECK(strstr(err, "/nonexistent/tuning.json: cannot open") != NULL);
    CHECK(collie_tuning_load(&tun, "/", err, sizeof err) == -1);         /* not "empty file" */
    CHECK(strstr(err, "is a directory") != NULL);
    CHECK(collie_tuning_load(&tun, "/dev/zero", err, sizeof err) == -1); /* never returned */
    CHECK(strstr(err, "is a character device") != NULL);
    CHECK(collie_tuning_parse(&tun, "{\"schema\": 1, \"comment\": \"\\u00e9\\n\"}", "x", err,
                              sizeof err) == 0);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Builds an allreduce of count doubles on every rank, runs it, checks the sums; returns
 * rank 0's algorithm name (static storage) or "" on failure. */
static const char *run_allreduce(size_t count, collie_algo_params *params) {
    static char name[64];
    collie_transport *tps[P];
    collie_team_t *teams[P];
    collie_request_t *reqs[P] = { 0 };
    double *buf[P];
    name[0] = 0;
    CHECK(collie_loop_create(P, tps) == 0);
    for (int r = 0; r < P; r++) {
        CHECK(collie_team_create(tps[r], &teams[r]) == 0);
        buf[r] = malloc(count * sizeof(double));
        for (size_t i = 0; i < count; i++)
            buf[r][i] = (double)(r + 1) * (double)(i % 7);
        CHECK(collie_request_build(teams[r], COLL_ALLREDUCE, COLLIE_IN_PLACE, buf[r], count,
                                   COLLIE_FLOAT64, COLLIE_SUM, 0, false, &reqs[r]) == 0);
        CHECK(strcmp(reqs[r]->algo->name, reqs[0]->algo->name) == 0);
        CHECK(collie_start(reqs[r]) == 0);
    }
    snprintf(name, sizeof name, "%s", reqs[0]->algo->name);
    *params = reqs[0]->args.params;
    int pending = P;
    for (int iter = 0; pending && iter < 1000000; iter++)
        for (int r = 0, st; r < P; r++)
            if (reqs[r] && (st = collie_test(reqs[r], 0)) <= 0) {
                CHECK(st == COLLIE_OK);
                collie_request_free(reqs[r]);
                reqs[r] = NULL;
                pending--;
            }
    CHECK(pending == 0);
    for (int r = 0; r < P; r++) {
        for (size_t i = 0; i < count && !pending; i++)
            pending = buf[r][i] != 10.0 * (double)(i % 7);
        CHECK(!pending);
        free(buf[r]);
        collie_team_destroy(teams[r]);
    }
    return name;
}

static void test_rule_selection(const char *dir) {
    char path[512];
    collie_algo_params params;
    snprintf(path, sizeof path, "%s/rules.json", dir);
    write_file(path, "{\"schema\": 1, \"rules\": [\n"
               " {\"coll\": \"allreduce\", \"bytes_min\": 1024, \"algorithm\": \"ring_pipelined\",\n"
               "  \"params\": {\"segment\": 128}}]}\n");
    CHECK(collie_select_set_tuning(path) == COLLIE_OK);
    CHECK(strcmp(run_allreduce(1000, &params), "ring_pipelined") == 0);
    CHECK(collie_param(&params, "segment", 0) == 128);
    CHECK(strcmp(run_allreduce(4, &params), "ring_pipelined") != 0);   /* 32 bytes: no rule covers it */
    write_file(path, "{\"schema\": 1,\n \"rules\": [{\"coll\": \"allreduce\", \"algorithm\": 7}]}");
    CHECK(collie_select_set_tuning(path) == COLLIE_ERR_ARG);
    CHECK(strstr(collie_last_error(), ":2: algorithm must be a string") != NULL);
    FILE *f = fopen(path, "wb");                 /* a NUL byte: refused, naming its line */
    fwrite("{\"schema\": 1}\n\0garbage", 1, 23, f);
    fclose(f);
    CHECK(collie_tuning_load(&tun, path, err, sizeof err) == -1 && strstr(err, ":2: a NUL byte"));
    CHECK(truncate(path, 17 << 20) == 0);         /* over the 16 MiB cap (sparse) */
    CHECK(collie_tuning_load(&tun, path, err, sizeof err) == -1 && strstr(err, "larger than"));
}

/* The algorithm with the least predicted time for allreduce of count doubles on P ranks. */
static const char *model_best(const sim_model *m, size_t count) {
    collie_coll_args a = args(COLL_ALLREDUCE, P, count * 8, true, true);
    a.in_place = true;
    const char *best = "", *why;
    double best_t = INFINITY;
    for (size_t i = 0; i < collie_algorithm_count(COLL_ALLREDUCE); i++) {
        sim_config c = { .alg = collie_algorithm_at(COLL_ALLREDUCE, i), .args = a, .model = *m };
        sim_result res;
        if (collie_algorithm_accepts(c.alg, &a, &why) && sim_run(&c, &res) == 0 && res.time < best_t) {
            best_t = res.time;
            best = c.alg->name;
        }
    }
    return best;
}

static void test_model_selection(const char *dir) {
    char path[512];
    collie_algo_params params;
    snprintf(path, sizeof path, "%s/model.json", dir);
    write_file(path, "{\"schema\": 1, \"models\": [{\"alpha\": 1e-3, \"beta\": 1e-12,"
               " \"gamma\": 1e-12, \"copy\": 1e-12, \"f_alpha\": 1, \"f_beta\": 1}]}");
    CHECK(collie_select_set_tuning(path) == COLLIE_OK);
    sim_model m = collie_select_tuning()->models[0].model;
    /* 768 doubles = 6144 bytes: the representative size of its bucket (4096..8191) */
    const char *want = model_best(&m, 768);
    CHECK(*want && strcmp(run_allreduce(768, &params), want) == 0);
    CHECK(strcmp(run_allreduce(700, &params), want) == 0);   /* same bucket, cached */
    CHECK(collie_select_set_tuning(NULL) == COLLIE_OK && collie_select_tuning() == NULL);
}

int main(void) {
    char dir[] = "/tmp/collie-test-tuning-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    collie_log_init();   /* COLLIE_LOG=debug shows the choices */
    test_good();
    test_matching();
    test_bad();
    test_rule_selection(dir);
    test_model_selection(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", dir);
    if (failures)
        printf("%d failures\n", failures);
    else
        printf("tuning tests passed\n");
    return failures ? 1 : 0;
}
