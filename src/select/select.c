/*
 * select.c — algorithm selection (layer 5).  A forced algorithm (COLLIE_<COLL>_ALGO or
 * collie_force_algorithm) when it accepts the call (request.c), else, in order:
 *   1. the first rule of the tuning file (COLLIE_TUNING_FILE) covering the call whose
 *      algorithm accepts it (its params are passed to the builder);
 *   2. when the tuning file gives model parameters: the cost model (select_model.c, the
 *      simulator's predicted time, cached per call class);
 *   3. else the built-in rules below, measured on this machine (docs/measurements.md);
 *   4. the first algorithm of the registry that accepts the call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/core.h"
#include "core/internal.h"
#include "select/select_model.h"
#include "select/tuning.h"

#define SPEC_MAX 128

unsigned collie_select_generation;
static char forced_name[COLL_COUNT][SPEC_MAX];
static collie_algo_params forced_params[COLL_COUNT];
static const char *const env_names[COLL_COUNT] = {
    "COLLIE_ALLREDUCE_ALGO", "COLLIE_REDUCE_ALGO", "COLLIE_BCAST_ALGO", "COLLIE_BARRIER_ALGO",
    "COLLIE_ALLGATHER_ALGO", "COLLIE_REDUCE_SCATTER_ALGO", "COLLIE_ALLTOALL_ALGO",
    "COLLIE_GATHER_ALGO", "COLLIE_SCATTER_ALGO", "COLLIE_SCAN_ALGO", "COLLIE_EXSCAN_ALGO",
};

int collie_force_algorithm(int coll, const char *spec) {
    if (coll < 0 || coll >= COLL_COUNT)
        return collie_fail(COLLIE_ERR_ARG, "unknown collective %d", coll);
    collie_select_generation++;
    if (!spec || !*spec || strcmp(spec, "auto") == 0) {
        forced_name[coll][0] = 0;
        return COLLIE_OK;
    }
    char name[SPEC_MAX];
    collie_algo_params params;
    int st = collie_parse_algo_spec(spec, name, sizeof name, &params);
    if (st)
        return st;
    const collie_algorithm *alg = collie_algorithm_find(coll, name);
    if (alg && (st = collie_algorithm_check_params(alg, &params)) != COLLIE_OK)
        return st;
    if (!alg) {
        char list[512] = "";
        for (size_t i = 0; i < collie_algorithm_count(coll); i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, collie_algorithm_at(coll, i)->name, sizeof list - strlen(list) - 1);
        }
        return collie_fail(COLLIE_ERR_ARG, "unknown %s algorithm '%s' (known: auto, %s)",
                           collie_coll_name(coll), name, list);
    }
    snprintf(forced_name[coll], SPEC_MAX, "%s", name);
    forced_params[coll] = params;
    return COLLIE_OK;
}

static collie_tuning *tuning;   /* NULL: no tuning file */

int collie_select_set_tuning(const char *path) {
    collie_tuning *t = NULL;
    char err[512];
    if (path && *path) {
        t = malloc(sizeof *t);
        if (!t)
            return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the tuning table");
        if (collie_tuning_load(t, path, err, sizeof err)) {
            free(t);
            return collie_fail(COLLIE_ERR_ARG, "bad tuning file %s", err);
        }
        collie_log(COLLIE_LOG_INFO, "tuning file %s: %d model entries, %d rules", path,
                   t->nmodels, t->nrules);
    }
    free(tuning);
    tuning = t;
    collie_select_model_reset();
    collie_select_generation++;
    return COLLIE_OK;
}

const collie_tuning *collie_select_tuning(void) { return tuning; }

int collie_select_init_from_env(void) {
    int tst = collie_select_set_tuning(collie_env_str("COLLIE_TUNING_FILE", NULL));
    if (tst)
        return collie_fail(tst, "COLLIE_TUNING_FILE: %s", collie_last_error());
    for (int c = 0; c < COLL_COUNT; c++) {
        const char *v = collie_env_str(env_names[c], NULL);
        int st = collie_force_algorithm(c, v);
        if (st)
            return collie_fail(st, "%s: %s", env_names[c], collie_last_error());
    }
    return COLLIE_OK;
}

const char *collie_forced_algorithm(int coll, collie_algo_params *params) {
    if (!forced_name[coll][0])
        return NULL;
    if (params)
        *params = forced_params[coll];
    return forced_name[coll];
}

