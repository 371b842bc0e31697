/*
 * direct.c — reduce_scatter (block and v forms) by direct access: every rank reduces its
 * own result block straight out of all P inputs, in rank order.
 *
 * Source: the reduce-scatter half of Rabenseifner 2004 §3 (every rank owns one block of
 *   the result), done in one step on shared memory instead of in messages, as allreduce
 *   `direct_segments` does for its segments (issue #7's "reduction that reads the inputs
 *   in place"; Intel MPI's topo_shm reduce_scatter reads peers' buffers the same way).
 *   Not in the papers' message model: the data moves by loads (collie_alloc buffers,
 *   mapped) or one process_vm_readv per peer and chunk.
 * Protocol (the driver in ../direct_colls.c): every rank posts its input and waits until
 *   all posted; rank r reduces block r of all P inputs chunk by chunk (64 KiB) in rank
 *   order — x0 ∘ x1 ∘ … ∘ x(P−1), exactly once, on rank r only, so any op and the same
 *   bits wherever the block is read — into its RECV, marks itself done and waits until
 *   every rank is done.  In place a rank > 0 reduces into scratch and copies the result
 *   to the start of its buffer after that wait (it overlays blocks its peers read); rank
 *   0's result is its own block 0.  Calls with malloc'd inputs, where rank 0 timed it
 *   faster than the kernel copy, go through the copy cells as `cells` does (flat's
 *   schedule through the slots where cells decline: the v form in place).
 * Rounds: 2 synchronisations.  Bytes per rank: reads (P−1)·n (n its block), reduces P·n
 *   element-wise, writes n; nothing into another rank's memory.
 * Restrictions: shared-memory transport with single-copy access (ALGO_NEEDS_SINGLE_COPY);
 *   at most 255 ranks (the sources of one reduction); any op; not persistent requests.
 * Scratch: P chunks for unmapped peers; in place n on ranks > 0.
 * Cost: T ≈ 2·t_sync + (P−1)·n·β_mem + (P−1)·n·γ.  build() gives the same data flow as
 *   messages (reduce_scatter `flat`) for the verifier and the simulator.
 */
#include "algorithms/direct_access.h"

extern const collie_algorithm collie_algo_reduce_scatter_flat;

static void build(collie_schedule *s, const collie_coll_args *a) {
    collie_algo_reduce_scatter_flat.build(s, a);
}

const collie_algorithm collie_algo_reduce_scatter_direct = {
    .name = "direct",
    .coll = COLL_REDUCE_SCATTER,
    .needs = ALGO_NEEDS_SHM | ALGO_NEEDS_SINGLE_COPY,
    .summary = "every rank reduces its block straight from all P inputs in rank order "
               "(shared memory, single copy; collie_alloc buffers are mapped)",
    .accepts = direct_segments_accepts,
    .build = build,
    .driver = &collie_direct_colls_driver,
};
