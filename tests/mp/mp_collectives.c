/*
 * mp_collectives.c — multi-process correctness test of the collectives, run under
 * collie-run:
 *
 *   collie-run -n P -- mp_collectives [--coll allreduce|reduce|bcast|barrier|all]
 *                      [--algo SPEC] [--dir DIR] [--level quick|normal|long]
 *                      [--filter SUBSTRING] [--alloc malloc|collie|mixed]
 * --alloc: where the buffers come from (default malloc; mixed: collie_alloc or malloc per
 * rank and case, so the ranks of one call mix registered and ordinary memory).
 *   mp_collectives --list-algorithms COLL      (registry names, one per line)
 *
 * --algo forces the algorithm through COLLIE_<COLL>_ALGO (default: the environment, i.e.
 * "auto").  The level defaults to normal, quick above 8 ranks, long with
 * COLLIE_LONG_TESTS=1.  DIR (shared by all ranks) receives barrier markers and the result
 * files that run_matrix.sh compares bitwise.  --filter (for reproducing a failure) runs only
 * the sweep cases whose description contains SUBSTRING, e.g. "type=int32 op=bxor count=100003".  Exit status 0 only when every check passed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mp_common.h"

static const char *const coll_names[] = { "allreduce", "reduce", "bcast", "barrier" };

typedef struct options {
    const char *coll, *algo, *dir, *level, *filter, *alloc;
} options;

static int usage(void)
{
    fprintf(stderr, "usage: mp_collectives [--coll allreduce|reduce|bcast|barrier|all] "
            "[--algo SPEC] [--dir DIR] [--level quick|normal|long]\n"
            "                      [--filter SUBSTRING] [--alloc malloc|collie|mixed]\n"
            "       mp_collectives --list-algorithms COLL\n");
    return 2;
}

static int parse(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char **dst = NULL;
        if (strcmp(argv[i], "--coll") == 0)
            dst = &o->coll;
        else if (strcmp(argv[i], "--algo") == 0)
            dst = &o->algo;
        else if (strcmp(argv[i], "--dir") == 0)
            dst = &o->dir;
        else if (strcmp(argv[i], "--level") == 0)
            dst = &o->level;
        else if (strcmp(argv[i], "--filter") == 0)
            dst = &o->filter;
        else if (strcmp(argv[i], "--alloc") == 0)
            dst = &o->alloc;
        if (!dst || i + 1 >= argc)
            return usage();
        *dst = argv[++i];
    }
    return 0;
}

static int coll_index(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, coll_names[i]) == 0)
            return i;
    return strcmp(name, "all") == 0 ? 4 : -1;
}

/* COLLIE_<COLL>_ALGO=spec for the collective(s) selected. */
static void force_algorithm(int coll, const char *spec)
{
    for (int i = 0; i < 4; i++) {
        if (coll != 4 && coll != i)
            continue;
        char var[64];
        snprintf(var, sizeof var, "COLLIE_%s_ALGO", coll_names[i]);
        for (char *p = var; *p; p++)
            *p = (char)toupper((unsigned char)*p);
        setenv(var, spec, 1);
    }
}

static int pick_level(const options *o, int size)
{
    if (o->level)
        return strcmp(o->level, "quick") == 0 ? MP_QUICK
             : strcmp(o->level, "long") == 0 ? MP_LONG : MP_NORMAL;
    const char *lng = getenv("COLLIE_LONG_TESTS");
    if (lng && strcmp(lng, "0") != 0 && *lng)
        return MP_LONG;
    return size > 8 ? MP_QUICK : MP_NORMAL;
}

static void run_collective(mp_ctx *c, int coll)
{
    mp_check_algorithm_used(c, coll);
    if (coll == MPC_BARRIER) {
        mp_test_barrier(c);
        return;
    }
    mp_sweep(c, coll);
    if (c->filter)
        return;
    mp_test_split_phase(c, coll);
    mp_test_persistent(c, coll);
    mp_test_in_flight(c, coll);
    if (coll != MPC_BCAST)
        mp_test_association(c, coll);
}

static const char *default_dir(void)
{
    static char dir[256];
    const char *job = getenv("COLLIE_JOB");
    snprintf(dir, sizeof dir, "/tmp/collie-mp-%s", job ? job : "nojob");
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        fprintf(stderr, "mp_collectives: cannot create %s\n", dir);
    return dir;
}

static int run(const options *o, int coll)
{
    mp_ctx c = { 0 };
    int st = collie_init();
    if (st != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s: %s\n", collie_strerror(st), collie_last_error());
        return 2;
    }
    c.team = collie_world();
    c.rank = collie_rank(c.team);
    c.size = collie_size(c.team);
    c.algo = o->algo ? o->algo : "auto";
    c.dir = o->dir ? o->dir : default_dir();
    c.level = pick_level(o, c.size);
    c.filter = o->filter;
    c.alloc = !o->alloc || strcmp(o->alloc, "malloc") == 0 ? MP_ALLOC_MALLOC
            : strcmp(o->alloc, "collie") == 0 ? MP_ALLOC_COLLIE : MP_ALLOC_MIXED;
    mp_types_init();
    if ((st = mp_user_ops_create()) != COLLIE_OK)
        mp_die(&c, st, "collie_op_create");
    for (int i = 0; i < 4; i++)
        if (coll == 4 || coll == i)
            run_collective(&c, i);
    mp_user_ops_free();
    if (c.failures || c.rank == 0)
        printf("mp_collectives rank %d: %s algo=%s P=%d level=%d: %ld checks, %ld failures\n",
               c.rank, o->coll, c.algo, c.size, c.level, c.checks, c.failures);
    fflush(stdout);
    st = collie_finalize();
    if (st != COLLIE_OK)
        fprintf(stderr, "collie_finalize: %s\n", collie_last_error());
    return c.failures || st != COLLIE_OK ? 1 : 0;
}

int main(int argc, char **argv)
{
    options o = { "all", NULL, NULL, NULL, NULL, NULL };
    if (argc == 3 && strcmp(argv[1], "--list-algorithms") == 0)
        return mp_list_algorithms(argv[2]);
    if (parse(argc, argv, &o) != 0)
        return 2;
    int coll = coll_index(o.coll);
    if (coll < 0)
        return usage();
    if (o.algo)
        force_algorithm(coll, o.algo);
    return run(&o, coll);
}