static const collie_algorithm *try_name(const collie_coll_args *a, const char *name) {
    const collie_algorithm *alg = collie_algorithm_find(a->coll, name);
    const char *why = NULL;
    if (alg && collie_algorithm_accepts(alg, a, &why))
        return alg;
    return NULL;
}

/* Provisional rules, from bench/fastest.sh and bench/auto_quality.sh on a 2-core machine
 * (docs/measurements.md), for allreduce with P > 8 from the simulator:
 * the first rule whose team size and message size match gives a list of algorithms to try
 * in order; the first that accepts the call wins. */
typedef struct rule {
    int coll;
    int min_p, max_p;          /* team sizes */
    uint64_t max_bytes;        /* messages up to this many bytes */
    const char *algos[4];
} rule;

#define ANY_P 1, 1 << 30
#define ALL_BYTES UINT64_MAX
static const rule rules[] = {
    { COLL_ALLREDUCE, 2, 2, 4096, { "recursive_doubling", "flat" } },
    /* direct_segments (single copy; declines without it), docs/measurements.md: from 16 KiB
     * at P = 2, above 256 KiB at P = 3..8 (auto_quality.sh, session 4: at 512 KiB it beat
     * binary_blocks in all 9 turns at P = 3, 4, 8; at 128 KiB it did not) */
    { COLL_ALLREDUCE, 2, 2, 8192, { "flat", "recursive_doubling" } },
    /* direct_segments: mapped (collie_alloc), else the copy cells, else the kernel copy
     * where measured faster (direct_access.c); `cells` when single copy is off (issue 14) */
    { COLL_ALLREDUCE, 2, 2, 1 << 20, { "direct_segments", "cells", "flat", "pairwise_exchange" } },
    { COLL_ALLREDUCE, 2, 2, ALL_BYTES, { "direct_segments", "cells", "ring_pipelined", "ring" } },
    /* P > 8 cannot be measured here: from the simulator (bench/at_scale.sh, docs/performance.md
     * "At scale"); the rules after these serve P <= 8 */
    { COLL_ALLREDUCE, 9, 1 << 30, 2048, { "recursive_doubling", "rabenseifner" } },
    { COLL_ALLREDUCE, 9, 64, 65536, { "binary_blocks", "rabenseifner" } },
    { COLL_ALLREDUCE, 9, 64, ALL_BYTES, { "ring_pipelined", "ring" } },
    { COLL_ALLREDUCE, 65, 1024, 4 << 20, { "rabenseifner", "binary_blocks" } },
    { COLL_ALLREDUCE, 65, 1024, ALL_BYTES, { "ring_pipelined", "ring" } },
    { COLL_ALLREDUCE, 1025, 1 << 30, ALL_BYTES, { "rabenseifner", "binary_blocks" } },
    { COLL_ALLREDUCE, ANY_P, 4096, { "flat", "recursive_doubling" } },
    { COLL_ALLREDUCE, 4, 8, 16384, { "recursive_doubling", "flat" } },   /* auto_quality.sh */
    { COLL_ALLREDUCE, ANY_P, 16384, { "flat", "recursive_doubling" } },
    { COLL_ALLREDUCE, 3, 3, 65536, { "flat", "pairwise_exchange", "rabenseifner" } },
    { COLL_ALLREDUCE, 3, 8, 262144, { "binary_blocks", "rabenseifner" } },   /* auto_quality.sh */
    { COLL_ALLREDUCE, 3, 8, 1 << 20, { "direct_segments", "cells", "binary_blocks", "rabenseifner" } },
    { COLL_ALLREDUCE, 3, 8, ALL_BYTES, { "direct_segments", "cells", "ring", "binary_blocks" } },
    { COLL_ALLREDUCE, ANY_P, 1 << 20, { "binary_blocks", "rabenseifner" } },
    { COLL_ALLREDUCE, ANY_P, ALL_BYTES, { "ring", "binary_blocks" } },
    /* P = 3..8 up to 4 KiB flat (2026-11-25, collie-bench --algo flat / binary_tree /
     * binomial, 8 B-32 KiB, --barrier-each and --release-each, reused and fresh data, 2-3
     * rounds): flat 0.5-0.9 of binary_tree's time at P = 4..8 in most points, equal at P = 3;
     * on shared cores every rank of a tree level must be scheduled in turn, flat needs none */
    { COLL_REDUCE, 3, 8, 4096, { "flat", "binomial" } },
    { COLL_REDUCE, ANY_P, 4096, { "binary_tree", "flat", "binomial" } },
    /* direct_segments (declines without single copy), docs/measurements.md: from 16 KiB at
     * P = 2, from 1 MiB at P = 3, from 256 KiB at P = 4..8 */
    { COLL_REDUCE, 2, 2, 8192, { "flat", "binomial" } },
    { COLL_REDUCE, 3, 3, 262144, { "flat", "binomial" } },
    { COLL_REDUCE, 4, 8, 65536, { "flat", "binomial" } },
    { COLL_REDUCE, 2, 8, 1 << 20, { "direct_segments", "cells", "flat", "binomial" } },
    { COLL_REDUCE, 2, 4, ALL_BYTES, { "direct_segments", "cells", "binomial", "flat" } },
    { COLL_REDUCE, 5, 8, ALL_BYTES, { "direct_segments", "cells", "ring", "binomial" } },
    { COLL_REDUCE, ANY_P, 1 << 20, { "flat", "binomial" } },
    { COLL_REDUCE, 2, 4, ALL_BYTES, { "binomial", "flat" } },
    { COLL_REDUCE, ANY_P, ALL_BYTES, { "ring", "binomial" } },
    /* P = 4..8 flat (2026-11-25, collie-bench --algo flat / binary_tree / binomial /
     * direct_copy, 8 B-256 KiB, --barrier-each and --release-each, reused and fresh data,
     * 2-3 rounds): up to 32 KiB flat took 0.1-0.8 of the trees' time (8 B at P = 8 after
     * rank 0's release: 0.5-0.7 us against binary_tree's 4-7), only the root has to run;
     * at 64 KiB flat or equal; at 128 KiB P = 4 equal, P = 5..8 mixed (binary_tree kept);
     * at 256 KiB direct_copy won from 4 ranks.  P = 3: binary_tree is flat's schedule */
    { COLL_BCAST, 4, 4, 128 << 10, { "flat", "binary_tree" } },
    { COLL_BCAST, 5, 8, 64 << 10, { "flat", "binary_tree" } },
    { COLL_BCAST, 3, 3, 4096, { "binary_tree", "flat", "binomial" } },
    /* P = 2 up to 64 KiB the message (binary_tree: one PUT; 2026-11-25 after the slot
     * geometry change, collie-bench --algo binary_tree / direct_copy / chain, 2-128 KiB,
     * --barrier-each and --release-each, reused and fresh, 3 rounds): direct_copy, whose
     * malloc'd calls up to COLLIE_SHM_SLOTS_MAX run the same PUT after the board's
     * synchronisation, took 0.05-0.2 us longer up to 64 KiB (collie_alloc buffers too),
     * equal at 128 KiB; above, direct_copy maps collie_alloc buffers and takes the copy
     * cells for others (issue 14: chain went through the kernel copy there) */
    { COLL_BCAST, 2, 2, 64 << 10, { "binary_tree", "flat", "binomial" } },
    { COLL_BCAST, ANY_P, 4096, { "binomial", "flat" } },
    { COLL_BCAST, 2, 2, ALL_BYTES, { "direct_copy", "cells", "chain", "binomial" } },
    /* P = 3, 4 from 512 KiB (2026-11-25, collie-bench --algo binary_tree / direct_copy /
     * cells --barrier-each [--fresh-data], 256 KiB-1 MiB, 2 rounds): direct_copy took 0.4-0.9
     * of binary_tree's time at 512 KiB and 1 MiB (P = 3 1 MiB reused: 1.1-1.2); at 256 KiB no
     * consistent winner.  P = 5..8 from 256 KiB (32-256 KiB, 2 rounds): direct_copy (through
     * the cells, direct_access.c) 0.4-0.7 at 256 KiB, 0.6-1.4 at 64-128 KiB.  P = 6..8 from
     * 128 KiB (2026-11-29, AMD EPYC VM in its 200-230 ns state, the same commands, 32-256
     * KiB, 2-3 rounds, reused and fresh): with the ring of 32 cells direct_copy took
     * 23-29 us at 128 KiB against binary_tree's 23-39 (P = 8: 27-29 against 26-38, P = 6
     * 23-28 against 23-39, P = 7 26-27 against 26-31; in the 40 ns state P = 8 19.0-19.7
     * against 22.4-27.2); P = 5 mixed (binary_tree 14-29 against 20-25), kept */
    /* P = 3 `direct_copy` above 32 KiB (2026-12-04, Intel Xeon VM, collie-bench --coll bcast
     * --algo auto / direct_copy in turn, 32-256 KiB, --barrier-each [--fresh-data], 4
     * rounds, µs): 64 KiB reused 4.3-5.1 against binary_tree's 5.1-7.0, fresh 6.6-7.3
     * against 5.3-7.8; 128 KiB 6.9-13.0 against 12.0-12.6, fresh 10.8-14.2 against
     * 12.6-14.5; 256 KiB fresh 18.4-22.5 against 21.2-35.7, reused 19-28 against a
     * bimodal 13-37.  At 32 KiB fresh binary_tree (3.9-4.0 against 3.8-4.7). */
    { COLL_BCAST, 3, 3, 32 << 10, { "binary_tree", "scatter_allgather", "binomial" } },
    { COLL_BCAST, 5, 5, 128 << 10, { "binary_tree", "scatter_allgather", "binomial" } },
    { COLL_BCAST, 3, 8, 1 << 20, { "direct_copy", "cells", "binary_tree", "scatter_allgather" } },
    { COLL_BCAST, ANY_P, 1 << 20, { "binary_tree", "scatter_allgather", "binomial" } },
    { COLL_BCAST, 3, 8, ALL_BYTES, { "direct_copy", "cells", "flat", "chain" } },
    { COLL_BCAST, ANY_P, ALL_BYTES, { "flat", "chain", "binomial" } },
    /* P = 4..8 flat.  P = 5..8 (2026-11-27, AMD EPYC VM, 2 cores, collie-bench --coll barrier
     * with COLLIE_BARRIER_ALGO=dissemination / flat in turn, µs): P = 5 4.6-6.5 against
     * 6.4-10.3 (8 rounds), P = 6 6.5-8.0 against 8.7-12.1 (3), P = 8 6.6-12.8 (median 9.0)
     * against 10.3-13.0 (median 10.9; 8 rounds); on the Intel Xeon VM of 2026-12-04 P = 8
     * 6.1-8.4 against 11.9-12.8 (2 rounds).  With more ranks than cores every rank's round
     * waits for some rank to be scheduled, and flat's non-roots need to run only twice.
     * P = 4 (Intel Xeon VM, 2026-12-05, 6 rounds interleaved, medians): by itself neither
     * is clearly the faster (flat 3.73 against 2.88 µs over 10 rounds, 3.00 against 3.94
     * over another 6), but the call after flat is faster by 0.7 µs on average over bcast,
     * reduce, allreduce, allgather, reduce_scatter and alltoall at 8 B and 8 KiB: bcast 8 B
     * 0.48 against 2.62, 8 KiB 2.83 against 5.62 (the root leaves first and its data is out
     * before the readers look), reduce 8 B 3.23 against 4.19, reduce_scatter 8 KiB 8.84
     * against 10.07, none more than 0.3 µs slower.
     * P = 2-3 dissemination.  At P = 2 it is the faster by itself (0.26-0.28 against
     * 0.46-0.49 µs, Intel Xeon VM, 2026-12-04); flat lets the root go first, which halves a
     * small bcast after it (8 B 0.40 -> 0.19 µs) but slows an allreduce after it (8 B
     * 0.42 -> 0.50).  At P = 3 the two take the same by themselves (medians 2.58 and 2.50 µs
     * of 6 rounds, 2026-12-05), and after dissemination every call but bcast is the faster
     * (reduce 8 B 0.32 against 2.66 µs, 8 KiB 1.36 against 5.82, allreduce 8 KiB 5.14
     * against 6.25, allgather 8 KiB 5.76 against 6.76), a bcast the slower (8 B 0.73
     * against 0.28, still below every peer's 2.0 after its own barrier).
     * Above 8 ranks the log rounds (collie-sim predict); docs/measurements.md, "The
     * barrier's exit order and small bcasts". */
    { COLL_BARRIER, 4, 8, ALL_BYTES, { "flat", "dissemination" } },
    { COLL_BARRIER, ANY_P, ALL_BYTES, { "dissemination", "flat" } },
    /* Issue 16's collectives; bytes are a rank's block (the vector for scan, exscan).
     * P <= 8 from collie-bench --algo all,auto interleaved at P = 2, 3, 4, malloc and
     * collie_alloc buffers (docs/measurements.md, "allgather … exscan"): the one-round
     * flat/linear algorithms win or tie up to 512 KiB; above, `direct` (peers' buffers
     * read in place: mapped, else the kernel copy) won or tied with both kinds of buffer
     * (alltoall P = 4, 2 MiB: 0.71-0.79 of flat's time); the log-round algorithms lost
     * at P = 3, 4 (scan recursive_doubling 2-3x linear).  P > 8 from the simulator
     * (collie-sim predict): log-round algorithms for short messages, the prefix by
     * recursive doubling at every size (the chain's P - 1 steps). */
    /* allgather P = 2..8 `direct` from 256 KiB (session 16, AMD EPYC VM, collie-bench --algo
     * all,auto --repeat 3 --barrier-each [--fresh-data], malloc buffers): its user-space way
     * is now the copy cells, which took 0.65-0.9 of flat's time at 256 KiB (P = 8: 196
     * against 299 us) and 512 KiB (P = 3: 80 against 105); direct's board adds 2-8 % over
     * `cells` and maps collie_alloc buffers.  At 128 KiB flat won at P = 3, 4 (cells 1.1x). */
    /* allgather P = 2 moves what alltoall P = 2 moves (one block each way), and takes its
     * rule (below).  Measured 2026-11-27 (AMD EPYC VM, 33-38 ns cache-line trips,
     * collie-bench --coll allgather --algo all --barrier-each [--fresh-data], 2 rounds):
     * malloc buffers, cells against flat 0.46 / 0.50 us at 8 KiB, 1.50 / 1.78 at 32 KiB,
     * 5.35 / 6.6 at 128 KiB, 24.5 / 27.3 at 512 KiB (direct 5.6 and 25: its board, then the
     * cells); collie_alloc buffers, direct (mapped) 1.15 / 2.87 us at 32 / 128 KiB reused
     * against cells' 1.50 / 5.35 (fresh: cells 1.48 against direct 1.65 at 32 KiB, direct
     * 4.8 against flat 4.2-4.5 at 128 KiB); at 2 KiB flat and cells tie (0.29-0.31). */
    /* allgather P = 3..8 (2026-11-27, AMD EPYC VM, collie-bench --coll allgather --algo
     * all --repeat 2 --barrier-each [--fresh-data] [--collie-alloc], 8 B - 512 KiB per
     * block, both cache-line states): `cells` against flat, malloc buffers, 0.7 at
     * 128 KiB (P = 3 21.4-24.5 against 28.8-36.3 us, P = 4 21.5-23.8 against 29-32, P = 8
     * 75-93 against 112-129), 0.88-0.92 at 32 KiB at P = 4, 0.62-0.67 at P = 8, equal
     * at 8 KiB at P = 3, 4 and up to 512 B at P = 5..8 (8 KiB at P = 8: 11-12 against
     * 13.6-14.2); with collie_alloc buffers the same or better from 8 KiB (P = 4 32 KiB
     * fresh 10.1-11.0 against 9.6-10.0 the exception).  Above 128 KiB `direct` (it maps
     * collie_alloc buffers; with malloc ones its way is the cells, 10-20 % slower than
     * `cells` for the board's round trip with more ranks than cores). */
    { COLL_ALLGATHER, 2, 2, 4096, { "flat" } },
    { COLL_ALLGATHER, 2, 2, 32 << 10, { "cells", "flat" } },
    { COLL_ALLGATHER, 3, 4, 8192, { "flat" } },
    { COLL_ALLGATHER, 5, 8, 1024, { "flat" } },
    /* ... and since collie_alloc ranks lend their blocks through the cells (cells_in_place.c)
     * `cells` up to 1 MiB (2026-12-03, the same command, best of 2, µs): malloc at P = 4
     * 256 KiB / 512 KiB / 1 MiB 92 / 228 / 391 reused against direct's 100 / 254 / 429,
     * fresh 92 / 238 / 470 against 104 / 250 / 477; P = 8 0.86-0.92 of direct's time;
     * collie_alloc 0.95-1.05 (P = 4 512 KiB 128 / 156 against 135 / 159; P = 8 1 MiB 1743 /
     * 3109 against 1664 / 3398).  At 2 MiB mixed (P = 3 malloc 810 / 1093 against 862 /
     * 1014, collie_alloc 536 / 592 against 472 / 622), direct kept. */
    { COLL_ALLGATHER, 3, 8, 1 << 20, { "cells", "flat" } },
    { COLL_ALLGATHER, 2, 8, ALL_BYTES, { "direct", "cells", "flat" } },
    { COLL_ALLGATHER, 9, 1 << 30, 4096, { "recursive_doubling", "flat" } },
    /* P = 5..8 (2026-11-25, collie-bench --algo flat / direct --barrier-each [--fresh-data],
     * 128 KiB-2 MiB per block, malloc buffers, 2 rounds at the deciding sizes, 5-8 ranks on
     * 2 cores): reduce_scatter direct took 0.70-1.09 (mostly 0.8-0.96) of flat's time from
     * 256 KiB and 1.45-1.59 at 128 KiB; alltoall direct 0.95-1.31 (mostly 1.1-1.25) of flat's
     * from 256 KiB, also with collie_alloc buffers (1.09-1.20 at P = 5, 8: its way for
     * malloc buffers was the slots then; from 1 MiB it now wins, see alltoall below);
     * allgather mixed (0.89-1.31), its P <= 4 rule kept */
    /* P = 2..4 from 256 KiB `direct` (session 15, AMD EPYC VM, collie-bench --algo flat /
     * direct --barrier-each [--fresh-data], 128 KiB-1 MiB, malloc buffers): flat's messages
     * from 256 KiB take the kernel copy (a reduction's receivers combine in step, so its
     * way is fixed), direct chooses its way from timed calls and took 0.4-0.6 of flat's
     * time at 256 KiB-1 MiB (P = 4 256 KiB fresh 0.83); at 128 KiB equal or flat faster */
    /* reduce_scatter P = 2 (2026-11-27, AMD EPYC VM, collie-bench --coll reduce_scatter
     * --algo all --barrier-each [--fresh-data] [--collie-alloc], 4-256 KiB per block, both
     * cache-line states): malloc buffers, `cells` against flat 1.77 / 1.99 us at 32 KiB,
     * 5.41 / 7.49 at 128 KiB (210 ns trips: 3.24 / 3.83, 9.84 / 14.22), equal at 16 KiB,
     * flat ahead up to 8 KiB (0.46 against 0.49); `direct`, whose user-space way is now the
     * cells, 2.04 at 32 KiB (its board's round trip), within 5 % of cells from 64 KiB, and
     * with collie_alloc buffers it maps them: 1.19 against cells' 1.77 at 32 KiB, 2.68
     * against 6.02 at 128 KiB.  So as allgather and alltoall at P = 2: cells up to 32 KiB,
     * then direct. */
    { COLL_REDUCE_SCATTER, 2, 2, 16 << 10, { "flat" } },
    { COLL_REDUCE_SCATTER, 2, 2, 32 << 10, { "cells", "flat" } },
    { COLL_REDUCE_SCATTER, 3, 4, 128 << 10, { "flat" } },
    { COLL_REDUCE_SCATTER, 5, 8, 128 << 10, { "flat" } },
    { COLL_REDUCE_SCATTER, 2, 8, ALL_BYTES, { "direct", "flat" } },
    { COLL_REDUCE_SCATTER, 9, 1 << 30, 4096, { "recursive_halving", "flat" } },
    /* alltoall P = 2 (2026-11-27, AMD EPYC VM, collie-bench --algo all --barrier-each,
     * 8 KiB-2 MiB per block, cache-line trips of 36-40 ns): with malloc buffers `cells`
     * took 0.86-0.95 of flat's time from 8 KiB to 512 KiB (8 KiB 0.44 against 0.51 us,
     * 128 KiB 5.9 against 6.6), and 0.75-0.85 with 210 ns trips; `direct` 0.77 at 8 KiB,
     * 2.0 at 32 KiB (its board's round trip), within 5 % of cells from 128 KiB.  With
     * collie_alloc buffers direct (mapped) took 1.29 / 2.83 us at 32 / 128 KiB against
     * flat's 1.56 / 3.56 and cells' 1.73 / 5.72: so cells up to 32 KiB, then direct, which
     * maps collie_alloc buffers and takes the cells (or the kernel copy, as timed) for
     * malloc ones.  Against the old rule (flat up to 512 KiB; bench/ab_builds.sh, 16-256
     * KiB, 220-240 ns trips): malloc 0.81-0.93 of the time, reused or fresh; collie_alloc
     * 0.83-0.91 from 64 KiB and with fresh data at 16-32 KiB, but 1.19 / 1.37 at 16 / 32
     * KiB with reused buffers (flat's by-reference slots).  Up to 4 KiB flat as before
     * (not measured cleanly here: one cache line per message against the cells' flags). */
    { COLL_ALLTOALL, 2, 2, 4096, { "flat" } },
    { COLL_ALLTOALL, 2, 2, 32 << 10, { "cells", "flat" } },
    /* P = 3 at 512 KiB `cells` (2026-12-03, AMD EPYC VM, collie-bench --coll alltoall
     * --algo all,auto --repeat 2 --barrier-each [--fresh-data] [--collie-alloc], best of
     * 2, µs): once collie_alloc ranks lend their input in place (cells_in_place.c), malloc
     * 140-142 against flat's 190-191 reused, 182-189 against 228-251 fresh; collie_alloc
     * 103-105 against 92-94 reused, 161-251 against 155-288 fresh.  At 256 KiB flat the
     * same or faster with malloc buffers (86 against 101 reused), at P = 4 flat up to
     * 512 KiB (malloc 350 against 364, collie_alloc 174 against 201), at P = 8 flat (512 KiB
     * 3111 against 3581). */
    /* P = 3, 4: `direct` for blocks above 64 KiB up to 128 KiB, flat up to 1 MiB but for
     * P = 3's 512 KiB (2026-12-04, Intel Xeon VM, collie-bench --coll alltoall --algo
     * all[,auto] --barrier-each [--fresh-data] [--collie-alloc], 2-3 runs, µs): 128 KiB
     * malloc reused direct 53-63 against flat's 79-98 at P = 4, 31-33 against 39-45 at
     * P = 3; fresh 87-94 against 87-90 and 46-48 against 43-45 (direct times the slots,
     * the kernel copy and the cells there, direct_colls.c); collie_alloc within 10 %
     * either way but P = 4 fresh 65 against 101.  At 64 KiB fresh flat (P = 4 32 against
     * 41).  1 MiB flat in every run: P = 4 malloc 647-793 against direct's 713-900 reused,
     * 710-915 against 823-1004 fresh; P = 3 477-546 against 561-583, 504-595 against
     * 605-677.  From 2 MiB no consistent winner between runs: direct kept. */
    { COLL_ALLTOALL, 3, 4, 64 << 10, { "flat" } },
    { COLL_ALLTOALL, 3, 4, 128 << 10, { "direct", "flat" } },
    { COLL_ALLTOALL, 3, 4, 256 << 10, { "flat" } },
    { COLL_ALLTOALL, 3, 3, 512 << 10, { "cells", "flat" } },
    { COLL_ALLTOALL, 3, 4, 1 << 20, { "flat" } },
    /* P = 5..8 `direct` above 512 KiB (2026-12-03, AMD EPYC VM, collie-bench --coll alltoall
     * --algo direct / flat / cells --barrier-each [--fresh-data] [--collie-alloc], 2
     * rounds, slowest rank's µs; direct's way for malloc buffers with more ranks than
     * cores is the copy cells, direct_colls.c): P = 8 malloc reused 2 / 8 MiB blocks
     * 7759-8211 / 32476-32585 against flat's 10632-10682 / 41549-42774, fresh within 5 %
     * either way (13364-13498 cells, 12403-13964 direct, 12906-13295 flat at 2 MiB);
     * collie_alloc (mapped) fresh 11290-11343 / 42758-42999 against 12593-12667 /
     * 47442-49524, reused within 2-4 %; at 512 KiB flat the same or faster (collie_alloc
     * 1339-1433 against 1484-1522).  P = 6, 1 / 4 MiB: reused 1757-1760 / 8351-8471
     * against 2528-2631 / 11198-11234, fresh 3213-3371 / 14112-14203 against 3068-3430 /
     * 13139-14983. */
    { COLL_ALLTOALL, 5, 8, 512 << 10, { "flat" } },
    { COLL_ALLTOALL, 2, 8, ALL_BYTES, { "direct", "cells", "flat" } },
    { COLL_ALLTOALL, 9, 1 << 30, 256, { "bruck", "flat" } },
    { COLL_GATHER, 9, 1 << 30, 16384, { "binomial", "linear" } },
    { COLL_SCATTER, 9, 1 << 30, 16384, { "binomial", "linear" } },
    { COLL_SCAN, 9, 1 << 30, ALL_BYTES, { "recursive_doubling", "linear" } },
    { COLL_EXSCAN, 9, 1 << 30, ALL_BYTES, { "recursive_doubling", "linear" } },
    { COLL_GATHER, ANY_P, ALL_BYTES, { "linear" } },
    { COLL_SCATTER, ANY_P, ALL_BYTES, { "linear" } },
    { COLL_SCAN, ANY_P, ALL_BYTES, { "linear" } },
    { COLL_EXSCAN, ANY_P, ALL_BYTES, { "linear" } },
};

