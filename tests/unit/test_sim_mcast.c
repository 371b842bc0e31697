/*
 * test_sim_mcast.c — the simulator's model of the multicast broadcast (src/sim/sim_mcast.c)
 * against independent expectations: without loss the prediction is the same for every P
 * (stage 1 reaches everyone, one forward); with total loss it is the multicast plus the
 * fragmented chain of chain.c as the schedule engine predicts it; in between it lies in
 * between and grows with P only through runs of losses.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "algorithms/algorithm.h"
#include "sim/sim.h"

extern const collie_algorithm collie_algo_bcast_mcast, collie_algo_bcast_chain;

static collie_coll_args bcast(int P, uint64_t bytes) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = COLL_BCAST;
    a.size = P;
    a.elem_size = 1;
    a.count = bytes;
    a.bytes = bytes;
    a.in_place = a.shared_memory = a.multicast = true;
    a.params.count = 1;
    strcpy(a.params.key[0], "segment");
    a.params.value[0] = 1024;
    return a;
}

static double predict(const collie_algorithm *alg, int P, uint64_t bytes, double loss) {
    sim_config c = { alg, bcast(P, bytes), { 0 }, SIM_FULL, NULL };
    sim_model_default(&c.model);
    c.model.loss = loss;
    sim_result r;
    if (sim_run(&c, &r) != 0) {
        check(false, "%s P=%d %llu bytes: %s", alg->name, P, (unsigned long long)bytes, r.err);
        return NAN;
    }
    return r.time;
}

/* Stage 1 alone: fragments of 1024 bytes leave the root back to back. */
static double multicast_time(uint64_t bytes) {
    sim_model m;
    sim_model_default(&m);
    double t = 0;
    for (uint64_t off = 0; off < bytes; off += 1024)
        t += m.mc_alpha + (double)(bytes - off < 1024 ? bytes - off : 1024) * m.mc_beta;
    return t;
}

int main(void) {
    const int sizes[] = { 2, 3, 5, 16, 100, 4096 };
    const uint64_t bytes[] = { 8, 1000, 5000 };
    for (size_t b = 0; b < 3; b++) {
        double t0 = predict(&collie_algo_bcast_mcast, 2, bytes[b], 0);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            int P = sizes[k];
            double flat = predict(&collie_algo_bcast_mcast, P, bytes[b], 0);
            check(fabs(flat - t0) < 1e-12, "loss 0, %llu bytes: P=%d predicts %g s, P=2 %g s",
                  (unsigned long long)bytes[b], P, flat, t0);
            double all_lost = predict(&collie_algo_bcast_mcast, P, bytes[b], 1);
            double chain = predict(&collie_algo_bcast_chain, P, bytes[b], 0);
            check(fabs(all_lost - multicast_time(bytes[b]) - chain) < 1e-9 * (1 + chain),
                  "loss 1, %llu bytes, P=%d: %g s, expected multicast %g + chain %g",
                  (unsigned long long)bytes[b], P, all_lost, multicast_time(bytes[b]), chain);
            double half = predict(&collie_algo_bcast_mcast, P, bytes[b], 0.5);
            check(half >= flat - 1e-12 && half <= all_lost + 1e-12,
                  "loss 0.5, P=%d: %g s not between %g and %g", P, half, flat, all_lost);
        }
    }
    double half_small = predict(&collie_algo_bcast_mcast, 16, 8, 0.5);
    double half_large = predict(&collie_algo_bcast_mcast, 4096, 8, 0.5);
    double chain_large = predict(&collie_algo_bcast_chain, 4096, 8, 0);
    check(half_large < 10 * half_small && half_large < chain_large / 20,
          "loss 0.5: P=4096 predicts %g s, P=16 %g s, chain at 4096 %g s: not practically "
          "constant", half_large, half_small, chain_large);
    printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
