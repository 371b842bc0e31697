/*
 * test_hierarchical.c — the hierarchical allreduce, reduce and bcast, verified by the
 * symbolic verifier for every team size 1..24 and node size 1..5 (param node=K: K
 * consecutive ranks per node), every root, in place or not, commutative or not; and with
 * an explicit node layout (node_of) whose nodes interleave: commutative ops are verified,
 * non-commutative ones must be declined.  Also: selection takes hierarchical by itself
 * when the call says it spans nodes.
 */
#include <stdio.h>
#include <string.h>

#include "algorithms/algorithm.h"
#include "check.h"
#include "core/internal.h"
#include "symbolic.h"

static collie_coll_args call(int coll, int P, size_t count, int per_node) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = coll;
    a.size = P;
    a.count = count;
    a.elem_size = 8;
    a.bytes = count * 8;
    a.commutative = true;
    a.in_place = coll == COLL_BCAST;
    if (per_node > 0) {
        a.params.count = 1;
        snprintf(a.params.key[0], sizeof a.params.key[0], "node");
        a.params.value[0] = per_node;
    }
    return a;
}

static void verify(const collie_coll_args *a) {
    const collie_algorithm *alg = collie_algorithm_find(a->coll, "hierarchical");
    const char *why = NULL;
    check(alg && collie_algorithm_accepts(alg, a, &why), "hierarchical %s declines: %s",
          collie_coll_name(a->coll), why ? why : "");
    char err[1024];
    if (alg && sym_verify(alg, a, err, sizeof err) != 0)
        check(false, "%s", err);
}

static int runs;

static void consecutive_nodes(void) {
    int colls[] = { COLL_ALLREDUCE, COLL_REDUCE, COLL_BCAST };
    for (int c = 0; c < 3; c++)
        for (int P = 1; P <= 24; P++)
            for (int per = 1; per <= 5; per++) {
                int roots[] = { 0, P - 1, P / 2, (per + 1) % P };
                bool rooted = colls[c] != COLL_ALLREDUCE;
                for (int ri = 0; ri < (rooted ? 4 : 1); ri++)
                    for (int v = 0; v < (colls[c] == COLL_BCAST ? 1 : 4); v++) {
                        size_t count = (size_t)(P + per) % 3 == 0 ? 1 : 13;
                        collie_coll_args a = call(colls[c], P, count, per);
                        a.root = roots[ri];
                        if (colls[c] != COLL_BCAST) {
                            a.in_place = v & 1;
                            a.commutative = (v & 2) == 0;
                        }
                        verify(&a);
                        runs++;
                    }
            }
}

/* Nodes {0,2,4,...} and {1,3,5,...}: interleaved. */
static void interleaved_nodes(void) {
    int node_of[16];
    for (int P = 2; P <= 16; P++) {
        for (int r = 0; r < P; r++)
            node_of[r] = r % 2;
        int colls[] = { COLL_ALLREDUCE, COLL_REDUCE, COLL_BCAST };
        for (int c = 0; c < 3; c++) {
            collie_coll_args a = call(colls[c], P, 9, 0);
            a.node_of = node_of;
            a.nnodes = 2;
            a.root = P - 1;
            verify(&a);
            runs++;
            if (colls[c] == COLL_BCAST || P < 3)   /* P = 2: nodes {0}, {1} are consecutive */
                continue;
            a.commutative = false;
            const char *why = NULL;
            const collie_algorithm *alg = collie_algorithm_find(a.coll, "hierarchical");
            check(!collie_algorithm_accepts(alg, &a, &why), "non-commutative %s on interleaved "
                  "nodes must be declined", collie_coll_name(a.coll));
        }
    }
}

static void selection(void) {
    int node_of[6] = { 0, 0, 0, 1, 1, 1 };
    collie_coll_args a = call(COLL_ALLREDUCE, 6, 100, 0);
    a.node_of = node_of;
    a.nnodes = 2;
    const collie_algorithm *alg = collie_select(&a);
    check(alg && strcmp(alg->name, "hierarchical") == 0, "selection across nodes took %s",
          alg ? alg->name : "nothing");
    a.node_of = NULL;
    a.nnodes = 0;
    alg = collie_select(&a);
    check(alg && strcmp(alg->name, "hierarchical") != 0, "selection on one node took %s",
          alg ? alg->name : "nothing");
}

int main(void) {
    consecutive_nodes();
    interleaved_nodes();
    selection();
    printf("test_hierarchical: %d schedules verified, %s\n", runs, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