static const collie_algorithm *preferred(const collie_coll_args *a) {
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const rule *r = &rules[i];
        if (r->coll != a->coll || a->size < r->min_p || a->size > r->max_p || a->bytes > r->max_bytes)
            continue;
        for (int k = 0; k < 4 && r->algos[k]; k++) {
            const collie_algorithm *alg = try_name(a, r->algos[k]);
            if (alg)
                return alg;
        }
        return NULL;   /* none of the rule's algorithms accepts: registry order decides */
    }
    return NULL;
}

/* The first rule of the tuning file covering the call whose algorithm accepts it; its
 * params go into the call's arguments. */
static const collie_algorithm *by_tuning_rule(collie_coll_args *a, int *line) {
    collie_coll_args *w = a;
    const char *why = NULL;
    for (int i = collie_tuning_find_rule(tuning, a, 0); i >= 0;
         i = collie_tuning_find_rule(tuning, a, i + 1)) {
        const tuning_rule *r = &tuning->rules[i];
        w->params = r->params;
        if (collie_algorithm_accepts(r->alg, a, &why)) {
            *line = r->line;
            return r->alg;
        }
        collie_log(COLLIE_LOG_DEBUG, "%s:%d: %s declines this call (%s)", tuning->path, r->line,
                   r->alg->name, why ? why : "");
    }
    memset(&w->params, 0, sizeof w->params);
    return NULL;
}

