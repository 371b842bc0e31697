/*
 * ring_pipelined.c — allreduce by a pipelined ring: a reduce stage (ring reduce-scatter)
 * then a broadcast stage (ring allgather), every part cut again into chunks.
 *
 * Source: GASPI-SHAN, "Allreduce Implementation – Pipelined Rings" (Fig. 1, 2): in the
 *   first stage each of the P ranks reduces 1/P of the data along the ring, in the second
 *   the partial results travel around the ring again; each of the P parts is subdivided
 *   into chunks so that many messages are in flight and the reduction hides behind the
 *   communication.  Parts: pat_seg_* (P parts, lengths differ by at most one element).
 *   Chunks: `segment` bytes (parameter, default 64 KiB, rounded down to whole elements,
 *   at least one), pat_chunk_*.
 *   Ring (pat_pring_*): in step g = 0 … 2P-3 rank r sends part (r-g-1) to r+1 and
 *   receives part (r-g-2) from r-1; for g < P-1 it reduces the incoming part with its own
 *   input into RECV (the chain of part q starts on q+1 and ends on q), later it only
 *   stores it.  Step g+1 forwards exactly what step g produced.
 *   Pipelining (the paper leaves the schedule open; solved as a wavefront): chunk c of
 *   step g goes into round g + c, so chunk c of step g+1 leaves one round after chunk c
 *   of step g was reduced, independently of the other chunks.  Round t holds, for every
 *   g with 0 <= t-g < m, one PUT and one REDUCE (or copy) of chunk t-g: up to
 *   min(m, 2P-2) messages per link in flight, all reductions of a round consume their
 *   chunks as they arrive.  No intra-round hazard: a PUT of round t reads (part q, chunk
 *   c) and a write of round t touching part q is of step g-1 or g-1±P, i.e. of chunk
 *   c+1 or c∓(P-1), never c.  In place: every SEND byte of part q (q != r-1) is read by
 *   the one REDUCE that first writes it; part r-1 is only sent in step 0 and rewritten in
 *   step P-1 (the executor stages the PUT if it still trails then).
 * Rounds: 2P-3 + m, m = ⌈⌈n/P⌉ / s⌉ chunks per part (s = segment).
 * Bytes sent per rank: 2(P-1)·n/P (one part per step, rounded to whole elements).
 * Restrictions: commutative ops only — the chain of part q runs q+1, …, P-1, 0, …, q and
 *   wraps from P-1 to 0, so operands are out of rank order (non-commutative callers get
 *   rabenseifner or ring).  Any P, any count (empty chunks are skipped on both sides).
 *   Every part is reduced once, on its owner, and copied to the others: bitwise identical.
 * Scratch: none.
 * Cost: T ≈ (2P-3+m)α + 2(P-1)/P·nβ + sγ, the reduction ((P-1)/P·nγ) hidden behind the
 *   transfers while sγ <= sβ (GASPI-SHAN); with m = 1 it is the plain ring,
 *   2(P-1)α + 2nβ + nγ - (2nβ + nγ)/P (Rabenseifner §3.7).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_blocks.h"

#define DEFAULT_SEGMENT (64 * 1024)

typedef struct ring_geo {
    const collie_coll_args *a;
    size_t chunk;          /* elements per chunk */
    size_t mmax;           /* chunks of the longest part */
} ring_geo;

static size_t part_len(const ring_geo *g, int q) {
    return pat_seg_len(g->a->count, g->a->size, q);
}

/* The byte range of chunk c of part q; bytes == 0 when the part has no chunk c. */
static void chunk_at(const ring_geo *g, int q, size_t c, uint64_t *off, uint64_t *bytes) {
    size_t len = part_len(g, q);
    *off = 0;
    *bytes = 0;
    if (c >= pat_chunk_count(len, g->chunk))
        return;
    size_t start = pat_seg_start(g->a->count, g->a->size, q) + c * g->chunk;
    *off = start * g->a->elem_size;
    *bytes = pat_chunk_len(len, g->chunk, c) * g->a->elem_size;
}

/* Step g, chunk c: send the part I hold, take in the next one. */
static void step_chunk(collie_schedule *s, const ring_geo *g, int step, size_t c) {
    const collie_coll_args *a = g->a;
    int next = pat_ring_next(a->rank, a->size), prev = pat_ring_prev(a->rank, a->size);
    uint64_t off, bytes;
    chunk_at(g, pat_pring_send_part(a->rank, step, a->size), c, &off, &bytes);
    if (bytes > 0)
        sched_put(s, next, sched_at(step == 0 ? SBUF_SEND : SBUF_RECV, off), bytes);
    chunk_at(g, pat_pring_recv_part(a->rank, step, a->size), c, &off, &bytes);
    if (bytes == 0)
        return;
    if (step < a->size - 1)
        sched_recv_reduce(s, prev, sched_at(SBUF_RECV, off), sched_at(SBUF_SEND, off), true,
                          bytes);
    else
        sched_recv(s, prev, sched_at(SBUF_RECV, off), bytes);
}

static size_t chunk_elems(const collie_coll_args *a) {
    long long seg = collie_param(&a->params, "segment", DEFAULT_SEGMENT);
    size_t e = (size_t)seg / a->elem_size;
    return e > 0 ? e : 1;
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    ring_geo g = { a, chunk_elems(a), 0 };
    g.mmax = pat_chunk_count(part_len(&g, 0), g.chunk);
    long long steps = pat_pring_steps(a->size);
    long long rounds = steps + (long long)g.mmax - 1;
    for (long long t = 0; t < rounds; t++) {
        sched_round_begin(s);
        long long lo = t - (long long)g.mmax + 1 > 0 ? t - (long long)g.mmax + 1 : 0;
        long long hi = t < steps - 1 ? t : steps - 1;
        for (long long step = lo; step <= hi; step++)
            step_chunk(s, &g, (int)step, (size_t)(t - step));
    }
}

static bool accepts(const collie_coll_args *a, const char **why) {
    if (collie_param(&a->params, "segment", DEFAULT_SEGMENT) < 1) {
        *why = "parameter segment must be at least 1 byte";
        return false;
    }
    return true;
}

const collie_algorithm collie_algo_allreduce_ring_pipelined = {
    .name = "ring_pipelined",
    .coll = COLL_ALLREDUCE,
    .needs = ALGO_NEEDS_COMMUTATIVE,
    .summary = "ring reduce-scatter + ring allgather, parts cut into `segment`-byte chunks "
               "in a wavefront pipeline (GASPI-SHAN); long vectors",
    .accepts = accepts,
    .build = build,
};