static const collie_algorithm *first_accepting(const collie_coll_args *a) {
    const char *why = NULL;
    for (size_t i = 0; i < collie_algorithm_count(a->coll); i++) {
        const collie_algorithm *cand = collie_algorithm_at(a->coll, i);
        if (!cand->auto_by_rule_only && collie_algorithm_accepts(cand, a, &why))
            return cand;
    }
    return NULL;
}

static void log_choice(const collie_coll_args *a, const collie_algorithm *alg, const char *how,
                       const sim_model *m) {
    if (!COLLIE_LOG_ON(COLLIE_LOG_DEBUG))
        return;
    sim_model def;
    sim_model_default(&def);
    collie_select_log_costs(a, m ? m : &def);
    collie_log(COLLIE_LOG_DEBUG, "%s of %llu bytes on %d ranks: auto chose %s (%s)",
               collie_coll_name(a->coll), (unsigned long long)a->bytes, a->size, alg->name, how);
}

/* A team spanning several nodes takes the hierarchical algorithm when it accepts. */
static const collie_algorithm *across_nodes(const collie_coll_args *a) {
    const collie_algorithm *alg = a->nnodes > 1 ? collie_algorithm_find(a->coll, "hierarchical") : NULL;
    const char *why = NULL;
    return alg && collie_algorithm_accepts(alg, a, &why) ? alg : NULL;
}

/* The bytes that rules, the tuning file and the model see: a->bytes, except for a v form,
 * whose own block differs between ranks: the mean block of allgatherv and reduce_scatter
 * (their counts are the same on every rank), 0 for gatherv, scatterv and alltoallv (a
 * rank knows only its own counts) — so that every rank chooses the same algorithm. */
static uint64_t selection_bytes(const collie_coll_args *a) {
    if (!a->v)
        return a->bytes;
    if ((a->coll != COLL_ALLGATHER && a->coll != COLL_REDUCE_SCATTER) || !a->v->counts ||
        a->size < 1)
        return 0;
    uint64_t total = 0;
    for (int j = 0; j < a->size; j++)
        total += a->v->counts[j];
    return total / (uint64_t)a->size * a->elem_size;
}

const collie_algorithm *collie_select(collie_coll_args *a) {
    char how[300] = "registry order";
    collie_coll_args sel = *a;          /* what the choice goes by (selection_bytes) */
    sel.bytes = selection_bytes(a);
    const sim_model *m = tuning ? collie_tuning_model(tuning, &sel) : NULL;
    int line = 0;
    const collie_algorithm *alg = across_nodes(&sel);
    if (alg)
        snprintf(how, sizeof how, "the team spans %d nodes", a->nnodes);
    if (!alg && tuning) {
        alg = by_tuning_rule(&sel, &line);
        a->params = sel.params;          /* the rule's, or none */
    }
    if (alg && line)
        snprintf(how, sizeof how, "rule at %s:%d", tuning->path, line);
    if (!alg && m && (alg = collie_select_by_model(&sel, m)))
        snprintf(how, sizeof how, "cost model of %s", tuning->path);
    if (!alg && !m && (alg = preferred(&sel)))
        snprintf(how, sizeof how, "built-in rules");
    if (!alg)
        alg = first_accepting(&sel);
    if (alg)
        log_choice(&sel, alg, how, m);
    return alg;
}
